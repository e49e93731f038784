import Foundation
import Testing

/// The Swift types of the interfaces (the named types in Strata{Admin,Store}+Types.swift, the
/// methods in Strata{Admin,Store}+Methods.swift, the errors in Strata{Admin,Store}+Errors.swift) are generated from the .varlink files by
/// scripts/generate-varlink-types.py: a changed .varlink makes the check fail, and notes in the
/// .swift.json about a field the .varlink does not declare are refused with its name.
@Suite struct GeneratedTypesTests {
    static let packageRoot = InterfaceDefinitionTests.packageRoot

    /// A copy of varlink/ and the generated files in a fresh directory, `change` applied to the
    /// Admin .varlink (or its notes), then the generator's `--check` on it: exit status and stderr.
    static func check(changing file: String, _ change: (String) -> String) throws -> (status: Int32, output: String) {
        let manager = FileManager.default
        let root = packageRoot.appendingPathComponent(".build/generated-types-\(UUID().uuidString)")
        defer { try? manager.removeItem(at: root) }
        let interfaces = root.appendingPathComponent("Sources/StrataVarlink/Interfaces")
        try manager.createDirectory(at: interfaces, withIntermediateDirectories: true)
        try manager.copyItem(at: packageRoot.appendingPathComponent("varlink"), to: root.appendingPathComponent("varlink"))
        for name in ["StrataAdmin+Types.swift", "StrataStore+Types.swift", "StrataAdmin+Methods.swift", "StrataStore+Methods.swift",
                     "StrataAdmin+Errors.swift", "StrataStore+Errors.swift"] {
            try manager.copyItem(at: packageRoot.appendingPathComponent("Sources/StrataVarlink/Interfaces/\(name)"),
                                 to: interfaces.appendingPathComponent(name))
        }
        let changed = root.appendingPathComponent("varlink/\(file)")
        try change(try String(contentsOf: changed, encoding: .utf8)).write(to: changed, atomically: true, encoding: .utf8)

        let process = Process()
        process.executableURL = packageRoot.appendingPathComponent("scripts/generate-varlink-types.py")
        process.arguments = ["--check", "--root", root.path]
        let pipe = Pipe()
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    @Test func theUnchangedCopyPasses() throws {
        let result = try Self.check(changing: "io.strata.Admin.varlink") { $0 }
        #expect(result.status == 0, "\(result.output)")
    }

    /// A change to a copy of varlink/ and what the generator's `--check` must say of it.
    struct Change: Sendable, CustomTestStringConvertible {
        var what: String
        var file: String
        var replacing: String
        var with: String
        /// What the output must say (the check exits 1).
        var says: String
        /// What the output must not name.
        var notNaming: [String] = []
        var testDescription: String { what }
    }

    static let changes: [Change] = [
        Change(what: "a changed field", file: "io.strata.Admin.varlink", replacing: "  requests: int,\n", with: "  requests: float,\n",
               says: "StrataAdmin+Types.swift differs from varlink/: run scripts/generate-varlink-definitions.sh"),
        Change(what: "a changed method", file: "io.strata.Admin.varlink",
               replacing: "method Pending(store: ?string)", with: "method Pending(store: string)",
               says: "StrataAdmin+Methods.swift differs from varlink/: run scripts/generate-varlink-definitions.sh",
               notNaming: ["StrataAdmin+Types.swift"]),
        Change(what: "a changed enum", file: "io.strata.Admin.varlink",
               replacing: "  state: (ready, failed, closed),\n", with: "  state: (ready, failed, closed, draining),\n",
               says: "StrataAdmin+Types.swift differs from varlink/: run scripts/generate-varlink-definitions.sh",
               notNaming: ["StrataAdmin+Errors.swift"]),
        Change(what: "a changed error", file: "io.strata.Admin.varlink",
               replacing: "error InvalidSetting (key: string, value: string, reason: string)",
               with: "error InvalidSetting (key: string, value: ?string, reason: string)",
               says: "StrataAdmin+Errors.swift differs from varlink/: run scripts/generate-varlink-definitions.sh",
               notNaming: ["StrataAdmin+Types.swift", "StrataAdmin+Methods.swift"]),
        Change(what: "an error alias with other fields", file: "io.strata.Store.varlink",
               replacing: "error StoreUnavailable (store: string, reason: string)",
               with: "error StoreUnavailable (store: string, since: ?string, reason: string)",
               says: "io.strata.Admin.StoreUnavailable: the alias StrataStore.StoreUnavailable has other fields"),
        Change(what: "notes about a method the IDL lacks", file: "io.strata.Admin.varlink",
               replacing: "method Metrics() -> (text: string)\n", with: "",
               says: "io.strata.Admin.Metrics: in io.strata.Admin.swift.json's methods, not a method of the .varlink"),
        Change(what: "notes about a field the IDL lacks", file: "io.strata.Admin.varlink", replacing: "  requests: int,\n", with: "",
               says: "io.strata.Admin.StoreInfo.requests: in the .swift.json, not in the .varlink"),
        Change(what: "a Swift type of other optionality", file: "io.strata.Store.varlink", replacing: "  id: ?int,\n", with: "  id: int,\n",
               says: "io.strata.Store.Operation.id: the .swift.json type 'Int64?' and the IDL's 'int' differ in optionality"),
    ]

    @Test(arguments: changes)
    func aChangeMakesTheCheckFail(_ change: Change) throws {
        let result = try Self.check(changing: change.file) { $0.replacingOccurrences(of: change.replacing, with: change.with) }
        #expect(result.status == 1)
        #expect(result.output.contains(change.says), "\(result.output)")
        for name in change.notNaming {
            #expect(!result.output.contains(name), "\(result.output)")
        }
    }
}
