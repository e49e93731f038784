import Foundation
import GRDB
import Strata
import Testing

/// The plan's deferrable part and the ledger come from one computation: what `stratactl plan`
/// prints as deferred is what `stratactl pending` shows after the open, for every change kind.
@Suite("Deferred work has one source of truth")
struct DeferredTruthTests {
    /// `(ledger kind, summary)` of a plan operation, as the ledger records it.
    static func ledgerView(_ operation: MigrationOperation) -> String {
        let kind: String = switch operation.kind {
        case .rewriteTable, .rewriteJoinTable: DeferredTask.Kind.rewriteTable.rawValue
        case .dropTable: DeferredTask.Kind.dropTable.rawValue
        case .createIndex: DeferredTask.Kind.createIndex.rawValue
        case .dropIndex: DeferredTask.Kind.dropIndex.rawValue
        case .incrementalVacuum: DeferredTask.Kind.incrementalVacuum.rawValue
        default: "not a ledger kind: \(operation.kind)"
        }
        return "\(kind): \(operation.summary)"
    }

    /// The ledger a deferred open of `change` leaves.
    static func ledgerAfterOpen(_ change: MigrationCase) throws -> [DeferredTask] {
        let directory = TemporaryDirectory("truth")
        let url = directory.file("store.sqlite")
        try DeferredMigrationTests.seededStore(change.source, seed: change.seed, at: url)
        let store = try PersistentStore.open(at: url, model: change.destination, options: StoreOptions(migration: .deferred))
        defer { try? store.close() }
        return try store.pendingDeferredWork()
    }

    @Test("plan's deferred steps == the ledger after the open", arguments: MigrationTestModels.cases)
    func planMatchesLedger(_ change: MigrationCase) throws {
        let plan = try MigrationPlan.infer(from: change.source, to: change.destination)
        let pending = try Self.ledgerAfterOpen(change)
        let planned = plan.deferrable.map(Self.ledgerView)
        let recorded = pending.map { "\($0.kind.rawValue): \($0.summary)" }
        #expect(planned == recorded, "\(change.name)\nplan:\n\(planned.joined(separator: "\n"))\nledger:\n\(recorded.joined(separator: "\n"))")
        // Every deferred step is on a table the store has after the synchronous part.
        #expect(pending.allSatisfy { $0.state == .pending })
    }

    @Test("the change kinds cover every kind of ledger task")
    func everyLedgerKindIsCovered() throws {
        var seen: Set<DeferredTask.Kind> = []
        for change in MigrationTestModels.cases {
            seen.formUnion(try Self.ledgerAfterOpen(change).map(\.kind))
        }
        // A backup task comes from `MigrationOptions.backup`, not from a model change: the
        // plan never has it (DeferredBackupTests cover it).
        let fromModelChanges = Set(DeferredTask.Kind.allCases).subtracting([.backup])
        #expect(seen == fromModelChanges, "not covered: \(fromModelChanges.subtracting(seen))")
    }

    /// What `stratactl plan STORE --to FILE --json` lists as deferred, and what `stratactl
    /// deferred list STORE --json` shows after a deferred open, for `change`.
    static func commandViews(_ change: MigrationCase) throws -> (planned: [String], pending: [String], errors: [String]) {
        let directory = TemporaryDirectory("truth-cli")
        let url = directory.file("store.sqlite")
        let destination = directory.file("destination.json")
        try ModelFile.encode(change.destination, format: .json).write(to: destination)
        try DeferredMigrationTests.seededStore(change.source, seed: change.seed, at: url)
        let plan = try StratactlProcess.run(["plan", url.path, "--to", destination.path, "--json"])
        let planned = (try JSONSerialization.jsonObject(with: Data(plan.stdout.utf8)) as? [String: Any])?["operations"] as? [[String: Any]] ?? []
        try PersistentStore.open(at: url, model: change.destination, options: StoreOptions(migration: .deferred)).close()
        let list = try StratactlProcess.run(["deferred", "list", url.path, "--json"])
        let pending = try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]] ?? []
        return (planned.filter { $0["mode"] as? String == "deferred" }.compactMap { $0["summary"] as? String },
                pending.compactMap { $0["summary"] as? String },
                [plan, list].filter { $0.status != 0 }.map { "exit \($0.status): \($0.stderr)" })
    }

    // The processes run one after the other on a thread of their own: launched from the
    // cooperative pool (two threads here), they would stall the timing-sensitive daemon tests.
    @Test("`stratactl plan STORE --to FILE` lists as DEFERRED what `stratactl deferred list` shows after the open, for every change kind",
          .enabled(if: StratactlProcess.executable != nil, "stratactl is not built"))
    func commandsAgree() async throws {
        let views = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[(String, [String], [String], [String])], any Error>) in
            Thread.detachNewThread {
                continuation.resume(with: Result {
                    try MigrationTestModels.cases.map { change in
                        let view = try Self.commandViews(change)
                        return (change.name, view.planned, view.pending, view.errors)
                    }
                })
            }
        }
        #expect(views.count == MigrationTestModels.cases.count)
        for ((name, planned, pending, errors), change) in zip(views, MigrationTestModels.cases) {
            #expect(errors.isEmpty, "\(name): \(errors)")
            #expect(planned == pending, "\(name)")
            // The JSON was read: as many deferred steps as the library's plan has.
            #expect(planned.count == (try MigrationPlan.infer(from: change.source, to: change.destination)).deferrable.count, "\(name)")
        }
    }

    @Test("a changed index is a drop and a build, in the plan and in the ledger")
    func changedIndexIsDropAndBuild() throws {
        let change = try #require(MigrationTestModels.cases.first { $0.name == "add, change and remove indexes" })
        let plan = try MigrationPlan.infer(from: change.source, to: change.destination)
        let changed = plan.deferrable.filter { $0.summary.contains("Aircraft_byTail") }.map { Self.ledgerView($0) }
        #expect(changed.count == 2, "\(plan)")
        #expect(changed.first?.hasPrefix("dropIndex: ") == true && changed.last?.hasPrefix("createIndex: ") == true, "\(changed)")
        let pending = try Self.ledgerAfterOpen(change).filter { $0.summary.contains("Aircraft_byTail") }
        #expect(pending.map { "\($0.kind.rawValue): \($0.summary)" } == changed)
    }
}
