import Foundation
import Synchronization

/// Collects what a child process writes to a pipe, with blocking reads on a thread of its own
/// until the pipe's end of file.
///
/// Not `FileHandle.readabilityHandler`: on Linux that installs a libdispatch read source, and
/// tearing one down can race libdispatch's epoll bookkeeping and crash the whole test process
/// in `_dispatch_event_loop_drain` (swift-corelibs-libdispatch#949; it crashed one CI run of
/// this suite). A blocking `read(2)` never registers the descriptor with libdispatch.
final class PipeCapture: Sendable {
    let pipe = Pipe()
    private let captured = Mutex(Data())
    private let ended = Mutex(false)

    /// Starts reading; call after the process that writes to `pipe` has been launched, so
    /// that `Process.run()` has closed this process's copy of the write end (otherwise the
    /// end of file never comes).
    func start() {
        let reading = pipe.fileHandleForReading
        Thread.detachNewThread { [self] in
            let fd = reading.fileDescriptor
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count > 0 {
                    let chunk = Data(buffer[0..<count])
                    captured.withLock { $0.append(chunk) }
                } else if count < 0, errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            ended.withLock { $0 = true }
            // `reading` (kept alive by this closure) closes the descriptor when released.
        }
    }

    /// Everything read so far.
    var data: Data { captured.withLock { $0 } }
    var text: String { String(decoding: data, as: UTF8.self) }
    /// Whether every writer has closed the pipe and all of it has been read.
    var reachedEnd: Bool { ended.withLock { $0 } }
}
