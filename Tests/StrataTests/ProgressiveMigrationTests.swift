import Foundation
import Testing
@testable import Strata

/// Progressive migration: paths through the `nextVersion` graph.
@Suite("Progressive migration graph")
struct ProgressiveMigrationTests {
    /// v1..v5, each adding an attribute; `next` overrides nextVersion per version.
    static func versions(next: [Int: Int] = [:]) -> [ObjectModel] {
        (1...5).map { n in
            ObjectModel(version: "v\(n)", entities: [
                Entity("Item", attributes: [Attribute("name", .string)] + (1..<n).map { Attribute("a\($0)", .int64, isOptional: false, defaultValue: .int(Int64($0))) }),
            ], nextVersion: next[n].map { "v\($0)" })
        }
    }

    @Test("the Post chain: every version in order")
    func postChain() throws {
        let graph = ProgressiveMigrationGraph(directory: StagedScenarios.postDirectory)
        let path = try graph.path(fromChecksum: StagedScenarios.post(1).checksum, storeVersion: "Post 1", to: "Post 4")
        #expect(path.description == "Post 1 -> Post 2 -> Post 3 -> Post 4")
        let manager = try path.manager(customStages: [StagedScenarios.splitContent])
        #expect(manager.stages.map(\.label) == ["lightweight Post 1 -> Post 2", "split content into sections", "lightweight Post 3 -> Post 4"])
        #expect(path.unusedCustomStages([StagedScenarios.splitContent]).isEmpty)
    }

    @Test("old versions fold into one jump")
    func fold() throws {
        let graph = ProgressiveMigrationGraph(versions: Self.versions(next: [1: 4]))
        let path = try graph.path(from: graph.versions[0], to: graph.versions[4])
        #expect(path.versions.map(\.version) == ["v1", "v4", "v5"])
        #expect(path.skipped == ["v2", "v3"])
        #expect(path.description == "v1 -> v4 -> v5 (skips v2, v3)")
        // A store already at v2 still walks v2 -> v3 -> v4 -> v5.
        #expect(try graph.path(from: graph.versions[1], to: graph.versions[4]).versions.map(\.version) == ["v2", "v3", "v4", "v5"])
    }

    @Test("a broken version is routed around, and a store at it is led out")
    func routeAround() throws {
        let graph = ProgressiveMigrationGraph(versions: Self.versions(next: [2: 4]))
        #expect(try graph.path(from: graph.versions[0], to: graph.versions[4]).versions.map(\.version) == ["v1", "v2", "v4", "v5"])
        #expect(try graph.path(from: graph.versions[2], to: graph.versions[4]).versions.map(\.version) == ["v3", "v4", "v5"])
    }

    @Test("no path: jumped over, behind the store, loop, unknown store version")
    func noPath() {
        let jump = ProgressiveMigrationGraph(versions: Self.versions(next: [1: 4]))
        let over = #expect(throws: StagedMigrationError.self) { try jump.path(from: jump.versions[0], to: jump.versions[2]) }
        #expect(over?.code == .noPath)
        #expect(over?.description.contains("jumps to 'v4', over 'v3'") == true)
        let plain = ProgressiveMigrationGraph(versions: Self.versions())
        let behind = #expect(throws: StagedMigrationError.self) { try plain.path(from: plain.versions[3], to: plain.versions[1]) }
        #expect(behind?.description.contains("downgrades") == true)
        let loop = ProgressiveMigrationGraph(versions: Self.versions(next: [3: 2]))
        let looped = #expect(throws: StagedMigrationError.self) { try loop.path(from: loop.versions[0], to: loop.versions[4]) }
        #expect(looped?.description.contains("loop") == true)
        let unknown = #expect(throws: StagedMigrationError.self) { try plain.path(fromChecksum: "nope=", storeVersion: "v0", to: "v5") }
        #expect(unknown?.code == .storeVersionNotInChain)
        #expect(unknown?.description.contains("'v0' (checksum nope=)") == true)
    }

    @Test("a folded path runs as one lightweight stage with a hop per edge")
    func foldedRun() throws {
        let graph = ProgressiveMigrationGraph(versions: Self.versions(next: [1: 4]))
        let directory = TemporaryDirectory("progressive")
        let url = directory.file("p.sqlite")
        let store = try PersistentStore.open(at: url, model: graph.versions[0])
        try store.database.write { db in try db.execute(sql: "INSERT INTO Item(_pk, _version, name) VALUES (1, 1, 'one')") }
        try store.close()
        let report = try graph.path(from: graph.versions[0], to: graph.versions[4]).manager().migrateStore(at: url)
        #expect(report.hops.map(\.toVersion) == ["v4", "v5"])
        let reopened = try PersistentStore.open(at: url, model: graph.versions[4])
        defer { try? reopened.close() }
        let item = try ObjectContext(store: reopened).fetch("Item").first
        #expect(item?["name"] == .string("one"))
        #expect(item?["a3"] == .int(3) && item?["a4"] == .int(4))
    }
}
