import Foundation
import Testing
@testable import Strata

/// Validation of staged chains before anything runs: every error says what to fix.
@Suite("Staged migration validation")
struct StagedValidationTests {
    static func model(_ n: Int) -> ObjectModel {
        ObjectModel(version: "v\(n)", entities: [
            Entity("Note", attributes: [Attribute("text", .string)] + (1..<n).map { Attribute("extra\($0)", .string) }),
        ])
    }
    static let v = (1...4).map(model)
    static func c(_ n: Int) -> String { v[n - 1].checksum }

    static func error(_ stages: [MigrationStage], models: [ObjectModel] = v) -> StagedMigrationError? {
        #expect(throws: StagedMigrationError.self) { try StagedMigrationManager(stages: stages, models: models).validate() }
    }

    @Test("a valid chain: lightweight and custom stages joined at their ends")
    func validChain() throws {
        let chain = try StagedMigrationManager(stages: [
            .lightweight([Self.c(1), Self.c(2)]),
            .custom(from: ModelReference(model: Self.v[1]), to: ModelReference(model: Self.v[2], checksum: Self.c(3))),
            .lightweight([Self.c(3), Self.c(4)]),
        ], models: Self.v).validate()
        #expect(chain.versions.map(\.version) == ["v1", "v2", "v3", "v4"])
        #expect(chain.hops.map(\.stage) == [1, 2, 3])
        #expect(chain.hops.map(\.isCustom) == [false, true, false])
    }

    @Test("no stages")
    func empty() {
        #expect(Self.error([])?.code == .emptyChain)
        #expect(Self.error([.lightweight([])])?.code == .emptyChain)
    }

    @Test("a checksum no model has names the known versions")
    func unknownChecksum() {
        let e = Self.error([.lightweight([Self.c(1), "bogus="], label: "mine")])
        #expect(e?.code == .unknownChecksum)
        #expect(e?.description.contains("bogus=") == true)
        #expect(e?.description.contains("'v2' (\(Self.c(2)))") == true)
        #expect(e?.stage == 2 || e?.stage == 1)
    }

    @Test("duplicate checksums in the chain")
    func duplicate() {
        let within = Self.error([.lightweight([Self.c(1), Self.c(2), Self.c(2)], label: "twice")])
        #expect(within?.code == .duplicateVersion)
        #expect(within?.description.contains("same checksum") == true)
        // Without a model order, a version listed again in a later stage is a duplicate.
        let a = Self.v[0], b = Self.v[1], c = Self.v[2]
        let across = Self.error([.lightweight([a.checksum, b.checksum, c.checksum], label: "first"),
                                 .lightweight([c.checksum, b.checksum], label: "second")], models: [c, a, b])
        #expect(across?.code == .duplicateVersion || across?.code == .backwardsStage)
    }

    @Test("a gap between stages says which stage to add")
    func gap() {
        let e = Self.error([.lightweight([Self.c(1), Self.c(2)], label: "first"), .lightweight([Self.c(3), Self.c(4)], label: "second")])
        #expect(e?.code == .gap)
        #expect(e?.description.contains("add a stage from 'v2' to 'v3'") == true)
        #expect(e?.stage == 2)
    }

    @Test("a stage going backwards (by model order, or back to a version already passed)")
    func backwards() {
        let ordered = Self.error([.lightweight([Self.c(1), Self.c(3)]), .custom(from: ModelReference(model: Self.v[2]), to: ModelReference(model: Self.v[1]), label: "undo")])
        #expect(ordered?.code == .backwardsStage)
        #expect(ordered?.description.contains("goes backwards") == true)
        let unordered = Self.error([.lightweight([Self.c(1), Self.c(2), Self.c(3)]), .custom(from: ModelReference(model: Self.v[2]), to: ModelReference(model: Self.v[1]), label: "undo")], models: [])
        #expect(unordered?.code == .backwardsStage || unordered?.code == .unknownChecksum)
        let noOrder = Self.error([.custom(from: ModelReference(model: Self.v[0]), to: ModelReference(model: Self.v[2])),
                                  .custom(from: ModelReference(model: Self.v[2]), to: ModelReference(model: Self.v[0]), label: "undo")], models: [])
        #expect(noOrder?.code == .backwardsStage)
        #expect(noOrder?.description.contains("already migrated past") == true)
        let nowhere = Self.error([.custom(from: ModelReference(model: Self.v[0]), to: ModelReference(model: Self.v[0]))])
        #expect(nowhere?.code == .backwardsStage)
    }

    @Test("a model reference with another checksum names both")
    func checksumMismatch() {
        let e = Self.error([.custom(from: ModelReference(model: Self.v[0], checksum: "expected="), to: ModelReference(model: Self.v[1]), label: "pinned")])
        #expect(e?.code == .checksumMismatch)
        #expect(e?.description.contains("expected=") == true)
        #expect(e?.description.contains(Self.c(1)) == true)
        #expect(e?.description.contains("stage 1 ('pinned')") == true)
    }

    @Test("model references: by file, by directory version, unresolvable")
    func references() throws {
        let post = ModelFileFixtures.configModels.appending(path: "Post")
        let byFile = try ModelReference(file: post.appending(path: "Post 3.json")).resolve()
        let byName = try ModelReference(version: "Post 3", in: post, checksum: byFile.checksum).resolve()
        #expect(byFile == byName)
        #expect(throws: StagedMigrationError.self) { try ModelReference(version: "Post 9", in: post).resolve() }
        #expect(throws: StagedMigrationError.self) { try ModelReference(file: post.appending(path: "missing.json")).resolve() }
    }

    @Test("a store whose version is not in the chain: the error names both")
    func storeNotInChain() throws {
        let directory = TemporaryDirectory("staged")
        let url = directory.file("s.sqlite")
        try PersistentStore.open(at: url, model: Self.v[0]).close()
        let manager = StagedMigrationManager(stages: [.lightweight([Self.c(2), Self.c(3)])], models: Self.v)
        let e = #expect(throws: StagedMigrationError.self) { try manager.migrateStore(at: url) }
        #expect(e?.code == .storeVersionNotInChain)
        #expect(e?.description.contains("the store is at version 'v1' (checksum \(Self.c(1)))") == true)
        #expect(e?.description.contains("'v2' (\(Self.c(2))) -> 'v3'") == true)
        #expect(try PersistentStore.metadata(at: url).modelVersion == "v1")
    }

    @Test("a hop that cannot be inferred is refused before anything is written")
    func notInferable() throws {
        let a = ObjectModel(version: "n1", entities: [Entity("Note", attributes: [Attribute("n", .int64)])])
        let b = ObjectModel(version: "n2", entities: [Entity("Note", attributes: [Attribute("n", .int16)])])
        let c = ObjectModel(version: "n3", entities: [Entity("Note", attributes: [Attribute("n", .int16), Attribute("m", .string)])])
        let directory = TemporaryDirectory("staged")
        let url = directory.file("s.sqlite")
        try PersistentStore.open(at: url, model: a).close()
        let manager = StagedMigrationManager(stages: [.lightweight([a.checksum, b.checksum, c.checksum])], models: [a, b, c])
        let e = #expect(throws: StagedMigrationError.self) { try manager.migrateStore(at: url) }
        #expect(e?.code == .notInferable)
        #expect(try PersistentStore.metadata(at: url).history.count == 1)
    }

    @Test("progress reports each phase of each hop with rows")
    func progress() throws {
        let directory = TemporaryDirectory("staged")
        let url = directory.file("s.sqlite")
        let store = try PersistentStore.open(at: url, model: Self.v[0])
        try store.database.write { db in for i in 1...50 { try db.execute(sql: "INSERT INTO Note(_pk, _version, text) VALUES (?, 1, 'x')", arguments: [i]) } }
        try store.close()
        var seen: [StagedMigrationProgress] = []
        let manager = StagedMigrationManager(stages: [
            .lightweight([Self.c(1), Self.c(2)], label: "one"),
            .custom(from: ModelReference(model: Self.v[1]), to: ModelReference(model: Self.v[2]), label: "two",
                    willMigrate: { stage in _ = try stage.context.fetch("Note") },
                    didMigrate: { stage in for note in try stage.context.fetch("Note") { note["extra2"] = .string("set") } }),
        ], models: Self.v)
        let report = try manager.migrateStore(at: url) { seen.append($0) }
        #expect(seen.map(\.phase) == [.hopStarted, .migrating, .hopCommitted, .hopStarted, .willMigrate, .migrating, .didMigrate, .hopCommitted, .finished])
        #expect(seen.first?.rowsTouched == 50)
        #expect(seen[7].rowsWritten >= 50)
        #expect(seen[7].stageLabel == "two" && seen[7].hop == 2 && seen[7].hopCount == 2 && seen[7].stageCount == 2)
        #expect(seen.last?.fraction == 1)
        #expect(report.hops.map(\.toVersion) == ["v2", "v3"])
        // Already at the end: nothing to do.
        #expect(try manager.migrateStore(at: url).hops.isEmpty)
    }
}

