"""Elementwise functions of transformer blocks (LayerNorm's ``1/sqrt``, MLP activations).

An :class:`Elementwise` names one function ``f`` of one real variable: ``rsqrt``
(``x^(-1/2)``, LayerNorm), ``tanh``, ``sigmoid``, ``silu`` (``x sigmoid(x)``),
``gelu`` (``x Phi(x)``, the erf form), ``gelu_tanh`` (PyTorch's tanh
approximation), ``relu`` and ``poly`` (a polynomial with rational coefficients).
Every algebra applies it by ``algebra.fn(x, function, derivative)``; this module supplies what
they need (what analyses ask about an activation, its part answers: :mod:`~symattn.model.parts.activation`):

* :meth:`Elementwise.expr`: the sympy expression (the float64, mpmath and ball
  algebras evaluate its derivatives, :meth:`Elementwise.numeric`);
* :meth:`Elementwise.jets`: the exact Taylor coefficients ``f^(k)(c)/k!`` at the
  constant terms ``c`` of a series over Q or F_p, for the series algebra.

Exactness (what a series over Q or F_p can hold): a polynomial everywhere;
``tanh``, ``sigmoid`` and ``silu`` at ``c = 0`` (rational Taylor coefficients);
``rsqrt`` at a positive rational square over Q (the root is then rational; mod p the
sign of a square root is lost, so the modular series refuse it). Everywhere else the
coefficients are irrational (``tanh(c)`` for rational ``c != 0`` is transcendental by
Lindemann's theorem, GELU's involve ``1/sqrt(2 pi)``): the exact series raise
:class:`NotRational` (undecided, said as such) and the certified (balls) and
numerical tiers apply. ReLU is not analytic: exact analyses refuse it
(:class:`~symattn.core.errors.SymattnError`); the float tiers allow it.

>>> f = Elementwise("rsqrt")
>>> from symattn.core.algebras.rational import Rationals
>>> [str(v) for v in (row[0] for row in f.jets(Rationals(), Rationals().convert([4]), 3))]
['1/2', '-1/16', '3/256']
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from symattn.core.errors import SymattnError, Undecided

__all__ = ["Elementwise", "ACTIVATIONS", "NotRational", "activation"]

#: The MLP activations by name (``poly:c0,c1,...`` is a polynomial activation).
ACTIVATIONS = ("tanh", "gelu", "gelu_tanh", "silu", "sigmoid", "relu", "poly")

_NAMES = ACTIVATIONS + ("rsqrt",)


class NotRational(Undecided):
    """A series over Q or F_p would need an irrational Taylor coefficient."""


@dataclass(frozen=True)
class Elementwise:
    """One elementwise function (see the module docstring); ``coefficients`` of ``poly``."""

    name: str
    coefficients: tuple[Fraction, ...] = ()

    def __post_init__(self) -> None:
        if self.name not in _NAMES:
            raise SymattnError(f"unknown elementwise function {self.name!r}; known: {', '.join(_NAMES)}")
        if (self.name == "poly") != bool(self.coefficients):
            raise SymattnError("a polynomial activation needs its coefficients (poly:c0,c1,...), "
                               "and only poly has coefficients")
        object.__setattr__(self, "coefficients", tuple(Fraction(c) for c in self.coefficients))

    def __str__(self) -> str:
        if self.name != "poly":
            return self.name
        return "poly:" + ",".join(str(c) for c in self.coefficients)

    @property
    def analytic(self) -> bool:
        """Real analytic (every function but ReLU)."""
        return self.name != "relu"

    def expr(self, j: int = 0):
        """The ``j``-th derivative as a sympy expression in the symbol ``s``."""
        return _expr(self, j)

    # -- the float tiers ---------------------------------------------------------------
    def numeric(self, x: np.ndarray, j: int, backend: str, ctx: Any = None) -> np.ndarray:
        """``f^(j)`` at the entries of ``x``: ``backend`` ``"numpy"`` (float64), ``"mpmath"``
        (``ctx`` an mpmath context) or ``"arb"`` (python-flint balls)."""
        if self.name == "relu":
            if backend != "numpy":
                raise SymattnError("ReLU is not analytic; only the float64 tier evaluates it")
            x = np.asarray(x, dtype=np.float64)
            return np.maximum(x, 0.0) if j == 0 else (x > 0).astype(np.float64) if j == 1 else 0.0 * x
        f = _lambdified(self, j, backend, ctx)
        if backend == "numpy":
            x = np.asarray(x, dtype=np.float64)
            return np.asarray(f(x), dtype=np.float64) + np.zeros(x.shape)
        out = np.empty(np.shape(x), dtype=object)
        for idx, v in np.ndenumerate(np.asarray(x, dtype=object)):
            out[idx] = f(v)
        return out

    # -- the exact series ----------------------------------------------------------------
    def jets(self, field, c: np.ndarray, count: int) -> list[np.ndarray]:
        """``[f^(k)(c)/k! for k < count]`` as arrays of ``field`` (Q or F_p) of the shape of
        ``c``; raises :class:`NotRational` where a coefficient is irrational."""
        if not self.analytic:
            raise SymattnError("ReLU is not analytic: exact analyses refuse it (use the float64 tier)")
        if self.name == "poly":
            return _taylor_shift(field, self.coefficients, c, count)
        zero = bool(field.is_zero(c).all())
        if self.name == "rsqrt":
            return _rsqrt_jets(field, c, count)
        if not zero:
            raise NotRational(f"{self.name} of a series with a nonzero constant term has a transcendental "
                              f"Taylor coefficient ({self.name}(c), c != 0 rational); exact and modular series "
                              "cannot hold it: use the numerical tier (symattn spectrum --method numerical)")
        coeffs = _taylor_at_zero(self, count)
        return [np.broadcast_to(field.convert(q), c.shape).copy() for q in coeffs]


def activation(text: "str | Elementwise") -> Elementwise:
    """An activation from its name, or ``poly:c0,c1,...`` (rationals like ``1/2``).

    >>> activation("poly:0,1,1/2")
    Elementwise(name='poly', coefficients=(Fraction(0, 1), Fraction(1, 1), Fraction(1, 2)))
    >>> activation("swish")
    Traceback (most recent call last):
    ...
    symattn.core.errors.SymattnError: activation must be one of tanh, gelu, gelu_tanh, silu, sigmoid, relu, poly:c0,c1,..., got 'swish'
    """
    if isinstance(text, Elementwise):
        return text
    if not isinstance(text, str):
        raise SymattnError(f"activation must be a string, got {text!r}")
    if text.startswith("poly:"):
        parts = text[5:].split(",")
        if not 1 <= len(parts) <= 9:
            raise SymattnError("a polynomial activation has 1 to 9 coefficients")
        from symattn.core.parse import parse_rational  # range-checked before each is built

        coeffs = tuple(parse_rational(p, "a polynomial activation's coefficient") for p in parts)
        if all(q == 0 for q in coeffs):
            raise SymattnError("a polynomial activation must not be zero")
        return Elementwise("poly", coeffs)
    if text not in ACTIVATIONS or text == "poly":
        raise SymattnError(f"activation must be one of {', '.join(ACTIVATIONS[:-1])}, poly:c0,c1,..., got {text!r}")
    return Elementwise(text)


# -- helpers -----------------------------------------------------------------------------
@functools.cache
def _expr(f: Elementwise, j: int):
    import sympy

    s = sympy.Symbol("s")
    base = {
        "rsqrt": 1 / sympy.sqrt(s),
        "tanh": sympy.tanh(s),
        "sigmoid": 1 / (1 + sympy.exp(-s)),
        "silu": s / (1 + sympy.exp(-s)),
        "gelu": s * (1 + sympy.erf(s / sympy.sqrt(2))) / 2,
        "gelu_tanh": s * (1 + sympy.tanh(sympy.sqrt(2 / sympy.pi) * (s + sympy.Rational(44715, 10**6) * s**3))) / 2,
        "relu": sympy.Max(s, 0),
        "poly": sum((sympy.Rational(q.numerator, q.denominator) * s**k for k, q in enumerate(f.coefficients)),
                    sympy.Integer(0)),
    }[f.name]
    return sympy.diff(base, s, j) if j else base


def _lambdified(f: Elementwise, j: int, backend: str, ctx: Any):
    key = (f, j, backend, id(ctx))
    if key not in _LAMBDAS:
        import sympy

        s = sympy.Symbol("s")
        expr = f.expr(j)
        if backend == "numpy":
            fn = sympy.lambdify(s, expr, modules=[{"erf": np.vectorize(math.erf, otypes=[float])}, "numpy"])
        elif backend == "mpmath":
            from sympy.printing.pycode import MpmathPrinter

            fn = sympy.lambdify(s, expr, modules=[{"mpmath": ctx}], printer=MpmathPrinter)
        else:
            from symattn.core.algebras.balls import ball_function

            fn = ball_function(s, expr)
        _LAMBDAS[key] = (fn, ctx)  # ctx kept alive so that its id stays unique
    return _LAMBDAS[key][0]


_LAMBDAS: dict = {}


@functools.cache
def _taylor_at_zero(f: Elementwise, count: int) -> tuple[Fraction, ...]:
    import sympy

    s = sympy.Symbol("s")
    series = sympy.series(f.expr(), s, 0, count).removeO()
    out = []
    for k in range(count):
        q = sympy.Poly(series, s).coeff_monomial(s**k) if series != 0 else sympy.Integer(0)
        if not q.is_Rational:
            raise NotRational(f"{f.name} has the irrational Taylor coefficient {q} at 0; exact and modular "
                              "series cannot hold it: use the numerical tier (symattn spectrum --method numerical)")
        out.append(Fraction(int(q.p), int(q.q)))
    return tuple(out)


def _taylor_shift(field, coeffs: tuple[Fraction, ...], c: np.ndarray, count: int) -> list[np.ndarray]:
    """``a_k = sum_m binom(m, k) p_m c^(m - k)`` (the Taylor coefficients of ``p`` at ``c``)."""
    powers = [np.broadcast_to(field.convert(1), c.shape).copy()]
    for _ in range(len(coeffs)):
        powers.append(field.reduce(powers[-1] * c))
    out = []
    for k in range(count):
        acc = field.zeros(c.shape)
        for m in range(k, len(coeffs)):
            if coeffs[m]:
                acc = field.add(acc, field.reduce(powers[m - k] * field.convert(coeffs[m] * math.comb(m, k))[()]))
        out.append(acc)
    return out


def _rsqrt_jets(field, c: np.ndarray, count: int) -> list[np.ndarray]:
    """``r binom(-1/2, k) c^(-k)`` with ``r = c^(-1/2)`` rational (Q only)."""
    import flint

    if getattr(field, "p", None) is not None:
        raise NotRational("a square root mod p loses the sign of the real root: the modular series refuse "
                          "LayerNorm's 1/sqrt; use method exact (rational squares) or the numerical tier (symattn spectrum --method numerical)")
    r = np.empty(c.shape, dtype=object)
    for idx, v in np.ndenumerate(c):
        q = flint.fmpq(v)
        num, den = q.p, q.q
        if num <= 0 or not (num.is_square() and den.is_square()):
            raise NotRational(f"LayerNorm takes 1/sqrt of {q}, which is not the square of a rational: exact "
                              "series cannot hold it; use the numerical tier (symattn spectrum --method numerical) "
                              "or a bank whose variances plus eps are rational squares")
        r[idx] = flint.fmpq(den.isqrt(), num.isqrt())
    inv = field.inverse(c)
    out, power, binom = [], r, Fraction(1)
    for k in range(count):
        out.append(field.reduce(power * field.convert(binom)[()]))
        binom = binom * (Fraction(-1, 2) - k) / (k + 1)
        power = field.reduce(power * inv)
    return out
