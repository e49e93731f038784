// The fault-injecting VFS: see include/CStrataFaultVFS.h.
#include "CStrataFaultVFS.h"

#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

// MARK: - State (one mutex guards all of it)

typedef struct StrataUndo {
    int64_t offset;
    int64_t length;          // bytes of `old` (what existed there before)
    unsigned char *old;
} StrataUndo;

typedef struct StrataTracked {
    char *path;
    int fd;                  // O_RDWR on the path, for saving and restoring bytes
    int64_t syncedSize;
    StrataUndo *undo;
    int undoCount, undoCapacity;
    int64_t unsyncedBytes;
    struct StrataTracked *next;
} StrataTracked;

static pthread_mutex_t strataLock = PTHREAD_MUTEX_INITIALIZER;
static sqlite3_vfs *strataReal = NULL;
static char *strataPrefix = NULL;
static int64_t strataCounts[STRATA_FAULT_KINDS];
static int64_t strataMainOpens = 0;
static int strataArmedKind = -1;
static int64_t strataArmedNth = 0, strataArmedSeen = 0, strataFired = 0;
static int strataArmedCode = SQLITE_IOERR, strataArmedPersistent = 0;
static int strataTracking = 0, strataDead = 0;
static int64_t strataDiscarded = 0;
static StrataTracked *strataFiles = NULL;

typedef struct StrataFile {
    sqlite3_file base;
    int inScope;             // fixed at open: files out of scope pass straight through, unlocked
    char *path;
    sqlite3_file *real;      // follows this struct in the same allocation
} StrataFile;

static int strata_in_scope(const char *path) {
    return path && strataPrefix && strncmp(path, strataPrefix, strlen(strataPrefix)) == 0;
}

/// Counts an operation; the code of the fault to return, or SQLITE_OK. Called under the lock.
static int strata_fault(StrataFile *file, int kind) {
    if (!file->inScope) return SQLITE_OK;
    strataCounts[kind]++;
    if (strataArmedKind != kind) return SQLITE_OK;
    strataArmedSeen++;
    if (strataArmedSeen == strataArmedNth || (strataArmedPersistent && strataArmedSeen > strataArmedNth)) {
        strataFired++;
        return strataArmedCode;
    }
    return SQLITE_OK;
}

static StrataTracked *strata_tracked(const char *path) {
    for (StrataTracked *t = strataFiles; t; t = t->next) if (strcmp(t->path, path) == 0) return t;
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat info;
    if (fstat(fd, &info) != 0) { close(fd); return NULL; }
    StrataTracked *t = calloc(1, sizeof *t);
    if (!t) { close(fd); return NULL; }
    t->path = strdup(path);
    t->fd = fd;
    t->syncedSize = info.st_size;
    t->next = strataFiles;
    strataFiles = t;
    return t;
}

static void strata_clear_undo(StrataTracked *t) {
    for (int i = 0; i < t->undoCount; i++) free(t->undo[i].old);
    t->undoCount = 0;
    t->unsyncedBytes = 0;
}

/// Saves the bytes [offset, offset+length) as they are now, before they change.
static void strata_save(StrataTracked *t, int64_t offset, int64_t length) {
    if (length <= 0) return;
    if (t->undoCount == t->undoCapacity) {
        int capacity = t->undoCapacity ? t->undoCapacity * 2 : 64;
        StrataUndo *grown = realloc(t->undo, sizeof(StrataUndo) * (size_t)capacity);
        if (!grown) return;
        t->undo = grown;
        t->undoCapacity = capacity;
    }
    unsigned char *old = malloc((size_t)length);
    if (!old) return;
    ssize_t got = pread(t->fd, old, (size_t)length, offset);
    t->undo[t->undoCount++] = (StrataUndo){ offset, got > 0 ? got : 0, old };
}

static void strata_forget(const char *path) {
    for (StrataTracked **link = &strataFiles; *link; link = &(*link)->next) {
        StrataTracked *t = *link;
        if (strcmp(t->path, path) != 0) continue;
        *link = t->next;
        strata_clear_undo(t);
        free(t->undo);
        close(t->fd);
        free(t->path);
        free(t);
        return;
    }
}

// MARK: - File methods

#define REAL(f) (((StrataFile *)(f))->real)
#define SELF(f) ((StrataFile *)(f))

static int strata_close(sqlite3_file *f) {
    int rc = REAL(f)->pMethods ? REAL(f)->pMethods->xClose(REAL(f)) : SQLITE_OK;
    free(SELF(f)->path);
    return rc;
}

static int strata_read(sqlite3_file *f, void *buffer, int amount, sqlite3_int64 offset) {
    if (!SELF(f)->inScope) return REAL(f)->pMethods->xRead(REAL(f), buffer, amount, offset);
    pthread_mutex_lock(&strataLock);
    int rc = SELF(f)->inScope && strataDead ? SQLITE_IOERR_READ : strata_fault(SELF(f), STRATA_FAULT_READ);
    pthread_mutex_unlock(&strataLock);
    if (rc != SQLITE_OK) return rc;
    return REAL(f)->pMethods->xRead(REAL(f), buffer, amount, offset);
}

static int strata_write(sqlite3_file *f, const void *buffer, int amount, sqlite3_int64 offset) {
    if (!SELF(f)->inScope) return REAL(f)->pMethods->xWrite(REAL(f), buffer, amount, offset);
    pthread_mutex_lock(&strataLock);
    int rc = SELF(f)->inScope && strataDead ? SQLITE_IOERR_WRITE : strata_fault(SELF(f), STRATA_FAULT_WRITE);
    if (rc == SQLITE_OK && SELF(f)->inScope && strataTracking && SELF(f)->path) {
        StrataTracked *t = strata_tracked(SELF(f)->path);
        if (t) {
            strata_save(t, offset, amount);
            t->unsyncedBytes += amount;
        }
        // Written under the lock so that the saved bytes and the write stay in order.
        rc = REAL(f)->pMethods->xWrite(REAL(f), buffer, amount, offset);
        pthread_mutex_unlock(&strataLock);
        return rc;
    }
    pthread_mutex_unlock(&strataLock);
    if (rc != SQLITE_OK) return rc;
    return REAL(f)->pMethods->xWrite(REAL(f), buffer, amount, offset);
}

static int strata_truncate(sqlite3_file *f, sqlite3_int64 size) {
    if (!SELF(f)->inScope) return REAL(f)->pMethods->xTruncate(REAL(f), size);
    pthread_mutex_lock(&strataLock);
    int rc = SELF(f)->inScope && strataDead ? SQLITE_IOERR_TRUNCATE : strata_fault(SELF(f), STRATA_FAULT_TRUNCATE);
    if (rc == SQLITE_OK && SELF(f)->inScope && strataTracking && SELF(f)->path) {
        StrataTracked *t = strata_tracked(SELF(f)->path);
        struct stat info;
        if (t && fstat(t->fd, &info) == 0 && info.st_size > size) strata_save(t, size, info.st_size - size);
        rc = REAL(f)->pMethods->xTruncate(REAL(f), size);
        pthread_mutex_unlock(&strataLock);
        return rc;
    }
    pthread_mutex_unlock(&strataLock);
    if (rc != SQLITE_OK) return rc;
    return REAL(f)->pMethods->xTruncate(REAL(f), size);
}

static int strata_sync(sqlite3_file *f, int flags) {
    if (!SELF(f)->inScope) return REAL(f)->pMethods->xSync(REAL(f), flags);
    pthread_mutex_lock(&strataLock);
    int rc = SELF(f)->inScope && strataDead ? SQLITE_IOERR_FSYNC : strata_fault(SELF(f), STRATA_FAULT_SYNC);
    pthread_mutex_unlock(&strataLock);
    if (rc != SQLITE_OK) return rc;
    rc = REAL(f)->pMethods->xSync(REAL(f), flags);
    if (rc == SQLITE_OK && SELF(f)->inScope && SELF(f)->path) {
        pthread_mutex_lock(&strataLock);
        for (StrataTracked *t = strataFiles; t; t = t->next) {
            if (strcmp(t->path, SELF(f)->path) != 0) continue;
            struct stat info;
            if (fstat(t->fd, &info) == 0) t->syncedSize = info.st_size;
            strata_clear_undo(t);
        }
        pthread_mutex_unlock(&strataLock);
    }
    return rc;
}

static int strata_file_size(sqlite3_file *f, sqlite3_int64 *size) { return REAL(f)->pMethods->xFileSize(REAL(f), size); }

static int strata_lock(sqlite3_file *f, int level) {
    if (!SELF(f)->inScope) return REAL(f)->pMethods->xLock(REAL(f), level);
    pthread_mutex_lock(&strataLock);
    int rc = strata_fault(SELF(f), STRATA_FAULT_LOCK);
    pthread_mutex_unlock(&strataLock);
    if (rc != SQLITE_OK) return rc;
    return REAL(f)->pMethods->xLock(REAL(f), level);
}

static int strata_unlock(sqlite3_file *f, int level) { return REAL(f)->pMethods->xUnlock(REAL(f), level); }
static int strata_check_reserved(sqlite3_file *f, int *out) { return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out); }
static int strata_file_control(sqlite3_file *f, int op, void *arg) { return REAL(f)->pMethods->xFileControl(REAL(f), op, arg); }
static int strata_sector_size(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int strata_device(sqlite3_file *f) { return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f)); }
static int strata_shm_map(sqlite3_file *f, int page, int size, int extend, void volatile **out) {
    return REAL(f)->pMethods->xShmMap(REAL(f), page, size, extend, out);
}
static int strata_shm_lock(sqlite3_file *f, int offset, int n, int flags) {
    if (SELF(f)->inScope && (flags & SQLITE_SHM_LOCK)) {
        pthread_mutex_lock(&strataLock);
        int rc = strata_fault(SELF(f), STRATA_FAULT_LOCK);
        pthread_mutex_unlock(&strataLock);
        if (rc != SQLITE_OK) return rc;
    }
    return REAL(f)->pMethods->xShmLock(REAL(f), offset, n, flags);
}
static void strata_shm_barrier(sqlite3_file *f) { REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int strata_shm_unmap(sqlite3_file *f, int delete) { return REAL(f)->pMethods->xShmUnmap(REAL(f), delete); }
static int strata_fetch(sqlite3_file *f, sqlite3_int64 offset, int amount, void **out) {
    return REAL(f)->pMethods->xFetch(REAL(f), offset, amount, out);
}
static int strata_unfetch(sqlite3_file *f, sqlite3_int64 offset, void *p) { return REAL(f)->pMethods->xUnfetch(REAL(f), offset, p); }

static const sqlite3_io_methods strataMethods = {
    3, strata_close, strata_read, strata_write, strata_truncate, strata_sync, strata_file_size, strata_lock, strata_unlock,
    strata_check_reserved, strata_file_control, strata_sector_size, strata_device, strata_shm_map, strata_shm_lock,
    strata_shm_barrier, strata_shm_unmap, strata_fetch, strata_unfetch,
};

// MARK: - VFS methods

static int strata_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f, int flags, int *outFlags) {
    StrataFile *file = SELF(f);
    memset(file, 0, sizeof *file);
    file->real = (sqlite3_file *)(file + 1);
    int rc = strataReal->xOpen(strataReal, name, file->real, flags, outFlags);
    if (rc != SQLITE_OK) return rc;
    pthread_mutex_lock(&strataLock);
    file->inScope = strata_in_scope(name);
    if (file->inScope && (flags & SQLITE_OPEN_MAIN_DB)) strataMainOpens++;
    pthread_mutex_unlock(&strataLock);
    file->path = name ? strdup(name) : NULL;
    // The real file's methods decide the version: a wrapper of a file without shm methods
    // must not claim them.
    f->pMethods = &strataMethods;
    return SQLITE_OK;
}

static int strata_delete(sqlite3_vfs *vfs, const char *name, int syncDir) {
    pthread_mutex_lock(&strataLock);
    int inScope = strata_in_scope(name);
    if (inScope && strataDead) { pthread_mutex_unlock(&strataLock); return SQLITE_IOERR_DELETE; }
    if (inScope) strata_forget(name);
    pthread_mutex_unlock(&strataLock);
    return strataReal->xDelete(strataReal, name, syncDir);
}

static int strata_access(sqlite3_vfs *v, const char *n, int fl, int *out) { return strataReal->xAccess(strataReal, n, fl, out); }
static int strata_full_path(sqlite3_vfs *v, const char *n, int size, char *out) { return strataReal->xFullPathname(strataReal, n, size, out); }
static void *strata_dl_open(sqlite3_vfs *v, const char *n) { return strataReal->xDlOpen(strataReal, n); }
static void strata_dl_error(sqlite3_vfs *v, int n, char *out) { strataReal->xDlError(strataReal, n, out); }
static void (*strata_dl_sym(sqlite3_vfs *v, void *h, const char *s))(void) { return strataReal->xDlSym(strataReal, h, s); }
static void strata_dl_close(sqlite3_vfs *v, void *h) { strataReal->xDlClose(strataReal, h); }
static int strata_randomness(sqlite3_vfs *v, int n, char *out) { return strataReal->xRandomness(strataReal, n, out); }
static int strata_sleep(sqlite3_vfs *v, int us) { return strataReal->xSleep(strataReal, us); }
static int strata_current_time(sqlite3_vfs *v, double *out) { return strataReal->xCurrentTime(strataReal, out); }
static int strata_last_error(sqlite3_vfs *v, int n, char *out) { return strataReal->xGetLastError(strataReal, n, out); }
static int strata_current_time64(sqlite3_vfs *v, sqlite3_int64 *out) { return strataReal->xCurrentTimeInt64(strataReal, out); }

static sqlite3_vfs strataVFS = {
    2, 0, 0, NULL, "strata-fault", NULL, strata_open, strata_delete, strata_access, strata_full_path, strata_dl_open,
    strata_dl_error, strata_dl_sym, strata_dl_close, strata_randomness, strata_sleep, strata_current_time,
    strata_last_error, strata_current_time64, NULL, NULL, NULL,
};

// MARK: - Control

int strata_faultvfs_register(void) {
    pthread_mutex_lock(&strataLock);
    if (strataReal) { pthread_mutex_unlock(&strataLock); return SQLITE_OK; }
    sqlite3_vfs *real = sqlite3_vfs_find(NULL);
    if (!real) { pthread_mutex_unlock(&strataLock); return SQLITE_ERROR; }
    strataReal = real;
    strataVFS.szOsFile = (int)sizeof(StrataFile) + real->szOsFile;
    strataVFS.mxPathname = real->mxPathname;
    pthread_mutex_unlock(&strataLock);
    return sqlite3_vfs_register(&strataVFS, 1);
}

void strata_faultvfs_scope(const char *prefix) {
    pthread_mutex_lock(&strataLock);
    free(strataPrefix);
    strataPrefix = prefix ? strdup(prefix) : NULL;
    pthread_mutex_unlock(&strataLock);
}

void strata_faultvfs_arm(int kind, int64_t nth, int code, int persistent) {
    pthread_mutex_lock(&strataLock);
    strataArmedKind = kind;
    strataArmedNth = nth;
    strataArmedSeen = 0;
    strataArmedCode = code;
    strataArmedPersistent = persistent;
    strataFired = 0;
    pthread_mutex_unlock(&strataLock);
}

void strata_faultvfs_disarm(void) {
    pthread_mutex_lock(&strataLock);
    strataArmedKind = -1;
    pthread_mutex_unlock(&strataLock);
}

int64_t strata_faultvfs_fired(void) {
    pthread_mutex_lock(&strataLock);
    int64_t fired = strataFired;
    pthread_mutex_unlock(&strataLock);
    return fired;
}

int64_t strata_faultvfs_count(int kind) {
    if (kind < 0 || kind >= STRATA_FAULT_KINDS) return 0;
    pthread_mutex_lock(&strataLock);
    int64_t count = strataCounts[kind];
    pthread_mutex_unlock(&strataLock);
    return count;
}

int64_t strata_faultvfs_main_db_opens(void) {
    pthread_mutex_lock(&strataLock);
    int64_t count = strataMainOpens;
    pthread_mutex_unlock(&strataLock);
    return count;
}

void strata_faultvfs_track(int on) {
    pthread_mutex_lock(&strataLock);
    strataTracking = on;
    pthread_mutex_unlock(&strataLock);
}

int strata_faultvfs_power_loss(void) {
    pthread_mutex_lock(&strataLock);
    int reverted = 0;
    strataDiscarded = 0;
    for (StrataTracked *t = strataFiles; t; t = t->next) {
        for (int i = t->undoCount - 1; i >= 0; i--) {
            StrataUndo *u = &t->undo[i];
            if (u->length > 0 && pwrite(t->fd, u->old, (size_t)u->length, u->offset) != u->length) continue;
        }
        if (ftruncate(t->fd, t->syncedSize) != 0) continue;
        strataDiscarded += t->unsyncedBytes;
        if (t->undoCount > 0) reverted++;
        strata_clear_undo(t);
    }
    strataDead = 1;
    pthread_mutex_unlock(&strataLock);
    return reverted;
}

int64_t strata_faultvfs_discarded_bytes(void) {
    pthread_mutex_lock(&strataLock);
    int64_t bytes = strataDiscarded;
    pthread_mutex_unlock(&strataLock);
    return bytes;
}

void strata_faultvfs_reset(void) {
    pthread_mutex_lock(&strataLock);
    strataArmedKind = -1;
    strataTracking = 0;
    strataDead = 0;
    strataFired = 0;
    memset(strataCounts, 0, sizeof strataCounts);
    strataMainOpens = 0;
    while (strataFiles) {
        StrataTracked *t = strataFiles;
        strataFiles = t->next;
        strata_clear_undo(t);
        free(t->undo);
        close(t->fd);
        free(t->path);
        free(t);
    }
    pthread_mutex_unlock(&strataLock);
}
