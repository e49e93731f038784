#!/bin/bash
# Runs inside with-systemd: installs the units from systemd/ (paths adapted) and the
# strata user and group from systemd/strata.sysusers, then checks socket ownership and
# modes, socket activation, readiness, status, a non-root client of the data socket,
# allow_any_peer, strata-maintenance.service, reload, the watchdog restart and the
# `systemd-analyze security` exposure. Prints "CHECK ok: …", then "CHECK all ok".
set -u
root=$1; bin=$2
fail() { echo "CHECK failed after ${SECONDS}s: $*"; journalctl -u stratad -u strata-maintenance --no-pager | tail -40; exit 1; }
work=$root/.build/systemd-test; rm -rf "$work"; mkdir -p "$work"

# This namespace's own /var/lib (the host's stays untouched by StateDirectory=).
mount -t tmpfs -o mode=0755 tmpfs /var/lib || fail "cannot mount a private /var/lib"

# Users: the shipped sysusers file applied to a private copy of the user database,
# bind-mounted over /etc/passwd and /etc/group in this namespace only; plus a client user
# in the strata group.
mkdir -p "$work/root/etc"
cp /etc/passwd /etc/group "$work/root/etc/"
systemd-sysusers --root="$work/root" "$root/systemd/strata.sysusers" || fail "systemd-sysusers refused strata.sysusers"
grep -q '^strata:' "$work/root/etc/passwd" || fail "strata.sysusers made no strata user"
echo "strata-client:x:4300:4300:Strata test client:/nonexistent:/usr/sbin/nologin" >> "$work/root/etc/passwd"
echo "strata-client:x:4300:" >> "$work/root/etc/group"
sed -i -e 's/^\(strata:x:[0-9]*:\)$/\1strata-client/' "$work/root/etc/group"
mount --bind "$work/root/etc/passwd" /etc/passwd && mount --bind "$work/root/etc/group" /etc/group || fail "cannot bind-mount the user database"
[ "$(id -nG strata-client)" = "strata-client strata" ] || fail "strata-client groups: $(id -nG strata-client)"
echo "CHECK ok: strata.sysusers creates the strata user and group"

write_config() {  # $1: extra keys of sockets.data
  cat > "$work/stratad.yaml" <<YAML
stores:
  - name: aircraft
    path: /var/lib/strata/aircraft.sqlite
    model: $root/config/models/Aircraft
sockets:
  admin: {path: /run/strata/admin.sock, users: [root]}
  data: {path: /run/strata/data.sock, users: [root], $1}
scheduler:
  idle_after: 1s
YAML
}
write_config "groups: [strata]"
chmod -R a+rX "$work" "$root/config"
for unit in stratad.service stratad.socket stratad-data.socket strata-maintenance.service; do
  sed -e "s#/usr/local/bin/stratad --config /etc/strata/stratad.yaml#$bin/stratad --config $work/stratad.yaml#" \
      -e "s#/usr/local/bin/stratactl#$bin/stratactl#" \
      -e "s#^WatchdogSec=.*#WatchdogSec=3s#" -e "s#^ProtectHome=.*#ProtectHome=no#" -e "s#^RestartSec=.*#RestartSec=1s#" -e "s#^TimeoutAbortSec=.*#TimeoutAbortSec=2s#" \
      "$root/systemd/$unit" > /run/systemd/system/$unit
done
# The maintenance window's pressure conditions would skip the run on a busy test machine.
mkdir -p /run/systemd/system/strata-maintenance.service.d
printf '[Unit]\nConditionCPUPressure=\nConditionIOPressure=\n' > /run/systemd/system/strata-maintenance.service.d/test.conf
systemctl daemon-reload
verify=$(systemd-analyze verify /run/systemd/system/stratad.service /run/systemd/system/strata-maintenance.service 2>&1 | grep -v -e "Failed to open" -e "^$")
[ -z "$verify" ] || fail "systemd-analyze verify: $verify"

systemctl start stratad.socket stratad-data.socket || fail "sockets did not start"
[ "$(systemctl is-active stratad.service)" = inactive ] || fail "stratad started before a connection"
[ -d /run/strata ] && [ ! -L /run/strata ] || fail "/run/strata is not a plain directory: $(ls -ld /run/strata)"
[ "$(stat -c '%a %U:%G' /run/strata)" = "755 root:root" ] || fail "/run/strata: $(stat -c '%a %U:%G' /run/strata)"
[ "$(stat -c '%a %U:%G' /run/strata/admin.sock)" = "660 root:strata" ] || fail "admin.sock: $(stat -c '%a %U:%G' /run/strata/admin.sock)"
[ "$(stat -c '%a %U:%G' /run/strata/data.sock)" = "660 root:strata" ] || fail "data.sock: $(stat -c '%a %U:%G' /run/strata/data.sock)"
echo "CHECK ok: sockets: /run/strata 0755, admin.sock and data.sock 0660 root:strata"

# Socket activation: the first connection starts the daemon.
timeout 20 "$bin/stratactl" status --socket /run/strata/admin.sock >/dev/null || fail "socket activation"
echo "CHECK ok: socket activation"
[ "$(ps -o user= -p "$(systemctl show -p MainPID --value stratad.service)")" = strata ] || fail "stratad does not run as strata"
[ -d /run/strata ] && [ ! -L /run/strata ] || fail "/run/strata moved when the daemon started: $(ls -ld /run/strata)"
echo "CHECK ok: stratad runs as strata and leaves /run/strata alone"
systemctl stop stratad.service
[ -S /run/strata/admin.sock ] && [ -S /run/strata/data.sock ] || fail "the sockets went away with the daemon"
timeout 30 systemctl start stratad.service || fail "start"
[ "$(systemctl is-active stratad.service)" = active ] || fail "not active after start"
systemctl show -p StatusText stratad.service | grep -q "1 store ready" || fail "status: $(systemctl show -p StatusText stratad.service)"
echo "CHECK ok: start returns after READY with our status"

# Data socket clients: a Count as another user, by its own credentials.
count_as() {  # setpriv options...
  setpriv "$@" /usr/bin/python3 -c '
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect("/run/strata/data.sock")
except OSError as error:
    print("cannot connect:", error.strerror); sys.exit()
s.settimeout(10)
s.sendall(b"{\"method\":\"io.strata.Store.Count\",\"parameters\":{\"store\":\"aircraft\",\"entity\":\"Aircraft\"}}\0")
reply = json.loads(s.recv(65536).rstrip(b"\0"))
print(reply.get("error", "count %s" % reply["parameters"].get("count")))'
}
out=$(count_as --reuid=strata-client --regid=strata-client --init-groups)
[ "$out" = "count 0" ] || fail "strata-client (group strata) on the data socket: $out"
out=$(count_as --reuid=nobody --regid=nogroup --clear-groups)
[ "$out" = "cannot connect: Permission denied" ] || fail "nobody on the data socket (0660): $out"
# Past the file mode (a drop-in with SocketMode=0666), the daemon's credential check refuses.
mkdir -p /run/systemd/system/stratad-data.socket.d
printf '[Socket]\nSocketMode=0666\n' > /run/systemd/system/stratad-data.socket.d/any-user.conf
systemctl daemon-reload
systemctl stop stratad.service stratad-data.socket && systemctl start stratad-data.socket || fail "restart the data socket"
[ "$(stat -c '%a' /run/strata/data.sock)" = 666 ] || fail "data.sock with the drop-in: $(stat -c '%a' /run/strata/data.sock)"
out=$(count_as --reuid=nobody --regid=nogroup --clear-groups)
[ "$out" = "io.strata.Varlink.NotAuthorized" ] || fail "nobody on the data socket: $out"
echo "CHECK ok: a non-root member of the strata group uses the data socket; others cannot open it (0660), or get NotAuthorized (0666)"
write_config "allow_any_peer: true"
systemctl restart stratad.service || fail "restart"
out=$(count_as --reuid=nobody --regid=nogroup --clear-groups)
[ "$out" = "count 0" ] || fail "nobody on the data socket with allow_any_peer: $out"
echo "CHECK ok: allow_any_peer lets any local user use the data socket"

# The maintenance window: runs as strata, reaches the admin socket, exits 0.
timeout 60 systemctl start strata-maintenance.service
result=$(systemctl show -p Result --value strata-maintenance.service); status=$(systemctl show -p ExecMainStatus --value strata-maintenance.service)
# Its output reaches the journal asynchronously (journald reads the stream after systemctl
# returns): re-read for up to 20 s before judging it.
journalctl --sync 2>/dev/null
for _ in $(seq 1 100); do
  log=$(journalctl -u strata-maintenance --no-pager -o cat)
  echo "$log" | grep -q -e "aircraft: 0 task(s) finished" -e "^skipped:" && break
  sleep 0.2
done
[ "$result" = success ] && [ "$status" = 0 ] || fail "strata-maintenance.service: Result=$result ExecMainStatus=$status: $log"
echo "$log" | grep -q -e "aircraft: 0 task(s) finished" -e "^skipped:" || fail "strata-maintenance.service did not talk to the daemon: $log"
echo "CHECK ok: strata-maintenance.service succeeds ($(echo "$log" | grep -e "task(s)" -e "^skipped:" | head -1))"

timeout 30 systemctl reload stratad.service || fail "reload"
# ExecReload sends SIGHUP and returns; the unit is "reloading" until the daemon sends READY=1.
for _ in $(seq 1 300); do [ "$(systemctl is-active stratad.service)" = active ] && break; sleep 0.1; done
[ "$(systemctl is-active stratad.service)" = active ] || fail "not active after reload"
echo "CHECK ok: reload"
pid=$(systemctl show -p MainPID --value stratad.service)
kill -STOP "$pid"
# WatchdogSec=3s, then SIGABRT, TimeoutAbortSec=2s, RestartSec=1s and a start: give it 40 s.
for _ in $(seq 1 200); do
  new=$(systemctl show -p MainPID --value stratad.service)
  [ "$new" != "$pid" ] && [ "$new" != 0 ] && [ "$(systemctl is-active stratad.service)" = active ] && break
  sleep 0.2
done
[ "$new" != "$pid" ] || fail "the watchdog did not restart the frozen daemon"
echo "CHECK ok: watchdog restarted the frozen daemon"

# The shipped unit's exposure (the test's adaptations do not change the score's inputs
# beyond ProtectHome=, so measure the original).
cp "$root/systemd/stratad.service" /run/systemd/system/stratad-shipped.service
systemctl daemon-reload
exposure=$(systemd-analyze security stratad-shipped.service | sed -n 's/.*Overall exposure level for stratad-shipped.service: \([0-9.]*\).*/\1/p')
awk -v e="$exposure" 'BEGIN { exit !(e != "" && e <= 1.0) }' || fail "systemd-analyze security: exposure '$exposure' > 1.0"
echo "CHECK ok: systemd-analyze security stratad.service: $exposure"
systemctl stop stratad.service stratad.socket stratad-data.socket
echo "CHECK all ok"
