"""Contact spectra and dimensions of variant stacks (skips, masks, multi-head).

Scope: the analyses of :mod:`symattn.analyses.spectrum` and :mod:`symattn.analyses.dimension`
for a :class:`~symattn.model.variants.VariantArchitecture`, through the same graph
machinery (:func:`symattn.model.network.jacobian` on :func:`~symattn.model.variants.variant_network`).
Nothing of the paper's formulas enters: the orders are computed.

Spectrum (:func:`variant_spectrum`)
    Along ``Q_{i,h} = t U_{i,h}``, ``K_{i,h} = t W_{i,h}`` with the values
    (``V``, ``O``) at stated seeded values, the bank Jacobian ``J(t)`` in all
    native entries. The declared symmetries (:func:`~symattn.model.variants.symmetry_directions`)
    along the path are polynomial directions ``xi(t)``; each is verified as a
    kernel vector (``J xi = 0`` mod ``t^N`` and mod p, computed), their leading
    coefficients must be independent (exact rank over Q), and the columns
    outside the pivots of their reduced echelon form complete them to a basis
    at ``t = 0`` (a unimodular column change). The Smith orders of those
    visible columns are computed mod p after a random row compression (upper
    bounds on the orders over Q[[t]]); when the sorted column valuations equal
    them and every column is proved to vanish over Q below its valuation
    (multi-modular, with a-priori majorant height bounds on the same graph),
    the orders are ``certified`` as in :func:`symattn.analyses.spectrum.native_spectrum`.
    Visible columns whose order stays at or above the truncation are reported
    as undecided: a gap between ``rank`` and ``P - kernel``, never hidden.
Dimension (:func:`variant_dimension`)
    Lower bound: the rank mod p of the native Jacobian of the ray coefficients
    of ``F(rho Y)`` (zero-input jets) at a seeded rational point. Upper bound:
    ``P`` minus the exact rank of the declared symmetries at that point
    (each verified as a kernel vector of the same jet Jacobian, mod p).

The default stack (no skip, no mask, one head) goes to the paper's
analyses unchanged and carries their theorem; any other stack is labelled
:data:`~symattn.model.variants.NO_THEOREM` and ``theorem: null``.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Callable

import numpy as np

from symattn.core.algebras import series_for
from symattn.core.algebras.modular import PrimeField, UnluckyPrime
from symattn.core.algebras.series import SeriesAlgebra
from symattn.core.certify import MajorantSeries, primes_below, proved_vanishing
from symattn.core.errors import CheckFailed, SymattnError
from symattn.model.network import evaluate, jacobian
from symattn.model.parameters import random_bank
from symattn.theorems.formulas import divisibility_orders
from symattn.core.linalg import Matrix, SeriesMatrix
from symattn.analyses.spectrum import attribute_bands, block_letters, compress_rows, from_u_series, native_spectrum
from symattn.model.architecture import Architecture as VariantArchitecture
from symattn.model.network import native_network as variant_network
from symattn.model.parameters import random_point as random_variant_point
from symattn.model.symmetries import declared_symmetries, head_permutation_check
from symattn.theorems.statements import NO_THEOREM


def symmetry_directions(arch, theta):
    return [(s.kind, s.vector) for s in declared_symmetries(arch, theta)]

__all__ = ["VariantSpectrum", "VariantDimension", "variant_spectrum", "variant_dimension",
           "jet_jacobian", "path_at", "bank_orders", "PAPER_SPECTRUM_THEOREM"]

#: Primes (at most) whose residues rebuild the rational column relations (CRT).
RECONSTRUCTION_PRIMES = 2

#: The statement that covers a default stack's spectrum.
PAPER_SPECTRUM_THEOREM = "Theorem 4 / Prop. D.1 (native contact spectrum)"


@dataclass
class VariantSpectrum:
    """Result of :func:`variant_spectrum` (``to_json`` gives the CLI keys)."""

    architecture: str
    units: int
    bands: list[dict]
    kernel: int
    kernel_kinds: dict
    rank: int
    parameters: int
    bank_size: int
    method: str
    order: int
    certified: bool
    certificate: str
    undecided: int
    seconds: float
    theorem: str | None
    head_permutations: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return asdict(self)


def _path(arch: VariantArchitecture, seed: int, values: str, point: dict | None = None) -> tuple[dict, dict]:
    """``theta(t) = theta0 + t theta1``: values in ``theta0``, factors in ``theta1`` (of
    ``point``, default the seeded random point)."""
    point = point if point is not None else random_variant_point(arch, seed, values)
    theta0, theta1 = {}, {}
    for name, value in point.items():
        zero = np.zeros(value.shape, dtype=int).astype(object)
        moving = name[0] in "QK"
        theta0[name] = zero if moving else value
        theta1[name] = value if moving else zero
    return theta0, theta1


def path_at(arch: VariantArchitecture, seed: int, values: str, t: Fraction) -> dict:
    """The spectrum path's point ``theta(t)`` (values fixed, ``Q = t U``, ``K = t W``), exact.

    >>> from symattn.model.architecture import Architecture
    >>> from symattn.model.variants import LayerKind, with_layers
    >>> v = with_layers(Architecture.uniform(1, 2, 1, 2, "exp"), LayerKind(skip="value"))
    >>> th = path_at(v, 0, "identity", Fraction(1, 2))
    >>> bool((th["Q1"] == path_at(v, 0, "identity", Fraction(1))["Q1"] / 2).all()), th["V1"].tolist() == [[1, 0], [0, 1]]
    (True, True)
    """
    theta0, theta1 = _path(arch, seed, values)
    return {name: theta0[name] + t * theta1[name] for name in theta0}


def _kernel_split(arch: VariantArchitecture, theta0: dict, theta1: dict):
    """Declared symmetries along the path: kinds, series coefficients ``(2, k, P)``,
    whether their leading coefficients are independent, and the visible columns."""
    d0 = symmetry_directions(arch, theta0)
    d1 = symmetry_directions(arch, theta1)
    P = arch.native_size
    if not d0:
        return [], np.zeros((2, 0, P), dtype=object), True, list(range(P))
    c0 = np.array([v for _, v in d0], dtype=object)
    c1 = np.array([v for _, v in d1], dtype=object)
    lead = np.array([a if any(x != 0 for x in a) else b for a, b in zip(c0, c1)], dtype=object)
    lead_matrix = Matrix.rational(lead)
    independent = lead_matrix.rank() == len(lead)
    pivots = set(lead_matrix.rref()[1])
    visible = [c for c in range(P) if c not in pivots]
    return [k for k, _ in d0], np.stack([c0, c1]), independent, visible


def _layer_of(arch: VariantArchitecture) -> np.ndarray:
    out = np.zeros(arch.native_size, dtype=int)
    off = arch.offsets()
    for block, (name, (a, b)) in zip(arch.blocks, arch.native_shapes()):
        out[off[name]: off[name] + a * b] = block.layer
    return out


def _height_bounds(arch: VariantArchitecture, bank, theta0, theta1, order: int) -> tuple[int, int]:
    """A-priori ``(H, D)``: every coefficient ``c`` of ``t^m``, ``m < order``, of every
    entry of ``J(t)`` has ``D c`` integral and ``|c| <= H`` (majorant arithmetic on
    the same graph, every native entry moved)."""
    M = MajorantSeries(order)
    vals = {name: M.series([theta0[name], theta1[name]], [np.ones(theta0[name].shape, dtype=int)])
            for name in theta0}
    vals["X"] = M.const(bank)
    out = evaluate(variant_network(arch), M, vals)["F"]
    return max(out.height[1]), math.lcm(*out.denominator[1])


def _rational(a: int, p: int) -> Fraction | None:
    """Rational reconstruction of ``a`` mod ``p`` (numerator and denominator below
    ``sqrt(p / 2)``), or None."""
    bound = math.isqrt(p // 2)
    r0, r1, s0, s1 = p, int(a) % p, 0, 1
    while r1 > bound:
        q = r0 // r1
        r0, r1, s0, s1 = r1, r0 - q * r1, s1, s0 - q * s1
    if s1 == 0 or abs(s1) > bound:
        return None
    return Fraction(r1, s1)


def _combine(J: np.ndarray, field: PrimeField, terms: list) -> np.ndarray:
    """``sum c t^s J[:, :, j]`` over ``terms = [(j, s, c)]``, mod p: shape ``(N, rows)``."""
    N = J.shape[0]
    out = np.zeros(J.shape[:2], dtype=np.int64)
    for j, shift, c in terms:
        if shift < N:
            out[shift:] = field.reduce(out[shift:] + field.convert(c)[()] * J[: N - shift, :, j])
    return out


def _reduce_columns(Js: list[np.ndarray], order: int, primes: list[int]) -> tuple[list, list[int]] | None:
    """A column-reduced basis of ``J`` over F_p[[t]] with rational coefficients.

    ``Js`` is the same Jacobian mod each prime of ``primes``. Elementary column
    operations ``col_f -= sum_i c_i t^(v_f - v_i) col_i`` (rational ``c_i``
    reconstructed from their residues modulo the product of the primes, by the
    Chinese remainder theorem) raise a column's valuation while its leading
    coefficient depends on earlier ones; they have determinant 1, so the
    change is unimodular over Q[[t]]. Returns the columns as term lists
    ``[(j, shift, c)]`` and their valuations, or None (the primes disagree, a
    reconstruction failed, or a valuation reached the truncation).
    """
    import flint

    fields = [PrimeField(p) for p in primes]
    algebras = [SeriesAlgebra(F, order) for F in fields]
    modulus = math.prod(primes)
    k = Js[0].shape[2]
    terms = [[(j, 0, Fraction(1))] for j in range(k)]
    cols = [[J[:, :, j] for j in range(k)] for J in Js]
    vals = [int(algebras[0].valuation(c).min()) for c in cols[0]]
    for _ in range(k * order):
        if max(vals) >= order:
            return None
        perm = sorted(range(k), key=lambda j: (vals[j], j))
        forms = []
        for F, cs in zip(fields, cols):
            lead = np.stack([cs[j][vals[j]] for j in perm], axis=1)
            rr, rank = flint.nmod_mat(lead.tolist(), F.p).rref()
            piv, i = [], 0
            for c in range(k):
                if i < rank and int(rr[i, c]) != 0:
                    piv.append(c)
                    i += 1
            forms.append((rr, rank, piv))
        if len({(rank, tuple(piv)) for _, rank, piv in forms}) != 1:
            return None  # the primes see different leading ranks
        rank, pivots = forms[0][1], forms[0][2]
        if rank == k:
            return terms, vals
        free = next(c for c in range(k) if c not in pivots)
        f = perm[free]
        new = list(terms[f])
        for i, c in enumerate(pivots):
            residue = 0
            for (rr, _, _), p in zip(forms, primes):  # Chinese remainder theorem
                m = modulus // p
                residue += int(rr[i, free]) * m * pow(m, -1, p)
            if residue % modulus == 0:
                continue
            q = _rational(residue % modulus, modulus)
            if q is None:
                return None
            j = perm[c]
            new += [(a, shift + vals[f] - vals[j], -q * x) for a, shift, x in terms[j]]
        merged: dict = {}
        for a, shift, x in new:
            merged[(a, shift)] = merged.get((a, shift), 0) + x
        terms[f] = [(a, shift, x) for (a, shift), x in sorted(merged.items()) if x]
        for cs, J, F, A in zip(cols, Js, fields, algebras):
            cs[f] = _combine(J, F, terms[f])
        v = {int(A.valuation(cs[f]).min()) for cs, A in zip(cols, algebras)}
        if len(v) != 1 or min(v) <= vals[f]:
            return None  # the reconstructed relation is not the modular one
        vals[f] = v.pop()
    return None


def _prove_orders(arch, bank, theta0, theta1, visible, terms, orders, say) -> tuple[bool, int]:
    """Prove over Q that each reduced column (``terms``) vanishes below its order:
    multi-modular, primes until their product exceeds twice an a-priori bound."""
    top = max(orders)
    if not top:
        return True, 0
    H, D = _height_bounds(arch, bank, theta0, theta1, top)
    bound = 0
    for t in terms:
        L = math.lcm(*(x.denominator for _, _, x in t))
        bound = max(bound, sum(abs(x.numerator) * (L // x.denominator) for _, _, x in t) * D * H)
    count = 1
    while not proved_vanishing(bound, primes_below(2**23, count)):
        count += 1
    say(f"columns below their orders (up to t^{top}): height 2^{bound.bit_length()}, {count} primes")
    graph, names = variant_network(arch), [n for n, _ in arch.native_shapes()]
    for p in primes_below(2**23, count):
        A = SeriesAlgebra(PrimeField(p), top)
        try:
            J = _jacobian(arch, graph, names, A, bank, theta0, theta1, visible, verify=0)
            cols = [_combine(J, A.field, t) for t in terms]
        except UnluckyPrime:  # a denominator divisible by p
            return False, count
        if any(not A.field.is_zero(c[:o]).all() for c, o in zip(cols, orders)):
            return False, count
    return True, count


def _jacobian(arch, graph, names, A, bank, theta0, theta1, columns, verify=1):
    """``J(t)`` along ``Q = t U``, ``K = t W`` in the native ``columns``: array
    ``(order, rows, len(columns))``.

    Every layer kind sees its factors only through ``A_h = Q_h K_h^T``, so the
    graph runs in ``u = t^2`` on ``Q = u U``, ``K = W`` (half the series length)
    and columns are mapped back exactly: values ``G(t^2)``, queries ``t G(t^2)``,
    keys ``G(t^2) / t``.
    """
    N, P = A.order, arch.native_size
    half = SeriesAlgebra(A.field, N // 2 + 1)
    select = np.zeros((len(columns), P), dtype=int)
    select[np.arange(len(columns)), columns] = 1
    vals = {name: (half.series([np.zeros(theta1[name].shape, dtype=int), theta1[name]])
                   if name[0] == "Q" else half.const(theta1[name] if name[0] == "K" else theta0[name]))
            for name in names}
    vals["X"] = half.const(bank)
    G = jacobian(graph, half, vals, names, directions=half.const(select), verify=verify)
    return from_u_series(half.field, G, block_letters(arch, columns), N)


def _visible_orders(arch, graph, names, A, X, theta0, theta1, xi, visible, method, seed, verify):
    """``J(t)`` on the bank ``X`` (every declared symmetry checked as a kernel vector), its
    visible columns, their row compression and modular Smith orders."""
    J = _jacobian(arch, graph, names, A, X, theta0, theta1, range(arch.native_size), verify=verify)
    if xi.shape[1] and not A.field.is_zero(A.matmul(J, A.series(list(np.swapaxes(xi, 1, 2))))).all():
        raise CheckFailed("a declared symmetry is not a kernel vector of the computed Jacobian")
    J = J[:, :, visible]
    Jc = J if method == "exact" else compress_rows(J, A, min(J.shape[1], len(visible) + 8), seed)
    return J, Jc, SeriesMatrix(A, Jc).smith_orders()[0]


def bank_orders(arch: VariantArchitecture, bank: np.ndarray, order: int, seed: int = 0,
                values: str = "identity") -> list[int]:
    """Modular Smith orders (upper bounds on the orders over Q[[t]]) of the visible columns
    of the path Jacobian on ``bank`` mod ``t^order`` (path of ``seed``, as in
    :func:`variant_spectrum`).

    >>> from symattn.model.architecture import Architecture
    >>> from symattn.model.variants import LayerKind, with_layers
    >>> v = with_layers(Architecture.uniform(2, 2, 1, 3, "exp"), LayerKind(skip="value"))
    >>> bank_orders(v, random_bank(v.base, 6), 8)
    [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3]
    """
    theta0, theta1 = _path(arch, seed, values)
    _, xi, _, visible = _kernel_split(arch, theta0, theta1)
    graph, names = variant_network(arch), [n for n, _ in arch.native_shapes()]
    return _visible_orders(arch, graph, names, series_for("modular", order), bank, theta0, theta1, xi,
                           visible, "modular", seed, verify=0)[2]


def variant_spectrum(arch: VariantArchitecture, bank: "int | str | np.ndarray" = "auto", seed: int = 0,
                     values: str = "identity", method: str = "modular", order: int | None = None,
                     progress: Callable[[str], None] | None = None, point: dict | None = None) -> VariantSpectrum:
    """Contact spectrum of a variant stack (see the module docstring).

    ``bank`` is ``"auto"``, a number of seeded inputs, or an explicit bank
    ``(size, d, n)`` of exact rationals. ``point`` (native blocks by name, e.g. a
    model's own weights) gives the path ``Q = t Q0``, ``K = t K0`` with its values.

    A default stack is computed by :func:`symattn.analyses.spectrum.native_spectrum`
    and carries :data:`PAPER_SPECTRUM_THEOREM`.

    Examples
    --------
    >>> from symattn.model.architecture import Architecture
    >>> from symattn.model.variants import LayerKind, with_layers
    >>> s = variant_spectrum(with_layers(Architecture.uniform(2, 2, 1, 2, "exp"), LayerKind(skip="value")))
    >>> [(b["layer"], b["order"], b["multiplicity"]) for b in s.bands], s.kernel, s.certificate, s.theorem
    ([(1, 0, 4), (1, 1, 3), (2, 1, 1), (2, 2, 4), (2, 3, 2)], 2, 'certified', None)
    """
    say = progress or (lambda msg: None)
    start = time.perf_counter()
    given = None
    if isinstance(bank, np.ndarray):  # an explicit bank (e.g. of a family, symattn.analyses.bank)
        given, bank = bank, len(bank)
    if arch.in_paper_model:
        path = None if point is None else tuple(tuple(point[f"{c}{i}"] for i in range(1, arch.depth + 1))
                                                for c in "QKV")
        s = native_spectrum(arch, bank=given if given is not None else bank, seed=seed, values=values,
                            method=method, order=order, progress=progress, path=path)
        return VariantSpectrum(
            arch.describe(), s.units, [{"layer": b.layer, "order": b.order, "multiplicity": b.multiplicity,
                                        "block": b.block} for b in s.bands],
            s.kernel, {"factor gauge + interface": s.kernel}, s.rank, s.parameters, s.bank_size, s.method,
            s.order, s.certified, s.certificate, s.undecided, s.seconds, PAPER_SPECTRUM_THEOREM,
            [], s.notes)
    if method not in ("modular", "exact"):
        raise SymattnError(f"method must be 'modular' or 'exact', got {method!r}")
    if values not in ("identity", "random"):
        raise SymattnError(f"values must be 'identity' or 'random', got {values!r}")
    theta0, theta1 = _path(arch, seed, values, point)
    kinds, xi, independent, visible = _kernel_split(arch, theta0, theta1)
    P, zeta = arch.native_size, len(kinds)
    if not independent:
        raise SymattnError("the declared symmetries are dependent at t = 0 on this path (a head rank "
                           "too large for the width?); the kernel split needs independent directions")
    per_input = arch.d * arch.tokens
    graph, names = variant_network(arch), [n for n, _ in arch.native_shapes()]
    cap = 4 * max(divisibility_orders(arch)) + 8
    layer = _layer_of(arch)[visible]
    prefix = [np.flatnonzero(layer <= i) for i in range(1, arch.depth + 1)]

    checked = []

    def orders_at(size: int, N: int):
        """Modular Smith orders of the visible columns on ``size`` inputs mod ``t^N``."""
        X = given[:size] if given is not None else random_bank(arch, size, seed)
        A = series_for(method, N)
        say(f"bank {size}: Jacobian {size * per_input} x {len(visible)} (of {P}) to order t^{N} "
            f"({A.field.name})")
        J, Jc, orders = _visible_orders(arch, graph, names, A, X, theta0, theta1, xi, visible, method, seed,
                                        verify=0 if checked else 1)
        checked.append(True)  # the Jacobian code is checked on the first evaluation of a run
        return X, A, J, Jc, orders

    N = order or (max(divisibility_orders(arch)) + 2)
    stable = True
    if bank == "auto":
        # grow the bank until two consecutive sizes give the same Smith orders (evidence that
        # it separates), then raise the truncation while orders stay undecided
        size = -(-2 * len(visible) // per_input)
        X, A, J, Jc, orders = orders_at(size, N)
        for _ in range(8):
            bigger = size + max(1, size // 2)
            X2, A2, J2, Jc2, orders2 = orders_at(bigger, N)
            stable = orders2 == orders
            size, X, A, J, Jc, orders = bigger, X2, A2, J2, Jc2, orders2
            if stable and (len(orders) == len(visible) or order is not None or N >= cap):
                break
            if stable:
                N *= 2
                say(f"{len(visible) - len(orders)} orders undecided; truncation raised to t^{N}")
                X, A, J, Jc, orders = orders_at(size, N)
        bank_note = (f"bank auto: Smith orders equal at the last two sizes (evidence that {size} inputs "
                     "separate)" if stable else f"bank auto: orders still changing at {size} inputs")
    else:
        size = int(bank)
        while True:
            X, A, J, Jc, orders = orders_at(size, N)
            if len(orders) == len(visible) or order is not None or N >= cap:
                break
            N *= 2
        bank_note = f"bank: {size} seeded inputs (orders can only rise on a non-separating bank)"
    say("Smith forms of the layer prefixes (band attribution)")
    nested = [SeriesMatrix(A, Jc[:, :, cols]).smith_orders()[0] for cols in prefix[:-1]] + [orders]
    rank = len(nested[-1])
    blocks = [(f"layer {i}", i, list(cols)) for i, cols in enumerate(prefix, 1)]
    bands = attribute_bands(nested, blocks)
    certificate, primes = "none", 0
    if rank == len(visible):
        if method == "exact":
            certificate = "exact"
        else:
            say("column-reduced basis (rational relations reconstructed mod p)")
            Js, used = [J], [A.field.p]
            reduced = _reduce_columns(Js, A.order, used)
            spare = [q for q in primes_below(2**23, RECONSTRUCTION_PRIMES + 1) if q != A.field.p]
            while reduced is None and len(used) < RECONSTRUCTION_PRIMES:
                # larger relation coefficients (e.g. a model's binary64 weights): one more prime (CRT)
                q = spare[len(used) - 1]
                say(f"column reduction modulo {len(used) + 1} primes (adding {q})")
                Js.append(_jacobian(arch, graph, names, SeriesAlgebra(PrimeField(q), A.order), X, theta0,
                                    theta1, visible, verify=0))
                used.append(q)
                reduced = _reduce_columns(Js, A.order, used)
            if reduced is not None and sorted(reduced[1]) == sorted(nested[-1]):
                say("proving the column orders over Q (primes with a-priori height bounds)")
                proved, primes = _prove_orders(arch, X, theta0, theta1, visible, *reduced, say)
                certificate = "certified" if proved else "none"
    notes = [NO_THEOREM, bank_note,
             (f"path: Q = t U, K = t W (seed {seed}); values {values} (concatenated heads: random V_h, O_h)"
              if point is None else "path: the given point's queries and keys scaled by t, its values fixed"),
             f"kernel: {zeta} declared symmetries ({dict(Counter(kinds))}), each verified as a kernel "
             f"vector of J mod t^{N} (mod p), leading coefficients independent over Q"]
    if rank < len(visible):
        notes.append(f"gap: {len(visible) - rank} visible orders are >= t^{N} or zero: rank {rank} "
                     f"<= rank J <= P - kernel = {P - zeta} (an undeclared symmetry or a higher order)")
    notes.append({"exact": "certificate exact: Smith form over Q[[t]]",
                  "certified": f"certificate certified: modular Smith orders (upper bounds) met by the "
                               "valuations of a column-reduced basis (a unimodular change with rational "
                               f"coefficients), proved over Q modulo {primes} primes (a-priori majorant "
                               "heights); assumes the Jacobian code (checked once by a second code path)",
                  "none": "certificate none: orders are upper bounds (mod p)"}[certificate])
    perms = head_permutation_check(arch, {k: theta0[k] + theta1[k] for k in theta0}, X[:2])
    return VariantSpectrum(
        arch.describe(), sum(b.multiplicity for b in bands if b.order == 0),
        [{"layer": b.layer, "order": b.order, "multiplicity": b.multiplicity, "block": b.block}
         for b in bands],
        zeta, dict(Counter(kinds)), rank, P, size, method, N, certificate != "none", certificate,
        len(visible) - rank, round(time.perf_counter() - start, 3), None,
        perms, notes)


@dataclass
class VariantDimension:
    """Result of :func:`variant_dimension`."""

    architecture: str
    dimension: int | None
    parameters: int
    lower_bound: int
    upper_bound: int
    symmetries: dict
    certified: bool
    degree: int
    rays: int
    seconds: float
    theorem: str | None
    #: least ray-coefficient degree whose Jacobian reaches the dimension (None unless certified)
    jet_degree: int | None = None
    #: the head permutation group per multi-head layer (:func:`~symattn.model.variants.head_permutation_check`)
    head_permutations: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return asdict(self)


def jet_jacobian(arch: VariantArchitecture, point: dict, degree: int, rays: int, seed: int = 0,
                 method: str = "modular", graph=None, names: list | None = None) -> tuple:
    """The native Jacobian of the ray coefficients of ``F(rho Y)`` through ``rho^degree``
    at ``point`` on ``rays`` seeded rational rays: ``(J, algebra)`` with ``J`` of
    shape ``(degree + 1, rows, P)`` (rows: ray, output coordinate, token).

    ``graph``/``names`` default to :func:`~symattn.model.variants.variant_network` and
    its native blocks (the score model passes its own).

    >>> from symattn.model.architecture import Architecture
    >>> from symattn.model.variants import LayerKind, with_layers
    >>> v = with_layers(Architecture.uniform(1, 2, 1, 2, "exp"), LayerKind(skip="folded"))
    >>> J, A = jet_jacobian(v, random_variant_point(v), 3, 2)
    >>> J.shape
    (4, 8, 4)
    """
    graph = graph if graph is not None else variant_network(arch)
    names = names if names is not None else [n for n, _ in arch.native_shapes()]
    A = series_for(method, degree + 1)
    Y = random_bank(arch, rays, seed)
    vals = {name: A.const(v) for name, v in point.items()}
    vals["X"] = A.series([np.zeros(Y.shape, dtype=int), Y])
    return jacobian(graph, A, vals, names), A


def variant_dimension(arch: VariantArchitecture, seed: int = 0, degree: int | None = None,
                      rays: int | None = None, point: dict | None = None) -> VariantDimension:
    """Dimension of the function space of a variant stack: two bounds, a gap reported.

    ``point`` (native blocks by name) replaces the seeded random point: the
    lower bound is then the rank at that point (for a model's own weights).

    >>> from symattn.model.architecture import Architecture
    >>> from symattn.model.variants import LayerKind, with_layers
    >>> r = variant_dimension(with_layers(Architecture.uniform(2, 2, 1, 3, "exp"), LayerKind(heads=2)))
    >>> r.lower_bound, r.upper_bound, r.parameters, r.symmetries
    (24, 24, 32, {'factor gauge': 4, 'interface': 4})
    >>> [(p["layer"], p["group_order"], p["verified"]) for p in r.head_permutations]
    [(1, 2, True), (2, 2, True)]
    """
    from symattn.theorems.formulas import prop_c1_degree

    start = time.perf_counter()
    point = point if point is not None else random_variant_point(arch, seed, "random")
    P = arch.native_size
    dirs = symmetry_directions(arch, point)
    kinds = dict(Counter(k for k, _ in dirs))
    sym_rank = Matrix.rational(np.array([v for _, v in dirs], dtype=object)).rank()
    upper = P - sym_rank
    N = degree or prop_c1_degree(arch)
    R = rays or max(2, -(-upper // (arch.d * arch.tokens)) + 1)
    graph = variant_network(arch)
    for attempt in range(2):
        J, A = jet_jacobian(arch, point, N, R, seed, graph=graph)
        flat = np.moveaxis(J, 0, 1).reshape(-1, P)
        if dirs:
            xi = A.field.convert(np.array([v for _, v in dirs], dtype=object))
            if not A.field.is_zero(A.field.reduce(flat @ xi.T % A.field.p)).all():
                raise CheckFailed("a declared symmetry is not a kernel vector of the jet Jacobian")
        lower = Matrix(flat, A.field).rank()
        if lower == upper or degree is not None:
            break
        N, R = 2 * N + 1, 2 * R
    certified = lower == upper
    sharp = None
    if certified:  # least k whose coefficients rho^0..rho^k already reach the rank
        lo, hi = 0, N
        while lo < hi:
            mid = (lo + hi) // 2
            if Matrix(J[: mid + 1].reshape(-1, P), A.field).rank() == lower:
                hi = mid
            else:
                lo = mid + 1
        sharp = lo
    plain = arch.in_paper_model
    notes = [] if plain else [NO_THEOREM]
    if sharp is not None:
        notes.append(f"jet degree {sharp}: the ray coefficients through rho^{sharp} already have the full "
                     f"rank (proved); through rho^{sharp - 1} they fall short at this point and these rays "
                     "(evidence)")
    notes.append(f"lower bound: rank mod p of the native Jacobian of the degree <= {N} ray "
                 f"coefficients of F(rho Y) on {R} rays (a lower bound on the generic rank)")
    notes.append(f"upper bound: P - rank of the declared symmetries = {P} - {sym_rank} (exact; "
                 "each verified as a kernel vector of the same Jacobian mod p)")
    if not certified:
        notes.append(f"gap: {lower} <= dimension <= {upper}: an undeclared symmetry or a short jet")
    perms = head_permutation_check(arch, point, random_bank(arch, 2, seed))
    if perms:
        notes.append("head permutations (finite groups, see head_permutations): each fiber contains "
                     "the orbit of its point; they lower no dimension")
    return VariantDimension(arch.describe(), lower if certified else None, P, lower, upper, kinds,
                            certified, N, R, round(time.perf_counter() - start, 3),
                            "eq. (40) / HMK dimension (Theorem 4's rank formula)" if plain else None,
                            sharp, perms, notes)
