r"""Beyond the paper: the declared symmetries are complete at small sizes (issue 42).

Every declared symmetry is verified as an exact kernel vector where it is used (soundness). This
script checks the other direction, *completeness*: for each block family at :math:`D = 1, 2`
(:math:`d = 2`, :math:`r = 1`, :math:`n = 3`), the exact span of the declared directions equals the
kernel of the path Jacobian that the certified spectrum finds,

.. math::

   \operatorname{rank}(\text{declared}) = P - \operatorname{rank} J(t) \quad\text{over } \mathbb{R}((t)),

with the rank certified (a proved frame in :math:`\mathbb{Q}[\text{constants}]`, its orders exact,
and no visible order left undecided). A kind that declares one direction too few leaves an
unexplained kernel direction and fails here. Every kind is compared with its closed-form count too,
computed apart from the declarations from the architecture alone
(:mod:`symattn.model.symmetry_counts`: the factor gauges :math:`\sum_h r_h^2` of eq. 4, the interface
gauges :math:`d^2` per interface of App. F.2, and one formula per block kind); a kind that declares
fewer or more directions than its formula fails here, and in ``symattn dimension``; and the count check itself
is shown to fail, on each kind declared one direction short or one more; the counts are compared at the
normalizer :math:`\cosh` too (biased layers, no spectrum), and where a spectrum leaves an order undecided
(a post-norm RMSNorm before a polynomial MLP) soundness and the counts alone are checked. The finite symmetries declared
beside them are checked too: the order of the head permutation group (printed by ``spectrum``, ``dimension``
and ``audit``) is the number of head permutations that keep every head's block shapes, enumerated.

Every spectrum is *at this point* (one seeded point); the table of declared versus found kernel per
kind is shown in the derivation.
"""

from __future__ import annotations

from itertools import permutations

import sympy

from symattn.analyses.dimension import generic_native
from symattn.analyses.spectrum import native_spectrum
from symattn.core.errors import CheckFailed
from symattn.model.architecture import Architecture
from symattn.model.parameters import random_bank, random_point
from symattn.model.symmetries import GaugeKernel, head_permutation_check
from symattn.model.symmetry_counts import check_counts, kind_counts
from symattn.render.derivation import Derivation
from symattn.theorems.registry import main_for

NAME = "symmetry-completeness"
STATEMENT = "Beyond the paper: the declared symmetries span the exact kernel (block families, D = 1, 2)"
KIND = "certified"

#: The families checked (layer options of Architecture.uniform) and the depths of the quick run.
FAMILIES = {
    "attention + LayerNorm (post-norm)": (dict(norm="post"), (1, 2)),
    "post-norm block with skip": (dict(skip="value", norm="post"), (1, 2)),
    "pre-norm block with skip": (dict(skip="value", norm="pre"), (1, 2)),
    "attention + RMSNorm (post-norm, skip)": (dict(skip="value", norm="post", norm_kind="rmsnorm"), (1, 2)),
    "attention + RMSNorm (post-norm)": (dict(norm="post", norm_kind="rmsnorm"), (1, 2)),
    "pre-norm RMSNorm block with skip": (dict(skip="value", norm="pre", norm_kind="rmsnorm"), (1,)),
    "attention + MLP ($x + x^2/2$, $m = 3$)": (dict(mlp=3, activation="poly:0,1,1/2"), (1, 2)),
    "post-norm attention + MLP ($x + x^2/2$, $m = 2$)": (dict(norm="post", mlp=2, activation="poly:0,1,1/2"), (1,)),
    "attention with biases": (dict(bias=True), (1, 2)),
    "two summed heads": (dict(heads=2), (1, 2)),
    "concatenated heads with $W_O$": (dict(heads=2, combine="concat", head_width=1), (1,)),
    "concatenated heads with $W_O$ and biases, $d_v = 2$": (dict(heads=2, combine="concat", head_width=2, bias=True),
                                                          (1,)),
}

#: Families checked for soundness and counts only (the spectrum leaves an order undecided there).
SOUND_ONLY = {"post-norm RMSNorm attention + MLP ($x + x^2/2$, $m = 2$)":
              dict(norm="post", norm_kind="rmsnorm", mlp=2, activation="poly:0,1,1/2")}

#: More depths with --full.
FULL = {"concatenated heads with $W_O$": (2,), "full post-norm layer (biases, $W_O$, tanh, $m = 2$)": (1,)}
FULL_KINDS = {"full post-norm layer (biases, $W_O$, tanh, $m = 2$)": dict(skip="value", norm="post", mlp=2, bias=True,
                                                                       combine="concat", activation="tanh")}


def run(full: bool = False) -> Derivation:
    der = Derivation("n6_symmetry_completeness", STATEMENT,
                     "For each block family the rank of the declared symmetries equals $P$ minus the certified "
                     "rank of the path Jacobian: no kernel direction is left unexplained.", KIND)
    der.step("Each spectrum by the constants route (exact in Q adjoined the stack's constants, a proved frame, "
             "a certified leading minor), at the seeded point of seed 0 (one point: the claim is about it).")
    rows: list[list] = []
    counts: list[list[int]] = []
    kinds: list[list] = []
    cases = [(name, kind, D) for name, (kind, depths) in FAMILIES.items() for D in depths]
    if full:
        cases += [(name, FULL_KINDS.get(name, FAMILIES.get(name, ({},))[0]), D) for name, depths in FULL.items()
                  for D in depths]
    for name, kind, D in cases:
        arch = Architecture.uniform(D, 2, 1, 3, "exp", **kind)
        s = native_spectrum(arch, method="constants", points=1)
        found = s.parameters - (s.rank + s.past)  # P - rank J, the rank certified
        unexplained = s.undecided - s.past
        der.check(f"{name}, D = {D}: the spectrum is certified with no undecided order", (s.certificate, s.undecided),
                  ("certified", 0), kind="certified")
        der.check(f"{name}, D = {D}: rank of the declared symmetries = P - rank J (no unexplained kernel)",
                  (s.kernel, unexplained), (found, 0), kind="certified")
        check_counts(arch, s.kernel_kinds)  # one line naming the first kind off its formula
        formulas = {k: c for k, c in kind_counts(arch).items() if c is not None}
        der.check(f"{name}, D = {D}: every kind with a closed-form count declares it",
                  {k: s.kernel_kinds.get(k, 0) for k in formulas}, {k: c.value for k, c in formulas.items()})
        wrong = []  # the count check can fail: every kind declared one direction short or one more is refused
        for k, c in formulas.items():
            for have in (c.value - 1, c.value + 1):
                try:
                    if have >= 0:
                        check_counts(arch, {**s.kernel_kinds, k: have})
                        wrong.append(f"{k} {have}")
                except CheckFailed:
                    pass
        der.check(f"{name}, D = {D}: the count check refuses each kind declared one direction short or one more",
                  wrong, [])
        rows.append([name, D, s.parameters, s.rank, found, s.kernel,
                     "; ".join(f"{k} {v}" for k, v in s.kernel_kinds.items())])
        for k in sorted(set(s.kernel_kinds) | {k for k, c in formulas.items() if c.value}):
            c = formulas.get(k)
            kinds.append([name, D, k, s.kernel_kinds.get(k, 0), "-" if c is None else f"{c.value} ({c.label})",
                          found])
        counts.append([sum(c.value for c in formulas.values()),
                       sum(s.kernel_kinds.get(k, 0) for k in formulas), s.kernel, found])
        der.case(f"{name}, $D = {D}$, $d = 2$, $n = 3$")
    der.show_table("Declared versus found kernel (at this point, seed 0):",
                   ["family", "D", "P", "rank J", "kernel found", "declared", "declared by kind"], rows)
    der.show("Per case: $P$, the certified rank of $J$, the kernel found and the declared rank:",
             sympy.Matrix([r[2:6] for r in rows]), "(P, r, k, z)")
    der.show_table("Per kind: declared versus its closed-form count (exact: every point; generic: at a generic "
                   "point) beside the kernel found for the whole case:",
                   ["family", "D", "kind", "declared", "formula", "kernel found (case)"], kinds)
    der.show("Per case: the closed-form counts summed, the declared of those kinds, all declared, the kernel found:",
             sympy.Matrix(counts), "(c, c', z, k)")
    # soundness only where an order is left undecided (completeness not claimed): every declared direction is
    # verified as an exact kernel vector inside the spectrum (a wrong one stops it), and the counts hold
    for name, kind in SOUND_ONLY.items():
        arch = Architecture.uniform(1, 2, 1, 3, "exp", **kind)
        s = native_spectrum(arch, method="constants", points=1)
        check_counts(arch, s.kernel_kinds)
        der.check(f"{name}: every declared direction is an exact kernel vector, at most the kernel found",
                  s.kernel <= s.parameters - s.rank, True)
        der.case(f"{name}, $D = 1$ (soundness)")
    # the closed-form counts at a normalizer other than exp (the kinds declared at the seeded point, no spectrum):
    # a softmax key bias exists only where the row normalisation cancels a per-query shift
    for heads in (1, 2):
        arch = Architecture.uniform(1, 2, 1, 3, "cosh", bias=True, heads=heads)
        declared = GaugeKernel(arch, generic_native(arch, 0)).kinds()
        formulas = {k: c for k, c in kind_counts(arch).items() if c is not None}
        der.check(f"cosh with biases, {heads} head{'s' if heads > 1 else ''}: every kind declares its closed-form "
                  "count", {k: declared.get(k, 0) for k in formulas}, {k: c.value for k, c in formulas.items()})
        der.case(f"the declared counts of a biased layer with $\\phi = \\cosh$, {heads} head{'s' if heads > 1 else ''}")
    # the finite symmetries declared beside them: the head permutation group's order (printed by spectrum,
    # dimension and audit) against the permutations of the heads that keep every head's block shapes, enumerated
    for ranks in ((1, 1, 1), (1, 2, 1)):
        arch = Architecture.uniform(1, 3, 1, 2, "exp", heads=3, head_ranks=ranks)
        shapes = [tuple((role, arch.shape(b)) for role, b in blocks.items()) for blocks in arch.layers[0].head_blocks(1)]
        kept = sum(1 for p in permutations(range(3)) if all(shapes[i] == shapes[j] for i, j in enumerate(p)))
        [perm] = head_permutation_check(arch, random_point(arch), random_bank(arch, 2))
        der.check(f"three heads of ranks {ranks}: the permutation group's order is the number of shape-keeping "
                  "permutations (enumerated), verified on its generators (exact series)",
                  (perm["group_order"], perm["verified"]), (kept, True))
        der.case(f"the head permutations of three heads of ranks {ranks}")
    return der


if __name__ == "__main__":
    raise SystemExit(main_for(__name__))
