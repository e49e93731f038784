import Foundation

extension UpgradeBenchmark {
    /// The number a daemon log line gives `strata.KEY` (`strata.ms=12.5` → "12.5"), as text;
    /// nil when the line has no such field.
    static func logNumber(_ key: String, in line: Substring) -> Substring? {
        guard let range = line.range(of: "strata.\(key)=") else { return nil }
        return line[range.upperBound...].prefix { $0.isNumber || $0 == "." }
    }

    /// The daemon log's verify-before-swap times ("verified the shadow of TABLE before the
    /// swap … strata.ms=…", one per rewritten table), to report their share of finishing.
    static func verifyTimes(_ log: String) -> [(table: String, ms: Double)] {
        log.split(separator: "\n").compactMap { line in
            guard let start = line.range(of: "verified the shadow of "), let msText = logNumber("ms", in: line) else { return nil }
            let table = line[start.upperBound...].prefix { $0 != " " }
            return (String(table), Double(msText) ?? 0)
        }
    }

    /// The daemon log's longest write-lock hold per finishing step ("deferred work's longest
    /// write-lock holds … strata.holds_ms=copy batch=31.2,swap=4.0", one line per run; the
    /// longest of each step over all runs), in milliseconds, longest first. With `key`
    /// `waits_ms`, the longest a client arriving at the worst moment would have waited behind
    /// each step, from the same line.
    static func lockHolds(_ log: String, key: String = "holds_ms") -> [(step: String, ms: Double)] {
        var longest: [String: Double] = [:]
        for line in log.split(separator: "\n") where line.contains("longest write-lock holds") {
            guard let start = line.range(of: "strata.\(key)=") else { continue }
            // The value is quoted when it holds a space (`strata.holds_ms="copy batch=31.2,swap=4.0"`).
            var rest = line[start.upperBound...]
            if rest.first == "\"" { rest = rest.dropFirst().prefix { $0 != "\"" } }
            let text = rest.range(of: " strata.").map { rest[..<$0.lowerBound] } ?? rest
            for pair in text.split(separator: ",") {
                guard let equals = pair.lastIndex(of: "="), let ms = Double(pair[pair.index(after: equals)...]) else { continue }
                let step = String(pair[..<equals])
                longest[step] = max(longest[step] ?? 0, ms)
            }
        }
        return longest.sorted { $0.value > $1.value }.map { ($0.key, $0.value) }
    }

    /// A finishing run's batch counts (``UpgradeResults/finishBatches``).
    struct BatchCounts {
        var batches = 0, idle = 0, yielded = 0
    }

    /// The counts of the last "deferred work run ended" line of the daemon's log.
    static func batchCounts(_ log: String) -> BatchCounts? {
        guard let line = log.split(separator: "\n").last(where: { $0.contains("deferred work run ended") }) else { return nil }
        func value(_ key: String) -> Int? { logNumber(key, in: line).flatMap { Int($0) } }
        guard let batches = value("batches") else { return nil }
        return BatchCounts(batches: batches, idle: value("idle_batches") ?? 0, yielded: value("batches_yielded") ?? 0)
    }
}
