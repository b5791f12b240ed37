"""Column-reduced bases of a series Jacobian over Q[[t]], and their proof from the model.

Where the valuations of the visible columns of ``J(t)`` do not meet its modular
Smith orders (columns whose leading coefficients depend on each other: a
variant layer without the divisibility of App. D.2, a non-separating bank),
:mod:`symattn.analyses.spectrum` reduces the columns: elementary column
operations ``col_f -= sum_i c_i t^(v_f - v_i) col_i`` with rational ``c_i``
(reconstructed from their residues modulo one or more primes, by the Chinese
remainder theorem) raise a column's valuation while its leading coefficient
depends on earlier ones (:func:`reduce_columns`). They have determinant 1, so
the change is unimodular over Q[[t]]; when the reduced valuations equal the
modular Smith orders, proving each reduced column zero over Q below its
valuation (:func:`prove_reduced_orders`, multi-modular with an a-priori
majorant height bound on the same graph) certifies the orders, exactly as the
unreduced columns are proved by :func:`symattn.analyses.column_proof.prove_column_orders`.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable, Sequence

import numpy as np

from symattn.core.algebras.modular import PrimeField, UnluckyPrime
from symattn.core.algebras.series import SeriesAlgebra
from symattn.core.certify import LowerBound, primes_below, proved_vanishing
from symattn.model.architecture import Architecture
from symattn.analyses.collapse import bank_jacobian
from symattn.analyses.column_proof import path_majorant

__all__ = ["RECONSTRUCTION_PRIMES", "rational_reconstruction", "combine", "column_operation", "reduce_columns",
           "reduced_height_bound", "prove_reduced_orders"]

#: Primes (at most) whose residues rebuild the rational column relations (CRT).
RECONSTRUCTION_PRIMES = 2

Terms = list[tuple[int, int, Fraction]]


def rational_reconstruction(a: int, p: int) -> Fraction | None:
    """Rational reconstruction of ``a`` mod ``p`` (numerator and denominator below
    ``sqrt(p / 2)``), or None.

    Parameters
    ----------
    a : int
        A residue.
    p : int
        The prime.

    Returns
    -------
    Fraction or None

    Examples
    --------
    >>> rational_reconstruction(3 * pow(7, -1, 1009) % 1009, 1009)
    Fraction(3, 7)
    """
    bound = math.isqrt(p // 2)
    r0, r1, s0, s1 = p, int(a) % p, 0, 1
    while r1 > bound:
        q = r0 // r1
        r0, r1, s0, s1 = r1, r0 - q * r1, s1, s0 - q * s1
    if s1 == 0 or abs(s1) > bound:
        return None
    return Fraction(r1, s1)


def combine(J: np.ndarray, field: PrimeField, terms: Terms) -> np.ndarray:
    """``sum c t^s J[:, :, j]`` over ``terms = [(j, s, c)]``, mod p: shape ``(N, rows)``.

    Parameters
    ----------
    J : numpy.ndarray
        Series coefficients mod ``p``, ``(N, rows, k)``.
    field : PrimeField
        The field ``F_p``.
    terms : list of tuple
        ``(column, shift, coefficient)``.

    Returns
    -------
    numpy.ndarray
        ``(N, rows)``.
    """
    N = J.shape[0]
    out = np.zeros(J.shape[:2], dtype=np.int64)
    for j, shift, c in terms:
        if shift < N:
            out[shift:] = field.reduce(out[shift:] + field.convert(c)[()] * J[: N - shift, :, j])
    return out


def column_operation(terms: list[Terms], vals: Sequence[int], f: int, multiples: Sequence[tuple[int, Fraction]]) -> Terms:
    """Column ``f`` minus ``q t^(vals[f] - vals[j])`` times column ``j`` for each ``(j, q)`` of
    ``multiples``, as terms ``(original column, shift, coefficient)``: like terms added, zeros dropped.

    Parameters
    ----------
    terms : list
        Every column's terms.
    vals : sequence of int
        Every column's valuation.
    f : int
        The column operated on.
    multiples : sequence of tuple
        ``(j, q)``: the columns subtracted and their coefficients.

    Returns
    -------
    list of tuple
        The new column's terms.

    Examples
    --------
    >>> column_operation([[(0, 0, Fraction(1))], [(1, 0, Fraction(1))]], [2, 1], 0, [(1, Fraction(3))])
    [(0, 0, Fraction(1, 1)), (1, 1, Fraction(-3, 1))]
    """
    new = list(terms[f])
    for j, q in multiples:
        new += [(a, shift + vals[f] - vals[j], -q * x) for a, shift, x in terms[j]]
    merged: dict = {}
    for a, shift, x in new:
        merged[(a, shift)] = merged.get((a, shift), 0) + x
    return [(a, shift, x) for (a, shift), x in sorted(merged.items()) if x]


def _leading_forms(cols: list, vals: list[int], perm: list[int], fields: list[PrimeField]) -> list:
    """The reduced echelon form (mod each prime) of the leading coefficients, columns in ``perm``."""
    import flint

    forms = []
    for F, cs in zip(fields, cols):
        lead = np.stack([cs[j][vals[j]] for j in perm], axis=1)
        rr, rank = flint.nmod_mat(lead.tolist(), F.p).rref()
        piv, i = [], 0
        for c in range(len(perm)):
            if i < rank and int(rr[i, c]) != 0:
                piv.append(c)
                i += 1
        forms.append((rr, rank, piv))
    return forms


def _relation(forms: list, primes: list[int], free: int, pivots: list[int]) -> list[Fraction] | None:
    """The rational coefficients expressing the free leading column by the pivot ones (CRT and
    rational reconstruction), or None when a reconstruction fails."""
    modulus = math.prod(primes)
    out = []
    for i in range(len(pivots)):
        residue = 0
        for (rr, _, _), p in zip(forms, primes):  # Chinese remainder theorem
            m = modulus // p
            residue += int(rr[i, free]) * m * pow(m, -1, p)
        if residue % modulus == 0:
            out.append(Fraction(0))
            continue
        q = rational_reconstruction(residue % modulus, modulus)
        if q is None:
            return None
        out.append(q)
    return out


def reduce_columns(Js: list[np.ndarray], order: int, primes: list[int]) -> tuple[list[Terms], list[int]] | None:
    """A column-reduced basis of ``J`` over F_p[[t]] with rational coefficients.

    ``Js`` is the same Jacobian mod each prime of ``primes``. Returns the columns as
    term lists ``[(j, shift, c)]`` and their valuations, or None (the primes disagree,
    a reconstruction failed, or a valuation reached the truncation).

    Parameters
    ----------
    Js : list of numpy.ndarray
        The Jacobian mod each prime, ``(N, rows, k)``.
    order : int
        The truncation ``N``.
    primes : list of int
        The primes.

    Returns
    -------
    tuple or None
        ``(terms, valuations)``, or None.
    """
    fields = [PrimeField(p) for p in primes]
    algebras = [SeriesAlgebra(F, order) for F in fields]
    k = Js[0].shape[2]
    terms: list[Terms] = [[(j, 0, Fraction(1))] for j in range(k)]
    cols = [[J[:, :, j] for j in range(k)] for J in Js]
    vals = [int(algebras[0].valuation(c).min()) for c in cols[0]]
    for _ in range(k * order):
        if max(vals) >= order:
            return None
        perm = sorted(range(k), key=lambda j: (vals[j], j))
        forms = _leading_forms(cols, vals, perm, fields)
        if len({(rank, tuple(piv)) for _, rank, piv in forms}) != 1:
            return None  # the primes see different leading ranks
        rank, pivots = forms[0][1], forms[0][2]
        if rank == k:
            return terms, vals
        free = next(c for c in range(k) if c not in pivots)
        coefficients = _relation(forms, primes, free, pivots)
        if coefficients is None:
            return None
        f = perm[free]
        terms[f] = column_operation(terms, vals, f, [(perm[c], q) for c, q in zip(pivots, coefficients) if q])
        for cs, J, F in zip(cols, Js, fields):
            cs[f] = combine(J, F, terms[f])
        v = {int(A.valuation(cs[f]).min()) for cs, A in zip(cols, algebras)}
        if len(v) != 1 or min(v) <= vals[f]:
            return None  # the reconstructed relation is not the modular one
        vals[f] = v.pop()
    return None


def reduced_height_bound(arch: Architecture, bank: np.ndarray, U, W, V, order: int) -> tuple[int, int]:
    """A-priori ``(H, D)``: every coefficient ``c`` of ``t^m``, ``m < order``, of every entry of
    ``J(t)`` along ``Q = t U, K = t W`` has ``D c`` integral and ``|c| <= H`` (majorant
    arithmetic on the same graph, every native entry moved).

    Parameters
    ----------
    arch : Architecture
        The architecture.
    bank : numpy.ndarray
        Input banks ``X``.
    U, W, V
        The path.
    order : int
        The truncation.

    Returns
    -------
    tuple of int
        ``(H, D)``.
    """
    def coefficients(block, value):
        zero = np.zeros(np.shape(value), dtype=int)
        return [zero, value] if block.is_factor else [value, zero]

    out = path_majorant(arch, bank, U, W, V, order, coefficients)
    return max(out.height[1]), math.lcm(*out.denominator[1])


def prove_reduced_orders(arch: Architecture, bank: np.ndarray, U, W, V, columns: Sequence[int],
                         terms: list[Terms], orders: Sequence[int],
                         say: Callable[[str], None] | None = None) -> LowerBound:
    """Prove over Q that each reduced column (``terms`` over the native ``columns``) vanishes
    below its order: multi-modular, primes until their product exceeds twice an a-priori bound.
    Returns the proof's :class:`~symattn.core.certify.LowerBound` (one bound for every order).

    Parameters
    ----------
    arch : Architecture
        The architecture.
    bank : numpy.ndarray
        Input banks ``X``.
    U, W, V
        The path.
    columns : sequence of int
        The native columns the terms index.
    terms : list
        The reduced columns' terms.
    orders : sequence of int
        The orders to prove.
    say : callable, optional
        Progress lines.

    Returns
    -------
    LowerBound
    """
    say = say or (lambda msg: None)
    top = max(orders)
    wanted = tuple(sorted(set(int(o) for o in orders) - {0}))
    if not top:
        return LowerBound("proved", 0)
    H, D = reduced_height_bound(arch, bank, U, W, V, top)
    bound = 0
    for t in terms:
        L = math.lcm(*(x.denominator for _, _, x in t))
        bound = max(bound, sum(abs(x.numerator) * (L // x.denominator) for _, _, x in t) * D * H)
    count = 1
    while not proved_vanishing(bound, primes_below(2**23, count)):
        count += 1
    say(f"columns below their orders (up to t^{top}): height 2^{bound.bit_length()}, {count} primes")
    for p in primes_below(2**23, count):
        A = SeriesAlgebra(PrimeField(p), top)
        try:
            J = bank_jacobian(arch, bank, U, W, V, A, columns, verify=0)
            cols = [combine(J, A.field, t) for t in terms]
        except UnluckyPrime:  # a denominator divisible by p
            return LowerBound("unlucky", count, wanted)
        if any(not A.field.is_zero(c[:o]).all() for c, o in zip(cols, orders)):
            return LowerBound("refuted", count, wanted)
    return LowerBound("proved", count, wanted, (bound,) * len(wanted), (tuple(primes_below(2**23, count)),) * len(wanted))
