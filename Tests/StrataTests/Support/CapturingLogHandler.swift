import Foundation
import Logging
import Synchronization

/// A swift-log handler that keeps the messages it receives (for tests that check what a
/// library logged).
struct CapturingLogHandler: LogHandler {
    final class Messages: Sendable {
        private let lines = Mutex<[(Logger.Level, String)]>([])
        func append(_ level: Logger.Level, _ message: String) { lines.withLock { $0.append((level, message)) } }
        var all: [(level: Logger.Level, message: String)] { lines.withLock { $0.map { ($0.0, $0.1) } } }
        func count(containing text: String) -> Int { lines.withLock { $0.filter { $0.1.contains(text) }.count } }
    }

    let messages: Messages
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        messages.append(event.level, "\(event.message)")
    }

    /// A logger writing into a new `Messages`.
    static func logger() -> (Logger, Messages) {
        let messages = Messages()
        return (Logger(label: "test") { _ in CapturingLogHandler(messages: messages) }, messages)
    }
}
