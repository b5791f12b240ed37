"""Benchmarks of :mod:`symattn.analyses.jets` and :mod:`symattn.analyses.dimension` (prints figures; asserts nothing).

Run ``python benchmarks/bench_jets.py [--full]`` from the repository root.

* Theorem 3, softmax depth four: the sharp degree 55 (rank mod p of the ray
  Jacobian through degree 55, exact lower-jet check over Q), on the smallest
  width and token count the theorem allows (d = 1, n = 2), and with d = 2 on
  ``--full``. Target: <= 5 min.
* The certified HMK table (l = 2, t = 3, a = 2, delta = 3..10). Target: <= 2 min.
* What a float32 rank estimate sees near collapse (delta = 3): numerical ranks
  against the certified dimension.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the command line (symattn.cli), before NumPy

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from symattn.analyses.dimension import float32_rank_near_collapse, hmk_table
from symattn.analyses.jets import sharp_degree
from symattn.model.architecture import Architecture


def bench_depth_four(widths: tuple[int, ...]) -> None:
    for d in widths:
        start = time.perf_counter()
        r = sharp_degree(Architecture.uniform(4, d, 1, 2, "exp"))
        print(f"  softmax D=4 d={d} n=2: sharp degree {r.sharp_degree} (exact: rank mod p), "
              f"lower jets independent of M_4: {r.lower_jets_independent_of_last} (exact over Q), "
              f"{r.parameters} parameters, {r.rays} rays, {time.perf_counter() - start:.2f} s")


def bench_hmk() -> None:
    start = time.perf_counter()
    rows = hmk_table()
    total = time.perf_counter() - start
    print(f"  {'delta':>5} {'params':>6} {'lower':>5} {'upper':>5} {'dim':>4} {'formula':>7}  method      s")
    for r in rows:
        print(f"  {r['delta']:>5} {r['parameters']:>6} {r['lower_bound']:>5} {r['upper_bound']:>5} "
              f"{r['dimension']!s:>4} {r['formula']:>7}  {r['method']:<10} {r['seconds']:.2f}")
    print(f"  total {total:.1f} s (all dimensions certified: lower bound = upper bound, exact)")


def bench_float32() -> None:
    arch = Architecture.uniform(2, 3, 2, 3, "exp")
    rows = float32_rank_near_collapse(arch, ["1", "1/10", "1/100", "1/1000"], bank=250)
    print("  delta = 3 (certified dimension 25); native point Q_i = s U_i, K_i = s W_i")
    for r in rows:
        print(f"  s = {r['scale']:<7} rank mod p {r['exact_rank']:>3} (exact lower bound)   "
              f"float32 rank {r['numerical_rank']:>3} (numerical; sigma_25 {r['sigma_at_exact_rank']:.2g}, "
              f"threshold {r['threshold']:.2g})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="also d = 2 at depth four")
    args = parser.parse_args()
    print("Theorem 3, softmax depth four")
    bench_depth_four((1, 2) if args.full else (1,))
    print("HMK table, certified")
    bench_hmk()
    print("float32 rank estimate near collapse")
    bench_float32()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
