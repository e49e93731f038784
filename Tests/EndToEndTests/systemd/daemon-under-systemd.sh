#!/bin/bash
# Runs inside with-systemd: installs the units from systemd/ (paths adapted), then checks
# readiness, status, reload, watchdog restart and socket activation. Prints "CHECK ok: …".
set -u
root=$1; bin=$2
fail() { echo "CHECK failed: $*"; journalctl -u stratad --no-pager | tail -30; exit 1; }
work=$root/.build/systemd-test; rm -rf "$work"; mkdir -p "$work"
cat > "$work/stratad.yaml" <<YAML
stores:
  - name: aircraft
    path: /var/lib/strata/aircraft.sqlite
    model: $root/config/models/Aircraft
sockets:
  admin: {path: /run/strata/admin.sock, users: [root]}
  data: {path: /run/strata/data.sock, users: [root]}
YAML
chmod -R a+rX "$work" "$root/config"
for unit in stratad.service stratad.socket stratad-data.socket; do
  sed -e "s#/usr/local/bin/stratad --config /etc/strata/stratad.yaml#$bin/stratad --config $work/stratad.yaml#" \
      -e "s#^WatchdogSec=.*#WatchdogSec=3s#" -e "s#^ProtectHome=.*#ProtectHome=no#" -e "s#^RestartSec=.*#RestartSec=1s#" -e "s#^TimeoutAbortSec=.*#TimeoutAbortSec=2s#" \
      "$root/systemd/$unit" > /run/systemd/system/$unit
done
systemctl daemon-reload
systemctl start stratad.socket stratad-data.socket || fail "sockets did not start"
[ "$(systemctl is-active stratad.service)" = inactive ] || fail "stratad started before a connection"
# Socket activation: the first connection starts the daemon.
timeout 20 "$bin/stratactl" status --socket /run/strata/admin.sock >/dev/null || fail "socket activation"
echo "CHECK ok: socket activation"
systemctl stop stratad.service
timeout 30 systemctl start stratad.service || fail "start"
[ "$(systemctl is-active stratad.service)" = active ] || fail "not active after start"
systemctl show -p StatusText stratad.service | grep -q "1 store ready" || fail "status: $(systemctl show -p StatusText stratad.service)"
echo "CHECK ok: start returns after READY with our status"
timeout 30 systemctl reload stratad.service || fail "reload"
# ExecReload sends SIGHUP and returns; the unit is "reloading" until the daemon sends READY=1.
for _ in $(seq 1 100); do [ "$(systemctl is-active stratad.service)" = active ] && break; sleep 0.1; done
[ "$(systemctl is-active stratad.service)" = active ] || fail "not active after reload"
echo "CHECK ok: reload"
pid=$(systemctl show -p MainPID --value stratad.service)
kill -STOP "$pid"
for _ in $(seq 1 100); do
  new=$(systemctl show -p MainPID --value stratad.service)
  [ "$new" != "$pid" ] && [ "$new" != 0 ] && [ "$(systemctl is-active stratad.service)" = active ] && break
  sleep 0.2
done
[ "$new" != "$pid" ] || fail "the watchdog did not restart the frozen daemon"
echo "CHECK ok: watchdog restarted the frozen daemon"
systemctl stop stratad.service stratad.socket stratad-data.socket
echo "CHECK all ok"
