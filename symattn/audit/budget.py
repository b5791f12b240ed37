"""The audit's time budget, enforced: a clock, progress lines on stderr, and bounded runs.

The budget is measured in **CPU time of the whole process tree**
(:func:`cpu_seconds`: this process's user and system time since it started,
plus that of its children, running or ended), so a busy machine does not
change what a budget buys; the command line counts the process's start-up in
it (``Clock(..., since=0)``), the library counts from the call. Tests inject
a timer (``Clock(budget, timer=...)``), never the wall clock. Where the
children's CPU time cannot be read (no ``/proc``), a bounded step is measured
in wall-clock seconds and the report says so (:data:`MEASURE`).

Estimates decide what is *tried*; this module makes sure nothing runs past the
budget. Two mechanisms:

* :func:`bounded` runs one exact analysis (a fiber verification, a Smith
  spectrum, an exact kernel: code that has no checkpoints of its own) in a
  forked child process and kills the child when its seconds are up; the
  parent waits at most that long. The child's result comes back through a
  pipe (pickled by this process's own child from an already validated model:
  no untrusted bytes are unpickled).
* :class:`Clock` is checked cooperatively by the numerical tiers between
  their steps (:meth:`Clock.room` before each step, from the measured cost of
  the previous one), so a tier stops at the budget with the steps it finished,
  said as such.

Progress goes to a callable (the command line passes one that writes
``symattn audit: ...`` lines to stderr; the library default is silent).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from typing import Any, Callable

__all__ = ["Clock", "OverBudget", "bounded", "stderr_progress", "cpu_seconds", "MEASURE", "WALL_CAP"]

#: What a budget second is, said in the output.
MEASURE = "CPU seconds of the whole process tree"
#: A bounded step that uses no CPU is stopped after this many times its seconds of wall-clock time.
WALL_CAP = 10.0


def cpu_seconds() -> float:
    """User and system CPU seconds of this process since it started, plus its ended (waited-for) children.

    >>> 0.0 < cpu_seconds()
    True
    """
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _child_cpu(pid: int) -> float | None:
    """CPU seconds of a running child (Linux ``/proc``), None where they cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fp:
            fields = fp.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


class OverBudget(Exception):
    """A bounded step ran out of seconds (caught by the tier that ran it, never shown raw)."""


def stderr_progress(message: str) -> None:
    """Write one progress line to stderr (the command line's progress callable)."""
    import sys

    print(f"symattn audit: {message}", file=sys.stderr, flush=True)


class Clock:
    """Seconds left of ``budget`` (CPU seconds of the process tree, :func:`cpu_seconds`), and the
    progress callable.

    ``timer`` replaces the measure (tests inject one; it is then named
    ``injected``); ``since`` is the timer's reading the budget counts from
    (default: now; the command line gives 0, so the start-up is counted).

    >>> ticks = iter([0.0, 1.0, 2.0, 50.0])
    >>> c = Clock(10.0, timer=lambda: next(ticks))
    >>> c.left(), c.room(1.0), c.room(60.0)
    (9.0, True, False)
    """

    def __init__(self, budget: float, progress: Callable[[str], None] | None = None,
                 timer: Callable[[], float] | None = None, since: float | None = None):
        self.timer = timer or cpu_seconds
        self.measure = MEASURE if timer is None else "seconds of an injected timer"
        self.budget = budget
        self.start = self.timer() if since is None else since
        self.progress = progress or (lambda message: None)

    def describe(self, seconds: float) -> str:
        """``seconds`` with the measure, for the output."""
        return f"{seconds:g} {self.measure}"

    def left(self) -> float:
        """Seconds left (negative once the budget is spent)."""
        return self.budget - (self.timer() - self.start)

    def elapsed(self) -> float:
        """Seconds since the clock started."""
        return self.timer() - self.start

    def room(self, seconds: float) -> bool:
        """Whether a step expected to take ``seconds`` fits in what is left."""
        return seconds <= self.left()

    def say(self, message: str) -> None:
        """Report progress (with the elapsed seconds)."""
        self.progress(f"{message} [{self.elapsed():.1f} s]")


def _child(conn, fn: Callable[[], Any]) -> None:
    import sys

    if "torch" in sys.modules:  # a forked child must not use the parent's OpenMP pool
        sys.modules["torch"].set_num_threads(1)
    try:
        conn.send(("ok", fn()))
    except BaseException as exc:  # sent back and re-raised in the parent, with its type
        try:
            conn.send(("error", exc))
        except Exception:  # an exception that does not pickle: its text
            conn.send(("error", RuntimeError(f"{type(exc).__name__}: {exc}")))
    finally:
        conn.close()


def bounded(fn: Callable[[], Any], seconds: float, what: str, clock: Clock | None = None) -> Any:
    """``fn()`` in a forked child, killed after ``seconds``; its result, or :class:`OverBudget`.

    Exceptions raised in the child are raised again here (same type). Where
    ``fork`` is unavailable the call runs in this process after a check that
    ``seconds`` is positive (said in the docs: the budget is then estimated,
    not enforced).

    >>> bounded(lambda: 6 * 7, 10.0, "arithmetic")
    42
    >>> bounded(lambda: time.sleep(5), 0.2, "a nap")
    Traceback (most recent call last):
    ...
    symattn.audit.budget.OverBudget: a nap: stopped after 2 s of wall-clock time, 10 x its 0.2 CPU seconds (the safety cap of a waiting step)
    """
    if seconds <= 0:
        raise OverBudget(f"{what}: no time left of the budget")
    if clock is not None:
        clock.say(f"{what} (at most {seconds:.0f} s)")
    try:
        ctx = multiprocessing.get_context("fork")
    except ValueError:  # pragma: no cover - platforms without fork
        return fn()
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, fn), daemon=True)
    started = time.perf_counter()
    proc.start()
    child.close()
    last = None  # the child's CPU seconds as last read
    try:
        while not parent.poll(min(0.05, seconds)):
            used = _child_cpu(proc.pid)
            wall = time.perf_counter() - started
            if used is None:  # no /proc: the wall clock is the measure
                used = wall
            else:
                last = used
            if used > seconds:
                raise OverBudget(f"{what}: stopped at the budget ({seconds:.3g} {MEASURE})")
            if wall > WALL_CAP * seconds:
                raise OverBudget(f"{what}: stopped after {wall:.0f} s of wall-clock time, {WALL_CAP:g} x its "
                                 f"{seconds:.3g} CPU seconds (the safety cap of a waiting step)")
        try:
            status, value = parent.recv()
            used = _child_cpu(proc.pid)
            took = (used if used is not None else last if last is not None
                    else time.perf_counter() - started)
        except EOFError:  # the child died (killed, out of memory)
            raise OverBudget(f"{what}: the worker process ended without a result "
                             f"(exit {proc.exitcode})") from None
    finally:
        if proc.is_alive():
            os.kill(proc.pid, signal.SIGKILL)
        proc.join()
        parent.close()
    _enforced(what, took, seconds)
    if status == "error":
        raise value
    return value


#: Seconds a bounded step may end after its limit (the pipe, the kill and the join) before the
#: budget counts as not enforced.
GRACE = 2.0


def _enforced(what: str, took: float, seconds: float) -> None:
    """The post-condition of :func:`bounded`: the step ended within its seconds (plus :data:`GRACE`);
    otherwise the budget was not enforced, a bug (exit 70), never a silent overrun."""
    if took > seconds + max(GRACE, 0.25 * seconds):  # slack for a loaded machine's scheduling
        from symattn.core.errors import InternalError

        raise InternalError(f"{what}: ran {took:.1f} s against its limit of {seconds:.1f} s: the budget was "
                            f"not enforced; please report this bug")
