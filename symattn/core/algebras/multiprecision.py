"""mpmath algebra at a chosen number of decimal digits (numerical at N digits)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from symattn.core.algebras.arrays import ArrayAlgebra

__all__ = ["MPMath"]


class MPMath(ArrayAlgebra):
    """Arrays of ``mpmath.mpf`` at ``digits`` decimal digits.

    The working precision is set on a private :class:`mpmath.mp` context copy
    for every operation that rounds, so the process-wide setting is untouched.

    Examples
    --------
    >>> import mpmath
    >>> from symattn.core.algebras import MPMath
    >>> from symattn.model.normalizer import Normalizer
    >>> A = MPMath(30)
    >>> x = A.phi(A.const([1]), Normalizer("exp"))[0]
    >>> mpmath.nstr(x, 20)
    '2.7182818284590452354'
    """

    exactness = "numerical"

    def __init__(self, digits: int = 50):
        import mpmath

        self.digits = int(digits)
        self.ctx = mpmath.mp.clone()
        self.ctx.dps = self.digits
        self._functions: dict = {}

    def embed(self, value):
        if isinstance(value, (int, Fraction)) or hasattr(value, "p"):
            q = Fraction(int(value.p), int(value.q)) if hasattr(value, "p") else Fraction(value)
            return self.ctx.mpf(q.numerator) / q.denominator
        return self.ctx.mpf(value)

    def _vec(self, f, x):
        out = np.empty(np.shape(x), dtype=object)
        for idx, v in np.ndenumerate(np.asarray(x, dtype=object)):
            out[idx] = f(v)
        return out

    def reciprocal(self, x):
        return self._vec(lambda v: 1 / v, x)

    def phi(self, x, normalizer, derivative: int = 0, layer: int = 0):
        key = (normalizer, derivative)
        if key not in self._functions:
            import sympy
            from sympy.printing.pycode import MpmathPrinter

            self._functions[key] = sympy.lambdify(
                normalizer.s, normalizer.derivative_expr(derivative),
                modules=[{"mpmath": self.ctx}], printer=MpmathPrinter)
        return self._vec(self._functions[key], x)

    def fn(self, x, function, derivative: int = 0):
        return function.numeric(x, derivative, "mpmath", self.ctx)
