import Foundation
import Strata

/// How `migrate` and `import-coredata` say that a migration discarded stored data: a
/// `stratactl: warning: …` line on standard error per discard, and the counts in JSON.
enum DiscardOutput {
    /// Writes one warning line per discard to standard error.
    static func warn(_ report: StagedMigrationReport?) {
        for warning in report?.discardWarnings ?? [] {
            FileHandle.standardError.write(Data("stratactl: warning: \(warning)\n".utf8))
        }
    }

    /// A hop's discards as JSON: `[{what, table, column?, kind, count}]`.
    static func json(_ hop: StagedMigrationReport.Hop) -> [[String: Any]] {
        hop.discarded.map { discard in
            var o: [String: Any] = ["what": discard.data.what, "table": discard.data.table, "kind": discard.data.kind.rawValue, "count": discard.count.map { $0 as Any } ?? NSNull()]
            if let column = discard.data.column { o["column"] = column }
            return o
        }
    }

    /// The text lines of a hop's discards: `DISCARDED 125 non-null values of attribute Car.color`.
    static func lines(_ hop: StagedMigrationReport.Hop, indent: String) -> [String] {
        hop.discarded.map { "\(indent)DISCARDED \($0.data.describe(count: $0.count))" }
    }
}
