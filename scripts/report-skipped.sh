#!/bin/bash
# report-skipped.sh LOG — `make test`'s summary of the systemd-facing tests
# (SystemdTests, JournalTests, StagedSystemdTests, PackageInstallTests) that this machine
# could not run: LOG has one "TEST<TAB>REASON" line per skipped test, written by
# Tests/StrataDaemonTests/Support/PrivateSystemd.swift. Prints one line per reason:
#   SKIPPED 4 systemd tests: with-systemd: cannot run: needs root (running as uid 1000)
# or "systemd tests: 0 skipped" when every one of them ran.
set -u
log=${1:?usage: report-skipped.sh LOG}
if [ ! -s "$log" ]; then
    echo "systemd tests: 0 skipped"
    exit 0
fi
cut -f2- "$log" | sort | uniq -c | while read -r count reason; do
    tests=$(awk -F'\t' -v r="$reason" '$2 == r { print $1 }' "$log" | sort -u | paste -sd, -)
    echo "SKIPPED $count systemd tests: $reason ($tests)"
done
