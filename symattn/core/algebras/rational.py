"""Exact truncated series over Q (python-flint ``fmpq`` coefficients)."""

from __future__ import annotations

from fractions import Fraction

import flint
import numpy as np

from symattn.core.algebras.series import Field, SeriesAlgebra

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

    def matmul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """``a @ b`` (batched) of fmpq arrays; when one operand is a single matrix
        (every batch axis of length one), one python-flint ``fmpq_mat`` product
        of the other's stacked rows instead of object arithmetic per entry.

        >>> F = Rationals()
        >>> a, b = F.convert(np.arange(12).reshape(3, 2, 2)), F.convert([[1, 2], [3, 4]])
        >>> bool((F.matmul(a, b) == np.matmul(a, b)).all() and (F.matmul(b, a) == np.matmul(b, a)).all())
        True
        """
        single = lambda x: x.ndim >= 2 and all(n == 1 for n in x.shape[:-2])  # noqa: E731
        if a.ndim < 2 or b.ndim < 2 or a.size < 64 or b.size < 64 or not (single(a) or single(b)):
            return np.matmul(a, b)
        shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1])
        if single(b):  # the rows of every matrix of a, times b
            rows, right = a.reshape(-1, a.shape[-1]), b.reshape(b.shape[-2:])
            return _fmpq_product(rows, right).reshape(shape)
        cols = np.swapaxes(b, -1, -2).reshape(-1, b.shape[-2])  # (a b)^T = b^T a^T
        left = a.reshape(a.shape[-2:])
        out = _fmpq_product(cols, left.T).reshape(shape[:-2] + (b.shape[-1], a.shape[-2]))
        return np.swapaxes(out, -1, -2)

    def inverse(self, x):
        out = np.empty(x.shape, dtype=object)
        for idx, v in np.ndenumerate(x):
            out[idx] = 1 / v
        return out


def _fmpq_product(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """The product of two 2-D fmpq object arrays by python-flint ``fmpq_mat``."""
    m, k = left.shape
    n = right.shape[1]
    product = flint.fmpq_mat(m, k, left.ravel().tolist()) * flint.fmpq_mat(k, n, right.ravel().tolist())
    return np.array(product.entries(), dtype=object).reshape(m, n)


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
