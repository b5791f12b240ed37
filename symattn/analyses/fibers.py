"""Effective fibers (Theorems 1-2), collapse loci and the computations of App. B.

Which score tuples realize the same function as a given effective tuple
``(L, M_1..M_D)``: :func:`effective_fiber` decides which statement of the paper
applies (zero readout, Theorem 1's singleton or sign orbit, Theorem 2's free
suffix, Prop. C.6, or outside the hypotheses), and verifies the answer by exact
computation: allowed changes give identical series and symbolic identities,
forbidden ones exact witnesses, and a singleton a computed local certificate. The
theorem is quoted; what is claimed is computed. The checks and the App. B
computations are in :mod:`symattn.analyses.fiber_checks` (their names stay
importable from here). Where no theorem covers the architecture (skips, masks,
several heads), :func:`fiber` computes evidence only, and :func:`point_fiber`
reads a native point's local certificate off its dimension.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import sympy

from symattn.core.errors import SymattnError
from symattn.core.validate import BadType, require_int, shown
from symattn.model.network import effective_network
from symattn.core.linalg import is_zero, symmetric_part
from symattn.model.architecture import Architecture, require_architecture
from symattn.model.parameters import random_bank, random_rational_matrix, rational_matrix
from symattn.model.normalizer import Normalizer, normalizers
from symattn.render.rich_result import RichResult
from symattn.theorems import statements
from symattn.theorems.statements import NO_THEOREM
from symattn.analyses.fiber_checks import (  # noqa: F401  the checks, importable from here
    Evidence, certificate_evidence, compare_points, consensus_certificate, contrast_defect, flip_evidence,
    generic_native_point, head_evidence, layer_map, local_certificate, rational_taylor, ray_series,
    score_certificate, sign_evidence, suffix_evidence, two_token_skew, vanishes, verify_classification,
)

__all__ = [
    "FIBERS",
    "Evidence",
    "Fiber",
    "fiber",
    "native_fiber",
    "point_fiber",
    "compare_points",
    "certificate_evidence",
    "collapse_locus",
    "consensus_certificate",
    "contrast_defect",
    "effective_fiber",
    "flip_evidence",
    "generic_native_point",
    "layer_map",
    "local_certificate",
    "prop_c6_applies",
    "rational_taylor",
    "ray_series",
    "two_token_skew",
    "vanishes",
]


#: The answers of :func:`effective_fiber` (Theorems 1-2), and where no theorem covers the
#: architecture, of :func:`fiber`'s computed evidence (``locally-determined``, ``undecided``).
FIBERS = ("singleton", "sign-orbit", "free-suffix", "zero-readout", "outside-hypotheses", "locally-determined",
          "undecided")


@dataclass(repr=False)
class Fiber(RichResult):
    """The effective fiber of one tuple.

    Attributes
    ----------
    fiber : str
        One of :data:`FIBERS`.
    first_collapse : int or None
        The first layer ``s`` with ``M_s`` in ``Z_s`` (1-based), if any.
    sign_flip_layers : list of int
        Layers whose score may flip sign (Theorem 1, even normalizer).
    free_layers : list of int
        Layers whose score is arbitrary on the fiber.
    theorem : str
        The statement used (``"Theorem 1"``, ``"Theorem 2(ii)"``, ...).
    sentence : str
        The answer in plain language.
    verified : bool
        True only if every computed check confirmed the answer.
    evidence : list of Evidence
        The checks.
    """

    fiber: str
    first_collapse: int | None
    sign_flip_layers: list
    free_layers: list
    theorem: str | None
    sentence: str
    verified: bool = False
    evidence: list = field(default_factory=list)
    #: the layers (:meth:`~symattn.model.architecture.Architecture.describe`)
    architecture: str = ""
    #: the tuple is an isolated point of its fiber (up to the finite groups), by a computed
    #: local certificate where no theorem says more
    determined: bool = False
    #: the scores whose sign may flip (``"1"``, ``"2h1"``: layer and head)
    sign_flips: list = field(default_factory=list)
    #: layers whose heads may be exchanged
    head_permutations: list = field(default_factory=list)
    #: the least jet degree of the local certificate (None: none computed)
    sharp_degree: int | None = None
    notes: list = field(default_factory=list)
    #: what the fiber is about: always the given (or seeded) tuple, ``"at this point"``; a theorem's
    #: answer is its statement applied to this tuple, never a generic claim
    about: str = "at this point"

    @property
    def status(self) -> str:
        """What the computed checks say: ``"verified"`` (every check held), ``"failed"`` (a check
        disagreed), ``"undecided"`` (no check failed, but one could not be decided within what is
        proved: see its detail) or ``"unverified"`` (no checks: ``verify=False`` or outside the
        hypotheses).

        >>> effective_fiber([[1, 0]], [[[1, 2], [0, 1]]], "exp", 2).status
        'verified'
        """
        if any(e.status == "failed" for e in self.evidence):
            return "failed"
        if any(e.status == "undecided" for e in self.evidence):
            return "undecided"
        return "verified" if self.verified else "unverified"

    def to_json(self) -> dict:
        """The JSON keys of ``symattn fiber --json``."""
        return {
            "fiber": self.fiber, "first_collapse": self.first_collapse,
            "sign_flip_layers": self.sign_flip_layers, "free_layers": self.free_layers,
            "theorem": self.theorem, "sentence": self.sentence, "verified": self.verified, "status": self.status,
            "evidence": [{"label": e.label, "ok": e.ok, "decided": e.decided, "detail": e.detail}
                         for e in self.evidence],
            "architecture": self.architecture, "determined": self.determined, "sign_flips": self.sign_flips,
            "head_permutations": self.head_permutations, "sharp_degree": self.sharp_degree, "notes": self.notes,
            "about": self.about,
        }

    def _headline(self) -> str:
        """
        >>> effective_fiber([[1, 0]], [[[1, 2], [0, 1]]], "cosh", 2)
        <Fiber: sign-orbit (Theorem 1), verified by 3 checks; sign flips M_1>
        """
        parts = [f"{self.fiber} ({self.theorem or 'computed'}), {self.status}"
                 + (f" by {len(self.evidence)} checks" if self.evidence else "")]
        if self.sign_flips:
            parts.append("sign flips " + ", ".join(f"M_{f}" for f in self.sign_flips))
        if self.free_layers:
            parts.append("free " + ", ".join(f"M_{i}" for i in self.free_layers))
        if self.first_collapse is not None:
            parts.append(f"first collapse at layer {self.first_collapse}")
        return "; ".join(parts)

    def _summary(self) -> tuple[str, list[tuple[str, str]]]:
        """The fiber, the theorem used and every piece of evidence."""
        rows = [("fiber", self.fiber), ("answer", self.sentence),
                ("first collapse", str(self.first_collapse)),
                ("sign-flip layers", str(self.sign_flip_layers)), ("free layers", str(self.free_layers)),
                ("verified by computation", self.status), ("about", f"{self.about} (this tuple's fiber)")]
        rows += [(f"evidence ({e.status})", f"{e.label}: {e.detail}") for e in self.evidence]
        return f"Effective fiber ({self.theorem or NO_THEOREM})", rows


def collapse_locus(phi: Normalizer, tokens: int) -> str | None:
    """The collapse locus ``Z`` of Theorem 2 for one layer, from phi's derived data.

    Returns ``"zero"`` (``Z = {0}``), ``"skew"`` (the skew matrices) or None
    when Theorem 2 does not decide it (``h'(0) = 0``, or ``n >= 3`` with
    ``h''(0) = 0``).

    Parameters
    ----------
    phi : Normalizer
    tokens : int

    Returns
    -------
    str or None

    Examples
    --------
    >>> collapse_locus(Normalizer("exp"), 2), collapse_locus(Normalizer("exp"), 3)
    ('skew', None)
    >>> collapse_locus(Normalizer("logistic"), 3), collapse_locus(Normalizer("gauss"), 2)
    ('zero', None)
    """
    if phi.slope == 0:
        return None
    if tokens == 2:
        return "skew" if phi.h_odd else "zero"
    return "zero" if phi.curvature != 0 else None


def _classify(L, M, phis, tokens) -> Fiber:
    D = len(M)
    if is_zero(L):
        return Fiber("zero-readout", None, [], list(range(1, D + 1)), "Theorem 2, eq. (26)",
                     "The readout L is zero, so the network computes the zero function for "
                     "every choice of the score matrices: all of them are free.")
    sym_nonzero = [not is_zero(symmetric_part(Mi)) for Mi in M]
    if all(sym_nonzero[:-1]) and (sym_nonzero[-1] or phis[-1].slope != 0):
        flips = [i for i in range(1, D + 1) if phis[i - 1].even]
        if flips:
            return Fiber("sign-orbit", None, flips, [], "Theorem 1",
                         f"L and every score are determined by the function, except that the "
                         f"score of layer(s) {_list(flips)} (even normalizer) may each flip "
                         f"sign independently.")
        return Fiber("singleton", None, [], [], "Theorem 1",
                     "L and every score matrix are determined by the function.")
    zero_slope = [i for i in range(1, D + 1) if phis[i - 1].slope == 0]
    if zero_slope:
        degenerate = [i for i in range(1, D + 1) if not sym_nonzero[i - 1]]
        return Fiber("outside-hypotheses", None, [], [], "none",
                     f"Layer(s) {_list(degenerate)} have a zero or skew score and layer(s) "
                     f"{_list(zero_slope)} have h'(0) = 0: neither Theorem 1, Theorem 2 nor "
                     f"Prop. C.6 (which needs every slope nonzero) applies (App. B.4 shows the "
                     f"prefix may then be invisible).")
    theorem = "Theorem 2(ii)" if tokens == 2 else "Theorem 2(i)"
    if tokens > 2 and any(phi.curvature == 0 for phi in phis):
        # (i) assumes h''(0) != 0; App. B.1 uses it only for skew prefix layers,
        # which are refused below, so the argument of App. B still applies.
        theorem = "Theorem 2 (App. B.1 argument; h''(0) = 0 at a layer)"
    for i in range(1, D + 1):
        Mi, phi = M[i - 1], phis[i - 1]
        if is_zero(Mi):
            collapses = True
        elif sym_nonzero[i - 1]:
            collapses = False
        else:  # a nonzero skew score
            locus = collapse_locus(phi, tokens)
            if locus is None and i < D:
                if prop_c6_applies(L, M, phis, tokens):
                    return Fiber("singleton", None, [], [], "Prop. C.6" + (" / Cor. 4.1(i)" if D == 2 else ""),
                                 f"Theorems 1-2 do not decide this tuple (layer {i} has a nonzero skew "
                                 f"score, n = {tokens} >= 3, h''(0) = 0), but Prop. C.6 does: every "
                                 "prefix score has a nondegenerate two-plane restriction, so L and "
                                 "every score are determined (the final score arbitrary).")
                return Fiber("outside-hypotheses", None, [], [], "none",
                             f"Layer {i} has a nonzero skew score, n = {tokens} >= 3 tokens and "
                             f"h''(0) = 0: Theorems 1-2 do not decide it (App. B.3), and Prop. C.6 "
                             f"does not apply (some prefix score has det(U^T M_j U) = 0 for every "
                             f"d x 2 frame U); the fiber of such mixed skew prefixes is open.")
            collapses = locus == "skew"
        if collapses:
            free = list(range(i + 1, D + 1))
            if not free:
                return Fiber("singleton", i, [], [], theorem,
                             "The last layer collapses, but its score is still determined by "
                             "the mean signature (h'(0) != 0): the fiber is a single point.")
            return Fiber("free-suffix", i, [], free, theorem,
                         f"Layer {i} maps every input to consensus, so L and the scores of "
                         f"layers 1..{i} are determined while the score(s) of layer(s) "
                         f"{_list(free)} can be changed arbitrarily without changing the function.")
    return Fiber("singleton", None, [], [], theorem,
                 "No layer collapses before the last: L and every score are determined.")


def prop_c6_applies(L: np.ndarray, M: Sequence[np.ndarray], phis: Sequence[Normalizer], tokens: int,
                    seed: int = 0) -> bool:
    """Whether Prop. C.6 applies: ``d >= 2``, ``n >= 3``, ``L != 0``, every ``h_i'(0) != 0``
    and ``p_i(U) = det(U^T M_i U)`` not identically zero for ``i < D`` (exact).

    A nonzero value of ``p_i`` at a seeded rational frame proves it nonzero;
    otherwise the polynomial in a symbolic ``d x 2`` frame is expanded.

    Parameters
    ----------
    L : numpy.ndarray
        The readout, ``p x d``.
    M : sequence of numpy.ndarray
        The scores ``M_1..M_D``.
    phis : sequence of Normalizer
        One per layer.
    tokens : int
    seed : int, optional
        Seed of the rational frame.

    Returns
    -------
    bool

    Examples
    --------
    >>> J, S = rational_matrix([[0, 1], [-1, 0]]), rational_matrix([[1, 0], [0, 2]])
    >>> prop_c6_applies(rational_matrix([[1, 0]]), [J, S], normalizers("exp", 2), 3)
    True
    >>> prop_c6_applies(rational_matrix([[1, 0]]), [J * 0, S], normalizers("exp", 2), 3)
    False
    """
    d = M[0].shape[0]
    if d < 2 or tokens < 3 or is_zero(L) or any(phi.slope == 0 for phi in phis):
        return False
    rng = random.Random(seed)
    for Mi in M[:-1]:
        if any(sympy.Matrix(U.T.dot(Mi).dot(U)).det() != 0
               for U in (random_rational_matrix(rng, (d, 2)) for _ in range(3))):
            continue
        U = sympy.Matrix(d, 2, sympy.symbols(f"u0:{2 * d}"))
        if sympy.expand((U.T * sympy.Matrix(Mi) * U).det()) == 0:
            return False
    return True


def _list(layers: Sequence[int]) -> str:
    return ", ".join(str(i) for i in layers)


def effective_fiber(L, M: Sequence, normalizer, tokens: int, *, verify: bool = True,
                    seed: int = 0, rays: int | None = None, search_degree: int | None = None) -> Fiber:
    """The effective fiber of ``(L, M_1..M_D)`` per Theorems 1-2, verified by computation.

    Parameters
    ----------
    L : array-like
        The readout, ``p x d`` rationals.
    M : sequence of array-like
        The scores, ``d x d`` rationals each.
    normalizer : str, Normalizer or sequence
        One normalizer for all layers or one per layer.
    tokens : int
        The token count ``n >= 2``.
    verify : bool
        Run the computations of the Notes.
    seed : int
        Seed of the rational input rays.
    rays : int, optional
        Number of rays of every check, the local certificate included (default: 2 for the
        series checks; for the certificate enough for the parameters, grown until full rank).
    search_degree : int, optional
        Search for the witnesses of forbidden sign flips through at least ``rho^search_degree``.
        By default the search runs through the degree Prop. C.4 proves
        (:func:`~symattn.theorems.formulas.sign_degree`), or, where it proves none, to twice
        the sharp degree; a flip without a witness there is *undecided*
        (:attr:`Fiber.status`), never a failed check.

    Returns
    -------
    Fiber

    Raises
    ------
    SymattnError
        For non-square or mismatched matrices, float entries, ``n < 2``.

    Notes
    -----
    The classification:

    * ``zero-readout`` -- ``L = 0``: every score tuple realizes the zero function
      (eq. 26, end of App. A.3);
    * ``singleton`` / ``sign-orbit`` -- Theorem 1: ``sym M_i != 0`` for every
      layer (the last one may be arbitrary when ``h_D'(0) != 0``); ``M_i`` may
      flip sign exactly at the layers whose normalizer is even, independently;
    * ``free-suffix`` -- Theorem 2: every ``h_i'(0) != 0``; ``s`` is the first
      layer with ``M_s`` in the collapse locus ``Z_s`` (:func:`collapse_locus`) and
      ``M_{s+1}..M_D`` are free (eq. 25); a singleton when ``s >= D``;
    * ``singleton`` by Prop. C.6 (Cor. 4.1(i) at depth two) -- ``n >= 3``,
      ``d >= 2``, ``L != 0``, every ``h_i'(0) != 0`` and every prefix score with
      ``det(U^T M_i U)`` not identically zero in the ``d x 2`` frame ``U`` (e.g. a
      nonzero skew prefix score, where Theorems 1-2 are silent);
    * ``outside-hypotheses`` -- anything else (a zero slope with a degenerate
      prefix, such as the counterexample of App. B.4; a nonzero skew prefix layer
      with ``n >= 3`` and ``h''(0) = 0`` whose two-plane restrictions degenerate).
      Nothing is guessed there, and the answer says which statements were tried.

    Each answer is then verified by computation (``verify=True``): the network is
    evaluated along rational input rays ``X = rho Y`` as exact series over Q
    (:func:`symattn.core.algebras.exact_series`); allowed changes (a new suffix, the
    allowed sign flips) must give identical coefficients, and every forbidden sign
    flip must give an exact witness (a ray and a degree where the Taylor
    coefficients differ). Because a series is truncated, the allowed changes are
    also proved exactly by symbolic identities on symbolic tokens (Symbolic
    algebra): the collapsing layer maps every input to consensus
    (``Delta o S_{M_s} = 0``) and every layer fixes consensus, and
    ``S_{-M} = S_M`` for an even normalizer. A singleton or sign orbit is backed
    by a computed local certificate (:func:`local_certificate`): the differential
    of the Taylor map ``T_N`` at the tuple has full rank (over F_p, hence over Q),
    so the tuple is isolated in its fiber (modulo the finite sign group). The
    global statement itself is quoted from the theorem named in ``theorem``.
    ``verified`` is true only when there is at least one check and all of them
    hold.

    Examples
    --------
    Example (28): softmax, two tokens, ``sym M_1 != 0`` and a skew ``M_2``:

    >>> f = effective_fiber([[1, 0]], [[[1, 0], [0, 2]], [[0, 1], [-1, 0]], [[3, 1], [0, 1]]],
    ...                     "exp", 2)
    >>> f.fiber, f.first_collapse, f.free_layers, f.verified
    ('free-suffix', 2, [3], True)
    """
    tokens = require_int(tokens, "the token count n (tokens)", 2)
    _check_options(verify, seed, rays, search_degree)
    L = rational_matrix(L)
    M = [rational_matrix(Mi) for Mi in M]
    if not M:
        raise SymattnError("give at least one score matrix M_1")
    d = M[0].shape[0] if M[0].ndim == 2 else None
    for i, Mi in enumerate(M, 1):
        if Mi.ndim != 2 or Mi.shape[0] != Mi.shape[1]:
            raise SymattnError(f"M_{i} has shape {Mi.shape}; every score matrix must be square d x d")
        if Mi.shape[0] != d:
            raise SymattnError(f"M_{i} is {Mi.shape[0]} x {Mi.shape[0]} but M_1 is {d} x {d}; "
                               "all score matrices act on the input width d")
    if L.ndim != 2 or L.shape[1] != d:
        raise SymattnError(f"L has shape {L.shape}; it must be p x d with d = {d} columns")
    phis = normalizers(normalizer, len(M))
    fib = _classify(L, M, phis, tokens)
    fib.architecture = Architecture((d,) * len(M) + (L.shape[0],), (1,) * len(M), tokens, phis).describe()
    fib.determined = fib.fiber in ("singleton", "sign-orbit")
    fib.sign_flips = [str(i) for i in fib.sign_flip_layers]
    if verify:
        verify_classification(fib, L, M, phis, tokens, seed, rays, search_degree)
    return fib


def fiber(arch: Architecture, L, M, *, verify: bool = True, seed: int = 0, rays: int | None = None,
          max_degree: int = 200, search_degree: int | None = None) -> Fiber:
    """The fiber of the score tuple ``(L, M)`` of any architecture.

    Where Theorems 1-2 cover the architecture (:data:`~symattn.theorems.statements.THEOREM_1`:
    the paper's stack) this is :func:`effective_fiber`: the classification, verified.
    Elsewhere the tuple is read as the *score model* of the stack
    (:func:`~symattn.model.network.effective_network`: readout ``L``, one score per
    layer and head, values ``V = I``; without skips and with one head per layer that
    is the effective masked map, otherwise the identity-value sub-family of the native
    model) and only what is computed is claimed, each item an :class:`Evidence`:

    * ``zero-readout`` (``L = 0``): ``F = L X_D`` is zero for every score, exact;
    * a **local certificate**: the ray Jacobian of ``F(rho Y)`` in every entry of
      ``(L, M_{i,h})`` has full column rank mod p through some degree ``N``, hence
      over Q: ``D T_N`` is injective, the tuple is an isolated point of its fiber
      (``locally-determined``) up to the finite groups below; without it nothing is
      called determined (``undecided``);
    * **sign changes** ``M_{i,h} -> -M_{i,h}``: with an even normalizer the flip is exact
      (a computed check compares the exact ray series); otherwise a difference of the
      series mod p is an exact witness that the flip changes ``F``;
    * **head permutations** of a layer's scores (the heads are summed): exact, with the
      same computed check on the generating adjacent transpositions;
    * **suffix changes** after the first layer whose every score is zero (the paper's
      collapse): a difference is an exact witness that the suffix is *not* free (a
      causal mask or a skip keeps tokens apart); equal series are evidence only.

    Parameters
    ----------
    arch : Architecture
    L : array-like
        The readout, ``p x d`` rationals.
    M : sequence
        Per layer a score (``d x d``), or the sequence of its heads' scores.
    verify, seed, rays, max_degree, search_degree
        As in :func:`effective_fiber`; ``max_degree`` bounds the local certificate.

    Parameters
    ----------
    arch : Architecture
    L : array-like
        The readout, ``p x d_D``.
    M : list
        One score per layer (a list of head scores for a layer of several heads).
    verify : bool, optional
        Verify the classification by exact series (where a theorem covers it).
    seed : int, optional
        Seed of the rays and witnesses.
    rays : int, optional
        Number of seeded rays (default: enough rows).
    max_degree : int, optional
        The local certificate's largest jet degree.
    search_degree : int, optional
        The first jet degree tried.

    Returns
    -------
    Fiber
        The classification (or the computed evidence outside the theorems).

    Raises
    ------
    BadType
        If ``M`` is not a list of scores.
    SymattnError
        For shapes that do not fit the architecture, or a layer with biases, a norm or an MLP
        (a score tuple does not describe it: use :func:`native_fiber`).

    Examples
    --------
    >>> arch = Architecture.uniform(2, 2, 1, 3, "exp", mask="causal")
    >>> f = fiber(arch, [[1, 0]], [[[0, 0], [0, 0]], [[1, 0], [0, 2]]])
    >>> f.fiber, f.determined, f.theorem, f.verified
    ('locally-determined', True, None, True)
    >>> [e.detail.endswith("not free") for e in f.evidence if "suffix" in e.label]  # M_1 = 0: no collapse
    [True]
    """
    require_architecture(arch)
    _check_options(verify, seed, rays, search_degree)
    require_int(max_degree, "max_degree", 1, 400)
    if isinstance(M, (str, bytes)) or not isinstance(M, Sequence) and not isinstance(M, np.ndarray):
        raise BadType(f"M must be a list with one score (or list of head scores) per layer, got {shown(M)}")
    if len(M) != arch.depth:
        raise SymattnError(f"give one list of head scores per layer (D = {arch.depth}), got {len(M)}")
    blocks = [i for i, layer in enumerate(arch.layers, 1) if layer.has_block_parts]
    if blocks:
        raise SymattnError(f"layer {blocks[0]} has biases, a LayerNorm or an MLP: a score tuple (L, M) does not "
                           "describe its parameters (the score model would drop them); ask for the fiber "
                           "evidence at native weights instead (native_fiber, symattn fiber --native)")
    if statements.THEOREM_1.covers(arch):  # one score per layer
        scores = [m[0] if np.asarray(m, dtype=object).ndim == 3 and len(m) == 1 else m for m in M]
        return effective_fiber(L, scores, arch.normalizers, arch.tokens, verify=verify, seed=seed, rays=rays,
                               search_degree=search_degree)
    L = rational_matrix(L)
    d = arch.widths[0]
    if L.ndim != 2 or L.shape[1] != d:
        raise SymattnError(f"L has shape {L.shape}; it must be p x d with d = {d}")
    params = {"L": L}
    for i, heads in enumerate(M, 1):
        heads = [heads] if np.asarray(heads, dtype=object).ndim == 2 else list(heads)
        names = arch.head_names(i)
        if len(heads) != len(names):
            raise SymattnError(f"layer {i} has {len(names)} head(s); got {len(heads)} score(s) (separate "
                               "heads with '|')")
        for suffix, m in zip(names, heads):
            m = rational_matrix(m)
            if m.shape != (d, d):
                raise SymattnError(f"score M_{i}{suffix} has shape {m.shape}; every score is d x d with d = {d}")
            params[f"M{i}{suffix}"] = m
    return _evidence_fiber(arch, params, verify, seed, rays, max_degree, search_degree)


def _check_options(verify, seed, rays, search_degree) -> None:
    """The options of :func:`fiber` and :func:`effective_fiber`, checked at the boundary."""
    if not isinstance(verify, bool):
        raise BadType(f"verify must be True or False, got {shown(verify)}")
    require_int(seed, "seed", 0, 2**63 - 1)
    if rays is not None:
        require_int(rays, "rays", 1, 64)
    if search_degree is not None:
        require_int(search_degree, "search_degree", 1, 400)


def _evidence_fiber(arch: Architecture, params: dict, verify: bool, seed: int, rays: int | None,
                    max_degree: int, search_degree: int | None) -> Fiber:
    """The computed evidence of :func:`fiber` where no theorem classifies the fiber."""
    from symattn.theorems.formulas import prop_c1_degree

    graph = effective_network(arch)
    notes = [NO_THEOREM if statements.outside_note(arch) else "no theorem of the paper classifies this fiber",
             "the score model: readout L, one score per layer and head, values V = I"
             + ("" if arch.has_effective_map else " (a sub-family of the native model: no reduction to it is proved)")]
    L = params["L"]

    def result(kind: str, sentence: str, verified: bool, ev: list, **more) -> Fiber:
        return Fiber(kind, None, more.get("flip_layers", []), [], None, sentence, verified, ev, arch.describe(),
                     more.get("determined", False), more.get("flips", []), more.get("perms", []),
                     more.get("sharp"), notes)

    if is_zero(L):
        return result("zero-readout", "The readout L is zero, so F = L X_D is zero for every choice of the scores: "
                      "all of them are free (exact).", True,
                      [Evidence("L = 0 gives F = 0 for every score", True, "F = L X_D, exact")])
    if not verify:
        return result("undecided", "Not verified: no claim without the computed evidence.", False, [])
    Y = random_bank(arch, rays or 2, seed)
    cert, sharp = score_certificate(arch, graph, params, seed, max_degree, rays)
    if not cert.ok:  # no theorem says an injective jet exists: not finding one decides nothing
        cert = Evidence(cert.label, False, cert.detail, decided=False)
    ev = [cert]
    order = max(min((sharp or prop_c1_degree(arch)) + 2, max_degree), (search_degree or 0) + 1)
    flips, flip_layers = sign_evidence(arch, graph, params, Y, order, ev)
    perms = head_evidence(arch, graph, params, Y, order, ev)
    suffix_evidence(arch, graph, params, Y, order, seed, ev)
    if cert.ok:
        extra = [f"sign flips of {', '.join('M_' + f for f in flips)}" if flips else "",
                 f"head permutations in layer(s) {perms}" if perms else ""]
        extra = [x for x in extra if x]
        sentence = ("The tuple is an isolated point of its fiber (computed local certificate)"
                    + (f", up to the finite group of {' and '.join(extra)}" if extra else "")
                    + ". No theorem says what the whole fiber is.")
    else:
        sentence = "No injective jet differential was found: nothing is claimed determined (see the checks)."
    return result("locally-determined" if cert.ok else "undecided", sentence, all(e.ok for e in ev), ev,
                  determined=cert.ok, flips=flips, flip_layers=flip_layers, perms=perms, sharp=sharp)


def native_fiber(arch: Architecture, seed: int = 0, point=None, digits: int = 60) -> Fiber:
    """Fiber evidence at a native point (default the seeded generic one) of any stack, e.g. a
    transformer block: :func:`point_fiber` of the dimension there, from the exact jets where the
    series run, else from the ball tier (the exact series refuse the stack; said in the result).

    Parameters
    ----------
    arch : Architecture
        Any stack.
    seed : int, optional
    point : dict, optional
        The native point (default the seeded generic one).
    digits : int, optional
        Working precision of the ball tier.

    Returns
    -------
    Fiber

    Examples
    --------
    >>> f = native_fiber(Architecture.uniform(1, 2, 1, 3, "exp", norm="post"))
    >>> f.fiber, f.determined, f.theorem, f.evidence[0].detail.split(";")[0]
    ('locally-determined', True, None, 'rank 9 of 9 (certified lower bound (balls at 60 digits))')
    """
    from symattn.analyses.dimension import neuromanifold_dimension
    from symattn.core.errors import Undecided

    require_architecture(arch)
    try:
        dim = neuromanifold_dimension(arch, seed=seed, point=point)
    except Undecided:  # no jet from X = 0 in exact series: the ball tier
        dim = neuromanifold_dimension(arch, seed=seed, point=point, method="numerical", digits=digits)
    return point_fiber(arch, dim)


def point_fiber(arch: Architecture, dimension) -> Fiber:
    """The fiber at a native point from its dimension bounds (no effective map, no theorem).

    ``dimension`` is :func:`symattn.analyses.dimension.neuromanifold_dimension` at the point
    (``point=``). When the rank of the jet Jacobian there reaches ``P`` minus the rank of the
    declared symmetries, the weights are determined near the point up to those symmetries and
    the head permutations (a computed local certificate); otherwise nothing is claimed.

    Parameters
    ----------
    arch : Architecture
    dimension : Dimension
        The dimension bounds at the point.

    Returns
    -------
    Fiber
    """
    local = dimension.lower_bound == dimension.upper_bound
    tier = getattr(dimension, "tier", "exact")
    what = "jet Jacobian" if tier == "exact" else "output Jacobian on a bank (certified in balls)"
    sentence = (f"At the model's weights the {what} has rank {dimension.lower_bound} = P - rank of "
                f"the declared symmetries {dimension.symmetries}: the weights are determined near this "
                "point up to those symmetries and the head permutations (computed local certificate)."
                if local else
                f"At the model's weights the {what} has rank {dimension.lower_bound} < "
                f"{dimension.upper_bound} = P - rank of the declared symmetries: nothing is claimed "
                "determined.")
    how = (f"through degree {dimension.degree} on {dimension.rays} rays (mod p)" if tier == "exact" else
           f"({tier}); the output Jacobian on {dimension.rays} inputs; the symmetries checked to half the digits")
    evidence = [Evidence("local certificate: the native jet Jacobian reaches P - rank(symmetries)" if tier == "exact"
                         else "local certificate: the native Jacobian reaches P - rank(symmetries)", local,
                         f"rank {dimension.lower_bound} of {dimension.upper_bound} {how}", decided=local)]
    perms = [p["layer"] for p in dimension.head_permutations]
    return Fiber("locally-determined" if local else "undecided", None, [], [], None, sentence, local, evidence,
                 arch.describe(), local, [], perms, dimension.jet_degree, [NO_THEOREM])
