import GRDB
import Synchronization

/// A check a host runs at the start of every transaction an ``ObjectContext`` opens on a
/// store, inside that transaction, before the context reads or writes anything.
///
/// The daemon installs one per hosted store to notice schema changes made by other processes
/// (its `SchemaWatch`): the check reads `PRAGMA schema_version` in the very snapshot the
/// call then reads or writes, so what it verified is what the call sees, and it costs one
/// cached statement instead of a transaction of its own. A check that throws ends the
/// transaction (rolled back) and the context's fetch, count or save throws that error
/// unchanged.
///
/// Contexts bound to a migration's connection do not run it (the migration owns the schema).
package final class TransactionGate: Sendable {
    package typealias Check = @Sendable (Database) throws -> Void

    /// The installed check, in a class: a closure kept in a `Mutex` directly and read back
    /// with `withLock { $0 }` gains a reabstraction thunk on every read (Swift 6.3), so each
    /// call would run through one more layer than the last.
    private final class Installed: Sendable {
        let check: Check
        init(_ check: @escaping Check) { self.check = check }
    }

    private let installed = Mutex<Installed?>(nil)

    package init() {}

    /// Installs `check` (replacing any other); nil removes it.
    package func install(_ check: Check?) {
        let box = check.map(Installed.init)
        installed.withLock { $0 = box }
    }

    /// Runs the installed check, if any, on `db` (inside the caller's transaction).
    func run(_ db: Database) throws {
        guard let installed = installed.withLock({ $0 }) else { return }
        try installed.check(db)
    }
}
