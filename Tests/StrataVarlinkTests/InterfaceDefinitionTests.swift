import Foundation
import StrataVarlink
import Testing

/// The Swift types of io.strata.Admin, io.strata.Store and org.varlink.service and their
/// `.varlink` files describe the same interface: methods, parameter and reply fields and
/// their types, errors, named types.
@Suite struct InterfaceDefinitionTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func file(_ name: String) throws -> String {
        try String(contentsOf: packageRoot.appendingPathComponent("varlink/\(name).varlink"), encoding: .utf8)
    }

    @Test(arguments: ["io.strata.Admin", "io.strata.Store"])
    func theServedDefinitionIsTheFile(_ name: String) throws {
        let served = name == StrataAdmin.name ? StrataAdmin.definition : StrataStore.definition
        #expect(try Self.file(name).trimmingCharacters(in: .newlines) == served.trimmingCharacters(in: .newlines),
                "the build generates the definition from varlink/\(name).varlink: rebuild")
    }

    @Test func adminTypesMatchTheIDL() throws {
        let conformance = try InterfaceConformance(StrataAdmin.self, idl: VarlinkIDL(parsing: try Self.file("io.strata.Admin")))
        #expect(conformance.differences.isEmpty, "\(conformance.differences.joined(separator: "\n"))")
        #expect(conformance.idl.methods.count == 13 && conformance.idl.errors.count == 8)
    }

    @Test func storeTypesMatchTheIDL() throws {
        let conformance = try InterfaceConformance(StrataStore.self, idl: VarlinkIDL(parsing: try Self.file("io.strata.Store")))
        #expect(conformance.differences.isEmpty, "\(conformance.differences.joined(separator: "\n"))")
        #expect(conformance.idl.methods.count == 8 && conformance.idl.errors.count == 10)
    }

    @Test func serviceTypesMatchTheIDL() throws {
        let conformance = try InterfaceConformance(VarlinkService.self, idl: VarlinkIDL(parsing: VarlinkService.definition))
        #expect(conformance.differences.isEmpty, "\(conformance.differences.joined(separator: "\n"))")
    }

    /// The comparison sees every kind of difference (a check that cannot fail proves nothing).
    @Test func aChangedDefinitionIsCaught() throws {
        var text = try Self.file("io.strata.Admin")
        text = text.replacingOccurrences(of: "pendingTasks: int,", with: "pendingTasks: float,")       // a field's type, in a named type
            .replacingOccurrences(of: "method Resume() -> (scheduler: SchedulerInfo)\n", with: "")     // a method
            .replacingOccurrences(of: "method Pending(store: ?string)", with: "method Pending(store: string)")  // optionality
            .replacingOccurrences(of: "error AlreadyRunning (store: string, reason: string)", with: "error AlreadyRunning (store: string)")
            .replacingOccurrences(of: "method Metrics() -> (text: string)", with: "method Metrics() -> (text: string, format: string)")
        let differences = try InterfaceConformance(StrataAdmin.self, idl: VarlinkIDL(parsing: text)).differences
        #expect(differences.sorted() == [
            "error AlreadyRunning.reason: in Swift, not in the IDL",
            "method Metrics reply.format: in the IDL, not in Swift",
            "method Pending parameters.store: string in the IDL, ?string in Swift",
            "method Resume: in Swift, not in the IDL",
            "type StoreInfo.pendingTasks: float in the IDL, int in Swift",
        ], "\(differences)")
    }

    /// A state's cases are compared too: Swift's enum and the IDL's must list the same values.
    @Test func aChangedEnumIsCaught() throws {
        let text = try Self.file("io.strata.Admin").replacingOccurrences(of: "state: (ready, failed, closed),", with: "state: (ready, failed),")
        let differences = try InterfaceConformance(StrataAdmin.self, idl: VarlinkIDL(parsing: text)).differences
        #expect(differences == ["type StoreInfo.state: (ready, failed) in the IDL, (ready, failed, closed) in Swift"], "\(differences)")
    }

    @Test func theIDLParserReadsEveryForm() throws {
        let idl = try VarlinkIDL(parsing: """
            # A comment
            interface org.example.test
            type Color (red, green, blue)
            type Thing (name: string, tags: [string](), counts: [string]int, nested: ?[]?Color, any: object, inline: (a: bool, b: float))
            method Get(id: int) -> (thing: ?Thing)
            error Missing ()
            """)
        #expect(idl.name == "org.example.test")
        #expect(idl.types["Color"] == .enumeration(["red", "green", "blue"]))
        #expect(idl.types["Thing"] == .structure([
            .init(name: "name", type: .string), .init(name: "tags", type: .set), .init(name: "counts", type: .map(.int)),
            .init(name: "nested", type: .optional(.array(.optional(.named("Color"))))), .init(name: "any", type: .object),
            .init(name: "inline", type: .structure([.init(name: "a", type: .bool), .init(name: "b", type: .float)])),
        ]))
        #expect(idl.methods["Get"]?.reply == [.init(name: "thing", type: .optional(.named("Thing")))])
        #expect(idl.errors["Missing"] == [])
        #expect(throws: VarlinkIDLError.self) { try VarlinkIDL(parsing: "interface x.y\nmethod Broken(a int) -> ()") }
    }
}
