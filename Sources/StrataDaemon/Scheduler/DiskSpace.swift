import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Free space on the file systems of the stores: the `disk` signal.
///
/// While deferred work runs on a store, its files grow: the WAL (about twice a rewritten
/// table's size while clients write beside the rewrite, cut back once the run is over), the
/// shadow table (the table's size, until the old table is dropped), an index build's sort
/// buffer and an online backup (the store's size). A full file system fails the clients'
/// writes as well as the work's. So the work holds while a store's file system has less than
/// `min_free_space` available to the daemon (`statvfs`: blocks available to unprivileged
/// users), and goes on as soon as there is room again (a backlog signal: checked before every
/// batch, no `idle_after` wait).
enum DiskSpace {
    /// Bytes available to unprivileged users on the file system holding `path`, and that file
    /// system's id; nil when it cannot be read.
    static func available(at path: String) -> (bytes: Int, fileSystem: UInt)? {
        let directory = (path as NSString).deletingLastPathComponent
        var info = statvfs()
        guard statvfs(directory.isEmpty ? "." : directory, &info) == 0 else { return nil }
        let (bytes, overflow) = Int(clamping: info.f_bavail).multipliedReportingOverflow(by: Int(clamping: info.f_frsize))
        return (overflow ? Int.max : bytes, UInt(info.f_fsid))
    }

    /// One reading per file system that holds a store, naming its directory (the first store's)
    /// and its stores; busy below `minimum` bytes. No readings when `minimum` is 0.
    static func readings(_ stores: [(name: String, path: String)], minimum: Int) -> [SignalReading] {
        guard minimum > 0 else { return [] }
        var order: [UInt] = []
        var byFileSystem: [UInt: (directory: String, bytes: Int, names: [String])] = [:]
        for store in stores {
            guard let (bytes, fileSystem) = available(at: store.path) else { continue }
            if byFileSystem[fileSystem] == nil {
                order.append(fileSystem)
                byFileSystem[fileSystem] = ((store.path as NSString).deletingLastPathComponent, bytes, [])
            }
            byFileSystem[fileSystem]?.names.append(store.name)
        }
        return order.compactMap { byFileSystem[$0] }.map { entry in
            reading(directory: entry.directory, available: entry.bytes, minimum: minimum, stores: entry.names)
        }
    }

    /// The reading for one file system: free MiB against `minimum` in MiB.
    static func reading(directory: String, available: Int, minimum: Int, stores: [String]) -> SignalReading {
        let mib = 1_048_576.0
        return SignalReading(signal: .disk, label: "free space in \(directory.isEmpty ? "." : directory)", value: (Double(available) / mib).rounded(.down),
                             threshold: Double(minimum) / mib, unit: " MiB", note: "store\(stores.count == 1 ? "" : "s") \(stores.joined(separator: ", "))",
                             busyBelow: true)
    }
}
