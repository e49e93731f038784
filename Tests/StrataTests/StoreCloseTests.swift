import Foundation
import GRDB
import Testing
@testable import Strata

/// A closed store is whole in its one file: closing checkpoints the WAL into it and removes
/// the WAL, as SQLite does when the last connection closes, even after reads (GRDB's pool
/// closes its writer before its readers, so a reader would otherwise close last and leave the
/// WAL behind). Copying the closed `.sqlite` file alone copies every saved object.
@Suite struct StoreCloseTests {
    static let model = ObjectModel(version: "Notes 1", entities: [Entity("Note", attributes: [Attribute("text", .string)])])

    @Test(arguments: [false, true]) func aClosedStoreIsWholeInItsFile(reopened: Bool) throws {
        let temp = TemporaryStore()
        if reopened { try temp.open(Self.model).close() }
        let store = try temp.open(Self.model)
        let context = ObjectContext(store: store)
        for i in 1...50 { _ = try context.insert("Note", values: ["text": "note \(i)"]) }
        try context.save()
        // A fetch through one of the pool's readers.
        #expect(try ObjectContext(store: store).fetch("Note").count == 50)
        try store.close()

        #expect(!FileManager.default.fileExists(atPath: temp.url.path + "-wal"), "the WAL is left after close")
        let copy = temp.directory.file("copy.sqlite")
        try FileManager.default.copyItem(at: temp.url, to: copy)
        let queue = try DatabaseQueue(path: copy.path)
        defer { try? queue.close() }
        #expect(try queue.read { db in try String.fetchAll(db, sql: #"SELECT "text" FROM "Note" ORDER BY "_pk""#) } == (1...50).map { "note \($0)" })
    }
}

extension StoreCloseTests {
    /// A replicated store's WAL is the replicator's: closing leaves it in place.
    @Test func aReplicatedStoreLeavesItsWALToTheReplicator() throws {
        let temp = TemporaryStore()
        let store = try temp.open(Self.model, options: StoreOptions(walCheckpointing: .external))
        let context = ObjectContext(store: store)
        _ = try context.insert("Note", values: ["text": "kept in the WAL"])
        try context.save()
        #expect(try ObjectContext(store: store).fetch("Note").count == 1)
        try store.close()
        #expect(FileManager.default.fileExists(atPath: temp.url.path + "-wal"))
        let reopened = try temp.open(Self.model, options: StoreOptions(walCheckpointing: .external))
        defer { try? reopened.close() }
        #expect(try ObjectContext(store: reopened).fetch("Note").count == 1)
    }
}
