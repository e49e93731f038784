import Foundation
import Strata
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import StrataDaemon
import StrataVarlink

/// kill -9 of stratad while clients write: history and data commit together — replaying the
/// recorded inserts and deletes gives exactly the rows the store holds, after every kill.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct HistoryCrashTests {
    /// Kills per run: `STRATA_HISTORY_KILLS` (the aim is measured with 50), 8 by default.
    static let kills = Int(ProcessInfo.processInfo.environment["STRATA_HISTORY_KILLS"] ?? "") ?? 8

    @Test func historyAndDataCommitTogetherAcrossKills() async throws {
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        try sandbox.writeConfig(dataAnyPeer: true)
        var lastID: Int64 = 0
        for round in 0..<Self.kills {
            let daemon = try DaemonProcess(config: sandbox.configPath)
            try await waitForSocket(sandbox.dataSocket)
            let acknowledged = AcknowledgedBatches()
            let writer = Task {
                var known: [Int64] = []
                var n = 0
                while !Task.isCancelled {
                    n += 1
                    var operations = [
                        StrataStore.Operation(op: .insert, entity: "Aircraft", values: ["tailNumber": .string("K\(round)-\(n)-a")]),
                        StrataStore.Operation(op: .insert, entity: "Aircraft", values: ["tailNumber": .string("K\(round)-\(n)-b")]),
                    ]
                    if known.count > 4 { operations.append(.init(op: .delete, entity: "Aircraft", id: known.removeFirst())) }
                    if let id = known.last { operations.append(.init(op: .update, entity: "Aircraft", id: id, values: ["aircraftType": .string("t\(n)")])) }
                    guard let reply = try? await VarlinkClient.withConnection(to: sandbox.dataSocket, {
                        try await $0.call(StrataStore.Batch.self, .init(store: "aircraft", operations: operations))
                    }) else { return }
                    known += reply.results.prefix(2).compactMap { $0.objectValue?["_pk"]?.intValue }
                    await acknowledged.add()
                }
            }
            // Each round kills the daemon with writes in flight, after at least one acknowledged
            // batch (however loaded the machine is), at a random point.
            let deadline = ContinuousClock.now + .seconds(30)
            while await acknowledged.count == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
            try await Task.sleep(for: .milliseconds(Int.random(in: 150...600)))
            daemon.signal(SIGKILL)
            _ = await daemon.waitForExit()
            writer.cancel()
            await writer.value
            let (rows, replayed, changes) = try Self.check(sandbox.path("aircraft.sqlite"))
            #expect(rows == replayed, "round \(round): \(rows.count) rows, \(replayed.count) by history")
            #expect(changes > lastID || round == 0, "round \(round) wrote nothing")
            lastID = changes
        }
    }

    /// The store's Aircraft keys, the keys history says exist, and the number of changes.
    static func check(_ path: String) throws -> (Set<Int64>, Set<Int64>, Int64) {
        let url = URL(fileURLWithPath: path)
        let store = try PersistentStore.open(at: url, model: try PersistentStore.metadata(at: url).model, options: StoreOptions(createIfMissing: false))
        defer { try? store.close() }
        let rows = Set(try ObjectContext(store: store).fetch(FetchRequest(entityName: "Aircraft")).map(\.objectID.primaryKey))
        var replayed: Set<Int64> = []
        var changes: Int64 = 0
        var since: Int64 = 0
        while true {
            let page = try store.history(since: since, limit: 10_000)
            for change in page.transactions.flatMap(\.changes) where change.entity == "Aircraft" {
                changes += 1
                if change.kind == .insert { replayed.insert(change.primaryKey) }
                if change.kind == .delete { replayed.remove(change.primaryKey) }
            }
            since = page.next
            if page.next >= page.latest { break }
        }
        return (rows, replayed, changes)
    }
}

/// The batches acknowledged to a round's writer.
private actor AcknowledgedBatches {
    private(set) var count = 0
    func add() { count += 1 }
}
