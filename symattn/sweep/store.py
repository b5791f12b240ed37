"""The results store of sweeps: one embedded SQLite file.

One row per analysis x canonical architecture x options x seed x symattn
version (the primary key), holding the full JSON result (with its
``provenance``), its exactness kind, its status (``ok``, ``failed``,
``timeout``, ``memory``), the error of a failed case, wall-clock seconds, the
peak resident memory and the worker that computed it. A second table records
the cases each sweep planned, so that ``symattn sweep --status`` can say how
far a store is without the spec.

Only the sweep's client writes (:func:`symattn.sweep.run.run_sweep`), each row in
its own transaction, so an interrupted sweep keeps every finished row and a
rerun computes only the missing ones. Rows of another symattn version are
never reused and never overwritten: they stay beside the current version's
and :meth:`Store.status` lists them per version.

Examples
--------
>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "s.sqlite")
>>> with Store(path) as store:
...     store.status()["versions"]
{}
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Iterable, Iterator

from symattn.core.errors import SymattnError

__all__ = ["Store", "SCHEMA_VERSION"]

#: Bumped when the tables change; a store of another schema is refused.
SCHEMA_VERSION = "1"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS results (
    analysis TEXT NOT NULL, architecture TEXT NOT NULL, options TEXT NOT NULL,
    seed INTEGER NOT NULL, version TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'timeout', 'memory')),
    kind TEXT, result TEXT, error TEXT NOT NULL DEFAULT '',
    seconds REAL NOT NULL DEFAULT 0, peak_rss INTEGER NOT NULL DEFAULT 0,
    host TEXT NOT NULL DEFAULT '', finished TEXT NOT NULL,
    PRIMARY KEY (analysis, architecture, options, seed, version));
CREATE TABLE IF NOT EXISTS planned (
    analysis TEXT NOT NULL, architecture TEXT NOT NULL, options TEXT NOT NULL,
    seed INTEGER NOT NULL, version TEXT NOT NULL, spec TEXT NOT NULL,
    PRIMARY KEY (analysis, architecture, options, seed, version));
"""


class Store:
    """A sweep results store in the SQLite file ``path`` (created if missing).

    Parameters
    ----------
    path : the SQLite file
    create : create the file if it does not exist (else a missing file is an error)
    version : the symattn version whose rows are read and written (default: this one)
    """

    def __init__(self, path: "str | Path", create: bool = True, version: str | None = None):
        from symattn import __version__

        self.path = Path(path)
        self.version = version or __version__
        if not create and not self.path.exists():
            raise SymattnError(f"no store at {self.path}; run a sweep with --store {self.path} first")
        try:
            self._db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            damage = self._db.execute("PRAGMA quick_check").fetchone()[0]
            self._db.executescript(_SCHEMA)
            found = self._db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        except sqlite3.DatabaseError as exc:
            raise SymattnError(f"{self.path} is not a symattn store ({exc})") from None
        if damage != "ok":
            raise SymattnError(f"the store {self.path} is damaged ({damage}); restore a copy or "
                               "start a new --store")
        if found is None:
            self._db.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
        elif found[0] != SCHEMA_VERSION:
            raise SymattnError(f"{self.path} has store schema {found[0]}, this symattn reads "
                               f"{SCHEMA_VERSION}; use a new --store file")

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Close the database."""
        self._db.close()

    def plan(self, cases: Iterable, spec: str) -> None:
        """Record the cases a sweep will need (for :meth:`status`)."""
        with self._db:
            self._db.execute("BEGIN")
            self._db.executemany(
                "INSERT OR IGNORE INTO planned VALUES (?, ?, ?, ?, ?, ?)",
                [(*c.key, self.version, spec) for c in cases])

    def statuses(self, keys: Iterable[tuple]) -> dict[tuple, str]:
        """The stored status of each key present for this version."""
        out = {}
        for key in keys:
            row = self._db.execute(
                "SELECT status FROM results WHERE analysis = ? AND architecture = ? AND options = ? "
                "AND seed = ? AND version = ?", (*key, self.version)).fetchone()
            if row:
                out[key] = row[0]
        return out

    def put(self, case, row: dict, version: str) -> None:
        """Write one case's row (replacing a failed row of the same version), committed at once."""
        if version != self.version:
            raise SymattnError(f"this store handle reads symattn {self.version}, not {version}")
        self._db.execute(
            "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (*case.key, version, row["status"], row["kind"],
             None if row["result"] is None else json.dumps(row["result"], sort_keys=True),
             row["error"], row["seconds"], row["peak_rss"], row["host"],
             time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())))

    def rows(self, analysis: str | None = None) -> Iterator[dict]:
        """Rows of this version (optionally one analysis), with JSON decoded."""
        query = ("SELECT analysis, architecture, options, seed, status, kind, result, error, seconds, "
                 "peak_rss, host FROM results WHERE version = ?")
        args: tuple = (self.version,)
        if analysis is not None:
            query += " AND analysis = ?"
            args += (analysis,)
        for r in self._db.execute(query + " ORDER BY analysis, architecture, options, seed", args):
            yield {"analysis": r[0], "architecture": json.loads(r[1]), "options": json.loads(r[2]),
                   "seed": r[3], "status": r[4], "kind": r[5],
                   "result": None if r[6] is None else json.loads(r[6]), "error": r[7],
                   "seconds": r[8], "peak_rss": r[9], "host": r[10]}

    def status(self) -> dict:
        """Progress per symattn version: planned cases, rows by status, missing.

        Returns
        -------
        dict
            ``{"store": path, "current": version, "versions": {version: {"planned",
            "ok", "failed", "timeout", "memory", "missing", "by_analysis"}}}``.
        """
        versions: dict[str, dict] = {}
        for version, planned in self._db.execute(
                "SELECT version, COUNT(*) FROM planned GROUP BY version"):
            versions.setdefault(version, _empty())["planned"] = planned
        for version, analysis, status, count in self._db.execute(
                "SELECT version, analysis, status, COUNT(*) FROM results GROUP BY version, analysis, status"):
            v = versions.setdefault(version, _empty())
            v[status] += count
            v["by_analysis"].setdefault(analysis, {}).setdefault(status, 0)
            v["by_analysis"][analysis][status] += count
        for version, missing in self._db.execute(
                "SELECT p.version, COUNT(*) FROM planned p LEFT JOIN results r USING "
                "(analysis, architecture, options, seed, version) WHERE r.status IS NULL "
                "GROUP BY p.version"):
            versions[version]["missing"] = missing
        return {"store": str(self.path), "current": self.version, "versions": versions}


def _empty() -> dict:
    return {"planned": 0, "ok": 0, "failed": 0, "timeout": 0, "memory": 0, "missing": 0,
            "by_analysis": {}}
