import Foundation
import Synchronization

/// Collects what a child process writes to its standard output and error, with blocking reads
/// on a thread of its own until the pipe's end of file.
///
/// Not `FileHandle.readabilityHandler`: on Linux that installs a libdispatch read source, and
/// tearing one down can race libdispatch's epoll bookkeeping and crash the whole test process
/// in `_dispatch_event_loop_drain` (swift-corelibs-libdispatch#949; it crashed one CI run of
/// this suite). A blocking `read(2)` never registers the descriptor with libdispatch.
final class PipeCapture: Sendable {
    private let pipe = Pipe()
    private let captured = Mutex(Data())

    /// Launches `process` with its standard output and error into the pipe, then starts
    /// reading: after the launch, `Process.run()` has closed this process's copy of the write
    /// end, so the end of file comes when the child (and anything it left the pipe to) exits.
    func run(_ process: Process) throws {
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
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
            // `reading` (kept alive by this closure) closes the descriptor when released.
        }
    }

    /// Everything read so far, as text.
    var text: String { String(decoding: captured.withLock { $0 }, as: UTF8.self) }
}
