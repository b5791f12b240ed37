"""Hypothesis strategies for property tests about attention.

Draw the objects the paper quantifies over, with exact rational data so that
every property can be checked exactly with :mod:`symattn.testing.assertions`:

* :func:`rationals`: small fractions;
* :func:`rational_matrices`: ``rows x cols`` rational matrices of a given exact rank;
* :func:`skew_matrices`, :func:`symmetric_matrices`: nonzero by default;
* :func:`normalizers`: :class:`~symattn.model.normalizer.Normalizer`\\ s with rational
  Taylor data, ``phi = 1 + sum_j c_j s^j`` or ``phi = exp(sum_j c_j s^j)``;
* :func:`architectures`: uniform architectures (equal widths, as Theorem 4 needs);
* :func:`banks`: input banks for an architecture, shape ``(size, d, n)``.

Matrices are numpy object arrays of :class:`fractions.Fraction`, the form the
rest of symattn takes. This module needs hypothesis (``pip install
'symattn[test]'``).

Examples
--------
>>> from hypothesis import given
>>> from symattn.core.linalg import Matrix
>>> @given(rational_matrices(3, 3, rank=2))
... def test_rank(A):
...     assert Matrix.rational(A).rank() == 2
>>> test_rank()
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np
import sympy

try:
    from hypothesis import strategies as st
except ImportError as exc:  # pragma: no cover - hypothesis is in the test extra
    raise ImportError("symattn.testing.strategies needs hypothesis: pip install 'symattn[test]'") from exc

from symattn.core.linalg import Matrix
from symattn.model.architecture import Architecture
from symattn.model.normalizer import S, Normalizer

__all__ = [
    "architectures",
    "banks",
    "normalizers",
    "rational_matrices",
    "rationals",
    "skew_matrices",
    "symmetric_matrices",
]


def rationals(max_numerator: int = 4, max_denominator: int = 4, nonzero: bool = False) -> st.SearchStrategy[Fraction]:
    """Fractions ``a/b`` with ``|a| <= max_numerator``, ``1 <= b <= max_denominator``.

    >>> from hypothesis import find
    >>> find(rationals(nonzero=True), lambda q: q < -1)
    Fraction(-2, 1)
    """
    low = 1 if nonzero else 0
    magnitude = st.integers(low, max_numerator)
    return st.builds(lambda a, sign, b: Fraction(sign * a, b), magnitude, st.sampled_from((1, -1)),
                     st.integers(1, max_denominator))


def _matrix(entries: list[Fraction], rows: int, cols: int) -> np.ndarray:
    return np.array(entries, dtype=object).reshape(rows, cols)


def rational_matrices(rows: int, cols: int, rank: int | None = None) -> st.SearchStrategy[np.ndarray]:
    """``rows x cols`` rational matrices, of exact rank ``rank`` when given.

    A matrix of rank ``r`` is drawn as a product ``A B`` of ``rows x r`` and
    ``r x cols`` factors, kept when its exact rank is ``r``.

    >>> from hypothesis import find
    >>> find(rational_matrices(2, 2, rank=1), lambda A: True).shape
    (2, 2)
    """
    if rank is None:
        return st.lists(rationals(), min_size=rows * cols, max_size=rows * cols).map(
            lambda e: _matrix(e, rows, cols))
    if not 0 <= rank <= min(rows, cols):
        raise ValueError(f"rank {rank} is impossible for a {rows} x {cols} matrix")
    if rank == 0:
        return st.just(np.full((rows, cols), Fraction(0), dtype=object))
    left = st.lists(rationals(), min_size=rows * rank, max_size=rows * rank).map(lambda e: _matrix(e, rows, rank))
    right = st.lists(rationals(), min_size=rank * cols, max_size=rank * cols).map(lambda e: _matrix(e, rank, cols))
    return st.builds(np.dot, left, right).filter(lambda A: Matrix.rational(A).rank() == rank)


def skew_matrices(d: int, nonzero: bool = True) -> st.SearchStrategy[np.ndarray]:
    """``d x d`` skew-symmetric rational matrices (``M^T = -M``), nonzero by default.

    >>> from hypothesis import find
    >>> J = find(skew_matrices(2), lambda M: True)
    >>> bool((J.T == -J).all()), bool((J != 0).any())
    (True, True)
    """
    size = d * (d - 1) // 2

    def build(upper: list[Fraction]) -> np.ndarray:
        M = np.full((d, d), Fraction(0), dtype=object)
        for value, (i, j) in zip(upper, [(i, j) for i in range(d) for j in range(i + 1, d)]):
            M[i, j], M[j, i] = value, -value
        return M

    drawn = st.lists(rationals(), min_size=size, max_size=size).map(build)
    return drawn.filter(lambda M: (M != 0).any()) if nonzero else drawn


def symmetric_matrices(d: int, nonzero: bool = True) -> st.SearchStrategy[np.ndarray]:
    """``d x d`` symmetric rational matrices, nonzero by default.

    >>> from hypothesis import find
    >>> M = find(symmetric_matrices(3), lambda M: True)
    >>> bool((M.T == M).all()), bool((M != 0).any())
    (True, True)
    """
    drawn = rational_matrices(d, d).map(lambda A: (A + A.T) / 2)
    return drawn.filter(lambda M: (M != 0).any()) if nonzero else drawn


def normalizers(max_degree: int = 4, forms: Sequence[str] = ("polynomial", "exp")) -> st.SearchStrategy[Normalizer]:
    """Normalizers with rational Taylor data: ``1 + sum c_j s^j`` or ``exp(sum c_j s^j)``.

    The coefficients ``c_1..c_max_degree`` are small rationals, not all zero,
    so ``phi(0) = 1`` and ``phi`` is nonconstant; ``k``, ``b``, parity and the
    slopes then vary with the draw.

    >>> from hypothesis import find
    >>> find(normalizers(), lambda phi: phi.k == 2).k
    2
    """
    unknown = set(forms) - {"polynomial", "exp"}
    if unknown or not forms:
        raise ValueError(f"forms must be among 'polynomial', 'exp', not {sorted(unknown)}")
    coefficients = st.lists(rationals(max_numerator=2, max_denominator=3), min_size=max_degree,
                            max_size=max_degree).filter(any)

    def build(form: str, c: list[Fraction]) -> Normalizer:
        poly = sum((sympy.Rational(q.numerator, q.denominator) * S ** j for j, q in enumerate(c, 1)),
                   sympy.Integer(0))
        return Normalizer(1 + poly if form == "polynomial" else sympy.exp(poly))

    return st.builds(build, st.sampled_from(tuple(forms)), coefficients)


def architectures(max_depth: int = 3, max_width: int = 3, max_tokens: int = 3,
                  normalizer: st.SearchStrategy | None = None) -> st.SearchStrategy[Architecture]:
    """Uniform architectures: depth ``1..max_depth``, width ``d``, ranks ``1..d``, ``n >= 2`` tokens.

    ``normalizer`` draws each layer's normalizer (default: the catalogue names).

    >>> from hypothesis import find
    >>> find(architectures(), lambda a: a.depth == 2).depth
    2
    """
    from symattn.model.normalizer import CATALOGUE

    phi = normalizer if normalizer is not None else st.sampled_from(sorted(CATALOGUE))

    @st.composite
    def draw(draw_one) -> Architecture:
        depth = draw_one(st.integers(1, max_depth))
        d = draw_one(st.integers(1, max_width))
        ranks = [draw_one(st.integers(1, d)) for _ in range(depth)]
        tokens = draw_one(st.integers(2, max_tokens))
        return Architecture.uniform(depth, d, ranks, tokens, [draw_one(phi) for _ in range(depth)])

    return draw()


def banks(arch: Architecture, min_size: int = 1, max_size: int = 4) -> st.SearchStrategy[np.ndarray]:
    """Banks of rational inputs for ``arch``: arrays ``(size, d_0, n)``.

    >>> from hypothesis import find
    >>> find(banks(Architecture.uniform(1, 2, 1, 3, "exp")), lambda B: True).shape
    (1, 2, 3)
    """
    d, n = arch.widths[0], arch.tokens
    return st.integers(min_size, max_size).flatmap(
        lambda size: st.lists(rationals(), min_size=size * d * n, max_size=size * d * n).map(
            lambda e: np.array(e, dtype=object).reshape(size, d, n)))
