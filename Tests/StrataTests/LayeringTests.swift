import Foundation
import Testing

/// The library's folders depend one way (docs/Architecture.md): Store/'s core (layout, files,
/// connections, metadata tables) names no type of Migration/; in Migration/, Inference/ and
/// Deferred/ (the plan and the ledger that holds its deferred part) name no type of Open/ or
/// Staged/, and Open/ (the migrator at open, the store's metadata) names no type of Staged/.
/// `PersistentStore`'s extensions (Store/PersistentStore+*.swift) are the façade over all of them.
@Suite("Library layering")
struct LayeringTests {
    static let library = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/Strata")

    /// The folders a folder must not depend on.
    static let forbidden: [(folder: String, mustNotName: [String])] = [
        ("Store", ["Migration/Inference", "Migration/Deferred", "Migration/Open", "Migration/Staged"]),
        ("Migration/Inference", ["Migration/Open", "Migration/Staged"]),
        ("Migration/Deferred", ["Migration/Open", "Migration/Staged"]),
        ("Migration/Open", ["Migration/Staged"]),
    ]

    /// The façade files: `PersistentStore`'s extensions, which may name every layer.
    static func isFacade(_ file: URL) -> Bool { file.lastPathComponent.hasPrefix("PersistentStore+") }

    /// The types a folder declares at top level.
    static func declaredTypes(in folder: String) throws -> Set<String> {
        let declaration = try Regex(#"^(?:public |package )?(?:final )?(?:enum|struct|class|protocol|actor) ([A-Za-z_][A-Za-z0-9_]*)"#).anchorsMatchLineEndings()
        var names: Set<String> = []
        for file in try Self.files(in: folder) {
            for match in try String(contentsOf: file, encoding: .utf8).matches(of: declaration) {
                if let name = match.output[1].substring { names.insert(String(name)) }
            }
        }
        return names
    }

    static func files(in folder: String) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: library.appendingPathComponent(folder), includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "swift" }.sorted { $0.path < $1.path }
    }

    /// `FILE:LINE: Type` for every code line (not a comment) of `folder` that names one of `types`.
    static func uses(of types: Set<String>, in folder: String) throws -> [String] {
        var uses: [String] = []
        for file in try Self.files(in: folder) where !isFacade(file) {
            for (number, line) in try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                if code.hasPrefix("//") { continue }
                let words = Set(code.split { !$0.isLetter && !$0.isNumber && $0 != "_" }.map(String.init))
                for name in words.intersection(types).sorted() {
                    uses.append("\(folder)/\(file.lastPathComponent):\(number + 1): \(name)")
                }
            }
        }
        return uses
    }

    @Test("Migration/ holds only subsystem folders, each with files")
    func migrationIsSplitBySubsystem() throws {
        let entries = try FileManager.default.contentsOfDirectory(atPath: Self.library.appendingPathComponent("Migration").path).sorted()
        #expect(entries == ["Deferred", "Inference", "Open", "Staged"], "a file or folder outside the subsystems: \(entries)")
        for folder in entries { #expect(try !Self.files(in: "Migration/\(folder)").isEmpty, "Migration/\(folder) is empty") }
    }

    @Test("Store/'s core names no type declared in Migration/ (outside doc comments)")
    func storeDoesNotDependOnMigration() throws {
        let migrationTypes = try ["Inference", "Deferred", "Open", "Staged"].reduce(into: Set<String>()) { $0.formUnion(try Self.declaredTypes(in: "Migration/\($1)")) }
        #expect(migrationTypes.contains("DeferredLedger"), "the scan finds Migration's types")
        let uses = try Self.uses(of: migrationTypes, in: "Store")
        #expect(uses.isEmpty, "Store/ depends on Migration/:\n\(uses.joined(separator: "\n"))")
    }

    @Test("each Migration/ subsystem names no type of the subsystems above it")
    func subsystemsDependDownward() throws {
        for rule in Self.forbidden where rule.folder != "Store" {
            let above = try rule.mustNotName.reduce(into: Set<String>()) { $0.formUnion(try Self.declaredTypes(in: $1)) }
            #expect(!above.isEmpty, "the scan finds the types of \(rule.mustNotName)")
            let uses = try Self.uses(of: above, in: rule.folder)
            #expect(uses.isEmpty, "\(rule.folder) depends on \(rule.mustNotName.joined(separator: ", ")):\n\(uses.joined(separator: "\n"))")
        }
    }

    @Test("stratactl reaches SQLite only through the library: no GRDB import")
    func stratactlUsesTheLibraryOnly() throws {
        let folder = Self.library.deletingLastPathComponent().appendingPathComponent("stratactl")
        let files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil).filter { $0.pathExtension == "swift" }
        #expect(files.count > 5, "the scan finds stratactl's sources")
        let importing = try files.filter { try String(contentsOf: $0, encoding: .utf8).contains("import GRDB") }.map(\.lastPathComponent)
        #expect(importing.isEmpty, "stratactl imports GRDB in \(importing); add what it needs to the library's API")
    }
}
