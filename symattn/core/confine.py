"""Run one computation confined: under a wall-clock and a memory limit, in a forked child.

A sweep case (:mod:`symattn.sweep.run`), or one bank input of the spectrum's constants route
(:mod:`symattn.analyses.constant_spectrum`), is CPU-bound Python, NumPy and FLINT code:
a thread cannot be interrupted inside it, and ``dask.distributed`` has no
per-task timeout (its worker ``memory_limit`` restarts the *whole* worker,
losing every task on it). So :func:`run_confined` runs the computation in a
forked child of the calling process (on POSIX; the child inherits every
imported module, so starting it costs milliseconds, not an interpreter start)
and the caller's thread watches it:

* **time**: the child is killed (SIGKILL) when ``timeout`` seconds of wall
  clock have passed; a CPU-time limit (``RLIMIT_CPU``) of ``4 timeout + 10`` s
  backs this up should the watcher itself die;
* **memory**: the child's resident set size is polled every 50 ms and the
  child is killed when it exceeds the parent's at the fork (the pages the
  child inherits) by more than ``memory`` bytes; an address-space limit
  (``RLIMIT_AS``) of the inherited size plus ``2 memory`` backs this up
  against a sudden allocation between two polls;
* **orphans**: on Linux the child asks to be killed when the thread that
  forked it dies (``PR_SET_PDEATHSIG``), so killing a dask worker kills its
  running cases too.

The result travels back through a pipe as JSON (never pickle). An exception in
the child comes back as ``{"error": ..., "error_type": ...}``; a killed or
crashed child as a :class:`Confined` with ``status`` ``"timeout"``,
``"memory"`` or ``"failed"``.

Caveat: ``fork`` in a multi-threaded process copies only the forking thread;
the child here runs only the computation and leaves with ``os._exit``, never
touching the parent's other threads or its event loop. Without ``os.fork``
(Windows) the computation runs in the calling thread, without limits, and the
result says so.

Examples
--------
>>> r = run_confined(sum, ([1, 2, 3],), timeout=30, memory=2**30)
>>> r.status, r.value
('ok', 6)
>>> r = run_confined(int, ("x",), timeout=30, memory=2**30)
>>> r.status, r.error_type
('failed', 'ValueError')
"""

from __future__ import annotations

import json
import math
import os
import select
import signal
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable

from symattn.core.errors import SymattnError

__all__ = ["Confined", "run_confined", "parse_memory", "MAX_MEMORY"]

_POLL = 0.05
#: The largest memory limit :func:`parse_memory` accepts (1 PiB).
MAX_MEMORY = 2**50
_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "KIB": 2**10, "MIB": 2**20, "GIB": 2**30}


@dataclass
class Confined:
    """Outcome of :func:`run_confined`.

    ``status`` is ``"ok"`` (``value`` holds the JSON-decoded result),
    ``"failed"`` (an exception, or a crash: ``error``, ``error_type``),
    ``"timeout"`` or ``"memory"`` (killed at the limit); ``seconds`` is wall
    clock and ``peak_rss`` the largest resident size seen, in bytes.
    """

    status: str
    value: Any = None
    error: str = ""
    error_type: str = ""
    seconds: float = 0.0
    peak_rss: int = 0


def parse_memory(value: "int | str") -> int:
    """Bytes from an integer or a string such as ``"2GB"``, ``"512 MiB"``.

    >>> parse_memory("2GB"), parse_memory("512 MiB"), parse_memory(1000)
    (2000000000, 536870912, 1000)
    """
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise SymattnError(f"memory must be a number of bytes or a string like '2GB', got {value!r:.40}")
    if isinstance(value, str) and len(value) > 40:
        raise SymattnError(f"memory must look like '2GB' or '512MiB', got {value[:40]!r}...")
    if isinstance(value, int):
        if not 0 < value <= MAX_MEMORY:
            raise SymattnError(f"memory limit must be a positive size of at most 2^50 bytes (1 PiB), "
                               f"got {value if value.bit_length() < 100 else 'a huge integer'}")
        return value
    else:
        text = value.strip().upper().replace(" ", "")
        digits = text.rstrip("KMGIB")
        unit = text[len(digits):]
        try:
            number = float(digits)
        except ValueError:
            raise SymattnError(f"memory must look like '2GB' or '512MiB', got {value!r}") from None
        if unit not in _UNITS:
            raise SymattnError(f"unknown memory unit {unit!r} in {value!r} (use B, KB, MB, GB, KiB, MiB, GiB)")
    if not math.isfinite(number) or not 0 < number * _UNITS[unit] <= MAX_MEMORY:
        raise SymattnError(f"memory limit must be a positive size of at most 2^50 bytes (1 PiB), "
                           f"got {value!r:.40}")
    size = int(number * _UNITS[unit])
    if size <= 0:
        raise SymattnError(f"memory limit must be positive, got {value!r}")
    return size


def run_confined(func: Callable[..., Any], args: tuple, timeout: float, memory: int) -> Confined:
    """Call ``func(*args)`` in a forked child under ``timeout`` seconds and
    ``memory`` bytes of resident memory; its return value must be JSON-serialisable.

    Parameters
    ----------
    func, args : the computation (``func`` returns a JSON-serialisable value)
    timeout : wall-clock limit in seconds
    memory : resident-memory limit in bytes

    Returns
    -------
    Confined
        The outcome; never raises for a failure of ``func`` itself.
    """
    start = time.perf_counter()
    if not hasattr(os, "fork"):
        return _run_inline(func, args, start)
    import psutil

    info = psutil.Process().memory_info()
    base_vm, base_rss = info.vms, info.rss  # the child inherits both: its own use is what it adds
    parent = os.getpid()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: compute, write, leave without cleanup
        os.close(read_end)
        _child(func, args, write_end, timeout, memory, base_vm, parent)
    os.close(write_end)
    chunks: list[bytes] = []
    peak, status = 0, ""
    proc = psutil.Process(pid)
    try:
        while True:
            ready, _, _ = select.select([read_end], [], [], _POLL)
            if ready:
                chunk = os.read(read_end, 1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
            try:
                peak = max(peak, proc.memory_info().rss - base_rss)
            except psutil.Error:
                pass
            if peak > memory:
                status = "memory"
            elif time.perf_counter() - start > timeout:
                status = "timeout"
            if status:
                os.kill(pid, signal.SIGKILL)
                break
    except BaseException:  # e.g. KeyboardInterrupt in the watcher: the child goes too
        os.kill(pid, signal.SIGKILL)
        raise
    finally:
        os.close(read_end)
        _, wstatus = os.waitpid(pid, 0)
    seconds = round(time.perf_counter() - start, 3)
    if status == "timeout":
        return Confined("timeout", error=f"timed out after {timeout:g} s (wall clock)",
                       error_type="Timeout", seconds=seconds, peak_rss=peak)
    if status == "memory":
        return Confined("memory", error=f"memory limit exceeded: resident {peak / 1e6:.0f} MB > "
                       f"{memory / 1e6:.0f} MB", error_type="MemoryLimit", seconds=seconds, peak_rss=peak)
    try:
        message = json.loads(b"".join(chunks).decode())
    except ValueError:
        sig = -os.waitstatus_to_exitcode(wstatus)
        why = (f"killed by signal {signal.Signals(sig).name}" if sig > 0
               else f"exited with status {-sig}")
        hint = " (likely the memory limit: an allocation failed)" if sig in (signal.SIGABRT, signal.SIGSEGV) \
            else " (CPU-time limit)" if sig in (signal.SIGXCPU, signal.SIGKILL) else ""
        return Confined("failed", error=f"the computation {why}{hint} without a result",
                       error_type="Crashed", seconds=seconds, peak_rss=peak)
    if "error" in message:
        return Confined("memory" if message["error_type"] == "MemoryLimit" else "failed", error=message["error"], error_type=message["error_type"],
                       seconds=seconds, peak_rss=peak)
    return Confined("ok", value=message["value"], seconds=seconds, peak_rss=peak)


def _child(func, args, fd: int, timeout: float, memory: int, base_vm: int, parent: int) -> None:
    """Body of the forked child; never returns."""
    code = 0
    try:
        _limit_self(timeout, memory, base_vm)
        if os.getppid() != parent:  # the parent died before the death signal was armed
            raise SystemExit(1)
        try:
            payload = {"value": func(*args)}
        except MemoryError:
            payload = {"error": "memory limit exceeded (an allocation failed)", "error_type": "MemoryLimit"}
        except BaseException as exc:  # reported to the parent, whatever it is
            payload = {"error": str(exc) or repr(exc), "error_type": type(exc).__name__}
        try:
            data = json.dumps(payload).encode()
        except (TypeError, ValueError) as exc:  # a result that is not JSON: the caller's bug, said
            data = json.dumps({"error": f"the result is not JSON-serialisable: {exc}",
                               "error_type": "TypeError"}).encode()
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def _limit_self(timeout: float, memory: int, base_vm: int) -> None:
    """In the child: resource backstops, and death with the forking thread (Linux)."""
    import resource

    cpu = int(4 * timeout + 10)
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)  # an inherited hard limit (ulimit -t) cannot be raised
    if hard != resource.RLIM_INFINITY:
        cpu = min(cpu, max(hard - 5, 1))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5 if hard == resource.RLIM_INFINITY else hard))
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    soft = base_vm + 2 * memory
    if hard == resource.RLIM_INFINITY or soft <= hard:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop


def _run_inline(func, args, start: float) -> Confined:
    try:
        value = json.loads(json.dumps(func(*args)))
    except Exception as exc:
        return Confined("failed", error=str(exc), error_type=type(exc).__name__,
                       seconds=round(time.perf_counter() - start, 3))
    return Confined("ok", value=value, seconds=round(time.perf_counter() - start, 3))
