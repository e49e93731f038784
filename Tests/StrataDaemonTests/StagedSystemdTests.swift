import Foundation
import Testing

/// A staged migration at open under a real (private) systemd: the shipped unit with a short
/// start-up timeout, a stage that runs longer than it; `StatusText` names the hop and the start
/// survives through `EXTEND_TIMEOUT_USEC` (Tests/EndToEndTests/systemd/staged-under-systemd.sh).
@Suite(.serialized, .timeLimit(.minutes(3)))
struct StagedSystemdTests {
    @Test func aLongStageExtendsTheStartAndShowsItsHop() async throws {
        switch try await PrivateSystemd.run("staged-under-systemd.sh") {
        case .cannotRun(let reason):
            PrivateSystemd.reportSkipped("aLongStageExtendsTheStartAndShowsItsHop", reason)
        case .ran(let status, let output):
            #expect(status == 0 && output.contains("CHECK all ok"), "\(PrivateSystemd.failureReport(output))")
            #expect(output.contains("CHECK ok: the start took"), "\(output)")
        }
    }
}
