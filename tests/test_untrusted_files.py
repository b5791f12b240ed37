"""Nothing the user had is lost (issue 28): the second hostile corpus, replayed.

Each case of :data:`CORPUS` builds the files a user (or someone else) left
around, runs one command line, and checks the README contract: the exit status
(0, 1, 2 or 130; never 70), one ``symattn: error:`` line for bad input, no
traceback, and **nothing lost**: every file that existed before is byte for
byte as it was (a foreign database, a user's plot or thesis, the target of a
symbolic link), unless the case names it as one the command may write, and a
refused command leaves no new file (no half-made store, no temporary file).

The cases follow the issue's list: stores that are not symattn's, concurrent
and locked stores, output files and folders (existing files, links, devices,
files where folders are expected, read-only places), unescaped text from a
store, sweep specs beyond their documented limits, scheduler addresses and
silent servers, ``--spec`` TOML of ``symattn variant``, weight files and
malformed atlas rows. A hypothesis fuzzer then draws sweep specs and store
contents and asserts the same contract.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import http.server
import io
import json
import os
import re
import shutil
import socket
import sqlite3
import struct
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symattn.cli import main
from symattn.core.errors import SymattnError

SPEC_OK = 'analyses = ["jet"]\n[[grid]]\ndepth = 1\nwidth = [1, 2]\n'


# ------------------------------------------------------------------ the contract
def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


def snapshot(root: Path) -> dict[str, tuple]:
    """Every entry under ``root`` (not following links): kind and content hash or link target."""
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder, name)
            rel = str(path.relative_to(root))
            info = os.lstat(path)
            if os.path.islink(path):
                out[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                out[rel] = ("dir",)
            elif path.is_file():
                out[rel] = ("file", hashlib.sha256(path.read_bytes()).hexdigest(), info.st_mode & 0o777)
            else:
                out[rel] = ("special",)
    return out


@dataclass
class Ctx:
    """What a case's ``make`` gets: the working folder, monkeypatch, a template store."""

    tmp: Path
    monkeypatch: pytest.MonkeyPatch
    store: Path
    cleanups: list = field(default_factory=list)


@dataclass(frozen=True)
class Hostile:
    """One corpus case: ``make(ctx) -> argv``, its exit status, and the paths (relative to
    the working folder, prefixes allowed) that the command may create or change."""

    name: str
    make: Callable[[Ctx], list[str]]
    status: int
    may_change: tuple[str, ...] = ()
    message: str = ""  # a text the one error line (or stderr) must contain


def _write(ctx: Ctx, name: str, data: "str | bytes") -> str:
    path = ctx.tmp / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return str(path)


def _spec(ctx: Ctx, text: str, name: str = "s.toml") -> str:
    return _write(ctx, name, text)


def _copy_store(ctx: Ctx, name: str = "mine.sqlite") -> str:
    shutil.copy(ctx.store, ctx.tmp / name)
    return str(ctx.tmp / name)


def _database(ctx: Ctx, name: str, script: str) -> str:
    db = sqlite3.connect(ctx.tmp / name)
    db.executescript(script)
    db.close()
    return str(ctx.tmp / name)


def _browser_history(ctx: Ctx, name: str = "places.sqlite") -> str:
    return _database(ctx, name, "PRAGMA journal_mode = WAL;"
                     "CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT, title TEXT);"
                     "INSERT INTO moz_places VALUES (1, 'https://example.org', 'Example');")


def _experiments(ctx: Ctx, name: str = "experiments.sqlite") -> str:
    """A user's own database with a ``results`` table (and a meta table, as symattn's)."""
    return _database(ctx, name, "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                     "CREATE TABLE results (run TEXT, loss REAL);"
                     "INSERT INTO results VALUES ('baseline', 0.31);")


def _edit_store(ctx: Ctx, sql: str, *args, name: str = "mine.sqlite") -> str:
    path = _copy_store(ctx, name)
    db = sqlite3.connect(path)
    db.execute(sql, args)
    db.commit()
    db.close()
    return path


def _fifo(ctx: Ctx, name: str) -> str:
    path = ctx.tmp / name
    os.mkfifo(path)
    return str(path)


def _silent_server(ctx: Ctx) -> int:
    """A loopback server that accepts and never answers (closed at the end of the case)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    conns: list = []
    stop = threading.Event()

    def serve():
        server.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                conns.append(server.accept()[0])

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    ctx.cleanups.append(lambda: (stop.set(), thread.join(), server.close(), [c.close() for c in conns]))
    ctx.monkeypatch.setattr("symattn.sweep.run.CONNECT_SECONDS", 1.0)
    return server.getsockname()[1]


class _Handler(http.server.SimpleHTTPRequestHandler):
    timeout = 2  # a request that never ends does not hold the server thread

    def log_message(self, *args) -> None:  # the server's log is not symattn's stderr
        pass


def _http_server(ctx: Ctx) -> int:
    httpd = http.server.HTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    ctx.cleanups.append(lambda: (httpd.shutdown(), httpd.server_close()))
    ctx.monkeypatch.setattr("symattn.sweep.run.CONNECT_SECONDS", 1.0)
    return httpd.server_address[1]


def _locked(ctx: Ctx) -> str:
    """A symattn store whose write lock another writer holds (busy timeout cut to 0.3 s)."""
    path = _copy_store(ctx)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    ctx.cleanups.append(lambda: (holder.execute("ROLLBACK"), holder.close()))
    ctx.monkeypatch.setattr("symattn.sweep.store.BUSY_SECONDS", 0.3)
    return path


def _immutable(ctx: Ctx, path: Path) -> None:
    """Make ``path`` unwritable even for root (chmod, or chattr +i); skip the case if neither works."""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(0o555 if path.is_dir() else 0o444)
        ctx.cleanups.append(lambda: path.chmod(mode))
        return
    if shutil.which("chattr") and subprocess.run(["chattr", "+i", str(path)],
                                                 capture_output=True).returncode == 0:
        ctx.cleanups.append(lambda: subprocess.run(["chattr", "-i", str(path)], check=True))
        return
    pytest.skip("cannot make a read-only file here (root without chattr)")


def _readonly_folder(ctx: Ctx) -> str:
    folder = ctx.tmp / "ro"
    folder.mkdir()
    _immutable(ctx, folder)
    return str(folder)


def _readonly_store(ctx: Ctx) -> str:
    path = _copy_store(ctx)
    _immutable(ctx, Path(path))
    return path


def _safetensors(ctx: Ctx, name: str, header: dict, data: bytes = b"\0" * 8) -> str:
    text = json.dumps(header).encode()
    return _write(ctx, name, struct.pack("<Q", len(text)) + text + data)


def _torch_file(ctx: Ctx, name: str, kind: str) -> str:
    torch = pytest.importorskip("torch")
    dense = torch.ones(6, 2)
    if kind == "sparse":
        state = {"0.in_proj_weight": dense.to_sparse(), "0.out_proj.weight": torch.ones(2, 2)}
    else:
        state = {"0.in_proj_weight": torch.empty(6, 2, device="meta"),
                 "0.out_proj.weight": torch.empty(2, 2, device="meta")}
    torch.save(state, ctx.tmp / name)
    return str(ctx.tmp / name)


def _atlas_store(ctx: Ctx, result: "str | None" = None, architecture: "str | None" = None) -> str:
    """The template store with its first row's result (or architecture) JSON replaced."""
    path = _copy_store(ctx)
    db = sqlite3.connect(path)
    rowid = db.execute("SELECT min(rowid) FROM results").fetchone()[0]
    if result is not None:
        db.execute("UPDATE results SET result = ? WHERE rowid = ?", (result, rowid))
    if architecture is not None:
        db.execute("UPDATE results SET architecture = ? WHERE rowid = ?", (architecture, rowid))
    db.commit()
    db.close()
    return path


def _map_results(ctx: Ctx, change: Callable[[dict], object], every: bool = False) -> str:
    """The template store with ``change`` applied to its first (or every) row's JSON result."""
    path = _copy_store(ctx)
    db = sqlite3.connect(path)
    rows = db.execute("SELECT rowid, result FROM results ORDER BY rowid").fetchall()
    for rowid, text in rows if every else rows[:1]:
        result = json.loads(text)
        change(result)
        db.execute("UPDATE results SET result = ? WHERE rowid = ?", (json.dumps(result), rowid))
    db.commit()
    db.close()
    return path


def _no_provenance(ctx: Ctx) -> str:
    return _map_results(ctx, lambda result: result.pop("provenance"))


def _slow_rows(ctx: Ctx) -> str:
    """The template store with every row's normalizer spec a slow one (atlas budget cut to 1 s)."""
    ctx.monkeypatch.setattr("symattn.sweep.atlas.ATLAS_SECONDS", 1.0)
    return _map_results(ctx, lambda result: result["provenance"]["inputs"].update(
        normalizer_specs=["exp(exp(exp(s)))"]), every=True)


def _hostile_rows(ctx: Ctx) -> str:
    """The template store, its display strings and a failure's error replaced by markup and
    spreadsheet formulas (the normalizer specs that rebuild the architectures stay valid)."""
    path = _copy_store(ctx)
    db = sqlite3.connect(path)
    rows = db.execute("SELECT rowid, architecture, result FROM results ORDER BY rowid").fetchall()
    rowid, arch, result = rows[0]
    a = json.loads(arch)
    a["normalizers"] = ["<script>alert(1)</script>"] * a["depth"]
    db.execute("UPDATE results SET architecture = ? WHERE rowid = ?", (json.dumps(a, sort_keys=True), rowid))
    rowid, arch, _ = rows[1]
    a = json.loads(arch)
    a["normalizers"] = ["=HYPERLINK(\"http://x\",\"y\")"] * a["depth"]
    db.execute("UPDATE results SET architecture = ?, status = 'failed', result = NULL, kind = NULL, "
               "error = ? WHERE rowid = ?",
               (json.dumps(a, sort_keys=True), "<img src=x onerror=alert(1)>\n# heading $x$", rowid))
    db.commit()
    db.close()
    return path


def _symlinked_atlas(ctx: Ctx) -> str:
    (ctx.tmp / "out").mkdir()
    _write(ctx, "thesis.tex", "my thesis\n")
    os.symlink(ctx.tmp / "thesis.tex", ctx.tmp / "out" / "jet.png")
    return _copy_store(ctx)


def _user_atlas(ctx: Ctx) -> str:
    for name in ("atlas.md", "jet.csv", "jet.png"):
        _write(ctx, f"out/{name}", f"the user's own {name}\n")
    return _copy_store(ctx)


def _fake_cluster_interrupted(ctx: Ctx, thread: bool = False) -> None:
    """A LocalCluster whose start is interrupted by Ctrl-C (a real SIGINT to this process, or,
    with ``thread``, to another thread of it, as the kernel may choose: Python then runs the
    handler in the main thread at once, although the main thread blocks the signal)."""
    import signal
    import threading
    import time

    import distributed

    closed = []
    done = threading.Event()
    other = threading.Thread(target=done.wait, daemon=True)
    other.start()
    ctx.cleanups.append(done.set)

    class Cluster:
        def __init__(self, **kwargs):
            if thread:
                signal.pthread_kill(other.ident, signal.SIGINT)
                time.sleep(0.3)
            else:
                os.kill(os.getpid(), signal.SIGINT)

        def close(self):
            closed.append(True)

    ctx.monkeypatch.setattr(distributed, "LocalCluster", Cluster)
    ctx.cleanups.append(lambda: None if closed else pytest.fail("the started cluster was not closed"))


def _slow_normalizers(ctx: Ctx) -> str:
    ctx.monkeypatch.setattr("symattn.sweep.spec.SPEC_SECONDS", 1.0)
    return _spec(ctx, 'analyses = ["jet"]\n[[grid]]\ndepth = 1\nwidth = 1\n'
                      'normalizer = ["exp(exp(exp(s)))", "exp(exp(exp(s^2)))"]\n')


_GRID = "[[grid]]\ndepth = 1\nwidth = 1\n"


def _sweep(text: str, *extra: str, name: str = "s.toml"):
    """A ``sweep`` case of a spec text into a new store (which a refused case must not make)."""
    return lambda ctx: ["sweep", _spec(ctx, text, name), "--store", str(ctx.tmp / "new.sqlite"),
                        "--workers", "0", *extra]


def _spec_case(name: str, text: str, message: str, *extra: str) -> Hostile:
    return Hostile(f"spec: {name}", _sweep(text, *extra), 2, message=message)


#: The corpus: (name, make, exit status, paths the command may write, message).
CORPUS: list[Hostile] = [
    # -- stores that are not symattn's: refused, untouched
    Hostile("store: a browser's history database", lambda c: [
        "sweep", _spec(c, SPEC_OK), "--store", _browser_history(c), "--workers", "0"], 2,
        message="not a symattn store"),
    Hostile("store: a user's database with its own results table", lambda c: [
        "sweep", _spec(c, SPEC_OK), "--store", _experiments(c), "--workers", "0"], 2,
        message="not a symattn store"),
    Hostile("store: --status of a browser's history", lambda c: [
        "sweep", "--status", "--store", _browser_history(c)], 2, message="not a symattn store"),
    Hostile("store: --status of a user's results database", lambda c: [
        "sweep", "--status", "--store", _experiments(c)], 2, message="not a symattn store"),
    Hostile("store: atlas of a user's results database", lambda c: [
        "atlas", _experiments(c), "--output", str(c.tmp / "out")], 2, message="not a symattn store"),
    Hostile("store: an empty file", lambda c: [
        "sweep", _spec(c, SPEC_OK), "--store", _write(c, "empty.sqlite", b""), "--workers", "0"], 2,
        message="empty file"),
    Hostile("store: --status of an empty file", lambda c: [
        "sweep", "--status", "--store", _write(c, "empty.sqlite", b"")], 2, message="empty file"),
    Hostile("store: atlas of an empty file", lambda c: [
        "atlas", _write(c, "empty.sqlite", b""), "--output", str(c.tmp / "out")], 2, message="empty file"),
    Hostile("store: a text file", lambda c: [
        "sweep", _spec(c, SPEC_OK), "--store", _write(c, "notes.sqlite", "my notes\n" * 50),
        "--workers", "0"], 2, message="not an SQLite database"),
    Hostile("store: a future schema", lambda c: [
        "sweep", _spec(c, SPEC_OK), "--store", _edit_store(c, "PRAGMA user_version = 7"),
        "--workers", "0"], 2, message="schema 7"),
    Hostile("store: an extra column is refused before any case is computed", lambda c: [
        "sweep", _spec(c, 'analyses = ["dimension"]\n' + _GRID), "--store",
        _edit_store(c, "ALTER TABLE results ADD COLUMN note TEXT"), "--workers", "0"], 2,
        message="changed outside symattn"),
    Hostile("store: a folder", lambda c: [
        "sweep", _spec(c, SPEC_OK), "--store", str(c.tmp), "--workers", "0"], 2, message="a folder"),
    Hostile("store: a FIFO", lambda c: [
        "sweep", _spec(c, SPEC_OK), "--store", _fifo(c, "pipe.sqlite"), "--workers", "0"], 2,
        message="not a regular file"),
    Hostile("store: a link to nothing", lambda c: [
        "sweep", _spec(c, SPEC_OK), "--store", (os.symlink(c.tmp / "gone.sqlite", c.tmp / "l.sqlite"),
                                                str(c.tmp / "l.sqlite"))[1], "--workers", "0"], 2,
        message="link to nothing"),
    Hostile("store: no such folder", lambda c: [
        "sweep", _spec(c, SPEC_OK), "--store", str(c.tmp / "no" / "s.sqlite"), "--workers", "0"], 2,
        message="no folder"),
    Hostile("store: locked by another writer", lambda c: [
        "sweep", _spec(c, 'analyses = ["dimension"]\n' + _GRID), "--store", _locked(c),
        "--workers", "0"], 2, message="locked by another writer"),
    Hostile("store: a read-only store", lambda c: [
        "sweep", _spec(c, 'analyses = ["dimension"]\n' + _GRID), "--store", _readonly_store(c),
        "--workers", "0"], 2, message="read-only"),
    Hostile("store: in a read-only folder", lambda c: [
        "sweep", _spec(c, SPEC_OK), "--store", str(Path(_readonly_folder(c)) / "s.sqlite"),
        "--workers", "0"], 2, message="cannot make the store"),
    Hostile("store: --status of a symattn store reads it only", lambda c: [
        "sweep", "--status", "--store", _copy_store(c)], 0),
    Hostile("store: a rerun of a finished sweep reuses every row", lambda c: [
        "sweep", _spec(c, SPEC_OK), "--store", _copy_store(c), "--workers", "0"], 0,
        may_change=("mine.sqlite",)),
    # -- output files: never overwritten without --force, never through a link
    Hostile("latex: -o an existing file, refused before the proofs run", lambda c: [
        "latex", "--all", "-o", _write(c, "derivations.tex", "my thesis\n")], 2,
        message="refusing to overwrite"),
    Hostile("latex: -o a link onto another file", lambda c: [
        "latex", "--all", "-o", (_write(c, "thesis.tex", "my thesis\n"),
                                 os.symlink(c.tmp / "thesis.tex", c.tmp / "d.tex"), str(c.tmp / "d.tex"))[2]],
        2, message="symbolic link"),
    Hostile("latex: -o a folder", lambda c: ["latex", "--all", "-o", str(c.tmp) + "/"], 2,
            message="folder"),
    Hostile("latex: -o a device", lambda c: ["latex", "--all", "-o", "/dev/full"], 2, message="a device"),
    Hostile("latex: -o into a missing folder", lambda c: ["latex", "--all", "-o", str(c.tmp / "no" / "d.tex")],
            2, message="no folder"),
    Hostile("plot: spectrum --plot an existing file, refused before the spectrum", lambda c: [
        "spectrum", "--depth", "2", "--width", "2", "--plot", _write(c, "fig.png", b"my figure")], 2,
        message="refusing to overwrite"),
    Hostile("plot: spectrum --plot a link onto another file", lambda c: [
        "spectrum", "--depth", "1", "--width", "2", "--plot",
        (_write(c, "mine.png", b"mine"), os.symlink(c.tmp / "mine.png", c.tmp / "p.png"), str(c.tmp / "p.png"))[2]],
        2, message="symbolic link"),
    Hostile("plot: spectrum --plot a folder named .png", lambda c: [
        "spectrum", "--depth", "1", "--width", "2", "--plot", ((c.tmp / "d.png").mkdir(), str(c.tmp / "d.png"))[1]],
        2, message="a folder"),
    Hostile("plot: spectrum --plot where a file is expected to be a folder", lambda c: [
        "spectrum", "--depth", "1", "--width", "2", "--plot", str(Path(_write(c, "file", "x")) / "p.png")],
        2, message="not a folder"),
    Hostile("plot: spectrum --plot into a read-only folder", lambda c: [
        "spectrum", "--depth", "1", "--width", "2", "--plot", str(Path(_readonly_folder(c)) / "p.png")],
        2, message="cannot write"),
    Hostile("plot: spectrum --plot an existing file with --force", lambda c: [
        "spectrum", "--depth", "1", "--width", "2", "--plot", _write(c, "fig.png", b"old"), "--force"], 0,
        may_change=("fig.png",)),
    Hostile("plot: conjecture --plot an existing file", lambda c: [
        "conjecture", "--family", "residual", "--plot", _write(c, "fig.svg", b"<svg/>")], 2, message="refusing"),
    Hostile("plot: reproduce --plot an existing file", lambda c: [
        "reproduce", "f1", "--plot", _write(c, "fig2.pdf", b"%PDF my figure")], 2, message="refusing"),
    Hostile("plot: audit --plot an existing file, refused before the audit", lambda c: [
        "audit", str(Path(__file__).parent.parent / "examples" / "example_model.npz"), "--plot",
        _write(c, "audit.png", b"mine")], 2, message="refusing"),
    Hostile("atlas: --output a folder holding the user's files", lambda c: [
        "atlas", _user_atlas(c), "--output", str(c.tmp / "out")], 2, message="refusing to overwrite"),
    Hostile("atlas: --output the user's folder with --force", lambda c: [
        "atlas", _user_atlas(c), "--output", str(c.tmp / "out"), "--force"], 0, may_change=("out",)),
    Hostile("atlas: --output an existing file", lambda c: [
        "atlas", _copy_store(c), "--output", _write(c, "out", "a file")], 2, message="not a folder"),
    Hostile("atlas: --output below a file", lambda c: [
        "atlas", _copy_store(c), "--output", str(Path(_write(c, "f", "a file")) / "sub" / "out")], 2,
        message="not a folder"),
    Hostile("atlas: --output /dev/full", lambda c: ["atlas", _copy_store(c), "--output", "/dev/full"], 2,
            message="not a folder"),
    Hostile("atlas: --output a read-only folder", lambda c: [
        "atlas", _copy_store(c), "--output", _readonly_folder(c), "--no-plots"], 2, message="cannot"),
    Hostile("atlas: a link in the folder onto the user's thesis", lambda c: [
        "atlas", _symlinked_atlas(c), "--output", str(c.tmp / "out")], 2, message="symbolic link"),
    Hostile("atlas: markup and formulas from a store are escaped", lambda c: [
        "atlas", _hostile_rows(c), "--output", str(c.tmp / "out")], 0, may_change=("out",)),
    # -- atlas rows: one line, exit 2
    Hostile("atlas rows: slow normalizers, under one time budget", lambda c: [
        "atlas", _slow_rows(c), "--output", str(c.tmp / "out")], 2, message="took longer than"),
    Hostile("atlas row: no provenance", lambda c: [
        "atlas", _no_provenance(c), "--output", str(c.tmp / "out")], 2, message="provenance"),
    Hostile("atlas row: invalid JSON", lambda c: [
        "atlas", _atlas_store(c, result="{not json"), "--output", str(c.tmp / "out")], 2, message="JSON"),
    Hostile("atlas row: an architecture that is a list", lambda c: [
        "atlas", _atlas_store(c, architecture="[1, 2]"), "--output", str(c.tmp / "out")], 2,
        message="architecture is a list"),
    Hostile("atlas row: deeply nested JSON", lambda c: [
        "atlas", _atlas_store(c, result="[" * 5000 + "]" * 5000), "--output", str(c.tmp / "out")], 2,
        message="JSON"),
    Hostile("atlas row: a null result", lambda c: [
        "atlas", _atlas_store(c, result="null"), "--output", str(c.tmp / "out")], 2, message="null"),
    Hostile("atlas row: a text result", lambda c: [
        "atlas", _atlas_store(c, result='"done"'), "--output", str(c.tmp / "out")], 2, message="a str"),
    # -- sweep specs: validated in full before any work
    _spec_case("nested 1000 deep", 'analyses = ["jet"]\nseeds = ' + "[" * 1000 + "]" * 1000 + "\n" + _GRID,
               "too deeply"),
    _spec_case("nested 20 deep", 'analyses = ["jet"]\nseeds = ' + "[" * 20 + "0" + "]" * 20 + "\n" + _GRID,
               "deep"),
    _spec_case("depth 10^9", 'analyses = ["jet"]\n[[grid]]\ndepth = 1000000000\nwidth = 2\n', "depth"),
    _spec_case("depth 10^20", 'analyses = ["jet"]\n[[grid]]\ndepth = 100000000000000000000\nwidth = 2\n',
               "depth"),
    _spec_case("a seed beyond int64", 'analyses = ["jet"]\nseeds = [9223372036854775808]\n' + _GRID, "seeds"),
    _spec_case("memory inf", 'analyses = ["jet"]\n[limits]\nmemory = inf\n' + _GRID, "limits.memory"),
    _spec_case("memory nan as text", 'analyses = ["jet"]\n[limits]\nmemory = "nan"\n' + _GRID, "limits.memory"),
    _spec_case("memory 1e400 as text", 'analyses = ["jet"]\n[limits]\nmemory = "1e400GB"\n' + _GRID,
               "limits.memory"),
    _spec_case("memory 100GB above --max-memory", 'analyses = ["jet"]\n[limits]\nmemory = "100GB"\n' + _GRID,
               "--max-memory"),
    _spec_case("memory int64 max", 'analyses = ["jet"]\n[limits]\nmemory = 9223372036854775807\n' + _GRID,
               "limits.memory"),
    _spec_case("timeout nan", 'analyses = ["jet"]\n[limits]\ntimeout = nan\n' + _GRID, "limits.timeout"),
    _spec_case("timeout inf", 'analyses = ["jet"]\n[limits]\ntimeout = inf\n' + _GRID, "limits.timeout"),
    _spec_case("timeout 1e308", 'analyses = ["jet"]\n[limits]\ntimeout = 1e308\n' + _GRID, "limits.timeout"),
    _spec_case("a bank of 10^9", 'analyses = ["spectrum"]\n[options.spectrum]\nbank = 1000000000\n'
               "[[grid]]\ndepth = 1\nwidth = 2\n", "options.spectrum.bank"),
    _spec_case("a rank that wraps int64", 'analyses = ["spectrum"]\n[[grid]]\ndepth = 1\nwidth = 2\n'
               "rank = 18446744073709551617\n", "'rank'"),
    _spec_case("a grid of 10^9 cases", 'analyses = ["jet"]\n[[grid]]\ndepth = 1\n'
               f"width = {list(range(1, 1001))}\ntokens = {list(range(2, 1002))}\n"
               f"normalizer = {['exp'] * 1000}\n", "more than 100000 cases"),
    _spec_case("a huge scales exponent", 'analyses = ["float32"]\n[options.float32]\n'
               'scales = ["1e-100000000"]\n' + _GRID, "options.float32.scales"),
    _spec_case("workers 100000", SPEC_OK, "--workers", "--workers", "100000"),
    _spec_case("8 workers at 2 GB each above --max-memory", 'analyses = ["jet"]\n[limits]\nmemory = "2GB"\n'
               + _GRID, "above --max-memory", "--workers", "8"),
    _spec_case("a case that symattn spectrum refuses (about 1000 GiB)",
               'analyses = ["spectrum"]\n[options.spectrum]\nbank = 4096\norder = 600\n'
               "[[grid]]\ndepth = 2\nwidth = 8\nrank = 8\n", "nothing to compute"),
    Hostile("spec: not UTF-8 bytes", lambda c: [
        "sweep", _write(c, "s.toml", b'analyses = ["jet"]\n# \xff\xfe\n' + _GRID.encode()), "--store",
        str(c.tmp / "new.sqlite"), "--workers", "0"], 2, message="UTF-8"),
    Hostile("spec: /dev/zero", lambda c: ["sweep", "/dev/zero", "--store", str(c.tmp / "new.sqlite")], 2,
            message="not a regular file"),
    Hostile("spec: a FIFO", lambda c: ["sweep", _fifo(c, "spec.toml"), "--store", str(c.tmp / "new.sqlite")],
            2, message="not a regular file"),
    Hostile("spec: a folder", lambda c: ["sweep", str(c.tmp), "--store", str(c.tmp / "new.sqlite")], 2,
            message="folder"),
    Hostile("spec: larger than the limit", lambda c: [
        "sweep", _spec(c, SPEC_OK + "#" * 300_000 + "\n"), "--store", str(c.tmp / "new.sqlite")], 2,
        message="larger than"),
    Hostile("spec: slow normalizers, under one time budget", lambda c: [
        "sweep", _slow_normalizers(c), "--store", str(c.tmp / "new.sqlite"), "--workers", "0"], 2,
        message="took longer than"),
    Hostile("sweep: every case failed exits 1", lambda c: [
        "sweep", _spec(c, 'analyses = ["spectrum"]\n[options.spectrum]\norder = 2\n'
                          "[[grid]]\ndepth = 2\nwidth = 2\n"), "--store", str(c.tmp / "new.sqlite"),
        "--workers", "0"], 1, may_change=("new.sqlite",), message="have no result"),
    Hostile("sweep: nothing in scope exits 2", lambda c: [
        "sweep", _spec(c, 'analyses = ["spectrum"]\n[[grid]]\ndepth = 1\nwidths = [[2, 3]]\n'),
        "--store", str(c.tmp / "new.sqlite"), "--workers", "0"], 2, message="nothing to compute"),
    # -- scheduler addresses and connections
    *[Hostile(f"scheduler: {address!r}", lambda c, a=address: [
        "sweep", _spec(c, SPEC_OK), "--store", str(c.tmp / "new.sqlite"), "--scheduler", a], 2,
        message="--scheduler")
      for address in ["", "nonsense", "tcp://127.0.0.1:99999", "ucx://host:8786", "http://host:8786",
                      "tcp://host:port", "tcp://host:8786\nrm -rf /", "tcp://ho st:1", "tcp://[::1x]:8786"]],
    Hostile("scheduler: port 1 refused", lambda c: [
        "sweep", _spec(c, SPEC_OK), "--store", str(c.tmp / "new.sqlite"), "--scheduler", "tcp://127.0.0.1:1"],
        2, message="cannot connect"),
    Hostile("scheduler: a silent server", lambda c: [
        "sweep", _spec(c, SPEC_OK), "--store", str(c.tmp / "new.sqlite"), "--scheduler",
        f"tcp://127.0.0.1:{_silent_server(c)}"], 2, message="no dask scheduler answered"),
    Hostile("scheduler: an HTTP server", lambda c: [
        "sweep", _spec(c, SPEC_OK), "--store", str(c.tmp / "new.sqlite"), "--scheduler",
        f"127.0.0.1:{_http_server(c)}"], 2, message="scheduler"),
    Hostile("sweep: Ctrl-C while the local cluster starts exits 130", lambda c: (
        _fake_cluster_interrupted(c),
        ["sweep", _spec(c, SPEC_OK), "--store", str(c.tmp / "new.sqlite"), "--workers", "1"])[1], 130,
        may_change=("new.sqlite",), message="interrupted"),
    Hostile("sweep: Ctrl-C while the local cluster starts, delivered to another thread, exits 130", lambda c: (
        _fake_cluster_interrupted(c, thread=True),
        ["sweep", _spec(c, SPEC_OK), "--store", str(c.tmp / "new.sqlite"), "--workers", "1"])[1], 130,
        may_change=("new.sqlite",), message="interrupted"),
    # -- --spec TOML of symattn variant
    Hostile("variant --spec: a ragged mask", lambda c: [
        "variant", "spectrum", "--spec", _spec(c, "width = 2\ntokens = 2\n[[layer]]\nmask = [[1, 0], [1]]\n")],
        2, message="equal lengths"),
    Hostile("variant --spec: arrays nested 700 deep", lambda c: [
        "variant", "spectrum", "--spec", _spec(c, "width = 2\ntokens = 2\n[[layer]]\nmask = "
                                                  + "[" * 700 + "]" * 700 + "\n")], 2, message="deep"),
    Hostile("variant --spec: inline tables nested 700 deep", lambda c: [
        "variant", "spectrum", "--spec", _spec(c, "width = 2\ntokens = 2\nx = " + "{a = " * 700 + "1"
                                                  + "}" * 700 + "\n")], 2, message="deep"),
    Hostile("variant --spec: inline tables nested 10 deep", lambda c: [
        "variant", "spectrum", "--spec", _spec(c, "width = 2\ntokens = 2\n[[layer]]\nmask = " + "{a = " * 10
                                                  + "1" + "}" * 10 + "\n")], 2, message="deep"),
    # -- weight files
    Hostile("weights: a safetensors dtype that is a list", lambda c: [
        "audit", _safetensors(c, "w.safetensors", {"Q1": {"dtype": ["F64"], "shape": [1, 1],
                                                          "data_offsets": [0, 8]}})], 2, message="dtype"),
    Hostile("weights: a safetensors shape holding a boolean", lambda c: [
        "audit", _safetensors(c, "w.safetensors", {"Q1": {"dtype": "F64", "shape": [True, 1],
                                                          "data_offsets": [0, 8]}})], 2, message="malformed"),
    Hostile("weights: overlapping safetensors offsets", lambda c: [
        "audit", _safetensors(c, "w.safetensors", {k: {"dtype": "F64", "shape": [1, 1], "data_offsets": [0, 8]}
                                                   for k in ("Q1", "K1", "V1")}, np.ones(1).tobytes())], 2,
        message="overlap"),
    Hostile("weights: the first two safetensors tensors overlap, the third does not", lambda c: [
        "audit", _safetensors(c, "w.safetensors", {"Q1": {"dtype": "F64", "shape": [1, 1], "data_offsets": [0, 8]},
                                                   "K1": {"dtype": "F64", "shape": [1, 1], "data_offsets": [0, 8]},
                                                   "V1": {"dtype": "F64", "shape": [1, 1], "data_offsets": [8, 16]}},
                              np.ones(2).tobytes())], 2, message="overlap"),
    Hostile("weights: a torch sparse tensor", lambda c: ["audit", _torch_file(c, "w.pt", "sparse")], 2,
            message="sparse"),
    Hostile("weights: torch meta tensors", lambda c: ["audit", _torch_file(c, "w.pt", "meta")], 2,
            message="meta tensor"),
]


@pytest.fixture(scope="module")
def template_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small finished store (jet and dimension, D = 1, d = 1, 2) to copy into cases."""
    from symattn.sweep.run import parse_spec, run_sweep
    from symattn.sweep.store import Store

    path = tmp_path_factory.mktemp("template") / "store.sqlite"
    with Store(path) as store:
        summary = run_sweep(parse_spec({"analyses": ["jet", "dimension"],
                                        "grid": [{"depth": 1, "width": [1, 2]}]}), store, workers=0)
    assert summary["computed"] == 4
    return path


@pytest.mark.parametrize("case", CORPUS, ids=[c.name for c in CORPUS])
def test_hostile_files(case: Hostile, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                       template_store: Path, fake_proofs) -> None:
    monkeypatch.chdir(tmp_path)
    ctx = Ctx(tmp_path, monkeypatch, template_store)
    try:
        argv = case.make(ctx)
        before = snapshot(tmp_path)
        status, out, err = _cli(*argv)
        after = snapshot(tmp_path)
    finally:
        for cleanup in reversed(ctx.cleanups):
            cleanup()
    assert status == case.status, (argv, status, err)
    assert "Traceback" not in err and "internal error" not in err, err
    if status == 2:
        assert err.startswith("symattn: error: ") and err.count("\n") == 1, err
    if case.message:
        assert case.message in err, (case.message, err)
    allowed = lambda rel: any(rel == p or rel.startswith(p + os.sep) for p in case.may_change)  # noqa: E731
    for rel, entry in before.items():
        assert after.get(rel) == entry or allowed(rel), f"{rel} was changed or removed"
    for rel in set(after) - set(before):
        assert allowed(rel), f"{rel} was left behind"
    assert not [rel for rel in after if Path(rel).name.startswith(".") and rel.endswith(".tmp")]


def test_refused_stores_are_byte_for_byte_unchanged(tmp_path: Path) -> None:
    """The header check happens before SQLite opens the file: a foreign WAL database keeps its
    bytes and gets no -wal/-shm files, through every command that takes a store."""
    from symattn.sweep.store import Store

    ctx = Ctx(tmp_path, None, None)
    for make in (_browser_history, _experiments):
        path = Path(make(ctx))
        before = snapshot(tmp_path)
        for readonly in (False, True):
            with pytest.raises(SymattnError, match="not a symattn store"):
                Store(path, readonly=readonly)
        assert snapshot(tmp_path) == before


def test_a_stored_result_is_never_replaced_by_a_worse_one(tmp_path: Path, template_store: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Two sweeps on one store: the second saw the cases missing, then the first finished them;
    the second's timeouts arrive last and are dropped (the ok rows stay)."""
    import symattn.sweep.run as run
    from symattn.sweep.store import Store

    path = tmp_path / "s.sqlite"
    shutil.copy(template_store, path)
    spec = run.parse_spec({"analyses": ["jet", "dimension"], "grid": [{"depth": 1, "width": [1, 2]}]})
    with Store(path) as store:
        before = {(r["analysis"], json.dumps(r["architecture"])): r for r in store.rows()}
        monkeypatch.setattr(store, "statuses", lambda keys: {})  # saw every case missing
        monkeypatch.setattr(run, "execute", lambda *a: {
            "status": "timeout", "kind": None, "result": None, "error": "Timeout: timed out",
            "seconds": 9.0, "peak_rss": 0, "host": "other"})
        summary = run.run_sweep(spec, store, workers=0)
    assert (summary["failed"], summary["already_stored"]) == (4, 4)
    with Store(path) as store:
        after = {(r["analysis"], json.dumps(r["architecture"])): r for r in store.rows()}
        assert after == before and all(r["status"] == "ok" for r in after.values())
        # a failed row is replaced by a later one, an ok row by nothing
        case = spec.cases[0]
        row = {"status": "failed", "kind": None, "result": None, "error": "x", "seconds": 0.0,
               "peak_rss": 0, "host": ""}
        assert store.put(case, row, store.version) is False


def test_concurrent_writers_take_turns(tmp_path: Path, template_store: Path) -> None:
    """Two handles write while a third holds the lock for a moment: both rows arrive."""
    from symattn.sweep.run import parse_spec
    from symattn.sweep.store import Store

    path = tmp_path / "s.sqlite"
    shutil.copy(template_store, path)
    cases = parse_spec({"analyses": ["jet"], "grid": [{"depth": 2, "width": [1, 2]}]}).cases
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    released = threading.Event()

    def release():
        holder.execute("COMMIT")
        released.set()

    threading.Timer(0.5, release).start()
    row = {"status": "failed", "kind": None, "result": None, "error": "e", "seconds": 0.0, "peak_rss": 0,
           "host": ""}
    results = []

    def write(case):
        with Store(path) as store:
            results.append((store.put(case, row, store.version), released.is_set()))

    threads = [threading.Thread(target=write, args=(c,)) for c in cases]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    holder.close()
    assert results == [(True, True), (True, True)]  # each waited for the lock, then wrote
    with Store(path) as store:
        assert sum(r["status"] == "failed" for r in store.rows()) == 2


def test_a_symattn_01_store_is_recognised_and_stamped(tmp_path: Path, template_store: Path) -> None:
    """A store made before the application id existed (same tables) is read, and stamped on
    its first write; the same tables with one more table are someone else's."""
    from symattn.sweep.run import parse_spec, run_sweep
    from symattn.sweep.store import APPLICATION_ID, Store

    path = tmp_path / "old.sqlite"
    shutil.copy(template_store, path)
    db = sqlite3.connect(path)
    db.executescript("PRAGMA journal_mode = DELETE; PRAGMA application_id = 0; PRAGMA user_version = 0;")
    db.close()
    with Store(path, readonly=True) as store:
        assert len(list(store.rows())) == 4
    assert path.read_bytes()[68:72] == b"\0\0\0\0"  # reading did not stamp it
    with Store(path) as store:
        summary = run_sweep(parse_spec({"analyses": ["jet"], "grid": [{"depth": 2, "width": 1}]}), store,
                            workers=0)
    assert summary["computed"] == 1
    assert int.from_bytes(path.read_bytes()[68:72], "big") == APPLICATION_ID
    other = tmp_path / "other.sqlite"
    shutil.copy(template_store, other)
    db = sqlite3.connect(other)
    db.executescript("PRAGMA application_id = 0; PRAGMA user_version = 0; CREATE TABLE mine (x);")
    db.close()
    data = other.read_bytes()
    with pytest.raises(SymattnError, match="not a symattn store"):
        Store(other)
    assert other.read_bytes() == data


def test_a_failed_write_leaves_the_old_file_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk (ENOSPC from the write) or a failed rename: one line, the old file intact,
    no temporary file left."""
    from symattn.core import output

    path = tmp_path / "fig.tex"
    output.write_file(path, output.stamp_text("old\n"))
    old = path.read_bytes()
    real_write = os.write
    calls = []

    def full(fd, data):
        calls.append(fd)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(output.os, "write", full)
    with pytest.raises(SymattnError, match="the disk is full"):
        output.write_file(path, output.stamp_text("new\n"))
    monkeypatch.setattr(output.os, "write", real_write)
    monkeypatch.setattr(output.os, "replace", lambda *a: (_ for _ in ()).throw(
        OSError(errno.EROFS, "Read-only file system")))
    with pytest.raises(SymattnError, match="read-only"):
        output.write_file(path, output.stamp_text("newer\n"))
    assert calls and path.read_bytes() == old and sorted(p.name for p in tmp_path.iterdir()) == ["fig.tex"]


def test_symattn_replaces_only_its_own_unchanged_files(tmp_path: Path) -> None:
    """A plot or LaTeX file symattn wrote is replaced on a rerun; once edited it is the user's."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from symattn.core import output

    for suffix in ("png", "pdf", "svg"):
        path = tmp_path / f"p.{suffix}"
        for _ in range(2):
            fig, ax = plt.subplots()
            ax.plot([1, 2])
            output.save_figure(fig, path)
        assert output.is_ours(path)
        path.write_bytes(path.read_bytes() + b"\n")
        assert not output.is_ours(path)
        fig, ax = plt.subplots()
        with pytest.raises(SymattnError, match="refusing to overwrite"):
            output.save_figure(fig, path)
        fig, ax = plt.subplots()
        output.save_figure(fig, path, force=True)
        assert output.is_ours(path)
    import PIL.Image  # the PNG stamp keeps the chunk's CRC right: the image still reads

    PIL.Image.open(tmp_path / "p.png").load()


def test_the_atlas_escapes_markup_and_formulas(tmp_path: Path, template_store: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = Ctx(tmp_path, monkeypatch, template_store)
    store = _hostile_rows(ctx)
    assert _cli("atlas", store, "--output", str(tmp_path / "out"))[0] == 0
    md = (tmp_path / "out" / "atlas.md").read_text()
    page = (tmp_path / "out" / "atlas.html").read_text()
    failures = (tmp_path / "out" / "failures.csv").read_text()
    assert "<script" not in page and "<img src=x" not in page
    assert not re.search(r"(?<!\\)[<>]", md.replace("-->", ""))  # every < and > escaped
    assert "\\<script\\>" in md and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "\n# heading" not in md  # a line break in a cell cannot start a heading
    import csv

    cells = [c for row in csv.reader(io.StringIO(failures)) for c in row]
    assert not any(c.lstrip()[:1] in ("=", "+", "-", "@", "\t", "\r") and c != "=" for c in cells), failures
    assert "'=HYPERLINK" in failures
    manifest = json.loads((tmp_path / "out" / "symattn-manifest.json").read_text())
    assert set(manifest["files"]) >= {"atlas.md", "atlas.html", "failures.csv"}
    # a rerun replaces symattn's own files without --force
    assert _cli("atlas", store, "--output", str(tmp_path / "out"))[0] == 0


# ------------------------------------------------------------------ fuzzing
_SCALARS = st.one_of(st.integers(-2**70, 2**70), st.floats(allow_nan=True, allow_infinity=True),
                     st.booleans(), st.text(max_size=12),
                     st.sampled_from(["exp", "cosh", "auto", "2GB", "1/10", "modular", "jet", "nan"]))
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                         st.dictionaries(st.text(max_size=6), inner, max_size=3)),
                       max_leaves=12)
_KEYS = {"top": ["analyses", "seeds", "limits", "grid", "options", "other"],
         "grid": ["analyses", "depth", "width", "widths", "rank", "ranks", "tokens", "normalizer", "x"],
         "limits": ["timeout", "memory", "cpu"]}


@st.composite
def sweep_specs(draw) -> dict:
    """Spec tables near the valid ones: right keys with hostile values, and a few wrong keys."""
    small = st.one_of(st.integers(0, 3), _VALUES)
    grid = draw(st.dictionaries(st.sampled_from(_KEYS["grid"]), small, max_size=5))
    spec = {"analyses": draw(st.one_of(st.just(["jet"]), st.lists(st.sampled_from(
        ["jet", "dimension", "spectrum", "bank", "float32", "volume"]), max_size=3), _VALUES)),
        "grid": draw(st.one_of(st.just([grid]), _VALUES))}
    for key in draw(st.lists(st.sampled_from(["seeds", "limits", "options", "other"]), max_size=2,
                             unique=True)):
        spec[key] = draw(st.one_of(st.dictionaries(st.sampled_from(_KEYS["limits"]), _VALUES, max_size=2),
                                   _VALUES))
    return spec


@settings(max_examples=int(os.environ.get("SYMATTN_FUZZ_EXAMPLES", "40")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=sweep_specs())
def test_fuzz_sweep_specs(data: dict) -> None:
    """Any parsed spec is refused with SymattnError or gives bounded cases; never another error."""
    from symattn.sweep.run import MAX_CASES, parse_spec

    try:
        spec = parse_spec(data, "fuzz")
    except SymattnError as exc:
        assert str(exc).startswith("sweep spec fuzz: ") and "\n" not in str(exc)
        return
    assert len(spec.cases) <= MAX_CASES
    assert all(c.seed >= 0 and c.architecture["depth"] >= 1 for c in spec.cases)


_JSON = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                               st.floats(allow_nan=False), st.text(max_size=8)),
                     lambda inner: st.one_of(st.lists(inner, max_size=4),
                                             st.dictionaries(st.text(max_size=6), inner, max_size=4)),
                     max_leaves=16)


@st.composite
def store_edits(draw) -> list[tuple[str, object]]:
    """Edits of one row of a real store: a column set to hostile JSON, text or a raw value."""
    column = draw(st.sampled_from(["result", "architecture", "status", "seed", "error", "analysis"]))
    value = draw(st.one_of(_JSON.map(json.dumps), st.text(max_size=20), st.integers(-2**63, 2**63 - 1),
                           st.none(), st.just("[" * 3000)))
    return [(column, value)]


@settings(max_examples=int(os.environ.get("SYMATTN_FUZZ_EXAMPLES", "40")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(edits=store_edits())
def test_fuzz_store_contents(edits, tmp_path_factory: pytest.TempPathFactory, template_store: Path) -> None:
    """A store edited outside symattn: ``--status`` and the atlas end with 0 or 2 (one line), never
    an internal error, and never change the store."""
    folder = tmp_path_factory.mktemp("fuzz")
    path = folder / "s.sqlite"
    shutil.copy(template_store, path)
    db = sqlite3.connect(path)
    for column, value in edits:
        with contextlib.suppress(sqlite3.IntegrityError):  # the table's own CHECK and NOT NULL
            db.execute(f"UPDATE results SET {column} = ? WHERE rowid = (SELECT min(rowid) FROM results)",
                       (value,))
    db.commit()
    db.close()
    data = path.read_bytes()
    for argv in (["sweep", "--status", "--store", str(path)],
                 ["atlas", str(path), "--output", str(folder / "out"), "--no-plots"]):
        status, _, err = _cli(*argv)
        assert status in (0, 2), (argv, edits, err)
        assert "internal error" not in err and "Traceback" not in err, (edits, err)
        if status == 2:
            assert err.count("\n") == 1, err
    assert path.read_bytes() == data


def test_a_foreign_database_with_a_hot_journal_is_not_rolled_back(tmp_path: Path) -> None:
    """A database whose writer died mid-transaction (a hot journal beside it): SQLite would roll
    it back on the first read; symattn refuses it from its header first, and neither file changes."""
    import sys

    from symattn.sweep.store import Store

    path = tmp_path / "crashed.sqlite"
    db = sqlite3.connect(path)
    db.executescript("CREATE TABLE t (x BLOB); INSERT INTO t VALUES (x'00');")
    db.close()
    child = ("import os, sqlite3, sys\n"
             "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
             "db.execute('PRAGMA cache_size = 1'); db.execute('BEGIN')\n"
             "for _ in range(300): db.execute('INSERT INTO t VALUES (?)', (os.urandom(3000),))\n"
             "os.kill(os.getpid(), 9)\n")
    subprocess.run([sys.executable, "-c", child, str(path)], check=False)
    journal = tmp_path / "crashed.sqlite-journal"
    assert journal.exists() and journal.stat().st_size > 0
    before = snapshot(tmp_path)
    for readonly in (False, True):
        with pytest.raises(SymattnError, match="not a symattn store"):
            Store(path, readonly=readonly)
    assert snapshot(tmp_path) == before


def _api_calls() -> list[tuple[str, Callable[[], object], type, str]]:
    """Public calls of the floors outside the model and the analyses, with wrong arguments:
    each raises TypeError or ValueError at the boundary, naming the argument."""
    from symattn.audit.importers import from_arrays, from_state_dict, load_model
    from symattn.core.parse import parse_matrix
    from symattn.core.validate import BadType
    from symattn.sweep.atlas import atlas_tables, write_atlas
    from symattn.sweep.run import check_scheduler, load_spec, parse_spec, plan_workers, run_sweep
    from symattn.sweep.store import Store

    one = {"Q1": [[1.0]], "K1": [[1.0]], "V1": [[1.0]]}
    jet = {"analyses": ["jet"], "grid": [{"depth": 1, "width": 1}]}
    return [
        ("parse_matrix(None)", lambda: parse_matrix(None), BadType, "matrix"),
        ("parse_matrix(list)", lambda: parse_matrix([[1]]), BadType, "matrix"),
        ("parse_spec(None)", lambda: parse_spec(None), SymattnError, "TOML table"),
        ("parse_spec(max_memory_gib='x')", lambda: parse_spec(jet, max_memory_gib="x"), BadType,
         "max_memory_gib"),
        ("load_spec(3)", lambda: load_spec(3), BadType, "sweep spec"),
        ("run_sweep(None, None)", lambda: run_sweep(None, None), BadType, "spec"),
        ("run_sweep(spec, 'file')", lambda: run_sweep(parse_spec(jet), "s.sqlite"), BadType, "store"),
        ("plan_workers(-1)", lambda: plan_workers(-1, 2**30, 12.0), SymattnError, "--workers"),
        ("check_scheduler(None)", lambda: check_scheduler(None), SymattnError, "--scheduler"),
        ("Store(None)", lambda: Store(None), BadType, "store path"),
        ("Store(3)", lambda: Store(3), BadType, "store path"),
        ("atlas_tables(None)", lambda: atlas_tables(None), BadType, "store"),
        ("write_atlas(None, 'out')", lambda: write_atlas(None, "out"), BadType, "store"),
        ("load_model(None)", lambda: load_model(None), BadType, "path"),
        ("load_model(tokens='4')", lambda: load_model("m.npz", tokens="4"), BadType, "tokens"),
        ("from_arrays(None)", lambda: from_arrays(None), BadType, "arrays"),
        ("from_arrays(tokens=1)", lambda: from_arrays(one, tokens=1), SymattnError, "tokens"),
        ("from_arrays(tokens='3')", lambda: from_arrays(one, tokens="3"), BadType, "tokens"),
        ("from_state_dict(None)", lambda: from_state_dict(None), BadType, "state"),
        ("from_state_dict(heads='2')", lambda: from_state_dict({}, heads="2"), BadType, "heads"),
    ]


@pytest.mark.parametrize("call", _api_calls(), ids=lambda c: c[0])
def test_public_calls_check_their_arguments(call, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _, function, kind, name = call
    with pytest.raises(kind) as info:
        function()
    assert isinstance(info.value, (TypeError, ValueError)) and name in str(info.value)
    assert not any(tmp_path.iterdir())


def test_parse_spec_holds_the_memory_limit_against_max_memory() -> None:
    """The library refuses a per-case memory limit above max_memory_gib (the command line also
    refuses workers x memory beyond it)."""
    from symattn.sweep.run import parse_spec

    spec = {"analyses": ["jet"], "limits": {"memory": "100GB"}, "grid": [{"depth": 1, "width": 1}]}
    with pytest.raises(SymattnError, match="limits.memory .* above --max-memory 12 GiB"):
        parse_spec(spec)
    assert parse_spec(spec, max_memory_gib=200).memory == 100 * 10**9


def test_a_time_budget_cannot_be_swallowed_by_the_code_it_times() -> None:
    """Library code that catches Exception (sympy does, in places) around the moment the alarm
    rings does not swallow the budget: the block still stops with one SymattnError."""
    import time

    from symattn.core.limits import time_budget

    swallowed = []
    end = time.monotonic() + 10  # the loop ends by itself if the budget is swallowed
    with pytest.raises(SymattnError, match="a busy loop took longer than 0.2 s"):
        with time_budget(0.2, "a busy loop"):
            while time.monotonic() < end:
                try:
                    sum(range(10_000))
                except Exception as exc:  # what a library might do
                    swallowed.append(exc)
    assert not swallowed


def test_a_lost_alarm_rings_again_and_a_block_that_swallows_every_alarm_still_fails() -> None:
    """Python drops an exception raised inside a weakref callback or ``__del__`` (it prints
    "Exception ignored"); the CI once saw an atlas run end with exit 0 that way. The alarm
    repeats until it gets through, and a block that catches every alarm (as that weakref
    callback did) still ends in the budget's SymattnError rather than in success."""
    import time

    from symattn.core.limits import time_budget

    caught = []
    with pytest.raises(SymattnError, match="took longer than 0.1 s"):
        with time_budget(0.1, "a loop that loses its first alarm"):
            try:
                time.sleep(2)
            except BaseException as exc:  # the lost alarm
                caught.append(exc)
            time.sleep(2)  # the repeated alarm ends the block here
    assert len(caught) == 1
    with pytest.raises(SymattnError, match="took longer than 0.1 s"):
        with time_budget(0.1, "a loop that loses every alarm"):
            end = time.monotonic() + 0.5
            while time.monotonic() < end:
                try:
                    time.sleep(0.01)
                except BaseException:
                    pass


def test_an_alarm_on_its_way_out_lets_the_cleanup_run() -> None:
    """A cleanup in a ``finally`` (or an ``except`` that re-raises) on the way out of an
    expired budget runs to its end: the repeated alarm does not interrupt it a second time
    (an interrupted cleanup can leave a lock held, and a later acquire then hangs)."""
    import time

    from symattn.core.limits import time_budget

    cleaned = []
    with pytest.raises(SymattnError, match="took longer than 0.1 s"):
        with time_budget(0.1, "a block with a slow cleanup"):
            try:
                time.sleep(2)
            finally:
                end = time.monotonic() + 0.4  # eight repeats of the alarm fall in here
                while time.monotonic() < end:
                    sum(range(1000))
                cleaned.append("finally")
    assert cleaned == ["finally"]
    with pytest.raises(SymattnError, match="took longer than 0.1 s"):
        with time_budget(0.1, "a block whose handler cleans up and re-raises"):
            try:
                time.sleep(2)
            except BaseException:
                time.sleep(0.3)
                cleaned.append("except")
                raise
    assert cleaned == ["finally", "except"]


def test_an_error_message_is_one_line_whatever_it_quotes(tmp_path, capsys) -> None:
    """A message quoting a name with a newline (a store row's analysis, a file name) stays one
    line: the command line escapes control characters (the store fuzzer found a row whose
    analysis held a newline)."""
    from symattn.cli import main

    path = tmp_path / "x\ny.sqlite"
    path.write_text("not sqlite")
    assert main(["sweep", "--status", "--store", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "x\\ny.sqlite" in err
