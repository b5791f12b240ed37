"""Line probes, the mean and contrast signatures, and layer isolation (App. A).

Scope: the one-layer expansion of Section 2.1 / App. A.1 and the layer
isolation of App. A.3, computed by evaluating the effective network graph
(:func:`symattn.model.network.effective_network`) on the line probe

.. math:: x_a = m + \\varepsilon^r c_a z, \\qquad \\textstyle\\sum_a c_a = 0,

as a truncated power series in :math:`\\varepsilon` whose coefficients are
exact polynomials over Q (python-flint ``fmpq_mpoly``) in the symbols the
caller leaves free: the entries of ``m``, ``z``, of any score matrix, and the
normalizer's *derivative ratios at the base score*

.. math:: p_{i,j} = \\phi_i^{(j)}(q_i) / \\phi_i(q_i), \\qquad q_i = m^\\top M_i m .

Nothing of the theorem enters the expansion. The closed forms
(:func:`signatures`, eq. A.1) are evaluated separately, from ``g = h'`` and
``g'`` expressed by the same ratios (``g = p_1``, ``g' = p_2 - p_1^2``), so
that a proof script can compare them with the computed coefficients.

The normalizer's expansion, the spread ``c`` and the caveats: the Notes of
:func:`line_probe`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import flint
import numpy as np
import sympy

from symattn.core.algebras.series import Field, SeriesAlgebra
from symattn.core.errors import InternalError, SymattnError
from symattn.theorems.formulas import isolation_order
from symattn.model.network import effective_network, evaluate
from symattn.model.parameters import rational_matrix
from symattn.model.normalizer import Normalizer, normalizers

__all__ = [
    "ProbeAlgebra",
    "ProbeExpansion",
    "amplitudes",
    "cloud_probe",
    "line_probe",
    "lowest_homogeneous",
    "sign_branches",
    "signatures",
    "to_sympy",
]


def _scalar(v):
    """A Python or sympy rational as ``fmpq``; polynomials unwrapped."""
    if isinstance(v, _Poly):
        return v.p
    if isinstance(v, (flint.fmpq, flint.fmpz, flint.fmpq_mpoly)):
        return v
    q = Fraction(int(v.p), int(v.q)) if hasattr(v, "p") else Fraction(v)
    return flint.fmpq(q.numerator, q.denominator)


class _Poly:
    """An ``fmpq_mpoly`` seen by NumPy as a scalar (the flint type is iterable)."""

    __slots__ = ("p",)

    def __init__(self, p: flint.fmpq_mpoly):
        self.p = p

    def __add__(self, other):
        return _Poly(self.p + _scalar(other))

    __radd__ = __add__

    def __sub__(self, other):
        return _Poly(self.p - _scalar(other))

    def __rsub__(self, other):
        return _Poly(_scalar(other) - self.p)

    def __mul__(self, other):
        return _Poly(self.p * _scalar(other))

    __rmul__ = __mul__

    def __neg__(self):
        return _Poly(-self.p)

    def __pow__(self, e: int):
        return _Poly(self.p ** e)

    def __eq__(self, other):
        return self.p == _scalar(other)

    def __ne__(self, other):
        return not self == other

    __hash__ = None

    def __repr__(self) -> str:
        return str(self.p)


class _Polynomials(Field):
    """Q[symbols] as python-flint ``fmpq_mpoly`` (wrapped) in object arrays."""

    name = "Q[symbols]"
    dtype = object

    def __init__(self, ctx: flint.fmpq_mpoly_ctx):
        self.ctx = ctx

    def element(self, v) -> _Poly:
        """One rational, ``fmpq_mpoly`` or wrapped polynomial as a ring element."""
        if isinstance(v, _Poly):
            return v
        if isinstance(v, flint.fmpq_mpoly):
            return _Poly(v)
        return _Poly(self.ctx.constant(_scalar(v)))

    def convert(self, values):
        arr = np.asarray(values, dtype=object) if not isinstance(values, _Poly) else None
        if arr is None:
            out = np.empty((), dtype=object)
            out[()] = values
            return out
        out = np.empty(arr.shape, dtype=object)
        for idx, v in np.ndenumerate(arr):
            out[idx] = self.element(v)
        return out

    def inverse(self, x):
        out = np.empty(x.shape, dtype=object)
        for idx, v in np.ndenumerate(x):
            if not v.p.is_constant() or v.p.is_zero():
                raise SymattnError("a series denominator has a non-constant or zero leading "
                                   "coefficient; line probes need a unit normalization")
            out[idx] = self.element(1 / v.p.leading_coefficient())
        return out

    def is_zero(self, x):
        out = np.empty(np.shape(x), dtype=bool)
        for idx, v in np.ndenumerate(np.asarray(x, dtype=object)):
            out[idx] = v.p.is_zero()
        return out


class ProbeAlgebra(SeriesAlgebra):
    """Truncated eps-series over ``Q[symbols]``, phi expanded around the base score.

    :meth:`phi` reads its layer ``i`` from the graph node (attribute ``layer``). All its scores must share
    the constant term ``q_i`` (true on line probes); phi is replaced by
    ``sum_j p_{i,j} (x - q_i)^j / j!`` with ``p_{i,0} = 1``, where the ratio
    ``p_{i,j}`` is the generator ``p{i}_{j}`` (``generic=True``) or the exact
    value of ``phi_i^(j)(q_i) / phi_i(q_i)``.

    Parameters
    ----------
    order : int
        Precision: series mod ``eps^order``.
    names : sequence of str
        Generators besides the ratios (e.g. ``m1``, ``z1``, ``M1_11``).
    depth : int
        Number of layers (ratio generators are made for layers 1..depth).
    generic : bool
        Independent ratio symbols (True) or the normalizer's values (False).

    Examples
    --------
    >>> A = ProbeAlgebra(3, ["x"], depth=1)
    >>> x = A.gen("x")
    >>> s = A.series([[x], [1]])        # x + eps
    >>> [str(c[0]) for c in A.phi(s, Normalizer("exp"), layer=1)]
    ['1', 'p1_1', '1/2*p1_2']
    """

    def __init__(self, order: int, names: Sequence[str], depth: int, generic: bool = True):
        ratio_names = [f"p{i}_{j}" for i in range(1, depth + 1) for j in range(1, order)]
        self.ctx = flint.fmpq_mpoly_ctx.get(tuple(names) + tuple(ratio_names), "degrevlex")
        super().__init__(_Polynomials(self.ctx), order)
        self.generic = generic
        #: the base score ``q_i`` of each layer ``i`` met so far
        self.base_scores: dict[int, Any] = {}

    def gen(self, name: str) -> _Poly:
        """The generator called ``name``."""
        return _Poly(self.ctx.gen(self.ctx.variable_to_index(name)))

    def filled(self, shape: tuple[int, ...], value) -> np.ndarray:
        """The constant series with every entry ``value`` (a ring element)."""
        arr = np.empty(shape, dtype=object)
        for idx in np.ndindex(*shape):
            arr[idx] = self.field.element(value)
        return self.const(arr)

    def ratios(self, layer: int, normalizer: Normalizer, q: _Poly) -> list[_Poly]:
        """``p_{layer,j}`` for ``j = 0..order-1`` as ring elements (``p_0 = 1``)."""
        one = self.field.element(1)
        if self.generic:
            return [one] + [self.gen(f"p{layer}_{j}") for j in range(1, self.order)]
        s = normalizer.s
        out = [one]
        for j in range(1, self.order):
            ratio = sympy.cancel(normalizer.derivative_expr(j) / normalizer.expr)
            if ratio.is_polynomial(s) and all(c.is_Rational for c in sympy.Poly(ratio, s).all_coeffs()):
                value = self.field.element(0)
                for c in sympy.Poly(ratio, s).all_coeffs():  # Horner in q
                    value = value * q + self.field.element(c)
            elif q.p.is_constant():
                c0 = q.p.leading_coefficient() if not q.p.is_zero() else flint.fmpq(0)
                value_s = sympy.nsimplify(ratio.subs(s, sympy.Rational(int(c0.p), int(c0.q))))
                if not value_s.is_Rational:
                    raise SymattnError(
                        f"phi^({j})/phi = {ratio} is irrational at the base score {c0}; use "
                        "generic ratios (generic=True) or a base score where it is rational")
                value = self.field.element(value_s)
            else:
                raise SymattnError(
                    f"phi^({j})/phi = {ratio} is not a polynomial in s, so it cannot be "
                    "evaluated at a symbolic base score; use generic ratios (generic=True)")
            out.append(value)
        return out

    def phi(self, x, normalizer, derivative: int = 0, layer: int = 0):
        if derivative:
            raise SymattnError("ProbeAlgebra applies phi itself only (derivative=0)")
        base = x[0].reshape(-1)
        q = base[0]
        if any(v != q for v in base[1:]):
            raise SymattnError("the scores do not share one value at eps = 0; line probes "
                               "x_a = m + eps^r c_a z through a consensus point are required")
        if layer < 1:
            raise InternalError("ProbeAlgebra needs the layer of every phi node (graph attribute 'layer')")
        self.base_scores[layer] = q
        p = self.ratios(layer, normalizer, q)
        y = x.copy()
        y[0] = self.field.convert(np.zeros(y.shape[1:], dtype=int))
        shape = self.shape(x)
        result = self.filled(shape, p[-1] * flint.fmpq(1, math.factorial(self.order - 1)))
        for j in range(self.order - 2, -1, -1):
            result = self.add(self.mul(result, y), self.filled(shape, p[j] * flint.fmpq(1, math.factorial(j))))
        return result


@dataclass
class ProbeExpansion:
    """A line probe pushed through the layers (App. A.1, A.3).

    Attributes
    ----------
    algebra : ProbeAlgebra
        The series algebra (its ``ctx`` names every symbol).
    normalizers : tuple of Normalizer
        One per layer.
    m, z : numpy.ndarray
        The probe's base point and direction (ring elements).
    c : tuple of Fraction
        The centered spread coefficients ``c_a``.
    mu2 : Fraction
        ``n^-1 sum_a c_a^2``.
    M : list of numpy.ndarray
        The score matrices (ring elements).
    L : numpy.ndarray
        The readout (ring elements).
    means : list of numpy.ndarray
        ``mu_0, ..., mu_D`` as series, shape ``(order, d)``.
    centered : list of numpy.ndarray
        ``delta^(0), ..., delta^(D)`` as series, shape ``(order, d, n)``.
    output_mean : numpy.ndarray
        The mean of ``F`` over tokens, shape ``(order, p)``.
    spread : numpy.ndarray or None
        The centered cloud ``y_a`` of :func:`cloud_probe` (None for a line).
    """

    algebra: ProbeAlgebra
    normalizers: tuple
    m: np.ndarray
    z: np.ndarray
    c: tuple
    mu2: Fraction
    M: list
    L: np.ndarray
    means: list = field(default_factory=list)
    centered: list = field(default_factory=list)
    output_mean: Any = None
    spread: Any = None

    def coefficient(self, series: np.ndarray, power: int) -> np.ndarray:
        """``[eps^power]`` of a series tensor (ring elements)."""
        if not 0 <= power < self.algebra.order:
            raise SymattnError(f"eps^{power} is beyond the precision {self.algebra.order}")
        return series[power]

    def valuation(self, series: np.ndarray) -> int:
        """The eps-order of a series tensor (``order`` if zero to this precision)."""
        return int(np.min(self.algebra.valuation(series))) if series.size else self.algebra.order

    def ratio(self, layer: int, j: int):
        """``p_{layer,j} = phi^(j)(q)/phi(q)`` at the layer's base score."""
        phi = self.normalizers[layer - 1]
        return self.algebra.ratios(layer, phi, self.algebra.base_scores[layer])[j]

    def closed_forms(self, layer: int) -> tuple[Any, Any]:
        """``(H_{M_i}, K_{M_i})`` of (A.1) at this probe's ``m, z``, with
        ``g(q_i) = p_{i,1}`` and ``g'(q_i) = p_{i,2} - p_{i,1}^2`` (not from the expansion)."""
        p1, p2 = self.ratio(layer, 1), self.ratio(layer, 2)
        return signatures(self.M[layer - 1], self.m, self.z, p1, p2 - p1 * p1)

    def isolated(self, layer: int) -> tuple[int, np.ndarray]:
        """Layer isolation (A.2): ``mean F - L mu_{j-1}`` for ``j = layer``.

        Returns its eps-valuation and its coefficient of ``eps^(2 3^(j-1))``.
        """
        power = isolation_order(layer)
        diff = self.output_mean - _readout(self.L, self.means[layer - 1])
        return self.valuation(diff), self.coefficient(diff, power)


def _readout(L: np.ndarray, series: np.ndarray) -> np.ndarray:
    """``L v`` for a series vector ``v`` of shape ``(order, d)``."""
    return np.einsum("rc,tc->tr", L, series)


def _entries(value, shape: tuple[int, ...], prefix: str, names: list[str]):
    """Rational entries of ``value``, or symbol names ``prefix...`` when it is None."""
    if value is not None:
        arr = rational_matrix(value) if not isinstance(value, np.ndarray) else value
        if arr.shape != shape:
            raise SymattnError(f"{prefix} has shape {arr.shape}, expected {shape}")
        return arr
    out = np.empty(shape, dtype=object)
    for idx in np.ndindex(*shape):
        name = prefix + "_".join(str(i + 1) for i in idx) if len(shape) > 1 else f"{prefix}{idx[0] + 1}"
        names.append(name)
        out[idx] = name
    return out


def line_probe(
    normalizer: str | Normalizer | Sequence,
    M: Sequence,
    *,
    L: Any = None,
    m: Any = None,
    z: Any = None,
    c: Sequence = (1, -1),
    r: int = 1,
    order: int = 4,
    generic: bool = True,
    width: int | None = None,
) -> ProbeExpansion:
    """Evaluate the effective network on ``x_a = m + eps^r c_a z`` as an exact series.

    Parameters
    ----------
    normalizer : str, Normalizer or sequence
        One normalizer for all layers or one per layer.
    M : sequence
        The score matrices ``M_1..M_D``; an entry None means symbolic entries
        ``M{i}_{a}_{b}``.
    L : array-like, optional
        The readout; default the identity (then ``F = X^(D)``).
    m, z : array-like, optional
        Rational base point and direction; None means symbols ``m1..md``,
        ``z1..zd``.
    c : sequence of rationals
        Spread coefficients, one per token, summing to zero (``n = len(c)``).
    r : int
        Incoming spread order.
    order : int
        Series precision (coefficients ``eps^0..eps^(order-1)``).
    generic : bool
        Generic derivative ratios (True) or the normalizer's own (False).
    width : int, optional
        The token width ``d`` when nothing else fixes it (default 2).

    Returns
    -------
    ProbeExpansion

    Raises
    ------
    SymattnError
        For spread coefficients that are not at least two rationals summing to zero, or
        inconsistent shapes.

    Notes
    -----
    Every score of layer ``i`` tends to :math:`q_i` as :math:`\\varepsilon \\to 0`
    (every layer fixes consensus), so :math:`\\phi_i` is applied by its Taylor
    expansion around :math:`q_i`; dividing by :math:`\\phi_i(q_i)` changes no
    attention weight. With *generic* ratios (independent symbols) an identity
    proved here holds for every analytic normalizer; with a *concrete* normalizer
    the ratios are its exact values (polynomials in ``q`` for ``phi = exp(poly)``,
    rationals at a rational base score), and an irrational ratio is an error.

    The tokens' spread ``c`` need not be normalized: with
    :math:`\\mu_2 = n^{-1}\\sum_a c_a^2` the formulas of the paper read
    :math:`\\bar y - \\bar x = \\varepsilon^{2r}\\mu_2 z H_M + \\dots`,
    :math:`y_a - \\bar y = \\varepsilon^{3r}\\mu_2 c_a z K_M + \\dots`, and the
    amplitudes are :math:`a_i = a_{i-1}^3 \\mu_2 K_i` (the paper's
    :math:`\\mu_2 = 1`); a rational ``c`` with :math:`\\mu_2 = 1` does not exist
    for ``n = 3``.

    Caveats: the series is exact but truncated at ``order``; the coefficient
    polynomials grow quickly with depth when every parameter is symbolic, so deep
    stacks use rational ``M``, ``L``, ``m``, ``z``.

    Examples
    --------
    One softmax layer, two tokens, symbolic ``m, z, M`` (eqs. 10-11):

    >>> e = line_probe("exp", [None], order=4, generic=False, m=None, z=None)
    >>> e.valuation(e.means[1] - e.means[0]), e.valuation(e.centered[1])
    (2, 3)
    """
    c = tuple(Fraction(v) for v in c)
    if len(c) < 2 or sum(c) != 0 or all(v == 0 for v in c):
        raise SymattnError(f"spread coefficients must be >= 2 numbers summing to 0, not all 0; got {c}")
    D = len(M)
    phis = normalizers(normalizer, D)
    d = next((np.asarray(v, dtype=object).shape[0] for v in [m, z, *M] if v is not None), width or 2)
    names: list[str] = []
    z_arr = _entries(z, (d,), "z", names)
    m_arr, M_arr, L_arr = _checked_probe_data(M, L, m, names, d)
    A = ProbeAlgebra(order, names, D, generic)
    m_r, z_r, L_r = _ring_elements(A, m_arr), _ring_elements(A, z_arr), _ring_elements(A, L_arr)
    M_r = [_ring_elements(A, Mi) for Mi in M_arr]
    spread = np.array([[zi * ca for ca in c] for zi in z_r], dtype=object)
    result = ProbeExpansion(A, phis, m_r, z_r, c, sum(v * v for v in c) / len(c), M_r, L_r)
    return _expand_through_layers(result, spread, r)


def _checked_probe_data(M: Sequence, L: Any, m: Any, names: list[str], d: int):
    """Rational-or-symbol arrays for ``m``, the scores and ``L`` (``d`` the width)."""
    m_arr = _entries(m, (d,), "m", names)
    M_arr = [_entries(Mi, (d, d), f"M{i}_", names) for i, Mi in enumerate(M, 1)]
    L_arr = np.eye(d, dtype=int).astype(object) if L is None else rational_matrix(L)
    if L_arr.ndim != 2 or L_arr.shape[1] != d:
        raise SymattnError(f"L has shape {L_arr.shape}; it needs {d} columns (the token width)")
    return m_arr, M_arr, L_arr


def _ring_elements(A: ProbeAlgebra, arr: np.ndarray) -> np.ndarray:
    out = np.empty(arr.shape, dtype=object)
    for idx, v in np.ndenumerate(arr):
        out[idx] = A.gen(v) if isinstance(v, str) else A.field.element(v)
    return out


def _expand_through_layers(result: ProbeExpansion, spread: np.ndarray, r: int) -> ProbeExpansion:
    """Evaluate the network on ``X = m 1^T + eps^r spread``; fill means and centered tokens."""
    A, D = result.algebra, len(result.M)
    d, n = spread.shape
    X = A.const(np.repeat(result.m[:, None], n, axis=1))
    if r < A.order:
        X[r] = A.field.reduce(X[r] + spread)
    graph = effective_network(result.normalizers)
    values = {"X": X, "L": A.const(result.L),
              **{f"M{i}": A.const(Mi) for i, Mi in enumerate(result.M, 1)}}
    out = evaluate(graph, A, values)
    inv_n = Fraction(1, n)
    for Xi in [X] + [out[f"X{i}"] for i in range(1, D + 1)]:
        mean = A.scale(A.sum(Xi, axis=-1), inv_n)
        result.means.append(mean[..., 0])
        result.centered.append(A.sub(Xi, mean))
    result.output_mean = A.scale(A.sum(out["F"], axis=-1), inv_n)[..., 0]
    return result


def cloud_probe(normalizer: str | Normalizer | Sequence, M: Sequence, *, Y: Any = None,
                m: Any = None, tokens: int = 3, L: Any = None, order: int = 4,
                generic: bool = False) -> ProbeExpansion:
    """Evaluate the network on a general cloud ``x_a = m + eps y_a`` (App. B.3).

    ``Y`` is ``d x n`` with zero row sums, or None for symbols ``y{i}_{a}``
    (``a < n``) with ``y_n = -(y_1 + ... + y_{n-1})``; ``m`` and the scores as
    in :func:`line_probe` (``d = 2`` when nothing fixes it). The expansion's
    ``z`` and ``c`` are None and ``mu2`` is 0 (no line).

    Examples
    --------
    Softmax (B.3): the mean moves by ``eps^2 C M^T m``:

    >>> e = cloud_probe("exp", [None], tokens=3)
    >>> e.valuation(e.means[1] - e.means[0]), e.valuation(e.centered[1])
    (2, 3)
    """
    D = len(M)
    phis = normalizers(normalizer, D)
    d = next((np.asarray(v, dtype=object).shape[0] for v in [Y, m, *M] if v is not None), 2)
    names: list[str] = []
    if Y is None:
        Y_arr = np.empty((d, tokens), dtype=object)
        for i in range(d):
            for a in range(tokens - 1):
                Y_arr[i, a] = f"y{i + 1}_{a + 1}"
                names.append(Y_arr[i, a])
    else:
        Y_arr = rational_matrix(Y)
        if Y_arr.ndim != 2 or Y_arr.shape[0] != d or any(sum(row) != 0 for row in Y_arr):
            raise SymattnError(f"Y must be {d} x n with zero row sums (centered tokens)")
    m_arr, M_arr, L_arr = _checked_probe_data(M, L, m, names, d)
    A = ProbeAlgebra(order, names, D, generic)
    Y_r = _ring_elements(A, Y_arr[:, :-1] if Y is None else Y_arr)
    if Y is None:
        last = -np.sum(Y_r, axis=1)
        Y_r = np.concatenate([Y_r, last[:, None]], axis=1)
    result = ProbeExpansion(A, phis, _ring_elements(A, m_arr), None, None, Fraction(0),
                            [_ring_elements(A, Mi) for Mi in M_arr], _ring_elements(A, L_arr))
    result.spread = Y_r
    return _expand_through_layers(result, Y_r, 1)


def signatures(M: np.ndarray, m: np.ndarray, z: np.ndarray, g, dg) -> tuple[Any, Any]:
    """The closed forms (A.1): ``H = g(q) m^T M z``, ``K = g(q) z^T M z + g'(q) (z^T M m)(m^T M z)``.

    ``g`` and ``dg`` are the values ``g(q)``, ``g'(q)`` at ``q = m^T M m`` in
    whatever ring ``m, z, M`` live in.

    Parameters
    ----------
    M : numpy.ndarray
        The score.
    m, z : numpy.ndarray
        The line's point and direction.
    g, dg
        ``g(q)`` and ``g'(q)``.

    Returns
    -------
    tuple
        ``(H, K)``.

    Examples
    --------
    >>> import sympy
    >>> m1, z1, g, dg = sympy.symbols("m1 z1 g dg")
    >>> signatures(np.array([[2]]), np.array([m1]), np.array([z1]), g, dg)
    (2*g*m1*z1, 4*dg*m1**2*z1**2 + 2*g*z1**2)
    """
    v = m.dot(M).dot(z)
    u = z.dot(M).dot(m)
    w = z.dot(M).dot(z)
    return g * v, g * w + dg * u * v


def amplitudes(K: Sequence, mu2: Fraction) -> list:
    """``a_0 = 1``, ``a_i = a_{i-1}^3 mu_2 K_i`` (App. A.3, with the spread ``mu_2``).

    Parameters
    ----------
    K : sequence
        The curvatures ``K_i``.
    mu2 : Fraction
        The spread.

    Returns
    -------
    list
        ``a_0 .. a_D``.

    Examples
    --------
    >>> amplitudes([2, 3], 1)
    [1, 2, 24]
    """
    out = [1]
    for Ki in K:
        out.append(out[-1] ** 3 * mu2 * Ki)
    return out


def _pretty(name: str) -> sympy.Symbol:
    """Display symbol: ``p1_2 -> p_{1,2}``, ``M1_1_2 -> M^{(1)}_{12}``, ``m1 -> m_1``."""
    parts = name.split("_")
    if name.startswith("p") and len(parts) == 2:
        return sympy.Symbol(f"p_{{{parts[0][1:]},{parts[1]}}}")
    if name.startswith("M") and len(parts) == 3:
        return sympy.Symbol(f"M^{{({parts[0][1:]})}}_{{{parts[1]}{parts[2]}}}")
    if name.startswith("y") and len(parts) == 2:
        return sympy.Symbol(f"y_{{{parts[0][1:]},{parts[1]}}}")
    return sympy.Symbol(f"{name[0]}_{name[1:]}")


def to_sympy(p, symbols: dict | None = None, pretty: bool = False) -> sympy.Expr:
    """A ring element (wrapped ``fmpq_mpoly`` or rational) as a sympy expression.

    Generators become ``sympy.Symbol(name)``, or display symbols such as
    ``p_{1,2}``, ``M^{(1)}_{12}``, ``m_1`` with ``pretty=True``.

    Parameters
    ----------
    p : ring element
        A wrapped ``fmpq_mpoly`` or a rational.
    symbols : dict, optional
        Symbols to use by generator name.
    pretty : bool
        Use display symbols.

    Returns
    -------
    sympy.Expr

    Examples
    --------
    >>> A = ProbeAlgebra(2, ["x"], depth=1)
    >>> to_sympy(A.gen("x") ** 2 * flint.fmpq(1, 3))
    x**2/3
    """
    if not isinstance(p, _Poly):
        return sympy.nsimplify(p) if not hasattr(p, "p") else sympy.Rational(int(p.p), int(p.q))
    p = p.p
    names = p.context().names()
    syms = [(symbols or {}).get(n, _pretty(n) if pretty else sympy.Symbol(n)) for n in names]
    total = sympy.S.Zero
    for exps, coeff in p.to_dict().items():
        term = sympy.Rational(int(coeff.p), int(coeff.q))
        for s, e in zip(syms, exps):
            if e:
                term *= s ** e
        total += term
    return total


def lowest_homogeneous(expr: sympy.Expr, variables: Sequence[sympy.Symbol]) -> tuple[int, sympy.Expr]:
    """The lowest-degree nonzero homogeneous part of ``expr`` in ``variables``.

    Parameters
    ----------
    expr : sympy.Expr
        A polynomial.
    variables : sequence of sympy.Symbol
        The variables of the grading.

    Returns
    -------
    tuple
        ``(degree, part)``.

    Raises
    ------
    SymattnError
        ``expr`` is zero.

    Examples
    --------
    >>> x, y = sympy.symbols("x y")
    >>> lowest_homogeneous(x**3 + 2*x*y + y**2, [x, y])
    (2, 2*x*y + y**2)
    """
    poly = sympy.Poly(sympy.expand(expr), *variables)
    if poly.is_zero:
        raise SymattnError("the zero polynomial has no lowest homogeneous part")
    low = min(sum(mon) for mon in poly.monoms())
    part = sum(coeff * sympy.prod(v ** e for v, e in zip(variables, mon))
               for mon, coeff in poly.terms() if sum(mon) == low)
    return low, sympy.expand(part)


def sign_branches(k: int) -> list[int]:
    """The real ``sigma`` with ``q_N = sigma q_M`` allowed by ``q_N^k = q_M^k`` (App. A.2).

    Computed by factoring ``q_N^k - q_M^k`` over Q and keeping the real linear
    factors ``q_N - sigma q_M``.

    Parameters
    ----------
    k : int
        The exponent.

    Returns
    -------
    list of int

    Examples
    --------
    >>> sign_branches(3), sign_branches(4)
    ([1], [-1, 1])
    """
    qN, qM = sympy.symbols("q_N q_M")
    out = []
    for factor, _ in sympy.factor_list(qN ** k - qM ** k)[1]:
        poly = sympy.Poly(factor, qN, qM)
        if poly.total_degree() == 1:
            a, b = poly.coeff_monomial(qN), poly.coeff_monomial(qM)
            out.append(int(-b / a))
    return sorted(out)
