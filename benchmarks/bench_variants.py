"""Benchmarks of the analyses on stacks beyond the paper (issue 15: skips, masks, multi-head, banks).

Run: ``python benchmarks/bench_variants.py [--repeat R]``. Prints the best of
``--repeat`` wall-clock times (seconds) on this machine for:

1. the performance target: depth 3, d = 4, two heads (r = 1 and r = 2 per
   head), causal mask, skip connections X + sum_h V_h S_h(X), n = 4 tokens:
   certified contact spectrum with the bank grown automatically;
2. the certified dimension of the same stack (r = 1);
3. the least separating random bank of the paper's F.2 architecture;
4. the sharp jet degree of the r = 1 target (native map modulo its symmetries);
5. the least separating random bank of a depth-2, d = 2, n = 3 two-head causal
   stack with skips (prefixes of a certified reference bank);
6. the float64 sensitivity of a depth-2, d = 2, n = 3 causal stack with skips.
"""

from __future__ import annotations

import argparse

from symattn.analyses.bank import least_bank
from symattn.analyses.dimension import neuromanifold_dimension
from symattn.analyses.jets import sharp_degree
from symattn.analyses.sensitivity import sensitivity
from symattn.analyses.spectrum import native_spectrum
from symattn.model.architecture import Architecture
from timing import best_of


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    kind = dict(skip="value", mask="causal", heads=2)
    for r in (1, 2):
        arch = Architecture.uniform(3, 4, r, 4, "exp", **kind)
        t, s = best_of(lambda: native_spectrum(arch), args.repeat)
        bands = [(b.layer, b.order, b.multiplicity) for b in s.bands]
        print(f"target spectrum r = {r}: {t:.1f} s; P = {s.parameters}, bank {s.bank_size}, bands {bands}, "
              f"kernel {s.kernel}, undecided {s.undecided}, certificate {s.certificate}")
    arch = Architecture.uniform(3, 4, 1, 4, "exp", **kind)
    t, d = best_of(lambda: neuromanifold_dimension(arch), args.repeat)
    print(f"target dimension r = 1: {t:.1f} s; {d.lower_bound} <= dim <= {d.upper_bound} of {d.parameters}")
    t, b = best_of(lambda: least_bank(Architecture.uniform(3, 4, 2, 4, "exp"), "random", trials=3), args.repeat)
    print(f"least random bank, F.2 architecture: {t:.1f} s; m = {b.least_size}, counting bound "
          f"{b.counting_bound}, generic {b.generic}, defects at m - 1 {b.defects_below}")
    t, j = best_of(lambda: sharp_degree(arch), args.repeat)
    print(f"target jet r = 1: {t:.1f} s; sharp degree {j.sharp_degree} ({j.map}), last layer enters at "
          f"{j.last_layer_enters}, symmetry rank {j.symmetry_rank}")
    small = Architecture.uniform(2, 2, 1, 3, "exp", **kind)
    t, b = best_of(lambda: least_bank(small, "random", trials=3), args.repeat)
    print(f"least random bank, depth 2, d = 2, n = 3, two heads, causal, skips: {t:.1f} s; m = {b.least_size}, "
          f"counting bound {b.counting_bound}, generic {b.generic}")
    causal = Architecture.uniform(2, 2, 1, 3, "exp", skip="value", mask="causal")
    t, r = best_of(lambda: sensitivity(causal, t_min=0.01), args.repeat)
    print(f"sensitivity, depth 2, d = 2, n = 3, causal, skips: {t:.1f} s; float64 rank at t = 0.01 "
          f"{r['float64_rank_at_t_min']} of {r['rank']}, {r['digits']} digits")


if __name__ == "__main__":
    main()
