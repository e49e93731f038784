#!/usr/bin/env python3
"""Kill loop for stratad's finishing (not run in CI at full size): kill -9 every <= 0.6 s.

Seeds one store with ROWS aircraft at model version "Soak 1" and serves it at "Soak 2"
(scripts/soak_deferred.py): the migration at start leaves an online backup, a table rewrite
(verified before the swap), an index build, an index drop, a table drop and a vacuum to the
scheduler, which here starts at once and ignores the clients' load. CLIENTS data-socket clients
write all along (scripts/soak.py's mixed load). After each start the daemon lives a random
KILL_MIN-KILL_MAX seconds after READY, then gets SIGKILL, until the ledger is empty.

After each kill the ledger is read from the store file: each round reports the task it was in
and how far the ledger moved (rows, pages, merged runs...). A round "made progress" when the
ledger moved (for the vacuum: the store's freelist shrank). At the end the daemon is started once more and stopped, and the store is checked:
every acknowledged write present, integrity_check ok, schema equal to a fresh store's at
"Soak 2", finishing complete, and the backup (integrity ok, every seeded row).

    scripts/kill-loop.py --rows 500000                     # the aim of issue #18
    scripts/kill-loop.py --rows 20000 --batch-budget 2ms --pause 20ms --json
                                                           # what KillLoopTests runs

Exit status: 0 when finishing completed, nothing was lost, every round after the first made
progress and the checks pass; 1 otherwise; 2 on bad arguments.
"""

import argparse
import json
import os
import random
import sqlite3
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import soak  # noqa: E402
import soak_deferred  # noqa: E402

SCHEDULER = """scheduler:
  idle_after: 0s
  sample_interval: 50ms
  signals: requests
  request_rate: 1000000
  batch_budget: %s
  pause_between_batches: %s
"""
# Ledger fields that only grow while a task goes on (see DeferredLedger.Progress).
GROWING = ("rowsDone", "lastKey", "verifiedKey")
BUILD_GROWING = ("collected", "runs", "sideLastKey")


def free_pages(path):
    """Pages on the store's freelist: what a vacuum has left to give back (its progress is the
    file itself, not the ledger)."""
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True, timeout=5)
    try:
        return db.execute("PRAGMA freelist_count").fetchone()[0]
    finally:
        db.close()


def position(tasks, path):
    """What the ledger says is done: tasks left, then the first task's kind and measures."""
    if not tasks:
        return {"tasks_left": 0}
    kind, progress = tasks[0]
    if kind == "incrementalVacuum":
        return {"tasks_left": len(tasks), "task": kind, "flags": [], "pages_left_to_free": -free_pages(path)}
    build = progress.get("build") or {}
    measures = {key: progress.get(key) or 0 for key in GROWING}
    measures.update({"build_" + key: build.get(key) or 0 for key in BUILD_GROWING})
    measures["build_merged"] = sum(build.get("merged") or [])
    flags = [name for name in ("started", "copied", "verified") if progress.get(name)]
    if build:
        flags.append("build:%s:%s" % (build.get("index"), build.get("phase")))
    return {"tasks_left": len(tasks), "task": kind, "flags": flags, **measures}


def advance(before, after):
    """How the ledger moved between two kills: None when it did not."""
    if before is None:
        return "first round"
    if after["tasks_left"] < before["tasks_left"]:
        return "%d task(s) finished" % (before["tasks_left"] - after["tasks_left"])
    if after == before:
        return None
    moved = ["%s +%d" % (key, after[key] - before[key]) for key in after
             if isinstance(after[key], int) and key != "tasks_left" and after[key] != before.get(key)]
    if after.get("flags") != before.get("flags"):
        moved.append("now %s" % ",".join(after["flags"]))
    return "; ".join(moved) or "moved"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--rows", type=int, default=500_000, help="aircraft seeded (default 500000)")
    parser.add_argument("--clients", type=int, default=4, help="data-socket clients writing all along (default 4)")
    parser.add_argument("--kill-min", type=float, default=0.2, help="shortest life after READY, seconds (default 0.2)")
    parser.add_argument("--kill-max", type=float, default=0.6, help="longest life after READY, seconds (default 0.6)")
    parser.add_argument("--batch-budget", default="5ms", help="the scheduler's batch_budget (default 5ms, shipped)")
    parser.add_argument("--pause", default="2ms", help="the scheduler's pause_between_batches (default 2ms, shipped)")
    parser.add_argument("--max-rounds", type=int, default=2000, help="give up after this many kills (default 2000)")
    parser.add_argument("--stratad", help="the stratad binary (default .build/release/stratad, else .build/debug/stratad)")
    parser.add_argument("--directory", help="where the store, sockets and log go (default: a new temporary directory)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")
    args = parser.parse_args()
    if not 1 <= args.rows <= 100_000_000 or not 0 <= args.clients <= 256 or not 0 < args.kill_min <= args.kill_max <= 600 \
            or not 1 <= args.max_rounds <= 100_000:
        parser.error("--rows 1-100000000, --clients 0-256, 0 < --kill-min <= --kill-max <= 600, --max-rounds 1-100000")
    stratad = args.stratad or next((p for p in (os.path.join(soak.ROOT, ".build/release/stratad"), os.path.join(soak.ROOT, ".build/debug/stratad"))
                                    if os.access(p, os.X_OK)), None)
    if stratad is None:
        parser.error("no stratad binary: build one (swift build -c release --product stratad) or pass --stratad")
    stratactl = os.path.join(os.path.dirname(stratad), "stratactl")
    directory = args.directory or tempfile.mkdtemp(prefix="strata-kill-loop-")
    os.makedirs(os.path.join(directory, "run"), exist_ok=True)
    soak.STORES[:] = ["aircraft"]
    path = os.path.join(directory, "aircraft.sqlite")

    deferred = soak_deferred.DeferredWork(directory, stratactl, args.rows, scheduler=SCHEDULER % (args.batch_budget, args.pause))
    seeding = time.monotonic()
    deferred.seed(path, "aircraft")
    seed_seconds = time.monotonic() - seeding
    daemon = soak.Daemon(stratad, directory, directory, deferred=deferred)
    ledgers, stats, stop = [soak.Ledger() for _ in range(args.clients)], soak.Stats(), threading.Event()
    rng = random.Random(args.seed)
    rounds, previous, threads = [], None, []
    started = time.monotonic()
    try:
        for number in range(args.max_rounds):
            daemon.start()
            if not threads:
                threads = [threading.Thread(target=soak.client, args=(i, daemon.data_socket, ledgers[i], stats, stop, args.seed), daemon=True)
                           for i in range(args.clients)]
                for thread in threads:
                    thread.start()
            life = rng.uniform(args.kill_min, args.kill_max)
            time.sleep(life)
            daemon.kill()
            tasks = deferred.pending(path)
            now = position(tasks or [], path)
            moved = advance(previous, now)
            rounds.append({"round": number + 1, "life_s": round(life, 3), "ledger": now, "moved": moved})
            previous = now
            if tasks == []:
                break
        daemon.start()
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
        daemon.stop()
    except BaseException:
        daemon.process.send_signal(9)
        raise
    elapsed = time.monotonic() - started

    result = soak.verify(directory, ledgers)
    fresh = deferred.fresh_schema("Soak 2")
    schema_fresh = soak_deferred.schema(path) == fresh
    left = deferred.pending(path)
    backups = [name for name in os.listdir(directory) if ".pre-migration-" in name and not name.endswith((".partial", "-wal", "-shm"))]
    backup = {"files": backups}
    if backups:
        db = sqlite3.connect("file:%s?mode=ro" % os.path.join(directory, backups[0]), uri=True)
        backup["integrity"] = db.execute("PRAGMA integrity_check").fetchone()[0]
        backup["seeded_rows"] = db.execute("SELECT count(*) FROM Aircraft WHERE tailNumber LIKE 'S%' AND x1 IS NOT NULL").fetchone()[0]
        db.close()
    stalled = [r["round"] for r in rounds[1:] if r["moved"] is None]
    report = {
        "rows": args.rows, "clients": args.clients, "batch_budget": args.batch_budget, "pause": args.pause, "kill_range_s": [args.kill_min, args.kill_max], "stratad": stratad,
        "directory": directory, "seed_s": round(seed_seconds, 1), "seconds": round(elapsed, 1), "load_average": os.getloadavg(),
        "kills": len(rounds), "finished": left == [], "rounds_without_progress": stalled, "rounds": rounds,
        "requests": sum(stats.requests.values()), "errors": stats.errors, "unacknowledged_calls": stats.unacknowledged,
        "schema_fresh": schema_fresh, "backup": backup, **result,
    }
    ok = left == [] and not stalled and schema_fresh and result["rows_lost"] == 0 and result["deleted_rows_back"] == 0 \
        and result["wrong_values"] == 0 and all(v == "ok" for v in result["integrity"].values()) \
        and backup.get("integrity") == "ok" and backup.get("seeded_rows") == args.rows
    report["ok"] = ok
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
    else:
        print("kill loop: %d rows, kill -9 %.1f-%.1f s after READY, budget %s, pause %s, %d kills in %.0f s (seeding %.0f s), stratad %s" % (
            args.rows, args.kill_min, args.kill_max, args.batch_budget, args.pause, len(rounds), elapsed, seed_seconds, stratad))
        for r in rounds:
            ledger = r["ledger"]
            print("  round %3d (%.2f s): %s %s -> %s" % (r["round"], r["life_s"], ledger.get("task", "done"), ",".join(ledger.get("flags", [])),
                                                         r["moved"] or "NO PROGRESS"))
        print("finished: %s; rounds without progress: %s" % (left == [], stalled or "none"))
        print("requests: %d, errors: %s, calls cut by a kill: %d" % (report["requests"], json.dumps(stats.errors), stats.unacknowledged))
        print("acknowledged objects: %d, lost: %d, deleted but back: %d, wrong values: %d, integrity: %s, schema = fresh: %s" % (
            result["acknowledged_objects"], result["rows_lost"], result["deleted_rows_back"], result["wrong_values"],
            result["integrity"], schema_fresh))
        print("backup: %s" % json.dumps(backup))
        print("load average at the end: %.2f %.2f %.2f" % report["load_average"])
        print("OK" if ok else "FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
