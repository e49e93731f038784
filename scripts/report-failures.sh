#!/bin/bash
# report-failures.sh LOG — `make test`'s summary of what failed, printed last so that the
# tail of a CI log names the failing tests: swift-testing's "✘ Test … recorded an issue"
# lines and XCTest's "error:" lines from LOG (the whole output of the `swift test` runs),
# each with the line that follows it (the expectation's detail), at most 80 lines.
set -u
log=${1:?usage: report-failures.sh LOG}
[ -s "$log" ] || exit 0
failures=$(grep -E -A1 '(✘ Test .*(recorded an issue|failed)|: error: )' "$log" | grep -v '^--$' | head -n 80)
[ -n "$failures" ] || exit 0
echo "FAILED (from $log):"
printf '%s\n' "$failures"
