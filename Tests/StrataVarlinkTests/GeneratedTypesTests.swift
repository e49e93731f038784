import Foundation
import Testing
@testable import VarlinkCodegen

/// The Swift types of the interfaces (the named types, each method's Parameters and Reply, the
/// errors and the typed Failure, the served definitions) are generated at build time from the
/// .varlink files by VarlinkCodegen (Plugins/VarlinkCodegenPlugin): a changed .varlink changes the
/// generated Swift, and notes in the .swift.json that disagree with the .varlink are refused with
/// the declaration's name.
@Suite struct GeneratedTypesTests {
    static let packageRoot = InterfaceDefinitionTests.packageRoot

    /// A copy of varlink/ in a fresh directory with `change` applied to `file`, then the generator
    /// on it: the generated files by name.
    static func generate(changing file: String, _ change: (String) -> String) throws -> [String: String] {
        let manager = FileManager.default
        let root = packageRoot.appendingPathComponent(".build/generated-types-\(UUID().uuidString)")
        defer { try? manager.removeItem(at: root) }
        try manager.createDirectory(at: root, withIntermediateDirectories: true)
        let varlink = root.appendingPathComponent("varlink")
        try manager.copyItem(at: packageRoot.appendingPathComponent("varlink"), to: varlink)
        let changed = varlink.appendingPathComponent(file)
        try change(try String(contentsOf: changed, encoding: .utf8)).write(to: changed, atomically: true, encoding: .utf8)
        return Dictionary(uniqueKeysWithValues: try Generator.generate(varlinkDirectory: varlink).map { ($0.name, $0.text) })
    }

    @Test func theUnchangedFilesGenerateEveryOutput() throws {
        let files = try Self.generate(changing: "io.strata.Admin.varlink") { $0 }
        #expect(files.keys.sorted() == Generator.outputNames.sorted())
        let methods = try #require(files["StrataAdmin+Methods.swift"])
        #expect(methods.contains("    public enum FinishDeferred: VarlinkMethod {"))
        #expect(methods.contains("            public var wait: Bool?"))
        let errors = try #require(files["StrataStore+Errors.swift"])
        #expect(errors.contains("            case \"io.strata.Store.NoSuchStore\":"))
        let definition = try #require(files["StrataAdmin+Definition.swift"])
        #expect(definition.contains("    public static let name = \"io.strata.Admin\"\n"))
        #expect(definition.contains("        interface io.strata.Admin\n"))
        let service = try #require(files["VarlinkService+Errors.swift"])
        #expect(service.contains("        public var reason: String { \"permission denied\" }"))
        #expect(service.contains("        public init() {\n        }"), "an error without fields has an empty initializer")
    }

    /// A change to the .varlink and what the generated Swift then says (and no longer says).
    struct Regenerated: Sendable, CustomTestStringConvertible {
        var what: String
        var replacing: String
        var with: String
        var file: String
        var says: String
        var saidBefore: String
        var testDescription: String { what }
    }

    static let regenerated: [Regenerated] = [
        Regenerated(what: "a changed field", replacing: "  requests: int,\n", with: "  requests: float,\n", file: "StrataAdmin+Types.swift",
                    says: "public var requests: Double", saidBefore: "public var requests: Int\n"),
        Regenerated(what: "a changed method", replacing: "method Pending(store: ?string)", with: "method Pending(store: string)",
                    file: "StrataAdmin+Methods.swift", says: Self.pendingParameters(type: "String"), saidBefore: Self.pendingParameters(type: "String?")),
        Regenerated(what: "a changed enum", replacing: "  state: (ready, failed, closed),\n", with: "  state: (ready, failed, closed, draining),\n",
                    file: "StrataAdmin+Types.swift", says: "case ready, failed, closed, draining", saidBefore: "case ready, failed, closed\n"),
        Regenerated(what: "a changed error", replacing: "error InvalidSetting (key: string, value: string, reason: string)",
                    with: "error InvalidSetting (key: string, value: ?string, reason: string)",
                    file: "StrataAdmin+Errors.swift", says: "public var value: String?", saidBefore: "public var value: String\n"),
    ]

    /// The start of `Pending`'s parameters with a `store` of `type` (other methods take a
    /// `store: ?string` too: the method's name makes it one).
    static func pendingParameters(type: String) -> String {
        """
        name = "Pending"

                /// What the method takes.
                public struct Parameters: Codable, Sendable, Hashable {
                    /// The store's name (as configured).
                    public var store: \(type)

        """
    }

    @Test(arguments: regenerated)
    func aChangedVarlinkChangesTheSwift(_ change: Regenerated) throws {
        let before = try #require(try Self.generate(changing: "io.strata.Admin.varlink") { $0 }[change.file])
        let after = try #require(try Self.generate(changing: "io.strata.Admin.varlink") {
            $0.replacingOccurrences(of: change.replacing, with: change.with)
        }[change.file])
        #expect(before.contains(change.saidBefore) && !before.contains(change.says), "the unchanged file")
        #expect(after.contains(change.says) && !after.contains(change.saidBefore), "\(after)")
    }

    /// A change to a copy of varlink/ that the generator refuses, and what its error must say.
    struct Refused: Sendable, CustomTestStringConvertible {
        var what: String
        var file: String
        var replacing: String
        var with: String
        var says: String
        var testDescription: String { what }
    }

    static let refused: [Refused] = [
        Refused(what: "an error alias with other fields", file: "io.strata.Store.varlink",
                replacing: "error StoreUnavailable (store: string, reason: string)",
                with: "error StoreUnavailable (store: string, since: ?string, reason: string)",
                says: "io.strata.Admin.StoreUnavailable: the alias StrataStore.StoreUnavailable has other fields in its .varlink: "
                    + "(store: string, since: ?string, reason: string); give the error its own type"),
        Refused(what: "notes about a method the IDL lacks", file: "io.strata.Admin.varlink",
                replacing: "method Metrics() -> (text: string)\n", with: "",
                says: "io.strata.Admin.Metrics: in io.strata.Admin.swift.json's methods, not a method of the .varlink; remove it"),
        Refused(what: "notes about a field the IDL lacks", file: "io.strata.Admin.varlink", replacing: "  requests: int,\n", with: "",
                says: "io.strata.Admin.StoreInfo.requests: in the .swift.json, not in the .varlink; remove it or add the field"),
        Refused(what: "a Swift type of other optionality", file: "io.strata.Store.varlink", replacing: "  id: ?int,\n", with: "  id: int,\n",
                says: "io.strata.Store.Operation.id: the .swift.json type 'Int64?' and the IDL's 'int' differ in optionality"),
        Refused(what: "an unreadable IDL", file: "io.strata.Admin.varlink", replacing: "method Metrics()", with: "method Metrics() = 3",
                says: "io.strata.Admin.varlink: cannot read '= 3"),
        Refused(what: "a file for another interface", file: "io.strata.Store.varlink", replacing: "interface io.strata.Store",
                with: "interface io.strata.Stores", says: "io.strata.Store.varlink: declares `interface io.strata.Stores`"),
        Refused(what: "an inline structure", file: "io.strata.Admin.varlink", replacing: "method Pending(store: ?string)",
                with: "method Pending(store: ?(name: string))", says: "method Pending.store: an inline structure has no Swift spelling here"),
    ]

    @Test(arguments: refused)
    func aDisagreementIsRefusedByName(_ change: Refused) throws {
        let error = #expect(throws: CodegenError.self) {
            _ = try Self.generate(changing: change.file) { $0.replacingOccurrences(of: change.replacing, with: change.with) }
        }
        #expect(error?.description.contains(change.says) == true, "\(error?.description ?? "no error")")
    }

    /// The generator as the build runs it: the files written, or exit status 1 and the message.
    @Test func theExecutableWritesTheFilesOrExplains() throws {
        let binary = Self.packageRoot.appendingPathComponent(".build/debug/strata-varlink-codegen")
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "built with the package")
        let output = Self.packageRoot.appendingPathComponent(".build/generated-run-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: output) }
        func run(_ arguments: [String]) throws -> (status: Int32, stderr: String) {
            let process = Process()
            process.executableURL = binary
            process.arguments = arguments
            let pipe = Pipe()
            process.standardError = pipe
            try process.run()
            let stderr = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (process.terminationStatus, stderr)
        }
        let written = try run([Self.packageRoot.appendingPathComponent("varlink").path, output.path])
        #expect(written.status == 0, "\(written.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: output.path).sorted() == Generator.outputNames.sorted())
        let missing = try run([output.path, output.appendingPathComponent("out").path])
        #expect(missing.status == 1)
        #expect(missing.stderr.hasPrefix("strata-varlink-codegen: error: io.strata.Admin.varlink: cannot read it in \(output.path)"), "\(missing.stderr)")
    }
}
