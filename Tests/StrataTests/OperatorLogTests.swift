import Foundation
import Logging
import Synchronization
import Testing
@testable import Strata

/// Logs a person reads: step names in words, repeated lines rate-limited with a count.
@Suite("Deferred work: logs a person reads")
struct OperatorLogTests {
    @Test("step names are words, not Swift signatures", arguments: [
        ("runStreamedBuild(_:state:step:adopted:)", "streamed build"),
        ("copyBatch(_:_:)", "copy batch"),
        ("swapTables", "swap tables"),
        ("stepBackup(_:destination:)", "backup"),
        ("moved index onto table", "moved index onto table"),
        ("run", "run"),
    ])
    func stepNames(label: String, words: String) {
        #expect(DeferredFinisher.stepName(label) == words)
        #expect(!DeferredFinisher.stepName(label).contains("("))
    }

    @Test("a repeated line is logged once per interval, then with how many were left out")
    func throttle() {
        let clock = Mutex(ContinuousClock.now)
        let throttle = LogThrottle(interval: .seconds(30), now: { clock.withLock { $0 } })
        let lines = LinesHandler.Lines()
        let logger = Logger(label: "test") { _ in LinesHandler(lines: lines) }
        for _ in 0..<300 {
            throttle.log(logger, level: .info, "deferred work held the write lock longer than its budget", key: "store|copy batch")
            clock.withLock { $0 += .milliseconds(50) }   // 300 lines over 15 s
        }
        #expect(lines.all.count == 1, "\(lines.all)")
        // Another step is another key: logged at once.
        throttle.log(logger, level: .info, "deferred work held the write lock longer than its budget", key: "store|swap tables")
        #expect(lines.all.count == 2)
        clock.withLock { $0 += .seconds(16) }
        throttle.log(logger, level: .info, "deferred work held the write lock longer than its budget", key: "store|copy batch")
        #expect(lines.all.count == 3)
        #expect(lines.all.last?.message == "deferred work held the write lock longer than its budget (299 more like it since the last such line)")
        #expect(lines.all.last?.metadata["strata.repeated"] == "299")
        // The count starts again.
        clock.withLock { $0 += .seconds(31) }
        throttle.log(logger, level: .info, "deferred work held the write lock longer than its budget", key: "store|copy batch")
        #expect(lines.all.last?.metadata["strata.repeated"] == nil)
    }
}

/// Collects log lines (message and metadata as text).
struct LinesHandler: LogHandler {
    final class Lines: Sendable {
        private let lines = Mutex<[(message: String, metadata: [String: String])]>([])
        var all: [(message: String, metadata: [String: String])] { lines.withLock { $0 } }
        func append(_ message: String, _ metadata: [String: String]) { lines.withLock { $0.append((message, metadata)) } }
    }

    let lines: Lines
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        lines.append("\(event.message)", (event.metadata ?? [:]).mapValues { "\($0)" })
    }
}
