r"""The certificate machinery proves its own soundness.

A ``certified`` spectrum rests on two pieces of machinery that no statement of
the paper checks: the a-priori height bounds of majorant arithmetic
(:class:`symattn.core.certify.MajorantSeries`) and the multi-modular column
proof (:func:`symattn.analyses.spectrum.prove_column_orders`). This script checks

* every majorant rule (``const``, ``add``, ``sub``, ``neg``, ``mul``, ``matmul``,
  ``sum``, ``transpose``, ``expand``, ``reciprocal``, ``phi``: every operation of
  the network graphs) against exact dual series over :math:`\mathbb{Q}` on random
  rational inputs, to order 16 (24 with ``--full``), with the normalizers exp,
  cosh, logistic and the polynomial :math:`1 + s^2`
  (:func:`symattn.core.soundness.majorant_soundness`);
* the composed bounds of whole native graphs (paper stacks and layer kinds
  beyond the paper) against their exact Jacobians over :math:`\mathbb{Q}`;
* the post-condition :func:`symattn.core.certify.settle`: ``certified`` only when
  the proof ran to the end with a bound per order and enough primes counted; a
  proof that was not attempted, or whose primes fall short of a bound, is refused;
* the column proof itself on a small stack: proved, refuted when an order is too
  high, not attempted (``too costly``) with too few primes allowed, and then
  never ``certified``.
"""

from __future__ import annotations

from symattn.analyses.collapse import path_parameters
import numpy as np

from symattn.analyses.spectrum import height_bounds_hold, jacobian_height_bounds, native_spectrum, prove_column_orders
from symattn.core.certify import LowerBound, primes_below, settle
from symattn.core.errors import InternalError
from symattn.core.soundness import majorant_soundness
from symattn.model.architecture import Architecture
from symattn.model.normalizer import Normalizer
from symattn.model.parameters import random_bank
from symattn.render.derivation import Derivation
from symattn.theorems.registry import main_for

NAME = "certificate-soundness"
STATEMENT = "Certificates: majorant bounds vs exact series, the column proof and its post-condition"
KIND = "exact"

NORMALIZERS = ("exp", "cosh", "logistic", "1+s^2")


def _refused(certificate: str, proof) -> bool:
    try:
        settle(certificate, proof)
    except InternalError:
        return True
    return False


def run(full: bool = False) -> Derivation:
    der = Derivation("t11_certificate_soundness", STATEMENT,
                     "Every majorant rule bounds the exact coefficients of its result; a certificate is "
                     "certified only after a completed proof whose primes meet its bounds.", KIND)
    order = 24 if full else 16
    der.step(f"Random rational dual series $x + \\delta x'$ mod $u^{{{order}}}$; each operation, alone and "
             "composed, in majorant arithmetic and in exact dual series over Q; every coefficient $c$ must have "
             "$D c$ integral, $|c| \\le H$, row and column sums within their bounds, the claimed constant term.")
    for seed in range(3 if full else 1):
        lines = majorant_soundness([Normalizer(n) for n in NORMALIZERS], order=order, seed=seed)
        der.check(f"every majorant rule bounds the exact series (order {order}, seed {seed})",
                  len(lines), 13 + 3 * len(NORMALIZERS), note="; ".join(lines))
        der.case(f"majorant rules, order {order}, seed {seed}")
    # the check itself can fail: a product's bounds halved must be refused
    from fractions import Fraction

    from symattn.core.algebras import exact_series
    from symattn.core.certify import Majorant, MajorantSeries
    from symattn.core.soundness import dominates

    M, A = MajorantSeries(4), exact_series(4)
    x = [[[Fraction(1, 2), 3]], [[1, -2]], [[0, 1]], [[5, 1]]]
    m = M.mul(M.series(x), M.series(x))
    half = Majorant(m.shape, [[h // 2 for h in part] for part in m.height], m.exponents, m.primes, m.constant)
    exact = (A.mul(A.series(x), A.series(x)), None)
    der.check("the soundness check refuses a majorant whose heights are halved (and accepts the true one)",
              (bool(dominates(half, exact, 4)), dominates(m, exact, 4)), (True, ""))
    stacks = [("paper, exp", Architecture.uniform(2, 2, 1, 2, "exp"), 8),
              ("paper, cosh", Architecture.uniform(1, 2, 1, 2, "cosh"), 10),
              ("paper, logistic", Architecture.uniform(1, 2, 1, 2, "logistic"), 10),
              ("paper, ``1+s^2``", Architecture.uniform(1, 2, 1, 2, "1+s^2"), 10),
              ("value skip, causal", Architecture.uniform(2, 2, 1, 2, "exp", skip="value", mask="causal"), 6),
              ("two heads", Architecture.uniform(1, 2, 1, 2, "cosh", heads=2), 8)]
    for label, arch, m in stacks:
        U, W, V = path_parameters(arch, seed=1, values="random")
        der.check(f"graph bounds $B_m$ dominate the exact $u$-Jacobian ({label}, $u^0 \\dots u^{{{m - 1}}}$)",
                  height_bounds_hold(arch, random_bank(arch, 2, seed=2), U, W, V, m), True)
        der.case(f"graph majorant: {label}")
    # the post-condition
    ok = LowerBound("proved", 2, (5,), (10**5,), ((1009, 1013),))
    der.check("settle: a completed proof whose primes meet its bound is certified",
              settle("certified", ok), "certified")
    short = LowerBound("proved", 1, (5,), (2**30,), ((8388593,),))
    der.check("settle refuses: not attempted; primes below the bound; a bound missing; no proof",
              [_refused("certified", LowerBound("too costly", 361, (485,))), _refused("certified", short),
               _refused("certified", LowerBound("proved", 2, (5, 7), (10,), ((1009, 1013),))), _refused("certified", None),
               _refused("conditional", LowerBound("too costly", 361, (485,))),
               _refused("certified", LowerBound("proved", 2, (5,), (10**6,), ((1009, 1013),))),
               _refused("certified", LowerBound("proved", 2, (5,), (10**5,), ((1009, 1011),)))],
              [True, True, True, True, False, True, True],
              note=f"one prime {primes_below(2**23, 1)[0]} does not exceed 2 * 2^30; 1009 * 1013 = 1022117 "
                   "does not exceed 2 * 10^6; 1011 = 3 * 337 is not a prime")
    # the primes of a column proof run through map_forked: every item, in order, forked or not
    from symattn.core.parallel import map_forked

    der.check("``map_forked`` gives ``func(item)`` for every item, in order (forked workers; one worker)",
              [list(map_forked(lambda x: x * x, range(7), workers=w)) for w in (None, 1)],
              [[x * x for x in range(7)]] * 2)
    # the integer bound of a scaled height, against exact rational arithmetic
    import math
    import random

    from symattn.core.certify import HEIGHT_SHIFT, height_bound

    rng = random.Random(11)
    pairs = [(rng.randrange(1, 2**80), rng.randrange(1, 2**20)) for _ in range(200)]
    pairs += [(h << HEIGHT_SHIFT, d) for h, d in pairs[:20]]
    der.check("``height_bound(h, D)`` $= \\lceil D h / 2^{S} \\rceil$, $S$ = ``HEIGHT_SHIFT`` (exact rationals, 220 random pairs)",
              sum(height_bound(h, d) != math.ceil(Fraction(d * h, 2**HEIGHT_SHIFT)) for h, d in pairs), 0)
    # the column proof on a small stack: proved / refuted / too costly
    arch = Architecture.uniform(2, 2, 1, 2, "exp")
    s = native_spectrum(arch)
    U, W, V = path_parameters(arch)
    layer2 = [c for c in range(arch.native_size) if arch.column_blocks()[c].name in ("Q2", "K2")]
    bank = random_bank(arch, s.bank_size, 0)
    top = max(b.order for b in s.bands)
    proved = prove_column_orders(arch, bank, U, W, V, layer2[:1], [top])
    needed = max(jacobian_height_bounds(arch, bank, U, W, V, top // 2 + 1))
    der.check(f"the proof's bound at $t^{{{top}}}$ covers $B_0, \\dots, B_{{{top // 2}}}$ (the powers of $u$ that "
              f"$J \\bmod t^{{{top}}}$ reads)", (proved.status, proved.bounds[0] >= needed), ("proved", True),
              note=f"max B_m = 2^{needed.bit_length()}")
    # the reduced-column proof (columns.py): a combination sum x_j t^s J_j with common denominator L
    # has L D y integral and |L D y| <= L (sum |x_j|) D H for each coefficient y (H, D: the heights)
    import math

    from symattn.analyses.columns import prove_reduced_orders, reduced_height_bound

    terms = [[(0, 0, Fraction(1))], [(0, 0, Fraction(1)), (1, 0, Fraction(-1, 3))]]
    reduced = prove_reduced_orders(arch, bank, U, W, V, layer2[:2], terms, [top, top])
    H, D = reduced_height_bound(arch, bank, U, W, V, top)
    need = max(math.lcm(*(x.denominator for _, _, x in t)) * sum(abs(x) for _, _, x in t) * D * H for t in terms)
    der.check(f"reduced columns $J_1$, $J_1 - J_2/3$ at $t^{{{top}}}$: proved, the bound covers $L (\\sum |x_j|) D H$",
              (reduced.status, reduced.bounds[0] >= need), ("proved", True),
              note=f"D = {D}, H = 2^{H.bit_length()}")
    runs = [proved.status,
            prove_column_orders(arch, bank, U, W, V, layer2[:1], [top + 4]).status,
            prove_column_orders(arch, bank, U, W, V, layer2[:1], [top], max_primes=1).status]
    der.check(f"column proof at $t^{{{top}}}$ / $t^{{{top + 4}}}$ / with one prime allowed",
              runs, ["proved", "refuted", "too costly"], kind="exact",
              note="softmax D = 2, d = 2, r = 1, n = 2; a too-costly proof is never certified (settle)")
    der.case("column proof outcomes and the post-condition")
    der.show("The a-priori bounds $B_m$ of the softmax stack (bits):",
             np.array([b.bit_length() for b in jacobian_height_bounds(arch, bank, U, W, V, 6)]), "B")
    der.show("The orders proved:", np.array([top]), "b")
    der.show_table("Outcomes of the column proof:", ["case", "status"],
                   [["order t", runs[0]], ["order t + 4", runs[1]], ["one prime allowed", runs[2]]])
    # a proof not attempted (here: one prime allowed) gives "conditional" (App. D.2), never "certified"
    import symattn.analyses.spectrum as spectrum_module

    saved = spectrum_module.MAX_PROOF_PRIMES
    spectrum_module.MAX_PROOF_PRIMES = 1
    try:
        s1 = native_spectrum(arch)
    finally:
        spectrum_module.MAX_PROOF_PRIMES = saved
    der.check("one prime allowed: the proof is not attempted and the certificate is conditional, not certified",
              (any("was not attempted" in n for n in s1.notes), s1.certificate,
               [(b.order, b.multiplicity) for b in s1.bands]),
              (True, "conditional", [(b.order, b.multiplicity) for b in s.bands]),
              note="softmax D = 2, d = 2, r = 1, n = 2 with MAX_PROOF_PRIMES = 1 (restored after)")
    der.case("not attempted -> conditional")
    return der


if __name__ == "__main__":
    raise SystemExit(main_for(__name__))
