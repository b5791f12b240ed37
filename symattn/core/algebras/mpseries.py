"""Truncated power series with mpmath coefficients at ``digits`` digits (numerical).

:func:`mp_series` is a :class:`~symattn.core.algebras.series.SeriesAlgebra` over
:class:`MPField` (``mpmath.mpf`` numbers of a private context at ``digits`` decimal
digits), for the tiers the exact and modular series cannot serve: where a normalizer is
applied to a series with a *nonzero* constant term (scores that do not vanish at the
expansion point: biases, LayerNorm output, an MLP before the layer) and where an
elementwise function has irrational Taylor coefficients at that point (``tanh(c)``,
GELU, LayerNorm's ``1/sqrt`` of a non-square). Both are expanded around the actual
constant term ``c`` of their argument, ``f(c + y) = sum_k f^(k)(c)/k! y^k`` with ``y``
of positive valuation, the derivatives ``f^(k)(c)`` evaluated by mpmath from their sympy
expressions (:meth:`~symattn.model.normalizer.Normalizer.derivative_expr`,
:meth:`~symattn.core.algebras.functions.Elementwise.numeric`). Where every constant term
is zero the normalizer's exact rational Taylor coefficients are used, rounded to
``digits`` digits.

Everything computed here is numerical at ``digits`` digits: no error bound is carried
(the ball algebra, :class:`~symattn.core.algebras.BallAlgebra`, does that for plain
evaluations).
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Any

import numpy as np

from symattn.core.algebras.series import Field, SeriesAlgebra, numeric_jets, polynomial
from symattn.core.errors import SymattnError

__all__ = ["MPField", "MPSeries", "mp_series"]


@functools.cache
def _context(digits: int) -> Any:
    """One private mpmath context per precision (shared, so that lambdified functions
    keyed by it are made once)."""
    import mpmath

    ctx = mpmath.mp.clone()
    ctx.dps = digits
    return ctx


class MPField(Field):
    """Real numbers as ``mpf`` of a private mpmath context at ``digits`` digits.

    >>> F = MPField(30)
    >>> [F.ctx.nstr(v, 20) for v in F.convert([Fraction(1, 3), 2])]
    ['0.33333333333333333333', '2.0']
    """

    dtype = object

    def __init__(self, digits: int = 300) -> None:
        if not isinstance(digits, int) or isinstance(digits, bool) or not 15 <= digits <= 2000:
            raise SymattnError(f"digits must be an integer in [15, 2000], got {digits!r}")
        self.digits = digits
        self.ctx = _context(digits)
        self.name = f"mpf{digits}"
        self._zero = self.ctx.mpf(0)
        self._phi: dict = {}

    def embed(self, v: Any) -> Any:
        """One number (int, Fraction, flint ``fmpq``, sympy Rational, float, mpf) as an mpf."""
        ctx = self.ctx
        if isinstance(v, ctx.mpf):
            return v
        if isinstance(v, (bool, np.bool_)):
            return ctx.mpf(int(v))
        if isinstance(v, (int, np.integer)):
            return ctx.mpf(int(v))
        if isinstance(v, float):
            return ctx.mpf(v)
        if hasattr(v, "p") and hasattr(v, "q"):  # flint fmpq, sympy Rational
            return ctx.mpf(int(v.p)) / int(v.q)
        if isinstance(v, Fraction):
            return ctx.mpf(v.numerator) / v.denominator
        return ctx.mpf(v)  # another mpf (of another context): rounded to this one

    def convert(self, values: Any) -> np.ndarray:
        arr = np.asarray(values, dtype=object)
        out = np.full(arr.shape, self._zero, dtype=object)
        for idx, v in np.ndenumerate(arr):
            if v != 0:
                out[idx] = self.embed(v)
        return out

    def inverse(self, x: np.ndarray) -> np.ndarray:
        out = np.empty(x.shape, dtype=object)
        for idx, v in np.ndenumerate(x):
            out[idx] = 1 / v
        return out

    def is_zero(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(x == 0, dtype=bool)

    def jets(self, function: Any, c: np.ndarray, count: int) -> list[np.ndarray]:
        """``[f^(k)(c)/k! for k < count]`` of an elementwise function at the entries of ``c``
        (numerical; :meth:`~symattn.core.algebras.functions.Elementwise.numeric`)."""
        return numeric_jets(self, function, c, count, "mpmath", self.ctx)

    def phi_jets(self, normalizer: Any, c: np.ndarray, derivative: int, count: int) -> list[np.ndarray]:
        """``[phi^(derivative + k)(c)/k! for k < count]`` at the entries of ``c`` (numerical)."""
        import sympy
        from sympy.printing.pycode import MpmathPrinter

        out = []
        for k in range(count):
            j = derivative + k
            key = (normalizer, j)
            if key not in self._phi:
                self._phi[key] = sympy.lambdify(normalizer.s, normalizer.derivative_expr(j),
                                                modules=[{"mpmath": self.ctx}], printer=MpmathPrinter)
            f = self._phi[key]
            vals = np.empty(c.shape, dtype=object)
            for idx, v in np.ndenumerate(c):
                vals[idx] = self.ctx.mpf(f(v)) / math.factorial(k)
            out.append(vals)
        return out


class MPSeries(SeriesAlgebra):
    """:class:`SeriesAlgebra` over :class:`MPField`: normalizers expanded around the
    actual constant term of their argument (see the module docstring).

    >>> from symattn.model.normalizer import Normalizer
    >>> A = mp_series(3, 30)
    >>> x = A.series([[1], [1]])                     # 1 + t
    >>> [A.field.ctx.nstr(c[0], 10) for c in A.phi(x, Normalizer("exp"))]   # e (1 + t + t^2/2)
    ['2.718281828', '2.718281828', '1.359140914']
    """

    exactness = "numerical"
    field: MPField

    def __init__(self, field: MPField, order: int) -> None:
        super().__init__(field, order)

    def __repr__(self) -> str:
        return f"MPSeries({self.field.digits} digits, order={self.order})"

    @property
    def digits(self) -> int:
        """The working precision in decimal digits."""
        return self.field.digits

    def with_order(self, order: int) -> "MPSeries":
        return MPSeries(self.field, order)

    def phi(self, x, normalizer, derivative: int = 0, layer: int = 0):
        """``phi^(derivative)(c + y) = sum_k phi^(derivative + k)(c)/k! y^k``: around score 0
        by the normalizer's rational Taylor coefficients (rounded), elsewhere numerically."""
        c = x[0]
        if self.field.is_zero(c).all():
            v = int(self.valuation(x).min()) if x.size else self.order
            top = (self.order - 1) // v if v < self.order else 0
            try:
                coeffs = normalizer.rational_phi_derivative_taylor(top, derivative)
            except SymattnError:  # an irrational Taylor coefficient at 0: evaluated numerically
                coeffs = None
            if coeffs is not None:
                return self.add(self.zeros(self.shape(x)), polynomial(self, coeffs, x))
        y = self.sub(x, self.const_array(c))
        v = int(self.valuation(y).min()) if y.size else self.order
        top = 0 if v >= self.order else (self.order - 1) // v
        jets = self.field.phi_jets(normalizer, c, derivative, top + 1)
        result = self.const_array(jets[top])
        for k in range(top - 1, -1, -1):
            result = self.add(self.mul(y, result), self.const_array(jets[k]))
        return result


def mp_series(order: int, digits: int = 300) -> MPSeries:
    """Series with mpmath coefficients at ``digits`` digits, truncated mod ``t^order`` (numerical).

    >>> A = mp_series(3, 20)
    >>> [A.field.ctx.nstr(c[0], 8) for c in A.reciprocal(A.series([[3], [1]]))]   # 1/(3 + t)
    ['0.33333333', '-0.11111111', '0.037037037']
    """
    return MPSeries(MPField(digits), order)
