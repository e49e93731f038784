import Foundation
import Testing
@testable import Strata

/// How many SQLite connections one configured open (``DirectoryMigration/open(storeAt:directory:target:options:staged:stages:willMigrate:progress:)``,
/// what stratad runs per store) makes on the store file, counted by the fault VFS (one open of
/// the main database file per connection). The read-only metadata check before anything writes
/// is one, the store's `DatabasePool` (its writer, and a reader for the schema check) the
/// others; a migration at open adds its own connection. The check cannot be the pool's: a
/// `DatabasePool` writes when it opens a store whose WAL is missing (GRDB's `grdb_issue_102`
/// table), and a foreign store, an unknown version or a refused migration must find the file
/// untouched. A change that adds connections to an open fails here. (In FaultInjectionTests'
/// serialized suite: the VFS's scope is global.)
extension FaultInjectionTests {
    typealias Scenarios = StagedScenarios

    /// Connections on the store's file while `body` runs.
    static func connections(under directory: URL, _ body: () throws -> Void) rethrows -> Int {
        FaultVFS.scope(directory)
        defer { FaultVFS.end() }
        try body()
        return FaultVFS.connections
    }

    static func openConfigured(_ url: URL, target: ObjectModel) throws {
        let opened = try DirectoryMigration.open(storeAt: url, directory: Scenarios.aircraftDirectory, target: target,
                                                 options: StoreOptions(migration: .deferred), staged: StagedMigrationOptions())
        _ = try opened.store.checkSchema()
        try opened.store.close()
    }

    @Test func aConfiguredOpenCountsItsConnections() throws {
        let atTarget = TemporaryStore()
        try PersistentStore.open(at: atTarget.url, model: Scenarios.aircraft(3)).close()
        let plain = try Self.connections(under: atTarget.directory.url) { try Self.openConfigured(atTarget.url, target: Scenarios.aircraft(3)) }

        let behind = TemporaryStore()
        try Scenarios.aircraftStore(version: 1, at: behind.url)
        let graph = try Self.connections(under: behind.directory.url) { try Self.openConfigured(behind.url, target: Scenarios.aircraft(3)) }

        let lightweight = TemporaryStore()
        try PersistentStore.open(at: lightweight.url, model: Scenarios.aircraft(1)).close()
        let atOpen = try Self.connections(under: lightweight.directory.url) {
            let store = try PersistentStore.open(at: lightweight.url, model: Scenarios.aircraft(2), options: StoreOptions(migration: .deferred))
            #expect(try store.currentMetadata().modelVersion == Scenarios.aircraft(2).version)
            _ = try store.checkSchema()
            try store.close()
        }

        // The metadata check, the pool's writer and one reader.
        #expect(plain == 3, "an open at the target: \(plain) connections")
        // Its checks run on the migration's own connection, before the pool opens.
        #expect(atOpen == 4, "a lightweight migration at open: \(atOpen) connections")
        // The graph adds the staged runner's connection (the open reads the metadata it left).
        #expect(graph == 4, "an open through the version graph: \(graph) connections")
    }
}
