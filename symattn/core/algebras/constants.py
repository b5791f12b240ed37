"""Q adjoined the constants of a transformer block's series: exact series where Q alone cannot hold them.

Along the collapse path a LayerNorm takes ``1/sqrt(c)`` and an MLP activation ``f(c)`` of a
constant term ``c`` that is rarely a rational square (``tanh(c)``, ``sigmoid(c)`` and GELU's
``Phi(c)``, ``phi(c)`` of a rational ``c != 0`` are transcendental), so the series over Q and
F_p refuse those stacks. :class:`ConstantField` holds them exactly: its elements are
polynomials with rational coefficients (python-flint ``fmpq_mpoly``) in one generator per
distinct constant the evaluation meets, named when it is met:

* ``rsqrt`` at ``c``: a generator ``w`` standing for ``c^(-1/2)``; the Taylor coefficients are
  ``binom(-1/2, k) w^(2k+1)``. Where ``c`` is invertible in the field built so far (a rational,
  or an element of the tower of square roots named before it), the relation ``w^2 = 1/c`` is
  kept and every element is reduced modulo the relations (their leading monomials ``w^2`` are
  coprime, so the reduction is a normal form);
* ``tanh``, ``sigmoid``, ``silu`` at ``c != 0``: a generator ``T = tanh(c)`` (``S = sigmoid(c)``),
  free (no relation); the derivatives are polynomials in it (``tanh' = 1 - tanh^2``,
  ``sigmoid' = sigmoid (1 - sigmoid)``); at ``c = 0`` the rational Taylor coefficients;
* ``gelu`` at ``c``: generators ``Phi(c)`` and ``phi(c) = exp(-c^2/2)/sqrt(2 pi)`` (free), with
  ``Phi^(k)(c) = (-1)^(k-1) He_(k-1)(c) phi(c)``; ``gelu_tanh``: a global ``kappa = sqrt(2/pi)``
  and ``T = tanh(kappa (c + a c^3))``, composed as truncated polynomials.

**What an element proves.** Every operation is a ring operation (or the inverse of a unit of
the ring, checked by multiplying back), and assigning each generator its real value (the
positive root for ``w``) satisfies every relation kept, so evaluation is a ring homomorphism to
R: an element computed to be *zero* is zero at the real constants, whatever else is true of them
(the free generators need no independence). The converse does not hold where a relation is
missing (a free generator whose value is algebraic over the others): a nonzero element may vanish
at the real point. So zeros are exact and nonzero elements are only candidates; their values are
certified by :meth:`ConstantField.balls` (python-flint ``arb``: a ball that excludes 0 proves the
value nonzero).

>>> F = ConstantField()
>>> from symattn.core.algebras.functions import Elementwise
>>> import numpy as np, flint
>>> j = F.jets(Elementwise("rsqrt"), np.array([flint.fmpq(2)], dtype=object), 3)
>>> [str(a[0]) for a in j]          # 2^(-1/2) = w, then -1/2 w^3 = -1/4 w, 3/8 w^5 = 3/32 w
['c63', '-1/4*c63', '3/32*c63']
>>> [str(v) for v in F.balls(j[0] * j[0], 30)]   # w^2 = 1/2 (reduced by the relation)
['0.500000000000000']
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import flint
import numpy as np

from symattn.core.algebras.rational import to_fmpq
from symattn.core.algebras.series import Field, SeriesAlgebra
from symattn.core.errors import SymattnError, Undecided

__all__ = ["ConstantField", "Constant", "constant_series", "NotInvertible"]

#: Generators of one field: distinct constants one evaluation may name.
CAPACITY = 64


class NotInvertible(Undecided):
    """An element of the constant field that is not a unit of it (a free constant, or a zero divisor)."""


class Element:
    """One element of a :class:`ConstantField` that is not a rational: an ``fmpq_mpoly`` in normal
    form, wrapped so that NumPy keeps it whole (it would read a bare ``fmpq_mpoly`` as the sequence of
    its exponent vectors). Arithmetic with rationals, ints and other elements of the same field;
    results that are constant polynomials come back as ``flint.fmpq``."""

    __slots__ = ("poly", "field")

    def __init__(self, poly: Any, field: "ConstantField") -> None:
        self.poly = poly
        self.field = field

    def _wrap(self, poly: Any, reduce: bool = False) -> Any:
        if reduce:
            poly = self.field.normal_poly(poly)
        if poly.is_constant():
            return poly.leading_coefficient() if not poly.is_zero() else flint.fmpq(0)
        return Element(poly, self.field)

    @staticmethod
    def _raw(other: Any) -> Any:
        if isinstance(other, Element):
            return other.poly
        if isinstance(other, (int, flint.fmpq, flint.fmpz)):
            return other
        if isinstance(other, np.integer):
            return int(other)
        if isinstance(other, Fraction):
            return flint.fmpq(other.numerator, other.denominator)
        return NotImplemented

    def __add__(self, other: Any) -> Any:
        o = self._raw(other)
        return NotImplemented if o is NotImplemented else self._wrap(self.poly + o)

    __radd__ = __add__

    def __sub__(self, other: Any) -> Any:
        o = self._raw(other)
        return NotImplemented if o is NotImplemented else self._wrap(self.poly - o)

    def __rsub__(self, other: Any) -> Any:
        o = self._raw(other)
        return NotImplemented if o is NotImplemented else self._wrap(o - self.poly)

    def __mul__(self, other: Any) -> Any:
        o = self._raw(other)
        if o is NotImplemented:
            return NotImplemented
        return self._wrap(self.poly * o, reduce=isinstance(other, Element))

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Any:
        if isinstance(other, Element):
            return self * self.field.inverse_of(other)
        o = self._raw(other)
        return NotImplemented if o is NotImplemented else self._wrap(self.poly / o)

    def __rtruediv__(self, other: Any) -> Any:
        return other * self.field.inverse_of(self)

    def __pow__(self, k: int) -> Any:
        out: Any = flint.fmpq(1)
        for _ in range(int(k)):
            out = out * self
        return out

    def __neg__(self) -> "Element":
        return Element(-self.poly, self.field)

    def __pos__(self) -> "Element":
        return self

    def __eq__(self, other: Any) -> bool:  # type: ignore[override]
        # normal forms are unique and an element is never a constant polynomial: only an equal
        # element equals it
        return isinstance(other, Element) and self.poly == other.poly

    def __ne__(self, other: Any) -> bool:  # type: ignore[override]
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(str(self.poly))

    def __bool__(self) -> bool:
        return not self.poly.is_zero()

    def __str__(self) -> str:
        return str(self.poly)

    __repr__ = __str__


@dataclass(frozen=True)
class Constant:
    """One generator: ``kind`` (``"rsqrt"``, ``"tanh"``, ``"sigmoid"``, ``"Phi"``, ``"phi"``,
    ``"kappa"``) of the element ``argument``; ``relation`` the element ``w^2`` equals (``rsqrt``
    only), or None (free)."""

    kind: str
    argument: Any
    index: int
    relation: Any = None


class ConstantField(Field):
    """Q adjoined the constants named during one evaluation (see the module docstring).

    Elements are ``flint.fmpq`` (rationals) or :class:`Element` (an ``fmpq_mpoly`` in the field's
    context, in normal form modulo the kept relations). One field per evaluation: its generators
    are numbered as they are met, and :meth:`balls` gives their real values.
    """

    dtype = object

    def __init__(self, capacity: int = CAPACITY) -> None:
        if not isinstance(capacity, int) or not 1 <= capacity <= 4096:
            raise SymattnError(f"capacity must be an integer in [1, 4096], got {capacity!r}")
        self.name = "Q[constants]"
        self.ctx = flint.fmpq_mpoly_ctx.get(("c", capacity), "lex")
        self.gens = self.ctx.gens()
        self.constants: list[Constant] = []
        self._named: dict = {}
        #: (generator index, w^2 - relation) newest first: the reduction order
        self._relations: list[tuple[int, Any]] = []
        self._relation_index: list[int] = []
        self._values: dict = {}

    def __repr__(self) -> str:
        return f"ConstantField({len(self.constants)} constants, {len(self._relations)} relations)"

    # -- the Field interface -------------------------------------------------------------
    def convert(self, values: Any) -> np.ndarray:
        arr = _object_array(values)
        out = np.full(arr.shape, flint.fmpq(0), dtype=object)
        flat, res = arr.reshape(-1), out.reshape(-1)
        for i in np.flatnonzero(flat != 0):
            v = flat[i]
            res[i] = v if isinstance(v, Element) else to_fmpq(v)
        return out

    def add(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return x + y  # elements are kept in normal form by their own products

    def sub(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return x - y

    def normal_poly(self, poly: Any) -> Any:
        """The normal form of a polynomial modulo the kept relations ``w^2 = r`` (newest first: each
        ``r`` involves older generators only, so one pass suffices)."""
        if self._relation_index:
            degrees = poly.degrees()
            if any(degrees[i] >= 2 for i in self._relation_index):
                for i, rel in self._relations:
                    if poly.degrees()[i] >= 2:
                        poly = poly % rel
        return poly

    def element(self, poly: Any) -> Any:
        """A polynomial of the context as an element: normal form, a rational if constant."""
        poly = self.normal_poly(poly)
        if poly.is_constant():
            return poly.leading_coefficient() if not poly.is_zero() else flint.fmpq(0)
        return Element(poly, self)

    def is_zero(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(x == 0, dtype=bool)

    def inverse(self, x: np.ndarray) -> np.ndarray:
        out = np.empty(np.shape(x), dtype=object)
        for idx, v in np.ndenumerate(x):
            out[idx] = self.inverse_of(v)
        return out

    def inverse_of(self, v: Any) -> Any:
        """The inverse of one element in the tower of kept square roots (by conjugates), checked by
        multiplying back; :class:`NotInvertible` for zero, a free constant or a zero divisor."""
        if not isinstance(v, Element):
            if v == 0:
                raise NotInvertible("the constant field met a division by zero")
            return 1 / to_fmpq(v)
        present = [i for i, d in enumerate(v.poly.degrees()) if d]
        if any(i not in self._relation_index for i in present):
            raise NotInvertible("an element with a transcendental or free constant is not invertible in "
                                "the constant field")
        g = min(present)  # the newest (most significant) related generator in v
        a, b = self._split(v.poly, g)
        square = self.gens[g] ** 2 - next(r for i, r in self._relations if i == g)  # w_g^2 = square
        norm = self.element(a * a - square * b * b)
        inv = self.element(a - b * self.gens[g]) * self.inverse_of(norm)
        if inv * v != 1:
            raise NotInvertible("an element of the constant field is a zero divisor")
        return inv

    def _split(self, poly: Any, g: int) -> tuple[Any, Any]:
        """``poly = a + b w_g`` with ``a, b`` free of ``w_g`` (``poly`` in normal form)."""
        parts: dict = {0: {}, 1: {}}
        for exps, coeff in poly.to_dict().items():
            e = list(exps)
            k, e[g] = e[g], 0
            parts[k][tuple(e)] = coeff
        return self.ctx.from_dict(parts[0]), self.ctx.from_dict(parts[1])

    # -- naming constants ----------------------------------------------------------------
    def _name(self, kind: str, argument: Any, relation: Any = None) -> Element:
        key = (kind, str(argument))
        if key in self._named:
            return Element(self.gens[self._named[key]], self)
        if len(self.constants) >= len(self.gens):
            raise Undecided(f"the constant field is full ({len(self.gens)} constants); evaluate fewer inputs "
                            "at a time")
        index = len(self.gens) - 1 - len(self.constants)  # newer generators are more significant (lex)
        self.constants.append(Constant(kind, argument, index, relation))
        self._named[key] = index
        if relation is not None:
            rhs = relation.poly if isinstance(relation, Element) else relation
            self._relations.insert(0, (index, self.gens[index] ** 2 - rhs))
            self._relation_index.append(index)
        return Element(self.gens[index], self)

    def _rsqrt(self, c: Any) -> Any:
        """``c^(-1/2)``: a rational where ``c`` is a rational square, else a generator."""
        if not isinstance(c, Element):
            q = to_fmpq(c)
            if q <= 0:
                raise SymattnError(f"LayerNorm takes 1/sqrt of {q} <= 0")
            if q.p.is_square() and q.q.is_square():
                return flint.fmpq(q.q.isqrt(), q.p.isqrt())
            return self._name("rsqrt", q, 1 / q)
        try:
            relation = self.inverse_of(c)
        except NotInvertible:
            relation = None
        return self._name("rsqrt", c, relation)

    def jets(self, function: Any, c: np.ndarray, count: int) -> list[np.ndarray]:
        """``[f^(k)(c)/k! for k < count]`` at the entries of ``c``, exact in the field (each distinct
        constant named once)."""
        if not function.analytic:
            raise SymattnError("ReLU is not analytic: exact analyses refuse it (use the float64 tier)")
        if function.name == "poly":
            return function.jets(self, c, count)
        out = [np.empty(np.shape(c), dtype=object) for _ in range(count)]
        done: dict = {}
        for idx, v in np.ndenumerate(c):
            key = str(v)
            if key not in done:
                done[key] = self._jets_at(function, v, count)
            for k in range(count):
                out[k][idx] = done[key][k]
        return out

    def _jets_at(self, function: Any, c: Any, count: int) -> list[Any]:
        name = function.name
        zero = not isinstance(c, Element) and c == 0
        if name == "rsqrt":
            w = self._rsqrt(c)
            out, binom, power = [], Fraction(1), w
            for k in range(count):
                out.append(power * to_fmpq(binom))
                binom = binom * (Fraction(-1, 2) - k) / (k + 1)
                power = power * w * w
            return out
        if name in ("tanh", "sigmoid", "silu") and zero:
            return [a[0] for a in function.jets(_RATIONALS, np.zeros(1, dtype=object), count)]
        if name in ("tanh", "sigmoid"):
            return _derivative_chain(self._name(name, c), name, count)
        if name == "silu":
            sig = _derivative_chain(self._name("sigmoid", c), "sigmoid", count)
            return [c * sig[k] + (sig[k - 1] if k else 0) for k in range(count)]
        if name == "gelu":
            return self._gelu(c, count)
        if name == "gelu_tanh":
            return self._gelu_tanh(c, count)
        raise SymattnError(f"the constant field has no Taylor data for {name}")  # pragma: no cover

    def _gelu(self, c: Any, count: int) -> list[Any]:
        """``x Phi(x)`` at ``c``: ``f^(k)/k! = c Phi^(k)/k! + Phi^(k-1)/(k-1)!``, with
        ``Phi^(k)(c) = (-1)^(k-1) He_(k-1)(c) phi(c)`` for ``k >= 1``."""
        zero = not isinstance(c, Element) and c == 0
        Phi: Any = flint.fmpq(1, 2) if zero else self._name("Phi", c)
        phi = self._name("phi", c)
        he: list[Any] = [flint.fmpq(1), c]  # the probabilists' Hermite polynomials at c
        while len(he) < count:
            m = len(he) - 1
            he.append(c * he[m] - m * he[m - 1])
        Phis = [Phi] + [he[k - 1] * phi * flint.fmpq((-1) ** (k - 1), math.factorial(k)) for k in range(1, count)]
        return [c * Phis[k] + (Phis[k - 1] if k else 0) for k in range(count)]

    def _gelu_tanh(self, c: Any, count: int) -> list[Any]:
        """``x (1 + tanh(kappa (x + a x^3))) / 2`` at ``c`` by composing truncated polynomials in ``y``."""
        a = flint.fmpq(44715, 10**6)
        kappa = self._name("kappa", "sqrt(2/pi)")
        inner = kappa * (c + a * c * c * c)
        # u(c + y) - u(c) = kappa ((1 + 3 a c^2) y + 3 a c y^2 + a y^3)
        du = [flint.fmpq(0), kappa * (1 + 3 * a * c * c), kappa * (3 * a * c), kappa * a]
        if not isinstance(inner, Element) and inner == 0:
            T = [v[0] for v in _ELEMENTWISE["tanh"].jets(_RATIONALS, np.zeros(1, dtype=object), count)]
        else:
            T = _derivative_chain(self._name("tanh", inner), "tanh", count)
        total: list[Any] = [flint.fmpq(0)] * count  # tanh(u(c + y)) = sum_k T_k du^k, truncated
        power: list[Any] = [flint.fmpq(1)] + [flint.fmpq(0)] * (count - 1)
        for k in range(count):
            total = [total[i] + T[k] * power[i] for i in range(count)]
            power = _truncated_product(power, du, count)
        half = [(1 if i == 0 else 0) + total[i] for i in range(count)]  # x (1 + tanh) / 2, x = c + y
        return [(c * half[i] + (half[i - 1] if i else 0)) * flint.fmpq(1, 2) for i in range(count)]

    # -- travelling (JSON, never pickle) ----------------------------------------------------
    def export(self, x: np.ndarray) -> dict:
        """The field's generators and the elements of ``x`` as JSON-ready data
        (:meth:`restore` rebuilds both; exact: integers, no floats).

        >>> F = ConstantField(4)
        >>> from symattn.core.algebras.functions import Elementwise
        >>> j = F.jets(Elementwise("rsqrt"), np.array([flint.fmpq(3)], dtype=object), 2)
        >>> G, y = ConstantField.restore(F.export(j[1]))
        >>> str(y[0]), len(G.constants), str(G.inverse_of(y[0]) * y[0])
        ('-1/6*c3', 1, '1')
        """
        return {"capacity": len(self.gens),
                "constants": [[c.kind, _export(c.argument), c.index, _export(c.relation)] for c in self.constants],
                "shape": list(np.shape(x)), "entries": [_export(v) for v in np.asarray(x, dtype=object).reshape(-1)]}

    @classmethod
    def restore(cls, data: dict) -> tuple["ConstantField", np.ndarray]:
        """The field and the array of :meth:`export`."""
        field = cls(int(data["capacity"]))
        for kind, argument, index, relation in data["constants"]:
            key = (str(kind), str(_import(argument, field)) if kind != "kappa" else "sqrt(2/pi)")
            value = _import(argument, field) if kind != "kappa" else "sqrt(2/pi)"
            rel = _import(relation, field) if relation is not None else None
            field.constants.append(Constant(str(kind), value, int(index), rel))
            field._named[key] = int(index)
            if rel is not None:
                rhs = rel.poly if isinstance(rel, Element) else rel
                field._relations.insert(0, (int(index), field.gens[int(index)] ** 2 - rhs))
                field._relation_index.append(int(index))
        out = np.empty(len(data["entries"]), dtype=object)
        for i, v in enumerate(data["entries"]):
            out[i] = _import(v, field)
        return field, out.reshape(tuple(data["shape"]))

    # -- real values ---------------------------------------------------------------------
    def balls(self, x: np.ndarray, digits: int) -> np.ndarray:
        """The real values of the elements of ``x`` as python-flint ``arb`` balls at ``digits``
        digits (certified enclosures; each generator at its real value, ``w`` the positive root)."""
        out = np.empty(np.shape(x), dtype=object)
        with _precision(digits):
            values = self._generator_values(digits)
            for idx, v in np.ndenumerate(x):
                out[idx] = _ball(v, values)
        return out

    def _generator_values(self, digits: int) -> dict[int, Any]:
        values = self._values.setdefault(digits, {})
        for const in self.constants:
            if const.index in values:
                continue
            c: Any = _ball(const.argument, values) if const.kind != "kappa" else None
            if const.kind == "rsqrt":
                if not c > 0:
                    raise Undecided(f"a LayerNorm constant is not certified positive ({c})")
                values[const.index] = 1 / c.sqrt()
            elif const.kind == "tanh":
                values[const.index] = c.tanh()
            elif const.kind == "sigmoid":
                values[const.index] = 1 / (1 + (-c).exp())
            elif const.kind == "Phi":
                values[const.index] = (1 + (c / flint.arb(2).sqrt()).erf()) / 2
            elif const.kind == "phi":
                values[const.index] = (-(c * c) / 2).exp() / (2 * flint.arb.pi()).sqrt()
            elif const.kind == "kappa":
                values[const.index] = (2 / flint.arb.pi()).sqrt()
            else:  # pragma: no cover
                raise SymattnError(f"unknown constant kind {const.kind}")
        return values


def _export(v: Any) -> Any:
    """One element (or a constant's argument) as JSON-ready data."""
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, Element):
        return {"terms": [[[int(k) for k in e], f"{int(c.p):x}", f"{int(c.q):x}"] for e, c in v.poly.to_dict().items()]}
    q = to_fmpq(v)
    return [f"{int(q.p):x}", f"{int(q.q):x}"]  # hexadecimal: no limit on the digits of a str <-> int


def _import(v: Any, field: "ConstantField") -> Any:
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, dict):
        poly = field.ctx.from_dict({tuple(int(k) for k in e): flint.fmpq(int(p, 16), int(q, 16))
                                    for e, p, q in v["terms"]})
        return Element(poly, field)
    return flint.fmpq(int(v[0], 16), int(v[1], 16))


def _object_array(values: Any) -> np.ndarray:
    """``values`` as an object array whose elements stay whole (NumPy reads an object with a length,
    such as a bare ``fmpq_mpoly``, as a sequence)."""
    if isinstance(values, np.ndarray):
        return values if values.dtype == object else values.astype(object)
    if isinstance(values, Element):
        out = np.empty((), dtype=object)
        out[()] = values
        return out
    if isinstance(values, (list, tuple)) and _holds_element(values):
        parts = [_object_array(v) for v in values]
        out = np.empty((len(parts),) + parts[0].shape, dtype=object)
        for i, part in enumerate(parts):
            for idx, v in np.ndenumerate(part):
                out[(i,) + idx] = v
        return out
    return np.asarray(values, dtype=object)


def _holds_element(values: Any) -> bool:
    if isinstance(values, Element):
        return True
    if isinstance(values, (list, tuple)):
        return any(_holds_element(v) for v in values)
    if isinstance(values, np.ndarray) and values.dtype == object:
        return any(isinstance(v, Element) for v in values.reshape(-1))
    return False


def _derivative_chain(g: Any, name: str, count: int) -> list[Any]:
    """``f^(k)(c)/k!`` as polynomials in ``g = f(c)`` for ``tanh`` (``f' = 1 - f^2``) and ``sigmoid``
    (``f' = f (1 - f)``)."""
    field, poly = g.field, g.poly
    index = next(i for i, d in enumerate(poly.degrees()) if d)
    derivative = (1 - poly * poly) if name == "tanh" else poly * (1 - poly)
    out, P = [], poly
    for k in range(count):
        out.append(field.element(P / math.factorial(k)))
        P = P.derivative(index) * derivative
    return out


def _truncated_product(a: list, b: list, count: int) -> list:
    out: list[Any] = [flint.fmpq(0)] * count
    for i, x in enumerate(a):
        if x == 0:
            continue
        for j, y in enumerate(b[: count - i]):
            if y != 0:
                out[i + j] = out[i + j] + x * y
    return out


def _ball(v: Any, values: dict) -> Any:
    if not isinstance(v, Element):
        return flint.arb(to_fmpq(v))
    total = flint.arb(0)
    for exps, coeff in v.poly.to_dict().items():
        term = flint.arb(coeff)
        for i, e in enumerate(exps):
            if e:
                term = term * values[i] ** e
        total = total + term
    return total


class _precision:
    """python-flint's arb precision set for a block (restored after)."""

    def __init__(self, digits: int) -> None:
        self.digits = digits

    def __enter__(self) -> None:
        self.saved = flint.ctx.dps
        flint.ctx.dps = self.digits

    def __exit__(self, *exc: Any) -> None:
        flint.ctx.dps = self.saved


def _lazy_rationals():
    from symattn.core.algebras.rational import Rationals

    return Rationals()


_RATIONALS = _lazy_rationals()


def _lazy_elementwise():
    from symattn.core.algebras.functions import Elementwise

    return {"tanh": Elementwise("tanh")}


_ELEMENTWISE = _lazy_elementwise()


def constant_series(order: int, capacity: int = CAPACITY) -> SeriesAlgebra:
    """Series over a fresh :class:`ConstantField`, truncated mod ``t^order``.

    >>> A = constant_series(3)
    >>> from symattn.core.algebras.functions import Elementwise
    >>> x = A.series([[3], [1]])                       # 3 + t
    >>> [str(c[0]) for c in A.fn(x, Elementwise("rsqrt"))]
    ['c63', '-1/6*c63', '1/24*c63']
    """
    return SeriesAlgebra(ConstantField(capacity), order)
