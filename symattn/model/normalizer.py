"""Known normalizers phi and the data the theorems derive from them.

Scope: one normalizer phi of the paper -- positive, nonconstant, real analytic
near 0, rescaled so that phi(0) = 1 -- given by a catalogue name or by any
expression in the symbol ``s``. :class:`Normalizer` validates it and derives,
never being told: the first nonconstant Taylor degree ``k`` of h = log phi and
its coefficient ``b``, whether phi is even, whether h is odd, h'(0) and h''(0),
plus exact Taylor coefficients of phi and h (rational ones by python-flint
power-series arithmetic, anything else by ``sympy.series``) and float64 or
mpmath evaluation of phi and its derivatives. Every coefficient and derived
number here is exact; only ``evaluate_float`` and ``evaluate_mpmath`` are
numerical. :func:`normalizers` turns a per-layer specification into one
normalizer per layer. Attention layers themselves are not computed here.

The catalogue and the validation of a given expression are in
:mod:`symattn.model.catalogue`, the two Taylor backends (python-flint and sympy)
in :mod:`symattn.model.taylor`. Caveat (start-up time): a catalogue normalizer
computes its Taylor data from a python-flint series of its own
(:data:`~symattn.model.catalogue.CATALOGUE`, checked against the expression by the
tests) and imports sympy only when a symbolic answer is asked for (``expr``, ``b``,
``phi_taylor``, ``even``, ...), so a command that only needs rational Taylor data
(the series algebras) never loads sympy.
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Callable

import flint
import numpy as np

from symattn.core.errors import InternalError, SymattnError
from symattn.model.catalogue import CATALOGUE, catalogue_key, catalogue_of, parse  # noqa: F401  CATALOGUE: importable from here
from symattn.core.limits import NORMALIZER_SECONDS, time_budget
from symattn.model.expansion import catalogue_check
from symattn.model.taylor import exact, flint_taylor, is_nonzero, symbol, taylor

if TYPE_CHECKING:
    import mpmath
    import sympy

__all__ = ["Normalizer", "normalizers"]


_VALIDATION_ORDER = 8  # order of the analyticity check on the given expression


_SEARCH_ORDER = 64  # how far k and the parities are searched in the Taylor series


def __getattr__(name: str):
    """``S``, the sympy symbol ``s``, made on first use (PEP 562: no sympy at import)."""
    if name == "S":
        return symbol()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _check_order(order: int, what: str = "order") -> int:
    if isinstance(order, bool) or not isinstance(order, int) or order < 0:
        raise SymattnError(f"{what} must be a nonnegative integer, got {order!r}")
    return order


class Normalizer:
    """A known normalizer phi, rescaled to phi(0) = 1, with its derived data.

    Parameters
    ----------
    spec : str or sympy.Expr
        A catalogue name (``exp``, ``cosh``, ``gauss`` = exp(s^2), ``1+s^2``,
        ``exp(s^2+s^3)``, ``exp(s^3)``, ``logistic`` = 1 + tanh(s)/2) or an
        expression in the symbol ``s`` (a string read by the whitelist parser :func:`symattn.core.parse.parse_expression`, ``^`` meaning
        power, or a sympy expression).

    Attributes
    ----------
    name : str
        The catalogue name or the input string.
    expr : sympy.Expr
        phi divided by phi(0), an expression in ``s``.
    s : sympy.Symbol
        The variable ``s``.
    k : int
        First j >= 1 with a nonzero Taylor coefficient h_j of h = log phi.
    b : sympy.Rational or sympy.Expr
        That coefficient h_k, exact.
    even, h_odd : bool
        Whether phi is even and whether h is odd (see the properties).
    slope, curvature : sympy.Rational or sympy.Expr
        h'(0) and h''(0), exact.

    Raises
    ------
    SymattnError
        For an unknown name, an unparsable string, symbols other than ``s``,
        phi(0) not real and positive, phi not analytic at 0, or phi constant.

    Examples
    --------
    >>> phi = Normalizer("cosh")
    >>> phi.k, phi.b, phi.even, phi.h_odd
    (2, 1/2, True, False)
    >>> Normalizer("exp").even
    False
    >>> Normalizer("2*exp(s)").expr
    exp(s)
    """

    def __init__(self, spec: str | sympy.Expr):
        with time_budget(NORMALIZER_SECONDS, f"deriving the normalizer data of {str(spec)[:60]!r}"):
            self._derive(spec)

    def _derive(self, spec: str | sympy.Expr) -> None:
        self._series: dict[str, list] = {}
        self._derivatives: dict[int, sympy.Expr] = {}
        self._functions: dict[tuple[str, int], object] = {}
        self._build: Callable[[Any], Any] | None
        key = catalogue_key(spec)
        if key is None:
            self._build = None
            self._expr = self._validated(spec)
            # known by what it computes: an expression that is a catalogue entry is that entry
            key = catalogue_of(self._expr)
        if key is not None:
            # a catalogue entry: its own flint series; the expression is parsed on first use
            self.name, self._expr, self._build = key, None, CATALOGUE[key].series
            self._series.clear()
            if self._coefficients("phi", 0) != [1]:
                raise InternalError(f"the catalogue normalizer {key} does not have phi(0) = 1")
        k = self._first_nonzero("h", start=1, step=1)
        if k is None:
            raise SymattnError(f"phi is constant to order {_SEARCH_ORDER} (or flat): "
                               f"phi = {self.expr}; give a nonconstant normalizer analytic at 0")
        self.k: int = k

    def _validated(self, spec: str | sympy.Expr) -> sympy.Expr:
        """The expression of a non-catalogue ``spec``, checked and rescaled to phi(0) = 1."""
        import sympy

        self.name, raw = parse(spec)
        if raw.has(sympy.nan, sympy.zoo, sympy.oo, -sympy.oo):
            raise SymattnError(f"phi = {raw} is not finite; give a finite positive normalizer")
        try:
            meromorphic = raw.is_meromorphic(symbol(), 0)
        except Exception:
            meromorphic = None
        if meromorphic is False:
            raise SymattnError(f"phi = {raw} is not analytic at s = 0; give a normalizer "
                               "with a convergent Taylor series at 0")
        coeffs = [exact(c) for c in taylor(raw, _VALIDATION_ORDER)]
        if any(c.is_extended_real is False for c in coeffs):
            raise SymattnError(f"phi = {raw} is not real near s = 0 (complex Taylor "
                               "coefficient); give a real normalizer")
        c0 = coeffs[0]
        if not (c0.is_finite and c0.is_positive):
            raise SymattnError(f"phi(0) = {c0} for phi = {raw}, but a normalizer needs "
                               "phi(0) > 0; give a positive normalizer")
        return raw if c0 == 1 else sympy.powsimp(raw / c0)

    @property
    def expr(self) -> sympy.Expr:
        """phi divided by phi(0), a sympy expression in ``s``."""
        if self._expr is None:
            from symattn.core.parse import parse_expression

            self._expr = parse_expression(CATALOGUE[self.name].text)
        return self._expr

    @property
    def s(self) -> sympy.Symbol:
        """The variable ``s``."""
        return symbol()

    @property
    def b(self) -> sympy.Expr:
        """h_k, the first nonzero Taylor coefficient of h = log phi, exact."""
        return self.h_taylor(self.k)[self.k]

    # ----------------------------------------------------------------- series
    def _coefficients(self, which: str, order: int) -> list[Fraction | sympy.Expr]:
        """Cached Taylor coefficients 0..order of phi (``which="phi"``) or h: Fractions
        where python-flint expands them, else sympy numbers."""
        cached = self._series.get(which, [])
        if len(cached) <= order:
            if self._build is not None:
                build = self._build
                series = (lambda: build(flint.fmpq_series([0, 1]))) if which == "phi" else (
                    lambda: build(flint.fmpq_series([0, 1])).log())
                cached = flint_taylor(series, order)
                # data checked where used: the fast builder against its expression's own expansion
                catalogue_check(self.name, which, cached)
            else:
                import sympy

                cached = taylor(self.expr if which == "phi" else sympy.log(self.expr), order)
            self._series[which] = cached
        return cached[: order + 1]

    def _first_nonzero(self, which: str, start: int, step: int) -> int | None:
        """Least j in start, start + step, ... <= 64 with a nonzero coefficient."""
        j = start
        for order in (8, 16, 32, _SEARCH_ORDER):
            coeffs = self._coefficients(which, order)
            while j <= order:
                if is_nonzero(coeffs[j]):
                    return j
                j += step
        return None

    def _parity(self, which: str, difference: Callable[[], sympy.Expr], what: str) -> bool:
        """Whether the coefficients of ``which`` that break ``what`` all vanish.

        ``difference()`` is an expression that is identically zero exactly when
        ``what`` holds; the breaking coefficients are the odd ones of phi
        (evenness) or the even ones of h (oddness; h_0 = 0).
        """
        if self._build is None and difference() == 0:
            return True
        start = 1 if which == "phi" else 2
        if self._first_nonzero(which, start=start, step=2) is not None:
            return False
        import sympy

        with time_budget(NORMALIZER_SECONDS, f"deciding whether {what}"):
            expr = difference()
            if sympy.simplify(expr) == 0 or expr.equals(0) is True:
                return True
        raise SymattnError(f"could not decide whether {what} for phi = {self.expr}: the "
                           f"Taylor coefficients agree to order {_SEARCH_ORDER} but sympy "
                           "cannot simplify the difference to 0; rewrite phi")

    def phi_taylor(self, order: int) -> list[sympy.Expr]:
        """Exact Taylor coefficients c_0..c_order of phi at 0.

        Examples
        --------
        >>> Normalizer("cosh").phi_taylor(4)
        [1, 0, 1/2, 0, 1/24]
        """
        return [exact(c) for c in self._coefficients("phi", _check_order(order))]

    def h_taylor(self, order: int) -> list[sympy.Expr]:
        """Exact Taylor coefficients h_0..h_order of h = log phi at 0 (h_0 = 0).

        Examples
        --------
        >>> Normalizer("logistic").h_taylor(3)
        [0, 1/2, -1/8, -1/8]
        """
        return [exact(c) for c in self._coefficients("h", _check_order(order))]

    def rational_phi_taylor(self, order: int) -> list[Fraction]:
        """Taylor coefficients c_0..c_order of phi as Fractions.

        Raises
        ------
        SymattnError
            If some c_j is not rational.

        Examples
        --------
        >>> Normalizer("exp").rational_phi_taylor(3)
        [Fraction(1, 1), Fraction(1, 1), Fraction(1, 2), Fraction(1, 6)]
        """
        coeffs = self._coefficients("phi", _check_order(order))
        out = []
        for j, c in enumerate(coeffs):
            if not isinstance(c, Fraction):
                if not c.is_Rational:
                    raise SymattnError(
                        f"phi = {self.expr} has an irrational Taylor coefficient c_{j} = {c}; "
                        "exact and modular series need rational coefficients; use the mpmath "
                        "or float algebra")
                c = Fraction(int(c.p), int(c.q))
            out.append(c)
        return out

    def rational_phi_derivative_taylor(self, order: int, j: int) -> list[Fraction]:
        """Taylor coefficients 0..order of the j-th derivative of phi, as Fractions.

        Coefficient m of phi^(j) is c_{m+j} (m+j)!/m!.

        Examples
        --------
        >>> Normalizer("1+s^2").rational_phi_derivative_taylor(2, 1)
        [Fraction(0, 1), Fraction(2, 1), Fraction(0, 1)]
        """
        _check_order(j, "derivative order j")
        coeffs = self.rational_phi_taylor(_check_order(order) + j)
        return [coeffs[m + j] * math.perm(m + j, j) for m in range(order + 1)]

    # ---------------------------------------------------------- derived data
    @functools.cached_property
    def even(self) -> bool:
        """Whether phi(-s) = phi(s) as germs at 0.

        Examples
        --------
        >>> Normalizer("exp").even, Normalizer("1+s^2").even
        (False, True)
        """
        S = self.s
        return self._parity("phi", lambda: self.expr.subs(S, -S) - self.expr, "phi(-s) = phi(s)")

    @functools.cached_property
    def h_odd(self) -> bool:
        """Whether h(-s) = -h(s), i.e. phi(s) phi(-s) = 1.

        Examples
        --------
        >>> Normalizer("exp").h_odd, Normalizer("logistic").h_odd
        (True, False)
        """
        S = self.s
        return self._parity("h", lambda: self.expr * self.expr.subs(S, -S) - 1, "h(-s) = -h(s)")

    @functools.cached_property
    def exponential(self) -> bool:
        """Whether phi(s) = exp(b s), i.e. h = log phi is linear (h'' = 0): then
        phi(z + c) = phi(z) phi(c), so a score shift that depends on the query alone cancels in the
        row normalisation (the softmax key bias, the score shifts of the score lemma). Derived:
        h_2 .. h_64 vanish and h'' simplifies to 0; never looked up by name.

        Examples
        --------
        >>> [Normalizer(t).exponential for t in ("exp", "exp(s)", "exp(2*s)", "cosh", "2^s")]
        [True, True, True, False, True]
        """
        import sympy

        with time_budget(NORMALIZER_SECONDS, "deciding whether h = log phi is linear"):
            second = sympy.diff(sympy.log(self.expr), self.s, 2)
            if sympy.simplify(second) == 0:
                return True
        if self._first_nonzero("h", start=2, step=1) is not None:
            return False
        raise SymattnError(f"could not decide whether log phi is linear for phi = {self.expr}: its Taylor "
                           f"coefficients h_2 .. h_{_SEARCH_ORDER} vanish but sympy cannot simplify h'' to 0; "
                           "rewrite phi")

    @functools.cached_property
    def real_line(self):
        """What phi does on all of R (:func:`symattn.model.real_line.real_line`): an enclosure of
        its values, and whether it is positive and real-analytic there (derived from the
        expression, else False).

        Examples
        --------
        >>> [(Normalizer(t).real_line.positive, Normalizer(t).real_line.analytic) for t in ("logistic", "1+s")]
        [(True, True), (False, True)]
        """
        from symattn.model.real_line import real_line

        return real_line(self.expr)

    @property
    def slope(self) -> sympy.Expr:
        """h'(0), exact.

        Examples
        --------
        >>> Normalizer("exp").slope
        1
        """
        return self.h_taylor(1)[1]

    @property
    def curvature(self) -> sympy.Expr:
        """h''(0), exact.

        Examples
        --------
        >>> Normalizer("gauss").curvature
        2
        """
        return 2 * self.h_taylor(2)[2]

    # ------------------------------------------------------------ evaluation
    def derivative_expr(self, j: int) -> sympy.Expr:
        """The j-th derivative of phi as a sympy expression in ``s``.

        Examples
        --------
        >>> Normalizer("gauss").derivative_expr(1)
        2*s*exp(s**2)
        """
        import sympy

        _check_order(j, "derivative order j")
        if j not in self._derivatives:
            self._derivatives[j] = sympy.diff(self.expr, self.s, j)
        return self._derivatives[j]

    def _function(self, module: str, derivative: int):
        import sympy

        key = (module, derivative)
        if key not in self._functions:
            self._functions[key] = sympy.lambdify(self.s, self.derivative_expr(derivative), module)
        return self._functions[key]

    def evaluate_float(self, x, derivative: int = 0) -> np.ndarray:
        """phi^(derivative) at the points of ``x`` in float64 (numerical).

        Examples
        --------
        >>> Normalizer("1+s^2").evaluate_float(np.array([0.0, 2.0]))
        array([1., 5.])
        """
        x = np.asarray(x)
        return np.asarray(self._function("numpy", derivative)(x)) + np.zeros(x.shape)

    def evaluate_mpmath(self, x, derivative: int = 0) -> mpmath.mpf:
        """phi^(derivative) at ``x`` in mpmath at the current ``mpmath.mp`` precision.

        Examples
        --------
        >>> import mpmath
        >>> Normalizer("exp").evaluate_mpmath(mpmath.mpf(1)) == mpmath.e
        True
        """
        import mpmath

        return mpmath.mpmathify(self._function("mpmath", derivative)(mpmath.mpmathify(x)))

    # -------------------------------------------------------------- summary
    def report(self, order: int | None = None) -> dict:
        """The derived data as a JSON-ready dict (all numbers exact, as strings).

        ``order`` is that of the printed Taylor series, default max(8, k + 4).

        Examples
        --------
        >>> r = Normalizer("cosh").report()
        >>> r["k"], r["b"], r["even"], r["phi_taylor"][:3]
        (2, '1/2', True, ['1', '0', '1/2'])
        """
        order = max(8, self.k + 4) if order is None else _check_order(order)
        return {
            "name": self.name,
            "expr": str(self.expr),
            "k": self.k,
            "b": str(self.b),
            "even": self.even,
            "h_odd": self.h_odd,
            "slope": str(self.slope),
            "curvature": str(self.curvature),
            "phi_taylor": [str(c) for c in self.phi_taylor(order)],
            "h_taylor": [str(c) for c in self.h_taylor(order)],
        }

    def __repr__(self) -> str:
        return f"Normalizer({self.name!r})"

    def _repr_latex_(self) -> str:
        """``phi`` and its derived data as one LaTeX line (Jupyter)."""
        import sympy

        return (f"$\\phi(s) = {sympy.latex(self.expr)},\\quad k = {self.k},\\ b = {sympy.latex(self.b)},"
                f"\\quad h'(0) = {sympy.latex(self.slope)},\\ h''(0) = {sympy.latex(self.curvature)}$")

    def _repr_html_(self) -> str:
        """``phi``, its Taylor series and the data the theorems use as an HTML table."""
        import sympy

        from symattn.render.derivation import summary_html

        order = max(6, self.k + 2)
        taylor = sympy.latex(sum(c * self.s**j for j, c in enumerate(self.phi_taylor(order))), order="rev-lex")
        rows = [("$\\phi(s)$", f"${sympy.latex(self.expr)}$"),
                ("Taylor series", f"${taylor} + O(s^{{{order + 1}}})$"),
                ("$h = \\log\\phi = b s^k + \\dots$", f"$k = {self.k}$, $b = {sympy.latex(self.b)}$"),
                ("$h'(0)$, $h''(0)$", f"${sympy.latex(self.slope)}$, ${sympy.latex(self.curvature)}$"),
                ("$\\phi$ even, $h$ odd", f"{self.even}, {self.h_odd}")]
        return summary_html(f"Normalizer {self.name}", rows)

    def __eq__(self, other) -> bool:
        if not isinstance(other, Normalizer):
            return False
        if self._build is not None and other._build is not None:  # catalogue names: one expression each
            return self.name == other.name
        return self.expr == other.expr

    def __hash__(self) -> int:
        # equal expressions have equal Taylor coefficients (no sympy for a catalogue entry)
        return hash(tuple(str(c) for c in self._coefficients("phi", _VALIDATION_ORDER)))


def _split_top_level(text: str) -> list[str]:
    """Split at commas outside parentheses and brackets."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return parts + [text[start:]]


def _is_sympy(value) -> bool:
    """Whether ``value`` is a sympy object (none can exist before sympy is imported)."""
    return "sympy" in sys.modules and isinstance(value, sys.modules["sympy"].Basic)


def normalizers(spec: str | Normalizer | Sequence, depth: int) -> tuple[Normalizer, ...]:
    """One normalizer per layer from one spec or exactly ``depth`` specs.

    Parameters
    ----------
    spec : str, sympy.Expr, Normalizer or sequence of these
        One spec for all layers, or a comma-separated string (split only at
        top-level commas) or sequence with exactly ``depth`` entries.
    depth : int
        The number of layers D >= 1.

    Returns
    -------
    tuple of Normalizer
        One per layer.

    Raises
    ------
    SymattnError
        For a bad depth, a bad spec or a number of specs other than ``depth``.

    Examples
    --------
    >>> normalizers("exp", 3)
    (Normalizer('exp'), Normalizer('exp'), Normalizer('exp'))
    >>> [phi.k for phi in normalizers("exp, cosh, exp(s^3)", 3)]
    [1, 2, 3]
    """
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise SymattnError(f"depth must be a positive integer, got {depth!r}")
    entries: list[Any]
    if isinstance(spec, str):
        entries = _split_top_level(spec)
    elif isinstance(spec, Normalizer) or _is_sympy(spec):
        entries = [spec]
    elif isinstance(spec, Sequence):
        entries = list(spec)
    else:
        raise SymattnError(f"normalizers must be a string, Normalizer or sequence, "
                           f"not {type(spec).__name__}")
    if len(entries) == 1:
        entries *= depth
    elif len(entries) != depth:
        raise SymattnError(f"got {len(entries)} normalizers for depth {depth}; "
                           f"the length must be 1 or D = {depth}")
    built: dict = {}
    for entry in entries:
        if entry not in built:
            built[entry] = entry if isinstance(entry, Normalizer) else Normalizer(entry)
    return tuple(built[entry] for entry in entries)
