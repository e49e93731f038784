import Foundation
import Testing

/// stratad's log entries in a real journal: the shipped unit under a private systemd, entries
/// read back with `journalctl -o json` (Tests/EndToEndTests/systemd/journal-under-systemd.sh).
@Suite(.serialized, .timeLimit(.minutes(3)))
struct JournalTests {
    @Test func structuredEntriesUnderSystemd() async throws {
        switch try await PrivateSystemd.run("journal-under-systemd.sh") {
        case .cannotRun(let reason):
            PrivateSystemd.reportSkipped("structuredEntriesUnderSystemd", reason)
        case .ran(let status, let output):
            #expect(status == 0 && output.contains("CHECK all ok"), "\(PrivateSystemd.failureReport(output))")
            #expect(output.contains("CHECK ok: journalctl -u stratad STRATA_STORE=fleet"), "\(output)")
        }
    }
}
