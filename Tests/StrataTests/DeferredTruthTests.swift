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
        case .rebuildIndex: DeferredTask.Kind.rebuildIndex.rawValue
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
        #expect(seen == Set(DeferredTask.Kind.allCases), "not covered: \(Set(DeferredTask.Kind.allCases).subtracting(seen))")
    }

    @Test("`stratactl plan STORE --to FILE` lists as DEFERRED what `stratactl deferred list` shows after the open",
          .enabled(if: StratactlProcess.executable != nil, "stratactl is not built"), arguments: MigrationTestModels.cases)
    func commandsAgree(_ change: MigrationCase) throws {
        let directory = TemporaryDirectory("truth-cli")
        let url = directory.file("store.sqlite")
        let destination = directory.file("destination.json")
        try ModelFile.encode(change.destination, format: .json).write(to: destination)
        try DeferredMigrationTests.seededStore(change.source, seed: change.seed, at: url)
        let plan = try StratactlProcess.run(["plan", url.path, "--to", destination.path, "--json"])
        #expect(plan.status == 0, "\(plan.stderr)")
        let planned = try #require(try JSONSerialization.jsonObject(with: Data(plan.stdout.utf8)) as? [String: Any])
        let deferred = (planned["operations"] as? [[String: Any]] ?? []).filter { $0["mode"] as? String == "deferred" }.compactMap { $0["summary"] as? String }
        try PersistentStore.open(at: url, model: change.destination, options: StoreOptions(migration: .deferred)).close()
        let list = try StratactlProcess.run(["deferred", "list", url.path, "--json"])
        #expect(list.status == 0, "\(list.stderr)")
        let pending = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]]).compactMap { $0["summary"] as? String }
        #expect(deferred == pending, "\(change.name)")
    }

    @Test("a changed index is one rebuild task in the plan and in the ledger")
    func changedIndexIsOneRebuild() throws {
        let change = try #require(MigrationTestModels.cases.first { $0.name == "add, change and remove indexes" })
        let plan = try MigrationPlan.infer(from: change.source, to: change.destination)
        let rebuilds = plan.deferrable.filter { if case .rebuildIndex = $0.kind { true } else { false } }
        #expect(rebuilds.map(\.summary) == ["rebuild index Aircraft_byTail on Aircraft (fetch index Aircraft.byTail changed)"], "\(plan)")
        let pending = try Self.ledgerAfterOpen(change)
        #expect(pending.filter { $0.kind == .rebuildIndex }.map(\.summary) == rebuilds.map(\.summary))
    }
}
