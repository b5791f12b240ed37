"""The results store of sweeps: one embedded SQLite file that knows it is one.

One row per analysis x canonical architecture x options x seed x symattn
version (the primary key), holding the full JSON result (with its
``provenance``), its exactness kind, its status (``ok``, ``failed``,
``timeout``, ``memory``), the error of a failed case, wall-clock seconds, the
peak resident memory and the worker that computed it. A second table records
the cases each sweep planned, so that ``symattn sweep --status`` can say how
far a store is without the spec.

**A store recognises itself.** A new store is made in a temporary file in the
same folder, stamped with SQLite's ``application_id`` (:data:`APPLICATION_ID`,
"SyAt") and ``user_version`` (:data:`SCHEMA_VERSION`) and linked into place, so
no half-made or empty store is ever left under the name. An existing file is
read only after its 100-byte SQLite header shows symattn's application id and
schema (read directly, before SQLite opens the file, so a foreign database with
a hot journal is never rolled back), and its tables are checked column by
column before anything is computed. A file that is empty, not SQLite, another
application's database (a browser's history, an experiment database with its
own ``results`` table) or a store of another schema is refused with one line
and left byte for byte as it was. (A store of symattn 0.1 made before the
application id existed, with exactly this schema, is recognised by its tables
and stamped on its first write.)

**Writers are serialised and never lose a result.** Every write is one
``BEGIN IMMEDIATE`` transaction in write-ahead-log mode with a busy timeout
(:data:`BUSY_SECONDS`), so two sweeps on one store take turns; a store locked
for longer is refused with one line. A stored ``ok`` row is never replaced: a
later timeout or failure of the same case (from another sweep) is dropped and
:meth:`Store.put` says so. Rows of another symattn version are never reused and
never overwritten: they stay beside the current version's and
:meth:`Store.status` lists them per version. ``symattn sweep --status`` and
``symattn atlas`` open the store read-only.

Examples
--------
>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "s.sqlite")
>>> with Store(path) as store:
...     store.status()["versions"]
{}
>>> with open(path, "rb") as f:
...     header = f.read(100)
>>> int.from_bytes(header[68:72], "big") == APPLICATION_ID, int.from_bytes(header[60:64], "big")
(True, 1)
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import stat
import tempfile
import time
import urllib.parse
from pathlib import Path
from typing import Iterable, Iterator

from symattn.core.errors import SymattnError

__all__ = ["Store", "SCHEMA_VERSION", "APPLICATION_ID", "BUSY_SECONDS", "MAX_JSON_NESTING"]

#: Bumped when the tables change; a store of another schema is refused. Also the ``user_version``.
SCHEMA_VERSION = "1"
#: SQLite ``application_id`` of a symattn store (the bytes "SyAt").
APPLICATION_ID = int.from_bytes(b"SyAt", "big")
#: Seconds a write waits for another writer's transaction before the store is refused as locked.
BUSY_SECONDS = 60.0
#: Deepest nesting of lists and objects accepted in a stored JSON value.
MAX_JSON_NESTING = 64

_SQLITE_MAGIC = b"SQLite format 3\x00"
_TABLES = {
    "meta": ("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)", ["key", "value"]),
    "results": ("""CREATE TABLE results (
    analysis TEXT NOT NULL, architecture TEXT NOT NULL, options TEXT NOT NULL,
    seed INTEGER NOT NULL, version TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'timeout', 'memory')),
    kind TEXT, result TEXT, error TEXT NOT NULL DEFAULT '',
    seconds REAL NOT NULL DEFAULT 0, peak_rss INTEGER NOT NULL DEFAULT 0,
    host TEXT NOT NULL DEFAULT '', finished TEXT NOT NULL,
    PRIMARY KEY (analysis, architecture, options, seed, version))""",
                ["analysis", "architecture", "options", "seed", "version", "status", "kind", "result",
                 "error", "seconds", "peak_rss", "host", "finished"]),
    "planned": ("""CREATE TABLE planned (
    analysis TEXT NOT NULL, architecture TEXT NOT NULL, options TEXT NOT NULL,
    seed INTEGER NOT NULL, version TEXT NOT NULL, spec TEXT NOT NULL,
    PRIMARY KEY (analysis, architecture, options, seed, version))""",
                ["analysis", "architecture", "options", "seed", "version", "spec"]),
}
_RESULT_COLUMNS = ", ".join(_TABLES["results"][1])
_UPDATE = ", ".join(f"{c} = excluded.{c}" for c in _TABLES["results"][1][5:])


class Store:
    """A sweep results store in the SQLite file ``path`` (see the module docstring).

    Parameters
    ----------
    path : the SQLite file
    create : create the file if it does not exist (else a missing file is an error)
    version : the symattn version whose rows are read and written (default: this one)
    readonly : open for reading only (``--status``, the atlas): nothing is ever written

    Raises
    ------
    SymattnError
        The file is missing (``create=False``), not a regular file, empty, not
        SQLite, another application's database, of another schema, damaged,
        locked, or unreadable; in every case it is left as it was.
    """

    def __init__(self, path: "str | Path", create: bool = True, version: str | None = None,
                 readonly: bool = False):
        from symattn import __version__
        from symattn.core.validate import require_path, require_str

        self.path = Path(require_path(path, "store path"))
        if version is not None:
            require_str(version, "version", 60)
        self.version = version or __version__
        self.readonly = readonly
        self._stamp = False  # a store of symattn 0.1 without the application id: stamp on first write
        if not _exists(self.path):
            if not create or readonly:
                raise SymattnError(f"no store at {self.path}; run a sweep with --store {self.path} first")
            _create(self.path)
        self._check_header()
        if self._stamp:  # decide from the tables, read without locking or writing anything
            self._db = self._connect("?mode=ro&immutable=1")
            try:
                with self._guard("read"):
                    self._check_tables()
            finally:
                self._db.close()
        if _writable(self.path):
            self._db = self._connect(None)
        elif readonly:  # nothing can change it: read it as it is, without SQLite's side files
            self._db = self._connect("?mode=ro&immutable=1")
        else:
            raise SymattnError(f"cannot write the store {self.path}: it is read-only; give a "
                               "writable --store")
        try:
            with self._guard("read"):
                if readonly:  # a handle that refuses writes (on closing, SQLite removes its WAL files)
                    self._db.execute("PRAGMA query_only = ON")
                damage = self._db.execute("PRAGMA quick_check").fetchone()[0]
                self._check_tables()
                if not readonly and not self._stamp:
                    self._db.execute("PRAGMA journal_mode = WAL")
        except SymattnError:
            self._db.close()
            raise
        if damage != "ok":
            self._db.close()
            raise SymattnError(f"the store {self.path} is damaged ({damage}); restore a copy or "
                               "start a new --store")

    # -- recognising a store -----------------------------------------------------------------
    def _check_header(self) -> None:
        """Refuse, from the file's first 100 bytes alone, anything that is not a symattn store."""
        try:
            info = os.stat(self.path)
            if not stat.S_ISREG(info.st_mode):
                kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file"
                raise SymattnError(f"the store {self.path} is {kind}; give a store file")
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
            with os.fdopen(fd, "rb") as fh:
                header = fh.read(100)
        except OSError as exc:
            raise SymattnError(f"cannot read the store {self.path}: {exc.strerror or exc}") from None
        if not header:
            raise SymattnError(f"{self.path} is an empty file, not a symattn store; it was left "
                               "untouched: remove it or give another --store")
        if len(header) < 100 or not header.startswith(_SQLITE_MAGIC):
            raise SymattnError(f"{self.path} is not a symattn store (not an SQLite database); it "
                               "was left untouched: give another --store")
        user_version = int.from_bytes(header[60:64], "big")
        application = int.from_bytes(header[68:72], "big")
        if application == APPLICATION_ID:
            if str(user_version) != SCHEMA_VERSION:
                raise SymattnError(f"{self.path} has store schema {user_version}, this symattn reads "
                                   f"{SCHEMA_VERSION}; use a new --store file")
        elif application == 0 and user_version == 0:
            self._stamp = True  # maybe a symattn 0.1 store: its tables decide (_check_tables)
        else:
            raise SymattnError(f"{self.path} is not a symattn store (an SQLite database of another "
                               f"application, id {application:#x}); it was left untouched: give "
                               "another --store")

    def _connect(self, query: str | None) -> sqlite3.Connection:
        try:
            if query is None:
                return sqlite3.connect(self.path, timeout=BUSY_SECONDS, isolation_level=None)
            uri = "file:" + urllib.parse.quote(str(self.path.resolve())) + query
            return sqlite3.connect(uri, uri=True, timeout=BUSY_SECONDS, isolation_level=None)
        except sqlite3.Error as exc:
            raise SymattnError(f"cannot open the store {self.path}: {exc}") from None

    def _check_tables(self) -> None:
        tables = {name for (name,) in self._db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        foreign = f"{self.path} is not a symattn store (an SQLite database with other tables); " \
                  "it was left untouched: give another --store"
        if not set(_TABLES) <= tables or (self._stamp and tables != set(_TABLES)):
            raise SymattnError(foreign)
        for name, (_, columns) in _TABLES.items():
            found = [row[1] for row in self._db.execute(f"PRAGMA table_info({name})")]
            if found != columns:
                if self._stamp:
                    raise SymattnError(foreign)
                raise SymattnError(f"the store {self.path} has a table {name} with columns "
                                   f"{', '.join(found)}, not symattn's ({', '.join(columns)}); it was "
                                   "changed outside symattn: restore a copy or start a new --store")
        schema = self._db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if schema is None or schema[0] != SCHEMA_VERSION:
            if self._stamp:
                raise SymattnError(foreign)
            raise SymattnError(f"{self.path} has store schema {schema[0] if schema else 'none'}, "
                               f"this symattn reads {SCHEMA_VERSION}; use a new --store file")

    # -- guarded access ------------------------------------------------------------------------
    @contextlib.contextmanager
    def _guard(self, doing: str) -> Iterator[None]:
        """Turn every SQLite failure into one line naming the store."""
        try:
            yield
        except sqlite3.OperationalError as exc:
            text = str(exc)
            if "locked" in text or "busy" in text:
                raise SymattnError(f"the store {self.path} is locked by another writer for more than "
                                   f"{BUSY_SECONDS:g} s; wait for it or give another --store") from None
            if "unable to open" in text:
                raise SymattnError(f"cannot {doing} the store {self.path}: SQLite cannot open its "
                                   "journal (is the folder read-only?); give a --store in a "
                                   "writable folder") from None
            if "readonly" in text or "read-only" in text:
                raise SymattnError(f"cannot write the store {self.path}: it is read-only (or its "
                                   "folder is); give a writable --store") from None
            raise SymattnError(f"cannot {doing} the store {self.path}: {text}") from None
        except sqlite3.DatabaseError as exc:
            raise SymattnError(f"the store {self.path} is damaged ({exc}); restore a copy or start "
                               "a new --store") from None
        except sqlite3.Error as exc:
            raise SymattnError(f"cannot {doing} the store {self.path}: {exc}") from None

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One immediate transaction (the write lock at once; the busy timeout applies)."""
        if self.readonly:
            raise SymattnError(f"the store {self.path} was opened read-only")
        with self._guard("write"):
            self._db.execute("BEGIN IMMEDIATE")
            try:
                if self._stamp:  # a symattn 0.1 store, recognised by its tables: stamp it now
                    self._db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                    self._db.execute(f"PRAGMA user_version = {int(SCHEMA_VERSION)}")
                yield self._db
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        if self._stamp:
            self._stamp = False
            with self._guard("write"):
                self._db.execute("PRAGMA journal_mode = WAL")

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Close the database."""
        self._db.close()

    # -- rows ------------------------------------------------------------------------------------
    def plan(self, cases: Iterable, spec: str) -> None:
        """Record the cases a sweep will need (for :meth:`status`)."""
        rows = [(*c.key, self.version, spec) for c in cases]
        with self._write() as db:
            db.executemany("INSERT OR IGNORE INTO planned VALUES (?, ?, ?, ?, ?, ?)", rows)

    def statuses(self, keys: Iterable[tuple]) -> dict[tuple, str]:
        """The stored status of each key present for this version."""
        out = {}
        with self._guard("read"):
            for key in keys:
                row = self._db.execute(
                    "SELECT status FROM results WHERE analysis = ? AND architecture = ? AND options = ? "
                    "AND seed = ? AND version = ?", (*key, self.version)).fetchone()
                if row:
                    out[key] = row[0]
        return out

    def put(self, case, row: dict, version: str) -> bool:
        """Write one case's row, committed at once; return whether it was stored.

        A new row replaces a failed, timed-out or over-memory row of the same
        case and version; it never replaces an ``ok`` row (another sweep on the
        same store may have finished the case first): then nothing is written
        and the result is False.
        """
        if version != self.version:
            raise SymattnError(f"this store handle reads symattn {self.version}, not {version}")
        values = (*case.key, version, row["status"], row["kind"],
                  None if row["result"] is None else json.dumps(row["result"], sort_keys=True),
                  row["error"], row["seconds"], row["peak_rss"], row["host"],
                  time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        with self._write() as db:
            cursor = db.execute(
                f"INSERT INTO results ({_RESULT_COLUMNS}) VALUES ({', '.join('?' * len(values))}) "
                "ON CONFLICT (analysis, architecture, options, seed, version) DO UPDATE SET "
                f"{_UPDATE} WHERE results.status != 'ok'", values)
            return cursor.rowcount == 1

    def rows(self, analysis: str | None = None) -> Iterator[dict]:
        """Rows of this version (optionally one analysis), with JSON decoded.

        Raises
        ------
        SymattnError
            A row whose JSON is invalid or nested beyond :data:`MAX_JSON_NESTING`
            (a store changed outside symattn).
        """
        query = ("SELECT analysis, architecture, options, seed, status, kind, result, error, seconds, "
                 "peak_rss, host FROM results WHERE version = ?")
        args: tuple = (self.version,)
        if analysis is not None:
            query += " AND analysis = ?"
            args += (analysis,)
        with self._guard("read"):
            found = self._db.execute(query + " ORDER BY analysis, architecture, options, seed",
                                     args).fetchall()
        for r in found:
            where = f"{r[0]!s:.20} {r[1]!s:.80}"
            yield {"analysis": r[0], "architecture": self._json(r[1], where), "options": self._json(r[2], where),
                   "seed": r[3], "status": r[4], "kind": r[5],
                   "result": None if r[6] is None else self._json(r[6], where), "error": r[7],
                   "seconds": r[8], "peak_rss": r[9], "host": r[10]}

    def _json(self, text, where: str):
        from symattn.core.validate import nesting_depth

        bad = f"the store {self.path} has a row ({where}) whose JSON "
        if not isinstance(text, str):
            raise SymattnError(bad + "is not text; the store was changed outside symattn")
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            raise SymattnError(bad + "is invalid or nested too deeply; the store was changed "
                               "outside symattn") from None
        if nesting_depth(value, MAX_JSON_NESTING) > MAX_JSON_NESTING:
            raise SymattnError(bad + f"nests more than {MAX_JSON_NESTING} deep; the store was "
                               "changed outside symattn")
        return value

    def status(self) -> dict:
        """Progress per symattn version: planned cases, rows by status, missing.

        Returns
        -------
        dict
            ``{"store": path, "current": version, "versions": {version: {"planned",
            "ok", "failed", "timeout", "memory", "missing", "by_analysis"}}}``.
        """
        versions: dict[str, dict] = {}
        with self._guard("read"):
            for version, planned in self._db.execute(
                    "SELECT version, COUNT(*) FROM planned GROUP BY version"):
                versions.setdefault(str(version), _empty())["planned"] = planned
            for version, analysis, status, count in self._db.execute(
                    "SELECT version, analysis, status, COUNT(*) FROM results "
                    "GROUP BY version, analysis, status"):
                v = versions.setdefault(str(version), _empty())
                v[status] += count
                v["by_analysis"].setdefault(str(analysis), {}).setdefault(status, 0)
                v["by_analysis"][str(analysis)][status] += count
            for version, missing in self._db.execute(
                    "SELECT p.version, COUNT(*) FROM planned p LEFT JOIN results r USING "
                    "(analysis, architecture, options, seed, version) WHERE r.status IS NULL "
                    "GROUP BY p.version"):
                versions[str(version)]["missing"] = missing
        return {"store": str(self.path), "current": self.version, "versions": versions}


def _exists(path: Path) -> bool:
    """Whether ``path`` names anything (a dangling link counts: it is refused, never followed)."""
    try:
        os.lstat(path)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise SymattnError(f"cannot read the store {path}: {exc.strerror or exc}") from None
    if os.path.islink(path) and not os.path.exists(path):
        raise SymattnError(f"the store {path} is a symbolic link to nothing; give a store file")
    return True


def _writable(path: Path) -> bool:
    """Whether ``path`` opens for writing (refused by permissions, a read-only file system or
    an immutable file), tested before SQLite opens it."""
    try:
        os.close(os.open(path, os.O_RDWR | getattr(os, "O_NONBLOCK", 0)))
    except OSError:
        return False
    return True


def _leftovers(folder: Path, name: str) -> Iterator[Path]:
    """The temporary files a store creation under ``name`` left in ``folder`` when its process was
    killed (SIGKILL) before it could remove them: named as :func:`_create` names them, empty or
    a SQLite file of symattn's (or not yet stamped), and not locked by a living creator (each
    holds an exclusive ``flock`` on its file until it is done; a dead process holds none)."""
    import fcntl
    import re

    pattern = re.compile(re.escape(f".{name[:80]}.") + r"[A-Za-z0-9_]{8}\.tmp")
    try:
        entries = [e for e in os.scandir(folder) if pattern.fullmatch(e.name)]
    except OSError:
        return
    for entry in entries:
        try:
            fd = os.open(entry.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        except OSError:
            continue
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                continue
            header = os.read(fd, 100)
            application = int.from_bytes(header[68:72], "big") if len(header) == 100 else 0
            if header and (not header.startswith(_SQLITE_MAGIC) or application not in (0, APPLICATION_ID)):
                continue  # not a store in the making: not symattn's to remove
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # a living creator holds it
            yield Path(entry.path)
        finally:
            os.close(fd)


def _create(path: Path) -> None:
    """Make a new, stamped store in a temporary file beside ``path`` and link it into place (the
    temporary files of a creation that was killed are removed first: :func:`_leftovers`)."""
    import fcntl

    folder = path.parent
    if not folder.is_dir():
        raise SymattnError(f"no folder {folder} for the store {path}")
    for leftover in _leftovers(folder, path.name):
        for name in (leftover, Path(f"{leftover}-journal"), Path(f"{leftover}-wal"), Path(f"{leftover}-shm")):
            with contextlib.suppress(OSError):
                os.unlink(name)
    lock = None
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.name[:80]}.", suffix=".tmp")
        lock = fd  # held until the store is in place: see _leftovers
        fcntl.flock(lock, fcntl.LOCK_EX)
        mask = os.umask(0o22)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
    except OSError as exc:
        if lock is not None:
            os.close(lock)
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise SymattnError(f"cannot make the store {path}: {exc.strerror or exc}; give a writable "
                           "--store") from None
    try:
        db = sqlite3.connect(tmp, isolation_level=None)
        try:
            db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            db.execute(f"PRAGMA user_version = {int(SCHEMA_VERSION)}")
            db.execute("BEGIN")
            for sql, _ in _TABLES.values():
                db.execute(sql)
            db.execute("INSERT INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
            db.execute("COMMIT")
            db.execute("PRAGMA journal_mode = WAL")
        finally:
            db.close()
        try:
            os.link(tmp, path)  # never replaces a store another sweep made meanwhile
        except FileExistsError:
            pass
        except OSError:  # no hard links here: the same, without the guarantee
            if not os.path.exists(path):
                os.replace(tmp, path)
    except (OSError, sqlite3.Error) as exc:
        raise SymattnError(f"cannot make the store {path}: {getattr(exc, 'strerror', None) or exc}; "
                           "give a writable --store") from None
    finally:
        for leftover in (tmp, tmp + "-journal", tmp + "-wal", tmp + "-shm"):
            with contextlib.suppress(OSError):
                os.unlink(leftover)
        if lock is not None:
            os.close(lock)


def _empty() -> dict:
    return {"planned": 0, "ok": 0, "failed": 0, "timeout": 0, "memory": 0, "missing": 0,
            "by_analysis": {}}
