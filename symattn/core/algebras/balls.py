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

from symattn.core.errors import InternalError, SymattnError, Undecided
from symattn.core.algebras.arrays import ArrayAlgebra
from symattn.core.algebras.base import Algebra

__all__ = ["BallAlgebra", "Float64Balls", "Precise", "ReluUndecided", "ball_function", "digits_to_bits", "gamma",
           "floating_point_undecided", "precision", "relu_balls", "to_arb"]


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


class _ArbNamespace(types.SimpleNamespace):
    """The ``mpmath`` module of a lambdified ball function: python-flint's functions, and ``pi``
    made at each call at the precision then in force (a ``pi`` made once would keep the
    precision of the first call: a 30-digit pi in every later 300-digit GELU derivative)."""

    @property
    def pi(self) -> Any:
        return flint.arb.pi()


def ball_function(symbol: Any, expr: Any) -> Callable:
    """``expr`` (sympy, in ``symbol``) as a function of one ``arb`` ball (integer powers by
    repeated products, see :func:`_ipow`)."""
    import sympy

    integer_powers, printer = _ball_printing()
    namespace = _ArbNamespace(mpf=flint.arb, **_ARB_FUNCTIONS)
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
        if function.name == "relu":  # exact where every ball's sign is certain (relu_balls)
            return relu_balls(x, derivative)
        return function.numeric(x, derivative, "arb")




# -- binary64 balls, vectorised ------------------------------------------------------------
#: The unit roundoff of binary64 (round to nearest).
U = 2.0 ** -53
#: The smallest positive binary64 number: a rounding error of a product that underflows is at most
#: ``ETA / 2`` (sums that underflow are exact).
ETA = 2.0 ** -1074
#: The smallest normal binary64 number, ``2^52 ETA``: added to every radius, it covers the underflow
#: errors of the radius's own computation (at most a few ``ETA``; see :class:`Float64Balls`).
TINY = 2.0 ** -1022
#: The factor every computed radius is multiplied by (itself rounded): a radius computed with at most
#: :data:`ROUNDINGS` roundings of nonnegative numbers is at least ``(1 - U)^ROUNDINGS`` of its exact
#: value, and ``(1 - U)^(ROUNDINGS + 1) INFLATE > 1``.
INFLATE = 1.0 + 2.0 ** -48
ROUNDINGS = 15


class ReluUndecided(Undecided):
    """A ball of a ReLU pre-activation contains 0: its sign, hence the unit's derivative, is
    undecided (the network need not be differentiable there). Narrow on purpose: the audit
    catches it to leave that probe input out, and says so."""


def relu_balls(x: np.ndarray, derivative: int) -> np.ndarray:
    """ReLU (``derivative`` 0) or its derivative (1) of an object array of ``arb`` balls, exact
    where every ball lies above or below 0 (``x`` or ``0``, ``1`` or ``0``); raises
    :class:`ReluUndecided` where a ball contains 0.

    >>> [str(v) for v in relu_balls(np.array([flint.arb(2), flint.arb(-1)], dtype=object), 0)]
    ['2.00000000000000', '0']
    """
    out = np.empty(np.shape(x), dtype=object)
    for idx, v in np.ndenumerate(np.asarray(x, dtype=object)):
        if not (v > 0 or v < 0):  # arb comparisons are true only when certain
            raise ReluUndecided("a ReLU pre-activation's ball contains 0 (its sign, the unit's derivative, is "
                                "not certified at this input)")
        up = bool(v > 0)
        out[idx] = (v if up else flint.arb(0)) if derivative == 0 else flint.arb(int(up) if derivative == 1 else 0)
    return out


@contextlib.contextmanager
def floating_point_undecided() -> Iterator[None]:
    """NumPy's overflow, invalid operation and division by zero raise, as
    :class:`~symattn.core.errors.Undecided` (a computation in binary64 balls that leaves the
    binary64 range certifies nothing, and says so); underflows are ignored (every error bound
    accounts for them)."""
    try:
        with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
            yield
    except FloatingPointError as exc:
        raise Undecided(f"binary64 balls: {exc} (not certified)") from None


def gamma(n: int) -> float:
    """A binary64 number ``g >= (n + 1) U / (1 - (n + 1) U)`` (Higham's ``gamma_(n+1)``, for
    ``4 n U < 1``): ``|fl(a^T b) - a^T b| <= gamma_n |a|^T |b|`` (plus the underflow terms) for a
    dot product of length ``n`` in any order of summation, with or without fused multiply-adds, and
    ``fl(s) >= (1 - gamma_n) s`` for a sum ``s`` of ``n`` nonnegative terms.

    >>> gamma(1) >= 2 * 2.0 ** -53
    True
    """
    if not 4 * n * U < 1:
        raise InternalError(f"gamma_{n}: too many terms for binary64 error bounds")
    return _up(_up((n + 1) * U) / (1.0 - (n + 1) * U))  # (n + 1) U and 1 - (n + 1) U are exact


def _up(x: float) -> float:
    """The binary64 number after ``x`` (an upper bound of a value that rounds to ``x``)."""
    return math.nextafter(x, math.inf)


class Precise:
    """The value of a network node in :class:`Float64Balls`: an object array of python-flint
    ``arb`` balls at the algebra's digits, and (made on first use) the same balls enclosed in
    binary64 balls ``(2, *shape)`` for products with tangents."""

    __slots__ = ("balls", "_float")

    def __init__(self, balls: np.ndarray):
        self.balls = balls
        self._float: np.ndarray | None = None

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.balls.shape)

    def enclosure(self) -> np.ndarray:
        """``(2, *shape)``: binary64 midpoints and radii enclosing the balls (cached): ``m`` the
        binary64 value of the midpoint (any faithful rounding: ``|mid - m| <= 2 U |m|`` or an
        underflow), ``r >= rad + 2 U |m|``, rounded up, plus :data:`TINY`."""
        if self._float is None:
            flat = self.balls.reshape(-1)
            mid = np.fromiter((float(v.mid()) for v in flat), np.float64, flat.size)
            rad = np.fromiter((float(v.rad()) for v in flat), np.float64, flat.size)
            if not (np.isfinite(mid).all() and np.isfinite(rad).all() and all(v.is_finite() for v in flat)):
                raise Undecided("a ball is not finite (or beyond the binary64 range): not certified")
            with floating_point_undecided():
                r = np.nextafter(rad, np.inf)  # float(rad) is rad rounded: one step up is above it
                r += 2 * U * np.abs(mid)
                r *= INFLATE
                r += TINY
            self._float = np.stack([mid, r]).reshape((2,) + self.shape)
        return self._float


class Float64Balls(Algebra):
    """Certified enclosures of a network and its Jacobian, fast: the values of the nodes
    (:class:`Precise`) in python-flint balls at :attr:`digits` digits (they are few: one bank
    evaluation), the tangents (one slot per parameter, the bulk of a Jacobian) in binary64
    balls, NumPy float64 arrays ``(2, *shape)`` of midpoints and radii, vectorised with BLAS
    products. Every ball encloses the exact value, every rounding accounted for.

    An object array (exact numbers: the parameters, the bank) is embedded as :class:`Precise`
    balls, a numeric array (the tangent seeds) as binary64 balls; an operation whose operands are
    all :class:`Precise` runs in :class:`BallAlgebra`, any other in binary64 balls with the
    :class:`Precise` operands enclosed (:meth:`Precise.enclosure`). Keeping the values at high
    precision matters: in binary64 balls alone the radii of a 2-layer encoder's values grow by
    about 10^9 (each product by ``|W|`` instead of ``W``), and the tangents' with them.

    The error model of the binary64 balls (round to nearest; Higham, *Accuracy and Stability of
    Numerical Algorithms*, 2nd ed., 2002, sections 2.1-2.2 and 3.1):

    * an operation on floats has ``|fl(z) - z| <= U |z| + ETA / 2`` (the second term for a
      product that underflows; sums are exact there); an overflow or an invalid operation raises
      (:meth:`working`: ``numpy.errstate``) and the computation is undecided;
    * a midpoint's error is bounded by ``2 U |fl(z)|``, and each radius (the propagated radii
      plus that error) is computed with at most :data:`ROUNDINGS` roundings of nonnegative
      numbers, each underflow error added once and never multiplied afterwards; it is then
      multiplied by :data:`INFLATE` and :data:`TINY` (or a larger underflow term) is added;
    * a matrix product or sum of ``n`` terms (BLAS or NumPy, any order, fused multiply-adds or
      not) has ``|fl(AB) - AB| <= gamma_n |A||B| + n ETA`` (:func:`gamma`); products of
      nonnegative matrices are computed at least ``(1 - gamma_n)`` of their value minus
      ``n ETA``; a product's entries are checked finite (BLAS threads may not report an overflow);
    * nonlinear maps (``phi``, LayerNorm's ``1/sqrt``, activations, reciprocals) act on values
      only (:class:`~symattn.core.algebras.Tangent` multiplies the tangents by the derivatives'
      values): in :class:`BallAlgebra`; ReLU exactly where a ball lies above or below 0
      (:func:`relu_balls`), and :class:`ReluUndecided` where it contains 0.

    Examples
    --------
    >>> from symattn.model.normalizer import Normalizer
    >>> A = Float64Balls()
    >>> with A.working():
    ...     x = A.const(np.array([Fraction(1, 3)], dtype=object))   # a value: Precise
    ...     t = A.const(np.array([[1.0], [2.0]]))                   # a tangent: binary64 balls
    ...     m, r = A.mul(t, A.phi(x, Normalizer("exp")))             # t exp(x)
    >>> exact = 2 * flint.arb(flint.fmpq(1, 3)).exp()
    >>> bool(abs(exact - m[1, 0]) < r[1, 0] < 1e-14)
    True
    """

    exactness = "certified"

    def __init__(self, digits: int = 30):
        self.digits = int(digits)
        self._balls = BallAlgebra(self.digits)

    def working(self) -> contextlib.AbstractContextManager:
        """Overflow and invalid operations raise :class:`~symattn.core.errors.Undecided` (an
        underflow is accounted for, see the class docstring); python-flint at :attr:`digits` digits.

        >>> with Float64Balls().working():
        ...     Float64Balls().mul(np.array([[1e200], [0.0]]), np.array([[1e200], [0.0]]))
        Traceback (most recent call last):
        ...
        symattn.core.errors.Undecided: binary64 balls: overflow encountered in multiply (not certified)
        """
        stack = contextlib.ExitStack()
        stack.enter_context(floating_point_undecided())
        stack.enter_context(self._balls.working())
        return stack

    # -- embedding and shapes ----------------------------------------------------------------
    def const(self, values: Any):
        arr = np.asarray(values)
        if arr.dtype == object:
            return Precise(self._balls.const(arr))
        if arr.dtype.kind == "f" or (arr.dtype.kind in "biu" and (not arr.size or int(np.abs(arr).max()) < 2 ** 53)):
            out = np.zeros((2,) + arr.shape)
            out[0] = arr  # binary64 numbers and integers below 2^53: exact
            return out
        return Precise(self._balls.const(arr.astype(object)))

    def shape(self, x) -> tuple[int, ...]:
        return x.shape if isinstance(x, Precise) else tuple(x.shape[1:])

    def zeros(self, shape) -> np.ndarray:
        return np.zeros((2,) + tuple(shape))

    @staticmethod
    def _ball(x) -> np.ndarray:
        return x.enclosure() if isinstance(x, Precise) else x

    def _precise(self, name: str, *args, **kwargs):
        """The operation in :class:`BallAlgebra` when every operand is :class:`Precise`, else None."""
        if all(isinstance(a, Precise) for a in args):
            return Precise(np.asarray(getattr(self._balls, name)(*(a.balls for a in args), **kwargs), dtype=object))
        return None

    @staticmethod
    def _out(shape) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        out = np.empty((2,) + tuple(shape))
        return out, out[0], out[1]

    @staticmethod
    def _finish(out: np.ndarray, absolute: float = TINY) -> np.ndarray:
        out[1] *= INFLATE
        out[1] += absolute
        return out

    # -- ring operations -------------------------------------------------------------------
    def add(self, x, y):
        return self._precise("add", x, y) or self._plus(self._ball(x), self._ball(y), np.add)

    def sub(self, x, y):
        return self._precise("sub", x, y) or self._plus(self._ball(x), self._ball(y), np.subtract)

    def _plus(self, x, y, op) -> np.ndarray:
        # |fl(a + b) - (a + b)| <= U |a + b| <= 2 U |fl(a + b)| (exact where it underflows);
        # 2 U |m| underflows by at most ETA; 2 roundings
        out, m, r = self._out(np.broadcast_shapes(x.shape[1:], y.shape[1:]))
        op(x[0], y[0], out=m)
        np.abs(m, out=r)
        r *= 2 * U
        r += x[1]
        r += y[1]
        return self._finish(out)

    def neg(self, x):
        if isinstance(x, Precise):
            return Precise(np.asarray(self._balls.neg(x.balls), dtype=object))
        return np.stack([-x[0], x[1]])

    def mul(self, x, y):
        done = self._precise("mul", x, y)
        if done is not None:
            return done
        x, y = self._ball(x), self._ball(y)
        # |xy - x_m y_m| <= |x_m| r_y + r_x (|y_m| + r_y), |fl(x_m y_m) - x_m y_m| <= 2 U |m| + ETA;
        # y the smaller operand (its sum computed once); three products (3 ETA), 4 roundings
        if x[0].size < y[0].size:
            x, y = y, x
        out, m, r = self._out(np.broadcast_shapes(x.shape[1:], y.shape[1:]))
        np.multiply(x[0], y[0], out=m)
        np.abs(m, out=r)
        r *= 2 * U
        r += np.abs(x[0]) * y[1]
        if np.any(x[1]):
            r += x[1] * (np.abs(y[0]) + y[1])
        return self._finish(out, 2 * TINY)

    def matmul(self, x, y):
        done = self._precise("matmul", x, y)
        if done is not None:
            return done
        x, y = self._ball(x), self._ball(y)
        # |fl(A_m B_m) - A_m B_m| <= g |A_m||B_m| + n ETA; the true product lies within
        # |A_m| r_B + r_A (|B_m| + r_B); nonnegative products are computed >= (1 - g) of their value
        # minus n ETA; g |B_m| underflows by at most ETA per entry, amplified by at most n max|A_m|
        n = x.shape[-1]
        g = gamma(n + 2)
        am = np.abs(x[0])
        bm = np.abs(y[0])
        m = np.matmul(x[0], y[0])
        r = np.matmul(am, bm * g + y[1])
        if np.any(x[1]):
            r += np.matmul(x[1], bm + y[1])
        r *= 1.0 + 2 * g
        top = float(am.max()) if am.size else 0.0
        if not (np.isfinite(m).all() and np.isfinite(r).all() and math.isfinite(top)):
            raise Undecided("a matrix product of binary64 balls overflowed: not certified")
        absolute = max(_up(_up(4 * n * ETA) * _up(top + 1.0)), TINY)
        out = np.empty((2,) + m.shape)
        out[0], out[1] = m, r
        return self._finish(out, absolute)

    def sum(self, x, axis: int):
        done = self._precise("sum", x, axis=axis)
        if done is not None:
            return done
        x = self._ball(x)
        # |fl(sum) - sum| <= g sum |a|; g |a| underflows by ETA per term; a sum of nonnegative
        # numbers is computed >= (1 - g) of its value
        n = x.shape[axis]
        g = gamma(n + 2)
        out = np.empty((2,) + np.sum(x[0], axis=axis, keepdims=True).shape)
        np.sum(x[0], axis=axis, keepdims=True, out=out[0])
        np.sum(np.abs(x[0]) * g + x[1], axis=axis, keepdims=True, out=out[1])
        out[1] *= 1.0 + 2 * g
        return self._finish(out, max(_up(2 * n * ETA), TINY))

    def transpose(self, x):
        return self._precise("transpose", x) or np.swapaxes(x, -1, -2)

    def expand(self, x, axis: int):
        return self._precise("expand", x, axis=axis) or np.expand_dims(x, axis)

    # -- the nonlinear maps: values only, in python-flint balls --------------------------------
    def _values(self, x) -> Precise:
        """``x`` as :class:`Precise` balls (binary64 balls are converted exactly)."""
        if isinstance(x, Precise):
            return x
        if not np.isfinite(x).all():
            raise Undecided("a binary64 ball is not finite: not certified")
        with self._balls.working():
            balls = np.empty(x.shape[1:], dtype=object)
            for idx in np.ndindex(*x.shape[1:]):
                balls[idx] = flint.arb(float(x[(0,) + idx]), float(x[(1,) + idx]))
        return Precise(balls)

    def reciprocal(self, x):
        return self._precise("reciprocal", self._values(x))

    def phi(self, x, normalizer, derivative: int = 0, layer: int = 0):
        return self._precise("phi", self._values(x), normalizer=normalizer, derivative=derivative, layer=layer)

    def fn(self, x, function, derivative: int = 0):
        return self._precise("fn", self._values(x), function=function, derivative=derivative)
