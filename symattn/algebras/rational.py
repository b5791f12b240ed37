"""Exact truncated series over Q (python-flint ``fmpq`` coefficients)."""

from __future__ import annotations

from fractions import Fraction

import flint
import numpy as np

from .series import Field, SeriesAlgebra

__all__ = ["Rationals", "exact_series", "to_fmpq"]


def to_fmpq(v) -> flint.fmpq:
    """An exact ``flint.fmpq`` for an int, Fraction, sympy Rational or binary64 float."""
    if isinstance(v, flint.fmpq):
        return v
    if hasattr(v, "p") and hasattr(v, "q"):  # sympy Rational
        return flint.fmpq(int(v.p), int(v.q))
    if isinstance(v, float):
        q = Fraction(v)  # binary64 values are exact dyadic rationals
    else:
        q = Fraction(v)
    return flint.fmpq(q.numerator, q.denominator)


class Rationals(Field):
    """The field Q, elements ``flint.fmpq`` in object arrays."""

    name = "QQ"
    dtype = object

    def convert(self, values):
        arr = np.asarray(values, dtype=object)
        out = np.full(arr.shape, flint.fmpq(0), dtype=object)  # fmpq is immutable: one shared zero
        flat, res = arr.reshape(-1), out.reshape(-1)
        for i in np.flatnonzero(flat != 0):
            res[i] = to_fmpq(flat[i])
        return out

    def inverse(self, x):
        out = np.empty(x.shape, dtype=object)
        for idx, v in np.ndenumerate(x):
            out[idx] = 1 / v
        return out


def exact_series(order: int) -> SeriesAlgebra:
    """Series over Q truncated mod ``t^order``.

    Examples
    --------
    >>> A = exact_series(4)
    >>> x = A.series([[0], [1]])            # the tensor (t,)
    >>> one_minus = A.sub(A.const([1]), x)   # 1 - t
    >>> [str(c[0]) for c in A.reciprocal(one_minus)]
    ['1', '1', '1', '1']
    """
    return SeriesAlgebra(Rationals(), order)
