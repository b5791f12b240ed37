"""Truncated series over F_p, vectorised with NumPy int64.

The default prime :data:`DEFAULT_PRIME` is below 2^23: a product of two residues is below
2^46, so 2^17 of them can be summed in int64 before a reduction is needed;
the series algebra reduces lazily, once per Cauchy product. Ranks and valuations
over F_p bound those over Q: a nonzero minor mod p is nonzero over Q, and a
valuation mod p is at least the valuation over Q (see :mod:`symattn.core.certify`).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from symattn.core.errors import SymattnError, UnluckyPrime  # noqa: F401  UnluckyPrime: raised here, importable from here
from symattn.core.algebras.series import Field, SeriesAlgebra

__all__ = ["PrimeField", "UnluckyPrime", "modular_series", "DEFAULT_PRIME", "SECOND_PRIME"]

#: Largest prime below 2^23 and the next one below it.
DEFAULT_PRIME = 8388593
SECOND_PRIME = 8388587


class PrimeField(Field):
    """F_p for a prime ``p < 2^23`` in int64 arrays."""

    dtype = np.int64
    capacity = 2**17 - 1

    def __init__(self, p: int = DEFAULT_PRIME):
        if not 2 < p < 2**23:
            raise SymattnError(f"modular series need a prime 2 < p < 2^23, got {p}")
        self.p = int(p)
        self.name = f"GF({p})"

    def convert(self, values):
        arr = np.asarray(values)
        if arr.dtype.kind in "iub":
            return np.mod(arr.astype(np.int64), self.p)
        arr = arr.astype(object)
        out = np.zeros(arr.shape, dtype=np.int64)
        flat, res = arr.reshape(-1), out.reshape(-1)
        nz = np.flatnonzero(flat != 0)  # zeros (most entries of a direction) stay 0
        if len(nz):
            parts = [self._fraction(v) for v in flat[nz]]
            inverses: dict[int, int] = {}  # the few distinct denominators, inverted once each
            for n, d in parts:
                if d not in inverses:
                    if d % self.p == 0:
                        raise UnluckyPrime(f"the rational {n}/{d} has a denominator divisible by "
                                           f"p = {self.p}; choose another prime")
                    inverses[d] = pow(d, -1, self.p)
            res[nz] = [n * inverses[d] % self.p for n, d in parts]
        return out

    @staticmethod
    def _fraction(v) -> tuple[int, int]:
        """Numerator and denominator of an int, Fraction, fmpq or sympy Rational."""
        if isinstance(v, (int, np.integer)):
            return int(v), 1
        if hasattr(v, "p") and hasattr(v, "q") and not isinstance(v, float):
            return int(v.p), int(v.q)
        q = Fraction(v) if not isinstance(v, Fraction) else v
        return q.numerator, q.denominator

    def reduce(self, x):
        """``x mod p`` in ``[0, p)`` as ``x - floor(x / p) p`` (NumPy divides int64 arrays by
        a scalar about twice as fast as it takes their remainder)."""
        x = np.asarray(x)
        q = x // self.p
        q *= self.p
        return x - q

    def add(self, x, y):
        """``x + y`` of residues in ``[0, p)``: one conditional subtraction, no division."""
        r = np.add(x, y)
        r -= self.p
        r += (r >> 63) & self.p
        return r

    def sub(self, x, y):
        """``x - y`` of residues in ``[0, p)``: one conditional addition, no division."""
        r = np.subtract(x, y)
        r += (r >> 63) & self.p
        return r

    def inverse(self, x):
        if (x % self.p == 0).any():
            raise SymattnError("inverse of zero mod p")
        result = np.ones_like(x)
        base = x % self.p
        e = self.p - 2
        while e:
            if e & 1:
                result = result * base % self.p
            base = base * base % self.p
            e >>= 1
        return result


def modular_series(order: int, p: int = DEFAULT_PRIME) -> SeriesAlgebra:
    """Series over F_p truncated mod ``t^order``.

    Examples
    --------
    >>> A = modular_series(3, p=7)
    >>> x = A.series([[1], [1]])                  # 1 + t
    >>> A.reciprocal(x)[:, 0].tolist()            # 1 - t + t^2 mod 7
    [1, 6, 1]
    """
    return SeriesAlgebra(PrimeField(p), order)
