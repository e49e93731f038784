import Foundation
import GRDB
import Testing
@testable import Strata

/// What a staged hop discards, counted (stratactl) or only named (a daemon's open, which must
/// not wait for a scan of the table), and counted either way when the counts decide.
@Suite struct StagedDiscardCountTests {
    static let v1 = ObjectModel(version: "Post 1", entities: [Entity("Post", attributes: [Attribute("title", .string), Attribute("body", .string)])])
    static let v2 = ObjectModel(version: "Post 2", entities: [Entity("Post", attributes: [Attribute("title", .string)])])
    static let manager = StagedMigrationManager(stages: [.lightweight([v1.checksum, v2.checksum])], models: [v1, v2])

    func seeded() throws -> TemporaryStore {
        let temp = TemporaryStore()
        let store = try temp.open(Self.v1)
        let context = ObjectContext(store: store)
        for i in 0..<12 { _ = try context.insert("Post", values: i < 5 ? ["title": "p\(i)", "body": "b\(i)"] : ["title": "p\(i)"]) }
        try context.save()
        try store.close()
        return temp
    }

    @Test func countedByDefault() throws {
        let temp = try seeded()
        let report = try Self.manager.migrateStore(at: temp.url)
        let discarded = try #require(report.hops.first?.discarded)
        #expect(discarded.map(\.count) == [5] && discarded.first?.data.column == "body")
        #expect(report.discardWarnings == ["hop 'Post 1' -> 'Post 2' discarded 5 non-null values of attribute Post.body"])
    }

    @Test func namedWithoutACountWhenCountingIsOff() throws {
        let temp = try seeded()
        var options = StagedMigrationOptions()
        options.countsDiscards = false
        let report = try Self.manager.migrateStore(at: temp.url, options: options)
        let discarded = try #require(report.hops.first?.discarded)
        #expect(discarded.map(\.count) == [nil] && discarded.first?.data.column == "body")
        #expect(report.discardWarnings == ["hop 'Post 1' -> 'Post 2' discarded the values of attribute Post.body (not counted)"])
        #expect(try PersistentStore.metadata(at: temp.url).modelVersion == "Post 2")
    }

    @Test func countedWhenTheCountsDecide() throws {
        let temp = try seeded()
        var options = StagedMigrationOptions()
        options.countsDiscards = false
        options.allowsDiscards = false
        let error = try #require(throws: StagedMigrationError.self) { try Self.manager.migrateStore(at: temp.url, options: options) }
        #expect(error.code == .discardsData)
        #expect(error.description.contains("would discard 5 non-null values of attribute Post.body"), "\(error)")
        #expect(try PersistentStore.metadata(at: temp.url).modelVersion == "Post 1")
    }
}
