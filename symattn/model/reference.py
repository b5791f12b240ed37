"""A second, deliberately naive evaluation of every layer kind, and the independent Taylor data.

The graph builder (:mod:`symattn.model.network`), its interpreter and the
algebras' tangent rules compute every Jacobian symattn reports. This module
computes the same maps a second way, from the formulas documented in
:mod:`symattn.model.layers` and nothing of that code: token by token, entry by
entry, over dual truncated power series ``a + delta b`` mod ``(u^N, delta^2, p)``
held as plain int64 arrays (vectorised over the bank only). It reads a layer's
parts (skip, mask, heads, combination) from the :class:`~symattn.model.layers.Layer`
fields and writes each formula out again:

* attention of a head with score ``A`` (``d x d``) on tokens ``x_1..x_n``:
  ``z_ab = x_a^T A x_b``, ``w_ab = phi(z_ab)``, ``att_ab = m_ab w_ab / sum_c m_ac w_ac``
  and ``S(X)_{:, a} = sum_b att_ab x_b`` (the mask ``m`` recomputed here from its
  name: causal ``b <= a``, ``window:W`` ``|a - b| < W``, or the 0/1 pattern);
* a head's output ``V S`` (``O V S`` when concatenated, ``S`` when folded); heads
  summed; ``X +`` that for a skip; the score model's layer ``[X +] sum_h S_{M_h}(X)``
  and its readout ``F = L X_D``;
* ``phi`` as the polynomial of its Taylor coefficients evaluated by Horner's
  rule in the dual ring, the coefficients from :func:`~symattn.model.expansion.independent_taylor` (a
  naive expansion of the normalizer's *expression* over Fractions, never the
  python-flint builders of :mod:`symattn.model.catalogue`).

The ``delta`` coefficient of ``F(theta + delta v)`` is ``DF(theta) v`` exactly;
:func:`reference_check` compares it with a forward-mode Jacobian on a random
direction (the hook of :func:`symattn.model.interpreter.jacobian` for every
exact series Jacobian of an architecture beyond the paper's) and raises
:class:`~symattn.core.errors.CheckFailed` when they differ.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Mapping, Sequence

import numpy as np

from symattn.core.errors import CheckFailed, SymattnError
from symattn.model.expansion import independent_taylor

__all__ = ["covers", "reference_outputs", "reference_check", "PRIME"]

#: The prime of the reference arithmetic over Q (a Jacobian over F_p is checked in its own field).
PRIME = 8388593

def _text(normalizer) -> str:
    """The expression text of a normalizer (a catalogue entry's without sympy)."""
    from symattn.model.catalogue import CATALOGUE

    return CATALOGUE[normalizer.name] if getattr(normalizer, "_build", None) is not None else str(normalizer.expr)


# -- dual series mod (u^N, delta^2, p), vectorised over the bank --------------------------
class _Ring:
    """Scalars are int64 arrays ``(2, N, B)``: part (value, delta), power of ``u``, bank input."""

    def __init__(self, p: int, N: int, B: int):
        self.p, self.N, self.B = p, N, B

    def zero(self) -> np.ndarray:
        return np.zeros((2, self.N, self.B), dtype=np.int64)

    def number(self, c: Fraction) -> np.ndarray:
        out = self.zero()
        out[0, 0, :] = _mod(c, self.p)
        return out

    def add(self, x, y):
        return (x + y) % self.p

    def sub(self, x, y):
        return (x - y) % self.p

    def _conv(self, a, b):
        """``a * b`` mod ``u^N`` for ``(N, B)`` arrays: ``sum_i a_i b_(k-i)``."""
        out = np.zeros_like(a)
        for i in range(self.N):
            if a[i].any():
                out[i:] += a[i] * b[: self.N - i] % self.p
        return out % self.p

    def mul(self, x, y):
        out = self.zero()
        out[0] = self._conv(x[0], y[0])
        out[1] = (self._conv(x[0], y[1]) + self._conv(x[1], y[0])) % self.p
        return out

    def inverse(self, x):
        """``1 / (a + delta b) = r - delta b r^2`` with ``r = 1/a`` by the recurrence ``a r = 1``."""
        a = x[0]
        if (a[0] % self.p == 0).any():
            raise SymattnError("the reference meets a row sum with zero constant term mod p")
        inv0 = np.array([pow(int(v), -1, self.p) for v in a[0]], dtype=np.int64)
        r = np.zeros_like(a)
        r[0] = inv0
        for k in range(1, self.N):
            acc = np.zeros(self.B, dtype=np.int64)
            for j in range(1, k + 1):
                acc = (acc + a[j] * r[k - j]) % self.p
            r[k] = (-acc * inv0) % self.p
        out = self.zero()
        out[0] = r
        out[1] = (-self._conv(x[1], self._conv(r, r))) % self.p
        return out

    def phi(self, z, coeffs: Sequence[Fraction]):
        """``sum_k c_k z^k`` by Horner's rule; ``z`` must have zero constant term."""
        if (z[0, 0] % self.p).any():
            raise SymattnError("the reference applies phi to a series with nonzero constant term")
        nz = np.flatnonzero(z[0].any(axis=1))
        v = int(nz[0]) if len(nz) else self.N
        top = min(len(coeffs) - 1, -(-self.N // v) if v < self.N else 1)
        result = self.number(coeffs[top])
        for j in range(top - 1, -1, -1):
            result = self.add(self.mul(result, z), self.number(coeffs[j]))
        return result


def _mod(c, p: int) -> int:
    """A rational (int, Fraction, fmpq, sympy Rational) mod ``p``."""
    if isinstance(c, (int, np.integer)):
        return int(c) % p
    if hasattr(c, "p") and hasattr(c, "q"):
        num, den = int(c.p), int(c.q)
    else:
        f = Fraction(c)
        num, den = f.numerator, f.denominator
    if den % p == 0:
        raise SymattnError(f"a denominator divisible by the reference prime {p}")
    return num * pow(den, -1, p) % p


def _residues(array, p: int, field_p: int | None) -> np.ndarray:
    """Series coefficients ``(N, ...)`` as int64 residues mod ``p``."""
    arr = np.asarray(array)
    if field_p is not None:
        return arr.astype(np.int64) % p
    flat = [_mod(v, p) for v in arr.reshape(-1)]
    return np.array(flat, dtype=np.int64).reshape(arr.shape)


def _mask(mask, n: int) -> list[list[int]]:
    """The mask's 0/1 rows (query ``a``, key ``b``), recomputed from its name."""
    if mask == "none":
        return [[1] * n for _ in range(n)]
    if mask == "causal":
        return [[1 if b <= a else 0 for b in range(n)] for a in range(n)]
    if isinstance(mask, str) and mask.startswith("window:"):
        w = int(mask[len("window:"):])
        return [[1 if abs(a - b) < w else 0 for b in range(n)] for a in range(n)]
    return [[int(v) for v in row] for row in mask]


def _matrix(R: _Ring, value: np.ndarray, delta: np.ndarray | None, batched: bool) -> list[list[np.ndarray]]:
    """A matrix of ring scalars from series arrays ``(N, [B,] rows, cols)``."""
    shape = value.shape[2:] if batched else value.shape[1:]
    out = []
    for i in range(shape[0]):
        row = []
        for j in range(shape[1]):
            x = R.zero()
            x[0] = value[:, :, i, j] if batched else value[:, i, j][:, None]
            if delta is not None:
                x[1] = delta[:, :, i, j] if batched else delta[:, i, j][:, None]
            row.append(x % R.p)
        out.append(row)
    return out


def _product(R: _Ring, A, B):
    """The matrix product of two matrices of scalars, entry by entry."""
    out = []
    for i in range(len(A)):
        row = []
        for j in range(len(B[0])):
            acc = R.zero()
            for k in range(len(B)):
                acc = R.add(acc, R.mul(A[i][k], B[k][j]))
            row.append(acc)
        out.append(row)
    return out


def _plus(R: _Ring, A, B):
    return [[R.add(a, b) for a, b in zip(ra, rb)] for ra, rb in zip(A, B)]


def _attention(R: _Ring, X, A, coeffs, mask: list[list[int]]):
    """``S_A(X)``: columns of ``X`` are tokens; query ``a`` attends to keys ``b`` with ``m_ab = 1``."""
    d, n = len(X), len(X[0])
    AX = _product(R, A, X)  # (d, n): A x_b
    S = [[R.zero() for _ in range(n)] for _ in range(d)]
    for a in range(n):
        w = []
        for b in range(n):
            z = R.zero()
            for k in range(d):
                z = R.add(z, R.mul(X[k][a], AX[k][b]))
            w.append(R.phi(z, coeffs) if mask[a][b] else None)
        den = R.zero()
        for b in range(n):
            if w[b] is not None:
                den = R.add(den, w[b])
        inv = R.inverse(den)
        for b in range(n):
            if w[b] is None:
                continue
            att = R.mul(w[b], inv)
            for k in range(d):
                S[k][a] = R.add(S[k][a], R.mul(att, X[k][b]))
    return S


def covers(arch) -> bool:
    """Whether the naive reference knows every layer kind of ``arch``: skips, masks and head
    combinations, not yet the transformer-block parts (biases, LayerNorm, MLP), whose graph is
    checked by the independent series check, the proof n4 and PyTorch in the tests.

    >>> from symattn.model.architecture import Architecture
    >>> covers(Architecture.uniform(2, 2, 1, 2, "exp", skip="value")), covers(Architecture.uniform(1, 2, 1, 3, "exp", norm="post"))
    (True, False)
    """
    return all(not layer.bias and layer.norm == "none" and not layer.mlp for layer in arch.layers)


def reference_outputs(arch, kind: str, values: Mapping[str, np.ndarray], deltas: Mapping[str, np.ndarray],
                      order: int, p: int, field_p: int | None = None) -> dict[str, np.ndarray]:
    """``F(theta + delta v)`` and the layer outputs of ``arch``, naively (see the module docstring).

    Parameters
    ----------
    arch : Architecture
    kind : ``"native"`` (inputs ``X`` and the native blocks) or ``"effective"`` (the score
        model: ``X``, ``L`` and one score ``M{i}[h{h}]`` per layer and head)
    values : series arrays ``(N, *shape)`` of every input (``X`` of shape ``(N, B, d, n)``);
        rationals, or residues mod ``field_p``
    deltas : the ``delta`` parts of the inputs that move (same shapes)
    order, p : the truncation ``N`` in ``u`` and the prime of the arithmetic

    Returns
    -------
    dict
        ``"F"`` and ``"X1".."XD"`` as int64 arrays ``(2, N, B, rows, n)``: value and ``delta`` parts.
    """
    Xv = _residues(values["X"], p, field_p)
    if Xv.ndim == 3:
        Xv = Xv[:, None]
    B = Xv.shape[1]
    R = _Ring(p, order, B)

    def block(name):
        value = _residues(values[name], p, field_p)
        delta = _residues(deltas[name], p, field_p) if name in deltas else None
        return _matrix(R, value, delta, batched=False)

    dX = deltas.get("X")
    if dX is not None:
        dX = _residues(dX, p, field_p)
        dX = dX[:, None] if dX.ndim == 3 else dX
    X = _matrix(R, Xv, dX, batched=True)
    outs = {}
    for i, layer in enumerate(arch.layers, 1):
        coeffs = independent_taylor(_text(layer.normalizer), order + 1)
        mask = _mask(layer.mask, arch.tokens)
        several = len(layer.heads) > 1
        total = None
        for h in range(1, len(layer.heads) + 1):
            suffix = f"h{h}" if several else ""
            if kind == "effective":
                term = _attention(R, X, block(f"M{i}{suffix}"), coeffs, mask)
            else:
                Q, K = block(f"Q{i}{suffix}"), block(f"K{i}{suffix}")
                KT = [list(col) for col in zip(*K)]
                term = _attention(R, X, _product(R, Q, KT), coeffs, mask)
                if layer.skip != "folded":
                    term = _product(R, block(f"V{i}{suffix}"), term)
                if layer.combine == "concat":
                    term = _product(R, block(f"O{i}{suffix}"), term)
            total = term if total is None else _plus(R, total, term)
        X = _plus(R, X, total) if layer.skip != "none" else total  # type: ignore[assignment]  # total is set: a layer has heads
        outs[f"X{i}"] = X
    if kind == "effective":
        X = _product(R, block("L"), X)
    outs["F"] = X
    return {name: np.stack([np.stack([np.stack(row, axis=-1) for row in M], axis=-2)])[0]
            for name, M in outs.items()}


def reference_check(arch, kind: str, values: Mapping[str, Any], wrt: Sequence[str], J: np.ndarray,
                    output: Sequence[str], directions: np.ndarray, field_p: int | None,
                    observe=None, seed: int = 1, outputs: Mapping[str, Any] | None = None,
                    ring: Any = None) -> None:
    """Check an exact series Jacobian ``J`` (:func:`symattn.model.interpreter.jacobian`) of a graph
    of ``arch`` against :func:`reference_outputs` on one random direction; raise
    :class:`~symattn.core.errors.CheckFailed` on a mismatch.

    ``J`` has shape ``(N, m, k)`` over Q or F_p (``field_p``), ``directions`` ``(N, k, n)``; a
    random combination ``c`` of the columns gives ``v = directions^T c`` and the claim ``J c``,
    compared mod ``p`` with the ``delta`` part of the reference. ``observe``, if given, is run
    on the reference output through ``ring`` (the interpreter's dual series class, ring operations
    only; passed in, so that this module does not import the interpreter).
    ``outputs``, if given, are the graph's own output values (series arrays ``(N, ...)``), compared
    with the reference's value part too (a term that no parameter moves, such as a skip in the last
    layer, is seen there).
    """
    p = field_p or PRIME
    N = J.shape[0]
    k = directions.shape[-2]
    c = np.asarray(np.random.default_rng(seed).integers(1, p, size=k, dtype=np.int64))
    dirs: np.ndarray = np.asarray(_residues(directions, p, field_p))
    Jp: np.ndarray = np.asarray(_residues(J, p, field_p))
    v = np.zeros(dirs.shape[:-2] + dirs.shape[-1:], dtype=np.int64)
    for j in range(k):
        v = (v + dirs[..., j, :] * int(c[j])) % p
    claim = np.zeros(Jp.shape[:-1], dtype=np.int64)
    for j in range(k):
        claim = (claim + Jp[..., j] * int(c[j])) % p
    deltas, off = {}, 0
    for name in wrt:
        shape = np.asarray(values[name]).shape[1:]
        size = math.prod(shape)
        deltas[name] = v[:, off: off + size].reshape((N,) + shape)
        off += size
    outs = reference_outputs(arch, kind, values, deltas, N, p, field_p)
    if observe is not None:
        from symattn.core.algebras.modular import PrimeField
        from symattn.core.algebras.series import SeriesAlgebra

        name = output[0]
        a, b = outs[name][0], outs[name][1]
        single = np.asarray(values["X"]).ndim == 3
        pair = (a[:, 0], b[:, 0]) if single else (a, b)
        dual = ring(SeriesAlgebra(PrimeField(p), N))
        got_a, got_b = observe(dual, pair)
        outs = {name: np.stack([np.asarray(got_a), np.broadcast_to(got_b, np.shape(got_a))])}
    start = 0
    for name in output:
        if name not in outs:
            continue  # not a layer output (the reduction's L, M): nothing to compare
        got = outs[name][1]
        m = math.prod(got.shape[1:])
        same = outputs is None or name not in outputs or np.array_equal(
            _residues(outputs[name], p, field_p).reshape(N, m), outs[name][0].reshape(N, m) % p)
        if not same or not np.array_equal(got.reshape(N, m) % p, claim[:, start: start + m] % p):
            raise CheckFailed(f"the {'Jacobian' if same else 'value'} of {name} disagrees with the naive "
                              "reference evaluation of the "
                              f"layer formulas ({arch.parts() or 'the paper stack'}) on a random direction "
                              f"(mod u^{N}, mod {p}): the graph of a layer kind or a normalizer's series "
                              "builder is wrong")
        start += m
