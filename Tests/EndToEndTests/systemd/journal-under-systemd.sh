#!/bin/bash
# Runs inside with-systemd: starts stratad as the shipped stratad.service (paths adapted) and
# reads its log entries back from journald with `journalctl -o json`: structured fields sent
# with sd_journal_sendv (MESSAGE, PRIORITY, SYSLOG_IDENTIFIER, CODE_*, STRATA_*), priorities,
# and the text fallback when the journal socket is out of reach.
# Prints "CHECK ok: …", then "CHECK all ok"; "CHECK skipped: …" (exit 77) when journald
# cannot run here.
set -u
root=$1; bin=$2
fail() { echo "CHECK failed after ${SECONDS}s: $*"; journalctl -u stratad --no-pager | tail -30; exit 1; }
work=$root/.build/journal-test; rm -rf "$work"; mkdir -p "$work"

# journald is socket-activated in the private manager: the first entry starts it.
systemctl start systemd-journald.socket systemd-journald.service \
  || { echo "CHECK skipped: systemd-journald does not start in the private manager"; systemctl status systemd-journald --no-pager; exit 77; }
[ -S /run/systemd/journal/socket ] || { echo "CHECK skipped: no /run/systemd/journal/socket"; exit 77; }
echo "CHECK ok: journald runs"

# This namespace's own /var/lib (StateDirectory=), leaving the host's alone.
mount -t tmpfs -o mode=0755 tmpfs /var/lib || fail "cannot mount a private /var/lib"
# The strata user and group, when the units name a static user (strata.sysusers): a private
# copy of the user database, bind-mounted in this namespace only.
if [ -f "$root/systemd/strata.sysusers" ]; then
  mkdir -p "$work/root/etc"
  cp /etc/passwd /etc/group "$work/root/etc/"
  systemd-sysusers --root="$work/root" "$root/systemd/strata.sysusers" || fail "systemd-sysusers refused strata.sysusers"
  mount --bind "$work/root/etc/passwd" /etc/passwd && mount --bind "$work/root/etc/group" /etc/group || fail "cannot bind-mount the user database"
fi

write_config() {  # $1: text appended (e.g. a broken key)
  cat > "$work/stratad.yaml" <<YAML
stores:
  - name: fleet
    path: /var/lib/strata/fleet.sqlite
    model: $root/config/models/Aircraft
    version: Aircraft 2
sockets:
  admin: {path: /run/strata/admin.sock, users: [root]}
  data: {path: /run/strata/data.sock, users: [root]}
log_level: debug
$1
YAML
  chmod a+r "$work/stratad.yaml"
}
write_config ""
chmod -R a+rX "$work" "$root/config"
for unit in stratad.service stratad.socket stratad-data.socket; do
  sed -e "s#/usr/local/bin/stratad --config /etc/strata/stratad.yaml#$bin/stratad --config $work/stratad.yaml#" \
      -e "s#^ProtectHome=.*#ProtectHome=no#" -e "s#^RestartSec=.*#RestartSec=1s#" \
      "$root/systemd/$unit" > /run/systemd/system/$unit
done
systemctl daemon-reload
timeout 60 systemctl start stratad.service || fail "start"
echo "CHECK ok: stratad.service started"

# An error (a reload the daemon refuses) and a warning (limits change only at a restart).
write_config "limits: {max_message_size: nonsense}"
timeout 30 "$bin/stratactl" reload --socket /run/strata/admin.sock >/dev/null 2>&1 && fail "a broken configuration was reloaded"
write_config "limits: {idle_timeout: 61s}"
timeout 30 "$bin/stratactl" reload --socket /run/strata/admin.sock >/dev/null || fail "reload"
journalctl --sync 2>/dev/null || sleep 1

# check FILE EXPRESSION MESSAGE JOURNALCTL-ARGS…: EXPRESSION (Python, over `entries`, the
# entries as dicts) must hold for `journalctl -o json ARGS` saved to FILE. Entries arrive
# asynchronously (the stream is read by journald after systemctl returns): retried for 10 s.
check() {
  local json=$1 expression=$2 message=$3; shift 3
  for _ in $(seq 1 50); do
    journalctl --no-pager -o json "$@" > "$json"
    python3 -c "import json,sys
entries = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
sys.exit(0 if ($expression) else 1)" "$json" && return 0
    sleep 0.2
  done
  echo "--- entries:"; head -c 4000 "$json"; echo; fail "$message"
}

check "$work/fleet.json" "len(entries) > 0" "journalctl -u stratad STRATA_STORE=fleet finds nothing" -u stratad STRATA_STORE=fleet
check "$work/fleet.json" "all(e.get('STRATA_STORE') == 'fleet' for e in entries)" "entries without STRATA_STORE=fleet" -u stratad STRATA_STORE=fleet
check "$work/fleet.json" "any(e['MESSAGE'] == 'store ready' and e['PRIORITY'] == '6' and e.get('STRATA_VERSION') == 'Aircraft 2'
    and e.get('STRATA_PENDING') == '0' and e['SYSLOG_IDENTIFIER'] == 'stratad' and e['_TRANSPORT'] == 'journal'
    and e['CODE_FILE'].endswith('StoreRegistry.swift') and e['CODE_LINE'].isdigit() and e['CODE_FUNC'].startswith('open(')
    and e['_SYSTEMD_UNIT'] == 'stratad.service' for e in entries)" "no structured 'store ready' entry (PRIORITY 6, STRATA_VERSION, CODE_*)" -u stratad STRATA_STORE=fleet
echo "CHECK ok: journalctl -u stratad STRATA_STORE=fleet: structured fields, PRIORITY=6, CODE_FILE/LINE/FUNC"

check "$work/all.json" "any(e['MESSAGE'] == 'ready' and e['PRIORITY'] == '5' and e.get('STRATA_STATUS', '').startswith('1 store ready') for e in entries)" "no notice 'ready' (PRIORITY 5)" -u stratad
check "$work/all.json" "any(e['MESSAGE'].startswith('reload refused') and e['PRIORITY'] == '3' and 'max_message_size' in e.get('STRATA_ERROR', '') for e in entries)" "no error 'reload refused' (PRIORITY 3, STRATA_ERROR)" -u stratad
check "$work/all.json" "any(e['MESSAGE'].startswith('socket and limit changes') and e['PRIORITY'] == '4' for e in entries)" "no warning (PRIORITY 4)" -u stratad
check "$work/all.json" "any(e['PRIORITY'] == '7' and e['_TRANSPORT'] == 'journal' for e in entries)" "no debug entry (PRIORITY 7)" -u stratad
check "$work/all.json" "not any(e.get('SYSLOG_IDENTIFIER') == 'stratad' and e['_TRANSPORT'] == 'stdout' for e in entries)" "stratad also wrote text lines to the stream" -u stratad
echo "CHECK ok: priorities 3 (error), 4 (warning), 5 (notice), 7 (debug), nothing as text"

# The fallback: without the journal's socket, lines with a priority prefix on the stream.
systemctl stop stratad.service stratad.socket stratad-data.socket
mkdir -p /run/systemd/system/stratad.service.d
printf '[Service]\nInaccessiblePaths=/run/systemd/journal/socket\n' > /run/systemd/system/stratad.service.d/no-socket.conf
systemctl daemon-reload
cursor=$(journalctl -n 0 --show-cursor --no-pager | sed -n 's/^-- cursor: //p')
timeout 60 systemctl start stratad.service || fail "start without the journal socket"
journalctl --sync 2>/dev/null || sleep 1
check "$work/fallback.json" "any(e['MESSAGE'].startswith('store ready ') and 'strata.store=fleet' in e['MESSAGE'] and e['PRIORITY'] == '6'
    and e['_TRANSPORT'] == 'stdout' for e in entries)" "no prefixed 'store ready' line on the stream (PRIORITY 6)" -u stratad --after-cursor="$cursor"
check "$work/fallback.json" "any(e['MESSAGE'].startswith('ready ') and e['PRIORITY'] == '5' for e in entries)" "no prefixed notice (PRIORITY 5)" -u stratad --after-cursor="$cursor"
check "$work/fallback.json" "not any(e['_TRANSPORT'] == 'journal' and e.get('SYSLOG_IDENTIFIER') == 'stratad' for e in entries)" "entries reached the native socket it should not reach" -u stratad --after-cursor="$cursor"
echo "CHECK ok: fallback to '<N>message key=value' lines on the journal stream"

systemctl stop stratad.service stratad.socket stratad-data.socket
echo "CHECK all ok"
