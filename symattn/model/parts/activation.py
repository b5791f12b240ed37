"""What every MLP activation part (tanh, GELU, a polynomial, ...) owns, and the registered ones.

An activation part is one object: its graph node (:meth:`Activation.build`, delegating to the
algebras' :class:`~symattn.core.algebras.functions.Elementwise`, which every algebra applies), its
naive reference (:meth:`Activation.reference`: a Taylor formula written here for the exact reference,
:meth:`Activation.mp_formula` for the numerical one; a second code path sharing nothing with the
graph's sympy expression), the properties the analyses ask (``is_polynomial``, ``is_entire``,
``is_analytic``, ``is_odd``, ``is_even``, :meth:`Activation.homogeneous_degree`, ...), its spelling in
specs and on the command line and its PyTorch module (:meth:`Activation.torch_module`). Oddness is
also checked on the part's own formula (:meth:`Activation.odd_identity`), so a declared property
that is wrong fails where it is used (the hidden-unit sign flips of
:func:`symattn.model.symmetries.hidden_sign_flip_check`) and in ``tests/test_parts.py``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, ClassVar

__all__ = ["Activation", "Tanh", "Gelu", "GeluTanh", "Silu", "Sigmoid", "Relu", "Polynomial"]


@dataclass(frozen=True)
class Activation:
    """An elementwise MLP activation ``f`` (module docstring); subclasses set the class attributes.

    Attributes
    ----------
    spelling : str
        The name in specs and on the command line (``--activation``).
    is_polynomial : bool
        ``f`` is a polynomial with rational coefficients (exact series hold it everywhere).
    is_analytic : bool
        ``f`` is real analytic on R (every activation but ReLU).
    is_entire : bool
        ``f`` extends to an entire function of a complex variable (polynomials, GELU; not tanh,
        sigmoid or SiLU, which have poles).
    is_odd, is_even : bool
        ``f(-x) = -f(x)``, ``f(-x) = f(x)`` for every real ``x``.
    rational_at_zero : bool
        The Taylor coefficients of ``f`` at 0 are rational (the exact series hold ``f`` there).
    torch_type : str
        The ``torch.nn`` module class of :meth:`torch_module`.
    """

    spelling: ClassVar[str]
    is_polynomial: ClassVar[bool] = False
    is_analytic: ClassVar[bool] = True
    is_entire: ClassVar[bool] = False
    is_odd: ClassVar[bool] = False
    is_even: ClassVar[bool] = False
    rational_at_zero: ClassVar[bool] = False
    torch_type: ClassVar[str]
    #: the formula of ``f`` as text in ``s`` (the exact reference expands it independently at 0)
    taylor_text: ClassVar[str | None] = None

    @property
    def function(self):
        """The algebras' :class:`~symattn.core.algebras.functions.Elementwise` (made on first use)."""
        return _elementwise(self)

    @property
    def coefficients(self) -> tuple[Fraction, ...]:
        """A polynomial's coefficients ``c0, c1, ...`` (empty for the others)."""
        return ()

    def homogeneous_degree(self) -> int | None:
        """``k`` with ``f(c x) = c^k f(x)`` for every ``c > 0`` and real ``x``, else None."""
        return None

    @property
    def shifted_monomial(self) -> tuple[int, Fraction, Fraction] | None:
        """``(k, x0, e)`` when ``f(x) = c (x - x0)^k + e`` with ``k >= 1`` (polynomials only), else None."""
        return None

    def build(self, b: Any, h: str, tag: str) -> str:
        """Add ``f`` of the node ``h`` (elementwise) to the graph builder ``b``; returns the node."""
        return b.op(tag, "fn", h, function=self.function)

    def reference(self, R: Any, x: Any) -> Any:
        """``f(x)`` for one scalar of the naive reference's ring ``R`` (:mod:`symattn.model.reference`):
        the ring evaluates the part's own formula (:attr:`taylor_text`, :meth:`mp_formula`)."""
        return R.activation(x, self)

    def mp_formula(self, mp: Any) -> Callable[[Any], Any]:
        """``f`` as an mpmath function in the context ``mp`` (the numerical reference's formula)."""
        raise NotImplementedError

    def torch_module(self):
        """The ``torch.nn`` module that computes ``f`` (float64 tensors in, the same shape out)."""
        import torch

        return getattr(torch.nn, self.torch_type)()

    def odd_identity(self) -> bool:
        """``f(-s) + f(s) == 0`` as an identity of the part's formula (an exact check, not a sample):
        sympy's canonical form of ``f(-s) + f(s)`` for the transcendental ones, the coefficients for
        a polynomial. False when the identity fails or is not recognised."""
        return _symmetric_identity(self, 1)

    def even_identity(self) -> bool:
        """``f(-s) - f(s) == 0`` as an identity of the part's formula (see :meth:`odd_identity`)."""
        return _symmetric_identity(self, -1)

    def __str__(self) -> str:
        return self.spelling


class Tanh(Activation):
    """``tanh`` (odd, analytic, rational Taylor coefficients at 0; poles at ``i pi / 2``)."""

    spelling = "tanh"
    is_odd = True
    rational_at_zero = True
    torch_type = "Tanh"
    taylor_text = "tanh(s)"

    def mp_formula(self, mp):
        return mp.tanh


class Sigmoid(Activation):
    """``1 / (1 + exp(-x))``."""

    spelling = "sigmoid"
    rational_at_zero = True
    torch_type = "Sigmoid"
    taylor_text = "1/(1 + exp(-s))"

    def mp_formula(self, mp):
        return lambda v: 1 / (1 + mp.exp(-v))


class Silu(Activation):
    """``x sigmoid(x)`` (SiLU, swish)."""

    spelling = "silu"
    rational_at_zero = True
    torch_type = "SiLU"
    taylor_text = "s/(1 + exp(-s))"

    def mp_formula(self, mp):
        return lambda v: v / (1 + mp.exp(-v))


class Gelu(Activation):
    """``x Phi(x)`` with the erf form of ``Phi`` (entire; its Taylor coefficients involve ``1/sqrt(2 pi)``)."""

    spelling = "gelu"
    is_entire = True
    torch_type = "GELU"

    def mp_formula(self, mp):
        return lambda v: v * (1 + mp.erf(v / mp.sqrt(2))) / 2


class GeluTanh(Activation):
    """PyTorch's tanh approximation of GELU."""

    spelling = "gelu_tanh"
    torch_type = "GELU"

    def mp_formula(self, mp):
        return lambda v: v * (1 + mp.tanh(mp.sqrt(2 / mp.pi) * (v + mp.mpf(44715) / 10**6 * v**3))) / 2

    def torch_module(self):
        import torch

        return torch.nn.GELU(approximate="tanh")


class Relu(Activation):
    """``max(x, 0)``: not analytic (the exact tiers refuse it), positively homogeneous of degree 1."""

    spelling = "relu"
    is_analytic = False
    torch_type = "ReLU"

    def homogeneous_degree(self) -> int | None:
        return 1

    def mp_formula(self, mp):
        return lambda v: v if v > 0 else mp.zero

    def odd_identity(self) -> bool:
        return False  # relu(1) + relu(-1) = 1

    def even_identity(self) -> bool:
        return False  # relu(1) - relu(-1) = 1


@dataclass(frozen=True)
class Polynomial(Activation):
    """``sum_k c_k x^k`` with rational ``c_k`` (spelled ``poly:c0,c1,...``)."""

    poly_coefficients: tuple[Fraction, ...] = (Fraction(0), Fraction(1))
    is_polynomial = True
    is_entire = True
    rational_at_zero = True
    torch_type = "Module"

    def __post_init__(self) -> None:
        object.__setattr__(self, "poly_coefficients", tuple(Fraction(c) for c in self.poly_coefficients))

    @property
    def spelling(self) -> str:  # type: ignore[override]
        return "poly:" + ",".join(str(c) for c in self.poly_coefficients)

    @property
    def coefficients(self) -> tuple[Fraction, ...]:
        return self.poly_coefficients

    @property
    def is_odd(self) -> bool:  # type: ignore[override]
        """Only odd powers (read off the coefficients)."""
        return all(c == 0 for k, c in enumerate(self.poly_coefficients) if k % 2 == 0)

    @property
    def is_even(self) -> bool:  # type: ignore[override]
        """Only even powers."""
        return all(c == 0 for k, c in enumerate(self.poly_coefficients) if k % 2 == 1)

    def homogeneous_degree(self) -> int | None:
        """``k`` for a monomial ``c x^k`` (``k >= 1``).

        >>> Polynomial((0, 0, 3)).homogeneous_degree(), Polynomial((0, 1, 0, 1)).homogeneous_degree()
        (2, None)
        """
        nonzero = [k for k, c in enumerate(self.poly_coefficients) if c != 0]
        return nonzero[0] if len(nonzero) == 1 and nonzero[0] >= 1 else None

    @property
    def shifted_monomial(self) -> tuple[int, Fraction, Fraction] | None:
        """``(k, x0, e)`` when ``f(x) = c (x - x0)^k + e`` with ``k >= 1`` (then
        ``f(x0 + l (x - x0)) = l^k (f(x) - e) + e``): every polynomial of degree 1 or 2, a monomial
        ``c x^k`` with ``x0 = e = 0``; else None (exact: the coefficients are compared).

        >>> Polynomial((0, 1, Fraction(1, 2))).shifted_monomial      # (x + 1)^2 / 2 - 1/2
        (2, Fraction(-1, 1), Fraction(-1, 2))
        >>> Polynomial((0, 1, 0, 1)).shifted_monomial is None
        True
        """
        coeffs = list(self.poly_coefficients)
        while len(coeffs) > 1 and coeffs[-1] == 0:
            coeffs.pop()
        k = len(coeffs) - 1
        if k < 1:
            return None
        c = coeffs[k]
        x0 = -coeffs[k - 1] / (k * c)
        e = sum((a * x0**j for j, a in enumerate(coeffs)), Fraction(0))
        expanded = [c * math.comb(k, j) * (-x0) ** (k - j) for j in range(k + 1)]
        expanded[0] += e
        return (k, x0, e) if expanded == coeffs else None

    def reference(self, R, x):
        """Horner's rule in the ring's own operations."""
        out = R.number(self.poly_coefficients[-1])
        for c in reversed(self.poly_coefficients[:-1]):
            out = R.add(R.mul(out, x), R.number(c))
        return out

    def mp_formula(self, mp):
        coeffs = [mp.mpf(c.numerator) / c.denominator for c in self.poly_coefficients]
        return lambda v: sum(c * v**k for k, c in enumerate(coeffs))

    def torch_module(self):
        import torch

        coeffs = [float(c) for c in self.poly_coefficients]

        class _Poly(torch.nn.Module):
            def forward(self, h):
                return sum(c * h**k for k, c in enumerate(coeffs))

        return _Poly()

    def odd_identity(self) -> bool:
        return self.is_odd  # f(-s) + f(s) = 2 sum_{k even} c_k s^k: zero exactly when every even c_k is

    def even_identity(self) -> bool:
        return self.is_even


@functools.cache
def _elementwise(part: Activation):
    from symattn.core.algebras.functions import Elementwise

    if part.is_polynomial:
        return Elementwise("poly", part.coefficients)
    return Elementwise(part.spelling)


@functools.cache
def _symmetric_identity(part: Activation, sign: int) -> bool:
    """``f(-s) + sign f(s)`` is identically zero, by sympy's canonical form of the formula the graph
    evaluates (the part's :attr:`Activation.function`)."""
    import sympy

    s = sympy.Symbol("s")
    f = part.function.expr()
    return sympy.simplify(f.subs(s, -s) + sign * f) == 0
