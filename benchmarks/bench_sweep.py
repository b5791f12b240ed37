"""Benchmark of a sweep: 20 mid-size cases on 2 local dask workers vs one after another.

Run: ``PYTHONPATH=. python benchmarks/bench_sweep.py [--workers 2] [--spec FILE] [--repeat R]
[--contention]``. Runs the spec ``benchmarks/sweep-mid.toml`` (20 cases of a few
seconds each) into fresh stores: ``workers = 0`` (the cases one after another in
this process, each in its limited child, no dask) and ``workers = N`` (a dask
LocalCluster of N processes, its start-up included), checks that both stores hold
the same results, and prints both wall-clock times and the speed-up. With
``--repeat R`` the two runs alternate R times and the median speed-up is printed
(the machine's speed drifts by 10-20 % within minutes).

``--contention`` measures instead what two busy cores cost the cases themselves,
without dask: the serial sweep alone, then two serial sweeps at the same time in
two processes (each its own store). The ratio of their summed per-case seconds,
``s``, bounds any 2-worker speed-up on this machine by ``2 / s`` (dask start-up
not counted).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the command line (symattn.cli), before NumPy

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from symattn.sweep.store import Store
from symattn.sweep.run import load_spec, run_sweep

SPEC = Path(__file__).resolve().parent / "sweep-mid.toml"


def _results(store: Store) -> dict:
    out = {}
    for r in store.rows():
        result = dict(r["result"] or {})
        result.pop("seconds", None)
        out[(r["analysis"], json.dumps(r["architecture"], sort_keys=True))] = (r["status"], result)
    return out


def _run(spec, path: Path, workers: int) -> tuple[float, float, dict]:
    """One sweep into a fresh store: wall-clock seconds, summed per-case seconds, results."""
    with Store(path) as store:
        t0 = time.perf_counter()
        summary = run_sweep(spec, store, workers=workers)
        wall = time.perf_counter() - t0
        busy = sum(r["seconds"] for r in store.rows())
        print(f"workers = {workers}: {summary['computed']} computed, {summary['failed']} failed, "
              f"{wall:.1f} s wall clock ({busy:.1f} s summed over cases)", flush=True)
        return wall, busy, _results(store)


def speedup(spec, workers: int, repeat: int) -> None:
    """Serial and dask runs alternated ``repeat`` times; the median speed-up."""
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(repeat):
            serial, _, expected = _run(spec, Path(tmp) / f"s{i}.sqlite", 0)
            parallel, _, got = _run(spec, Path(tmp) / f"p{i}.sqlite", workers)
            assert expected == got, "serial and dask results differ"
            ratios.append(serial / parallel)
            print(f"  round {i + 1}: speed-up {ratios[-1]:.2f}x", flush=True)
    print(f"{len(spec.cases)} cases: speed-up {statistics.median(ratios):.2f}x on {workers} workers "
          f"(median of {repeat}: {', '.join(f'{r:.2f}' for r in ratios)}; dask start-up included); "
          "results identical")


def contention(spec_path: str) -> None:
    """Summed per-case seconds of a serial sweep alone and of two serial sweeps side by side."""
    def busy(n: int, tmp: str, tag: str) -> list[float]:
        """Run ``n`` serial sweeps (``symattn sweep --workers 0``) at once; their summed case seconds."""
        stores = [Path(tmp) / f"{tag}{k}.sqlite" for k in range(n)]
        procs = [subprocess.Popen([sys.executable, "-m", "symattn", "sweep", spec_path, "--store", str(path),
                                   "--workers", "0"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                 for path in stores]
        if any(p.wait() for p in procs):
            raise SystemExit("a serial sweep failed")
        out = []
        for path in stores:
            with Store(path) as store:
                out.append(sum(r["seconds"] for r in store.rows()))
        return out

    with tempfile.TemporaryDirectory() as tmp:
        alone = busy(1, tmp, "a")[0]
        pair = busy(2, tmp, "b")
        alone2 = busy(1, tmp, "c")[0]
    single = (alone + alone2) / 2
    s = statistics.mean(pair) / single
    print(f"one serial sweep alone: {alone:.1f} s and {alone2:.1f} s summed over cases; two side by side: "
          f"{pair[0]:.1f} s and {pair[1]:.1f} s; each case {100 * (s - 1):+.0f} % when both cores compute, "
          f"so 2 workers can reach at most {2 / s:.2f}x here")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--spec", default=str(SPEC), help="another sweep spec (default sweep-mid.toml)")
    parser.add_argument("--repeat", type=int, default=1, help="alternate the two runs R times (median)")
    parser.add_argument("--contention", action="store_true",
                        help="measure what two busy cores cost the cases (no dask)")
    args = parser.parse_args()
    if args.contention:
        contention(args.spec)
    else:
        speedup(load_spec(args.spec), args.workers, args.repeat)


if __name__ == "__main__":
    main()
