import Foundation
import Testing
@testable import StrataDaemon

/// The units from systemd/ under a real (private) systemd: start after READY, status, reload,
/// watchdog restart, socket activation (scripts/with-systemd). Exit 77 is SKIPPED, printed and counted.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct SystemdTests {
    @Test func unitsUnderRealSystemd() async throws {
        switch try await PrivateSystemd.run("daemon-under-systemd.sh") {
        case .cannotRun(let reason):
            PrivateSystemd.reportSkipped("unitsUnderRealSystemd", reason)
        case .ran(let status, let output):
            #expect(status == 0 && output.contains("CHECK all ok"), "\(PrivateSystemd.failureReport(output))")
        }
    }
}
