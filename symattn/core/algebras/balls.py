"""Ball arithmetic: NumPy object arrays of python-flint ``arb`` balls.

Every ball encloses the exact value of the computation it came from (at the
working precision, with rigorous error bounds), so a ball that excludes zero
certifies a nonzero number. python-flint's precision is process-wide: use
:meth:`BallAlgebra.working` around every evaluation.
"""

from __future__ import annotations

import contextlib
import functools
import math
import types
from fractions import Fraction
from typing import Any, Callable, Iterator

import flint
import numpy as np

from symattn.core.errors import SymattnError
from symattn.core.algebras.arrays import ArrayAlgebra

__all__ = ["BallAlgebra", "ball_function", "digits_to_bits", "precision", "to_arb"]


def digits_to_bits(digits: int) -> int:
    """Bits of working precision for ``digits`` decimal digits, plus 8 guard bits.

    >>> digits_to_bits(20)
    75
    """
    return int(math.ceil(digits * math.log2(10))) + 8


@contextlib.contextmanager
def precision(bits: int) -> Iterator[None]:
    """Set python-flint's process-wide precision for the block, then restore it.

    >>> with precision(100):
    ...     flint.ctx.prec
    100
    """
    old = flint.ctx.prec
    flint.ctx.prec = bits
    try:
        yield
    finally:
        flint.ctx.prec = old


def to_arb(value: Any) -> flint.arb:
    """A ball for ``value``: exact for binary64 and dyadic values, else rounded
    at python-flint's current precision.

    >>> to_arb(Fraction(1, 4))
    0.250000000000000
    """
    if isinstance(value, flint.arb):
        return value
    if isinstance(value, float):
        return flint.arb(value)
    q = Fraction(int(value.p), int(value.q)) if hasattr(value, "q") else Fraction(value)
    return flint.arb(flint.fmpq(q.numerator, q.denominator))


_ARB_FUNCTIONS = {name: (lambda n: lambda x: getattr(flint.arb(x), n)())(name)
                  for name in ("exp", "log", "sqrt", "sin", "cos", "tan", "sinh", "cosh",
                               "tanh", "atan", "erf")}


def _ipow(x: Any, n: int) -> Any:
    """``x ** n`` for an integer ``n`` by repeated multiplication: python-flint's ``arb ** int``
    goes through ``exp(n log x)`` and is NaN for a ball that contains 0."""
    n = int(n)
    out, base, e = flint.arb(1), x, abs(n)
    while e:
        if e & 1:
            out = out * base
        base, e = base * base, e >> 1
    return 1 / out if n < 0 else out


@functools.cache
def _ball_printing() -> tuple[Callable, type]:
    """``(integer_powers, printer)`` for :meth:`BallAlgebra.phi`, made on first use (sympy
    is imported only then): ``integer_powers(expr)`` writes every integer power ``b**n``
    as ``ipow(b, n)`` (see :func:`_ipow`), which ``printer`` (the mpmath printer) prints."""
    import sympy
    from sympy.printing.pycode import MpmathPrinter

    class _IntegerPower(sympy.Function):
        """``b**n`` with integer ``n``, kept unevaluated so it prints as ``ipow(b, n)``."""

        nargs = 2

    def integer_powers(expr: sympy.Expr) -> sympy.Expr:
        return expr.replace(lambda e: e.is_Pow and e.exp.is_Integer,
                            lambda e: _IntegerPower(e.base, e.exp))

    class _BallPrinter(MpmathPrinter):
        def _print__IntegerPower(self, e: sympy.Expr) -> str:
            return f"ipow({self._print(e.args[0])}, {int(e.args[1])})"

    return integer_powers, _BallPrinter


def ball_function(symbol: Any, expr: Any) -> Callable:
    """``expr`` (sympy, in ``symbol``) as a function of one ``arb`` ball (integer powers by
    repeated products, see :func:`_ipow`)."""
    import sympy

    integer_powers, printer = _ball_printing()
    namespace = types.SimpleNamespace(mpf=flint.arb, pi=flint.arb.pi(), **_ARB_FUNCTIONS)
    f = sympy.lambdify(symbol, integer_powers(expr), modules=[{"mpmath": namespace}, {"ipow": _ipow}],
                       printer=printer)
    return lambda v: flint.arb(f(v))


class BallAlgebra(ArrayAlgebra):
    """NumPy object arrays of python-flint ``arb`` balls at ``digits`` digits.

    Numbers are embedded exactly where they are dyadic (binary64 values) and
    rounded into balls otherwise. Use :meth:`working` around every evaluation:
    python-flint's precision is process-wide, and the context sets and
    restores it.

    Examples
    --------
    >>> from symattn.model.normalizer import Normalizer
    >>> A = BallAlgebra(30)
    >>> with A.working():
    ...     x = A.phi(A.const([1]), Normalizer("exp"))[0]
    >>> x.mid().str(20, radius=False)
    '2.7182818284590452354'
    """

    exactness = "certified"

    def __init__(self, digits: int = 50):
        self.digits = int(digits)
        self.bits = digits_to_bits(self.digits)
        self._functions: dict = {}

    def working(self) -> contextlib.AbstractContextManager:
        """Context manager setting python-flint's precision to this algebra's."""
        return precision(self.bits)

    def embed(self, value: Any) -> flint.arb:
        return to_arb(value)

    def reciprocal(self, x):
        return np.vectorize(lambda v: 1 / v, otypes=[object])(x)

    def phi(self, x, normalizer, derivative: int = 0, layer: int = 0):
        key = (normalizer, derivative)
        if key not in self._functions:
            self._functions[key] = ball_function(normalizer.s, normalizer.derivative_expr(derivative))
        f = self._functions[key]
        try:
            return np.vectorize(f, otypes=[object])(x)
        except AttributeError as exc:
            raise SymattnError(f"the normalizer {normalizer.expr} uses a function ball arithmetic "
                               f"does not provide ({exc}); use algebra MPMath") from None

    def fn(self, x, function, derivative: int = 0):
        return function.numeric(x, derivative, "arb")


