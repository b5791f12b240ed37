"""Sharp zero-input jet degrees of variant stacks (skips, masks, multi-head layers).

Scope: the question of Theorem 3 ("the least ``N`` whose jet ``T_N`` has an
injective differential") for a :class:`~symattn.model.variants.VariantArchitecture`,
computed on the same graphs as every other variant analysis. Which map is
asked about depends on the stack:

* a plain stack (no skip, no mask, one head): the effective map of the paper,
  through :func:`symattn.analyses.jets.sharp_degree` unchanged (Theorem 3 / Prop. C.1
  applies; the answers are today's);
* no skip and one head per layer, masked: the *effective* masked map
  ``L S^mask_{M_D} ... S^mask_{M_1}`` (:func:`~symattn.model.variants.score_network`;
  the reduction ``pi`` holds because a mask acts on token indices only), again
  through :func:`symattn.analyses.jets.sharp_degree`, with the last score's first degree
  computed exactly over Q;
* anything else (skips, several heads): no effective reduction exists, so the
  *native* map, injective **modulo the declared symmetries**
  (:func:`~symattn.model.variants.symmetry_directions`, each verified as a kernel
  vector): the least ``N`` at which the rank of the native ray Jacobian
  through ``rho^N`` reaches ``P - rank(symmetries)``, at several seeded
  points (a point can be special: two summed heads at seed 0 need degree 9
  where seeds 1-4 need 7), the least being reported.

What is proved: a full rank mod p (effective) or the rank ``P - rank(symmetries)``
mod p (native) is a rank over Q at least that large, so ``D T_N`` is injective
(modulo the symmetries, whose span is in its kernel) at the seeded rational
point: exact. That lower jets fall short is computed on the seeded rays: the
last layer's parameters first enter the ray coefficients at a degree computed
exactly over Q (``last_layer_enters``); when it equals the sharp degree the
lower jets ignore a direction outside the symmetries at these rays.

Caveat: only the plain stack is covered by a theorem; every other result has
``theorem = None`` and the label :data:`~symattn.model.variants.NO_THEOREM`.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

import networkx as nx
import numpy as np

from symattn.core.errors import CheckFailed
from symattn.theorems.formulas import prop_c1_degree
from symattn.analyses.jets import full_rank_degree, generic_effective, sharp_degree
from symattn.core.linalg import Matrix, SeriesMatrix
from symattn.analyses.variant_spectrum import jet_jacobian
from symattn.model.architecture import Architecture as VariantArchitecture
from symattn.model.network import effective_network as score_network
from symattn.model.network import native_network as variant_network
from symattn.model.parameters import random_point as random_variant_point
from symattn.analyses.variant_spectrum import symmetry_directions
from symattn.theorems.statements import NO_THEOREM

__all__ = ["VariantJet", "variant_jet", "JET_THEOREM", "has_effective_map"]

#: The statement that covers a plain stack's sharp degree.
JET_THEOREM = "Theorem 3 / Prop. C.1 (sharp zero-input jet degree)"


@dataclass
class VariantJet:
    """Result of :func:`variant_jet` (``to_json`` gives the CLI keys)."""

    architecture: str
    map: str
    sharp_degree: int | None
    injective: bool
    last_layer_enters: int | None
    lower_jets_independent_of_last: bool | None
    parameters: int
    symmetry_rank: int
    rays: int
    method: str
    seconds: float
    theorem: str | None
    notes: list[str] = field(default_factory=list)
    #: native map: the sharp degree at each seeded point (None: undecided there)
    by_seed: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return asdict(self)


def has_effective_map(arch: VariantArchitecture) -> bool:
    """No skip and one summed head in every layer: the effective reduction holds.

    >>> from symattn.model.architecture import Architecture
    >>> from symattn.model.variants import LayerKind, with_layers
    >>> base = Architecture.uniform(2, 2, 1, 3, "exp")
    >>> has_effective_map(with_layers(base, LayerKind(mask="causal"))), has_effective_map(
    ...     with_layers(base, LayerKind(skip="value")))
    (True, False)
    """
    return arch.has_effective_map


def variant_jet(arch: VariantArchitecture, seed: int = 0, method: str = "modular",
                max_degree: int = 200, points: int = 3) -> VariantJet:
    """The sharp jet degree of a variant stack (see the module docstring).

    The native map is asked at ``points`` seeded random points (seeds ``seed``,
    ``seed + 1``, ...): the rank of ``D T_N`` at a generic point is at least its
    rank at any point, so the least degree found is an upper bound on the
    generic sharp degree (``by_seed`` lists every point's; they can differ).

    Examples
    --------
    >>> from symattn.model.architecture import Architecture
    >>> from symattn.model.variants import LayerKind, with_layers
    >>> base = Architecture.uniform(2, 2, 1, 3, "exp")
    >>> r = variant_jet(with_layers(base, LayerKind(skip="value")))
    >>> r.map, r.sharp_degree, r.injective, r.theorem, r.by_seed
    ('native modulo the declared symmetries', 3, True, None, {'0': 3, '1': 3, '2': 3})
    >>> variant_jet(base).sharp_degree   # Theorem 3: 2 * 3 + 1
    7
    """
    start = time.perf_counter()
    if has_effective_map(arch):
        graph = None if arch.in_paper_model else score_network(arch)
        eta = generic_effective(arch, seed)
        res = sharp_degree(arch, eta, seed=seed, method=method, max_degree=max_degree,
                           hint=prop_c1_degree(arch), graph=graph)
        dep = res.sharp_degree if res.lower_jets_independent_of_last else None
        notes = ([] if arch.in_paper_model else [NO_THEOREM]) + res.notes
        return VariantJet(arch.describe(), "effective" if arch.in_paper_model else "effective (masked)",
                          res.sharp_degree, res.immersion, dep, res.lower_jets_independent_of_last,
                          res.parameters, 0, res.rays, method, round(time.perf_counter() - start, 3),
                          JET_THEOREM if arch.in_paper_model else None, notes)
    P = arch.native_size
    graph = variant_network(arch)
    notes = [NO_THEOREM]
    by_seed, runs = {}, {}
    for s in range(seed, seed + points):
        runs[s] = _native_sharp(arch, random_variant_point(arch, s, "random"), graph, s, method, max_degree)
        by_seed[str(s)] = runs[s][0]
    decided = {s: r for s, r in runs.items() if r[0] is not None}
    sym_rank = runs[seed][1]
    if not decided:
        notes.append(f"no point reached rank P - rank(symmetries) = {P - sym_rank} through degree {max_degree}: "
                     "undecided (an undeclared symmetry, or a degree beyond the limit)")
        return VariantJet(arch.describe(), "native modulo the declared symmetries", None, False, None, None,
                          P, sym_rank, runs[seed][2], method, round(time.perf_counter() - start, 3), None,
                          notes, by_seed)
    best = min(decided, key=lambda k: (decided[k][0], k))
    sharp, sym_rank, R, enters, lower = decided[best]
    notes.append(f"D T_{sharp} injective modulo the declared symmetries at the point of seed {best}: rank "
                 f"{P - sym_rank} = P - {sym_rank} of the native ray Jacobian through rho^{sharp} on {R} rays "
                 f"({'mod p, a lower bound on the rank over Q' if method == 'modular' else 'over Q'}); every "
                 "declared symmetry verified as a kernel vector")
    notes.append(f"sharp degree by seed {by_seed}: the least is an upper bound on the generic sharp degree "
                 "(the rank can only be larger at a generic point)"
                 + ("" if len(set(by_seed.values())) == 1 else "; the points disagree, so a seeded point "
                    "can be special"))
    notes.append(f"the last layer's queries and keys first enter the ray coefficients at degree {enters} "
                 "(exact over Q at that point and rays); "
                 + ("a direction of theirs lies outside the symmetries, so every lower jet misses it there"
                    if lower else "the lower jets are not shown to fall short"))
    return VariantJet(arch.describe(), "native modulo the declared symmetries", sharp, True, enters, lower,
                      P, sym_rank, R, method, round(time.perf_counter() - start, 3), None, notes, by_seed)


def _native_sharp(arch: VariantArchitecture, point: dict, graph: "nx.DiGraph", seed: int, method: str,
                  max_degree: int) -> tuple:
    """``(sharp, symmetry rank, rays, last layer's first degree, lower jets miss it)`` at ``point``;
    ``sharp`` None when no degree up to ``max_degree`` reaches ``P - rank(symmetries)``."""
    P = arch.native_size
    dirs = [v for _, v in symmetry_directions(arch, point)]
    sym_rank = Matrix.rational(np.array(dirs, dtype=object)).rank() if dirs else 0
    target = P - sym_rank
    N = min(max_degree, prop_c1_degree(arch))
    xi = np.array(dirs, dtype=object)

    def profile_at(N: int, R: int) -> list[int]:
        J, A = jet_jacobian(arch, point, N, R, seed, method, graph=graph)
        if dirs:
            flat, x = np.moveaxis(J, 0, 1).reshape(-1, P), A.field.convert(xi)
            prod = A.field.reduce(flat @ x.T % A.field.p) if method == "modular" else flat.dot(x.T)
            if not A.field.is_zero(prod).all():
                raise CheckFailed("a declared symmetry is not a kernel vector of the jet Jacobian")
        return SeriesMatrix(A, J).rank_profile()

    profile, N, R = full_rank_degree(profile_at, target, N, max(2, -(-target // (arch.d * arch.tokens)) + 1),
                                     max_degree)
    if profile[-1] != target:
        return None, sym_rank, R, None, None
    sharp = profile.index(target)
    last = [n for n, _ in arch.native_shapes() if n[0] in "QK" and n[1:].split("h")[0] == str(arch.depth)]
    Jl, Al = jet_jacobian(arch, point, sharp, R, seed, "exact", graph=graph, names=last)
    enters = next((k for k in range(sharp + 1) if not Al.field.is_zero(Jl[k]).all()), None)
    off, shapes = arch.offsets(), dict(arch.native_shapes())
    units = []
    for n in last:
        for j in range(off[n], off[n] + shapes[n][0] * shapes[n][1]):
            e = np.zeros(P, dtype=int).astype(object)
            e[j] = 1
            units.append(e)
    outside = Matrix.rational(np.array(dirs + units, dtype=object)).rank() > sym_rank
    return sharp, sym_rank, R, enters, (enters == sharp and outside) if enters is not None else None
