"""A column-reduced frame of a series Jacobian with exact zeros and a certified leading rank.

The certificate of a contact spectrum whose Jacobian lives over
:class:`~symattn.core.algebras.constants.ConstantField` (Q adjoined a LayerNorm's square roots
and an activation's transcendental values, :mod:`symattn.analyses.spectrum`'s ``constants``
route). Exact zeros are proofs there, nonzero elements only candidates (a free constant may be
algebraic over the others), so the frame is found numerically and checked exactly
(:func:`prove_frame`; its Notes give the steps and what they prove). Assumed, not proved: the
forward-mode Jacobian code computes the derivative (checked on a random direction by a second
code path in the same field) and the Taylor data of the functions are right.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable

import flint
import numpy as np

from symattn.core.algebras.balls import digits_to_bits, precision
from symattn.core.rank_certificate import ball_minor_rank
from symattn.analyses.columns import column_operation

__all__ = ["FrameProof", "Known", "numerical_frame", "prove_frame", "rationalize"]

#: One column of a frame: ``[(visible column j, shift s, rational c)]`` for ``sum c t^s col_j``.
Terms = list[tuple[int, int, Fraction]]


@dataclass
class FrameProof:
    """Result of :func:`prove_frame`: ``status`` ``"proved"`` or ``"undecided"`` (with ``reason``)."""

    status: str
    #: the exact valuation of each frame column below the truncation (``None``: a gap column)
    orders: list[int | None]
    #: each frame column as terms over the visible columns
    terms: list[Terms]
    #: the truncation ``N``
    truncation: int
    #: size of the certified nonzero minor of ``E(0)`` (the finite columns' count when proved)
    certified_rank: int = 0
    reason: str = ""
    #: column operations the reduction made
    operations: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def finite(self) -> list[int]:
        """The finite orders, sorted."""
        return sorted(o for o in self.orders if o is not None)

    @property
    def gap(self) -> int:
        """Frame columns that vanish mod ``t^N`` exactly."""
        return sum(1 for o in self.orders if o is None)


class Known:
    """A series coefficient known exactly or only as a certified ball: ``exact`` an element of the
    exact field (its zeros are proofs) or ``None``, ``ball`` a python-flint ``arb`` that contains
    the value. Where ``exact`` is ``None`` only the exact ball ``0`` (radius 0: a product with an
    exact zero along the computation) is a zero; a ball that merely contains 0 is a nonzero
    candidate, which the frame then leaves undecided (its balls contain 0), never a false zero.
    Combinations are ring operations with rationals (the frame's column operations); sums of an
    exact and a ball-only coefficient are ball-only. Run them at the balls' precision
    (:func:`~symattn.core.algebras.balls.precision`).

    Parameters
    ----------
    exact : object or None
        The exact value (an element of the exact field), or None.
    ball : arb
        A ball that contains the value.

    Examples
    --------
    >>> import flint
    >>> a, b = Known(flint.fmpq(1, 3), flint.arb(1) / 3), Known(None, flint.arb(0))
    >>> (a * flint.fmpq(3) + b) != 0, (a + a * flint.fmpq(-1)) != 0, b != 0
    (True, False, False)
    >>> (Known(None, flint.arb(1) / 3) + a * flint.fmpq(-1)) != 0     # a ball around 0: a candidate
    True
    """

    __slots__ = ("exact", "ball")

    def __init__(self, exact: Any, ball: Any) -> None:
        if exact is None and ball.is_exact() and ball == 0:
            exact = flint.fmpq(0)
        self.exact, self.ball = exact, ball

    def __mul__(self, c: Any) -> "Known":
        if not isinstance(c, (int, flint.fmpq)):
            return NotImplemented
        return Known(None if self.exact is None else self.exact * c, self.ball * c)

    __rmul__ = __mul__

    def __add__(self, other: Any) -> "Known":
        if isinstance(other, int) and other == 0:
            return self
        if not isinstance(other, Known):
            return NotImplemented
        exact = None if self.exact is None or other.exact is None else self.exact + other.exact
        return Known(exact, self.ball + other.ball)

    __radd__ = __add__

    def __ne__(self, other: Any) -> bool:  # type: ignore[override]
        if not (isinstance(other, int) and other == 0):
            return NotImplemented
        if self.exact is not None:
            return bool(self.exact != 0)
        return True

    def __eq__(self, other: Any) -> bool:  # type: ignore[override]
        result = self.__ne__(other)
        return result if result is NotImplemented else not result

    __hash__ = None  # type: ignore[assignment]


def rationalize(x: Any, digits: int, max_denominator: int | None = None) -> Fraction | None:
    """The rational with denominator at most ``max_denominator`` (default ``10^(digits // 6)``) nearest
    to ``x`` (a python-flint ``arb``, its midpoint read to ``digits + 10`` digits), if it agrees with
    ``x`` to ``digits // 2`` digits (relative to ``max(1, |x|)``), else None. The best approximation
    with denominators up to ``Q`` is already within about ``1/Q^2`` of any number, so the agreement
    asked for is far closer than that (``10^(-digits/2)`` against ``10^(-digits/3)``).

    Parameters
    ----------
    x : arb
        The ball.
    digits : int
        The precision ``x`` is known to.
    max_denominator : int, optional
        The largest denominator (default ``10^(digits // 6)``).

    Returns
    -------
    Fraction or None

    Examples
    --------
    >>> import flint
    >>> flint.ctx.dps = 60
    >>> rationalize(flint.arb(-3) / 7, 50), rationalize(flint.arb(2).sqrt(), 50)
    (Fraction(-3, 7), None)
    >>> flint.ctx.dps = 15
    """
    text = x.mid().str(digits + 10, radius=False)
    value = Fraction(text)
    q = value.limit_denominator(max_denominator or 10 ** max(3, digits // 6))
    if abs(value - q) > Fraction(1, 10 ** (digits // 2)) * max(1, abs(value)):
        return None
    return q


def _valuation(col: np.ndarray, start: int = 0, nonzero: Callable[[Any], bool] = lambda v: v != 0) -> int:
    """The first coefficient of ``col`` (shape ``(N, rows)``) not zero (exactly, or by ``nonzero``), at or
    after ``start``; ``N`` if none."""
    for k in range(start, col.shape[0]):
        if any(nonzero(v) for v in col[k]):
            return k
    return col.shape[0]


def _combine(J: np.ndarray, terms: Terms) -> np.ndarray:
    """``sum c t^s J[:, :, j]`` exactly (shape ``(N, rows)``)."""
    N = J.shape[0]
    out = np.full(J.shape[:2], 0, dtype=object)
    for j, shift, c in terms:
        if shift < N:
            out[shift:] = out[shift:] + J[: N - shift, :, j] * flint.fmpq(c.numerator, c.denominator)
    return out


def prove_frame(J: np.ndarray, balls: Callable[[np.ndarray], np.ndarray], digits: int = 60,
                say: Callable[[str], None] | None = None, max_operations: int | None = None) -> FrameProof:
    """A column-reduced frame of ``J`` (exact series coefficients, shape ``(N, rows, k)``), proved as
    in the Notes. ``balls(v)`` maps a vector of elements (one coefficient of one column,
    all rows) to python-flint ``arb`` balls at ``digits`` digits.

    Parameters
    ----------
    J : numpy.ndarray
        Exact series coefficients ``(N, rows, k)``.
    balls : callable
        Maps a vector of elements to ``arb`` balls at ``digits`` digits.
    digits : int
        The balls' precision.
    say : callable, optional
        Progress lines.
    max_operations : int, optional
        A cap on the column operations.

    Returns
    -------
    FrameProof

    Notes
    -----
    1. elementary column operations ``col_f -= c t^(v_f - v_j) col_j`` with *rational* ``c`` (found
       from the leading coefficients' ball midpoints by a pivoted elimination at ``digits`` digits and
       rational reconstruction; Python's :class:`~fractions.Fraction` ``limit_denominator``, checked
       against the value) raise a column's valuation while its leading coefficient depends on the
       others; the operations have determinant 1, so the change is unimodular over ``Q[t]``;
    2. every column of the frame is combined *exactly* in the field, and its valuation is the first
       coefficient that is not exactly zero: the zeros below it are proofs (a column whose
       reconstructed operation does not raise its exact valuation leaves the frame undecided);
    3. the columns whose exact valuation reaches the truncation ``N`` are the *gap*: they vanish mod
       ``t^N`` exactly; the others' leading coefficients ``E(0)``, evaluated in python-flint balls,
       must have a nonzero maximal minor (:func:`~symattn.core.rank_certificate.ball_minor_rank`).

    Then ``J(t) C(t) = [E(t) diag(t^v) | t^N F(t)]`` with ``E(0)`` of full column rank, so the first
    ``R`` Smith orders of ``J`` over ``R[[t]]`` are the sorted ``v`` (every ``k x k`` minor has
    valuation at least the sum of the ``k`` smallest column orders, and the minor of ``E(0)`` attains
    it) and the other Smith orders are at least ``N`` (a kernel, or orders past the truncation).

    Examples
    --------
    >>> import flint
    >>> J = np.zeros((3, 2, 2), dtype=object)
    >>> J[0] = [[1, 2], [2, 4]]; J[1] = [[0, 1], [0, 0]]      # col 2 = 2 col 1 + t e_1
    >>> to_balls = lambda v: np.array([flint.arb(flint.fmpq(int(x))) for x in v], dtype=object)
    >>> p = prove_frame(J, to_balls, 30)
    >>> p.status, p.orders, p.terms[1]
    ('proved', [0, 1], [(0, 0, Fraction(-2, 1)), (1, 0, Fraction(1, 1))])
    """
    say = say or (lambda msg: None)
    N, rows, k = J.shape
    terms: list[Terms] = [[(j, 0, Fraction(1))] for j in range(k)]
    cols = [J[:, :, j] for j in range(k)]
    vals = [_valuation(c) for c in cols]
    lead_cache: dict = {}

    def lead(j: int) -> np.ndarray:
        key = (j, vals[j], len(terms[j]))
        if key not in lead_cache:
            lead_cache[key] = balls(cols[j][vals[j]])
        return lead_cache[key]

    limit = max_operations if max_operations is not None else 4 * k * N
    operations = 0
    while True:
        live = sorted((j for j in range(k) if vals[j] < N), key=lambda j: (vals[j], j))
        if not live:
            break
        B = np.stack([lead(j) for j in live], axis=1)  # rows x live, balls
        for j, column in zip(live, B.T):
            if all(b.contains(0) for b in column):
                return FrameProof("undecided", [], terms, N, reason=(
                    f"the leading coefficient of a frame column (order t^{vals[j]}) is not an exact zero but its "
                    "balls contain 0: a relation among the constants is missing, or a coefficient known only as "
                    "a ball cancels where balls cannot prove it"))
        free, coefficients = _first_dependency([[b.mid() for b in row] for row in B], digits)
        if free is None:
            break
        operations += 1
        if operations > limit:
            return FrameProof("undecided", [], terms, N, reason=f"the column reduction took more than {limit} steps",
                              operations=operations)
        f = live[free]
        multiples = []
        for c, x in coefficients.items():
            q = rationalize(x, digits)
            if q is None:
                return FrameProof("undecided", [], terms, N, operations=operations, reason=(
                    f"a column relation at order t^{vals[f]} has a coefficient that is not a small rational "
                    f"({x.mid().str(12, radius=False)}): no rational column operation raises it"))
            if q:
                multiples.append((live[c], q))
        candidate = column_operation(terms, vals, f, multiples)
        combined = _combine(J, candidate)
        v = _valuation(combined)
        if v <= vals[f]:
            return FrameProof("undecided", [], terms, N, operations=operations, reason=(
                f"a reconstructed column operation at order t^{vals[f]} does not raise the column's exact "
                "valuation (the numerical relation is not an exact one)"))
        terms[f], cols[f], vals[f] = candidate, combined, v
    finite = [j for j in range(k) if vals[j] < N]
    orders: list[int | None] = [vals[j] if vals[j] < N else None for j in range(k)]
    if finite:
        E = np.stack([lead(j) for j in finite], axis=1)
        certified, numerical = ball_minor_rank(E, digits, pivot_digits=digits)
    else:
        certified = numerical = 0
    say(f"frame: {len(finite)} columns of finite order (leading minor certified {certified}), "
        f"{k - len(finite)} vanish mod t^{N}, {operations} column operations")
    if certified < len(finite):
        return FrameProof("undecided", orders, terms, N, certified, operations=operations, reason=(
            f"the leading matrix E(0) of the {len(finite)} finite columns has a certified minor of size "
            f"{certified} only (numerical rank {numerical})"))
    return FrameProof("proved", orders, terms, N, certified, operations=operations)


def numerical_frame(J: np.ndarray, tolerance: int, max_operations: int | None = None) -> tuple[list[int], int] | None:
    """The orders of a column-reduced frame of ``J`` found numerically (never a certificate):
    ``J`` holds python-flint ``arb`` series coefficients (shape ``(N, rows, k)``), a coefficient
    counts as zero where every midpoint is at most ``10^-tolerance`` times the largest entry of
    ``J``, and the column operations ``col_f -= c t^(v_f - v_j) col_j`` take the *real* ``c`` of
    the least-squares dependency at the same tolerance (:func:`_first_dependency`), as
    :func:`prove_frame` does with rationals. Returns ``(finite orders sorted, columns vanishing
    mod t^N)``, or None where an operation does not raise its column's valuation (the tolerance
    does not separate the scales). Run it at the balls' precision.

    Parameters
    ----------
    J : numpy.ndarray
        ``arb`` series coefficients ``(N, rows, k)``.
    tolerance : int
        The zero tolerance's digits.
    max_operations : int, optional
        A cap on the column operations.

    Returns
    -------
    tuple or None
        ``(finite orders, columns vanishing mod t^N)``, or None (see above).

    Examples
    --------
    >>> import flint
    >>> r = flint.arb(2).sqrt()
    >>> J = np.array([[[1, r], [1, r]], [[0, 1], [1, 0]]], dtype=object)   # col 2 = sqrt 2 col 1 + t (1, -sqrt 2)
    >>> J = np.vectorize(flint.arb, otypes=[object])(J)
    >>> numerical_frame(J, 12)
    ([0, 1], 0)
    """
    N, rows, k = J.shape
    if k == 0:
        return [], 0
    scale = max((abs(float(b.mid())) for b in J.reshape(-1)), default=0.0) or 1.0
    floor = flint.arb(scale) * flint.arb(10) ** (-tolerance)
    cols = [J[:, :, j].copy() for j in range(k)]

    def valuation(col: np.ndarray) -> int:
        return _valuation(col, nonzero=lambda b: abs(b.mid()) > floor)

    vals = [valuation(c) for c in cols]
    limit = max_operations if max_operations is not None else 4 * k * N
    for _ in range(limit):
        live = sorted((j for j in range(k) if vals[j] < N), key=lambda j: (vals[j], j))
        if not live:
            break
        free, coefficients = _first_dependency([[cols[j][vals[j]][i].mid() for j in live] for i in range(rows)],
                                               2 * tolerance)
        if free is None:
            break
        f = live[free]
        new = cols[f].copy()
        for c, x in coefficients.items():
            j = live[c]
            shift = vals[f] - vals[j]
            new[shift:] = new[shift:] - cols[j][: N - shift] * x
        v = valuation(new)
        if v <= vals[f]:  # the relation is not one at this tolerance
            return None
        cols[f], vals[f] = new, v
    else:
        return None
    return sorted(v for v in vals if v < N), sum(1 for v in vals if v >= N)


def _first_dependency(M: list[list[Any]], digits: int) -> tuple[int | None, dict[int, Any]]:
    """The first column of ``M`` (rows of ``arb`` midpoints) that depends on the columns before it,
    and its coefficients on the independent earlier columns; ``(None, {})`` when the columns are
    independent. Least squares by the normal equations at twice ``digits`` (python-flint
    ``arb_mat``, approximate solve); a column depends when the residual is at most
    ``10^(-digits/2)`` times the largest entry."""
    rows, cols = len(M), len(M[0]) if M else 0
    scale = max((abs(float(v)) for row in M for v in row), default=0.0) or 1.0
    floor = flint.arb(scale) * flint.arb(10) ** (-(digits // 2))
    basis: list[int] = []
    with precision(digits_to_bits(2 * digits)):
        for j in range(cols):
            y = flint.arb_mat([[M[i][j]] for i in range(rows)])
            if basis:
                A = flint.arb_mat([[M[i][b] for b in basis] for i in range(rows)])
                At = A.transpose()
                x = (At * A).solve(At * y, algorithm="approx")
                r = y - A * x
                if all(abs(r[i, 0].mid()) <= floor for i in range(rows)):
                    return j, {basis[c]: x[c, 0] for c in range(len(basis))}
            elif all(abs(y[i, 0].mid()) <= floor for i in range(rows)):  # pragma: no cover - nonzero columns only
                return j, {}
            basis.append(j)
    return None, {}
