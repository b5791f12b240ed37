"""Assertions for symbolic unit tests about attention: series, contact orders, jets, fibers.

A kit for writing one's own tests against the paper's theorems (a new
normalizer, a variant layer, a trained model's architecture): each helper
*computes* the object from the model with symattn's exact machinery, compares
it with the value the test expects, and on a mismatch raises
:class:`AssertionError` whose message shows what differs (the differing
series coefficients, the table of contact orders, the rank profile of the
jets, the fiber's evidence), so a failing test reads like a counterexample.

* :func:`assert_series_equal`: two truncated power series, coefficient by
  coefficient (lists or arrays of coefficients, or sympy expressions expanded
  in a variable).
* :func:`assert_identity`: a symbolic identity, exactly or to a given order.
* :func:`assert_contact_orders`: the Smith orders of a native spectrum of any
  architecture (Theorem 4 for the paper's stack; skips, masks and several heads
  alike) against ``{order: multiplicity}``.
* :func:`assert_sharp_degree`: the least jet degree with injective
  differential (Theorem 3).
* :func:`assert_fiber`: the effective fiber (Theorems 1-2), verified.

The pytest plugin :mod:`symattn.testing.plugin` (loaded automatically once
symattn is installed) adds fixtures for common architectures and normalizers;
:mod:`symattn.testing.strategies` has hypothesis strategies. Comparisons are exact
(``==`` on rationals and sympy expressions after ``expand``); nothing here
uses a tolerance.

Examples
--------
>>> import sympy
>>> s = sympy.Symbol("s")
>>> assert_identity(sympy.exp(s) * sympy.exp(-s), 1)
>>> assert_series_equal([1, 2, 3], [1, 2, 4])
Traceback (most recent call last):
...
AssertionError: series differ at 1 of 3 coefficients (first at t^2):
  [t^2]  computed 3  expected 4
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import sympy

from symattn.analyses.fibers import Fiber, effective_fiber
from symattn.analyses.jets import JetResult, sharp_degree
from symattn.model.architecture import Architecture
from symattn.model.parameters import EffectiveParams
from symattn.analyses.spectrum import Band, Spectrum

__all__ = [
    "assert_contact_orders",
    "assert_fiber",
    "assert_identity",
    "assert_series_equal",
    "assert_sharp_degree",
]

#: At most this many differing coefficients or entries are listed in a message.
_SHOWN = 10


def _coefficients(series: Any, variable: sympy.Symbol | None, order: int | None) -> list:
    """Coefficient list of a series given as a sequence or as a sympy expression."""
    if isinstance(series, sympy.Basic):
        if variable is None or order is None:
            raise TypeError("a sympy expression needs variable= and order= to be read as a series")
        expanded = sympy.expand(sympy.series(series, variable, 0, order).removeO()) if order else 0
        return [sympy.expand(expanded).coeff(variable, j) for j in range(order)]
    coefficients = list(series)
    return coefficients if order is None else coefficients[:order]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.shape(a) == np.shape(b) and bool(np.all(np.asarray(a, dtype=object) == np.asarray(b, dtype=object)))
    if isinstance(a, sympy.Basic) or isinstance(b, sympy.Basic):
        return sympy.expand(sympy.sympify(a) - sympy.sympify(b)) == 0
    return bool(a == b)


def _show(value: Any) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= 120 else text[:117] + "..."


def _entry_lines(power: str, a: Any, b: Any) -> list[str]:
    """The message lines for one differing coefficient (entrywise for arrays)."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape:
        lines = [f"  [{power}] entry {idx}: computed {_show(x)}  expected {_show(b[idx])}"
                 for idx, x in np.ndenumerate(a) if not _same(x, b[idx])]
        return lines[:_SHOWN] + ([f"  [{power}] ... {len(lines) - _SHOWN} more entries"]
                                 if len(lines) > _SHOWN else [])
    return [f"  [{power}]  computed {_show(a)}  expected {_show(b)}"]


def assert_series_equal(actual: Any, expected: Any, *, variable: sympy.Symbol | str | None = None,
                        order: int | None = None) -> None:
    """Assert that two truncated power series agree coefficient by coefficient.

    Parameters
    ----------
    actual, expected : sequence or sympy expression
        Coefficients ``c_0, c_1, ...`` (numbers, sympy expressions or numpy
        arrays of equal shape, e.g. the first axis of a series tensor), or a
        sympy expression expanded in ``variable`` through ``order - 1``.
    variable : sympy.Symbol or str, optional
        The series variable (needed for expressions; used in the message,
        default ``t``).
    order : int, optional
        Compare the coefficients of degree ``< order`` (default: all; the two
        sequences must then have the same length).

    Raises
    ------
    AssertionError
        Listing each differing coefficient (each differing entry for arrays)
        with the computed and expected values, and the first differing degree.

    Examples
    --------
    >>> import sympy
    >>> s = sympy.Symbol("s")
    >>> assert_series_equal(sympy.exp(s), [1, 1, sympy.Rational(1, 2)], variable=s, order=3)
    >>> assert_series_equal(sympy.cos(s), 1 - s**2 / 2 + s**4 / 25, variable=s, order=6)
    Traceback (most recent call last):
    ...
    AssertionError: series differ at 1 of 6 coefficients (first at s^4):
      [s^4]  computed 1/24  expected 1/25
    """
    var = sympy.Symbol(variable) if isinstance(variable, str) else variable
    a, b = _coefficients(actual, var, order), _coefficients(expected, var, order)
    name = str(var) if var is not None else "t"
    if len(a) != len(b):
        raise AssertionError(f"series have different lengths: computed {len(a)} coefficients, "
                             f"expected {len(b)} (pass order= to compare a common truncation)")
    differing = [j for j in range(len(a)) if not _same(a[j], b[j])]
    if differing:
        lines = [f"series differ at {len(differing)} of {len(a)} coefficients "
                 f"(first at {name}^{differing[0]}):"]
        for j in differing[:_SHOWN]:
            lines += _entry_lines(f"{name}^{j}", a[j], b[j])
        if len(differing) > _SHOWN:
            lines.append(f"  ... {len(differing) - _SHOWN} more coefficients differ")
        raise AssertionError("\n".join(lines))


def assert_identity(lhs: Any, rhs: Any, variable: sympy.Symbol | str | None = None,
                    order: int | None = None) -> None:
    """Assert a symbolic identity ``lhs = rhs``, exactly or to a given order.

    Parameters
    ----------
    lhs, rhs : sympy expression (or number)
        The two sides, e.g. a quantity computed through the model and the
        paper's closed form.
    variable : sympy.Symbol or str, optional
        With ``order``: the identity is asserted modulo ``variable^order``
        (series at 0).
    order : int, optional
        The order; without it the identity is exact (``lhs - rhs`` expands, or
        simplifies in exponential form, to 0).

    Raises
    ------
    AssertionError
        With the lowest nonzero coefficients of ``lhs - rhs`` (to an order),
        or the simplified difference (exact).

    Examples
    --------
    >>> import sympy
    >>> u = sympy.Symbol("u")
    >>> assert_identity(sympy.tanh(u), u - u**3 / 3, u, order=5)
    >>> assert_identity(sympy.tanh(u), u - u**3 / 3, u, order=7)
    Traceback (most recent call last):
    ...
    AssertionError: identity fails to order 7 in u: lhs - rhs = 2*u**5/15 + O(u^7)
      [u^5]  lhs - rhs = 2/15
    """
    difference = sympy.sympify(lhs) - sympy.sympify(rhs)
    if order is None:
        expanded = sympy.expand(difference)
        if expanded == 0 or sympy.simplify(expanded.rewrite(sympy.exp)) == 0:
            return
        raise AssertionError(f"identity fails: lhs - rhs simplifies to {_show(sympy.simplify(expanded))}")
    var = sympy.Symbol(variable) if isinstance(variable, str) else variable
    if var is None:
        raise TypeError("an identity to an order needs the series variable")
    coefficients = _coefficients(difference, var, order)
    nonzero = [(j, c) for j, c in enumerate(coefficients) if sympy.simplify(c) != 0]
    if nonzero:
        leading = " + ".join(str(sympy.simplify(c) * var**j) for j, c in nonzero[:3])
        lines = [f"identity fails to order {order} in {var}: lhs - rhs = {_show(leading)}"
                 f"{' + ...' if len(nonzero) > 3 else ''} + O({var}^{order})"]
        lines += [f"  [{var}^{j}]  lhs - rhs = {_show(sympy.simplify(c))}" for j, c in nonzero[:_SHOWN]]
        raise AssertionError("\n".join(lines))


def _orders(value: Any) -> Counter:
    """``{order: multiplicity}`` of a Spectrum, bands, a mapping or a list of orders."""
    if isinstance(value, Spectrum):
        value = value.bands
    if isinstance(value, Mapping):
        return Counter({int(k): int(v) for k, v in value.items() if v})
    items = list(value)
    if items and isinstance(items[0], Band):
        return Counter({b.order: b.multiplicity for b in items})
    if items and isinstance(items[0], (tuple, list)):
        out: Counter = Counter()
        for order, multiplicity in items:
            out[int(order)] += int(multiplicity)
        return out
    return Counter(int(v) for v in items)


def assert_contact_orders(computed: Any, expected: Any, *, kernel: int | None = None) -> None:
    """Assert the contact orders (Smith orders over ``k[[t]]``) with their multiplicities.

    Parameters
    ----------
    computed : Spectrum, list of Band, mapping or sequence
        Typically the result of :func:`symattn.native_spectrum`; or
        ``{order: multiplicity}``, ``[(order, multiplicity), ...]`` or the list
        of orders with repetition.
    expected : mapping or sequence
        The same forms, e.g. Theorem 4's ``{0: d^2, beta_i: r_i(2d - r_i)}``.
    kernel : int, optional
        Also assert the exact kernel dimension (needs a Spectrum).

    Raises
    ------
    AssertionError
        With a table of every order, its computed and expected multiplicity,
        the differing rows marked.

    Examples
    --------
    >>> assert_contact_orders([0, 0, 1, 5], {0: 2, 1: 1, 5: 1})
    >>> assert_contact_orders([(0, 4), (1, 3), (5, 3)], [(0, 4), (1, 3), (3, 3)])
    Traceback (most recent call last):
    ...
    AssertionError: contact orders differ (order: computed vs expected multiplicity):
      t^0   4  4
      t^1   3  3
      t^3   0  3  <-- differs
      t^5   3  0  <-- differs
    """
    a, b = _orders(computed), _orders(expected)
    problems = []
    if a != b:
        rows = [f"  t^{k:<3} {a.get(k, 0):>2} {b.get(k, 0):>2}" + ("  <-- differs" if a.get(k, 0) != b.get(k, 0) else "")
                for k in sorted(set(a) | set(b))]
        problems.append("contact orders differ (order: computed vs expected multiplicity):\n" + "\n".join(rows))
    if kernel is not None:
        if not isinstance(computed, Spectrum):
            raise TypeError("kernel= needs a Spectrum (the result of native_spectrum)")
        if computed.kernel != kernel:
            problems.append(f"kernel dimension: computed {computed.kernel}, expected {kernel}")
    if problems:
        if isinstance(computed, Spectrum):
            problems.append(f"(method {computed.method}, bank {computed.bank_size}, truncation "
                            f"t^{computed.order}, certified {computed.certified}, undecided "
                            f"{computed.undecided})")
        raise AssertionError("\n".join(problems))


def assert_sharp_degree(arch: Architecture, expected: int, eta: EffectiveParams | None = None, *,
                        lower_jets_independent: bool | None = True, **options: Any) -> JetResult:
    """Assert the least jet degree ``N`` with ``D T_N`` injective (Theorem 3).

    Parameters
    ----------
    arch : Architecture
        The effective architecture.
    expected : int
        The expected least degree, e.g. ``2k 3^(D-1) + 1``.
    eta : EffectiveParams, optional
        The marked tuple (default: a seeded generic one).
    lower_jets_independent : bool or None
        Also assert whether every lower jet is independent of ``M_D``
        (None: do not check).
    **options
        Passed to :func:`symattn.sharp_degree` (``seed``, ``method``, ``rays``...).

    Returns
    -------
    JetResult
        The computed result, for further assertions.

    Raises
    ------
    AssertionError
        With the computed degree, the cumulative rank profile against the
        number of parameters, and the method.

    Examples
    --------
    >>> from symattn import Architecture
    >>> r = assert_sharp_degree(Architecture.uniform(1, 1, 1, 2, "exp"), 3)
    >>> assert_sharp_degree(Architecture.uniform(1, 1, 1, 2, "exp"), 5)
    Traceback (most recent call last):
    ...
    AssertionError: sharp jet degree: computed 3, expected 5 (2 parameters, modular ranks, 2 rays)
      rank of D T_N by degree N: N=0: 0, N=1: 1, N=2: 1, N=3: 2
      note: ...
    """
    result = sharp_degree(arch, eta, hint=options.pop("hint", expected), **options)
    problems = []
    if result.sharp_degree != expected:
        problems.append(f"sharp jet degree: computed {result.sharp_degree}, expected {expected} "
                        f"({result.parameters} parameters, {result.method} ranks, {result.rays} rays)")
    if lower_jets_independent is not None and result.lower_jets_independent_of_last != lower_jets_independent:
        problems.append(f"lower jets independent of M_D: computed {result.lower_jets_independent_of_last}, "
                        f"expected {lower_jets_independent}")
    if problems:
        profile = ", ".join(f"N={N}: {rank}" for N, rank in enumerate(result.profile))
        problems.append(f"  rank of D T_N by degree N: {profile}")
        problems += [f"  note: {note}" for note in result.notes]
        raise AssertionError("\n".join(problems))
    return result


def assert_fiber(L: Any, M: Sequence[Any], normalizer: Any, tokens: int, fiber: str, *,
                 sign_flip_layers: Sequence[int] | None = None, free_layers: Sequence[int] | None = None,
                 first_collapse: int | None | str = "any", verified: bool = True, **options: Any) -> Fiber:
    """Assert the effective fiber of ``(L, M_1..M_D)`` (Theorems 1-2) and its verification.

    Parameters
    ----------
    L, M, normalizer, tokens
        As for :func:`symattn.effective_fiber`.
    fiber : str
        The expected kind: ``"singleton"``, ``"sign-orbit"``, ``"free-suffix"``,
        ``"zero-readout"`` or ``"outside-hypotheses"``.
    sign_flip_layers, free_layers : sequence of int, optional
        The expected layers (1-based); not checked when omitted.
    first_collapse : int or None, optional
        The expected first collapsed layer; not checked when ``"any"``.
    verified : bool
        Whether the computation must confirm the answer (default True).
    **options
        Passed to :func:`symattn.effective_fiber` (``seed``, ``rays``).

    Returns
    -------
    Fiber
        The computed fiber.

    Raises
    ------
    AssertionError
        Listing each differing field, the theorem used, the sentence and every
        piece of computed evidence.

    Examples
    --------
    >>> assert_fiber([[1, 0]], [[[1, 2], [0, 1]]], "cosh", 2, "sign-orbit", sign_flip_layers=[1]).theorem
    'Theorem 1'
    >>> assert_fiber([[1, 0]], [[[1, 2], [0, 1]]], "exp", 2, "sign-orbit")
    Traceback (most recent call last):
    ...
    AssertionError: fiber: computed singleton, expected sign-orbit
      Theorem 1: ...
    """
    result = effective_fiber(L, M, normalizer, tokens, **options)
    wanted = {"fiber": fiber, "verified": verified}
    if sign_flip_layers is not None:
        wanted["sign_flip_layers"] = list(sign_flip_layers)
    if free_layers is not None:
        wanted["free_layers"] = list(free_layers)
    if first_collapse != "any":
        wanted["first_collapse"] = first_collapse
    problems = [f"{field}: computed {getattr(result, field)}, expected {value}"
                for field, value in wanted.items() if getattr(result, field) != value]
    if problems:
        problems.append(f"  {result.theorem}: {result.sentence}")
        problems += [f"  evidence {'ok' if e.ok else 'FAILED'}: {e.label}: {e.detail}" for e in result.evidence]
        raise AssertionError("\n".join(problems))
    return result
