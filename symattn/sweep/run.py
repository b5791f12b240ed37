"""Sweeps: grids of architectures x analyses, run on ``dask.distributed``, kept in a store.

A sweep spec is a TOML file (read with :mod:`tomllib`, never evaluated)::

    analyses = ["spectrum", "jet", "dimension", "bank", "float32"]
    seeds = [0]                  # optional, default [0]

    [limits]                     # optional; per case
    timeout = 120                # seconds of wall clock
    memory = "2GB"               # resident memory

    [[grid]]                     # one or more grids; each is a cartesian product
    analyses = ["spectrum"]      # optional: only these of the analyses above
    depth = [2, 3]               # a list holds alternatives, a scalar is one
    width = [2, 3]               # or widths = [[3, 2, 3]] (d_0..d_D, one alternative)
    rank = [1, [1, 2]]           # or ranks = ...; a nested list is per layer
    tokens = 2
    normalizer = ["exp", "cosh", ["exp", "cosh"]]

    [options.spectrum]           # optional analysis options (see ANALYSES)
    bank = "auto"

:func:`load_spec` validates everything (keys, types, normalizer names through
:class:`~symattn.model.normalizer.Normalizer`, architectures, option values, the
number of cases) before any work and raises :class:`~symattn.core.errors.SymattnError`
with a one-line message. :func:`run_sweep` then

1. expands the grids into :class:`Case` objects, each keyed by its analysis,
   its *canonical* architecture (widths, ranks where the analysis uses them,
   tokens, and each normalizer as its rescaled expression, so ``rank = 1`` and
   ``rank = [1, 1]``, or ``"exp"`` and ``"2*exp(s)"``, are one case), its full
   options (defaults filled in) and its seed;
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
import itertools
import json
import os
import signal
import socket
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from symattn.core.errors import SymattnError
from symattn.sweep.analyses import ANALYSES, Analysis, build_architecture  # noqa: F401  (public names of run)
from symattn.sweep.confine import parse_memory, run_confined
from symattn.core.provenance import provenance

__all__ = ["ANALYSES", "Analysis", "Case", "LOCAL_CLUSTER_CONFIG", "build_architecture", "SweepSpec", "load_spec", "parse_spec", "compute",
           "execute", "run_sweep", "MAX_CASES"]

#: The most cases one spec may expand to (a guard against a mistyped grid).
MAX_CASES = 100_000
#: The largest native parameter count a sweep case may have (beyond: minutes and GBs per case).
MAX_PARAMETERS = 4_000

_GRID_KEYS = {"analyses", "depth", "width", "widths", "rank", "ranks", "tokens", "normalizer"}
_TOP_KEYS = {"analyses", "seeds", "limits", "grid", "options"}
_DEFAULT_TIMEOUT = 600.0
_DEFAULT_MEMORY = "4GB"
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


# -- cases -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    """One analysis of one canonical architecture at one seed (one store row)."""

    analysis: str
    architecture: dict          # canonical: depth, widths, ranks (or None), tokens, normalizers
    normalizer_specs: tuple     # the spec strings that build the normalizers
    options: dict
    seed: int
    cost: int = 0               # a relative cost estimate (for the order of submission)

    @property
    def key(self) -> tuple[str, str, str, int]:
        """``(analysis, architecture JSON, options JSON, seed)``, canonical."""
        return (self.analysis, json.dumps(self.architecture, sort_keys=True),
                json.dumps(self.options, sort_keys=True), self.seed)

    @property
    def label(self) -> str:
        a = self.architecture
        ranks = f" r={','.join(map(str, a['ranks']))}" if a.get("ranks") else ""
        return (f"{self.analysis} D={a['depth']} d={','.join(map(str, a['widths']))}{ranks} "
                f"n={a['tokens']} phi={','.join(dict.fromkeys(a['normalizers']))} seed={self.seed}")

    def payload(self) -> dict:
        """Plain JSON data a worker needs to compute the case."""
        return {"analysis": self.analysis, "architecture": {**self.architecture,
                "normalizer_specs": list(self.normalizer_specs)},
                "options": self.options, "seed": self.seed, "label": self.label}


@dataclass
class SweepSpec:
    """A validated sweep: its cases, limits, and the cases left out of scope."""

    cases: list[Case]
    timeout: float = _DEFAULT_TIMEOUT
    memory: int = field(default_factory=lambda: parse_memory(_DEFAULT_MEMORY))
    skipped: list[str] = field(default_factory=list)
    source: str = "<spec>"


def load_spec(path: "str | Path") -> SweepSpec:
    """Read and validate a sweep spec file (see the module docstring)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SymattnError(f"cannot read sweep spec {path}: {exc.strerror}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SymattnError(f"sweep spec {path} is not valid TOML: {exc}") from None
    return parse_spec(data, str(path))


def parse_spec(data: dict, source: str = "<spec>") -> SweepSpec:
    """Validate a parsed spec and expand its grids into cases (see the module docstring)."""
    def fail(msg: str):
        raise SymattnError(f"sweep spec {source}: {msg}")

    unknown = set(data) - _TOP_KEYS
    if unknown:
        fail(f"unknown key {sorted(unknown)[0]!r} (allowed: {', '.join(sorted(_TOP_KEYS))})")
    analyses = data.get("analyses")
    if not isinstance(analyses, list) or not analyses or not all(isinstance(a, str) for a in analyses):
        fail("'analyses' must be a non-empty list of names, e.g. analyses = [\"spectrum\"]")
    for a in analyses:
        if a not in ANALYSES:
            fail(f"unknown analysis {a!r} (known: {', '.join(ANALYSES)})")
    seeds = data.get("seeds", [0])
    if not isinstance(seeds, list) or not seeds or not all(_is_int(s) and s >= 0 for s in seeds):
        fail("'seeds' must be a non-empty list of non-negative integers")
    timeout, memory = _limits(data.get("limits", {}), fail)
    options = _options(data.get("options", {}), analyses, fail)
    grids = data.get("grid")
    if isinstance(grids, dict):
        grids = [grids]
    if not isinstance(grids, list) or not grids:
        fail("needs at least one [[grid]] table of architectures")
    from symattn.theorems.formulas import divisibility_orders

    cases: dict[tuple, Case] = {}
    skipped: list[str] = []
    count = 0
    for g, grid in enumerate(grids, 1):
        if not isinstance(grid, dict):
            fail(f"grid {g} must be a table")
        names = grid.get("analyses", analyses)
        if not isinstance(names, list) or not names or any(a not in analyses for a in names):
            fail(f"grid {g}: 'analyses' must be a non-empty list of analyses named at the top "
                 f"({', '.join(analyses)}), got {names!r}")
        archs = _grid_architectures({k: v for k, v in grid.items() if k != "analyses"},
                                    lambda msg: fail(f"grid {g}: {msg}"))
        count += len(archs) * len(names) * len(seeds)
        if count > MAX_CASES:
            fail(f"the grids expand to more than {MAX_CASES} cases; split the sweep")
        for arch, specs in archs:
            if arch.native_size > MAX_PARAMETERS:
                fail(f"grid {g}: an architecture with {arch.native_size} native parameters is beyond "
                     f"the {MAX_PARAMETERS} a sweep case may have (widths {list(arch.widths)})")
            order = max(divisibility_orders(arch))
            cost = arch.native_size * (order + 1)
            for name in names:
                analysis = ANALYSES[name]
                reason = analysis.applicable(arch)
                canonical = _canonical(arch, analysis.uses_ranks)
                if reason:
                    skipped.append(f"{name} {json.dumps(canonical, sort_keys=True)}: {reason}")
                    continue
                for seed in seeds:
                    case = Case(name, canonical, specs, options[name], seed,
                                cost * analysis.cost_weight(order))
                    cases.setdefault(case.key, case)
    return SweepSpec(list(cases.values()), timeout, memory, sorted(set(skipped)), source)


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_rational(text: str) -> bool:
    from fractions import Fraction

    try:
        return Fraction(text) > 0
    except (ValueError, ZeroDivisionError):
        return False


def _limits(limits, fail) -> tuple[float, int]:
    if not isinstance(limits, dict):
        fail("[limits] must be a table with 'timeout' and/or 'memory'")
    unknown = set(limits) - {"timeout", "memory"}
    if unknown:
        fail(f"unknown limit {sorted(unknown)[0]!r} (allowed: timeout, memory)")
    timeout = limits.get("timeout", _DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        fail(f"limits.timeout must be a positive number of seconds, got {timeout!r}")
    try:
        memory = parse_memory(limits.get("memory", _DEFAULT_MEMORY))
    except SymattnError as exc:
        fail(f"limits.memory: {exc}")
    return float(timeout), memory


def _options(given, analyses: list[str], fail) -> dict[str, dict]:
    if not isinstance(given, dict):
        fail("[options] must hold one table per analysis, e.g. [options.spectrum]")
    for name in given:
        if name not in analyses:
            fail(f"[options.{name}] names an analysis that is not in 'analyses'")
    out = {}
    for name in analyses:
        table = given.get(name, {})
        if not isinstance(table, dict):
            fail(f"[options.{name}] must be a table")
        allowed = ANALYSES[name].options
        for key in table:
            if key not in allowed:
                fail(f"unknown option {key!r} for {name} (allowed: {', '.join(allowed) or 'none'})")
        opts = {}
        for key, (default, check) in allowed.items():
            value = table.get(key, default)
            if isinstance(check, tuple) and value not in check:
                fail(f"options.{name}.{key} must be one of {', '.join(check)}, got {value!r}")
            if check == "bank" and not (value == "auto" or (_is_int(value) and value > 0)):
                fail(f"options.{name}.bank must be \"auto\" or a positive integer, got {value!r}")
            if check == "scales" and not (isinstance(value, list) and value and all(
                    isinstance(v, str) and _is_rational(v) for v in value)):
                fail(f"options.{name}.{key} must be a list of positive rationals as strings like "
                     f"\"1/100\", got {value!r}")
            if check == "count" and not (_is_int(value) and 0 < value <= 10_000):
                fail(f"options.{name}.{key} must be an integer between 1 and 10000, got {value!r}")
            if check == "order" and value is not None and not (_is_int(value) and 0 < value <= 600):
                fail(f"options.{name}.{key} must be an integer between 1 and 600, got {value!r}")
            opts[key] = value
        out[name] = opts
    return out


def _alternatives(grid: dict, key: str, fail) -> list:
    value = grid[key]
    values = value if isinstance(value, list) else [value]
    if not values:
        fail(f"'{key}' has no values")
    return values


def _grid_architectures(grid: dict, fail) -> list[tuple[Any, tuple]]:
    """Every architecture of one grid table, with the normalizer spec strings."""
    from symattn.model.architecture import Architecture
    from symattn.model.normalizer import normalizers

    unknown = set(grid) - _GRID_KEYS
    if unknown:
        fail(f"unknown key {sorted(unknown)[0]!r} (allowed: {', '.join(sorted(_GRID_KEYS))})")
    for a, b in (("width", "widths"), ("rank", "ranks")):
        if a in grid and b in grid:
            fail(f"give '{a}' or '{b}', not both")
    if "depth" not in grid:
        fail("'depth' is required")
    if "width" not in grid and "widths" not in grid:
        fail("'width' or 'widths' is required")
    grid = {"rank": 1, "tokens": 2, "normalizer": "exp", **grid}
    wkey = "width" if "width" in grid else "widths"
    rkey = "rank" if "rank" in grid else "ranks"
    axes = [_alternatives(grid, k, fail) for k in ("depth", wkey, rkey, "tokens", "normalizer")]
    out = []
    built: dict[str, Any] = {}
    for depth, width, rank, tokens, phi in itertools.product(*axes):
        if not (_is_int(depth) and depth >= 1):
            fail(f"depth must be a positive integer, got {depth!r}")
        if not (_is_int(tokens) and tokens >= 2):
            fail(f"tokens must be an integer >= 2, got {tokens!r}")
        widths = _per_layer_ints(width, depth + 1, wkey, fail)
        ranks = _per_layer_ints(rank, depth, rkey, fail)
        specs = tuple(phi) if isinstance(phi, list) else (phi,) * depth
        if len(specs) != depth or not all(isinstance(s, str) for s in specs):
            fail(f"normalizer must be a name or a list of {depth} names, got {phi!r}")
        try:
            for s in specs:
                if s not in built:
                    built[s] = normalizers(s, 1)[0]  # the Normalizer API validates the name
            arch = Architecture(widths, ranks, tokens, tuple(built[s] for s in specs))
        except SymattnError as exc:
            fail(str(exc))
        out.append((arch, specs))
    return out


def _per_layer_ints(value, count: int, key: str, fail) -> tuple[int, ...]:
    values = value if isinstance(value, list) else [value] * count
    if len(values) != count or not all(_is_int(v) and v >= 1 for v in values):
        fail(f"'{key}' alternative {value!r} must be a positive integer or a list of {count}")
    return tuple(values)


def _canonical(arch, uses_ranks: bool) -> dict:
    return {"depth": arch.depth, "widths": list(arch.widths),
            "ranks": list(arch.ranks) if uses_ranks else None, "tokens": arch.tokens,
            "normalizers": [str(phi.expr) for phi in arch.normalizers]}


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
    workers : local worker processes (default: the machine's cores); ``0`` runs
        the cases one after another in this process, without dask
    scheduler : address of an existing dask scheduler (then ``workers`` is unused)
    retry_failed : also rerun cases whose stored row failed or hit a limit
    progress : called as ``progress(done, total, case, row)`` after each case

    Returns
    -------
    dict
        ``cases``, ``computed`` (new rows that succeeded), ``failed`` (new rows
        that failed or hit a limit), ``reused`` (rows already stored, of which
        ``reused_failed`` failed), ``skipped`` (out of an analysis's scope),
        ``seconds``, ``workers``, ``scheduler``, ``store``, ``symattn``.
    """
    from symattn import __version__

    start = time.perf_counter()
    store.plan(spec.cases, spec.source)
    done = store.statuses([c.key for c in spec.cases])
    todo = [c for c in spec.cases
            if c.key not in done or (retry_failed and done[c.key] != "ok")]
    reused = [c for c in spec.cases if c not in todo]
    todo.sort(key=lambda c: -c.cost)  # largest first: the shortest sweep on few workers
    counts = {"ok": 0, "failed": 0}
    report = progress or (lambda *a: None)

    def record(case: Case, row: dict) -> None:
        store.put(case, row, __version__)
        counts["ok" if row["status"] == "ok" else "failed"] += 1
        report(counts["ok"] + counts["failed"], len(todo), case, row)

    used_workers: "int | None" = workers
    if todo and workers == 0 and scheduler is None:
        for case in todo:
            record(case, execute(case.payload(), spec.timeout, spec.memory, __version__))
    elif todo:
        used_workers = _run_dask(todo, spec, record, workers, scheduler, __version__)
    return {"cases": len(spec.cases), "computed": counts["ok"], "failed": counts["failed"],
            "reused": len(reused), "reused_failed": sum(done[c.key] != "ok" for c in reused),
            "skipped": len(spec.skipped), "seconds": round(time.perf_counter() - start, 3),
            "workers": used_workers, "scheduler": scheduler, "store": str(store.path),
            "symattn": __version__}


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def _run_dask(todo: list[Case], spec: SweepSpec, record, workers: int | None, scheduler: str | None,
              version: str) -> int:
    """Submit every case to a dask cluster and record results as they complete."""
    import logging

    import dask
    from distributed import Client, LocalCluster, as_completed

    cluster = None
    if scheduler is None:
        # the worker processes start with SIGINT ignored: Ctrl-C reaches the client alone,
        # which then closes the cluster (instead of every worker dying with a traceback)
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if _main_thread() else None
        try:
            with dask.config.set(LOCAL_CLUSTER_CONFIG):
                cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1,
                                       processes=True, dashboard_address=None, silence_logs=logging.ERROR)
        finally:
            if previous is not None:
                signal.signal(signal.SIGINT, previous)
    client = Client(cluster if cluster is not None else scheduler, timeout="30s")
    try:
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
        client.close()
        if cluster is not None:
            cluster.close()
    return nworkers
