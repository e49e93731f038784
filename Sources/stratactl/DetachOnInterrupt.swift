import Dispatch
import Foundation

/// Ctrl-C during `finish-deferred --wait`: the command detaches, the work goes on in the
/// daemon. It ends the progress bar's line, says so and how to follow or stop the work, and
/// exits with 130 (interrupted).
final class DetachOnInterrupt {
    private let source: any DispatchSourceSignal

    init(bar: ProgressBar, store: String?, now: Bool) {
        signal(SIGINT, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        let which = store.map { " \($0)" } ?? ""
        // A run this command started with --now stops only with the daemon; a followed run
        // may have been started either way.
        let stop = now
            ? "it stops only with the daemon (it was started with --now)"
            : "`stratactl pause` stops it at its next batch (unless it was started with --now)"
        source.setEventHandler {
            bar.finish()
            FileHandle.standardError.write(Data("""
                detached: the deferred work goes on in the daemon; `stratactl finish-deferred\(which) --wait` \
                follows it again, `stratactl pending` shows it; \(stop)

                """.utf8))
            exit(130)
        }
        source.resume()
    }

    /// Restores Ctrl-C's default (the wait is over).
    func cancel() {
        source.cancel()
        signal(SIGINT, SIG_DFL)
    }
}
