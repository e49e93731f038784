#!/bin/bash
# Runs inside with-systemd (PackageInstallTests): installs the Debian package with dpkg -i and
# checks what a user gets: the strata user and group, /var/lib/strata, sockets enabled and
# listening, socket activation on the first `stratactl status`, a store created under
# /var/lib/strata after a configuration change and `systemctl reload`, a member of the strata
# group served on the data socket and refused on the admin socket, the installed unit's
# `systemd-analyze security` exposure, `systemctl stop` with STOPPING=1, and removal and purge
# that keep the data. Prints "CHECK ok: …", then "CHECK all ok".
#
# with-systemd shares the host's file systems except /run, /tmp and /var/tmp: dpkg would
# write the host's /usr, /etc and /var/lib/dpkg. So this namespace first mounts overlays on
# /etc, /usr and /var whose upper layers are in its private /run: dpkg, systemd-sysusers and
# the daemon write there only, and the host's files are never changed (mounts made here do
# not propagate out: with-systemd makes / private in its namespace).
#
# usage: package-under-systemd.sh ROOT DEB
set -u
root=$1; deb=$2
fail() {
  echo "CHECK failed after ${SECONDS}s: $*"
  journalctl -u stratad -u stratad.socket -u stratad-data.socket --no-pager 2>/dev/null | tail -30
  exit 1
}
step() { echo "CHECK ok: $*"; }

# MARK: - A private, writable copy of /etc, /usr and /var
overlay=/run/package-test-overlay
mkdir -p "$overlay" && mount -t tmpfs -o mode=0700 tmpfs "$overlay" || fail "cannot mount a tmpfs for the overlays"
for dir in etc usr var; do
  mkdir -p "$overlay/$dir/upper" "$overlay/$dir/work"
  mount -t overlay overlay -o "lowerdir=/$dir,upperdir=$overlay/$dir/upper,workdir=$overlay/$dir/work" "/$dir" \
    || fail "cannot mount an overlay on /$dir (the package must not be installed on the host)"
done
mount -t tmpfs tmpfs /var/tmp
touch /usr/.package-test-probe && [ -e "$overlay/usr/upper/.package-test-probe" ] || fail "writes to /usr do not go to the overlay"
rm -f /usr/.package-test-probe
# Left-overs of earlier runs on the host (a /var/lib/strata symlink into /var/lib/private
# from a DynamicUser= unit, say) are hidden in the overlay only: whiteouts, the host keeps them.
# So is a policy-rc.d that forbids starting services (container images ship one that exits
# 101): the maintainer scripts honour it through deb-systemd-invoke, a booted system has none.
# man-db's trigger would rebuild the whole man page index after each dpkg run: the flag file
# that enables it is hidden too.
for leftover in /var/lib/strata /var/lib/private/strata /etc/strata /usr/sbin/policy-rc.d /var/lib/man-db/auto-update; do
  if [ -e "$leftover" ] || [ -L "$leftover" ]; then
    echo "note: hiding the host's $leftover ($(ls -ld "$leftover" | cut -c1-10)) in the overlay"
    rm -rf "$leftover"
  fi
done
if getent group strata >/dev/null || [ -e /usr/bin/stratad ] || dpkg-query -W strata >/dev/null 2>&1; then
  fail "this machine already has strata installed (group, /usr/bin/stratad or the package): the test needs a clean base"
fi
step "overlays on /etc, /usr and /var: the host's files stay untouched"
systemctl daemon-reload

# MARK: - Installation
out=$(dpkg -i "$deb" 2>&1) || fail "dpkg -i: $out"
[ "$(dpkg-query -W -f='${Status}' strata)" = "install ok installed" ] || fail "dpkg status: $(dpkg-query -W -f='${Status}' strata)"
for file in /usr/bin/stratad /usr/bin/stratactl /usr/lib/systemd/system/stratad.service /usr/lib/sysusers.d/strata.conf \
    /usr/lib/tmpfiles.d/strata.conf /usr/share/man/man8/stratad.8.gz /usr/share/man/man1/stratactl.1.gz \
    /usr/share/man/man5/stratad.yaml.5.gz /usr/share/bash-completion/completions/stratactl \
    /usr/share/zsh/vendor-completions/_stratactl /usr/share/fish/vendor_completions.d/stratactl.fish \
    /usr/share/strata/models/Aircraft/versions.yaml /usr/share/strata/stages/Aircraft.yaml /etc/strata/stratad.yaml; do
  [ -s "$file" ] || fail "the package did not install $file"
done
[ ! -e /usr/bin/strata-bench ] || fail "strata-bench is installed"
grep -qx "ExecStart=/usr/bin/stratad --config /etc/strata/stratad.yaml" /usr/lib/systemd/system/stratad.service \
  || fail "stratad.service: $(grep ExecStart /usr/lib/systemd/system/stratad.service)"
grep -q "^ExecStart=/usr/bin/stratactl " /usr/lib/systemd/system/strata-maintenance.service || fail "strata-maintenance.service ExecStart"
[ "$(dpkg-query -W -f='${Conffiles}' strata | awk '{print $1}')" = /etc/strata/stratad.yaml ] || fail "conffiles: $(dpkg-query -W -f='${Conffiles}' strata)"
zcat /usr/share/man/man8/stratad.8.gz | grep -q -- "check-config" || fail "stratad(8) does not describe --check-config"
zcat /usr/share/man/man1/stratactl.1.gz | grep -q "finish-deferred" || fail "stratactl(1) does not describe finish-deferred"
grep -q "finish-deferred" /usr/share/bash-completion/completions/stratactl || fail "the bash completion does not know finish-deferred"
step "dpkg -i installs the binaries, units (ExecStart=/usr/bin/…), man pages, completions and the conffile"
# A release package links the Swift runtime statically: prove it runs without the toolchain
# by hiding it (a debug package, the one make test builds, needs it).
if ! ldd /usr/bin/stratad | grep -q libswiftCore; then
  toolchain=$(dirname "$(dirname "$(readlink -f "$(command -v swift || echo /opt/swift/usr/bin/swift)")")")
  if [ -d "$toolchain" ]; then mount -t tmpfs tmpfs "$toolchain" || fail "cannot hide $toolchain"; fi
  stratactl --help >/dev/null && stratad --version >/dev/null || fail "the binaries do not run without the Swift toolchain"
  step "the binaries link no Swift runtime; $toolchain is hidden for the rest of the test"
fi

getent passwd strata >/dev/null && getent group strata >/dev/null || fail "postinst made no strata user and group"
[ "$(stat -c '%a %U:%G' /var/lib/strata)" = "750 strata:strata" ] || fail "/var/lib/strata: $(stat -c '%a %U:%G' /var/lib/strata)"
for unit in stratad.socket stratad-data.socket strata-maintenance.timer; do
  [ "$(systemctl is-enabled $unit)" = enabled ] || fail "$unit is $(systemctl is-enabled $unit)"
  [ "$(systemctl is-active $unit)" = active ] || fail "$unit is $(systemctl is-active $unit)"
done
[ "$(systemctl is-active stratad.service)" = inactive ] || fail "stratad started before a connection"
[ "$(stat -c '%a %U:%G' /run/strata/admin.sock)" = "660 root:strata" ] || fail "admin.sock: $(stat -c '%a %U:%G' /run/strata/admin.sock)"
[ "$(stat -c '%a %U:%G' /run/strata/data.sock)" = "660 root:strata" ] || fail "data.sock: $(stat -c '%a %U:%G' /run/strata/data.sock)"
step "postinst: user and group strata, /var/lib/strata 0750 strata:strata, sockets enabled and listening (0660 root:strata), daemon not started"

# MARK: - Socket activation and the configuration
status=$(timeout 20 stratactl status 2>&1) || fail "stratactl status (socket activation): $status"
[ "$(systemctl is-active stratad.service)" = active ] || fail "stratad.service is $(systemctl is-active stratad.service) after stratactl status"
echo "$status" | grep -q "0 stores ready" || fail "stratactl status: $status"
[ "$(ps -o user= -p "$(systemctl show -p MainPID --value stratad.service)")" = strata ] || fail "stratad does not run as strata"
step "socket activation: the first \`stratactl status\` starts stratad (as strata) on the shipped configuration"

sed -i -e 's#^stores: \[\]$#stores:\n  - name: aircraft\n    path: /var/lib/strata/aircraft.sqlite\n    model: /usr/share/strata/models/Aircraft#' /etc/strata/stratad.yaml
grep -q "name: aircraft" /etc/strata/stratad.yaml || fail "could not add a store to /etc/strata/stratad.yaml"
stratad --config /etc/strata/stratad.yaml --check-config >/dev/null || fail "stratad --check-config: $(stratad --config /etc/strata/stratad.yaml --check-config 2>&1)"
pid=$(systemctl show -p MainPID --value stratad.service)
timeout 30 systemctl reload stratad.service || fail "systemctl reload"
for _ in $(seq 1 100); do [ "$(systemctl is-active stratad.service)" = active ] && break; sleep 0.1; done
[ "$(systemctl show -p MainPID --value stratad.service)" = "$pid" ] || fail "reload restarted the daemon"
stores=$(stratactl stores 2>&1)
echo "$stores" | grep -q "^aircraft  *ready .*/var/lib/strata/aircraft.sqlite" || fail "stratactl stores after reload: $stores"
[ "$(stat -c '%a %U:%G' /var/lib/strata/aircraft.sqlite)" = "600 strata:strata" ] || fail "store file: $(stat -c '%a %U:%G' /var/lib/strata/aircraft.sqlite)"
step "systemctl reload (same pid) opens the added store, created as /var/lib/strata/aircraft.sqlite (0600 strata:strata)"

# MARK: - Reinstallation (an upgrade's path) keeps the edited conffile
pid=$(systemctl show -p MainPID --value stratad.service)
out=$(dpkg -i "$deb" 2>&1) || fail "dpkg -i again: $out"
grep -q "name: aircraft" /etc/strata/stratad.yaml || fail "reinstalling replaced the edited /etc/strata/stratad.yaml"
for _ in $(seq 1 100); do [ "$(systemctl is-active stratad.service)" = active ] && break; sleep 0.1; done
[ "$(systemctl show -p MainPID --value stratad.service)" != "$pid" ] || fail "reinstalling did not restart the running daemon"
stratactl stores 2>&1 | grep -q "^aircraft  *ready" || fail "stratactl stores after reinstalling: $(stratactl stores 2>&1)"
step "dpkg -i again keeps the edited conffile and restarts the running daemon on the new binary"

# MARK: - Who may use which socket
useradd --system --no-create-home --shell /usr/sbin/nologin --groups strata strata-client || fail "useradd strata-client"
call_as() {  # SOCKET METHOD PARAMETERS-JSON setpriv-options...
  local socket=$1 method=$2 parameters=$3; shift 3
  setpriv "$@" /usr/bin/python3 -c '
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[1])
except OSError as error:
    print("cannot connect:", error.strerror); sys.exit()
s.settimeout(10)
s.sendall(json.dumps({"method": sys.argv[2], "parameters": json.loads(sys.argv[3])}).encode() + b"\0")
data = b""
while not data.endswith(b"\0"):
    chunk = s.recv(65536)
    if not chunk: break
    data += chunk
reply = json.loads(data.rstrip(b"\0"))
print(reply.get("error") or json.dumps(reply["parameters"], sort_keys=True))' "$socket" "$method" "$parameters"
}
client=(--reuid=strata-client --regid=strata-client --init-groups)
out=$(call_as /run/strata/data.sock io.strata.Store.Insert '{"store":"aircraft","entity":"Aircraft","values":{"tailNumber":"F-GPKG"}}' "${client[@]}")
echo "$out" | grep -q '"_pk": 1' || fail "strata-client Insert on the data socket: $out"
out=$(call_as /run/strata/data.sock io.strata.Store.Count '{"store":"aircraft","entity":"Aircraft"}' "${client[@]}")
[ "$out" = '{"count": 1}' ] || fail "strata-client Count on the data socket: $out"
out=$(call_as /run/strata/admin.sock io.strata.Admin.Status '{}' "${client[@]}")
[ "$out" = io.strata.Varlink.NotAuthorized ] || fail "strata-client on the admin socket: $out"
out=$(call_as /run/strata/data.sock io.strata.Store.Count '{"store":"aircraft","entity":"Aircraft"}' --reuid=nobody --regid=nogroup --clear-groups)
[ "$out" = "cannot connect: Permission denied" ] || fail "nobody on the data socket: $out"
step "a member of the strata group inserts and counts on the data socket, gets NotAuthorized on the admin socket; others cannot open the data socket"

# MARK: - The installed unit's sandbox
exposure=$(systemd-analyze security stratad.service | sed -n 's/.*Overall exposure level for stratad.service: \([0-9.]*\).*/\1/p')
awk -v e="$exposure" 'BEGIN { exit !(e != "" && e <= 1.0) }' || fail "systemd-analyze security stratad.service: exposure '$exposure' > 1.0"
step "systemd-analyze security stratad.service (installed): $exposure"

# MARK: - Stop: STOPPING=1
# systemd logs each notification at debug level: send its log to the journal for the stop.
systemd-analyze log-target journal && systemd-analyze log-level debug || fail "cannot raise systemd's log level"
pid=$(systemctl show -p MainPID --value stratad.service)
timeout 30 systemctl stop stratad.service 2>/dev/null || fail "systemctl stop"
systemd-analyze log-level notice
[ "$(systemctl is-active stratad.service)" = inactive ] || fail "stratad.service is $(systemctl is-active stratad.service) after stop"
[ "$(systemctl show -p Result --value stratad.service)" = success ] || fail "stop result: $(systemctl show -p Result --value stratad.service)"
notification=""
for _ in $(seq 1 50); do
  notification=$(journalctl --no-pager -o cat _PID=1 | grep "notification message from PID $pid" | grep "STOPPING=1" | head -1)
  [ -n "$notification" ] && break; sleep 0.1
done
[ -n "$notification" ] || fail "no STOPPING=1 from stratad (pid $pid) in systemd's log: $(journalctl --no-pager -o cat _PID=1 | grep "PID $pid" | tail -5)"
[ -S /run/strata/admin.sock ] || fail "the admin socket went away with the daemon"
step "systemctl stop: the daemon sent STOPPING=1 and exited cleanly (${notification#*: })"

# MARK: - Removal keeps the data; purge removes the configuration only
out=$(dpkg -r strata 2>&1) || fail "dpkg -r: $out"
for file in /usr/bin/stratad /usr/bin/stratactl /usr/lib/systemd/system/stratad.service /usr/share/man/man8/stratad.8.gz; do
  [ ! -e "$file" ] || fail "dpkg -r left $file"
done
for unit in stratad.socket stratad-data.socket strata-maintenance.timer stratad.service; do
  [ "$(systemctl is-active $unit)" != active ] || fail "$unit is still active after dpkg -r"
done
out=$(call_as /run/strata/data.sock io.strata.Store.Count '{"store":"aircraft","entity":"Aircraft"}')
case "$out" in "cannot connect: "*) ;; *) fail "the data socket still answers after dpkg -r: $out";; esac
[ -f /etc/strata/stratad.yaml ] || fail "dpkg -r removed the configuration"
rows=$(sqlite3 /var/lib/strata/aircraft.sqlite "SELECT tailNumber FROM Aircraft") || fail "the store is unreadable after dpkg -r"
[ "$rows" = F-GPKG ] || fail "the store after dpkg -r: '$rows'"
step "dpkg -r stops the sockets and removes the files; the store (with its row) and the configuration stay"
out=$(dpkg --purge strata 2>&1) || fail "dpkg --purge: $out"
[ ! -e /etc/strata/stratad.yaml ] || fail "dpkg --purge kept /etc/strata/stratad.yaml"
[ "$(sqlite3 /var/lib/strata/aircraft.sqlite "SELECT count(*) FROM Aircraft")" = 1 ] || fail "dpkg --purge touched the store"
getent group strata >/dev/null || fail "dpkg --purge removed the strata group (files may still be owned by it)"
left=$(find /etc/systemd/system -name 'strata*' -o -name 'stratad*')
[ -z "$left" ] || fail "dpkg --purge left unit links or masks: $left"
step "dpkg --purge removes the configuration; /var/lib/strata and the strata user stay"
echo "CHECK all ok"
