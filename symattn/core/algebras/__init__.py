"""The algebras a network graph is evaluated in (one module each).

========================  =========================================  ============
algebra                   element                                    exactness
========================  =========================================  ============
:class:`Symbolic`         sympy or symengine expressions             exact
:func:`exact_series`      truncated series over Q (python-flint)     exact
:func:`modular_series`    truncated series over F_p (int64 NumPy)    exact mod p
:class:`Tangent`          forward-mode duals over any of these       as its base
:class:`BallAlgebra`      python-flint arb balls at N digits         certified
:class:`Float64Balls`     values in arb balls, tangents in binary64  certified
                          balls (vectorised)
:class:`MPMath`           mpmath numbers at N digits                 numerical
:class:`Float64`          binary64                                   numerical
:func:`float_series`      truncated series, float64 coefficients     numerical
:func:`mp_series`         truncated series, mpmath at N digits       numerical
========================  =========================================  ============

:class:`Symbolic` imports sympy and :class:`MPMath` imports mpmath only when
they are made, so that the exact and modular algebras load without them.
"""

from symattn.core.algebras.balls import BallAlgebra, Float64Balls
from symattn.core.algebras.base import Algebra
from symattn.core.algebras.float64 import Float64, FloatField, float_series
from symattn.core.algebras.modular import DEFAULT_PRIME, SECOND_PRIME, PrimeField, UnluckyPrime, modular_series
from symattn.core.algebras.multiprecision import MPMath
from symattn.core.algebras.mpseries import MPField, MPSeries, mp_series
from symattn.core.algebras.rational import Rationals, exact_series
from symattn.core.algebras.series import Field, SeriesAlgebra
from symattn.core.algebras.symbolic import Symbolic
from symattn.core.algebras.tangent import Dual, Tangent


def series_for(method: str, order: int) -> SeriesAlgebra:
    """Truncated series mod ``t^order`` for ``method``: ``"exact"`` (over Q) or
    ``"modular"`` (over F_p with the default prime :data:`DEFAULT_PRIME`).

    >>> series_for("modular", 3)
    SeriesAlgebra(GF(8388593), order=3)
    """
    if method == "exact":
        return exact_series(order)
    if method == "modular":
        return modular_series(order, DEFAULT_PRIME)
    from symattn.core.errors import SymattnError

    raise SymattnError(f"method must be 'exact' or 'modular', got {method!r}")


__all__ = [
    "Algebra", "BallAlgebra", "Dual", "Field", "Float64", "Float64Balls", "FloatField", "float_series", "MPMath", "MPField", "MPSeries", "mp_series",
    "DEFAULT_PRIME", "SECOND_PRIME", "PrimeField",
    "Rationals", "SeriesAlgebra", "Symbolic", "Tangent", "UnluckyPrime", "exact_series",
    "modular_series", "series_for",
]
