#!/usr/bin/env python3
"""Soak test for stratad (not run in CI): many clients, mixed load, periodic kill -9.

Starts stratad on two stores of the Aircraft model, runs CLIENTS data-socket clients (inserts,
batches, updates, deletes, fetches, counts) and one admin client (Status) for MINUTES, and
kills the daemon with SIGKILL every KILL_EVERY seconds (+-30 %), restarting it at once. Every
acknowledged write is remembered; at the end the daemon is stopped and both store files are
read directly (sqlite3, read-only) and checked: every acknowledged insert is there with its
last acknowledged (or a later, unacknowledged) color, every acknowledged delete is gone.

Reports requests, errors by name, connection failures (expected while the daemon restarts),
restarts and their time to READY, the daemon's RSS per life (first and last sample, max) and
rows lost, as text or JSON (--json).

    scripts/soak.py --minutes 30 --clients 16 --kill-every 60        # the documented run
    scripts/soak.py --minutes 1 --clients 4 --kill-every 15          # a smoke run
    sudo scripts/soak.py --minutes 10 --kill-every 60 --disk-full-every 40 --pause-every 25
                                                                     # with faults (root: mounts a tmpfs)

With --deferred-rows N the stores carry deferred work all along (scripts/soak_deferred.py): each
is seeded with N rows at model version "Soak 1" and served at "Soak 2", so the daemon's
scheduler (told to ignore the clients' load) runs an online backup, a verified table rewrite,
index builds and drops while the faults land. Whenever a store's ledger is empty, its next
restart moves it one version on (up to 12 hops), which leaves new deferred work. Each
completed backup must pass integrity_check. At the end the clients stop, finishing runs to
completion, and each store's schema must equal a fresh store's at its version.

    sudo scripts/soak.py --minutes 10 --kill-every 30 --disk-full-every 40 --pause-every 20 --deferred-rows 50000

Faults besides kill -9: --disk-full-every puts the stores on a small tmpfs the script mounts
(--disk-mib) and fills it completely for --disk-full-seconds at a time (writes then fail with
StoreFailure code "full"; acknowledged writes must all survive); --pause-every stops the
daemon with SIGSTOP for 0.5-3 s (a scheduler or VM pause: calls wait, none may be lost).

Exit status: 0 when no acknowledged write was lost and every store passes integrity_check,
1 otherwise, 2 on bad arguments.
"""

import argparse
import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import soak_deferred  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STORES = ["aircraft", "second"]
COLORS = ["red", "green", "blue", "white", "black", "yellow", "orange", "purple"]


# MARK: - Varlink over a Unix socket


class Connection:
    """One Varlink connection: NUL-terminated JSON calls and replies."""

    def __init__(self, path, timeout=30):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buffer = b""

    def call(self, method, parameters):
        """The reply's (error name or None, parameters); raises OSError / EOFError when the
        connection fails before the reply."""
        self.sock.sendall(json.dumps({"method": method, "parameters": parameters}).encode() + b"\0")
        while b"\0" not in self.buffer:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise EOFError("connection closed")
            self.buffer += chunk
        frame, self.buffer = self.buffer.split(b"\0", 1)
        reply = json.loads(frame)
        return reply.get("error"), reply.get("parameters", {})

    def close(self):
        self.sock.close()


# MARK: - Ledger of acknowledged writes


class Ledger:
    """What one client was told: its objects by (store, tailNumber) with the colors they may
    have (the last acknowledged one, plus any later attempt whose reply never came). Each
    client updates and deletes only its own objects, so their writes are ordered."""

    def __init__(self):
        self.objects = {}  # (store, tail) -> {"pk", "colors": set, "deleted": "no"|"yes"|"maybe"}
        self.live = []

    def inserted(self, store, tail, pk, color):
        self.objects[(store, tail)] = {"pk": pk, "colors": {color}, "deleted": "no"}
        self.live.append((store, tail))

    def pick(self, rng):
        while self.live:
            index = rng.randrange(len(self.live))
            key = self.live[index]
            if self.objects[key]["deleted"] == "no":
                return key, self.objects[key]["pk"]
            self.live[index] = self.live[-1]
            self.live.pop()
        return None

    def update(self, key, color, acknowledged):
        entry = self.objects[key]
        entry["colors"] = {color} if acknowledged else entry["colors"] | {color}

    def delete(self, key, acknowledged):
        self.objects[key]["deleted"] = "yes" if acknowledged else "maybe"


# MARK: - Load


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.requests = {}
        self.errors = {}
        self.connection_failures = 0
        self.unacknowledged = 0

    def count(self, table, key, n=1):
        with self.lock:
            table[key] = table.get(key, 0) + n

    def add(self, name, n=1):
        with self.lock:
            setattr(self, name, getattr(self, name) + n)


def client(index, data_socket, ledger, stats, stop, seed):
    rng = random.Random(seed * 1000 + index)
    sequence = 0
    connection = None
    while not stop.is_set():
        if connection is None:
            try:
                connection = Connection(data_socket)
            except OSError:
                stats.add("connection_failures")
                time.sleep(0.05)
                continue
        store = rng.choice(STORES)
        roll = rng.random()
        try:
            if roll < 0.40:
                sequence += 1
                tail = "C%d-%d" % (index, sequence)
                color = rng.choice(COLORS)
                op = "Insert"
                error, reply = connection.call("io.strata.Store.Insert", {
                    "store": store, "entity": "Aircraft", "values": {"tailNumber": tail, "colorScheme": {"primary": color}}})
                if error is None:
                    ledger.inserted(store, tail, reply["object"]["_pk"], color)
            elif roll < 0.50:
                op = "Batch"
                rows = []
                for _ in range(5):
                    sequence += 1
                    rows.append(("C%d-%d" % (index, sequence), rng.choice(COLORS)))
                error, reply = connection.call("io.strata.Store.Batch", {"store": store, "operations": [
                    {"op": "insert", "entity": "Aircraft", "values": {"tailNumber": tail, "colorScheme": {"primary": color}}}
                    for tail, color in rows]})
                if error is None:
                    for (tail, color), result in zip(rows, reply["results"]):
                        ledger.inserted(store, tail, result["_pk"], color)
            elif roll < 0.65:
                op = "Update"
                picked = ledger.pick(rng)
                if picked is None:
                    continue
                (key, pk), color = picked, rng.choice(COLORS)
                ledger.update(key, color, acknowledged=False)
                error, _ = connection.call("io.strata.Store.Update", {
                    "store": key[0], "entity": "Aircraft", "id": pk, "values": {"colorScheme": {"primary": color}}})
                if error is None:
                    ledger.update(key, color, acknowledged=True)
            elif roll < 0.70:
                op = "Delete"
                picked = ledger.pick(rng)
                if picked is None:
                    continue
                key, pk = picked
                ledger.delete(key, acknowledged=False)
                error, _ = connection.call("io.strata.Store.Delete", {"store": key[0], "entity": "Aircraft", "id": pk})
                if error is None:
                    ledger.delete(key, acknowledged=True)
            elif roll < 0.90:
                op = "Fetch"
                error, _ = connection.call("io.strata.Store.Fetch", {
                    "store": store, "entity": "Aircraft", "predicate": "colorScheme.primary == %@",
                    "arguments": [rng.choice(COLORS)], "sort": ["tailNumber:desc"], "limit": 50})
            else:
                op = "Count"
                error, _ = connection.call("io.strata.Store.Count", {
                    "store": store, "entity": "Aircraft", "predicate": "tailNumber BEGINSWITH %@", "arguments": ["C%d-" % index]})
            stats.count(stats.requests, op)
            if error is not None:
                stats.count(stats.errors, error)
        except (OSError, EOFError, ValueError):
            # The daemon went away mid-call (a kill): the write may or may not have happened.
            stats.add("unacknowledged")
            connection.close()
            connection = None


def admin_client(admin_socket, stats, stop):
    while not stop.is_set():
        try:
            connection = Connection(admin_socket, timeout=10)
            error, _ = connection.call("io.strata.Admin.Status", {})
            connection.close()
            stats.count(stats.requests, "Status")
            if error is not None:
                stats.count(stats.errors, error)
        except (OSError, EOFError, ValueError):
            stats.add("connection_failures")
        stop.wait(1)


# MARK: - The daemon


class Daemon:
    def __init__(self, stratad, directory, data_directory, deferred=None):
        """`deferred`: a DeferredWork whose model, versions and scheduler the stores use."""
        self.stratad = stratad
        self.directory = directory
        self.data_directory = data_directory
        self.deferred = deferred
        self.config = os.path.join(directory, "stratad.yaml")
        self.admin_socket = os.path.join(directory, "run", "admin.sock")
        self.data_socket = os.path.join(directory, "run", "data.sock")
        self.process = None
        self.lives = []  # {"pid", "ready_ms", "rss_kib": [samples], "ended": "kill"|"stop"}
        self.log = open(os.path.join(directory, "stratad.log"), "ab")

    def write_config(self):
        """Written before every start: a restart picks up the stores' next model versions."""
        with open(self.config, "w") as f:
            f.write("stores:\n")
            for name in STORES:
                if self.deferred:
                    f.write("  - {name: %s, path: %s/%s.sqlite, model: %s, version: \"%s\", defer_cleanup: true, backup: true}\n"
                            % (name, self.data_directory, name, self.deferred.models, self.deferred.versions[name]))
                else:
                    f.write("  - {name: %s, path: %s/%s.sqlite, model: %s/config/models/Aircraft}\n" % (name, self.data_directory, name, ROOT))
            f.write("sockets:\n  admin: {path: %s, users: [root]}\n  data: {path: %s, users: [root]}\n"
                    % (self.admin_socket, self.data_socket))
            if self.deferred:
                f.write(self.deferred.scheduler)
            f.write("log_level: notice\n")

    def start(self):
        self.write_config()
        started = time.monotonic()
        self.process = subprocess.Popen([self.stratad, "--config", self.config], stdout=self.log, stderr=self.log)
        while time.monotonic() - started < 60:
            try:
                connection = Connection(self.admin_socket, timeout=5)
                error, _ = connection.call("io.strata.Admin.Status", {})
                connection.close()
                if error is None:
                    break
            except (OSError, EOFError, ValueError):
                pass
            if self.process.poll() is not None:
                raise SystemExit("stratad exited with %s while starting; see %s/stratad.log" % (self.process.returncode, self.directory))
            time.sleep(0.02)
        else:
            raise SystemExit("stratad was not ready within 60 s")
        self.lives.append({"pid": self.process.pid, "ready_ms": round((time.monotonic() - started) * 1000), "rss_kib": []})

    def sample_rss(self):
        try:
            with open("/proc/%d/status" % self.process.pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        self.lives[-1]["rss_kib"].append(int(line.split()[1]))
        except OSError:
            pass

    def pause(self, seconds):
        """A scheduler pause: the daemon is not run at all for `seconds`."""
        self.process.send_signal(signal.SIGSTOP)
        time.sleep(seconds)
        self.process.send_signal(signal.SIGCONT)

    def kill(self):
        self.process.send_signal(signal.SIGCONT)
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        self.lives[-1]["ended"] = "kill -9"

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            status = self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            status = "timeout"
        self.lives[-1]["ended"] = "SIGTERM, exit %s" % status


# MARK: - Verification


class DiskFull:
    """A small tmpfs holding the stores, filled completely now and then."""

    def __init__(self, path, mib):
        self.path = path
        self.filler = os.path.join(path, "filler")
        os.makedirs(path, exist_ok=True)
        status = subprocess.call(["mount", "-t", "tmpfs", "-o", "size=%dm,mode=0700" % mib, "tmpfs", path])
        if status != 0:
            raise SystemExit("--disk-full-every needs to mount a tmpfs at %s (run as root)" % path)
        self.episodes = 0
        self.full_seconds = 0.0

    def fill(self):
        """Writes a file until the file system is full."""
        self.episodes += 1
        self.free()
        chunk = b"\0" * (1 << 16)
        try:
            with open(self.filler, "wb", buffering=0) as f:
                while True:
                    f.write(chunk)
        except OSError:
            pass   # ENOSPC: full (possibly already, from the stores' own growth)

    def free(self):
        try:
            os.remove(self.filler)
        except OSError:
            pass

    def unmount(self):
        self.free()
        subprocess.call(["umount", "-l", self.path])


def verify(directory, ledgers):
    """Rows lost and wrong values, read from the store files directly."""
    rows = {}
    integrity = {}
    for store in STORES:
        db = sqlite3.connect("file:%s/%s.sqlite?mode=ro" % (directory, store), uri=True)
        integrity[store] = db.execute("PRAGMA integrity_check").fetchone()[0]
        for pk, tail, color in db.execute('SELECT _pk, tailNumber, colorScheme_primary FROM Aircraft'):
            rows[(store, tail)] = (pk, color)
        db.close()
    lost, resurrected, wrong = [], [], []
    objects = {key: entry for ledger in ledgers for key, entry in ledger.objects.items()}
    for key, entry in objects.items():
        found = rows.get(key)
        if entry["deleted"] == "yes":
            if found is not None:
                resurrected.append(key)
        elif entry["deleted"] == "no":
            if found is None:
                lost.append(key)
            elif found[0] != entry["pk"] or found[1] not in entry["colors"]:
                wrong.append((key, found, sorted(entry["colors"])))
        # "maybe": a delete whose reply never came may or may not have happened.
    return {"acknowledged_objects": len(objects), "rows_in_stores": len(rows), "rows_lost": len(lost),
            "deleted_rows_back": len(resurrected), "wrong_values": len(wrong), "integrity": integrity,
            "examples": [str(x) for x in (lost + resurrected + wrong)[:5]]}


# MARK: - Main


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--minutes", type=float, default=30, help="how long to run (default 30)")
    parser.add_argument("--clients", type=int, default=16, help="data-socket clients (default 16)")
    parser.add_argument("--kill-every", type=float, default=60, help="seconds between kill -9s, +-30%% (default 60; 0: never)")
    parser.add_argument("--stratad", help="the stratad binary (default .build/release/stratad, else .build/debug/stratad)")
    parser.add_argument("--directory", help="where the stores, sockets and log go (default: a new temporary directory)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")
    parser.add_argument("--disk-full-every", type=float, default=0, help="seconds between disk-full episodes, +-30%% (default 0: never; root)")
    parser.add_argument("--disk-full-seconds", type=float, default=3, help="how long each disk-full episode lasts (default 3)")
    parser.add_argument("--disk-mib", type=int, default=256, help="size of the tmpfs the stores live on with --disk-full-every (default 256)")
    parser.add_argument("--pause-every", type=float, default=0, help="seconds between SIGSTOP pauses of 0.5-3 s, +-30%% (default 0: never)")
    parser.add_argument("--deferred-rows", type=int, default=0, help="seed each store with this many rows and keep deferred work pending (default 0: none)")
    args = parser.parse_args()
    if not 0 <= args.deferred_rows <= 10_000_000:
        parser.error("--deferred-rows must be 0-10000000")
    if args.minutes <= 0 or args.clients <= 0 or args.kill_every < 0 or args.disk_full_every < 0 or args.pause_every < 0:
        parser.error("--minutes and --clients must be positive, --kill-every, --disk-full-every and --pause-every not negative")
    if not 8 <= args.disk_mib <= 65536 or not 0 < args.disk_full_seconds <= 600:
        parser.error("--disk-mib must be 8-65536, --disk-full-seconds more than 0 and at most 600")
    stratad = args.stratad or next((p for p in (os.path.join(ROOT, ".build/release/stratad"), os.path.join(ROOT, ".build/debug/stratad"))
                                    if os.access(p, os.X_OK)), None)
    if stratad is None:
        parser.error("no stratad binary: build one (swift build -c release --product stratad) or pass --stratad")
    directory = args.directory or tempfile.mkdtemp(prefix="strata-soak-")
    os.makedirs(os.path.join(directory, "run"), exist_ok=True)

    disk = DiskFull(os.path.join(directory, "data"), args.disk_mib) if args.disk_full_every else None
    data_directory = disk.path if disk else directory
    deferred = None
    if args.deferred_rows:
        deferred = soak_deferred.DeferredWork(directory, os.path.join(os.path.dirname(stratad), "stratactl"), args.deferred_rows)
        for name in STORES:
            deferred.seed(os.path.join(data_directory, name + ".sqlite"), name)
    daemon = Daemon(stratad, directory, data_directory, deferred=deferred)
    daemon.start()
    ledgers, stats, stop = [Ledger() for _ in range(args.clients)], Stats(), threading.Event()
    threads = [threading.Thread(target=client, args=(i, daemon.data_socket, ledgers[i], stats, stop, args.seed), daemon=True)
               for i in range(args.clients)]
    threads.append(threading.Thread(target=admin_client, args=(daemon.admin_socket, stats, stop), daemon=True))
    for thread in threads:
        thread.start()

    try:
        status = run(args, daemon, disk, threads, stop, stats, ledgers, directory, stratad)
    except BaseException:
        daemon.process.send_signal(signal.SIGCONT)
        daemon.process.kill()
        if disk:
            disk.unmount()
        raise
    sys.exit(status)


def run(args, daemon, disk, threads, stop, stats, ledgers, directory, stratad):
    """The soak itself, its verification and its report."""
    rng = random.Random(args.seed)
    started = time.monotonic()
    end = started + args.minutes * 60
    next_kill = started + args.kill_every * rng.uniform(0.7, 1.3) if args.kill_every else float("inf")
    next_full = started + args.disk_full_every * rng.uniform(0.7, 1.3) if disk else float("inf")
    next_pause = started + args.pause_every * rng.uniform(0.7, 1.3) if args.pause_every else float("inf")
    kills, pauses, paused_seconds, full_until = 0, 0, 0.0, None
    data_directory = daemon.data_directory
    during = {"kills": 0, "pauses": 0, "disk_full_episodes": 0}

    def finishing():
        """Whether some store has deferred work pending now (read from the store files)."""
        return bool(daemon.deferred) and any(daemon.deferred.pending(os.path.join(data_directory, name + ".sqlite")) for name in STORES)

    while time.monotonic() < end:
        time.sleep(0.5)
        daemon.sample_rss()
        now = time.monotonic()
        if full_until is not None and now >= full_until:
            disk.free()
            full_until = None
        if disk and full_until is None and now >= next_full:
            during["disk_full_episodes"] += finishing()
            disk.fill()
            disk.full_seconds += args.disk_full_seconds
            full_until = now + args.disk_full_seconds
            next_full = now + args.disk_full_every * rng.uniform(0.7, 1.3)
        if now >= next_pause:
            seconds = rng.uniform(0.5, 3)
            during["pauses"] += finishing()
            daemon.pause(seconds)
            pauses += 1
            paused_seconds += seconds
            next_pause = time.monotonic() + args.pause_every * rng.uniform(0.7, 1.3)
        if time.monotonic() >= next_kill:
            during["kills"] += finishing()
            daemon.kill()
            kills += 1
            if disk:
                disk.free()   # a restart needs room to open the stores; the next episode comes
                full_until = None
            if daemon.deferred:
                daemon.deferred.check_backups(data_directory)
                for name in STORES:
                    daemon.deferred.advance(name, os.path.join(data_directory, name + ".sqlite"))
            daemon.start()
            next_kill = time.monotonic() + args.kill_every * rng.uniform(0.7, 1.3)
    if disk:
        disk.free()
    stop.set()
    for thread in threads:
        thread.join(timeout=60)
    elapsed = time.monotonic() - started
    finish_seconds = None
    if daemon.deferred:
        # Nobody writes now: the scheduler finishes what is pending.
        waiting = time.monotonic()
        while finishing() and time.monotonic() - waiting < 600:
            time.sleep(1)
        finish_seconds = round(time.monotonic() - waiting, 1)
    daemon.stop()

    result = verify(disk.path if disk else directory, ledgers)
    deferred_report = None
    if daemon.deferred:
        work = daemon.deferred
        work.check_backups(data_directory)
        left = {name: work.pending(os.path.join(data_directory, name + ".sqlite")) for name in STORES}
        fresh = {name: soak_deferred.schema(os.path.join(data_directory, name + ".sqlite")) == work.fresh_schema(work.versions[name])
                 for name in STORES}
        deferred_report = {"rows_seeded_per_store": work.rows, "hops": work.hops, "versions": work.versions,
                            "faults_during_finishing": during, "finish_after_load_s": finish_seconds,
                            "finishing_completed": all(tasks == [] for tasks in left.values()), "schema_fresh": fresh,
                            "backups_checked": work.backups_checked, "backups_failed": work.backups_failed}
    if disk:
        disk.unmount()
    lives = [{"pid": life["pid"], "ready_ms": life["ready_ms"], "ended": life.get("ended"),
              "rss_first_mib": round(life["rss_kib"][0] / 1024, 1) if life["rss_kib"] else None,
              "rss_last_mib": round(life["rss_kib"][-1] / 1024, 1) if life["rss_kib"] else None,
              "rss_max_mib": round(max(life["rss_kib"]) / 1024, 1) if life["rss_kib"] else None,
              "samples": len(life["rss_kib"]),
              # RSS at every tenth of the life: growth that levels off is caches, a steady climb a leak.
              "rss_profile_mib": [round(life["rss_kib"][min(len(life["rss_kib"]) - 1, i * len(life["rss_kib"]) // 10)] / 1024, 1)
                                  for i in range(11)] if life["rss_kib"] else []} for life in daemon.lives]
    longest = max(daemon.lives, key=lambda life: len(life["rss_kib"]))
    report = {
        "minutes": round(elapsed / 60, 2), "clients": args.clients, "kill_every_s": args.kill_every, "stratad": stratad,
        "directory": directory, "load_average": os.getloadavg(),
        "requests": sum(stats.requests.values()), "requests_by_method": stats.requests,
        "requests_per_second": round(sum(stats.requests.values()) / elapsed, 1),
        "errors": stats.errors, "connection_failures": stats.connection_failures,
        "unacknowledged_calls": stats.unacknowledged, "kills": kills, "lives": lives,
        "disk_full_episodes": disk.episodes if disk else 0, "disk_full_seconds": disk.full_seconds if disk else 0,
        "pauses": pauses, "paused_seconds": round(paused_seconds, 1),
        "ready_ms_max": max(life["ready_ms"] for life in daemon.lives),
        "rss_growth_longest_life_mib": round((longest["rss_kib"][-1] - longest["rss_kib"][0]) / 1024, 1) if longest["rss_kib"] else None,
        "deferred": deferred_report, **result,
    }
    ok = result["rows_lost"] == 0 and result["deleted_rows_back"] == 0 and result["wrong_values"] == 0 \
        and all(value == "ok" for value in result["integrity"].values())
    if deferred_report:
        ok = ok and deferred_report["finishing_completed"] and all(deferred_report["schema_fresh"].values()) \
            and not deferred_report["backups_failed"] and deferred_report["backups_checked"] > 0
    report["ok"] = ok
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
    else:
        print("soak: %.1f min, %d clients, kill -9 every ~%gs (%d kills), stratad %s" % (
            report["minutes"], args.clients, args.kill_every, kills, stratad))
        print("requests: %d (%.1f/s) %s" % (report["requests"], report["requests_per_second"], json.dumps(stats.requests, sort_keys=True)))
        print("errors: %s; connection failures: %d; calls cut by a kill: %d" % (
            json.dumps(stats.errors, sort_keys=True) or "{}", stats.connection_failures, stats.unacknowledged))
        print("restarts: ready after %s ms (max %d)" % ([life["ready_ms"] for life in daemon.lives][:10], report["ready_ms_max"]))
        print("faults: %d disk-full episodes (%.0f s full), %d SIGSTOP pauses (%.1f s)" % (
            report["disk_full_episodes"], report["disk_full_seconds"], pauses, paused_seconds))
        for life in lives:
            print("  pid %(pid)s: RSS %(rss_first_mib)s -> %(rss_last_mib)s MiB (max %(rss_max_mib)s) over %(samples)s s, ended by %(ended)s" % life)
        if len(lives) == 1:
            print("  RSS at every tenth of the run (MiB): %s" % lives[0]["rss_profile_mib"])
        print("acknowledged objects: %d, rows in stores: %d, lost: %d, deleted but back: %d, wrong values: %d, integrity: %s" % (
            result["acknowledged_objects"], result["rows_in_stores"], result["rows_lost"], result["deleted_rows_back"],
            result["wrong_values"], result["integrity"]))
        if deferred_report:
            d = deferred_report
            print("deferred work: %d rows per store, %d hops (now %s); during finishing: %d kills, %d pauses, %d disk-full episodes"
                  % (d["rows_seeded_per_store"], d["hops"], json.dumps(d["versions"], sort_keys=True), d["faults_during_finishing"]["kills"],
                     d["faults_during_finishing"]["pauses"], d["faults_during_finishing"]["disk_full_episodes"]))
            print("  finishing completed: %s (%s s after the load stopped), schema = fresh: %s, backups checked: %d, failed: %s"
                  % (d["finishing_completed"], d["finish_after_load_s"], json.dumps(d["schema_fresh"], sort_keys=True),
                     d["backups_checked"], d["backups_failed"] or "none"))
        print("load average at the end: %.2f %.2f %.2f" % report["load_average"])
        print("OK" if ok else "FAILED: %s" % result["examples"])
    return 0 if ok else 1


if __name__ == "__main__":
    main()
