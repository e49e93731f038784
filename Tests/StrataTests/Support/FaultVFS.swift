import CStrataFaultVFS
import Foundation
import GRDB

/// The fault-injecting SQLite VFS (`Sources/CStrataFaultVFS`) as the tests drive it.
///
/// Registered once as SQLite's default VFS: every connection the test process opens goes
/// through it, but only files under ``scope(_:)`` see faults; the other suites' stores pass
/// straight through. Tests that arm it must be in one `.serialized` suite.
enum FaultVFS {
    /// Operations that can fail.
    enum Kind: Int32, CaseIterable, CustomStringConvertible {
        case read = 0, write, sync, lock, truncate

        /// The error a failing operation of this kind returns (what a real disk says).
        var code: Int32 {
            switch self {
            case .read: 266          // SQLITE_IOERR_READ
            case .write: 778         // SQLITE_IOERR_WRITE
            case .sync: 1034         // SQLITE_IOERR_FSYNC
            case .lock: 3850         // SQLITE_IOERR_LOCK
            case .truncate: 1546     // SQLITE_IOERR_TRUNCATE
            }
        }

        var description: String { ["read", "write", "sync", "lock", "truncate"][Int(rawValue)] }
    }

    /// SQLITE_FULL: a write that finds the disk full.
    static let full: Int32 = 13

    private static let registered: Bool = strata_faultvfs_register() == 0

    /// Registers the VFS (once) and limits faults to files under `directory`.
    static func scope(_ directory: URL) {
        precondition(registered, "sqlite3_vfs_register failed")
        strata_faultvfs_reset()
        strata_faultvfs_scope(directory.path + "/")
    }

    /// Fails the `nth` operation of `kind` from now (and every later one when `persistent`).
    static func arm(_ kind: Kind, nth: Int, code: Int32? = nil, persistent: Bool = false) {
        strata_faultvfs_arm(kind.rawValue, Int64(nth), code ?? kind.code, persistent ? 1 : 0)
    }

    static func disarm() { strata_faultvfs_disarm() }
    static var fired: Int { Int(strata_faultvfs_fired()) }
    static func count(_ kind: Kind) -> Int { Int(strata_faultvfs_count(kind.rawValue)) }
    static func track(_ on: Bool) { strata_faultvfs_track(on ? 1 : 0) }
    /// SQLite connections opened on a main database file in scope since the last reset.
    static var connections: Int { Int(strata_faultvfs_main_db_opens()) }
    /// Reverts every tracked file to its last sync; later I/O in scope fails until ``reset()``.
    @discardableResult
    static func powerLoss() -> Int { Int(strata_faultvfs_power_loss()) }
    static var discardedBytes: Int { Int(strata_faultvfs_discarded_bytes()) }
    static func reset() { strata_faultvfs_reset() }
    /// Ends the test's use: no scope, nothing armed.
    static func end() {
        strata_faultvfs_reset()
        strata_faultvfs_scope(nil)
    }
}
