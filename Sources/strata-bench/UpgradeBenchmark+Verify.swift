import Foundation

extension UpgradeBenchmark {
    /// The daemon log's verify-before-swap times ("verified the shadow of TABLE before the
    /// swap … strata.ms=…", one per rewritten table), to report their share of finishing.
    static func verifyTimes(_ log: String) -> [(table: String, ms: Double)] {
        log.split(separator: "\n").compactMap { line in
            guard let start = line.range(of: "verified the shadow of "), let msRange = line.range(of: "strata.ms=") else { return nil }
            let table = line[start.upperBound...].prefix { $0 != " " }
            let msText = line[msRange.upperBound...].prefix { $0.isNumber || $0 == "." }
            return (String(table), Double(msText) ?? 0)
        }
    }
}
