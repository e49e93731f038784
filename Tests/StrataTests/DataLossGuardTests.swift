import Foundation
import GRDB
import Testing
@testable import Strata

/// A migration that would drop every entity of a store (a store opened with another
/// application's model) is refused at open and in staged migrations unless allowed; rows stay.
@Suite("Migrations that drop every entity")
struct DataLossGuardTests {
    static let post = ObjectModel(version: "Post 1", entities: [
        Entity("Post", attributes: [Attribute("title", .string)]),
        Entity("Comment", attributes: [Attribute("body", .string)]),
    ])
    static let aircraft = ObjectModel(version: "Aircraft 1", entities: [Entity("Aircraft", attributes: [Attribute("tailNumber", .string)])])

    func seededStore(rows: Int = 50) throws -> TemporaryStore {
        let store = TemporaryStore()
        let opened = try store.open(Self.post)
        let context = ObjectContext(store: opened)
        for i in 0..<rows { _ = try context.insert("Post", values: ["title": "post \(i)"]) }
        try context.save()
        try opened.close()
        return store
    }

    func postCount(_ store: TemporaryStore) throws -> Int {
        try store.rawQueue().read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM Post") ?? -1 }
    }

    @Test("Opening a Post store with the Aircraft model is refused, whether cleanup is deferred or not", arguments: [true, false])
    func openIsRefused(deferCleanup: Bool) throws {
        let store = try seededStore()
        let options = StoreOptions(migration: MigrationOptions(deferCleanup: deferCleanup))
        let error = try #require(throws: StoreError.self) { try store.open(Self.aircraft, options: options) }
        #expect(error.code == .migrationRefused)
        #expect(error.description.contains("drop every entity of the store ('Post', 'Comment')"), "\(error)")
        #expect(error.description.contains("allowsDroppingAllEntities"))
        #expect(error.storeVersion == "Post 1")
        #expect(try postCount(store) == 50)
        #expect(try PersistentStore.metadata(at: store.url).modelVersion == "Post 1")
    }

    @Test("Allowed explicitly, the migration runs")
    func allowedMigrationRuns() throws {
        let store = try seededStore()
        var migration = MigrationOptions.immediate
        migration.allowsDroppingAllEntities = true
        let opened = try store.open(Self.aircraft, options: StoreOptions(migration: migration))
        #expect(opened.model.version == "Aircraft 1")
        try opened.close()
        #expect(try store.rawQueue().read { try $0.tableExists("Post") } == false)
    }

    @Test("With discards not allowed, a migration at open that would discard values or rows is refused with its counts; one that discards nothing runs")
    func discardsRefusedAtOpen() throws {
        let store = try seededStore(rows: 12)
        let onlyPost = ObjectModel(version: "Post 2", entities: [Entity("Post", attributes: [Attribute("title", .string)])])
        var migration = MigrationOptions.deferred
        migration.allowsDiscards = false
        // 'Comment' has no rows: removing it discards nothing; 'Post.title' holds 12 values.
        let untitled = ObjectModel(version: "Post 3", entities: [Entity("Post", attributes: [Attribute("summary", .string)])])
        let error = try #require(throws: StoreError.self) { try store.open(untitled, options: StoreOptions(migration: migration)) }
        #expect(error.code == .migrationRefused)
        #expect(error.description.contains("would discard 12 non-null values of attribute Post.title"), "\(error)")
        #expect(error.description.contains("nothing was changed"))
        #expect(try PersistentStore.metadata(at: store.url).modelVersion == "Post 1")
        #expect(try store.rawQueue().read { try Int.fetchOne($0, sql: "SELECT COUNT(title) FROM Post") } == 12)
        try store.open(onlyPost, options: StoreOptions(migration: migration)).close()
        #expect(try PersistentStore.metadata(at: store.url).modelVersion == "Post 2")
        #expect(try postCount(store) == 12)
    }

    @Test("Keeping one entity (or renaming them) is not dropping every entity")
    func partialRemovalIsAllowed() throws {
        let store = try seededStore()
        let onlyPost = ObjectModel(version: "Post 2", entities: [Entity("Post", attributes: [Attribute("title", .string)])])
        try store.open(onlyPost, options: StoreOptions(migration: .deferred)).close()
        #expect(try postCount(store) == 50)

        let renamed = ObjectModel(version: "Post 3", entities: [Entity("Article", attributes: [Attribute("title", .string)], renamingIdentifier: "Post")])
        try store.open(renamed, options: StoreOptions(migration: .deferred)).close()
        #expect(try store.rawQueue().read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM Article") } == 50)
    }

    @Test("A staged chain that drops the store's entities one hop at a time is refused before the first hop")
    func stagedChainIsRefused() throws {
        let store = try seededStore()
        let middle = ObjectModel(version: "Mixed 2", entities: [Self.post.entities[0], Self.aircraft.entities[0]])
        let last = ObjectModel(version: "Aircraft 3", entities: [Self.aircraft.entities[0]])
        let manager = StagedMigrationManager(stages: [.lightweight([Self.post.checksum, middle.checksum, last.checksum])],
                                             models: [Self.post, middle, last])
        let error = try #require(throws: StagedMigrationError.self) { try manager.migrateStore(at: store.url) }
        #expect(error.code == .dropsEveryEntity)
        #expect(error.description.contains("'Aircraft 3' continues none of them"), "\(error)")
        #expect(error.description.contains("nothing was changed"))
        #expect(try PersistentStore.metadata(at: store.url).modelVersion == "Post 1")
        #expect(try postCount(store) == 50)

        let report = try manager.migrateStore(at: store.url, options: StagedMigrationOptions(allowsDroppingAllEntities: true))
        #expect(report.endVersion == "Aircraft 3")
    }
}
