import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import StrataDaemon

/// The test harness itself: a `DaemonProcess` released while its daemon runs (a test that
/// threw before `stop()`) kills it, so no test leaves a stratad behind.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct DaemonHarnessTests {
    @Test func aReleasedDaemonProcessKillsItsDaemon() async throws {
        let sandbox = try DaemonSandbox()
        defer { sandbox.remove() }
        try sandbox.writeConfig()
        var daemon: DaemonProcess? = try DaemonProcess(config: sandbox.configPath)
        try await waitForSocket(sandbox.adminSocket)
        let pid = try #require(daemon?.process.processIdentifier)
        #expect(kill(pid, 0) == 0, "the daemon runs")
        daemon = nil
        // Killed and reaped: the pid no longer names a process.
        #expect(kill(pid, 0) == -1 && errno == ESRCH)
    }
}
