"""Foundation benchmark: the native network as series with tangents in all parameters.

Run: ``python benchmarks/bench_foundation.py``. Evaluates the native network
(d = 4, r = 2, D = 3, n = 4, softmax) on a 48-input bank along
``Q_i = t U_i, K_i = t W_i, V_i = I`` as truncated series in ``t`` to order 20,
with forward-mode tangents in all 96 native parameters, over F_p (the
Jacobian of the paper's F.2 as exact series mod p; no kernel reduction, no
``u = t^2`` trick), and prints the best of three wall-clock times; then the
same over Q on a 4-input bank for comparison.
"""

from __future__ import annotations

import time

import numpy as np

from symattn.algebras import Tangent, exact_series, modular_series
from symattn.graph import evaluate, native_network
from symattn.model import Architecture, random_bank
from symattn.spectrum import _path_values, path_parameters


def jacobian_series(arch: Architecture, bank, algebra) -> np.ndarray:
    U, W, V = path_parameters(arch, seed=21)
    P = arch.native_size
    vals = _path_values(arch, algebra, U, W, V, np.eye(P, dtype=int))
    vals["X"] = algebra.const(bank)
    return evaluate(native_network(arch), Tangent(algebra, P), vals)["F"].tangent


def best(fn, repeat: int = 3) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main() -> None:
    arch = Architecture.uniform(3, 4, 2, 4, "exp")
    bank = random_bank(arch, 48, seed=21)
    sec, J = best(lambda: jacobian_series(arch, bank, modular_series(20)))
    print(f"native network, 48 inputs, series to order 20 mod p, tangents in all 96 parameters: "
          f"{sec:.2f} s (best of 3); tangent array {J.shape}")
    sec, J = best(lambda: jacobian_series(arch, bank[:4], exact_series(20)), repeat=1)
    print(f"same over Q (python-flint fmpq), 4 inputs: {sec:.2f} s; tangent array {J.shape}")


if __name__ == "__main__":
    main()
