import Foundation
import GRDB
import Testing
@testable import Strata

/// Store paths that are not regular files are refused before anything opens them, and the
/// files Strata creates are private to their owner.
@Suite("Store files: non-regular paths and permissions", .serialized)
struct StoreFileSafetyTests {
    static let model = ObjectModel(version: "Notes 1", entities: [Entity("Note", attributes: [Attribute("text", .string)])])

    func mode(_ path: String) -> mode_t {
        var info = stat()
        guard stat(path, &info) == 0 else { return 0 }
        return info.st_mode & 0o777
    }

    // MARK: - FIFOs (found blocking every command and the daemon's readiness)

    @Test("A FIFO as the store is refused by open and metadata, without blocking")
    func fifoStoreIsRefused() throws {
        let directory = TemporaryDirectory("fifo-store")
        let path = directory.file("store.sqlite")
        #expect(mkfifo(path.path, 0o600) == 0)
        for attempt in [{ _ = try PersistentStore.open(at: path, model: Self.model) },
                        { _ = try PersistentStore.metadata(at: path) },
                        { _ = try PersistentStore.open(at: path, model: Self.model, options: StoreOptions(createIfMissing: false, readOnly: true)) }] {
            let error = try #require(throws: StoreError.self) { try attempt() }
            #expect(error.code == .notRegularFile)
            #expect(error.description.contains(path.path))
            #expect(error.description.contains("FIFO"))
        }
    }

    @Test("A FIFO as the store's -wal, -shm or -journal is refused", arguments: ["-wal", "-shm", "-journal"])
    func fifoCompanionIsRefused(suffix: String) throws {
        let store = TemporaryStore()
        try store.open(Self.model).close()
        try? FileManager.default.removeItem(atPath: store.url.path + suffix)
        #expect(mkfifo(store.url.path + suffix, 0o600) == 0)
        let error = try #require(throws: StoreError.self) { try store.open(Self.model) }
        #expect(error.code == .notRegularFile)
        #expect(error.description.contains("\(suffix) file"))
        #expect(error.description.contains("remove it"))
    }

    @Test("A character device as the store is refused")
    func deviceIsRefused() throws {
        let error = try #require(throws: StoreError.self) { try PersistentStore.metadata(at: URL(fileURLWithPath: "/dev/zero")) }
        #expect(error.code == .notRegularFile)
        #expect(error.description.contains("character device"))
    }

    // MARK: - Permissions (stores were created 0644 outside systemd)

    @Test("A new store, its -wal and -shm are created 0600")
    func newStoreIsPrivate() throws {
        let store = TemporaryStore()
        let opened = try store.open(Self.model)
        let context = ObjectContext(store: opened)
        _ = try context.insert("Note", values: ["text": "secret"])
        try context.save()
        #expect(mode(store.url.path) == 0o600)
        #expect(FileManager.default.fileExists(atPath: store.url.path + "-wal"))
        #expect(mode(store.url.path + "-wal") == 0o600)
        #expect(mode(store.url.path + "-shm") == 0o600)
        try opened.close()
    }

    @Test("Backups are created 0600; fileMode widens what the store creates")
    func backupsArePrivate() throws {
        let store = TemporaryStore()
        let opened = try store.open(Self.model)
        let backup = store.directory.file("backup.sqlite")
        try opened.backup(to: backup)
        #expect(mode(backup.path) == 0o600)
        #expect(try DatabaseQueue(path: backup.path).read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM Note") } == 0)
        try opened.close()

        let shared = TemporaryStore()
        let groupReadable = try shared.open(Self.model, options: StoreOptions(fileMode: 0o640))
        #expect(mode(shared.url.path) == 0o640 & ~currentUmask())
        try groupReadable.close()
    }

    @Test("A staged migration's backup is created 0600")
    func stagedBackupIsPrivate() throws {
        let v2 = ObjectModel(version: "Notes 2", entities: [Entity("Note", attributes: [Attribute("text", .string), Attribute("tag", .string)])])
        let store = TemporaryStore()
        try store.open(Self.model).close()
        let backup = store.directory.file("before.sqlite")
        let manager = StagedMigrationManager(stages: [.lightweight([Self.model.checksum, v2.checksum])], models: [Self.model, v2])
        try manager.migrateStore(at: store.url, options: StagedMigrationOptions(backupURL: backup))
        #expect(mode(backup.path) == 0o600)
    }

    func currentUmask() -> mode_t {
        let mask = umask(0o022)
        umask(mask)
        return mask
    }
}
