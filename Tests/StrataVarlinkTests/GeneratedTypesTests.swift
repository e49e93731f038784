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

    @Test func aChangedFieldMakesTheCheckFail() throws {
        let result = try Self.check(changing: "io.strata.Admin.varlink") {
            $0.replacingOccurrences(of: "  requests: int,\n", with: "  requests: float,\n")
        }
        #expect(result.status == 1)
        #expect(result.output.contains("StrataAdmin+Types.swift differs from varlink/: run scripts/generate-varlink-definitions.sh"),
                "\(result.output)")
    }

    @Test func aChangedMethodMakesTheCheckFail() throws {
        let result = try Self.check(changing: "io.strata.Admin.varlink") {
            $0.replacingOccurrences(of: "method Pending(store: ?string)", with: "method Pending(store: string)")
        }
        #expect(result.status == 1)
        #expect(result.output.contains("StrataAdmin+Methods.swift differs from varlink/: run scripts/generate-varlink-definitions.sh"),
                "\(result.output)")
        #expect(!result.output.contains("StrataAdmin+Types.swift"), "\(result.output)")
    }

    @Test func aChangedEnumMakesTheCheckFail() throws {
        let result = try Self.check(changing: "io.strata.Admin.varlink") {
            $0.replacingOccurrences(of: "  state: (ready, failed, closed),\n", with: "  state: (ready, failed, closed, draining),\n")
        }
        #expect(result.status == 1)
        #expect(result.output.contains("StrataAdmin+Types.swift differs from varlink/: run scripts/generate-varlink-definitions.sh"),
                "\(result.output)")
        #expect(!result.output.contains("StrataAdmin+Errors.swift"), "\(result.output)")
    }

    @Test func aChangedErrorMakesTheCheckFail() throws {
        let result = try Self.check(changing: "io.strata.Admin.varlink") {
            $0.replacingOccurrences(of: "error InvalidSetting (key: string, value: string, reason: string)",
                                    with: "error InvalidSetting (key: string, value: ?string, reason: string)")
        }
        #expect(result.status == 1)
        #expect(result.output.contains("StrataAdmin+Errors.swift differs from varlink/: run scripts/generate-varlink-definitions.sh"),
                "\(result.output)")
        #expect(!result.output.contains("StrataAdmin+Types.swift") && !result.output.contains("StrataAdmin+Methods.swift"), "\(result.output)")
    }

    @Test func anErrorAliasWithOtherFieldsIsRefused() throws {
        let result = try Self.check(changing: "io.strata.Store.varlink") {
            $0.replacingOccurrences(of: "error StoreUnavailable (store: string, reason: string)",
                                    with: "error StoreUnavailable (store: string, since: ?string, reason: string)")
        }
        #expect(result.status == 1)
        #expect(result.output.contains("io.strata.Admin.StoreUnavailable: the alias StrataStore.StoreUnavailable has other fields"),
                "\(result.output)")
    }

    @Test func notesAboutAMethodTheIDLLacksAreRefused() throws {
        let result = try Self.check(changing: "io.strata.Admin.varlink") {
            $0.replacingOccurrences(of: "method Metrics() -> (text: string)\n", with: "")
        }
        #expect(result.status == 1)
        #expect(result.output.contains("io.strata.Admin.Metrics: in io.strata.Admin.swift.json's methods, not a method of the .varlink"),
                "\(result.output)")
    }

    @Test func notesAboutAFieldTheIDLLacksAreRefused() throws {
        let result = try Self.check(changing: "io.strata.Admin.varlink") {
            $0.replacingOccurrences(of: "  requests: int,\n", with: "")
        }
        #expect(result.status == 1)
        #expect(result.output.contains("io.strata.Admin.StoreInfo.requests: in the .swift.json, not in the .varlink"), "\(result.output)")
    }

    @Test func aSwiftTypeOfOtherOptionalityIsRefused() throws {
        let result = try Self.check(changing: "io.strata.Store.varlink") {
            $0.replacingOccurrences(of: "  id: ?int,\n", with: "  id: int,\n")
        }
        #expect(result.status == 1)
        #expect(result.output.contains("io.strata.Store.Operation.id: the .swift.json type 'Int64?' and the IDL's 'int' differ in optionality"),
                "\(result.output)")
    }
}
