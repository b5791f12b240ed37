"""Foundation benchmark: the native network as series with tangents in all parameters.

Run::

    PYTHONPATH=. python benchmarks/bench_foundation.py [--repeat 3] [--profile]

Evaluates the native network of the paper's F.2 size (d = 4, r = 2, D = 3,
n = 4, softmax) on a 48-input bank along the Theorem 4 path
``Q_i = t U_i, K_i = t W_i, V_i = I`` as truncated series in ``t`` to order 20,
with forward-mode tangents in all 96 native parameters, by
:func:`symattn.model.network.jacobian` (``verify=0``: the independent series check is
timed by ``bench_spectrum.py``) over F_p (``modular_series(20)``): the whole
series Jacobian (768 output entries x 96 parameters, 20 coefficients each) in
one graph evaluation, with no kernel reduction and no ``u = t^2`` trick. Prints
the best wall-clock time of ``--repeat`` runs and the Jacobian shape; then the
same over Q (``exact_series``) on the first 4 inputs of the bank, and checks
that the exact Jacobian reduces mod p to the modular one. ``--profile`` prints
the cProfile hotspots of one modular run.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats

import numpy as np

from symattn.core.algebras import exact_series, modular_series
from symattn.model.network import jacobian, native_network
from symattn.model.architecture import Architecture
from symattn.model.parameters import native_path_values, random_bank
from symattn.analyses.spectrum import path_parameters
from timing import best_of

ORDER = 20


def series_jacobian(arch: Architecture, bank: np.ndarray, algebra, U, W, V) -> np.ndarray:
    """``(order, rows, 96)``: d F / d theta as series in t (rows (input, coordinate, token))."""
    values = native_path_values(arch, algebra, U, W, V)
    values["X"] = algebra.const(bank)
    return jacobian(native_network(arch), algebra, values, [n for n, _ in arch.native_shapes()], verify=0)


def as_matrix_shape(J: np.ndarray) -> tuple[int, int, int]:
    """(rows = output entries, columns = parameters, series coefficients)."""
    order, rows, params = J.shape
    return rows, params, order


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per case (best is reported)")
    parser.add_argument("--profile", action="store_true", help="cProfile one modular run")
    args = parser.parse_args(argv)

    arch = Architecture.uniform(depth=3, width=4, rank=2, tokens=4, normalizer="exp")
    U, W, V = path_parameters(arch, seed=21)
    bank = random_bank(arch, 48, seed=21)
    Fp = modular_series(ORDER)

    sec, J = best_of(lambda: series_jacobian(arch, bank, Fp, U, W, V), args.repeat)
    rows, cols, order = as_matrix_shape(J)
    print(f"mod p = {Fp.field.p}: 48 inputs, order {ORDER}, {cols} tangent directions: "
          f"{sec:.2f} s (best of {args.repeat}); series Jacobian array {J.shape} = "
          f"Jacobian {rows} x {cols} of series with {order} coefficients")

    small = bank[:4]
    Q = exact_series(ORDER)
    sec_q, JQ = best_of(lambda: series_jacobian(arch, small, Q, U, W, V), args.repeat)
    rows, cols, order = as_matrix_shape(JQ)
    print(f"over Q (python-flint fmpq): 4 inputs: {sec_q:.2f} s (best of {args.repeat}); "
          f"series Jacobian array {JQ.shape} = Jacobian {rows} x {cols}")

    sec_p4, J4 = best_of(lambda: series_jacobian(arch, small, Fp, U, W, V), args.repeat)
    p = Fp.field.p
    reduced = np.vectorize(lambda v: int(v.p) * pow(int(v.q), -1, p) % p, otypes=[np.int64])(JQ)
    assert np.array_equal(reduced, J4), "the exact Jacobian does not reduce to the modular one"
    print(f"mod p on the same 4 inputs: {sec_p4:.2f} s; exact Jacobian reduced mod p equals it "
          f"(ratio Q / F_p on 4 inputs: {sec_q / sec_p4:.0f}x)")

    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        series_jacobian(arch, bank, Fp, U, W, V)
        profiler.disable()
        stream = io.StringIO()
        pstats.Stats(profiler, stream=stream).sort_stats("tottime").print_stats(12)
        print(stream.getvalue())


if __name__ == "__main__":
    main()
