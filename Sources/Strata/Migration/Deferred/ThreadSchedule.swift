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

    /// The calling thread's figures now.
    static func current() -> ThreadSchedule? {
        guard let text = try? String(contentsOfFile: "/proc/thread-self/schedstat", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count >= 2, let running = Int64(fields[0]), let waiting = Int64(fields[1]) else { return nil }
        return ThreadSchedule(thread: UInt(pthread_self()), running: .nanoseconds(running), waiting: .nanoseconds(waiting))
    }

    /// The wait for a core between `earlier` and this reading, when both are of the same thread.
    func waited(since earlier: ThreadSchedule) -> Duration? {
        thread == earlier.thread ? waiting - earlier.waiting : nil
    }
}
