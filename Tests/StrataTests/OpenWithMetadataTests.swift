import Foundation
import Testing
@testable import Strata

/// `PersistentStore.open(at:model:options:metadata:)`: the open stratad uses after reading a
/// store's metadata once — the same store, migration and refusals as `open(at:model:options:)`.
@Suite("Opening with metadata already read")
struct OpenWithMetadataTests {
    typealias S = StagedScenarios

    @Test func opensTheStoreTheMetadataDescribes() throws {
        let temporary = TemporaryStore()
        try S.aircraftStore(version: 1, at: temporary.url)
        let metadata = try PersistentStore.metadata(at: temporary.url)
        let store = try PersistentStore.open(at: temporary.url, model: S.aircraft(1), metadata: metadata)
        defer { try? store.close() }
        #expect(try store.currentMetadata().storeIdentifier == metadata.storeIdentifier)
        #expect(try ObjectContext(store: store).count(FetchRequest(entityName: "Aircraft")) == S.aircraftRows.count)
    }

    @Test func migratesWithTheOptionsLikeAPlainOpen() throws {
        let temporary = TemporaryStore()
        try S.aircraftStore(version: 1, at: temporary.url)
        let metadata = try PersistentStore.metadata(at: temporary.url)
        #expect(throws: StoreError.self) { try PersistentStore.open(at: temporary.url, model: S.aircraft(2), metadata: metadata) }
        let store = try PersistentStore.open(at: temporary.url, model: S.aircraft(2), options: StoreOptions(migration: .deferred), metadata: metadata)
        defer { try? store.close() }
        #expect(try store.currentMetadata().modelVersion == "Aircraft 2")
    }

    @Test func aMissingStoreIsNotFound() throws {
        let temporary = TemporaryStore()
        try S.aircraftStore(version: 1, at: temporary.url)
        let metadata = try PersistentStore.metadata(at: temporary.url)
        let elsewhere = TemporaryStore()
        do {
            _ = try PersistentStore.open(at: elsewhere.url, model: S.aircraft(1), metadata: metadata)
            Issue.record("a missing store opened")
        } catch {
            #expect(error.code == .notFound, "\(error)")
            #expect(error.description.contains(elsewhere.url.path), "\(error)")
        }
    }
}
