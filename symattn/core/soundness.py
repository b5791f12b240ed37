"""The certificate machinery checks itself: majorant bounds against exact series.

A ``certified`` spectrum rests on a-priori height bounds from
:class:`~symattn.core.certify.MajorantSeries`: if an operation's bound were too
small, vanishing modulo the primes would no longer prove a coefficient zero.
:func:`majorant_soundness` draws random rational dual series ``x + delta x'``,
applies each operation of the network graphs (``add``, ``sub``, ``neg``, ``mul``,
``matmul``, ``sum``, ``transpose``, ``expand``, ``reciprocal``, ``phi``, ``const``)
both in majorant arithmetic and in exact dual series over Q (the ring of
:class:`~symattn.core.algebras.SeriesAlgebra`, a different code path), and
checks that every exact coefficient obeys its bound: ``D c`` integral,
``|c| <= H``, row and column sums of ``|c|`` within the row and column bounds,
and the constant term where the majorant claims one.
:func:`graph_soundness` does the same for a whole native graph on a collapse path.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Sequence

import numpy as np

from symattn.core.certify import HEIGHT_SHIFT, Majorant, MajorantSeries
from symattn.core.errors import CheckFailed

__all__ = ["OPERATIONS", "majorant_soundness", "dominates"]

#: The graph operations whose majorant rules :func:`majorant_soundness` checks.
OPERATIONS = ("const", "add", "sub", "neg", "mul", "matmul", "sum", "transpose", "expand",
              "reciprocal", "phi")


def _fraction(v) -> Fraction:
    if hasattr(v, "p") and hasattr(v, "q"):
        return Fraction(int(v.p), int(v.q))
    return Fraction(v)


def dominates(m: Majorant, exact: tuple[Any, Any], order: int) -> str:
    """Why the majorant ``m`` fails to bound the exact dual series ``exact = (x, x')`` (arrays
    ``(order, *shape)`` over Q, ``x' = None`` for zero); empty when it bounds every coefficient."""
    scale = 1 << HEIGHT_SHIFT
    for e, part in enumerate(exact):
        if part is None:
            continue
        arr = np.vectorize(_fraction, otypes=[object])(np.asarray(part, dtype=object))
        for j in range(order):
            coeffs = arr[j]
            for c in np.asarray(coeffs).reshape(-1):
                if (c * m.denominator[e][j]).denominator != 1:
                    return f"part {e}, u^{j}: {m.denominator[e][j]} c is not an integer for c = {c}"
                if abs(c) * scale > m.height[e][j]:
                    return f"part {e}, u^{j}: |c| = {abs(c)} exceeds the height {m.height[e][j] / scale:.6g}"
            if coeffs.ndim >= 2:
                mag = np.vectorize(abs, otypes=[object])(coeffs)
                if m.rows is not None and (mag.sum(axis=-1) * scale > m.rows[e][j]).any():
                    return f"part {e}, u^{j}: a row sum of |c| exceeds its bound"
                if m.cols is not None and (mag.sum(axis=-2) * scale > m.cols[e][j]).any():
                    return f"part {e}, u^{j}: a column sum of |c| exceeds its bound"
    if m.constant is not None:
        first = np.vectorize(_fraction, otypes=[object])(np.asarray(exact[0], dtype=object)[0])
        if any(c != m.constant for c in first.reshape(-1)):
            return f"the constant term is not the claimed {m.constant}"
    return ""


def _random(rng, shape, order: int, constant=None, zero_constant: bool = False, tangent: bool = True):
    """Random rational coefficient arrays of a dual series (value, tangent)."""
    def draw():
        num = rng.integers(-9, 10, size=shape)
        den = rng.integers(1, 7, size=shape)
        out = np.empty(shape, dtype=object)
        for idx in np.ndindex(*shape):
            out[idx] = Fraction(int(num[idx]), int(den[idx]))
        return out
    value = [draw() for _ in range(order)]
    if constant is not None:
        value[0] = np.full(shape, Fraction(constant), dtype=object)
    elif zero_constant:
        value[0] = np.full(shape, Fraction(0), dtype=object)
    dual = [draw() for _ in range(order)] if tangent else []
    return value, dual


def majorant_soundness(normalizers: Sequence, order: int = 16, seed: int = 0, trials: int = 2) -> list[str]:
    """Check every majorant rule of :data:`OPERATIONS` against exact dual series over Q on random
    rational inputs (``trials`` draws each; ``phi`` for each of ``normalizers``), to ``order``.

    Returns
    -------
    list of str
        One line per operation checked (``"mul: 2 draws bounded"``).

    Raises
    ------
    CheckFailed
        If an exact coefficient escapes its bound (the operation and the reason).

    Examples
    --------
    >>> from symattn.model.normalizer import Normalizer
    >>> majorant_soundness([Normalizer("exp")], order=4, trials=1)[-1]
    'phi (exp): 1 draws bounded'
    """
    from symattn.core.algebras import exact_series
    from symattn.model.interpreter import _DeltaSeries

    rng = np.random.default_rng(seed)
    M, A = MajorantSeries(order), exact_series(order)
    E = _DeltaSeries(A)

    def pair(value, dual):
        return M.series(value, dual), (A.series(value), A.series(dual) if dual else None)

    def check(name, m, exact):
        why = dominates(m, exact, order)
        if why:
            raise CheckFailed(f"the majorant of {name} does not bound the exact series ({why}): "
                              "the certificate's height bounds would be unsound")

    lines = []
    for op in OPERATIONS[:-1]:
        for _ in range(trials):
            if op == "reciprocal":
                c = Fraction(int(rng.integers(1, 5)) * (1 if rng.integers(2) else -1), int(rng.integers(1, 4)))
                mx, ex = pair(*_random(rng, (2, 3), order, constant=c))
                check(op, M.reciprocal(mx), E.reciprocal(ex))
                continue
            mx, ex = pair(*_random(rng, (2, 3), order))
            my, ey = pair(*_random(rng, (2, 3), order))
            if op == "const":
                v = _random(rng, (2, 3), 1, tangent=False)[0][0]
                check(op, M.const(v), (A.const(v), None))
            elif op in ("add", "sub", "mul"):
                check(op, getattr(M, op)(mx, my), getattr(E, op)(ex, ey))
            elif op == "neg":
                check(op, M.neg(mx), (A.neg(ex[0]), A.neg(ex[1])))
            elif op == "matmul":
                mz, ez = pair(*_random(rng, (3, 2), order))
                check(op, M.matmul(mx, mz), E.matmul(ex, ez))
            elif op == "sum":
                for axis in (-1, -2):
                    check(f"sum (axis {axis})", M.sum(mx, axis), E.sum(ex, axis))
            elif op == "transpose":
                check(op, M.transpose(mx), E.transpose(ex))
            elif op == "expand":
                check(op, M.expand(mx, -3), E.expand(ex, -3))
        lines.append(f"{op}: {trials} draws bounded")
    for phi in normalizers:
        for _ in range(trials):
            mx, ex = pair(*_random(rng, (2, 2), order, zero_constant=True))
            check(f"phi ({phi.name})", M.phi(mx, phi), E.phi(ex, phi))
        lines.append(f"phi ({phi.name}): {trials} draws bounded")
    return lines
