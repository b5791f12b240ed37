"""Run each source of proof scripts in a child process of its own, with limits.

``symattn prove`` runs the scripts of each source (the paper's proofs, each
installed proof package, each ``--path`` folder) in one child process per
source: ``python -P -m symattn.theorems.isolation REQUEST FD``. The child
imports the source's package by its path (no folder goes on ``sys.path``),
runs (or lists) the requested scripts in order and reports each on the pipe
``FD`` as one JSON object per line; its standard output and error go to a file
that never reaches the table. The parent

* checks every message against the protocol (:func:`parse`): an unknown event,
  a field of the wrong type, a result for another script than the one started,
  a pass with an error: anything malformed is the source's failure;
* measures each proof's time itself and kills the child's process group when a
  proof passes its time limit (that proof fails; a new child runs the rest) or
  the source passes its own (the rest is not run: one failure line);
* treats a child that ends early (``sys.exit`` at import, ``os._exit``, a
  crash, a signal) as the failure of the proof it was running, or of the
  source if it was importing its package; a new child runs the rest;
* kills the child's process group when it is interrupted, so no child is left.

The child limits its address space (``RLIMIT_AS``) and makes no core files.
Isolation protects the results (a package cannot end the run, hide another
source's failure or forge a table row by accident); it does not protect the
machine: a proof package is code, run with the user's rights.

Examples
--------
>>> one_line("Lemma 1\\n17 proofs: 17 passed\\x1b[2J")
'Lemma 1\\\\n17 proofs: 17 passed\\\\x1b[2J'
"""

from __future__ import annotations

import json
import math
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from symattn.render.derivation import KINDS
from symattn.theorems.registry import Proof, ProofResult, Source, run_script

__all__ = ["Limits", "Listing", "ProtocolError", "list_proofs", "one_line", "parse", "run_proofs"]

#: The longest message line a child may send (bytes); a longer one is malformed.
MAX_LINE = 1 << 20
#: Seconds a child may take to exit after reporting its last script.
_EXIT_GRACE = 5.0
#: Seconds a child may take to start (Python and symattn imported) before it answers: symattn's own
#: start, not counted in the limits of the source and its proofs.
_STARTUP = 600.0
#: The clock of the limits (tests may replace it).
_clock: Callable[[], float] = time.monotonic


@dataclass(frozen=True)
class Limits:
    """The limits of the child processes.

    Attributes
    ----------
    proof_seconds : float
        Wall-clock seconds one proof (or the import of its source's package) may take.
    source_seconds : float
        Wall-clock seconds all the proofs of one source may take together.
    memory_bytes : int or None
        The address-space limit of each child (``RLIMIT_AS``); None for none.
    """

    proof_seconds: float = 3600.0
    source_seconds: float = 43200.0
    memory_bytes: int | None = 16 << 30


@dataclass(frozen=True)
class Listing:
    """One row of ``symattn prove --list``: a script's kind and statement, or why they are unknown.

    Attributes
    ----------
    id, source, kind, statement, error, name : str
        ``statement`` is the script's title (its ``STATEMENT``), ``name`` what it
        shows (:attr:`symattn.theorems.registry.Proof.name`); ``error`` is empty
        when the script imported.
    """

    id: str
    source: str
    kind: str
    statement: str
    error: str = ""
    name: str = ""


class ProtocolError(ValueError):
    """A child's message that does not follow the protocol."""


def one_line(text: object) -> str:
    """``text`` on one line: control and format characters (line breaks, escape codes) escaped.

    Parameters
    ----------
    text : object
        Converted with ``str``.

    Returns
    -------
    str
        Printable characters and spaces only; each other character as Python
        writes it in a string literal (``\\n``, ``\\x1b``, ``\\u202e``).
    """
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))


#: The fields of each event and their types (bool is never an int here).
_EVENTS: dict[str, dict[str, type]] = {
    "alive": {},
    "ready": {},
    "start": {"script": str},
    "result": {"script": str, "statement": str, "status": str, "cases": int, "kind": str, "error": str},
    "listed": {"script": str, "statement": str, "kind": str, "error": str},
    "failed": {"error": str},
    "done": {},
}


def parse(line: bytes) -> dict[str, object]:
    """One message of a child, checked against the protocol.

    Parameters
    ----------
    line : bytes
        One line (without its newline) of the result pipe.

    Returns
    -------
    dict
        The message: ``event`` and exactly that event's fields, each of its type;
        a result's status is ``pass`` (no error, a kind of :data:`KINDS`) or
        ``fail`` (an error), its cases a nonnegative int.

    Raises
    ------
    ProtocolError
        If the line is not such a message.
    """
    try:
        message = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ProtocolError(f"not a JSON line ({type(exc).__name__})") from exc
    if not isinstance(message, dict) or message.get("event") not in _EVENTS:
        raise ProtocolError("not a message of a known event")
    fields = _EVENTS[str(message["event"])]
    if set(message) != {"event", *fields}:
        raise ProtocolError(f"the fields of a {message['event']!r} message are not {sorted(fields)}")
    for key, kind in fields.items():
        value = message[key]
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ProtocolError(f"the field {key!r} is not a {kind.__name__}")
    if message["event"] == "result":
        status, error, kind = message["status"], message["error"], message["kind"]
        if status not in ("pass", "fail") or (status == "pass") != (error == ""):
            raise ProtocolError("a result's status is not pass without an error or fail with one")
        if status == "pass" and kind not in KINDS:
            raise ProtocolError("a passed result's kind is not a kind")
        if message["cases"] < 0:  # type: ignore[operator]
            raise ProtocolError("a result's cases are negative")
    return message


def run_proofs(proofs: Sequence[Proof], full: bool = False, limits: Limits = Limits(),
               on_start: Callable[[Proof], None] | None = None) -> list[ProofResult]:
    """Run ``proofs``, one child process per source, in the order given (grouped by source).

    Parameters
    ----------
    proofs : sequence of Proof
        As :func:`symattn.theorems.registry.choose` gives them.
    full : bool, optional
        Run the full case lists.
    limits : Limits, optional
        The time and memory limits.
    on_start : callable, optional
        Called with each proof when its child starts it (progress).

    Returns
    -------
    list of ProofResult
        One per proof that ran (passed or failed, its time measured here), and one
        failed result with the id ``SOURCE:`` for a source that failed as a whole
        (its package's import, its time limit, a malformed message): the proofs it
        did not run are named in the error.
    """
    results: list[ProofResult] = []
    for source, mine in _by_source(proofs):
        results += _Run(source, mine, "run", full, limits, on_start).results
    return results


def list_proofs(proofs: Sequence[Proof], limits: Limits = Limits()) -> list[Listing]:
    """The kind and title (statement) of each of ``proofs``, each source imported in a child of its own.

    Parameters
    ----------
    proofs : sequence of Proof
    limits : Limits, optional

    Returns
    -------
    list of Listing
        One per proof (with an error if it did not import), and one with the id
        ``SOURCE:`` and an error for a source that failed as a whole.
    """
    rows: list[Listing] = []
    names = {proof.id: proof.name for proof in proofs}
    for source, mine in _by_source(proofs):
        for result in _Run(source, mine, "list", False, limits, None).results:
            rows.append(Listing(result.id, result.source, result.kind, result.statement, result.error,
                                names.get(result.id, "")))
    return rows


def _by_source(proofs: Sequence[Proof]) -> list[tuple[Source, list[Proof]]]:
    groups: dict[Source, list[Proof]] = {}
    for proof in proofs:
        groups.setdefault(proof.source, []).append(proof)
    return list(groups.items())


class _Run:
    """The proofs of one source, in as many children as it takes (a new one after each death)."""

    def __init__(self, source: Source, proofs: list[Proof], mode: str, full: bool, limits: Limits,
                 on_start: Callable[[Proof], None] | None) -> None:
        self.source, self.mode, self.full, self.limits = source, mode, full, limits
        self.on_start = on_start or (lambda proof: None)
        self.results: list[ProofResult] = []
        self.source_deadline = math.inf  # set when the first child answers
        remaining = list(proofs)
        with tempfile.TemporaryDirectory(prefix="symattn-prove-") as folder:
            self.folder = Path(folder)
            while remaining:
                done = self._child(remaining)
                if done is None:  # the source failed as a whole: no new child
                    break
                remaining = remaining[done:]

    def _fail_source(self, why: str, not_run: Sequence[Proof], seconds: float = 0.0) -> None:
        names = ", ".join(proof.script for proof in not_run[:5]) + (", ..." if len(not_run) > 5 else "")
        error = f"{self.source.origin}: {why}" + (f"; not run ({len(not_run)}): {names}" if not_run else "")
        self.results.append(ProofResult(f"{self.source.name}:", "", "fail", 0, "", seconds, None, error,
                                        self.source.name))

    def _child(self, proofs: list[Proof]) -> int | None:
        """Run ``proofs`` in one child; the number of proofs it settled, or None if the source failed."""
        request = self.folder / "request.json"
        request.write_text(json.dumps({
            "name": self.source.name, "package": self.source.package, "origin": self.source.origin,
            "locations": list(self.source.locations), "scripts": [proof.script for proof in proofs],
            "mode": self.mode, "full": self.full, "memory": self.limits.memory_bytes}))
        output = (self.folder / "output.txt").open("wb")
        read_end, write_end = os.pipe()
        try:
            child = subprocess.Popen(
                [sys.executable, "-P", "-m", "symattn.theorems.isolation", str(request), str(write_end)],
                stdin=subprocess.DEVNULL, stdout=output, stderr=output, pass_fds=(write_end,),
                start_new_session=True)
        finally:
            os.close(write_end)
            output.close()
        try:
            return self._drive(child, read_end, proofs)
        finally:
            os.close(read_end)
            _kill(child)

    def _drive(self, child: subprocess.Popen, fd: int, proofs: list[Proof]) -> int | None:
        started: float | None = None  # when the running proof started
        alive = ready = False
        settled = 0
        begin = _clock()
        deadline = begin + _STARTUP
        buffer = b""
        while True:
            now = _clock()
            if now >= min(deadline, self.source_deadline):
                if not alive:
                    self._fail_source(f"its process did not start within {_STARTUP:g} s", proofs[settled:])
                    return None
                return self._timeout(proofs, settled, started, ready, now)
            waiting = min(deadline, self.source_deadline) - now
            readable, _, _ = select.select([fd], [], [], min(waiting, 1.0))
            if not readable:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:  # the child closed the pipe: it ended (or closed it)
                return self._ended(child, proofs, settled, started, ready, begin)
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            if len(buffer) > MAX_LINE:  # a line without end: malformed
                lines, buffer = [*lines, buffer], b""
            for line in lines:
                try:
                    message = parse(line)
                    event = message["event"]
                    expected = proofs[settled].script if settled < len(proofs) else None
                    if event == "alive" and not alive:
                        alive = True
                        if self.source_deadline == math.inf:
                            self.source_deadline = _clock() + self.limits.source_seconds
                    elif event == "ready" and alive and not ready:
                        ready = True
                    elif event == "failed" and not ready:
                        self._fail_source(f"its package does not import: {message['error']}", proofs[settled:],
                                          _clock() - begin)
                        return None
                    elif event == "start" and ready and started is None and message["script"] == expected:
                        started = _clock()
                        self.on_start(proofs[settled])
                    elif (event in ("result", "listed") and started is not None and message["script"] == expected
                          and (event == "result") == (self.mode == "run")):
                        self._record(proofs[settled], message, _clock() - started)
                        settled += 1
                        started = None
                    elif event == "done" and ready and started is None and settled == len(proofs):
                        _wait(child, _EXIT_GRACE)
                        return settled
                    else:
                        raise ProtocolError(f"an unexpected {event!r} message")
                except ProtocolError as exc:
                    self._fail_source(f"its process sent a malformed message: {exc}", proofs[settled:],
                                      _clock() - begin)
                    return None
                deadline = _clock() + self.limits.proof_seconds

    def _record(self, proof: Proof, message: dict[str, object], seconds: float) -> None:
        statement, kind, error = str(message["statement"]), str(message["kind"]), str(message["error"])
        if message["event"] == "result":
            status, cases = str(message["status"]), int(message["cases"])  # type: ignore[call-overload]
        else:
            status, cases = ("fail" if error else "pass"), 0
        self.results.append(ProofResult(proof.id, statement, status, cases, kind, seconds, None, error,
                                        self.source.name))

    def _timeout(self, proofs: list[Proof], settled: int, started: float | None, ready: bool,
                 now: float) -> int | None:
        source_limit = now >= self.source_deadline
        limit = (f"the time limit of the source ({self.limits.source_seconds:g} s)" if source_limit
                 else f"the time limit per proof ({self.limits.proof_seconds:g} s)")
        if started is None:
            what = "importing its package" if not ready else "between two proofs"
            self._fail_source(f"no answer within {limit} while {what}", proofs[settled:])
            return None
        self._fail_proof(proofs[settled], f"killed at {limit}", now - started)
        if source_limit:
            if settled + 1 < len(proofs):
                self._fail_source(f"stopped at {limit}", proofs[settled + 1:])
            return None
        return settled + 1

    def _ended(self, child: subprocess.Popen, proofs: list[Proof], settled: int, started: float | None,
               ready: bool, begin: float) -> int | None:
        status = _wait(child, _EXIT_GRACE)
        how = _status_text(status)
        last = self._last_output()
        where = "during the proof" if started is not None else "while importing its package" if not ready \
            else "between two proofs"
        why = f"its process ended ({how}) {where}" + (f"; its last output line: \"{last}\"" if last else "")
        if started is not None:
            self._fail_proof(proofs[settled], why, _clock() - started)
            return settled + 1
        if not ready or settled == 0:  # no progress: a new child would end the same way
            self._fail_source(why, proofs[settled:], _clock() - begin)
            return None
        return settled  # ended between two proofs: a new child runs the rest

    def _fail_proof(self, proof: Proof, error: str, seconds: float) -> None:
        self.results.append(ProofResult(proof.id, "", "fail", 0, "", seconds, None, error, self.source.name))

    def _last_output(self) -> str:
        try:
            with (self.folder / "output.txt").open("rb") as output:
                output.seek(0, os.SEEK_END)
                output.seek(max(0, output.tell() - 4096))
                lines = output.read().decode("utf-8", "replace").strip().splitlines()
        except OSError:
            return ""
        return one_line(lines[-1])[:300] if lines else ""


def _status_text(status: int | None) -> str:
    if status is None:
        return "still running; killed"
    if status < 0:
        try:
            return f"killed by {signal.Signals(-status).name}"
        except ValueError:
            return f"killed by signal {-status}"
    return f"exit status {status}"


def _wait(child: subprocess.Popen, seconds: float) -> int | None:
    try:
        return child.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        return None


def _kill(child: subprocess.Popen) -> None:
    """Kill the child's process group (the child and whatever it started) and reap the child."""
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    child.wait()


# ------------------------------------------------------------------------------------------ the child


def _child_main(request_path: str, fd: int) -> None:
    """The child: import the source's package by its path, run or list the scripts, report on ``fd``."""
    import resource

    request = json.loads(Path(request_path).read_text())
    _die_with_parent()
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if request["memory"] is not None:
        resource.setrlimit(resource.RLIMIT_AS, (request["memory"], request["memory"]))
    channel = os.fdopen(fd, "w", encoding="utf-8")

    def send(event: str, **fields: object) -> None:
        channel.write(json.dumps({"event": event, **fields}) + "\n")
        channel.flush()

    send("alive")

    from symattn.theorems.registry import _describe, _import_source

    source = Source(request["name"], request["package"], request["origin"], tuple(request["locations"]))
    try:
        _import_source(source, BaseException)
    except BaseException as exc:  # noqa: BLE001 -- the package's import is its author's code
        send("failed", error=_describe(exc.__cause__) if exc.__cause__ is not None else str(exc))
        return
    send("ready")
    for script in request["scripts"]:
        send("start", script=script)
        proof = Proof(source.qualify(script), script, source)
        result = run_script(proof, request["full"], BaseException) if request["mode"] == "run" else _listed(proof)
        fields = {"script": script, "statement": result.statement, "kind": result.kind, "error": result.error}
        if request["mode"] == "run":
            send("result", status=result.status, cases=result.cases, **fields)
        else:
            send("listed", **fields)
    send("done")


def _listed(proof: Proof) -> ProofResult:
    """The script imported, not run: its statement and kind as a result (``fail`` if it did not import)."""
    from symattn.core.errors import SymattnError
    from symattn.theorems.registry import import_script

    try:
        module = import_script(proof, BaseException)
    except SymattnError as exc:
        return ProofResult(proof.id, "", "fail", 0, "", 0.0, None, str(exc), proof.source.name)
    statement, kind = str(getattr(module, "STATEMENT", "")), str(getattr(module, "KIND", ""))
    return ProofResult(proof.id, statement, "pass", 0, kind, 0.0, None, "", proof.source.name)


def _die_with_parent() -> None:
    """Linux: the child is killed when symattn ends (a SIGTERM or SIGKILL to it, say); elsewhere nothing."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() == 1:  # the parent ended before the call
        os._exit(1)


if __name__ == "__main__":
    _child_main(sys.argv[1], int(sys.argv[2]))
    sys.stdout.flush()
    os._exit(0)  # neither a package's threads nor its atexit handlers keep the child
