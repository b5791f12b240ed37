"""Benchmarks of the variant analyses (issue 15: skips, masks, multi-head, banks).

Run: ``python benchmarks/bench_variants.py [--repeat R]``. Prints the best of
``--repeat`` wall-clock times (seconds) on this machine for:

1. the performance target: depth 3, d = 4, two heads (r = 1 and r = 2 per
   head), causal mask, skip connections X + sum_h V_h S_h(X), n = 4 tokens:
   certified contact spectrum with the bank grown automatically;
2. the certified dimension of the same stack (r = 1);
3. the least separating random bank of the paper's F.2 architecture.
"""

from __future__ import annotations

import argparse

from symattn.bank import least_bank
from symattn.model import Architecture
from symattn.variant_spectrum import variant_dimension, variant_spectrum
from symattn.variants import LayerKind, with_layers
from timing import best_of


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    kind = LayerKind(skip="value", mask="causal", heads=2)
    for r in (1, 2):
        arch = with_layers(Architecture.uniform(3, 4, r, 4, "exp"), kind)
        t, s = best_of(lambda: variant_spectrum(arch), args.repeat)
        bands = [(b["layer"], b["order"], b["multiplicity"]) for b in s.bands]
        print(f"target spectrum r = {r}: {t:.1f} s; P = {s.parameters}, bank {s.bank_size}, bands {bands}, "
              f"kernel {s.kernel}, undecided {s.undecided}, certificate {s.certificate}")
    arch = with_layers(Architecture.uniform(3, 4, 1, 4, "exp"), kind)
    t, d = best_of(lambda: variant_dimension(arch), args.repeat)
    print(f"target dimension r = 1: {t:.1f} s; {d.lower_bound} <= dim <= {d.upper_bound} of {d.parameters}")
    t, b = best_of(lambda: least_bank(Architecture.uniform(3, 4, 2, 4, "exp"), "random", trials=3), args.repeat)
    print(f"least random bank, F.2 architecture: {t:.1f} s; m = {b.least_size}, counting bound "
          f"{b.counting_bound}, generic {b.generic}, defects at m - 1 {b.defects_below}")


if __name__ == "__main__":
    main()
