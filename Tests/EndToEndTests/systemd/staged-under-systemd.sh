#!/bin/bash
# Runs inside with-systemd: the shipped stratad.service (paths adapted, TimeoutStartSec=2s)
# opens a store at Aircraft 2 whose stage to Aircraft 3 (stores[].stages) runs longer than
# the start-up timeout: another process holds the store's write lock for 5 s, so the hop waits
# (busy_timeout) after it began. Checks that systemd's StatusText names the hop while it runs, that the
# start survives the timeout (EXTEND_TIMEOUT_USEC), and that the store serves at Aircraft 3
# with the flight data moved and the cleanup pending.
# Prints "CHECK ok: …", then "CHECK all ok".
set -u
root=$1; bin=$2
fail() { echo "CHECK failed after ${SECONDS}s: $*"; systemctl status stratad --no-pager; exit 1; }
work=$root/.build/staged-test; rm -rf "$work"; mkdir -p "$work"

# This namespace's own /var/lib (StateDirectory=), leaving the host's alone, and the strata
# user and group from strata.sysusers in a private copy of the user database.
mount -t tmpfs -o mode=0755 tmpfs /var/lib || fail "cannot mount a private /var/lib"
mkdir -p "$work/root/etc"
cp /etc/passwd /etc/group "$work/root/etc/"
systemd-sysusers --root="$work/root" "$root/systemd/strata.sysusers" || fail "systemd-sysusers refused strata.sysusers"
mount --bind "$work/root/etc/passwd" /etc/passwd && mount --bind "$work/root/etc/group" /etc/group || fail "cannot bind-mount the user database"

# A store at Aircraft 2: three aircraft, two with flight data (base64).
mkdir -p /var/lib/strata
printf '%s\n' '{"tailNumber":"N1","flightData":"AAECAw=="}' '{"tailNumber":"N2"}' '{"tailNumber":"N3","flightData":"BAUG"}' \
  | "$bin/stratactl" import /var/lib/strata/fleet.sqlite --model "$root/config/models/Aircraft" --version "Aircraft 2" --entity Aircraft - >/dev/null \
  || fail "cannot seed the store"
chown -R strata:strata /var/lib/strata && chmod 0750 /var/lib/strata

# The example's stage (Examples/StagedMigration/Aircraft/stages.yaml).
cat > "$work/stages.yaml" <<'YAML'
stages:
  - label: move flightData into FlightData
    from: Aircraft 2
    to: Aircraft 3
    willMigrate: |
      UPDATE "Aircraft" SET "flightData" = NULL, "_version" = "_version" + 1
      WHERE "flightData" IS NOT NULL AND length("flightData") = 0;
    didMigrate: |
      INSERT INTO "FlightData"("_pk", "_version", "data", "aircraft_id")
      SELECT (SELECT coalesce(max("_pk"), 0) FROM "FlightData") + row_number() OVER (ORDER BY "_pk"), 1, "flightData", "_pk"
      FROM "Aircraft" WHERE "flightData" IS NOT NULL;
YAML
cat > "$work/stratad.yaml" <<YAML
stores:
  - name: fleet
    path: /var/lib/strata/fleet.sqlite
    model: $root/config/models/Aircraft
    version: Aircraft 3
    stages: $work/stages.yaml
    busy_timeout: 60s
sockets:
  admin: {path: /run/strata/admin.sock, users: [root]}
  data: {path: /run/strata/data.sock, users: [root]}
scheduler:
  enabled: false
YAML
chmod -R a+rX "$work" "$root/config"
for unit in stratad.service stratad.socket stratad-data.socket; do
  sed -e "s#/usr/local/bin/stratad --config /etc/strata/stratad.yaml#$bin/stratad --config $work/stratad.yaml#" \
      -e "s#^ProtectHome=.*#ProtectHome=no#" -e "s#^TimeoutStartSec=.*#TimeoutStartSec=2s#" -e "s#^Restart=.*#Restart=no#" \
      "$root/systemd/$unit" > /run/systemd/system/$unit
done
grep -q '^TimeoutStartSec=2s' /run/systemd/system/stratad.service || fail "the unit has no TimeoutStartSec= to shorten"
systemctl daemon-reload

# Another process (as strata: the files it creates must stay the daemon's) holds the write
# lock for 5 s; the daemon's hop begins, then waits for it.
# The holder waits for its lock (.timeout): the probe below may hold it for a moment when the
# holder asks, and a holder that gave up would leave nothing for the hop to wait for.
(echo ".timeout 10000"; echo "BEGIN IMMEDIATE;"; sleep 5; echo "COMMIT;") | runuser -u strata -- sqlite3 /var/lib/strata/fleet.sqlite &
held=""
for _ in $(seq 1 100); do
  runuser -u strata -- sqlite3 /var/lib/strata/fleet.sqlite "BEGIN IMMEDIATE; COMMIT;" >/dev/null 2>&1 || { held=1; break; }
  sleep 0.05
done
[ -n "$held" ] || fail "the helper sqlite3 never held the store's write lock"
# Start without waiting; watch the status line while the daemon migrates.
systemctl start --no-block stratad.service
seen=""
for _ in $(seq 1 1200); do
  status=$(systemctl show -p StatusText --value stratad.service)
  case "$status" in *"fleet: migrating"*) case "$seen" in *"$status"*) ;; *) seen="$seen$status|";; esac;; esac
  state=$(systemctl show -p ActiveState --value stratad.service)
  [ "$state" = activating ] && began=1
  # inactive before the job ran, activating while it runs; anything else ends the start.
  [ "$state" = activating ] || { [ "$state" = inactive ] && [ -z "${began:-}" ]; } || break
  sleep 0.05
done
[ "$state" = active ] || fail "stratad.service is $state after the migration (status seen: $seen)"
case "$seen" in
  *"fleet: migrating Aircraft 2 → Aircraft 3 (stage 'move flightData into FlightData', 1 of 1)"*) ;;
  *) fail "StatusText never named the hop; seen: $seen";;
esac
echo "CHECK ok: StatusText named the hop while it ran: $seen"
start=$(systemctl show -p ExecMainStartTimestampMonotonic --value stratad.service)
ready=$(systemctl show -p ActiveEnterTimestampMonotonic --value stratad.service)
took=$(( (ready - start) / 1000 ))
[ "$took" -gt 2000 ] || fail "the start took ${took}ms, not longer than TimeoutStartSec=2s: the hop did not wait for the lock"
echo "CHECK ok: the start took ${took}ms, past TimeoutStartSec=2s (EXTEND_TIMEOUT_USEC)"
systemctl show -p StatusText --value stratad.service | grep -q "1 store ready, 1 with deferred work pending" \
  || fail "status after the migration: $(systemctl show -p StatusText --value stratad.service)"

stores=$(timeout 20 "$bin/stratactl" stores --socket /run/strata/admin.sock) || fail "stratactl stores"
echo "$stores" | grep -E -q '^fleet +ready +Aircraft 3 ' || fail "stores: $stores"
systemctl stop stratad.service
count=$("$bin/stratactl" count /var/lib/strata/fleet.sqlite FlightData) || fail "count"
[ "$count" = 2 ] || fail "FlightData: $count objects, not 2"
echo "CHECK ok: the store serves at Aircraft 3, its flight data moved"
echo "CHECK all ok"
