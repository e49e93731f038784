import Foundation

/// A source of "the machine is busy" the idle scheduler reads. Each has a threshold setting;
/// the machine is idle only when every enabled signal is at or below its threshold.
public enum SchedulerSignal: String, Sendable, Hashable, CaseIterable {
    /// The daemon's own requests per second, over `load_window` (setting `request_rate`).
    case requests
    /// The daemon's time-averaged open transactions, over `load_window` (`open_transactions`).
    case transactions
    /// `/proc/pressure/cpu` some avg10 (`cpu_pressure`).
    case cpu
    /// `/proc/pressure/io` some avg10 (`io_pressure`).
    case io
    /// The unit's own cgroup `cpu.pressure` and `io.pressure` (cgroup v2; `cpu_pressure`, `io_pressure`).
    case cgroup
    /// `/proc/loadavg` 1-minute average divided by the number of cores (`load_per_core`).
    case load
    /// logind's `IdleHint` over D-Bus: busy while a user session is active. Off by default.
    case logind
    /// WAL bytes not yet on the replica of each store with `replication:` (its `max_lag`;
    /// docs/Fleet.md). No reading for stores without replication.
    case replication
    /// Free space on the file system of each store, below `min_free_space`: while deferred work
    /// runs, the store's WAL, the shadow table of a rewrite, its sort buffer and an online
    /// backup all grow (a rewrite beside writing clients needed about three times the table's
    /// size, docs/Scheduler.md), and a full disk fails the clients' writes too.
    case disk

    /// Every signal but logind's (which tracks user sessions, not load).
    public static let defaults: Set<SchedulerSignal> = [.requests, .transactions, .cpu, .io, .cgroup, .load, .replication, .disk]

    /// Whether the signal measures a backlog the work itself makes (the replica's lag, the disk
    /// space its files take), not load to wait out: it holds work while busy and lets it go on
    /// as soon as it is not, without restarting the `idle_after` wait — the way gh-ost
    /// throttles on replica lag — and it is read again before every batch. A load signal's busy
    /// reading restarts that wait.
    public var isBacklog: Bool { self == .replication || self == .disk }
}
