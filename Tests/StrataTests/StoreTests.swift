import Crypto
import Foundation
import GRDB
import Testing
@testable import Strata

@Suite("Store files: creation, metadata, refusal of bad files")
struct StoreTests {
    let model = TestModels.fleet

    /// SHA-256 of the main database file (a read-only WAL reader may create empty -wal/-shm
    /// side files, as SQLite does; the database file itself must not change).
    private func digest(_ url: URL) throws -> String {
        Data(SHA256.hash(data: try Data(contentsOf: url))).base64EncodedString()
    }

    @Test func createsStoreInWALWithIncrementalVacuumAndReadableTables() throws {
        let temp = TemporaryStore()
        let store = try temp.open(model)
        let (journal, autoVacuum, foreignKeys) = try store.database.read { db in
            (try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA auto_vacuum"),
             try Int.fetchOne(db, sql: "PRAGMA foreign_keys"))
        }
        #expect(journal == "wal")
        #expect(autoVacuum == 2)
        #expect(foreignKeys == 1)
        let columns = try store.database.read { db in try db.columns(in: "Vehicle").map(\.name) }
        #expect(columns.contains("colorScheme_primary"))
        #expect(columns.contains("tailNumber"))
        #expect(columns.contains("hullLength"))
        #expect(columns.contains("_entity"))
        #expect(columns.contains("hangar_id"))
        #expect(!columns.contains("pilots_id"))
        let pilotColumns = try store.database.read { db in try db.columns(in: "Pilot").map(\.name) }
        #expect(pilotColumns.contains("aircraft_id"))
        #expect(pilotColumns.contains("aircraft_order"))
        let notNull = try store.database.read { db in try db.columns(in: "Vehicle").filter { $0.isNotNull }.map(\.name) }
        #expect(notNull.isEmpty)
        let joinColumns = try store.database.read { db in try db.columns(in: "Aircraft_tags").map(\.name) }
        #expect(joinColumns == ["source_id", "target_id"])
        let indexes = try store.database.read { db in try db.indexes(on: "Vehicle").map(\.name) }
        #expect(indexes.contains("Vehicle_byPrimaryColor"))
        #expect(indexes.contains("Vehicle_unique_tailNumber"))
    }

    @Test func metadataIsReadableWithoutWritableOpenAndMatchesModel() throws {
        let temp = TemporaryStore()
        let store = try temp.open(model)
        try store.close()
        let metadata = try PersistentStore.metadata(at: temp.url)
        #expect(metadata.modelChecksum == model.checksum)
        #expect(metadata.modelVersion == "Fleet 1")
        #expect(metadata.entityHashes == model.entityHashes)
        #expect(metadata.model == model)
        #expect(metadata.isCompatible(with: model))
        #expect(metadata.history.map(\.kind) == ["created"])
        #expect(metadata.deferred.isEmpty)
        #expect(metadata.storeIdentifier == store.identifier)
    }

    @Test func reopeningKeepsIdentity() throws {
        let temp = TemporaryStore()
        let first = try temp.open(model)
        let id = first.identifier
        try first.close()
        let second = try temp.open(model)
        #expect(second.identifier == id)
        #expect(try second.currentMetadata().history.count == 1)
    }

    @Test func differentModelWithoutMigrationIsRefusedAndNothingIsWritten() throws {
        let temp = TemporaryStore()
        try temp.open(model).close()
        let before = try digest(temp.url)
        var changed = model
        changed.version = "Fleet 2"
        changed.entities[1].attributes.append(Attribute("range", .double))
        changed.entities[3].attributes.removeAll { $0.name == "weight" }
        let error = try #require(throws: StoreError.self) { try temp.open(changed) }
        #expect(error.code == .incompatibleModel)
        #expect(error.storeVersion == "Fleet 1")
        #expect(error.modelVersion == "Fleet 2")
        #expect(error.description.contains("entity 'Aircraft' differs: added range"))
        #expect(error.description.contains("entity 'Pilot' differs: removed weight"))
        #expect(error.description.contains("migrat"))
        #expect(try digest(temp.url) == before)
    }

    @Test func fileThatIsNotSQLiteIsRefusedUntouched() throws {
        let temp = TemporaryStore()
        let text = Data("name,tailNumber\nA320,F-GSPT\n".utf8)
        try text.write(to: temp.url)
        let error = try #require(throws: StoreError.self) { try temp.open(model) }
        #expect(error.code == .notSQLite)
        #expect(error.offset == 0)
        #expect(error.description.contains(temp.url.path))
        #expect(FileManager.default.contents(atPath: temp.url.path) == text)
        #expect(!FileManager.default.fileExists(atPath: temp.url.path + "-wal"))
    }

    @Test func truncatedStoreIsRefusedWithOffset() throws {
        let temp = TemporaryStore()
        let store = try temp.open(model)
        try store.checkpoint()
        try store.close()
        let data = try Data(contentsOf: temp.url)
        let cut = data.prefix(data.count - 4096)
        try cut.write(to: temp.url)
        try? FileManager.default.removeItem(atPath: temp.url.path + "-wal")
        try? FileManager.default.removeItem(atPath: temp.url.path + "-shm")
        let error = try #require(throws: StoreError.self) { try temp.open(model) }
        #expect(error.code == .truncated)
        #expect(error.offset == cut.count)
        #expect(try Data(contentsOf: temp.url) == cut)

        try Data(data.prefix(60)).write(to: temp.url)
        let short = try #require(throws: StoreError.self) { try temp.open(model) }
        #expect(short.code == .truncated)
        #expect(short.offset == 60)
    }

    @Test func corruptSchemaPageIsReportedAsCorrupt() throws {
        let temp = TemporaryStore()
        let store = try temp.open(model)
        try store.checkpoint()
        try store.close()
        var data = try Data(contentsOf: temp.url)
        for i in 100..<1024 { data[i] = 0xA5 }
        try data.write(to: temp.url)
        let error = try #require(throws: StoreError.self) { try temp.open(model) }
        #expect(error.code == .corrupt || error.code == .notSQLite)
        #expect(error.description.contains("backup"))
        #expect(try Data(contentsOf: temp.url) == data)
    }

    @Test func sqliteDatabaseThatIsNotAStoreIsRefusedUntouched() throws {
        let temp = TemporaryStore()
        let queue = try DatabaseQueue(path: temp.url.path)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
            try db.execute(sql: "INSERT INTO customers(name) VALUES ('Ada')")
        }
        try queue.close()
        let before = try digest(temp.url)
        let error = try #require(throws: StoreError.self) { try temp.open(model) }
        #expect(error.code == .notAStrataStore)
        #expect(error.description.contains("customers"))
        #expect(try digest(temp.url) == before)
        let journal = try DatabaseQueue(path: temp.url.path).read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
        #expect(journal == "delete")
    }

    /// Starts the sqlite3 CLI on `path` holding the write lock (an open IMMEDIATE transaction).
    private func holdWriteLock(_ path: String) throws -> (Process, Pipe) {
        let sqlite = Process()
        sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        sqlite.arguments = [path]
        let input = Pipe()
        let output = Pipe()
        sqlite.standardInput = input
        sqlite.standardOutput = output
        try sqlite.run()
        input.fileHandleForWriting.write(Data("BEGIN IMMEDIATE;\nUPDATE _strata_metadata SET value = value WHERE key = 'modelVersion';\nSELECT 'locked';\n".utf8))
        _ = output.fileHandleForReading.availableData   // waits for "locked"
        return (sqlite, input)
    }

    private func release(_ lock: (Process, Pipe)) {
        lock.1.fileHandleForWriting.write(Data("ROLLBACK;\n.quit\n".utf8))
        lock.0.waitUntilExit()
    }

    @Test func storeLockedByAnotherProcessIsReportedAndLosesNothing() throws {
        let temp = TemporaryStore()
        try temp.open(model).close()
        // Opening needs a moment of write access (WAL set-up): it reports the lock.
        let lock = try holdWriteLock(temp.url.path)
        let error = try #require(throws: StoreError.self) { try temp.open(model, options: StoreOptions(busyTimeout: 0.2)) }
        #expect(error.code == .locked)
        #expect(error.description.contains(temp.url.path))
        #expect(error.description.contains("another connection or process"))
        release(lock)

        // An open store whose save meets another process's write lock keeps its changes.
        let store = try temp.open(model, options: StoreOptions(busyTimeout: 0.2))
        let context = ObjectContext(store: store)
        _ = try context.insert("Pilot", values: ["name": "Ada"])
        let second = try holdWriteLock(temp.url.path)
        let saveError = try #require(throws: ObjectContextError.self) { try context.save() }
        #expect(saveError.code == .store)
        #expect(saveError.storeError?.code == .locked)
        #expect(context.hasChanges)
        release(second)
        try context.save()
        #expect(try temp.rawQueue().strings("SELECT name FROM Pilot") == ["Ada"])
    }

    @Test func missingStoreWithoutCreationIsNotFound() throws {
        let temp = TemporaryStore()
        let error = try #require(throws: StoreError.self) { try temp.open(model, options: StoreOptions(createIfMissing: false)) }
        #expect(error.code == .notFound)
        #expect(!FileManager.default.fileExists(atPath: temp.url.path))
        let metadataError = try #require(throws: StoreError.self) { try PersistentStore.metadata(at: temp.url) }
        #expect(metadataError.code == .notFound)
    }

    @Test func invalidModelIsRefusedBeforeCreatingAFile() throws {
        let temp = TemporaryStore()
        let bad = ObjectModel(version: "Bad", entities: [Entity("A", relationships: [Relationship("b", destination: "Missing")])])
        let error = try #require(throws: StoreError.self) { try temp.open(bad) }
        #expect(error.code == .invalidModel)
        #expect(error.description.contains("Missing"))
        #expect(!FileManager.default.fileExists(atPath: temp.url.path))
    }

    @Test func backupWritesAConsistentCopy() throws {
        let temp = TemporaryStore()
        let store = try temp.open(model)
        let context = ObjectContext(store: store)
        let pilot = try context.insert("Pilot")
        pilot["name"] = "Amelia"
        try context.save()
        let copy = temp.directory.file("backup.sqlite")
        try store.backup(to: copy)
        let metadata = try PersistentStore.metadata(at: copy)
        #expect(metadata.modelChecksum == model.checksum)
        let names = try DatabaseQueue(path: copy.path).strings("SELECT name FROM Pilot")
        #expect(names == ["Amelia"])
        let again = try #require(throws: StoreError.self) { try store.backup(to: copy) }
        #expect(again.description.contains("already exists"))
    }
}

@Suite("Store files on a read-only file system", .serialized)
struct ReadOnlyStoreTests {
    /// Mounts a small tmpfs, runs `body` with its path, remounting it read-only first when asked.
    private func withMount(_ body: (URL, () throws -> Void) throws -> Void) throws {
        let directory = TemporaryDirectory("ro")
        let mountPoint = directory.file("mnt")
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        func run(_ arguments: [String]) -> Int32 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/mount")
            process.arguments = arguments
            process.standardError = FileHandle.nullDevice
            guard (try? process.run()) != nil else { return -1 }
            process.waitUntilExit()
            return process.terminationStatus
        }
        guard run(["-t", "tmpfs", "-o", "size=16m", "tmpfs", mountPoint.path]) == 0 else {
            print("SKIPPED: read-only store tests need permission to mount a tmpfs (run as root)")
            return
        }
        defer {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/umount")
            process.arguments = [mountPoint.path]
            try? process.run()
            process.waitUntilExit()
        }
        try body(mountPoint) {
            guard run(["-o", "remount,ro", mountPoint.path]) == 0 else { throw StoreError(.readOnly, path: mountPoint.path, "remount failed") }
        }
    }

    @Test func readOnlyFileSystemIsReportedAndReadOnlyOpenWorks() throws {
        try withMount { mountPoint, makeReadOnly in
            let url = mountPoint.appendingPathComponent("fleet.sqlite")
            let store = try PersistentStore.open(at: url, model: TestModels.fleet)
            let context = ObjectContext(store: store)
            _ = try context.insert("Pilot", values: ["name": "Ada"])
            try context.save()
            try store.close()
            let before = try Data(contentsOf: url)
            try makeReadOnly()

            let error = try #require(throws: StoreError.self) { try PersistentStore.open(at: url, model: TestModels.fleet) }
            #expect(error.code == .readOnly)
            #expect(error.description.contains(url.path))
            #expect(error.description.contains("readOnly"))
            #expect(try Data(contentsOf: url) == before)

            let metadata = try PersistentStore.metadata(at: url)
            #expect(metadata.modelChecksum == TestModels.fleet.checksum)
            let readOnly = try PersistentStore.open(at: url, model: TestModels.fleet, options: StoreOptions(readOnly: true))
            let reader = ObjectContext(store: readOnly)
            #expect(try reader.count("Pilot") == 1)
            try readOnly.close()
        }
    }
}
