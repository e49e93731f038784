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

    /// The public types a file declares at top level, each with its length in lines (from its
    /// declaration to its closing brace at column 0).
    static func publicTypes(in file: URL) throws -> [(name: String, lines: Int)] {
        let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        let declaration = try Regex(#"^public (?:indirect )?(?:final )?(?:struct|enum|class|protocol|actor) ([A-Za-z_][A-Za-z0-9_]*)"#)
        var types: [(name: String, lines: Int)] = []
        for (index, line) in lines.enumerated() {
            guard let match = try declaration.prefixMatch(in: line), let name = match.output[1].substring else { continue }
            let end = line.hasSuffix("{}") ? index : (lines[index...].firstIndex { $0 == "}" } ?? lines.count - 1)
            types.append((String(name), end - index + 1))
        }
        return types
    }

    /// Every Swift file below `Sources/`.
    static func allSources() -> [URL] {
        let sources = library.deletingLastPathComponent()
        let walker = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        return (walker?.allObjects as? [URL] ?? []).filter { $0.pathExtension == "swift" }.sorted { $0.path < $1.path }
    }

    /// Issue 21: a file holds one public main type. Beside it may stand small helpers (at most
    /// 25 lines: an option set, a payload, a small enum) and its error type.
    @Test("each source file declares at most one public main type")
    func onePublicMainTypePerFile() throws {
        let files = Self.allSources()
        #expect(files.count > 200, "the scan finds the sources")
        var crowded: [String] = []
        for file in files {
            let types = try Self.publicTypes(in: file)
            let main = types.filter { $0.lines > 25 && !$0.name.hasSuffix("Error") }
            if main.count > 1 {
                crowded.append("\(file.lastPathComponent): \(main.map { "\($0.name) (\($0.lines) lines)" }.joined(separator: ", "))")
            }
        }
        #expect(crowded.isEmpty, "files with more than one public main type; give each its own file:\n\(crowded.joined(separator: "\n"))")
    }

    @Test("the file scan sees a file's types and their lengths")
    func publicTypeScanMeasures() throws {
        let file = Self.library.appendingPathComponent("Store/TableLayout.swift")
        let types = try Self.publicTypes(in: file)
        #expect(types.map(\.name) == ["TableLayout", "ColumnLayout"])
        #expect(types.first.map { $0.lines > 10 } == true, "\(types)")
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
