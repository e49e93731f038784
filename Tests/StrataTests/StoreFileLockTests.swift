import Foundation
import GRDB
import Testing
@testable import Strata

/// Strata's own reads of a store's files (the WAL index's header, the store file's header,
/// the online backup's pages) never release this process's SQLite locks on them: closing any
/// descriptor of a file releases every POSIX lock the process holds on it. Without its lock on
/// the WAL index's "dead man switch" byte, the next process to open the store took itself for
/// the first and rebuilt the index under stratad, which died of SIGBUS.
@Suite("Store files: Strata's reads keep SQLite's locks")
struct StoreFileLockTests {
    /// What another process sees of the locks on the `-shm`'s byte 128 (SQLite's DMS byte)
    /// and on the store file's shared-lock range: "locked PID" or "unlocked" for each.
    static func locksSeenFromAnotherProcess(_ storePath: String) throws -> [String] {
        let probe = """
            import fcntl, os, struct, sys
            def probe(path, offset, length):
                fd = os.open(path, os.O_RDWR)
                t, _, _, _, pid = struct.unpack("hhqqi", fcntl.fcntl(fd, fcntl.F_GETLK, struct.pack("hhqqi", fcntl.F_WRLCK, 0, offset, length, 0)))
                os.close(fd)
                return "unlocked" if t == fcntl.F_UNLCK else "locked %d" % pid
            print(probe(sys.argv[1] + "-shm", 128, 1))
            print(probe(sys.argv[1], 0x40000002, 510))
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", probe, storePath]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        process.waitUntilExit()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return text.split(separator: "\n").map(String.init)
    }

    @Test("reading the WAL index's header, checking the store file and reading backup pages leave the locks in place")
    func readsKeepTheLocks() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else {
            print("SKIPPED: /usr/bin/python3 is needed to look at the locks from another process")
            return
        }
        let directory = TemporaryDirectory("store-locks")
        let url = directory.file("store.sqlite")
        let store = try PersistentStore.open(at: url, model: DeferredIdleBatchTests.v1)
        try await store.database.write { db in
            try db.execute(sql: "INSERT INTO Item (_pk, name, rank, note) VALUES (1, 'a', 1, 'n')")
        }
        // A read transaction open, as a client's would be.
        let reader = try DatabaseQueue(path: url.path)
        let pid = ProcessInfo.processInfo.processIdentifier
        let before = try Self.locksSeenFromAnotherProcess(url.path)
        #expect(before.first == "locked \(pid)", "the WAL index's DMS byte: \(before)")

        // The WAL trimmer's and the replica-lag probe's read of the index header.
        #expect(WALIndexHeader.read(url.path + "-shm") != nil)
        // The check every open makes, while the store is open.
        _ = try StoreFile.check(url.path)
        // The online backup's page reader: the store file, the WAL and the index.
        let pages = try SnapshotPageReader(storePath: url.path)
        pages.close()

        let after = try Self.locksSeenFromAnotherProcess(url.path)
        #expect(after == before, "before: \(before), after: \(after)")
        try reader.close()
        try store.close()
        // Closed, nothing of this process holds the files.
        let closed = try Self.locksSeenFromAnotherProcess(url.path)
        #expect(closed.allSatisfy { $0 == "unlocked" } || !FileManager.default.fileExists(atPath: url.path + "-shm"))
    }
}
