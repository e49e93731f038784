import Foundation
import Logging
import Synchronization
import Testing
@testable import StrataDaemon

/// The log handler's journal fields, its fallback text and its console lines, with the
/// journal replaced by a recorder. `JournalTests` checks the real journal under systemd.
struct JournalLogHandlerTests {
    /// What the handler sent and wrote.
    final class Recorder: Sendable {
        let sent = Mutex<[JournalFields]>([])
        let written = Mutex<[String]>([])
        let sendResult: Int32

        init(sendResult: Int32 = 0) { self.sendResult = sendResult }

        func logger(_ destination: JournalLogHandler.Destination, level: Logger.Level = .trace) -> Logger {
            Logger(label: "stratad") { label in
                JournalLogHandler(label: label, level: level, destination: destination, identifier: "stratad",
                                  send: { fields in self.sent.withLock { $0.append(fields) }; return self.sendResult },
                                  write: { line in self.written.withLock { $0.append(line) } })
            }
        }
    }

    @Test(arguments: [
        ("strata.store", "STRATA_STORE"),
        ("strata.task", "STRATA_TASK"),
        ("strata.phases_ms", "STRATA_PHASES_MS"),
        ("strata.tasks-remaining", "STRATA_TASKS_REMAINING"),
        ("Strata.Store", "STRATA_STORE"),
        ("_private", "PRIVATE"),
        ("__", "META_"),
        ("", "META_"),
        ("2fa", "META_2FA"),
        ("message", "META_MESSAGE"),
        ("priority", "META_PRIORITY"),
        ("code.file", "META_CODE_FILE"),
        ("message.id", "MESSAGE_ID"),
        ("störe naïve", "ST_RE_NA_VE"),
        (String(repeating: "a", count: 80), String(repeating: "A", count: 64)),
    ])
    func metadataKeysBecomeJournalFieldNames(key: String, field: String) {
        #expect(JournalFields.fieldName(forMetadataKey: key) == field)
    }

    @Test func everyNameFollowsJournaldRules() {
        for key in ["strata.store", "", "_", "9", "ß", "a b-c.d/e", String(repeating: "x.", count: 60), "MESSAGE"] {
            let name = JournalFields.fieldName(forMetadataKey: key)
            #expect(!name.isEmpty && name.count <= 64, "\(key) -> \(name)")
            #expect(name.unicodeScalars.allSatisfy { ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }, "\(key) -> \(name)")
            #expect(name.first != "_" && !(name.first?.isNumber ?? true), "\(key) -> \(name)")
            #expect(!JournalFields.reservedNames.contains(name), "\(key) -> \(name)")
        }
    }

    @Test func journalEntriesCarryPriorityLocationAndMetadata() throws {
        let recorder = Recorder()
        var logger = recorder.logger(.journal)
        logger[metadataKey: "strata.store"] = "fleet"
        let line = #line + 1
        logger.warning("store schema changed\nsecond line", metadata: ["strata.task": "3", "message": "not the message"])
        logger.critical("boom")
        logger.debug("details", metadata: ["strata.store": "other"])

        let sent = recorder.sent.withLock { $0 }
        #expect(sent.count == 3)
        #expect(recorder.written.withLock { $0 }.isEmpty, "nothing on stderr when the journal takes the entry")
        let entry = try #require(sent.first)
        #expect(entry["MESSAGE"] == "store schema changed\nsecond line")
        #expect(entry["PRIORITY"] == "4")
        #expect(entry["SYSLOG_IDENTIFIER"] == "stratad")
        #expect(entry["CODE_FILE"]?.hasSuffix("JournalLogHandlerTests.swift") == true, "\(entry["CODE_FILE"] ?? "nil")")
        #expect(entry["CODE_LINE"] == "\(line)")
        #expect(entry["CODE_FUNC"] == "journalEntriesCarryPriorityLocationAndMetadata()")
        #expect(entry["STRATA_STORE"] == "fleet")
        #expect(entry["STRATA_TASK"] == "3")
        #expect(entry["META_MESSAGE"] == "not the message")
        #expect(entry.fields.filter { $0.name == "MESSAGE" }.count == 1)
        #expect(entry.assignments.contains("STRATA_STORE=fleet"))
        #expect(sent.map { $0["PRIORITY"] } == ["4", "2", "7"])
        #expect(sent[2]["STRATA_STORE"] == "other", "event metadata wins over the logger's")
    }

    @Test func levelsMapToSyslogPriorities() {
        let levels: [Logger.Level] = [.trace, .debug, .info, .notice, .warning, .error, .critical]
        #expect(levels.map(JournalLogHandler.priority) == [7, 7, 6, 5, 4, 3, 2])
    }

    @Test func aFailedSendFallsBackToAPrefixedLine() {
        let recorder = Recorder(sendResult: -2)   // -ENOENT: no journal socket
        var logger = recorder.logger(.journal)
        logger[metadataKey: "strata.store"] = "fleet"
        logger.error("reload refused\nbadly", metadata: ["strata.error": "bad key \"x\""])
        #expect(recorder.sent.withLock { $0 }.count == 1)
        #expect(recorder.written.withLock { $0 } == ["<3>reload refused badly strata.error=\"bad key \\\"x\\\"\" strata.store=fleet\n"])
    }

    @Test func theConsoleGetsHumanLines() throws {
        let recorder = Recorder()
        let logger = recorder.logger(.console, level: .info)
        logger.info("store ready", metadata: ["strata.store": "fleet", "strata.version": "Aircraft 2"])
        logger.debug("not shown")
        #expect(recorder.sent.withLock { $0 }.isEmpty)
        let lines = recorder.written.withLock { $0 }
        #expect(lines.count == 1)
        let line = try #require(lines.first)
        #expect(line.hasSuffix(" info stratad: store ready strata.store=fleet strata.version=\"Aircraft 2\"\n"), "\(line)")
        #expect(line.first?.isNumber == true, "starts with a timestamp: \(line)")
    }
}
