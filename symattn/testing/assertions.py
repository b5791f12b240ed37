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
* :func:`assert_contact_orders`: the Smith orders of the native spectrum of any
  architecture (Theorem 4 for the paper's stack; skips, masks and several heads
  alike) against ``{order: multiplicity}``.
* :func:`assert_sharp_degree`: the least jet degree with injective
  differential (Theorem 3).
* :func:`assert_fiber`: the fiber of a score tuple (Theorems 1-2), verified.

**One shape.** The three assertions about an architecture take it first, in one
of the forms of :func:`as_architecture` (an
:class:`~symattn.model.architecture.Architecture`, the TOML text of a ``--spec``
or a mapping of :meth:`Architecture.uniform <symattn.model.architecture.Architecture.uniform>`'s
keywords), compute the object themselves, compare it with the expected value
in one form (``{order: multiplicity}``, an ``int``, a fiber kind of
:data:`~symattn.analyses.fibers.FIBERS`), and return the computed result. Every
other keyword is an option of the computation (:func:`~symattn.native_spectrum`,
:func:`~symattn.sharp_degree`, :func:`~symattn.analyses.fibers.fiber`) and is
checked against its signature. A value in another form raises
:class:`TypeError` (wrong type) or :class:`ValueError` (wrong value) naming the
expected form; a computed answer that differs raises :class:`AssertionError`;
a fiber check that could not be decided within what is proved raises
:class:`~symattn.core.errors.Undecided` (neither passed nor failed).

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

from symattn.analyses.fibers import FIBERS, Fiber, fiber as compute_fiber
from symattn.analyses.jets import JetResult, sharp_degree
from symattn.analyses.spectrum import Spectrum, native_spectrum
from symattn.core.errors import Undecided
from symattn.core.validate import BadType, require_int, shown
from symattn.model.parameters import EffectiveParams
from symattn.testing.forms import (ARCHITECTURE_FORMS, FIBER_STATUSES, as_architecture, expected_orders, layer_list,
                                   options_of)

__all__ = [
    "ARCHITECTURE_FORMS",
    "FIBER_STATUSES",
    "as_architecture",
    "assert_contact_orders",
    "assert_fiber",
    "assert_identity",
    "assert_series_equal",
    "assert_sharp_degree",
]

#: At most this many differing coefficients or entries are listed in a message.
_SHOWN = 10


def _expression(value: Any, name: str) -> sympy.Expr:
    """``value`` as a sympy object, without ever parsing text (a string is refused: it would be
    evaluated; parse it with :func:`symattn.core.parse.parse_expression`)."""
    if isinstance(value, (str, bytes)):
        raise BadType(f"{name} must be a sympy expression or a number, not text (parse text with "
                      f"symattn.core.parse.parse_expression), got {shown(value)}")
    try:
        return sympy.sympify(value, strict=True)
    except (sympy.SympifyError, TypeError, ValueError):
        raise BadType(f"{name} must be a sympy expression or a number, got {shown(value)}") from None


def _variable(variable: Any) -> "sympy.Symbol | None":
    if variable is None or isinstance(variable, sympy.Symbol):
        return variable
    if isinstance(variable, str) and variable.isidentifier():
        return sympy.Symbol(variable)
    raise BadType(f"variable must be a sympy Symbol or a name such as 't', got {shown(variable)}")


def _coefficients(series: Any, variable: sympy.Symbol | None, order: int | None, name: str = "series") -> list:
    """Coefficient list of a series given as a sequence or as a sympy expression."""
    if order is not None:
        order = require_int(order, "order", low=0, high=10_000)
    if not isinstance(series, (sympy.Basic, Sequence, np.ndarray)) or isinstance(series, (str, bytes)):
        raise BadType(f"{name} must be a sequence of coefficients or a sympy expression, got {shown(series)}")
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
        return sympy.expand(_expression(a, "a coefficient") - _expression(b, "a coefficient")) == 0
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
    var = _variable(variable)
    a, b = _coefficients(actual, var, order, "actual"), _coefficients(expected, var, order, "expected")
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
    difference = _expression(lhs, "lhs") - _expression(rhs, "rhs")
    if order is None:
        expanded = sympy.expand(difference)
        if expanded == 0 or sympy.simplify(expanded.rewrite(sympy.exp)) == 0:
            return
        raise AssertionError(f"identity fails: lhs - rhs simplifies to {_show(sympy.simplify(expanded))}")
    var = _variable(variable)
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


def assert_contact_orders(arch: Any, expected: Mapping[int, int], *, kernel: int | None = None,
                          **options: Any) -> Spectrum:
    """Assert the contact orders (Smith orders over ``k[[t]]``) of the native spectrum of ``arch``.

    Parameters
    ----------
    arch : Architecture, spec or mapping
        The architecture (:func:`as_architecture`); its spectrum is computed by
        :func:`symattn.native_spectrum`.
    expected : mapping
        ``{order: multiplicity}``, e.g. Theorem 4's ``{0: d^2, beta_i: r_i(2d - r_i)}``.
    kernel : int, optional
        Also assert the exact kernel dimension.
    **options
        Options of :func:`symattn.native_spectrum` (``bank``, ``seed``, ``method``, ``order``, ...).

    Returns
    -------
    Spectrum
        The computed spectrum, for further assertions.

    Raises
    ------
    AssertionError
        With a table of every order, its computed and expected multiplicity,
        the differing rows marked.
    TypeError, ValueError
        For an argument in another form (a list of orders, a Spectrum, an unknown option).

    Examples
    --------
    >>> from symattn import Architecture
    >>> arch = Architecture.uniform(1, 2, 1, 2, "exp")
    >>> assert_contact_orders(arch, {0: 4, 1: 3}, kernel=1).certified
    True
    >>> assert_contact_orders(arch, {0: 4, 3: 3})
    Traceback (most recent call last):
    ...
    AssertionError: contact orders differ (order: computed vs expected multiplicity):
      t^0    4  4
      t^1    3  0  <-- differs
      t^3    0  3  <-- differs
    (method modular, bank ..., truncation t^..., certified True, undecided 0)
    >>> assert_contact_orders(arch, [0, 1, 5])
    Traceback (most recent call last):
    ...
    symattn.core.validate.BadType: expected contact orders must be a mapping {order: multiplicity}, ...
    """
    architecture = as_architecture(arch)
    b = expected_orders(expected)
    if kernel is not None:
        kernel = require_int(kernel, "kernel", low=0)
    spectrum = native_spectrum(architecture, **options_of(native_spectrum, options, ("arch",)))
    a = Counter({band.order: band.multiplicity for band in spectrum.bands if band.multiplicity})
    problems = []
    if a != b:
        rows = [f"  t^{k:<3} {a.get(k, 0):>2} {b.get(k, 0):>2}" + ("  <-- differs" if a.get(k, 0) != b.get(k, 0) else "")
                for k in sorted(set(a) | set(b))]
        problems.append("contact orders differ (order: computed vs expected multiplicity):\n" + "\n".join(rows))
    if kernel is not None and spectrum.kernel != kernel:
        problems.append(f"kernel dimension: computed {spectrum.kernel}, expected {kernel}")
    if problems:
        problems.append(f"(method {spectrum.method}, bank {spectrum.bank_size}, truncation "
                        f"t^{spectrum.order}, certified {spectrum.certified}, undecided {spectrum.undecided})")
        raise AssertionError("\n".join(problems))
    return spectrum


def assert_sharp_degree(arch: Any, expected: int, *, eta: EffectiveParams | None = None,
                        lower_jets_independent: bool | None = True, **options: Any) -> JetResult:
    """Assert the least jet degree ``N`` with ``D T_N`` injective (Theorem 3).

    Parameters
    ----------
    arch : Architecture, spec or mapping
        The architecture (:func:`as_architecture`).
    expected : int
        The expected least degree, e.g. ``2k 3^(D-1) + 1``.
    eta : EffectiveParams, optional
        The marked tuple (default: a seeded generic one).
    lower_jets_independent : bool or None
        Also assert whether every lower jet is independent of ``M_D``
        (None: do not check).
    **options
        Options of :func:`symattn.sharp_degree` (``seed``, ``method``, ``rays``, ``max_degree``...).

    Returns
    -------
    JetResult
        The computed result, for further assertions.

    Raises
    ------
    AssertionError
        With the computed degree, the cumulative rank profile against the
        number of parameters, and the method.
    TypeError, ValueError
        For an argument in another form.

    Examples
    --------
    >>> from symattn import Architecture
    >>> r = assert_sharp_degree(Architecture.uniform(1, 1, 1, 2, "exp"), 3)
    >>> assert_sharp_degree({"depth": 1, "width": 1, "rank": 1, "tokens": 2}, 5)
    Traceback (most recent call last):
    ...
    AssertionError: sharp jet degree: computed 3, expected 5 (2 parameters, modular ranks, 2 rays)
      rank of D T_N by degree N: N=0: 0, N=1: 1, N=2: 1, N=3: 2
      note: ...
    """
    architecture = as_architecture(arch)
    expected = require_int(expected, "the expected sharp degree", low=0)
    if eta is not None and not isinstance(eta, EffectiveParams):
        raise BadType(f"eta must be EffectiveParams (or None for a generic tuple), got {shown(eta)}")
    if lower_jets_independent not in (True, False, None):
        raise BadType(f"lower_jets_independent must be True, False or None, got {shown(lower_jets_independent)}")
    options = options_of(sharp_degree, options, ("arch", "eta"))
    result = sharp_degree(architecture, eta, **{"hint": expected, **options})
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


def assert_fiber(arch: Any, L: Any, M: Sequence[Any], expected: str, *,
                 sign_flip_layers: Sequence[int] | None = None, free_layers: Sequence[int] | None = None,
                 first_collapse: int | None | str = "any", status: str | None = "verified",
                 **options: Any) -> Fiber:
    """Assert the fiber of the score tuple ``(L, M_1..M_D)`` of ``arch`` (Theorems 1-2) and its verification.

    Parameters
    ----------
    arch : Architecture, spec or mapping
        The architecture (:func:`as_architecture`); its normalizers and token count are the tuple's.
    L, M
        The readout and the scores, as for :func:`symattn.analyses.fibers.fiber`.
    expected : str
        The expected kind, one of :data:`~symattn.analyses.fibers.FIBERS` (``"singleton"``,
        ``"sign-orbit"``, ``"free-suffix"``, ``"zero-readout"``, ...).
    sign_flip_layers, free_layers : sequence of int, optional
        The expected layers (1-based); not checked when omitted.
    first_collapse : int or None, optional
        The expected first collapsed layer; not checked when ``"any"``.
    status : str or None
        The expected :attr:`~symattn.analyses.fibers.Fiber.status` (default ``"verified"``: every
        computed check held), one of :data:`FIBER_STATUSES`; None: not checked.
    **options
        Options of :func:`symattn.analyses.fibers.fiber` (``seed``, ``rays``, ``search_degree``,
        ``verify``, ``max_degree``), each honoured.

    Returns
    -------
    Fiber
        The computed fiber.

    Raises
    ------
    AssertionError
        Listing each differing field, the theorem used, the sentence and every
        piece of computed evidence.
    symattn.core.errors.Undecided
        When everything matches but a check is undecided (no witness within the degree
        a theorem proves on the rays tried): neither a pass nor a failure. Pass
        ``search_degree`` or another ``seed``, or ``status="undecided"`` to accept it.
    TypeError, ValueError
        For an argument in another form (``"singelton"`` is not a kind).

    Examples
    --------
    >>> from symattn import Architecture
    >>> arch = Architecture.uniform(1, 2, 1, 2, "cosh")
    >>> assert_fiber(arch, [[1, 0]], [[[1, 2], [0, 1]]], "sign-orbit", sign_flip_layers=[1]).theorem
    'Theorem 1'
    >>> assert_fiber(Architecture.uniform(1, 2, 1, 2, "exp"), [[1, 0]], [[[1, 2], [0, 1]]], "sign-orbit")
    Traceback (most recent call last):
    ...
    AssertionError: fiber: computed singleton, expected sign-orbit
      Theorem 1: ...
    >>> assert_fiber(arch, [[1, 0]], [[[1, 2], [0, 1]]], "singelton")
    Traceback (most recent call last):
    ...
    ValueError: 'singelton' is not a fiber kind; expected one of singleton, sign-orbit, ...
    """
    architecture = as_architecture(arch)
    if not isinstance(expected, str):
        raise BadType(f"the expected fiber must be a kind (a string: {', '.join(FIBERS)}), got {shown(expected)}")
    if expected not in FIBERS:
        raise ValueError(f"{expected!r} is not a fiber kind; expected one of {', '.join(FIBERS)}")
    if status is not None and status not in FIBER_STATUSES:
        raise ValueError(f"status must be one of {', '.join(FIBER_STATUSES)} or None, got {shown(status)}")
    depth = architecture.depth
    wanted: dict[str, Any] = {"fiber": expected}
    if sign_flip_layers is not None:
        wanted["sign_flip_layers"] = layer_list(sign_flip_layers, "sign_flip_layers", depth)
    if free_layers is not None:
        wanted["free_layers"] = layer_list(free_layers, "free_layers", depth)
    if first_collapse != "any":
        wanted["first_collapse"] = None if first_collapse is None else require_int(
            first_collapse, "first_collapse", 1, depth)
    hint = "; the expected verification is status= ('verified', 'undecided', ...)" if "verified" in options else ""
    result = compute_fiber(architecture, L, M, **options_of(compute_fiber, options, ("arch", "L", "M"), hint))
    problems = [f"{key}: computed {getattr(result, key)}, expected {value}"
                for key, value in wanted.items() if getattr(result, key) != value]
    undecided = not problems and status == "verified" and result.status == "undecided"
    if status is not None and result.status != status and not undecided:
        problems.append(f"status: computed {result.status}, expected {status}")
    if problems or undecided:
        lines = problems or [f"fiber {result.fiber}: a check is undecided (nothing failed)"]
        lines.append(f"  {result.theorem}: {result.sentence}")
        lines += [f"  evidence {e.status}: {e.label}: {e.detail}" for e in result.evidence]
        if undecided:
            raise Undecided("\n".join(lines))
        raise AssertionError("\n".join(lines))
    return result
