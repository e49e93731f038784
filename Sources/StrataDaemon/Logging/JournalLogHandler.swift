import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's swift-log handler.
///
/// - Under systemd, when standard error is the journal (`JOURNAL_STREAM` names its device and
///   inode), each message is one structured journal entry sent with `sd_journal_sendv(3)`:
///   `MESSAGE`, `PRIORITY`, `SYSLOG_IDENTIFIER`, `CODE_FILE`/`CODE_LINE`/`CODE_FUNC`, and every
///   metadata key as a field of its own (``JournalFields``: `strata.store` → `STRATA_STORE`), so
///   `journalctl -u stratad STRATA_STORE=fleet` finds a store's entries. When the journal's
///   socket cannot take an entry, the message goes to standard error (the journal stream) as
///   one line with a priority prefix instead: `<3>message strata.store=fleet`.
/// - Otherwise (a terminal, a file, a test harness) it writes one human line per message:
///   `2026-05-01T12:00:00.000 info stratad: store ready strata.store=fleet`.
public struct JournalLogHandler: LogHandler {
    /// Where messages go.
    public enum Destination: Sendable, Hashable {
        /// Structured journal entries, with the prefixed text line as the fallback.
        case journal
        /// Human lines on standard error.
        case console

        /// `.journal` when standard error is the journal, `.console` otherwise.
        public static var detected: Destination { JournalLogHandler.stderrIsJournal ? .journal : .console }
    }

    /// Log metadata.
    public var metadata: Logger.Metadata = [:]
    /// The log level.
    public var logLevel: Logger.Level
    private let label: String
    private let destination: Destination
    /// `SYSLOG_IDENTIFIER`: the program's name, as journald would show it.
    private let identifier: String
    private let send: @Sendable (JournalFields) -> Int32
    private let write: @Sendable (String) -> Void

    /// Memberwise initializer.
    public init(label: String, level: Logger.Level = .info, destination: Destination = .detected) {
        self.init(label: label, level: level, destination: destination, identifier: ProcessInfo.processInfo.processName,
                  send: JournalSender.send, write: Self.writeToStandardError)
    }

    /// With the journal and standard error replaced (tests).
    init(label: String, level: Logger.Level, destination: Destination, identifier: String,
         send: @escaping @Sendable (JournalFields) -> Int32, write: @escaping @Sendable (String) -> Void) {
        self.label = label
        self.logLevel = level
        self.destination = destination
        self.identifier = identifier
        self.send = send
        self.write = write
    }

    /// The handler's metadata value for `key`.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Bootstraps swift-log for the daemon.
    public static func bootstrap(level: Logger.Level) {
        LoggingSystem.bootstrap { label in JournalLogHandler(label: label, level: level) }
    }

    /// Whether standard error is connected to the journal (sd_journal_stream_fd(3)):
    /// `JOURNAL_STREAM` names its device and inode.
    public static var stderrIsJournal: Bool {
        guard let value = ProcessInfo.processInfo.environment["JOURNAL_STREAM"] else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(2, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }

    /// syslog(3) priority for a level.
    public static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    // MARK: - Logging

    /// Sends `event` to the journal (or standard error with a priority prefix).
    public func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        let message = "\(event.message)"
        switch destination {
        case .journal:
            let fields = JournalFields(message: message, priority: Self.priority(event.level), identifier: identifier,
                                       file: event.file, line: event.line, function: event.function, metadata: merged)
            if send(fields) < 0 {
                write("<\(Self.priority(event.level))>\(Self.text(message, merged))\n")
            }
        case .console:
            let time = Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true))
            write("\(time) \(event.level) \(label): \(Self.text(message, merged))\n")
        }
    }

    /// `message key=value …` on one line (newlines in the message become spaces).
    static func text(_ message: String, _ metadata: Logger.Metadata) -> String {
        let fields = metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\(quoted("\($0.value)"))" }.joined(separator: " ")
        let line = message.replacingOccurrences(of: "\n", with: " ")
        return fields.isEmpty ? line : line + " " + fields
    }

    private static func quoted(_ value: String) -> String {
        value.contains(where: { $0 == " " || $0 == "\"" }) ? "\"\(value.replacingOccurrences(of: "\"", with: "\\\""))\"" : value
    }

    private static func writeToStandardError(_ line: String) {
        line.withCString { pointer in _ = Glibc.write(2, pointer, strlen(pointer)) }
    }
}
