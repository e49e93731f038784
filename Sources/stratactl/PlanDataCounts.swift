import Foundation
import Strata

/// What a plan's operations would drop and how many stored objects its requirements would
/// leave invalid, counted on a store (read-only).
struct PlanDataCounts {
    /// Per operation index: the count of each of its ``DiscardedData``.
    var discarded: [Int: [Int64]] = [:]
    /// Per requirement: the objects that break it.
    var violations: [Int64] = []

    init(plan: MigrationPlan, store: URL) throws {
        let metadata = try PersistentStore.metadata(at: store)
        let opened = try PersistentStore.open(at: store, model: metadata.model, options: StoreOptions(createIfMissing: false, readOnly: true))
        defer { try? opened.close() }
        let counts = try plan.dataCounts(in: opened)
        var discarded: [Int: [Int64]] = [:]
        for (next, i) in plan.operations.indices.filter({ !plan.operations[$0].discards.isEmpty }).enumerated() {
            discarded[i] = counts.discarded[next]
        }
        let violations = counts.violations
        self.discarded = discarded
        self.violations = violations
    }

    static func discardLines(_ discards: [DiscardedData], counts: [Int64]?) -> [String] {
        discards.enumerated().map { i, discard in
            if let count = counts?[i] { return "DISCARDS \(discard.describe(count: count))" }
            return "DISCARDS \(discard.kind == .values ? "the values of" : "the") \(discard.what)"
        }
    }

    static func requirementLines(_ requirements: [ObjectRequirement], counts: [Int64]?) -> [String] {
        requirements.enumerated().map { i, requirement in
            var line = "REQUIRES  existing objects: \(requirement.summary)"
            if let count = counts?[i] {
                line += count == 0 ? " — every stored object meets it" : " — \(count) stored object(s) do not: the migration is refused unless a custom stage fixes them"
            }
            return line
        }
    }

    static func json(_ discards: [DiscardedData], counts: [Int64]?) -> [[String: Any]] {
        discards.enumerated().map { i, discard in
            var o: [String: Any] = ["what": discard.what, "table": discard.table, "kind": discard.kind.rawValue]
            if let column = discard.column { o["column"] = column }
            if let count = counts?[i] { o[discard.kind == .values ? "nonNullValues" : "rows"] = count }
            return o
        }
    }

    static func json(_ requirements: [ObjectRequirement], counts: [Int64]?) -> [[String: Any]] {
        requirements.enumerated().map { i, requirement in
            var o: [String: Any] = ["entity": requirement.entity, "property": requirement.property, "change": requirement.change,
                                    "rule": requirement.ruleText]
            if let count = counts?[i] { o["violatingObjects"] = count }
            return o
        }
    }
}
