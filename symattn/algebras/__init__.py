"""The algebras a network graph is evaluated in (one module each).

========================  =========================================  ============
algebra                   element                                    kind
========================  =========================================  ============
:class:`Symbolic`         sympy or symengine expressions             exact
:func:`exact_series`      truncated series over Q (python-flint)     exact
:func:`modular_series`    truncated series over F_p (int64 NumPy)    exact mod p
:class:`Tangent`          forward-mode duals over any of these       as its base
:class:`BallAlgebra`      python-flint arb balls at N digits         certified
:class:`MPMath`           mpmath numbers at N digits                 numerical
:class:`Float64`          binary64                                   numerical
:func:`float_series`      truncated series, float64 coefficients     numerical
========================  =========================================  ============
"""

from .balls import BallAlgebra
from .base import Algebra
from .float64 import Float64, FloatField, float_series
from .modular import P, P2, PrimeField, modular_series
from .multiprecision import MPMath
from .rational import Rationals, exact_series
from .series import Field, SeriesAlgebra
from .symbolic import Symbolic
from .tangent import Dual, Tangent, unit_tangents

__all__ = [
    "Algebra", "BallAlgebra", "Dual", "Field", "Float64", "FloatField", "float_series", "MPMath", "P", "P2", "PrimeField",
    "Rationals", "SeriesAlgebra", "Symbolic", "Tangent", "exact_series",
    "modular_series", "unit_tangents",
]
