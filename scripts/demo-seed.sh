#!/usr/bin/env bash
# Seeds the example store of `make run` once: ROWS aircraft written with model version
# "Aircraft 1", the version before the one config/stratad.yaml opens the store with
# ("Aircraft 2"). At start, stratad then migrates real data and leaves the cleanup (a table
# rewrite of every row, free pages to reclaim) to its idle scheduler: the demo of README.md.
#
# usage: scripts/demo-seed.sh STORE [ROWS] [STRATACTL] [MODEL_DIRECTORY]
#   STORE      the store file to create (left alone when it exists)
#   ROWS       how many aircraft (default 200000)
#   STRATACTL  the stratactl to import with (default .build/debug/stratactl)
# The objects are generated as JSON lines and imported with `stratactl import` in batches of
# 5000; the store appears under its name only once the import has finished.
set -euo pipefail
store=${1:?usage: demo-seed.sh STORE [ROWS] [STRATACTL] [MODEL_DIRECTORY]}
rows=${2:-200000}
stratactl=${3:-.build/debug/stratactl}
models=${4:-config/models/Aircraft}

if [ -e "$store" ]; then exit 0; fi
mkdir -p "$(dirname "$store")"
partial="$store.seeding"
rm -f "$partial" "$partial-wal" "$partial-shm"
echo "demo-seed: creating $store with $rows aircraft at model version Aircraft 1 (first run only; rm it to start over)" >&2
awk -v rows="$rows" 'BEGIN {
  split("A320 A321 A350 B737 B787 E190 ATR72 Q400", types, " ")
  split("red white blue green yellow black silver orange", colors, " ")
  split("airplane airplane airplane rotorcraft glider", categories, " ")
  for (i = 1; i <= rows; i++) {
    printf "{\"tailNumber\":\"N%06d\",\"aircraftType\":\"%s\",\"aircraftCategory\":\"%s\",\"aircraftClass\":\"%s\",", \
      i, types[i % 8 + 1], categories[i % 5 + 1], (i % 7 == 0 ? "sea" : "land")
    printf "\"colorScheme\":{\"primary\":\"%s\",\"secondary\":\"%s\",\"tertiary\":\"%s\"}}\n", \
      colors[i % 8 + 1], colors[int(i / 8) % 8 + 1], colors[int(i / 64) % 8 + 1]
  }
}' | "$stratactl" import "$partial" --model "$models" --version "Aircraft 1" --entity Aircraft --batch-size 5000 - >/dev/null
mv "$partial" "$store"
echo "demo-seed: $store ready" >&2
