"""Deferred work for scripts/soak.py and scripts/kill-loop.py: stores that carry pending
finishing work, and the checks once it is done.

Model versions "Soak 1" ... "Soak N+1" of the Aircraft entity (the soak clients' fields are in
every version). "Soak 1" has N extra text columns x1 ... xN. Each hop Soak k -> Soak k+1 drops
column x<k> (a deferred table rewrite), builds an index on aircraftType or aircraftClass in turn
(a deferred index build) and drops the other one (a deferred index drop). With `backup: true`
each hop is backed up online first, so every step of finishing is exercised: backup, rewrite
with verify-before-swap, index builds and drops, table drop, vacuum.

A store is seeded at "Soak 1" with ROWS rows (one through `stratactl import`, the rest with
SQL) and served at "Soak 2". When
its ledger is empty, `advance` moves it to the next version; a daemon restart (after a kill)
migrates it and leaves new deferred work.
"""

import json
import os
import sqlite3
import subprocess
import tempfile

HOPS = 12
# Finishing runs while the soak's clients write: the scheduler ignores their load.
SCHEDULER = """scheduler:
  idle_after: 1s
  signals: requests
  request_rate: 1000000
  batch_budget: 20ms
  pause_between_batches: 10ms
"""
METADATA = ("_strata_metadata", "_strata_history", "_strata_deferred", "_strata_transactions",
            "_strata_object_changes", "_strata_change_names")


def model_yaml(version):
    """The Aircraft entity at `Soak <version>`."""
    lines = ["version: Soak %d" % version]
    if version <= HOPS:
        lines.append("nextVersion: Soak %d" % (version + 1))
    lines += ["entities:", "  - name: Aircraft", "    attributes:",
              "      - {name: tailNumber, type: string, optional: false}"]
    for name in ("aircraftType", "aircraftCategory", "aircraftClass"):
        lines.append("      - {name: %s, type: string}" % name)
    for column in range(version, HOPS + 1):
        lines.append("      - {name: x%d, type: string}" % column)
    lines += ["    composites:", "      - name: colorScheme", "        elements:"]
    for name in ("primary", "secondary", "tertiary"):
        lines.append("          - {name: %s, type: string}" % name)
    indexed = "aircraftType" if version % 2 == 0 else "aircraftClass"
    lines += ["    indexes:", "      - {name: byPrimaryColor, elements: [colorScheme.primary]}",
              "      - {name: by_%s, elements: [%s]}" % (indexed, indexed)]
    return "\n".join(lines) + "\n"


class DeferredWork:
    """The soak stores' model, versions and deferred work."""

    def __init__(self, directory, stratactl, rows, scheduler=SCHEDULER):
        self.models = os.path.join(directory, "models")
        self.stratactl = stratactl
        self.rows = rows
        self.scheduler = scheduler
        os.makedirs(self.models, exist_ok=True)
        for version in range(1, HOPS + 2):
            with open(os.path.join(self.models, "Soak %d.yaml" % version), "w") as f:
                f.write(model_yaml(version))
        with open(os.path.join(self.models, "versions.yaml"), "w") as f:
            f.write("current: Soak %d\nversions:\n" % (HOPS + 1))
            for version in range(1, HOPS + 2):
                f.write("  - {version: Soak %d, file: Soak %d.yaml}\n" % (version, version))
        self.versions = {}
        self.hops = 0
        self.backups_checked = 0
        self.backups_failed = []

    def seed(self, path, store):
        """Creates `path` with `rows` aircraft at "Soak 1"; the store is served at "Soak 2"."""
        self.versions[store] = "Soak 2"
        if os.path.exists(path):
            return
        partial = path + ".seeding"
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(partial + suffix):
                os.remove(partial + suffix)
        colors = ["red", "white", "blue", "green", "yellow", "black", "silver", "orange"]
        # One object through `stratactl import` creates the store at "Soak 1"; the rest are
        # inserted with SQL in one transaction (seconds instead of minutes for 500k rows).
        first = {"tailNumber": "S0000001", "aircraftType": "T1", "aircraftCategory": "airplane", "aircraftClass": "land",
                 "colorScheme": {"primary": colors[1], "secondary": colors[0], "tertiary": colors[0]}}
        for column in range(1, HOPS + 1):
            first["x%d" % column] = "extra-%d-1" % column
        subprocess.run([self.stratactl, "import", partial, "--model", self.models, "--version", "Soak 1", "--entity", "Aircraft", "-"],
                       input=(json.dumps(first) + "\n").encode(), stdout=subprocess.DEVNULL, check=True)
        db = sqlite3.connect(partial)
        extras = ", ".join("x%d" % c for c in range(1, HOPS + 1))
        values = ", ".join("'extra-%d-' || i" % c for c in range(1, HOPS + 1))
        case = lambda expr: "CASE %s %s END" % (expr, " ".join("WHEN %d THEN '%s'" % (k, color) for k, color in enumerate(colors)))
        db.execute("WITH RECURSIVE n(i) AS (SELECT 2 UNION ALL SELECT i + 1 FROM n WHERE i < ?) "
                   "INSERT INTO Aircraft(_pk, tailNumber, aircraftType, aircraftCategory, aircraftClass, colorScheme_primary, "
                   "colorScheme_secondary, colorScheme_tertiary, %s) SELECT i, printf('S%%07d', i), 'T' || (i %% 40), 'airplane', "
                   "CASE WHEN i %% 7 = 0 THEN 'sea' ELSE 'land' END, %s, %s, %s, %s FROM n"
                   % (extras, case("i % 8"), case("i / 8 % 8"), case("i / 64 % 8"), values), (self.rows,))
        db.commit()
        db.close()
        os.rename(partial, path)
        for suffix in ("-wal", "-shm"):
            if os.path.exists(partial + suffix):
                os.remove(partial + suffix)

    @staticmethod
    def pending(path):
        """The store's pending tasks as (kind, progress), read directly; None if unreadable now."""
        try:
            db = sqlite3.connect("file:%s?mode=ro" % path, uri=True, timeout=5)
            try:
                rows = db.execute("SELECT kind, progress FROM _strata_deferred WHERE state != 'done' "
                                  "ORDER BY kind != 'backup', kind = 'incrementalVacuum', id").fetchall()
            finally:
                db.close()
        except sqlite3.Error:
            return None
        return [(kind, json.loads(progress) if progress else {}) for kind, progress in rows]

    def advance(self, store, path):
        """Moves a store whose deferred work is done to its next version (at the next start)."""
        current = int(self.versions[store].split()[1])
        if current > HOPS or self.pending(path) != []:
            return False
        self.versions[store] = "Soak %d" % (current + 1)
        self.hops += 1
        return True

    def check_backups(self, data_directory):
        """Complete online backups: each must pass integrity_check; checked ones are removed
        (the disk they live on is small)."""
        for name in sorted(os.listdir(data_directory)):
            if ".pre-migration-" not in name or name.endswith((".partial", "-wal", "-shm", "-journal")):
                continue
            path = os.path.join(data_directory, name)
            try:
                db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
                result = db.execute("PRAGMA integrity_check").fetchone()[0]
                db.close()
            except sqlite3.Error as error:
                result = str(error)
            self.backups_checked += 1
            if result != "ok":
                self.backups_failed.append("%s: %s" % (name, result))
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(path + suffix):
                    os.remove(path + suffix)

    def fresh_schema(self, version):
        """The schema of a new, empty store at `version`."""
        directory = tempfile.mkdtemp(prefix="strata-fresh-")
        path = os.path.join(directory, "fresh.sqlite")
        subprocess.run([self.stratactl, "import", path, "--model", self.models, "--version", version, "--entity", "Aircraft", "-"],
                       input=b"", stdout=subprocess.DEVNULL, check=True)
        return schema(path)


def schema(path):
    """SchemaSnapshot.of (Sources/Strata/Migration/Inference/SchemaSnapshot.swift) in Python."""
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    rows = db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE type IN ('table', 'index', 'trigger') "
                      "AND sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' "
                      "AND tbl_name NOT LIKE '\\_litestream\\_%' ESCAPE '\\'").fetchall()
    db.close()
    return sorted("%s %s ON %s: %s" % (kind, name, table, normalize(sql)) for kind, name, table, sql in rows if table not in METADATA)


def normalize(sql):
    result, pending = "", False
    for character in sql:
        if character.isspace():
            pending = True
            continue
        if pending and result and result[-1] != "(" and character not in "),":
            result += " "
        pending = False
        result += character
    return result
