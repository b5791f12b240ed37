"""The paper's closed forms: what the theorems *predict*, kept apart from what is computed.

Every function here evaluates a formula of the paper (or of Henry-Marchetti-Kohn)
from the architecture's integers alone (depths, widths, ranks, the
normalizers' orders ``k_i``); none of them evaluates the model. The analyses
compute their answers from the network graph (:mod:`symattn.analyses.spectrum`,
:mod:`symattn.analyses.jets`, :mod:`symattn.analyses.dimension`, ...) and the proofs
(:mod:`symattn.theorems.registry`) compare those computed values with these predictions.
Where an analysis *uses* a formula (a truncation order, the proven
divisibility of App. D.2 in the ``conditional`` certificate), its docstring
says so.

Contents: the ray degrees ``e_i`` and divisibility exponents ``beta_i`` of
App. D.2 (closed form ``2 k 3^(i-1) - 1`` for a common ``k``), the sharp jet
degrees of Prop. C.1, C.3 and Cor. C.2, and the neuromanifold dimension of
eq. (40) / HMK Conjecture 3.10.
"""

from __future__ import annotations

from typing import Sequence

from symattn.core.errors import SymattnError
from symattn.model.architecture import Architecture
from symattn.model.normalizer import Normalizer

__all__ = [
    "ray_degrees", "divisibility_orders", "common_k_divisibility_order", "prop_c1_degree",
    "adaptive_degree", "all_tuples_degree", "hmk_formula", "even_degree", "collapsing_skew_layer",
    "closed_form_divisibility_orders", "common_k_sharp_degree", "native_rank", "gauge_kernel_dimension",
    "centered_order", "isolation_order", "sign_degree",
]


def ray_degrees(normalizers: Sequence[Normalizer]) -> list[int]:
    """App. D.2: ``e_0 = 0``, ``e_i = 3 e_{i-1} + 2 k_i`` (``e_0 .. e_D``).

    >>> ray_degrees(Architecture.uniform(3, 2, 1, 2, "exp").normalizers)
    [0, 2, 8, 26]
    """
    e = [0]
    for phi in normalizers:
        e.append(3 * e[-1] + 2 * phi.k)
    return e


def divisibility_orders(arch: Architecture) -> list[int]:
    """The proven divisibility exponents of App. D.2 / Prop. D.1,
    ``beta_i = 2 k_i - 1 + 2 e_{i-1}`` (:func:`ray_degrees`), ``i = 1..D``.

    >>> divisibility_orders(Architecture.uniform(4, 2, 1, 2, "exp"))
    [1, 5, 17, 53]
    """
    e = ray_degrees(arch.normalizers)
    return [2 * phi.k - 1 + 2 * e_prev for phi, e_prev in zip(arch.normalizers, e)]


def common_k_divisibility_order(layer: int, k: int = 1) -> int:
    """Theorem 4's closed form for a common order ``k``: ``beta_i = 2 k 3^(i-1) - 1``.

    >>> [common_k_divisibility_order(i) for i in (1, 2, 3, 4)]
    [1, 5, 17, 53]
    """
    return 2 * k * 3 ** (layer - 1) - 1


def closed_form_divisibility_orders(ks: Sequence[int]) -> list[int]:
    """Prop. D.1's closed form of ``beta_i`` for orders ``k_1..k_D`` (not the recursion):
    ``beta_i = 2 k_i - 1 + 4 sum_{j < i} 3^(i-1-j) k_j``.

    >>> closed_form_divisibility_orders([1, 2, 1])
    [1, 7, 21]
    """
    return [2 * ks[i] - 1 + 4 * sum(3 ** (i - 1 - j) * ks[j] for j in range(i)) for i in range(len(ks))]


def common_k_sharp_degree(depth: int, k: int = 1) -> int:
    """Theorem 3's sharp jet degree for a common order ``k``: ``N_D = 2 k 3^(D-1) + 1``.

    >>> [common_k_sharp_degree(D) for D in (1, 2, 3)], common_k_sharp_degree(2, k=2)
    ([3, 7, 19], 13)
    """
    return 2 * k * 3 ** (depth - 1) + 1


def native_rank(width: int, ranks: Sequence[int]) -> int:
    """Eq. (40): the generic rank ``d^2 + sum_i r_i (2 d - r_i)`` of the native Jacobian
    (equal widths ``d``, query/key widths ``r_i``).

    >>> native_rank(4, [2, 2, 2])
    52
    """
    return width * width + sum(r * (2 * width - r) for r in ranks)


def gauge_kernel_dimension(width: int, ranks: Sequence[int]) -> int:
    """Eq. (49): the kernel ``(D - 1) d^2 + sum_i r_i^2`` (factor gauges and interface
    directions, equal widths ``d``).

    >>> gauge_kernel_dimension(4, [2, 2, 2])
    44
    """
    return (len(ranks) - 1) * width * width + sum(r * r for r in ranks)


def centered_order(layer: int) -> int:
    """Eq. (17): on a line probe with ``eps^1`` spread, the centered tokens after
    ``j`` layers have eps-order ``3^j`` (softmax-like layers, ``sym M_i != 0``).

    >>> [centered_order(j) for j in (0, 1, 2)]
    [1, 3, 9]
    """
    return 3 ** layer


def isolation_order(layer: int) -> int:
    """Eq. (A.2): ``mean F - L mu_{j-1}`` has eps-order ``2 * 3^(j-1)`` (layer ``j``).

    >>> [isolation_order(j) for j in (1, 2, 3)]
    [2, 6, 18]
    """
    return 2 * 3 ** (layer - 1)


def prop_c1_degree(arch: Architecture) -> int:
    """Prop. C.1: ``alpha_0 = 1``, ``alpha_i = 3 alpha_{i-1} + 2 k_i - 2``,
    ``N_D = 2 alpha_{D-1} + 2 k_D - 1`` (common ``k``: ``2 k 3^(D-1) + 1``).

    >>> [prop_c1_degree(Architecture.uniform(D, 1, 1, 2, "exp")) for D in (1, 2, 3, 4)]
    [3, 7, 19, 55]
    """
    alpha, N = 1, 0
    for phi in arch.normalizers:
        N = 2 * alpha + 2 * phi.k - 1
        alpha = 3 * alpha + 2 * phi.k - 2
    return N


def sign_degree(normalizers: Sequence[Normalizer], layer: int) -> int | None:
    """Prop. C.4 / (C.7): the degree ``2 alpha_{j-1} + 2 o_j - 1`` at which flipping ``M_j`` changes
    the zero-input jet (``alpha`` of Prop. C.1, ``o_j`` the first nonzero odd degree of ``h_j``);
    None when ``h_j`` is even (the flip is exact) or has no odd term below degree 64.

    The proof needs ``L != 0`` and ``sym M_i != 0`` for ``i < j``; at layer ``j`` either
    ``sym M_j != 0`` or ``o_j = 1`` (then the term ``2 b_1 m^T M_j z`` of (C.7) is nonzero).

    >>> phis = [Normalizer("cosh(s)+s^3")] * 2
    >>> sign_degree(phis, 1), sign_degree(phis, 2), sign_degree([Normalizer("cosh")], 1)
    (7, 15, None)
    """
    phi = normalizers[layer - 1]
    if phi.even:
        return None
    h = phi.h_taylor(64)
    odd = next((j for j in range(1, len(h), 2) if h[j] != 0), None)
    if odd is None:
        return None
    alpha = 1
    for prev in normalizers[:layer - 1]:
        alpha = 3 * alpha + 2 * prev.k - 2
    return 2 * alpha + 2 * odd - 1


def even_degree(phi: Normalizer) -> int | None:
    """``ell``: the first nonzero even Taylor degree of ``h = log phi`` (None if h is odd).

    >>> even_degree(Normalizer("exp(s+s^2)")), even_degree(Normalizer("exp"))
    (2, None)
    """
    if phi.h_odd:
        return None
    h = phi.h_taylor(64)
    return next(j for j in range(2, len(h), 2) if h[j] != 0)


def collapsing_skew_layer(arch: Architecture, skew: Sequence[bool]) -> int | None:
    """The first layer ``i < D`` with a skew score whose ``h_i`` is odd (so the skew
    score collapses two tokens, Theorem 2, and Prop. C.3 does not apply), or None.

    >>> collapsing_skew_layer(Architecture.uniform(2, 2, 2, 2, "exp"), [True, False])
    1
    """
    return next((i for i, phi in enumerate(arch.normalizers[:-1], 1)
                 if skew[i - 1] and even_degree(phi) is None), None)


def adaptive_degree(arch: Architecture, skew: Sequence[bool]) -> int:
    """Prop. C.3 (two tokens, ``h_i'(0) != 0``, no collapsing prefix): ``alpha_0 = 1``,
    ``alpha_i = 3 alpha_{i-1}`` at a nonskew score, ``(ell_i + 1) alpha_{i-1} + ell_i``
    at a nonzero skew score; the order is ``2 alpha_{D-1} + 1``.

    >>> adaptive_degree(Architecture.uniform(2, 2, 2, 2, "exp(s+s^2)"), [True, False])
    11
    """
    collapsing = collapsing_skew_layer(arch, skew)
    if collapsing is not None:
        raise SymattnError(f"layer {collapsing}: h is odd, so a skew score collapses two tokens "
                           "(Theorem 2); Prop. C.3 needs a noncollapsing prefix")
    alpha = 1
    for i, phi in enumerate(arch.normalizers[:-1]):
        if skew[i]:
            ell = even_degree(phi)
            alpha = (ell + 1) * alpha + ell
        else:
            alpha = 3 * alpha
    return 2 * alpha + 1


def all_tuples_degree(depth: int) -> int:
    """Cor. C.2: ``N_D^all = 4 * 3^(D-1) - 1``.

    >>> [all_tuples_degree(D) for D in (1, 2, 3)]
    [3, 11, 35]
    """
    return 4 * 3 ** (depth - 1) - 1


def hmk_formula(delta: int, depth: int, head: int) -> int:
    """Eq. (40) / HMK Conjecture 3.10 for equal widths ``delta`` and ``head <= delta``:
    ``delta^2 + depth * head * (2 delta - head)``.

    >>> hmk_formula(3, 2, 2)
    25
    """
    return delta * delta + depth * head * (2 * delta - head)
