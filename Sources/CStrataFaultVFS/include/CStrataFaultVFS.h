// A fault-injecting SQLite VFS for Strata's tests (docs/Security.md, "Fault injection").
//
// strata_faultvfs_register() installs "strata-fault" as SQLite's default VFS, wrapping the
// previous default: every connection the process opens goes through it. Only files whose path
// starts with the prefix given to strata_faultvfs_scope() are touched; every other file (other
// tests running in the same process) passes straight through.
//
// Faults: strata_faultvfs_arm(kind, n, code, persistent) makes the n-th operation of `kind`
// (counted from the arm) on a file in scope fail with `code` (SQLITE_IOERR_*, SQLITE_FULL,
// SQLITE_BUSY for locks); persistent faults keep failing every later operation of that kind
// until strata_faultvfs_disarm().
//
// Power loss: while tracking (strata_faultvfs_track(1)), every write and truncate of a file in
// scope records what it overwrote, per path, until that file's next sync.
// strata_faultvfs_power_loss() puts every tracked file back as it was at its last sync (or when
// first opened), then fails all further reads, writes, syncs and truncates in scope until
// strata_faultvfs_reset(): the test closes its connections (as the dying process would not
// write again) and reopens with the VFS reset.
#ifndef CSTRATAFAULTVFS_H
#define CSTRATAFAULTVFS_H

#include <stdint.h>

/// Kinds of operation that can fail.
enum {
    STRATA_FAULT_READ = 0,
    STRATA_FAULT_WRITE = 1,
    STRATA_FAULT_SYNC = 2,
    STRATA_FAULT_LOCK = 3,
    STRATA_FAULT_TRUNCATE = 4,
    STRATA_FAULT_KINDS = 5
};

/// Registers the VFS as the default (idempotent). 0 (SQLITE_OK) on success.
int strata_faultvfs_register(void);
/// Limits faults and tracking to files whose path starts with `prefix` (copied); NULL: none.
void strata_faultvfs_scope(const char *prefix);
/// Fails the `nth` (1-based) operation of `kind` in scope from now with `code`.
void strata_faultvfs_arm(int kind, int64_t nth, int code, int persistent);
/// Stops failing; counters keep counting.
void strata_faultvfs_disarm(void);
/// How many faults fired since the last arm.
int64_t strata_faultvfs_fired(void);
/// Operations of `kind` in scope since the last reset (to enumerate fault points).
int64_t strata_faultvfs_count(int kind);
/// Opens of a main database file in scope since the last reset: one per SQLite connection.
int64_t strata_faultvfs_main_db_opens(void);
/// Starts (1) or stops (0) recording unsynced writes for power loss.
void strata_faultvfs_track(int on);
/// Reverts every tracked file to its last synced state and fails all later I/O in scope.
/// Returns how many files were reverted.
int strata_faultvfs_power_loss(void);
/// Bytes of unsynced writes discarded by the last power loss.
int64_t strata_faultvfs_discarded_bytes(void);
/// Disarms, stops tracking, forgets tracked files, clears counters and the power-loss state.
void strata_faultvfs_reset(void);

#endif
