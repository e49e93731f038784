// CSystemd: the parts of libsystemd (sd-daemon) that stratad uses.
//
// sd-daemon: readiness, status, watchdog and socket activation
// (sd_notify(3), sd_watchdog_enabled(3), sd_listen_fds_with_names(3)).
// sd-bus: logind's IdleHint for the idle scheduler (sd_bus_get_property_trivial(3)).
// sd-journal: structured log entries (sd_journal_sendv(3)).
#ifndef CSYSTEMD_SHIM_H
#define CSYSTEMD_SHIM_H

// The log handler sends CODE_FILE/CODE_LINE/CODE_FUNC of the Swift call site itself: without
// this, sd_journal_sendv is a macro that would add this header's location instead.
#define SD_JOURNAL_SUPPRESS_LOCATION 1

#include <systemd/sd-daemon.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-journal.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/types.h>
#include <stdlib.h>

/// The first file descriptor passed by socket activation (SD_LISTEN_FDS_START is a macro).
static inline int CSystemd_listenFDsStart(void) { return SD_LISTEN_FDS_START; }

/// Frees a names array returned by sd_listen_fds_with_names().
static inline void CSystemd_freeNames(char **names, int count) {
    if (names == NULL) return;
    for (int i = 0; i < count; i++) free(names[i]);
    free(names);
}

/// logind's IdleHint on `bus`: 1 idle, 0 not idle, a negative errno on failure
/// (sd_bus_get_property_trivial is variadic, which Swift cannot call).
static inline int CSystemd_logindIdleHint(sd_bus *bus) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    int value = 0;
    int r = sd_bus_get_property_trivial(bus, "org.freedesktop.login1", "/org/freedesktop/login1",
                                        "org.freedesktop.login1.Manager", "IdleHint", &error, 'b', &value);
    sd_bus_error_free(&error);
    return r < 0 ? r : (value ? 1 : 0);
}

#endif
