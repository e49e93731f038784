import Foundation

/// The calling thread's time on a core and waiting for one, from the kernel's scheduler
/// statistics (`/proc/thread-self/schedstat`: nanoseconds on a CPU, nanoseconds runnable but
/// waiting on a run queue). Deferred work reads it at the start and end of each task so that
/// its time breaks down into work, waiting for the writer, **waiting for a core** and pacing
/// (docs/Benchmarks.md): on a machine whose cores the clients keep busy, the work waits to run
/// even when nothing else stands in its way. Nil where the file is missing (not Linux, or a
/// kernel without schedstats).
struct ThreadSchedule: Sendable, Hashable {
    /// The thread: figures of two threads are not compared.
    var thread: UInt
    /// Time on a core.
    var running: Duration
    /// Time runnable but waiting for a core.
    var waiting: Duration

    /// The calling thread's figures now: three system calls into a buffer on the stack (it is
    /// read around every hold of the writer, so no Foundation file reading and no allocation).
    static func current() -> ThreadSchedule? {
        #if os(Linux)
        let fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 96) { buffer -> ThreadSchedule? in
            let count = read(fd, buffer.baseAddress, buffer.count)
            guard count > 0 else { return nil }
            // "RUNNING WAITING SLICES\n": the first two numbers.
            var running: Int64 = 0, waiting: Int64 = 0
            var field = 0, digits = 0
            for byte in buffer.prefix(count) where field < 2 {
                if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                    let digit = Int64(byte - UInt8(ascii: "0"))
                    if field == 0 { running = running &* 10 &+ digit } else { waiting = waiting &* 10 &+ digit }
                    digits += 1
                } else {
                    guard digits > 0 else { return nil }
                    field += 1
                    digits = 0
                }
            }
            guard field == 2 else { return nil }
            return ThreadSchedule(thread: UInt(pthread_self()), running: .nanoseconds(running), waiting: .nanoseconds(waiting))
        }
        #else
        return nil
        #endif
    }

    /// The wait for a core between `earlier` and this reading, when both are of the same thread.
    func waited(since earlier: ThreadSchedule) -> Duration? {
        thread == earlier.thread ? waiting - earlier.waiting : nil
    }
}

/// The work's wait for a core over a run, summed from readings taken at points where the work
/// is known to run on one thread (the start and end of a task, the start and end of each hold
/// of the writer). Work that awaits may resume on another thread of the pool: a stretch whose
/// two readings are of different threads cannot be measured and is left out, so the total is
/// at least what the work waited, never more. Nil only where the kernel does not say.
struct CoreWaitMeter: Sendable {
    private var last: ThreadSchedule?
    /// The wait measured so far (zero once the kernel has answered).
    private(set) var total: Duration?

    /// A reading now: adds the wait since the previous one when both are of this thread.
    mutating func mark() {
        guard let now = ThreadSchedule.current() else { return }
        let waited = last.flatMap { now.waited(since: $0) } ?? .zero
        total = (total ?? .zero) + waited
        last = now
    }
}
