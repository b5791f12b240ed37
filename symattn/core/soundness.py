"""The certificate machinery checks itself: majorant bounds against exact series.

A ``certified`` spectrum rests on a-priori height bounds from
:class:`~symattn.core.certify.MajorantSeries`: if an operation's bound were too
small, vanishing modulo the primes would no longer prove a coefficient zero.
:func:`majorant_failures` draws random rational dual series ``x + delta x'``,
applies each operation of the network graphs (``add``, ``sub``, ``neg``, ``mul``,
``matmul``, ``sum``, ``transpose``, ``expand``, ``reciprocal``, ``phi``), alone and
composed, both in majorant arithmetic and in exact dual series over Q (a
different code path), and :func:`dominates` checks that every exact coefficient
obeys its bound: ``D c`` integral, ``|c| <= H``, row and column sums of ``|c|``
within the row and column bounds, and the constant term where the majorant
claims one. :func:`majorant_soundness` is the same as a check that raises.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Sequence

import numpy as np

from symattn.core.certify import HEIGHT_SHIFT, Majorant, MajorantSeries
from symattn.core.errors import CheckFailed

__all__ = ["OPERATIONS", "majorant_failures", "majorant_soundness", "dominates"]

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


def majorant_failures(normalizers: Sequence[Any], order: int = 16, seed: int = 0) -> list[str]:
    """Check every :class:`MajorantSeries` operation against exact dual series over Q.

    Random rational dual series ``x + delta x'`` (a few nonzero powers of ``u``) go through
    ``add``, ``sub``, ``neg``, ``mul``, ``matmul`` (with batch broadcasting), ``sum``,
    ``transpose``, ``expand``, ``reciprocal`` and ``phi`` (each of ``normalizers`` and its
    first derivative), alone and composed (a normalizer of a matrix product, a reciprocal of
    a row sum); the exact results come from :class:`~symattn.core.algebras.Tangent` over
    :func:`~symattn.core.algebras.exact_series` (a second code path: the dual-number rules
    on exact coefficients). Every coefficient ``c`` of ``delta^e u^j`` must have
    ``denominator[e][j] c`` integral and ``|c| <= height[e][j] / 2^HEIGHT_SHIFT``. Returns
    the failures (empty when every bound holds).

    >>> majorant_failures([], order=6)
    []
    """
    import random

    from symattn.core.algebras import Tangent, exact_series

    rng = random.Random(seed)
    A = exact_series(order)
    T, M = Tangent(A, 1), MajorantSeries(order)

    def rational(scale: int = 3) -> Fraction:
        return Fraction(rng.randint(-scale, scale), rng.randint(1, scale))

    def dual(shape, constant=None):
        powers = (1, 2, 3) if constant is not None else (0, 1, 2, 5)
        value = [np.zeros(shape, dtype=object) for _ in range(6)]
        tangent = [np.zeros(shape, dtype=object) for _ in range(6)]
        for j in powers:
            value[j] = np.vectorize(lambda _: rational(), otypes=[object])(np.zeros(shape))
        for j in (0, 1, 3):
            tangent[j] = np.vectorize(lambda _: rational(), otypes=[object])(np.zeros(shape))
        if constant is not None:
            value[0] = np.full(shape, constant, dtype=object)
        exact = T.variable(A.series(value), A.series([t[None] for t in tangent]))
        return exact, M.series(value, tangent)

    def holds(name, exact, bound) -> list[str]:
        parts = (A.coefficients(exact.value),
                 A.coefficients(T.full(exact))[:, 0] if exact.tangent is not None else None)
        why = dominates(bound, parts, order)
        return [f"{name}: {why}"] if why else []

    x, mx = dual((2, 3))
    y, my = dual((2, 3))
    z, mz = dual((3, 2))
    b, mb = dual((4, 3, 2))
    s, ms = dual((2, 3), constant=Fraction(3, 2))
    cases = [
        ("add", T.add(x, y), M.add(mx, my)), ("sub", T.sub(x, y), M.sub(mx, my)),
        ("neg", T.neg(x), M.neg(mx)), ("mul", T.mul(x, y), M.mul(mx, my)),
        ("matmul", T.matmul(x, z), M.matmul(mx, mz)),
        ("batched matmul", T.matmul(x, b), M.matmul(mx, mb)),
        ("sum -1", T.sum(x, -1), M.sum(mx, -1)), ("sum -2", T.sum(x, -2), M.sum(mx, -2)),
        ("transpose", T.transpose(x), M.transpose(mx)), ("expand", T.expand(x, -3), M.expand(mx, -3)),
        ("reciprocal", T.reciprocal(s), M.reciprocal(ms)),
        ("reciprocal of a row sum", T.reciprocal(T.sum(s, -1)), M.reciprocal(M.sum(ms, -1))),
        ("matmul of a transpose", T.matmul(T.transpose(x), y), M.matmul(M.transpose(mx), my)),
    ]
    # the normalizers need an argument with zero constant term
    w, mw = T.sub(x, T.const(A.coefficients(x.value)[0])), M.add(mx, M.neg(M.const(A.coefficients(x.value)[0])))
    mw = Majorant(mw.shape, [[0] + mw.height[0][1:], mw.height[1]], mw.exponents, mw.primes, Fraction(0))
    xz, mxz = T.matmul(w, T.transpose(w)), M.matmul(mw, M.transpose(mw))
    for phi in normalizers:
        for k in (0, 1):
            cases.append((f"phi {phi.name} (derivative {k})", T.phi(w, phi, k), M.phi(mw, phi, k)))
        cases.append((f"phi {phi.name} of a matrix product", T.phi(xz, phi), M.phi(mxz, phi)))
    failures = []
    for name, exact, bound in cases:
        failures += holds(name, exact, bound)
    return failures


def majorant_soundness(normalizers: Sequence, order: int = 16, seed: int = 0) -> list[str]:
    """:func:`majorant_failures` as a check: the cases bounded, or
    :class:`~symattn.core.errors.CheckFailed` naming the first failure.

    >>> from symattn.model.normalizer import Normalizer
    >>> majorant_soundness([Normalizer("exp")], order=4)[-1]
    'phi exp of a matrix product'
    """
    failures = majorant_failures(normalizers, order, seed)
    if failures:
        raise CheckFailed(f"a majorant does not bound the exact series ({failures[0]}): the certificate's "
                          "height bounds would be unsound")
    return _cases(normalizers)


def _cases(normalizers: Sequence) -> list[str]:
    names = ["add", "sub", "neg", "mul", "matmul", "batched matmul", "sum -1", "sum -2", "transpose", "expand",
             "reciprocal", "reciprocal of a row sum", "matmul of a transpose"]
    for phi in normalizers:
        names += [f"phi {phi.name} (derivative 0)", f"phi {phi.name} (derivative 1)",
                  f"phi {phi.name} of a matrix product"]
    return names
