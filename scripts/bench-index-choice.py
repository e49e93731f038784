#!/usr/bin/env python3
# Copy-throughput trade-off for a table rewrite's indexes (docs/Benchmarks.md, "The
# index-build choice"). DB must hold a table T(_pk INTEGER PRIMARY KEY, name TEXT,
# payload TEXT, rank INTEGER, owner_id INTEGER) with _pk 1...N; the table S is replaced.
# One from an upgrade seed (strata-bench upgrade --seed-cache DIR):
#   sqlite3 t.db "ATTACH 'DIR/upgrade-seed-4000000-….sqlite' AS seed;
#     CREATE TABLE T(_pk INTEGER PRIMARY KEY, name TEXT, payload TEXT, rank INTEGER, owner_id INTEGER);
#     INSERT INTO T SELECT _pk, name, payload, rank, owner_id FROM seed.Item"
# usage: bench-index-choice.py DB idx|noidx BATCH N   (measured: 2000 4000000)
#   idx:   the shadow keeps its two non-unique indexes during the batched copy (rowid order)
#   noidx: the shadow has no index during the copy; its indexes are built afterwards in one
#          sorted CREATE INDEX each (what a key-order build costs at least)
import sqlite3, time, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
idx = sys.argv[2] == "idx"
db.execute("PRAGMA cache_size=-65536")
db.execute("PRAGMA synchronous=NORMAL")
db.execute("PRAGMA journal_mode=WAL")
db.execute("DROP TABLE IF EXISTS S")
db.execute("CREATE TABLE S(_pk INTEGER PRIMARY KEY, name TEXT, payload TEXT, rank INTEGER, owner_id INTEGER)")
if idx:
    db.execute("CREATE INDEX S_owner ON S(owner_id)")
    db.execute("CREATE INDEX S_rank ON S(rank)")
B = int(sys.argv[3]); N = int(sys.argv[4])
t = time.time(); last = 0; tb = []; seg = time.time()
while last < N:
    t0 = time.time()
    db.execute("BEGIN")
    db.execute("INSERT INTO S SELECT _pk, name, payload, rank, owner_id FROM T WHERE _pk > ? AND _pk <= ?", (last, last + B))
    db.execute("COMMIT")
    tb.append(time.time() - t0)
    last += B
    if last % 500000 == 0:
        now = time.time()
        print(f"rows {last}: {round(now - t, 2)} s; last 500k {round(500000 / (now - seg))} rows/s; batch avg {round(1000 * sum(tb[-250:]) / 250, 2)} ms, max {round(1000 * max(tb[-250:]), 1)} ms", flush=True)
        seg = now
db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
copy = time.time() - t
print(f"copy {round(copy, 2)} s = {round(N / copy)} rows/s; batch max {round(1000 * max(tb), 1)} ms", flush=True)
if not idx:
    for name, col in [("S_owner", "owner_id"), ("S_rank", "rank")]:
        t0 = time.time()
        db.execute(f"CREATE INDEX {name} ON S({col})")
        print(f"CREATE INDEX {name}: {round(time.time() - t0, 2)} s", flush=True)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
print(f"total {round(time.time() - t, 2)} s", flush=True)
