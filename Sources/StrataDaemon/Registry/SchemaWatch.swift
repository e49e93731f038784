import GRDB
import Logging
import Strata
import Synchronization

/// Notices when another process changed a hosted store's schema (an operator's `ALTER TABLE`
/// in the `sqlite3` shell, a script, `stratactl migrate` on the live file) and checks the
/// schema against the model again before the next call uses it.
///
/// Every call first reads `PRAGMA schema_version`: calls through an `ObjectContext` (fetch,
/// count, insert, update, delete, batch) at the start of each of the context's transactions,
/// through the store's `TransactionGate` (one cached statement, in the snapshot the call then
/// uses); the others in a read of their own. Only when it moved does the watch run
/// ``PersistentStore/checkSchema()``:
///
/// - the model still matches (an index added, a column added): the call goes on; the watch
///   logs a warning naming what changed, or — when everything is the daemon's own deferred
///   work (shadow tables, swaps, drops) — a debug line;
/// - it no longer matches (a column dropped or renamed, a table gone, a uniqueness index
///   dropped, the store migrated to another version): the store turns `failed` with a reason
///   that says what changed and how to recover, and every call gets `StoreUnavailable` with
///   that reason instead of an SQL error.
final class SchemaWatch: Sendable {
    enum Verdict: Sendable, Equatable {
        case usable
        /// Why the store can no longer serve its model.
        case broken(String)
    }

    private let storeName: String
    private let logger: Logger
    /// The last schema version checked and found usable.
    private let checkedVersion: Mutex<Int?>

    init(storeName: String, logger: Logger, checkedVersion: Int?) {
        self.storeName = storeName
        self.logger = logger
        self.checkedVersion = Mutex(checkedVersion)
    }

    /// Checks `store` if its schema version moved since the last check (a read transaction
    /// of its own; the deferred-work runner and the calls that do not go through an
    /// `ObjectContext` use this).
    func verify(_ store: PersistentStore) -> Verdict {
        verify(store, readVersion: { try store.schemaVersion() }, check: { try store.checkSchema() })
    }

    /// Checks `store` inside the transaction `db` is in (the store's ``TransactionGate``): the
    /// version is read through the connection's statement cache, and a schema that moved is
    /// checked in the same snapshot the call then reads or writes.
    func verify(_ store: PersistentStore, in db: Database) -> Verdict {
        verify(store, readVersion: { try PersistentStore.schemaVersion(in: db) }, check: { try store.checkSchema(in: db) })
    }

    private func verify(_ store: PersistentStore, readVersion: () throws -> Int, check runCheck: () throws -> SchemaCheck) -> Verdict {
        let version: Int
        do {
            version = try readVersion()
        } catch {
            // Not a schema change (a locked or unreadable file): the call reports its own error.
            return .usable
        }
        let previous = checkedVersion.withLock { $0 }
        if previous == version { return .usable }
        let check: SchemaCheck
        do {
            check = try runCheck()
        } catch {
            return .usable
        }
        guard check.isUsable else {
            let reason = Self.reason(store: storeName, path: store.url.path, model: store.model.version, check: check)
            logger.error("the store's schema was changed by another process and no longer matches its model; the store is failed",
                         metadata: ["strata.reason": "\(reason)", "strata.schema_version": "\(check.schemaVersion)",
                                    "strata.previous_schema_version": "\(previous.map(String.init) ?? "?")"])
            return .broken(reason)
        }
        checkedVersion.withLock { $0 = check.schemaVersion }
        if check.unexpected.isEmpty {
            logger.debug("schema changed (deferred work); it still matches the model", metadata: ["strata.schema_version": "\(check.schemaVersion)"])
        } else {
            logger.warning("the store's schema was changed outside stratad; it still matches model '\(store.model.version)', serving on",
                           metadata: ["strata.changes": "\(check.unexpected.joined(separator: "; "))",
                                      "strata.schema_version": "\(check.schemaVersion)"])
        }
        return .usable
    }

    /// What changed and what to do, for `stratactl stores` and every refused call.
    static func reason(store: String, path: String, model: String, check: SchemaCheck) -> String {
        let migrated = check.storedVersion != model && check.storedVersion != "?"
        let fix = migrated
            ? "set `version: \(check.storedVersion)` for store '\(store)' in the configuration (with a model directory that has it) and run `stratactl reload`"
            : "undo the change (or restore a backup) and run `stratactl reload`, or migrate the store to a model version that has this schema (`stratactl migrate`) and configure that version"
        return "the schema of \(path) was changed outside stratad and no longer matches model '\(model)': \(check.problems.joined(separator: "; ")); \(fix)"
    }
}
