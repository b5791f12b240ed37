"""Coq literals for exported data: rationals, integer matrices, series, normalizers.

Only data is ever written: numbers computed by symattn, printed as Coq terms of
the standard library (``Q`` as ``a # b``, integers in ``Z``) or of the theory
in ``coq/theories`` (``exp_taylor M`` and friends). Nothing here decides a
claim.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Iterable, Sequence

import sympy

from symattn.core.errors import SymattnError
from symattn.model.normalizer import Normalizer

__all__ = ["q", "qvec", "qmat", "qseries", "zmat", "nat_list", "normalizer_term", "fraction"]


def fraction(v: Any) -> Fraction:
    """An exact rational from an int, Fraction, python-flint ``fmpq``/``fmpz`` or sympy Rational.

    >>> fraction(3), fraction(Fraction(-1, 2))
    (Fraction(3, 1), Fraction(-1, 2))
    """
    if isinstance(v, Fraction):
        return v
    if isinstance(v, int):
        return Fraction(v)
    if hasattr(v, "p") and hasattr(v, "q") and not isinstance(v, float):
        return Fraction(int(v.p), int(v.q))
    if isinstance(v, float):
        raise SymattnError(f"float {v!r} in exported data: every exported number must be exact")
    return Fraction(int(v))


def q(v: Any) -> str:
    """A rational as a Coq ``Q`` literal (in ``Q_scope``).

    >>> q(0), q(Fraction(-3, 4)), q(5)
    ('0', '(-3#4)', '(5#1)')
    """
    f = fraction(v)
    if f == 0:
        return "0"
    return f"({f.numerator}#{f.denominator})"


def qvec(vs: Iterable[Any]) -> str:
    """A list of rationals.

    >>> qvec([1, Fraction(1, 2)])
    '[(1#1); (1#2)]'
    """
    return "[" + "; ".join(q(v) for v in vs) + "]"


def qmat(rows: Iterable[Iterable[Any]]) -> str:
    """A rational matrix, row by row.

    >>> qmat([[1, 0], [0, 1]])
    '[[(1#1); 0]; [0; (1#1)]]'
    """
    return "[" + "; ".join(qvec(r) for r in rows) + "]"


def qseries(coeffs: Sequence[Any]) -> str:
    """A rational series (trailing zero coefficients dropped; ``[]`` is zero).

    >>> qseries([0, 2, 0]), qseries([0, 0])
    ('[0; (2#1)]', '[]')
    """
    c = [fraction(v) for v in coeffs]
    while c and c[-1] == 0:
        c.pop()
    return qvec(c)


def zmat(rows: Iterable[Iterable[int]]) -> str:
    """An integer matrix in ``Z`` (scope ``%Z``).

    >>> zmat([[1, -2], [3, 0]])
    '([[1; -2]; [3; 0]])%Z'
    """
    return "([" + "; ".join("[" + "; ".join(str(int(x)) for x in r) + "]" for r in rows) + "])%Z"


def nat_list(xs: Iterable[int]) -> str:
    """A list of natural numbers (scope ``%nat``).

    >>> nat_list([0, 5, 17])
    '([0; 5; 17])%nat'
    """
    return "([" + "; ".join(str(int(x)) for x in xs) + "])%nat"


def _polynomial(phi: Normalizer) -> list[Fraction] | None:
    """The coefficients of ``phi`` when it is a polynomial in ``s`` with rational coefficients."""
    try:
        expr = phi.expr
        poly = sympy.Poly(sympy.expand(expr), phi.s)
    except (sympy.PolynomialError, sympy.GeneratorsNeeded, SymattnError):
        return None
    coeffs = list(reversed(poly.all_coeffs()))
    if not all(c.is_Rational for c in coeffs):
        return None
    return [Fraction(int(c.p), int(c.q)) for c in coeffs]


def normalizer_term(phi: Normalizer, order: int) -> tuple[str, str]:
    """The Coq term of ``phi``'s Taylor coefficients to ``order`` and how Coq knows them.

    ``exp``, ``cosh`` and ``gauss`` (``exp(s^2)``) are computed by Coq itself
    (``exp_taylor``, ``cosh_taylor``, ``gauss_taylor`` in ``Jacobian.v``), a
    polynomial is its own coefficient list; anything else is exported as the
    coefficients python-flint computed (``data_taylor``: checked data, not
    derived by Coq).

    >>> normalizer_term(Normalizer("exp"), 18)
    ('exp_taylor 18', 'computed by Coq')
    >>> normalizer_term(Normalizer("1+s^2"), 4)[0]
    'poly_taylor 4 [(1#1); 0; (1#1)]'
    """
    key = phi.name.replace(" ", "")
    if key in ("exp", "exp(s)"):
        return f"exp_taylor {order}", "computed by Coq"
    if key in ("cosh", "cosh(s)"):
        return f"cosh_taylor {order}", "computed by Coq"
    if key in ("gauss", "exp(s^2)", "exp(s**2)"):
        return f"gauss_taylor {order}", "computed by Coq"
    poly = _polynomial(phi)
    if poly is not None:
        return f"poly_taylor {order} {qvec(poly)}", "a polynomial (its own coefficients)"
    coeffs = phi.rational_phi_taylor(order - 1)
    return f"data_taylor {qvec(coeffs)}", "data (Taylor coefficients from python-flint, not derived by Coq)"
