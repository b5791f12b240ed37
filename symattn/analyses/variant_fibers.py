"""Fiber evidence for variant stacks (skips, masks, multi-head layers).

Scope: the question of Theorems 1-2 ("which parameters give the same
function?") for a :class:`~symattn.model.variants.VariantArchitecture`, asked of its
*score model* (:func:`~symattn.model.variants.score_network`: readout ``L``, one score
``M_{i,h}`` per layer and head, values ``V = I``). Without skips and with one
head per layer that is the effective (masked) map; otherwise it is the
identity-value sub-family of the native model. A plain stack goes to
:func:`symattn.analyses.fibers.effective_fiber` unchanged (Theorems 1-2 apply).

No theorem classifies a variant fiber, so :func:`variant_fiber` claims only
what it computes, each item an :class:`~symattn.analyses.fibers.Evidence`:

* ``zero-readout`` (``L = 0``): ``F = L X_D`` is zero for every score, exact;
* a **local certificate**: the ray Jacobian of ``F(rho Y)`` in every entry of
  ``(L, M_{i,h})`` has full column rank mod p through some degree ``N``, hence
  over Q: ``D T_N`` is injective, the tuple is an isolated point of its fiber
  (``determined = True``, "locally determined") up to the finite groups below;
  without it nothing is called determined (``undecided``);
* **sign changes** ``M_{i,h} -> -M_{i,h}``: with an even normalizer the layer
  sees ``phi(x^T M y) = phi(-x^T M y)``, so the flip is exact (a computed check
  compares the exact ray series); otherwise a difference of the series mod p
  is an exact witness that the flip changes ``F``;
* **head permutations** of a layer's scores (the heads are summed): exact,
  with the same computed check on the generating adjacent transpositions;
* **suffix changes** after the first layer whose every score is zero (the
  paper's collapse): a random suffix is compared with the original; a
  difference is an exact witness that the suffix is *not* free (a causal mask
  or a skip keeps tokens apart), equal series through ``rho^N`` are reported as
  evidence only, never as a freedom.

Every result outside the paper's hypotheses carries ``theorem = None`` and
:data:`~symattn.model.variants.NO_THEOREM`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from symattn.core.algebras import series_for
from symattn.core.errors import SymattnError
from symattn.analyses.fibers import Evidence, Fiber, certificate_evidence, effective_fiber
from symattn.model.network import evaluate
from symattn.theorems.formulas import prop_c1_degree
from symattn.analyses.jets import full_rank_degree
from symattn.core.linalg import SeriesMatrix, is_zero
from symattn.model.parameters import random_bank, random_rational_matrix, rational_matrix
from symattn.analyses.variant_spectrum import jet_jacobian
from symattn.model.architecture import Architecture as VariantArchitecture
from symattn.model.network import effective_network as score_network
from symattn.theorems.statements import NO_THEOREM

__all__ = ["VariantFiber", "variant_fiber", "VARIANT_FIBERS"]

#: The answers of :func:`variant_fiber` outside the paper's hypotheses.
VARIANT_FIBERS = ("locally-determined", "zero-readout", "undecided")


@dataclass
class VariantFiber:
    """Result of :func:`variant_fiber` (``to_json`` gives the CLI keys)."""

    architecture: str
    fiber: str
    determined: bool
    sign_flips: list
    head_permutations: list
    sharp_degree: int | None
    theorem: str | None
    sentence: str
    verified: bool = False
    evidence: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    def to_json(self) -> dict:
        return {"architecture": self.architecture, "fiber": self.fiber, "determined": self.determined,
                "sign_flips": self.sign_flips, "head_permutations": self.head_permutations,
                "sharp_degree": self.sharp_degree, "theorem": self.theorem, "sentence": self.sentence,
                "verified": self.verified,
                "evidence": [{"label": e.label, "ok": e.ok, "detail": e.detail} for e in self.evidence],
                "notes": self.notes}


def _series(graph: "nx.DiGraph", params: dict, rays: np.ndarray, order: int, modular: bool) -> np.ndarray:
    A = series_for("modular" if modular else "exact", order)
    vals = {k: A.const(v) for k, v in params.items()}
    vals["X"] = A.series([np.zeros(rays.shape, dtype=int), rays])
    return A.coefficients(evaluate(graph, A, vals)["F"])


def _compare(graph: "nx.DiGraph", a: dict, b: dict, rays: np.ndarray, order: int,
             witness: bool) -> tuple[bool, str]:
    """Equal ray series (exact over Q), or an exact witness of a difference (mod p)."""
    x, y = _series(graph, a, rays, order, witness), _series(graph, b, rays, order, witness)
    diff = np.argwhere(x != y)
    if len(diff):
        j, ray = int(diff[0][0]), int(diff[0][1])
        where = "mod p, so they differ over Q" if witness else "over Q"
        return False, f"exact witness: ray {ray}, coefficient of rho^{j} differs ({where})"
    kind = "mod p (no witness)" if witness else "exact over Q"
    return True, f"equal ray series through rho^{order - 1} on {len(rays)} rays, {kind}"


def _local_certificate(arch: VariantArchitecture, graph: "nx.DiGraph", params: dict, seed: int,
                       max_degree: int) -> tuple[Evidence, int | None]:
    names = arch.score_names()
    P = sum(np.asarray(params[n]).size for n in names)
    N = min(max_degree, prop_c1_degree(arch))
    R = max(2, -(-P // (params["L"].shape[0] * arch.tokens)) + 1)

    def profile_at(N: int, R: int) -> list[int]:
        J, A = jet_jacobian(arch, params, N, R, seed, graph=graph, names=names)
        return SeriesMatrix(A, J).rank_profile()

    return certificate_evidence(*full_rank_degree(profile_at, P, N, R, max_degree), P)


def variant_fiber(arch: VariantArchitecture, L, M, *, verify: bool = True, seed: int = 0, rays: int = 2,
                  max_degree: int = 200) -> "VariantFiber | Fiber":
    """Fiber evidence for the score tuple ``(L, M)`` of a variant stack (module docstring).

    Parameters
    ----------
    arch : VariantArchitecture
    L : array-like
        The readout, ``p x d`` rationals.
    M : sequence
        Per layer, a sequence of the heads' ``d x d`` rational scores (one entry
        per head of that layer).
    verify : bool
        Compute the evidence (otherwise only the zero-readout test runs).
    seed, rays : int
        Seed and number of the rational rays of the comparisons.
    max_degree : int
        Largest jet degree of the local certificate.

    Returns
    -------
    VariantFiber, or :class:`~symattn.analyses.fibers.Fiber` for a plain stack.

    Examples
    --------
    >>> from symattn.model.architecture import Architecture
    >>> from symattn.model.variants import LayerKind, with_layers
    >>> arch = with_layers(Architecture.uniform(2, 2, 1, 3, "exp"), LayerKind(mask="causal"))
    >>> f = variant_fiber(arch, [[1, 0]], [[[[0, 0], [0, 0]]], [[[1, 0], [0, 2]]]])
    >>> f.fiber, f.determined, f.theorem, f.verified
    ('locally-determined', True, None, True)
    >>> [e.detail.endswith("not free") for e in f.evidence if "suffix" in e.label]  # M_1 = 0: no collapse
    [True]
    """
    if len(M) != arch.depth:
        raise SymattnError(f"give one list of head scores per layer (D = {arch.depth}), got {len(M)}")
    L = rational_matrix(L)
    d = arch.d
    if L.ndim != 2 or L.shape[1] != d:
        raise SymattnError(f"L has shape {L.shape}; it must be p x d with d = {d}")
    params = {"L": L}
    for i, heads in enumerate(M, 1):
        names = arch.head_names(i)
        if len(heads) != len(names):
            raise SymattnError(f"layer {i} has {len(names)} head(s); got {len(heads)} score(s) (separate "
                               "heads with '|')")
        for s, m in zip(names, heads):
            m = rational_matrix(m)
            if m.shape != (d, d):
                raise SymattnError(f"score M_{i}{s} has shape {m.shape}; every score is d x d with d = {d}")
            params[f"M{i}{s}"] = m
    if arch.in_paper_model:
        return effective_fiber(L, [params[f"M{i}"] for i in range(1, arch.depth + 1)], arch.normalizers,
                               arch.tokens, verify=verify, seed=seed, rays=rays)
    graph = score_network(arch)
    ev: list[Evidence] = []
    notes = [NO_THEOREM, "the score model: readout L, one score per layer and head, values V = I"
             + ("" if all(k.skip == "none" and len(k.heads) == 1 for k in arch.layers)
                else " (a sub-family of the native model: no reduction to it is proved)")]
    if is_zero(L):
        f = VariantFiber(arch.describe(), "zero-readout", False, [], [], None, None,
                         "The readout L is zero, so F = L X_D is zero for every choice of the scores: "
                         "all of them are free (exact).", True,
                         [Evidence("L = 0 gives F = 0 for every score", True, "F = L X_D, exact")], notes)
        return f
    if not verify:
        return VariantFiber(arch.describe(), "undecided", False, [], [], None, None,
                            "Not verified: no claim without the computed evidence.", False, [], notes)
    rng = random.Random(seed)
    Y = random_bank(arch, rays, seed)
    cert, sharp = _local_certificate(arch, graph, params, seed, max_degree)
    ev.append(cert)
    order = min((sharp or prop_c1_degree(arch)) + 2, max_degree)
    flips = []
    for i, phi in enumerate(arch.normalizers, 1):
        for s in arch.head_names(i):
            if is_zero(params[f"M{i}{s}"]):
                continue
            flipped = dict(params, **{f"M{i}{s}": -params[f"M{i}{s}"]})
            if phi.even:
                ok, detail = _compare(graph, params, flipped, Y, order, witness=False)
                ev.append(Evidence(f"phi_{i} even: flipping M_{i}{s} keeps F (phi(-s) = phi(s), exact)", ok,
                                   detail))
                flips.append(f"{i}{s}")
            else:
                same, detail = _compare(graph, params, flipped, Y, order, witness=True)
                ev.append(Evidence(f"phi_{i} not even: flipping M_{i}{s} changes F", not same, detail))
    perms = []
    for i, kind in enumerate(arch.layers, 1):
        names = arch.head_names(i)
        if len(kind.heads) < 2:
            continue
        for a, b in zip(names, names[1:]):  # the adjacent transpositions generate the group
            swapped = dict(params, **{f"M{i}{a}": params[f"M{i}{b}"], f"M{i}{b}": params[f"M{i}{a}"]})
            ok, detail = _compare(graph, params, swapped, Y, order, witness=False)
            ev.append(Evidence(f"layer {i}: exchanging heads {a}, {b} keeps F (the heads are summed, exact)",
                               ok, detail))
        perms.append(i)
    zero = [i for i in range(1, arch.depth + 1)
            if all(is_zero(params[f"M{i}{s}"]) for s in arch.head_names(i))]
    if zero and zero[0] < arch.depth:
        s0 = zero[0]
        other = dict(params)
        for i in range(s0 + 1, arch.depth + 1):
            for s in arch.head_names(i):
                other[f"M{i}{s}"] = random_rational_matrix(rng, (d, d))
        same, detail = _compare(graph, params, other, Y, order, witness=True)
        ev.append(Evidence(f"every score of layer {s0} is zero: a random suffix "
                           f"{'changes' if not same else 'keeps'} F",
                           True, detail + ("; the suffix is not free" if not same else
                                           "; evidence only (truncated series): no freedom is claimed")))
    determined = cert.ok
    if determined:
        extra = [f"sign flips of {', '.join('M_' + f for f in flips)}" if flips else "",
                 f"head permutations in layer(s) {perms}" if perms else ""]
        extra = [x for x in extra if x]
        sentence = ("The tuple is an isolated point of its fiber (computed local certificate)"
                    + (f", up to the finite group of {' and '.join(extra)}" if extra else "")
                    + ". No theorem says what the whole fiber is.")
    else:
        sentence = ("No injective jet differential was found: nothing is claimed determined "
                    "(see the checks).")
    verified = all(e.ok for e in ev)
    return VariantFiber(arch.describe(), "locally-determined" if determined else "undecided", determined,
                        flips, perms, sharp, None, sentence, verified, ev, notes)
