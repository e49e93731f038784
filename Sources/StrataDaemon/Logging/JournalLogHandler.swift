import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// A swift-log handler that writes one line per message to standard error: with a journald
/// priority prefix (`<3>`…) and `key=value` metadata when standard error is the journal
/// (`JOURNAL_STREAM` matches it), with a timestamp and level otherwise.
public struct JournalLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level
    private let label: String
    private let journal: Bool

    public init(label: String, level: Logger.Level = .info, journal: Bool = JournalLogHandler.stderrIsJournal) {
        self.label = label
        self.logLevel = level
        self.journal = journal
    }

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

    public func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        let fields = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\(Self.quoted("\($0.value)"))" }.joined(separator: " ")
        let message = "\(event.message)".replacingOccurrences(of: "\n", with: " ")
        let line: String
        if journal {
            line = "<\(Self.priority(event.level))>\(message)\(fields.isEmpty ? "" : " " + fields)\n"
        } else {
            let time = Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true))
            line = "\(time) \(event.level) \(label): \(message)\(fields.isEmpty ? "" : " " + fields)\n"
        }
        line.withCString { pointer in _ = write(2, pointer, strlen(pointer)) }
    }

    private static func quoted(_ value: String) -> String {
        value.contains(where: { $0 == " " || $0 == "\"" }) ? "\"\(value.replacingOccurrences(of: "\"", with: "\\\""))\"" : value
    }
}
