"""Benchmark of a sweep: 20 mid-size cases on 2 local dask workers vs one after another.

Run: ``PYTHONPATH=. python benchmarks/bench_sweep.py [--workers 2] [--spec FILE]``. Runs the
spec ``benchmarks/sweep-mid.toml`` (20 cases of a few seconds each) twice into
fresh stores: ``workers = 0`` (the cases one after another in this process,
each in its limited child, no dask) and ``workers = N`` (a dask LocalCluster of
N processes, its start-up included), checks that both stores hold the same
results, and prints both wall-clock times and the speed-up.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the command line (symattn.cli), before NumPy

import argparse
import json
import tempfile
import time
from pathlib import Path

from symattn.store import Store
from symattn.sweep import load_spec, run_sweep

SPEC = Path(__file__).resolve().parent / "sweep-mid.toml"


def _results(store: Store) -> dict:
    out = {}
    for r in store.rows():
        result = dict(r["result"] or {})
        result.pop("seconds", None)
        out[(r["analysis"], json.dumps(r["architecture"], sort_keys=True))] = (r["status"], result)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--spec", default=str(SPEC), help="another sweep spec (default sweep-mid.toml)")
    args = parser.parse_args()
    spec = load_spec(args.spec)
    times, results = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for workers in (0, args.workers):
            with Store(Path(tmp) / f"w{workers}.sqlite") as store:
                t0 = time.perf_counter()
                summary = run_sweep(spec, store, workers=workers)
                times[workers] = time.perf_counter() - t0
                results[workers] = _results(store)
                busy = sum(r["seconds"] for r in store.rows())
            print(f"workers = {workers}: {summary['computed']} computed, {summary['failed']} failed, "
                  f"{times[workers]:.1f} s wall clock ({busy:.1f} s summed over cases)")
    assert results[0] == results[args.workers], "serial and dask results differ"
    print(f"{len(spec.cases)} cases: speed-up {times[0] / times[args.workers]:.2f}x on {args.workers} workers "
          "(dask start-up included); results identical")


if __name__ == "__main__":
    main()
