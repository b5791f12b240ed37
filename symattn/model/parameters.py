"""Parameters of an architecture: native points, effective tuples, the reduction pi, banks.

Notation of the paper (Section 2, eq. 3, Appendix A.4): native weights
``Q_i, K_i`` in R^{d_{i-1} x r_i} and ``V_i`` in R^{d_i x d_{i-1}}; ``A_i = Q_i K_i^T``,
``P_0 = I``, ``P_i = V_i ... V_1``; the reduction ``pi`` gives the effective tuple
``M_i = P_{i-1}^T A_i P_{i-1}``, ``L = P_D`` (valid for rectangular or singular V).

A *point* of any :class:`~symattn.model.architecture.Architecture` is a dict from
block names (:attr:`~symattn.model.layers.Block.name`, the graph's input
names) to exact arrays; :class:`NativeParams` is the paper's form of a point
(the tuples ``Q``, ``K``, ``V``), and :func:`point_of` turns either into a dict.
All parameters are NumPy object arrays of :class:`fractions.Fraction` (exact);
any algebra embeds them with its ``const``. Flat native vectors list the
blocks in :attr:`~symattn.model.architecture.Architecture.blocks` order.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Sequence

import numpy as np

from symattn.core.errors import InternalError, SymattnError
from symattn.core.linalg import identity_matrix
from symattn.core.validate import require_int
from symattn.model.architecture import Architecture, require_architecture

__all__ = [
    "NativeParams", "EffectiveParams", "reduction", "random_native", "random_point", "random_bank",
    "rational_matrix", "random_rational_matrix", "generic_matrix", "check_generic", "exact_rationals", "native_path_values", "point_of",
    "path_point", "flat_vector", "OLD_PART_NAMES",
]


def rational_matrix(rows: Sequence[Sequence]) -> np.ndarray:
    """An object array of Fractions from nested lists of ints, Fractions or strings like ``"1/3"``.

    Parameters
    ----------
    rows : sequence of sequences
        Ints, Fractions or strings such as ``"1/3"`` (floats are refused).

    Returns
    -------
    numpy.ndarray
        A 2-D object array of Fractions.

    Raises
    ------
    BadType
        If ``rows`` is not nested lists.
    SymattnError
        For ragged rows or a float or non-rational entry.
    """
    from symattn.core.parse import parse_rational
    from symattn.core.validate import BadType, shown

    if isinstance(rows, (str, bytes)) or not isinstance(rows, (Sequence, np.ndarray)):
        raise BadType(f"a matrix must be nested lists of rationals (parse text with "
                      f"symattn.core.parse.parse_matrix), got {shown(rows)}")
    try:
        arr = np.asarray(rows, dtype=object)
    except ValueError:  # NumPy refuses ragged nesting
        raise SymattnError(f"a matrix must have rows of equal length, got {shown(rows)}") from None
    out = np.empty(arr.shape, dtype=object)
    for idx, v in np.ndenumerate(arr):
        if isinstance(v, float):
            raise SymattnError(f"float entry {v!r}: give exact rationals as integers or strings like '1/3'")
        if isinstance(v, (list, tuple, np.ndarray)):
            raise SymattnError(f"a matrix must have rows of equal length, got {shown(rows)}")
        out[idx] = parse_rational(v, "a matrix entry")  # its type and size checked before it is built
    return out


def exact_rationals(a) -> np.ndarray:
    """Exact Fractions of an array of ints, Fractions or binary floats
    (``Fraction(float)`` is exact: no rounding happens).

    Parameters
    ----------
    a : array-like

    Returns
    -------
    numpy.ndarray
        Object array of Fractions.
    """
    exact = lambda v: Fraction(v) if isinstance(v, (int, Fraction)) else Fraction(float(v))  # noqa: E731
    return np.vectorize(exact, otypes=[object])(np.asarray(a, dtype=object))


def random_rational_matrix(rng: random.Random, shape: tuple[int, ...], scale: int = 4) -> np.ndarray:
    """Entries ``a/b`` with ``a`` uniform in ``[-scale, scale]`` and ``b`` in ``[1, scale]``.

    Parameters
    ----------
    rng : random.Random
    shape : tuple of int
    scale : int, optional

    Returns
    -------
    numpy.ndarray
        Object array of Fractions.
    """
    out = np.empty(shape, dtype=object)
    for idx in np.ndindex(*shape):
        out[idx] = Fraction(rng.randint(-scale, scale), rng.randint(1, scale))
    return out


@dataclass
class NativeParams:
    """Native weights ``Q_i, K_i, V_i`` of the paper's stack (exact object arrays)."""

    Q: tuple[np.ndarray, ...]
    K: tuple[np.ndarray, ...]
    V: tuple[np.ndarray, ...]

    def as_dict(self) -> dict[str, np.ndarray]:
        out = {}
        for i, (q, k, v) in enumerate(zip(self.Q, self.K, self.V), 1):
            out.update({f"Q{i}": q, f"K{i}": k, f"V{i}": v})
        return out

    def flat(self) -> np.ndarray:
        return np.concatenate([a.reshape(-1) for a in self.as_dict().values()])

    def check(self, arch: Architecture) -> None:
        """Raise :class:`SymattnError` unless the shapes fit ``arch``."""
        _check_shapes(self.as_dict(), arch.native_shapes())

    @classmethod
    def from_point(cls, arch: Architecture, point: Mapping[str, Any]) -> "NativeParams":
        """The paper's form of a point of a stack whose layers have blocks ``Q_i, K_i, V_i``."""
        try:
            return cls(*(tuple(np.asarray(point[f"{c}{i}"], dtype=object) for i in range(1, arch.depth + 1))
                         for c in "QKV"))
        except KeyError as exc:
            raise SymattnError(f"the point has no block {exc.args[0]}: NativeParams holds one head "
                               "Q_i, K_i, V_i per layer; use a dict of blocks") from None


def _check_shapes(got: Mapping[str, np.ndarray], shapes) -> None:
    for name, shape in shapes:
        if name not in got or tuple(np.shape(got[name])) != tuple(shape):
            have = None if name not in got else tuple(np.shape(got[name]))
            raise SymattnError(f"{name} has shape {have}, the architecture needs {shape}")


@dataclass
class EffectiveParams:
    """Effective tuple ``(L, M_1, ..., M_D)``."""

    L: np.ndarray
    M: tuple[np.ndarray, ...]

    def as_dict(self) -> dict[str, np.ndarray]:
        return {"L": self.L, **{f"M{i}": m for i, m in enumerate(self.M, 1)}}

    def check(self, arch: Architecture) -> None:
        _check_shapes(self.as_dict(), arch.effective_shapes())


#: The names of the blocks of a layer outside its heads of release 0.1 (``gA1`` is now
#: ``attn_norm.gain1``), read by :func:`point_of` with a ``DeprecationWarning``.
OLD_PART_NAMES = {"gA": "attn_norm.gain", "sA": "attn_norm.shift", "gF": "mlp_norm.gain", "sF": "mlp_norm.shift",
                  "Fa": "mlp.in", "fa": "mlp.in_bias", "Fb": "mlp.out", "fb": "mlp.out_bias"}


def point_of(theta: "NativeParams | EffectiveParams | Mapping[str, Any]") -> dict[str, np.ndarray]:
    """A point as a dict of object arrays by block name (from :class:`NativeParams`,
    :class:`EffectiveParams` or a mapping).

    The names of norm and MLP blocks of release 0.1 (``gA1``, ``Fa1``, ...) are read as today's
    (``attn_norm.gain1``, ``mlp.in1``, ...; :data:`OLD_PART_NAMES`) with a ``DeprecationWarning``.

    Parameters
    ----------
    theta : NativeParams, EffectiveParams or mapping

    Returns
    -------
    dict

    Examples
    --------
    >>> sorted(point_of({"Q1": [[1]], "K1": [[2]]}))
    ['K1', 'Q1']
    """
    items = theta.as_dict() if hasattr(theta, "as_dict") else theta
    return {_current_name(name): np.asarray(value, dtype=object) for name, value in items.items()}


def _current_name(name: str) -> str:
    """Today's name of a block named ``name`` (an old name ``gA1`` is ``attn_norm.gain1``, with a warning)."""
    stem = name.rstrip("0123456789") if isinstance(name, str) else name
    if stem in OLD_PART_NAMES and stem != name:
        import warnings

        new = OLD_PART_NAMES[stem] + name[len(stem):]
        warnings.warn(f"the block name {name!r} is read as {new!r} (renamed in release 0.2)", DeprecationWarning,
                      stacklevel=3)
        return new
    return name


def flat_vector(arch: Architecture, blocks: Mapping[str, np.ndarray]) -> np.ndarray:
    """A flat native vector: the given blocks, zero elsewhere (exact).

    Parameters
    ----------
    arch : Architecture
    blocks : mapping
        Block name -> array (the others are zero).

    Returns
    -------
    numpy.ndarray
        Length ``arch.native_size``.
    """
    return np.concatenate([np.asarray(blocks[name], dtype=object).reshape(-1) if name in blocks
                           else np.full(a * b, Fraction(0), dtype=object)
                           for name, (a, b) in arch.native_shapes()])


def reduction(theta: NativeParams) -> EffectiveParams:
    """The reduction map pi of eq. (3): exact, for any (rectangular, singular) values.

    Parameters
    ----------
    theta : NativeParams

    Returns
    -------
    EffectiveParams
        ``L = V_D ... V_1`` and ``M_i = (V_{i-1} ... V_1)^T Q_i K_i^T (V_{i-1} ... V_1)``.

    Examples
    --------
    >>> arch = Architecture.uniform(2, 2, 1, 2, "exp")
    >>> eta = reduction(random_native(arch, seed=1))
    >>> eta.L.shape, len(eta.M)
    ((2, 2), 2)
    """
    P = identity_matrix(theta.Q[0].shape[0])
    M = []
    for q, k, v in zip(theta.Q, theta.K, theta.V):
        M.append(P.T.dot(q.dot(k.T)).dot(P))
        P = v.dot(P)
    return EffectiveParams(P, tuple(M))


def generic_matrix(rng: random.Random, shape: tuple[int, ...], seen: set | None = None) -> np.ndarray:
    """A seeded block drawn to avoid structure: entries ``a/b`` with ``a`` uniform in ``[-c, c]`` and ``b`` in
    ``[1, c]`` (``c = 4``, the distribution of :func:`random_rational_matrix`, or the least larger multiple of
    4 with at least twice as many distinct absolute values up to 4 as entries drawn so far), redrawn until
    the entry is nonzero, at most 4 in absolute value, and its absolute value is new: to the block, and to
    the whole point when the blocks share ``seen`` (the absolute values already used; updated). So no zero
    gain, no equal shifts, no two entries a sign flip or a swap of parts relates (documented in
    docs/theory.rst, "Points drawn to be generic").

    Parameters
    ----------
    rng : random.Random
    shape : tuple of int
    seen : set, optional
        The absolute values already used by the point (updated).

    Returns
    -------
    numpy.ndarray
        Object array of Fractions.

    Examples
    --------
    >>> m = generic_matrix(random.Random(0), (3, 3))
    >>> len({abs(v) for v in m.reshape(-1)}) == 9 and all(v != 0 and abs(v) <= 4 for v in m.reshape(-1))
    True
    """
    seen = set() if seen is None else seen
    count = int(np.prod(shape)) if shape else 1
    need, c = 2 * (len(seen) + count), 4
    while len({Fraction(a, b) for b in range(1, c + 1) for a in range(1, min(c, 4 * b) + 1)}) < need:
        c += 4
    out = np.empty(shape, dtype=object)
    for idx in np.ndindex(*shape):
        while True:
            v = Fraction(rng.randint(-c, c), rng.randint(1, c))
            if v != 0 and abs(v) <= 4 and abs(v) not in seen:
                break
        seen.add(abs(v))
        out[idx] = v
    return out


def check_generic(point: Mapping[str, np.ndarray], structural: Sequence[str] = ()) -> None:
    """The post-condition of a seeded point (data checked where it is used): the blocks but the
    ``structural`` ones (``V = I`` of the paper's path) have nonzero entries of distinct absolute
    values across the whole point (:func:`generic_matrix`). Raises
    :class:`~symattn.core.errors.InternalError` otherwise.

    Parameters
    ----------
    point : mapping
        Block name -> array.
    structural : sequence of str, optional
        Blocks exempt (``V = I`` of the paper's path).

    Raises
    ------
    InternalError
        If a checked block has a zero or repeats an absolute value.

    Examples
    --------
    >>> check_generic({"attn_norm.gain1": np.array([[Fraction(1)], [Fraction(-1)]], dtype=object)})
    Traceback (most recent call last):
    ...
    symattn.core.errors.InternalError: the seeded block attn_norm.gain1 has a zero or an entry whose absolute value another entry of the point has; please report this bug
    """
    used: set[Fraction] = set()
    for name, value in point.items():
        if name in structural:
            continue
        entries = [abs(Fraction(v)) for v in np.asarray(value).reshape(-1)]
        if 0 in entries or len(set(entries)) != len(entries) or used & set(entries):
            raise InternalError(f"the seeded block {name} has a zero or an entry whose absolute value another "
                                "entry of the point has; please report this bug")
        used |= set(entries)


def random_point(arch: Architecture, seed: int = 0, values: str = "random") -> dict[str, np.ndarray]:
    """Seeded rational weights of every native block, in flat order, each block drawn by
    :func:`generic_matrix` (nonzero entries of distinct absolute values); ``values="identity"``
    sets every square value map ``V = I`` (a structural choice: the paper's path; output
    projections stay random).

    Parameters
    ----------
    arch : Architecture
        Any stack.
    seed : int, optional
    values : {"random", "identity"}, optional

    Returns
    -------
    dict
        Block name -> object array of Fractions.

    Raises
    ------
    SymattnError
        For another ``values``.

    Examples
    --------
    >>> v = Architecture.uniform(1, 2, 1, 2, heads=2)
    >>> p = random_point(v, seed=1, values="identity")
    >>> sorted(p), p["V1h2"].tolist() == [[1, 0], [0, 1]]
    (['K1h1', 'K1h2', 'Q1h1', 'Q1h2', 'V1h1', 'V1h2'], True)
    """
    if values not in ("identity", "random"):
        raise SymattnError(f"values must be 'identity' or 'random', got {values!r}")
    rng = random.Random(seed)
    out: dict[str, np.ndarray] = {}
    seen: set[Fraction] = set()
    for block, shape in zip(arch.blocks, (s for _, s in arch.native_shapes())):
        if values == "identity" and block.role == "V" and shape[0] == shape[1]:
            out[block.name] = identity_matrix(shape[0])
        else:
            out[block.name] = generic_matrix(rng, shape, seen)
    check_generic(out, [b.name for b in arch.blocks if values == "identity" and b.role == "V"])
    return out


def random_native(arch: Architecture, seed: int = 0, values: str = "random") -> NativeParams:
    """Seeded generic rational native weights of the paper's stack; ``values="identity"``
    sets ``V_i = I`` (equal widths only). Any stack: :func:`random_point`.

    Parameters
    ----------
    arch : Architecture
    seed : int, optional
    values : {"random", "identity"}, optional

    Returns
    -------
    NativeParams

    Raises
    ------
    SymattnError
        For identity values with unequal widths.
    """
    require_architecture(arch)
    require_int(seed, "seed", 0, 2**63 - 1)
    if values == "identity" and len(set(arch.widths)) != 1:
        raise SymattnError("identity values need equal widths")
    return NativeParams.from_point(arch, random_point(arch, seed, values))


def random_bank(arch: Architecture, size: int, seed: int = 0) -> np.ndarray:
    """A seeded bank of ``size`` rational inputs, shape ``(size, d_0, n)``.

    Parameters
    ----------
    arch : Architecture
    size : int
        Number of inputs (positive).
    seed : int, optional

    Returns
    -------
    numpy.ndarray
        Object array of Fractions.

    Raises
    ------
    SymattnError
        If ``size`` is not positive.
    """
    if size < 1:
        raise SymattnError(f"bank size must be positive, got {size}")
    return random_rational_matrix(random.Random(10_007 * seed + 1), (size, arch.widths[0], arch.tokens))


def path_point(arch: Architecture, U, W, V) -> dict[str, np.ndarray]:
    """The native path ``Q = t U``, ``K = t W``, other blocks fixed, as its point at ``t = 1``.

    ``U``, ``W``, ``V`` are per-layer lists (the paper's stack: ``U_i``, ``W_i`` and the
    values ``V_i``) or mappings from block names to arrays (query factors, key factors,
    and every other block: values, output projections); a single mapping may hold all.

    Parameters
    ----------
    arch : Architecture
    U, W, V : list or mapping
        Query factors, key factors and the other blocks.

    Returns
    -------
    dict
        Block name -> array.

    Raises
    ------
    SymattnError
        If a list has not one matrix per layer.

    Examples
    --------
    >>> arch = Architecture.uniform(1, 1, 1, 2, "exp")
    >>> sorted(path_point(arch, [[[2]]], [[[3]]], [[[1]]]))
    ['K1', 'Q1', 'V1']
    """
    out: dict[str, np.ndarray] = {}
    for part, role in ((U, "Q"), (W, "K"), (V, None)):
        if part is None:
            continue
        if isinstance(part, Mapping):
            out.update({name: np.asarray(value, dtype=object) for name, value in part.items()})
            continue
        part = list(part)
        names = [b.name for b in arch.blocks if (b.role == role if role else not b.is_factor)]
        if len(part) != len(names):
            raise SymattnError(f"the path has {len(part)} {role or 'value'} matrices; the architecture "
                               f"has blocks {names} (give a mapping of blocks for several heads)")
        out.update({name: np.asarray(value, dtype=object) for name, value in zip(names, part)})
    return out


def native_path_values(arch: Architecture, algebra, U, W, V, squared: bool = False) -> dict:
    """The native path ``Q = t U, K = t W`` (every query and key factor), other blocks
    fixed, as tensors of a series ``algebra`` (``U, W, V`` as in :func:`path_point`).

    With ``squared`` the series variable is ``u = t^2`` and the path is written
    ``Q = u U, K = W`` (the same scores ``A = t^2 U W^T``; see
    :func:`symattn.analyses.spectrum.bank_jacobian` for how columns are mapped back to ``t``).

    Parameters
    ----------
    arch : Architecture
    algebra : SeriesAlgebra
    U, W, V : list or mapping
        As in :func:`path_point`.
    squared : bool, optional
        Use the series variable ``u = t^2``.

    Returns
    -------
    dict
        Block name -> tensor of ``algebra``.

    Examples
    --------
    >>> from symattn.core.algebras import exact_series
    >>> arch = Architecture.uniform(1, 1, 1, 2, "exp")
    >>> vals = native_path_values(arch, exact_series(2), [[[2]]], [[[3]]], [[[1]]])
    >>> [str(c) for c in vals["Q1"].reshape(-1)]
    ['0', '2']
    """
    point = path_point(arch, U, W, V)
    vals = {}
    for block in arch.blocks:
        value = point[block.name]
        moving = block.role == "Q" or (block.role == "K" and not squared)
        vals[block.name] = (algebra.series([np.zeros(np.shape(value), dtype=int), value]) if moving
                            else algebra.const(value))
    return vals
