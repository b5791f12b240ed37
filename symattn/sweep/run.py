"""Sweeps: grids of architectures x analyses, run on ``dask.distributed``, kept in a store.

A sweep spec (a TOML file of grids of architectures x analyses) is read, validated in
full and expanded into cases by :mod:`symattn.sweep.spec` (:func:`~symattn.sweep.spec.load_spec`,
:func:`~symattn.sweep.spec.parse_spec`; importable from here too). :func:`run_sweep` then

1. takes the spec's :class:`~symattn.sweep.spec.Case` objects, each keyed by its
   analysis, canonical architecture, full options and seed;
2. asks the store (:class:`~symattn.sweep.store.Store`) which keys of this symattn
   version it already holds, and submits only the others, largest first
   (parameters times the deepest divisibility order, times a weight per analysis:
   4 for a jet, 1 + order/32 for a spectrum's column proof; a rough cost), as
   ``dask.distributed`` tasks: to a :class:`~distributed.LocalCluster` of
   ``workers`` processes (one thread each) or to an existing scheduler at
   ``scheduler``; both go through the same :class:`~distributed.Client` code;
   dask's own rescheduling replaces a lost worker's tasks;
3. writes each result into the store from the client as it arrives (one
   committed row per case), so an interrupted sweep loses nothing finished.

Each task runs the analysis through its library function (:func:`compute`)
inside :func:`~symattn.sweep.confine.run_confined`: a forked child under the spec's
wall-clock and memory limits, so a case that fails, crashes, times out or
exceeds its memory becomes a row with its error and never stops the sweep.

Caveats: every worker of an external cluster must have the same symattn
installed (rows record the client's version; :func:`execute` refuses to run
under another one). ``workers = 0`` runs the cases one after another in this
process, without dask (the serial reference of the benchmarks and tests).

Examples
--------
>>> spec = parse_spec({"analyses": ["jet"], "grid": [{"depth": 1, "width": [1, 2], "tokens": 2}]})
>>> [c.label for c in spec.cases]
['jet D=1 d=1,1 n=2 phi=exp(s) seed=0', 'jet D=1 d=2,2 n=2 phi=exp(s) seed=0']
>>> compute(spec.cases[0].payload())["sharp_degree"]
3
"""

from __future__ import annotations

import hashlib
import os
import re
import signal
import socket
import time
from typing import Callable

from symattn.core.errors import SymattnError
from symattn.core.validate import require_int, shown
from symattn.sweep.analyses import ANALYSES, Analysis, build_architecture  # noqa: F401  (public names of run)
from symattn.sweep.confine import run_confined
from symattn.sweep.spec import (  # noqa: F401  the spec's names, importable from here as before
    MAX_CASES, MAX_PARAMETERS, SPEC_LIMITS, SPEC_SECONDS, Case, SweepSpec, load_spec, parse_spec,
)
from symattn.core.provenance import provenance

__all__ = ["ANALYSES", "Analysis", "LOCAL_CLUSTER_CONFIG", "build_architecture", "compute", "execute", "run_sweep",
           "check_scheduler", "plan_workers", "probe_scheduler", "MAX_WORKERS", "CONNECT_SECONDS"]

#: dask settings of the local cluster a sweep starts (an external cluster is used unchanged).
#: The workers start without dask's default ``MALLOC_TRIM_THRESHOLD_=65536``: a fixed
#: threshold turns off glibc's adaptive mmap threshold, so every NumPy temporary above
#: 128 KiB is mapped and unmapped afresh (the d = 8, r = 4, D = 3 spectrum takes 8.4 s
#: with it, 6.2 s without; three times the system time). A task only waits on its forked
#: child, so the worker's statistical profiler (a stack sample every 10 ms) has nothing to
#: profile, and the event-loop tick (20 ms) and the memory and system monitors
#: (0.1-0.5 s; the child's limits are enforced by run_confined) need not run often: with
#: dask's defaults the cluster's own processes use about 8 % of a core beside two
#: computing cases, with these about 2 % (benchmarks/bench_sweep.py; docs/benchmarks.rst).
#: A worker-saturation of 1 hands a worker its next case only when it is free, so the
#: largest-first order is kept to the end (with dask's 1.1 each single-thread worker holds
#: a second case in its queue, and two long cases can end up one after the other).
LOCAL_CLUSTER_CONFIG = {
    "distributed.scheduler.worker-saturation": 1.0,
    "distributed.nanny.pre-spawn-environ": {"OMP_NUM_THREADS": 1, "MKL_NUM_THREADS": 1,
                                            "OPENBLAS_NUM_THREADS": 1},
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.admin.system-monitor.interval": "1s",
}


# -- running ---------------------------------------------------------------------------------

def compute(payload: dict) -> dict:
    """Run one case in this process through its library function; its JSON result."""
    analysis = ANALYSES[payload["analysis"]]
    return analysis.run(build_architecture(payload["architecture"]), payload["seed"], payload["options"])


def execute(payload: dict, timeout: float, memory: int, version: str) -> dict:
    """Run one case under the limits (the dask task); a row for the store.

    The row has ``status`` (``ok``, ``failed``, ``timeout``, ``memory``), ``kind``,
    ``result`` (the JSON result with its ``provenance``), ``error``, ``seconds``,
    ``peak_rss`` and ``host``; it never raises for a failure of the case.
    """
    from symattn import __version__

    row = {"status": "failed", "kind": None, "result": None, "error": "", "seconds": 0.0,
           "peak_rss": 0, "host": f"{socket.gethostname()}:{os.getpid()}"}
    if version != __version__:
        row["error"] = f"worker runs symattn {__version__}, the client {version}: install one version"
        return row
    from symattn.analyses import dimension, jets, spectrum  # noqa: F401  imported once per worker: forked cases inherit them

    out = run_confined(compute, (payload,), timeout, memory)
    row.update(status=out.status, seconds=out.seconds, peak_rss=out.peak_rss)
    if out.status != "ok":
        row["error"] = f"{out.error_type}: {out.error}"
        return row
    result = out.value
    kind = ANALYSES[payload["analysis"]].kind(result)
    inputs = {"analysis": payload["analysis"], **{k: v for k, v in payload["architecture"].items()},
              "options": payload["options"], "seed": payload["seed"]}
    result["provenance"] = provenance(kind, inputs)
    row.update(kind=kind, result=result)
    return row


def run_sweep(spec: SweepSpec, store, workers: int | None = None, scheduler: str | None = None,
              retry_failed: bool = False,
              progress: Callable[[int, int, Case, dict], None] | None = None) -> dict:
    """Run the cases of ``spec`` missing from ``store``; return the summary.

    Parameters
    ----------
    spec : a validated :class:`SweepSpec`
    store : a :class:`~symattn.sweep.store.Store` (written only here, on the client)
    workers : local worker processes (default: the machine's cores, at most
        :data:`MAX_WORKERS`); ``0`` runs the cases one after another in this
        process, without dask
    scheduler : address of an existing dask scheduler (then ``workers`` is unused;
        checked by :func:`check_scheduler`)
    retry_failed : also rerun cases whose stored row failed or hit a limit
    progress : called as ``progress(done, total, case, row)`` after each case

    Returns
    -------
    dict
        ``cases``, ``computed`` (new rows that succeeded), ``failed`` (new rows
        that failed or hit a limit), ``reused`` (rows already stored, of which
        ``reused_failed`` failed), ``already_stored`` (new rows not written
        because another sweep stored the case's result first), ``without_result``
        (cases of the spec whose stored row is not ``ok`` at the end),
        ``skipped`` (out of an analysis's scope or beyond ``--max-memory``),
        ``seconds``, ``workers``, ``scheduler``, ``store``, ``symattn``.
    """
    from symattn import __version__
    from symattn.core.validate import BadType, require_type
    from symattn.sweep.store import Store

    require_type(spec, "spec", SweepSpec, "a SweepSpec (from load_spec or parse_spec)")
    require_type(store, "store", Store, "a symattn.sweep.store.Store")
    if workers is not None:
        require_int(workers, "workers", 0, MAX_WORKERS)
    if progress is not None and not callable(progress):
        raise BadType(f"progress must be callable as progress(done, total, case, row), got {shown(progress)}")
    if scheduler is not None:
        scheduler = check_scheduler(scheduler)
        probe_scheduler(scheduler)
    start = time.perf_counter()
    store.plan(spec.cases, spec.source)
    done = store.statuses([c.key for c in spec.cases])
    todo = [c for c in spec.cases
            if c.key not in done or (retry_failed and done[c.key] != "ok")]
    reused = [c for c in spec.cases if c not in todo]
    todo.sort(key=lambda c: -c.cost)  # largest first: the shortest sweep on few workers
    counts = {"ok": 0, "failed": 0, "already_stored": 0}
    report = progress or (lambda *a: None)

    def record(case: Case, row: dict) -> None:
        if not store.put(case, row, __version__):
            counts["already_stored"] += 1
        counts["ok" if row["status"] == "ok" else "failed"] += 1
        report(counts["ok"] + counts["failed"], len(todo), case, row)

    used_workers: "int | None" = workers
    if todo and workers == 0 and scheduler is None:
        for case in todo:
            record(case, execute(case.payload(), spec.timeout, spec.memory, __version__))
    elif todo:
        used_workers = _run_dask(todo, spec, record, workers, scheduler, __version__)
    final = store.statuses([c.key for c in spec.cases])
    return {"cases": len(spec.cases), "computed": counts["ok"], "failed": counts["failed"],
            "reused": len(reused), "reused_failed": sum(done[c.key] != "ok" for c in reused),
            "already_stored": counts["already_stored"],
            "without_result": sum(final.get(c.key) != "ok" for c in spec.cases),
            "skipped": len(spec.skipped), "seconds": round(time.perf_counter() - start, 3),
            "workers": used_workers, "scheduler": scheduler, "store": str(store.path),
            "symattn": __version__}


# -- cluster: workers, addresses, connections --------------------------------------------------

#: Most local worker processes a sweep starts.
MAX_WORKERS = 256
#: Seconds to reach an external scheduler (TCP connect and dask's handshake) and to see a worker.
CONNECT_SECONDS = 30.0
_HOST = re.compile(r"(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
                   r"(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?")


def check_scheduler(address: str) -> str:
    """``address`` of a dask scheduler, checked: ``tcp://HOST:PORT``, ``tls://HOST:PORT`` or
    ``HOST:PORT`` (then tcp), a host name, IPv4 or bracketed IPv6 address, a port in [1, 65535].

    >>> check_scheduler("head-node:8786")
    'tcp://head-node:8786'
    >>> check_scheduler("http://head-node:8787")
    Traceback (most recent call last):
    ...
    symattn.core.errors.SymattnError: --scheduler 'http://head-node:8787': the scheme must be tcp:// or tls://, as dask prints it (e.g. tcp://head-node:8786)
    """
    import ipaddress

    if not isinstance(address, str):
        raise SymattnError(f"--scheduler must be an address like tcp://host:8786, got {shown(address)}")
    where = f"--scheduler {address[:80]!r}"
    if not address or len(address) > 300 or any(c.isspace() or not c.isprintable() for c in address):
        raise SymattnError(f"{where} must be an address like tcp://host:8786 (no spaces or line breaks)")
    scheme, sep, rest = address.partition("://")
    if not sep:
        scheme, rest = "tcp", address
    if scheme not in ("tcp", "tls"):
        raise SymattnError(f"{where}: the scheme must be tcp:// or tls://, as dask prints it "
                           "(e.g. tcp://head-node:8786)")
    host, colon, port = rest.rpartition(":")
    if not colon or not port.isdigit() or not 1 <= int(port) <= 65535 or len(port) > 5:
        raise SymattnError(f"{where} needs a port in [1, 65535] after the host, e.g. tcp://head-node:8786")
    if host.startswith("[") and host.endswith("]"):
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            raise SymattnError(f"{where}: {host} is not an IPv6 address") from None
    elif not _HOST.fullmatch(host):
        raise SymattnError(f"{where}: {host[:80]!r} is not a host name or IP address")
    return f"{scheme}://{host}:{int(port)}"


def plan_workers(workers: int | None, memory: int, max_memory_gib: float) -> int:
    """Local workers for a sweep whose cases may each take ``memory`` bytes: ``workers`` if
    ``workers x memory`` fits ``--max-memory``, else refused; by default one per core, as many
    as fit.

    >>> plan_workers(None, 4 * 2**30, 8.0) <= 2
    True
    >>> plan_workers(8, 2 * 2**30, 12.0)
    Traceback (most recent call last):
    ...
    symattn.core.errors.SymattnError: --workers 8 with limits.memory 2 GiB per case may use 16 GiB, above --max-memory 12 GiB; give fewer workers, a smaller limits.memory, or raise --max-memory
    """
    limit = max_memory_gib * 2**30
    if workers is None:
        return max(1, min(os.cpu_count() or 1, MAX_WORKERS, int(limit // memory)))
    require_int(workers, "--workers", 0, MAX_WORKERS)
    if max(workers, 1) * memory > limit:
        raise SymattnError(f"--workers {workers} with limits.memory {memory / 2**30:.3g} GiB per case may "
                           f"use {max(workers, 1) * memory / 2**30:.3g} GiB, above --max-memory "
                           f"{max_memory_gib:g} GiB; give fewer workers, a smaller limits.memory, or "
                           "raise --max-memory")
    return workers


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


class _DeferredInterrupt:
    """Hold SIGINT while the local cluster starts: the worker processes inherit the blocked
    signal (so Ctrl-C reaches the client alone), and a Ctrl-C pressed meanwhile is delivered
    when the block ends, as a :class:`KeyboardInterrupt` (exit status 130).

    Blocking covers the main thread only; the kernel may hand the signal to another thread
    (dask's), and Python then runs its handler in the main thread at once. So the handler is
    replaced for the block by one that only records the Ctrl-C: the cluster is always built
    to the end (and closed by the caller) before the interrupt is raised."""

    def __enter__(self):
        self.active = _main_thread() and hasattr(signal, "pthread_sigmask")
        self.interrupted = False
        if self.active:
            self.previous = signal.signal(signal.SIGINT, self._record)
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        return self

    def _record(self, signum, frame) -> None:
        self.interrupted = True

    def __exit__(self, *exc) -> None:
        if self.active:
            pending = signal.SIGINT in signal.sigpending()
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
            # signal.signal runs the handlers of signals already arrived (ours records) first
            signal.signal(signal.SIGINT, self.previous)
            if (pending or self.interrupted) and exc[0] is None:
                raise KeyboardInterrupt


def probe_scheduler(address: str, seconds: float | None = None) -> None:
    """Reach the scheduler at ``address`` (checked by :func:`check_scheduler`) and complete
    dask's handshake within ``seconds``, or raise :class:`~symattn.core.errors.SymattnError`
    (dask's own connect has no timeout on the handshake: a silent server hangs it, and it
    retries a refused port until its timeout)."""
    import asyncio

    from distributed.comm import connect

    seconds = CONNECT_SECONDS if seconds is None else seconds
    host, port = address.split("://", 1)[1].rsplit(":", 1)
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=seconds).close()
    except OSError as exc:
        raise SymattnError(f"cannot connect to the dask scheduler at {address}: "
                           f"{exc.strerror or type(exc).__name__}") from None

    async def probe() -> None:
        comm = await connect(address, timeout=seconds)
        await comm.close()

    try:
        asyncio.run(asyncio.wait_for(probe(), seconds))
    except (asyncio.TimeoutError, TimeoutError):
        raise SymattnError(f"no dask scheduler answered at {address} within {seconds:g} s; check "
                           "the address (dask prints it as tcp://host:port)") from None
    except Exception as exc:  # OSError, CommClosedError, a malformed reply
        raise SymattnError(f"cannot connect to the dask scheduler at {address}: "
                           f"{type(exc).__name__}: {str(exc)[:120]}") from None


def _run_dask(todo: list[Case], spec: SweepSpec, record, workers: int | None, scheduler: str | None,
              version: str) -> int:
    """Submit every case to a dask cluster and record results as they complete."""
    import logging

    import dask
    from distributed import Client, LocalCluster, as_completed

    cluster = client = None
    try:
        if scheduler is None:
            with _DeferredInterrupt(), dask.config.set(LOCAL_CLUSTER_CONFIG):
                cluster = LocalCluster(n_workers=workers or min(os.cpu_count() or 1, MAX_WORKERS),
                                       threads_per_worker=1, processes=True, dashboard_address=None,
                                       silence_logs=logging.ERROR)
            client = Client(cluster, timeout=f"{CONNECT_SECONDS:g}s")
        else:  # run_sweep has reached it (probe_scheduler)
            try:
                client = Client(scheduler, timeout=f"{CONNECT_SECONDS:g}s")
                client.wait_for_workers(1, timeout=CONNECT_SECONDS)
            except (OSError, TimeoutError) as exc:
                raise SymattnError(f"the dask scheduler at {scheduler} has no worker after "
                                   f"{CONNECT_SECONDS:g} s ({type(exc).__name__}); start workers "
                                   "with: dask worker " + scheduler) from None
        nworkers = len(client.scheduler_info(n_workers=-1)["workers"])
        futures = {}
        for rank, case in enumerate(todo):
            digest = hashlib.sha1(repr(case.key).encode()).hexdigest()[:16]
            # an explicit priority keeps the largest-first order: dask batches quick successive
            # submits into one graph and would otherwise order them by its own rules
            fut = client.submit(execute, case.payload(), spec.timeout, spec.memory, version,
                                key=f"symattn-{case.analysis}-{digest}", pure=False,
                                priority=len(todo) - rank)
            futures[fut.key] = (fut, case)
        for fut in as_completed([f for f, _ in futures.values()]):
            case = futures[fut.key][1]
            try:
                row = fut.result()
            except Exception as exc:  # a lost worker (KilledWorker) or a transport error
                row = {"status": "failed", "kind": None, "result": None, "seconds": 0.0, "peak_rss": 0,
                       "host": "", "error": f"{type(exc).__name__}: {exc}"}
            record(case, row)
            fut.release()
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
    return nworkers
