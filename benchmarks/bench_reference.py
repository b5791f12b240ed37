"""The cost of the naive reference check inside the spectra of transformer-block stacks.

Runs a few spectra of block stacks and times the reference checks the interpreter runs on
their Jacobians (:func:`symattn.model.reference.reference_check`, exact;
:func:`symattn.model.reference.numerical_check`, numerical), printing one row per stack::

    python benchmarks/bench_reference.py

Wall-clock seconds on a shared machine: compare the two columns of one row, not rows of
different runs.
"""

from __future__ import annotations

import time

from symattn.analyses.numerical_spectrum import numerical_path_spectrum
from symattn.testing.banks import square_bank
from symattn.analyses.spectrum import native_spectrum
from symattn.model import reference
from symattn.model.architecture import Architecture

CASES = [
    ("modular", 2, {"skip": "value", "bias": True, "mlp": 2, "activation": "poly:0,1,1/3"}),
    ("modular", 2, {"heads": 2, "combine": "concat", "bias": True}),
    ("exact (square bank)", 1, {"skip": "value", "norm": "post", "eps": "1/10"}),
    ("numerical", 2, {"skip": "value", "norm": "post", "mlp": 2, "activation": "gelu"}),
    ("numerical", 2, {"skip": "value", "norm": "pre", "mlp": 2, "activation": "gelu_tanh", "bias": True}),
]


def main() -> int:
    spent = {"reference_check": 0.0, "numerical_check": 0.0}
    for name in spent:
        real = getattr(reference, name)

        def timed(*args, _real=real, _name=name, **kwargs):
            start = time.perf_counter()
            try:
                return _real(*args, **kwargs)
            finally:
                spent[_name] += time.perf_counter() - start
        setattr(reference, name, timed)
    print(f"{'tier':<20} {'stack (d = 2, n = 3)':<62} {'total s':>8} {'check s':>8} {'share':>6}")
    for tier, depth, kind in CASES:
        arch = Architecture.uniform(depth, 2, 1, 3, "exp", **kind)
        for key in spent:
            spent[key] = 0.0
        start = time.perf_counter()
        if tier == "numerical":
            numerical_path_spectrum(arch)
        elif tier.startswith("exact"):
            native_spectrum(arch, bank=square_bank(arch, 6), method="exact")
        else:
            native_spectrum(arch)
        total = time.perf_counter() - start
        check = sum(spent.values())
        print(f"{tier:<20} {arch.parts()[:62]:<62} {total:8.2f} {check:8.2f} {check / total:6.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
