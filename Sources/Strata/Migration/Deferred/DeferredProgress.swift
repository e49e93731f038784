import Foundation

/// Progress reported while finishing deferred work.
public struct DeferredProgress: Sendable, Hashable {
    /// The task being worked on, with its progress.
    public var task: DeferredTask
    /// Index of the task among those of this run (0-based) and their count.
    public var taskIndex: Int
    /// The number of tasks of this run.
    public var taskCount: Int
}
