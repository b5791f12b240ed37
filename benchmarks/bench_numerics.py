"""Timings of the numerical protocols (App. F); prints one line per figure.

Run from the repository root: ``python benchmarks/bench_numerics.py [--full]``.

* F.1 at 110 digits (three t values, ball arithmetic);
* F.3 at 100 digits (400 draws x 4 noise levels x 75 bisection steps);
* F.2 at 120 digits, six t values: the Jacobian (768 x 96, forward mode over
  the graph) and its 52 positive singular values, in python-flint ``arb``
  balls (:class:`symattn.analyses.numerics.BallAlgebra`) and, for comparison, the
  Jacobian alone in plain NumPy object arrays of ``mpmath`` numbers
  (:class:`symattn.core.algebras.MPMath`) -- one t, times six, unless ``--full``;
* the whole ``symattn reproduce f2`` protocol (exact spectrum, autodiff,
  90/120-digit comparison, weak-space angles) when PyTorch is installed.

Wall-clock seconds on whatever machine runs it (CPU time in parentheses).
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction

from symattn.core.algebras import MPMath
from symattn.model.symmetries import GaugeKernel
from symattn.model.architecture import Architecture
from symattn.analyses.numerics import BallAlgebra, observation_jacobian, positive_singular_values
from symattn.analyses.protocols import F2_T, f2_data, path_theta, protocol_f1, protocol_f2, protocol_f3


def timed(label: str, f):
    w, c = time.perf_counter(), time.process_time()
    out = f()
    print(f"{label:<62} {time.perf_counter() - w:8.2f} s  ({time.process_time() - c:.2f} s CPU)",
          flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="mpmath Jacobians at all six t")
    args = parser.parse_args()
    timed("F.1, 110 digits, t = 0.08, 0.04, 0.02", protocol_f1)
    timed("F.3, 100 digits, 400 draws, 4 alphas, 75 steps", protocol_f3)
    try:
        bank, U, W = f2_data()
    except Exception as exc:  # PyTorch missing: the F.2 figures need its generator
        print(f"F.2 skipped: {exc}")
        return
    arch = Architecture.uniform(3, 4, 2, 4, "exp")

    def balls():
        for t in F2_T:
            theta = path_theta(U, W, Fraction(t))
            comp = GaugeKernel(arch, theta).complement()
            J = observation_jacobian(arch, theta.as_dict(), bank, BallAlgebra(120))
            positive_singular_values(J, comp, 120)

    timed("F.2 Jacobian + 52 singular values, 120 digits, 6 t (arb balls)", balls)
    ts = F2_T if args.full else F2_T[-1:]

    def plain():
        for t in ts:
            observation_jacobian(arch, path_theta(U, W, Fraction(t)).as_dict(), bank, MPMath(120))

    timed(f"F.2 Jacobian only, 120 digits, {len(ts)} t (mpmath object arrays)"
          + ("" if args.full else "; x6 for all"), plain)
    timed("symattn reproduce f2 (whole protocol)", protocol_f2)


if __name__ == "__main__":
    main()
