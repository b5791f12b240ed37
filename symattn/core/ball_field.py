"""The field of real balls: matrices over it compute at one working precision.

:class:`Balls` is the field of python-flint ``arb`` balls at ``bits`` bits of
precision. A :class:`~symattn.core.linalg.Matrix` over it runs python-flint's
``arb_mat`` and ``acb_mat``; its answers are numerical (approximate eigen
solvers), while the rank certificates of :mod:`symattn.core.rank_certificate`
prove lower bounds on the rank of a matrix of balls.
"""

from __future__ import annotations

import contextlib
from typing import Any

import flint
import numpy as np

from symattn.core.algebras.balls import digits_to_bits, precision
from symattn.core.algebras.series import Field

__all__ = ["Balls"]


class Balls(Field):
    """Real balls (python-flint ``arb``) at ``bits`` bits of working precision.

    Every matrix operation over this field runs at that precision
    (:meth:`working`); numbers are embedded as balls (``arb`` midpoints are
    kept, their radii dropped, as the Gram-matrix computations of
    :mod:`symattn.analyses.numerics` need).

    >>> Balls.for_digits(20).bits
    75
    """

    dtype = object

    def __init__(self, bits: int):
        self.bits = int(bits)
        self.name = f"RR[{self.bits} bits]"

    @classmethod
    def for_digits(cls, digits: int) -> "Balls":
        """Balls at the precision of ``digits`` decimal digits (plus guard bits)."""
        return cls(digits_to_bits(digits))

    def working(self) -> contextlib.AbstractContextManager:
        """Context setting python-flint's process-wide precision to ``bits``."""
        return precision(self.bits)

    def convert(self, values: Any) -> np.ndarray:
        arr = np.asarray(values, dtype=object)
        out = np.empty(arr.shape, dtype=object)
        with self.working():
            for idx, v in np.ndenumerate(arr):
                out[idx] = v.mid() if isinstance(v, flint.arb) else flint.arb(v)
        return out
