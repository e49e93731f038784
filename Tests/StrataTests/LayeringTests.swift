import Foundation
import Testing

/// The library's folders depend one way: Migration/ builds on Store/ (layout, files,
/// connections, metadata tables), and Store/ names no type of Migration/ (docs/Storage.md).
@Suite("Library layering")
struct LayeringTests {
    static let library = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/Strata")

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

    @Test("Store/ names no type declared in Migration/ (outside doc comments)")
    func storeDoesNotDependOnMigration() throws {
        let migrationTypes = try Self.declaredTypes(in: "Migration")
        #expect(migrationTypes.contains("DeferredLedger"), "the scan finds Migration's types")
        var uses: [String] = []
        for file in try Self.files(in: "Store") {
            for (number, line) in try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                if code.hasPrefix("//") { continue }
                let words = Set(code.split { !$0.isLetter && !$0.isNumber && $0 != "_" }.map(String.init))
                for name in words.intersection(migrationTypes).sorted() {
                    uses.append("\(file.lastPathComponent):\(number + 1): \(name)")
                }
            }
        }
        #expect(uses.isEmpty, "Store/ depends on Migration/:\n\(uses.joined(separator: "\n"))")
    }
}
