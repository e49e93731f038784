#!/usr/bin/env bash
# Runs README.md's "Watch it work" story at the demo's real size, as `make run` serves it, in
# a scratch directory, and prints each documented command with its real output — what the
# README's console blocks show — and how long after the client stopped the deferred work was
# done (the demo's aim: within two minutes, with config/stratad.yaml's pacing). DemoTests
# checks the README's lines against a smaller run of the same story on every `make test`.
#
# usage: scripts/demo-readme.sh [scheduler|request]
#   scheduler  let the idle scheduler finish the work (measures the aim; the default)
#   request    `stratactl finish-deferred --wait` takes over once the rewrite is a quarter done
# Needs the debug build (`swift build`). SEED=FILE reuses a store seeded by demo-seed.sh
# (copied, never changed); otherwise one is seeded (200,000 aircraft, a few minutes).
set -euo pipefail
mode=${1:-scheduler}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/.build/debug
scratch=$(mktemp -d "${TMPDIR:-/tmp}/strata-demo-XXXXXX")
daemon=
cleanup() { [ -n "$daemon" ] && kill "$daemon" 2>/dev/null; wait 2>/dev/null; rm -rf "$scratch"; }
trap cleanup EXIT
cd "$scratch"
ln -s "$root/config" config
ln -s "$root/scripts" scripts
mkdir -p var/run
if [ -n "${SEED:-}" ]; then cp "$SEED" var/aircraft.sqlite; else scripts/demo-seed.sh var/aircraft.sqlite 200000 "$bin/stratactl"; fi
export STRATA_ADMIN_SOCKET=$PWD/var/run/admin.sock
"$bin/stratad" --config config/stratad.yaml > daemon.log 2>&1 & daemon=$!
for _ in $(seq 200); do [ -S var/run/admin.sock ] && break; sleep 0.1; done
show() { echo "\$ stratactl $*"; "$bin/stratactl" "$@" | sed "s|$scratch|/home/you/strata|g"; }
show pending
python3 scripts/demo-client.py > /dev/null & client=$!
sleep 8
show status
kill -INT $client; wait $client || true
stopped=$(date +%s.%N)
shown=0
while true; do
  status=$("$bin/stratactl" status); pending=$("$bin/stratactl" pending)
  if [ $shown = 0 ] && grep -q "scheduler: running" <<<"$status" && grep -qE "rewriteTable.*\[running\].*\((2[5-9]|[3-4][0-9])%\)" <<<"$pending" && ! grep -q backup <<<"$pending"; then
    echo "# $(echo "$(date +%s.%N) - $stopped" | bc | cut -d. -f1) s after the client stopped"
    echo "\$ stratactl status"; echo "$status"; echo "\$ stratactl pending"; echo "$pending"; shown=1
    if [ "$mode" = request ]; then
      echo "\$ stratactl finish-deferred --wait"
      finish=$("$bin/stratactl" finish-deferred --wait | tr '\r' '\n')
      head -1 <<<"$finish"; echo "…"; tail -2 <<<"$finish"
      break
    fi
  fi
  grep -q "no deferred work pending" <<<"$pending" && break
  sleep 0.3
done
echo "# deferred work done $(echo "$(date +%s.%N) - $stopped" | bc | cut -d. -f1) s after the client stopped (load: $(cut -d' ' -f1-3 /proc/loadavg))"
show inspect var/aircraft.sqlite
echo "# the daemon's log:"
grep -E "scheduler: waiting: daemon|machine idle|finished deferred task|handed over|finishing deferred work on request|no deferred work left" daemon.log | sed "s|$scratch|/home/you/strata|g"
