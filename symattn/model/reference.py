"""A second, deliberately naive evaluation of every layer kind, and the independent Taylor data.

The graph builder (:mod:`symattn.model.network`, :mod:`symattn.model.sublayers`), its
interpreter and the algebras' tangent rules compute every Jacobian symattn reports. This
module computes the same maps a second way, from the formulas documented in
:mod:`symattn.model.layers` and nothing of that code: token by token, entry by entry, each
formula written out again once (the formulas: the Notes of :func:`reference_outputs`).
Two arithmetics, one for each kind of Jacobian the commands compute: exact dual series
mod a prime (:func:`reference_outputs`, :func:`reference_check`), and mpmath numbers
with central differences (:func:`numerical_outputs`, :func:`numerical_check`), each
described in its Notes. :func:`symattn.model.interpreter.jacobian` runs the check on
every Jacobian of a graph the builder marked (:func:`covers`) and raises
:class:`~symattn.core.errors.CheckFailed` when they differ.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Mapping, Sequence

import numpy as np

from symattn.core.errors import CheckFailed, SymattnError
from symattn.model.expansion import independent_taylor
from symattn.model.parts.ring import per_token as _per_token, plus as _plus, product as _product, transpose as _transpose

__all__ = ["covers", "reference_outputs", "reference_check", "numerical_outputs", "numerical_check", "PRIME",
           "NUMERICAL_DIGITS"]

#: The prime of the reference arithmetic over Q (a Jacobian over F_p is checked in its own field).
PRIME = 8388593

#: Most digits of the numerical check (it agrees to half of them: 10^-60 relative).
NUMERICAL_DIGITS = 120


def _text(normalizer) -> str:
    """The expression text of a normalizer (a catalogue entry's without sympy)."""
    from symattn.model.catalogue import CATALOGUE

    return CATALOGUE[normalizer.name].text if getattr(normalizer, "_build", None) is not None else str(normalizer.expr)


# -- exact: dual series mod (u^N, delta^2, p), vectorised over the bank --------------------
class _S:
    """A scalar of :class:`_Ring`: residues ``r`` ``(2, N, B)`` (part value/delta, power of
    ``u``, bank input) and, when tracked, the exact constant term ``q`` of the value ``(B,)``."""

    __slots__ = ("r", "q")

    def __init__(self, r: np.ndarray, q: np.ndarray | None):
        self.r, self.q = r, q


class _Ring:
    """Dual series mod ``(u^N, delta^2, p)``; ``exact``: track the constant terms over Q too."""

    def __init__(self, p: int, N: int, B: int, exact: bool = False):
        self.p, self.N, self.B, self.exact = p, N, B, exact

    def zero(self) -> _S:
        return self.number(0)

    def number(self, c) -> _S:
        r = np.zeros((2, self.N, self.B), dtype=np.int64)
        r[0, 0, :] = _mod(c, self.p)
        return _S(r, np.full(self.B, Fraction(c), dtype=object) if self.exact else None)

    def numbers(self, cs: Sequence[Fraction]) -> _S:
        """The constants ``cs[b]`` (one per bank input)."""
        r = np.zeros((2, self.N, self.B), dtype=np.int64)
        r[0, 0, :] = [_mod(c, self.p) for c in cs]
        return _S(r, np.array(list(cs), dtype=object) if self.exact else None)

    def add(self, x: _S, y: _S) -> _S:
        return _S((x.r + y.r) % self.p, None if x.q is None else x.q + y.q)

    def sub(self, x: _S, y: _S) -> _S:
        return _S((x.r - y.r) % self.p, None if x.q is None else x.q - y.q)

    def _conv(self, a, b):
        """``a * b`` mod ``u^N`` for ``(N, B)`` arrays: ``sum_i a_i b_(k-i)``."""
        out = np.zeros_like(a)
        for i in range(self.N):
            if a[i].any():
                out[i:] += a[i] * b[: self.N - i] % self.p
        return out % self.p

    def mul(self, x: _S, y: _S) -> _S:
        r = np.empty_like(x.r)
        r[0] = self._conv(x.r[0], y.r[0])
        r[1] = (self._conv(x.r[0], y.r[1]) + self._conv(x.r[1], y.r[0])) % self.p
        return _S(r, None if x.q is None else x.q * y.q)

    def inverse(self, x: _S) -> _S:
        """``1 / (a + delta b) = r - delta b r^2`` with ``r = 1/a`` by the recurrence ``a r = 1``."""
        a = x.r[0]
        if (a[0] % self.p == 0).any() or (x.q is not None and (x.q == 0).any()):
            raise SymattnError("the reference meets a division by a series with zero constant term")
        inv0 = np.array([pow(int(v), -1, self.p) for v in a[0]], dtype=np.int64)
        r = np.zeros_like(a)
        r[0] = inv0
        for k in range(1, self.N):
            acc = np.zeros(self.B, dtype=np.int64)
            for j in range(1, k + 1):
                acc = (acc + a[j] * r[k - j]) % self.p
            r[k] = (-acc * inv0) % self.p
        out = np.empty_like(x.r)
        out[0] = r
        out[1] = (-self._conv(x.r[1], self._conv(r, r))) % self.p
        return _S(out, None if x.q is None else 1 / x.q)

    def _zero_constant(self, x: _S) -> bool:
        return bool((x.q == 0).all()) if x.q is not None else not (x.r[0, 0] % self.p).any()

    def _top(self, y: _S, most: int) -> int:
        """The last power of ``y`` (zero constant term) that reaches ``u^(N-1)`` in either part."""
        nz = np.flatnonzero(y.r[0].any(axis=1))
        v = int(nz[0]) if len(nz) else self.N
        return min(most, -(-self.N // v) if v < self.N else 1)

    def horner(self, y: _S, coeffs: Sequence[Any]) -> _S:
        """``sum_k c_k y^k`` by Horner's rule (each ``c_k`` a Fraction, or one per bank input)."""
        def const(c):
            return self.numbers(list(c)) if isinstance(c, (list, np.ndarray)) else self.number(c)

        result = const(coeffs[-1])
        for c in reversed(coeffs[:-1]):
            result = self.add(self.mul(result, y), const(c))
        return result

    def phi(self, z: _S, normalizer) -> _S:
        """``phi(z)``: its Taylor polynomial; ``z`` must have zero constant term."""
        if not self._zero_constant(z):
            raise SymattnError("the reference applies phi to a series with nonzero constant term")
        coeffs = independent_taylor(_text(normalizer), self.N + 1)
        return self.horner(z, coeffs[: self._top(z, len(coeffs) - 1) + 1])

    def activation(self, x: _S, part) -> _S:
        """An MLP activation part's own formula (:attr:`~symattn.model.parts.activation.Activation.taylor_text`)
        expanded at 0; ``x`` must have zero constant term."""
        if part.taylor_text is None:
            raise SymattnError(f"the exact reference has no {part} here (irrational Taylor coefficients)")
        if not self._zero_constant(x):
            raise SymattnError(f"the exact reference has no {part} at a nonzero constant term")
        coeffs = independent_taylor(part.taylor_text, self.N + 1)
        return self.horner(x, coeffs[: self._top(x, len(coeffs) - 1) + 1])

    def fn(self, x: _S, f) -> _S:
        """A norm's ``1/sqrt`` (:func:`symattn.model.parts.norm.rsqrt`) at rational-square constant terms."""
        if f.name != "rsqrt" or x.q is None:
            raise SymattnError(f"the exact reference has no {f.name} here (irrational constants)")
        roots = []
        for c in x.q:
            c = Fraction(c)
            a, b = math.isqrt(c.numerator) if c > 0 else -1, math.isqrt(c.denominator)
            if a < 0 or a * a != c.numerator or b * b != c.denominator:
                raise SymattnError(f"the exact reference needs 1/sqrt of {c}, not a rational square")
            roots.append(Fraction(b, a))  # c^(-1/2)
        y = self.sub(x, self.numbers(list(x.q)))
        series: list[list[Fraction]] = []
        binom = Fraction(1)  # c^(-1/2) binom(-1/2, k) c^(-k)
        for k in range(self._top(y, self.N) + 1):
            series.append([r * binom / Fraction(c) ** k for r, c in zip(roots, x.q)])
            binom = binom * (Fraction(-1, 2) - k) / (k + 1)
        return self.horner(y, series)


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


def _fraction(v) -> Fraction:
    return Fraction(int(v.p), int(v.q)) if hasattr(v, "p") and hasattr(v, "q") else Fraction(v)


# -- numerical: mpmath numbers at a stated precision, vectorised over the bank -------------
class _Numbers:
    """Scalars are object arrays ``(B,)`` of ``mpmath.mpf`` (the precision of the caller's
    ``mpmath.workdps``); every function by its formula."""

    def __init__(self, B: int):
        import mpmath

        self.mp, self.B = mpmath.mp, B

    def number(self, c) -> np.ndarray:
        c = Fraction(c)
        return np.array([self.mp.mpf(c.numerator) / c.denominator] * self.B, dtype=object)

    def zero(self) -> np.ndarray:
        return self.number(0)

    def add(self, x, y):
        return x + y

    def sub(self, x, y):
        return x - y

    def mul(self, x, y):
        return x * y

    def inverse(self, x):
        return np.array([1 / v for v in x], dtype=object)

    def phi(self, z, normalizer):
        return np.array([normalizer.evaluate_mpmath(v) for v in z], dtype=object)

    def activation(self, x, part):
        """An MLP activation part's own mpmath formula (:meth:`~symattn.model.parts.activation.Activation.mp_formula`)."""
        if not part.is_analytic:
            raise SymattnError(f"the numerical reference has no {part} (not analytic)")
        formula = part.mp_formula(self.mp)
        return np.array([formula(v) for v in x], dtype=object)

    def fn(self, x, f):
        """A norm's ``1/sqrt``."""
        if f.name != "rsqrt":
            raise SymattnError(f"the numerical reference has no {f.name}")
        return np.array([1 / self.mp.sqrt(v) for v in x], dtype=object)


# -- the layer formulas, once, over either arithmetic ----------------------------------------
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


def _attention(R, X, Z, normalizer, mask: list[list[int]]):
    """``S(X)`` from the scores ``Z`` (``n x n``, query rows): columns of ``X`` are tokens;
    query ``a`` attends to keys ``b`` with ``m_ab = 1``."""
    d, n = len(X), len(X[0])
    S = [[R.zero() for _ in range(n)] for _ in range(d)]
    for a in range(n):
        w = [R.phi(Z[a][b], normalizer) if mask[a][b] else None for b in range(n)]
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


def _mlp(R, Y, Fa, fa, Fb, fb, f):
    """``Fb f(Fa y + fa) + fb`` for each token of ``Y`` (``f`` an activation part: its own reference)."""
    h = _per_token(R, _product(R, Fa, Y), fa)
    act = [[f.reference(R, v) for v in row] for row in h]
    return _per_token(R, _product(R, Fb, act), fb)


def _native_layer(R, i: int, layer, X, block, tokens: int):
    """Native layer ``i`` on ``X`` (``block(name)`` reads a block as a matrix of scalars)."""
    mask = _mask(layer.mask, tokens)
    several = len(layer.heads) > 1

    def attention(Xin):
        total = None
        for h in range(1, len(layer.heads) + 1):
            sfx = f"h{h}" if several else ""
            biased = layer.bias
            Z = layer.bias_part.reference_scores(R, Xin, block(f"Q{i}{sfx}"), block(f"K{i}{sfx}"),
                                                 block(f"bQ{i}{sfx}") if biased else None,
                                                 block(f"bK{i}{sfx}") if biased else None)
            term = _attention(R, Xin, Z, layer.normalizer, mask)
            if layer.has_values:
                term = layer.bias_part.reference_values(R, _product(R, block(f"V{i}{sfx}"), term),
                                                        block(f"bV{i}{sfx}") if biased else None)
            combine = layer.combine_part
            term = combine.reference(R, block(f"O{i}{sfx}") if combine.has_output_projection else None, term)
            total = term if total is None else _plus(R, total, term)
        if layer.bias and layer.combine_part.has_output_projection:
            total = _per_token(R, total, block(f"bO{i}"))
        return total

    def norm(Y, which):
        return layer.norm_part.reference(R, Y, {p: block(f"{which}.{p}{i}") for p in layer.norm_part.parameters},
                                         layer.eps)

    def mlp(Y):
        return _mlp(R, Y, block(f"mlp.in{i}"), block(f"mlp.in_bias{i}"), block(f"mlp.out{i}"),
                    block(f"mlp.out_bias{i}"), layer.activation)

    pre, post = layer.pre_norm, layer.post_norm
    Y = attention(norm(X, "attn_norm") if pre else X)
    Y = layer.skip_part.reference(R, X, Y)
    if post:
        Y = norm(Y, "attn_norm")
    if layer.mlp:
        Z = mlp(norm(Y, "mlp_norm") if pre else Y)
        Z = layer.skip_part.reference(R, Y, Z)
        Y = norm(Z, "mlp_norm") if post else Z
    return Y


def _score_layer(R, i: int, layer, X, block, tokens: int):
    """Layer ``i`` of the score model: ``[X +] sum_h S_{M_h}(X)``."""
    mask = _mask(layer.mask, tokens)
    several = len(layer.heads) > 1
    total = None
    for h in range(1, len(layer.heads) + 1):
        M = block(f"M{i}{f'h{h}' if several else ''}")
        Z = _product(R, _transpose(X), _product(R, M, X))  # z_ab = x_a^T M x_b
        term = _attention(R, X, Z, layer.normalizer, mask)
        total = term if total is None else _plus(R, total, term)
    return layer.skip_part.reference(R, X, total)


def _stack(R, arch, kind: str, X, block) -> dict:
    """Every layer output ``X{i}`` and ``F`` (the score model: ``F = L X_D``)."""
    outs = {}
    for i, layer in enumerate(arch.layers, 1):
        X = (_native_layer if kind == "native" else _score_layer)(R, i, layer, X, block, arch.tokens)
        outs[f"X{i}"] = X
    final = getattr(arch, "final_norm", None)
    if final is not None and kind == "native":  # the final norm part's own formula
        X = final.reference(R, X, {p: block(f"{p}{arch.depth}") for p in final.parameters})
    outs["F"] = _product(R, block("L"), X) if kind == "effective" else X
    return outs


def covers(arch) -> bool:
    """Whether the naive reference knows every layer kind of ``arch``: skips, masks, head
    combinations, biases, LayerNorm and MLP sublayers with an analytic activation (ReLU is
    evaluated in float64 only, which the reference does not check).

    Parameters
    ----------
    arch : Architecture
        The architecture.

    Returns
    -------
    bool

    Examples
    --------
    >>> from symattn.model.architecture import Architecture
    >>> covers(Architecture.uniform(2, 2, 1, 2, "exp", skip="value")), covers(Architecture.uniform(1, 2, 1, 3, "exp", norm="post"))
    (True, True)
    >>> covers(Architecture.uniform(1, 2, 1, 3, "exp", mlp=2, activation="relu"))
    False
    """
    return all(not layer.mlp or layer.activation.is_analytic for layer in arch.layers)


def _exact_constants(arch, field_p: int | None) -> bool:
    """Over Q, with a LayerNorm or an activation other than a polynomial: track constants."""
    return field_p is None and any(layer.has_norm or (layer.mlp and not layer.activation.is_polynomial)
                                   for layer in arch.layers)


def reference_outputs(arch, kind: str, values: Mapping[str, np.ndarray], deltas: Mapping[str, np.ndarray],
                      order: int, p: int, field_p: int | None = None) -> dict[str, np.ndarray]:
    """``F(theta + delta v)`` and the layer outputs of ``arch``, naively over exact series
    (see the Notes).

    Parameters
    ----------
    arch : Architecture
    kind : ``"native"`` (inputs ``X`` and the native blocks) or ``"effective"`` (the score
        model: ``X``, ``L`` and one score ``M{i}[h{h}]`` per layer and head)
    values : series arrays ``(N, *shape)`` of every input (``X`` of shape ``(N, B, d, n)``);
        rationals, or residues mod ``field_p``
    deltas : the ``delta`` parts of the inputs that move (same shapes)
    order, p : the truncation ``N`` in ``u`` and the prime of the arithmetic
    field_p : the prime of the inputs' residues (None: rationals)

    Returns
    -------
    dict
        ``"F"`` and ``"X1".."XD"`` as int64 arrays ``(2, N, B, rows, n)``: value and ``delta`` parts.

    Notes
    -----
    The formulas, over a scalar arithmetic chosen by the caller (the layer's parts are read
    from the :class:`~symattn.model.layers.Layer` fields):

    * attention of a head on tokens ``x_1..x_n``: queries ``q_a = Q^T x_a + bQ^T`` and keys
      ``k_b = K^T x_b + bK^T`` (no bias: ``bQ = bK = 0``; the score model: ``z_ab = x_a^T M x_b``),
      ``z_ab = q_a . k_b``, ``w_ab = phi(z_ab)``, ``att_ab = m_ab w_ab / sum_c m_ac w_ac`` and
      ``S(X)_{:, a} = sum_b att_ab x_b`` (the mask ``m`` recomputed here from its name: causal
      ``b <= a``, ``window:W`` ``|a - b| < W``, or the 0/1 pattern);
    * a head's output ``V S + bV`` (``O (V S + bV)`` when concatenated, ``S`` when folded);
      heads summed, ``+ bO`` for concatenated heads with biases;
    * ``LN(y) = g (y - mean y) / sqrt(var y + eps) + s`` over the features of each token
      (biased variance); ``MLP(y) = mlp.out f(mlp.in y + mlp.in_bias) + mlp.out_bias`` token by token;
    * the layer: ``[X +] Att(X)`` without a LayerNorm, ``LN_A([X +] Att(X))`` post-norm,
      ``X + Att(LN_A(X))`` pre-norm; then with an MLP ``[Y +] MLP(Y)``, ``LN_F(Y + MLP(Y))``
      or ``Y + MLP(LN_F(Y))`` (its residual exactly when the attention's skip is there);
      the score model's readout ``F = L X_D``.

    The arithmetic here:

    * **exact** (:func:`reference_outputs`, :func:`reference_check`): dual truncated power
      series ``a + delta b`` mod ``(u^N, delta^2, p)`` held as plain int64 arrays (vectorised
      over the bank only), with, over Q, the exact rational constant term of every value
      beside it. ``phi`` is the polynomial of its Taylor coefficients evaluated by Horner's
      rule, the coefficients from :func:`~symattn.model.expansion.independent_taylor` (a naive
      expansion of the normalizer's *expression* over Fractions, never the python-flint
      builders of :mod:`symattn.model.catalogue`); a polynomial activation is its polynomial
      by Horner's rule; ``tanh``, ``sigmoid`` and ``silu`` (at a zero constant term, the only
      place their coefficients are rational) are the independent expansions of the formulas
      their parts write (:attr:`~symattn.model.parts.activation.Activation.taylor_text`); LayerNorm's ``1/sqrt(c + y)`` is the binomial series
      ``c^(-1/2) sum_k binom(-1/2, k) (y/c)^k``, whose root ``c^(1/2)`` is taken over Q (a
      rational square, as on :func:`~symattn.testing.banks.square_bank`).
      The ``delta`` coefficient of ``F(theta + delta v)`` is ``DF(theta) v`` exactly; the
      comparison is exact mod the prime ``p``.
    """
    raw = np.asarray(values["X"])
    Xv = _residues(raw, p, field_p)
    if Xv.ndim == 3:
        Xv, raw = Xv[:, None], raw[:, None]
    B = Xv.shape[1]
    R = _Ring(p, order, B, _exact_constants(arch, field_p))

    def scalars(value, delta, q, batched):
        shape = value.shape[2:] if batched else value.shape[1:]
        out = []
        for i in range(shape[0]):
            row = []
            for j in range(shape[1]):
                r = np.zeros((2, order, B), dtype=np.int64)
                r[0] = value[:, :, i, j] if batched else value[:, i, j][:, None]
                if delta is not None:
                    r[1] = delta[:, :, i, j] if batched else delta[:, i, j][:, None]
                c = None
                if R.exact:
                    c = np.array([_fraction(v) for v in (q[:, i, j] if batched else [q[i, j]] * B)], dtype=object)
                row.append(_S(r % p, c))
            out.append(row)
        return out

    def block(name):
        arr = np.asarray(values[name])
        delta = _residues(deltas[name], p, field_p) if name in deltas else None
        return scalars(_residues(arr, p, field_p), delta, arr[0], batched=False)

    dX = deltas.get("X")
    if dX is not None:
        dX = _residues(dX, p, field_p)
        dX = dX[:, None] if dX.ndim == 3 else dX
    outs = _stack(R, arch, kind, scalars(Xv, dX, raw[0], batched=True), block)
    return {name: np.stack([np.stack([s.r for s in row], axis=-1) for row in M], axis=-2)
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

    Parameters
    ----------
    arch : Architecture
        The architecture of the graph.
    kind : str
        ``"native"`` or ``"effective"``.
    values : mapping
        Every input as a series array ``(N, *shape)``.
    wrt : sequence of str
        The inputs that ``J``'s columns differentiate, in order.
    J : numpy.ndarray
        The Jacobian ``(N, m, k)``.
    output : sequence of str
        The outputs that ``J``'s rows stack.
    directions : numpy.ndarray
        The direction of each column ``(N, k, n)``.
    field_p : int or None
        The prime of ``J``'s field (None: over Q).
    observe : callable, optional
        Applied to the reference outputs (through ``ring``).
    seed : int
        The seed of the random combination.
    outputs : mapping, optional
        The graph's own output values.
    ring : type, optional
        The interpreter's dual series class (needed with ``observe``).

    Raises
    ------
    CheckFailed
        The Jacobian or an output value disagrees with the naive reference.
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
                              f"(exact: mod u^{N}, mod {p}): the graph of a layer kind, an elementwise "
                              "function's or a normalizer's series is wrong")
        start += m


def _mpf(v):
    """An mpmath number from a ball's midpoint (exactly), an mpf, or a rational."""
    import mpmath

    if hasattr(v, "mid") and hasattr(v, "rad"):
        man, exp = v.mid().man_exp()
        return mpmath.mpf((int(man), int(exp)))
    if isinstance(v, (int, np.integer, Fraction)) or (hasattr(v, "p") and hasattr(v, "q")):
        q = _fraction(v)
        return mpmath.mpf(q.numerator) / q.denominator
    return mpmath.mpf(v)


def numerical_outputs(arch, kind: str, values: Mapping[str, Any], digits: int) -> dict[str, np.ndarray]:
    """The layer outputs and ``F`` of ``arch`` at one point, naively in mpmath at ``digits``
    digits (the caller's precision is not changed): object arrays ``(B, rows, n)`` of mpf.

    ``values``: every input as an array of rationals, mpmath numbers or python-flint balls (their
    midpoints are read); ``X`` of shape ``(B, d, n)`` or ``(d, n)``.

    Parameters
    ----------
    arch : Architecture
        The architecture.
    kind : str
        ``"native"`` or ``"effective"``.
    values : mapping
        Every input's value (see above).
    digits : int
        The working precision in decimal digits.

    Returns
    -------
    dict
        ``"F"`` and ``"X1".."XD"``, object arrays of mpf.

    Notes
    -----
    * **numerical** (:func:`numerical_outputs`, :func:`numerical_check`): mpmath numbers at a
      stated precision, every function by its formula (``tanh``, ``erf`` and ``exp`` of mpmath,
      GELU's tanh form with its constants ``sqrt(2/pi)`` and ``0.044715`` written here, ``phi``
      by its expression); the derivative along ``v`` is the central difference
      ``(F(theta + h v) - F(theta - h v)) / 2h`` at ``D + 10`` digits with
      ``h = 10^-((D + 10)/3)``, ``D = min(digits, 120)``, compared with ``J c`` to ``10^-(D/2)``
      relative (``10^-60`` for the 300 digits of the numerical spectrum): an agreement numerical
      at ``D/2`` digits, never called exact. It checks the ball and
      mpmath Jacobians of the numerical tier (LayerNorm off the rational squares, GELU, tanh
      of a nonzero constant), whose constants exact series cannot hold.

    Examples
    --------
    >>> from symattn.model.architecture import Architecture
    >>> from symattn.model.parameters import random_point
    >>> arch = Architecture.uniform(1, 2, 1, 2, "exp", norm="post", eps="1/10")
    >>> point = dict(random_point(arch, 0, "random"), X=np.array([[[1, 0], [0, 1]]]))
    >>> point.update({"attn_norm.gain1": np.ones((2, 1), dtype=int), "attn_norm.shift1": np.zeros((2, 1), dtype=int)})
    >>> F = numerical_outputs(arch, "native", point, 30)["F"]      # gain 1, shift 0: zero feature mean
    >>> F.shape, [abs(F[0, 0, a] + F[0, 1, a]) < 1e-25 for a in (0, 1)]
    ((1, 2, 2), [True, True])
    """
    import mpmath

    with mpmath.workdps(digits):
        X = np.asarray(values["X"], dtype=object)
        X = X[None] if X.ndim == 2 else X
        R = _Numbers(X.shape[0])
        tokens = [[np.array([_mpf(v) for v in X[:, i, j]], dtype=object) for j in range(X.shape[2])]
                  for i in range(X.shape[1])]

        def block(name):
            arr = np.asarray(values[name], dtype=object)
            return [[R.number(0) + _mpf(v) for v in row] for row in arr]

        outs = _stack(R, arch, kind, tokens, block)
        return {name: np.stack([np.stack(row, axis=-1) for row in M], axis=-2) for name, M in outs.items()}


def numerical_check(arch, kind: str, values: Mapping[str, Any], wrt: Sequence[str], J: np.ndarray,
                    output: Sequence[str], directions: np.ndarray, digits: int, observe=None,
                    outputs: Mapping[str, Any] | None = None, seed: int = 1) -> None:
    """Check a ball or mpmath Jacobian ``J`` ``(m, k)`` of a graph of ``arch`` at ``digits`` digits
    against the naive formulas in mpmath, numerically: on one random combination ``c`` of the
    columns (``v = directions^T c``), the central difference of :func:`numerical_outputs` at
    ``theta +- h v`` (``D + 10`` digits, ``h = 10^-((D + 10)//3)``, ``D = min(digits, 120)``:
    :data:`NUMERICAL_DIGITS` caps the cost of mpmath's ``erf``) must agree with ``J c``, and
    its mean with the graph's ``outputs``, to ``10^-(D//2)`` relative; raise
    :class:`~symattn.core.errors.CheckFailed` otherwise (a numerical agreement, never exact).
    ``observe``, if given, is applied to the reference outputs in
    :class:`~symattn.core.algebras.MPMath`.

    Parameters
    ----------
    arch : Architecture
        The architecture of the graph.
    kind : str
        ``"native"`` or ``"effective"``.
    values : mapping
        Every input's value.
    wrt : sequence of str
        The inputs that ``J``'s columns differentiate, in order.
    J : numpy.ndarray
        The Jacobian ``(m, k)`` (balls or mpmath numbers).
    output : sequence of str
        The outputs that ``J``'s rows stack.
    directions : numpy.ndarray
        The direction of each column ``(k, n)``.
    digits : int
        The precision of ``J`` in decimal digits.
    observe : callable, optional
        Applied to the reference outputs.
    outputs : mapping, optional
        The graph's own output values.
    seed : int
        The seed of the random combination.

    Raises
    ------
    CheckFailed
        The Jacobian or an output value disagrees with the naive formulas.
    """
    import mpmath

    from symattn.core.algebras.multiprecision import MPMath

    digits = min(digits, NUMERICAL_DIGITS)
    work = digits + 10
    with mpmath.workdps(work):
        k = directions.shape[-2]
        rng = np.random.default_rng(seed)
        c = [int(rng.integers(1, 1000)) for _ in range(k)]
        combine = np.array(c, dtype=object)  # in the Jacobian's own numbers, then read off
        v = np.vectorize(_mpf, otypes=[object])(combine.dot(np.asarray(directions, dtype=object)))
        claim = np.vectorize(_mpf, otypes=[object])(np.asarray(J, dtype=object).dot(combine))
        h = mpmath.mpf(10) ** -(work // 3)
        moved = []
        for sign in (1, -1):
            point, off = dict(values), 0
            for name in wrt:
                arr = np.vectorize(_mpf, otypes=[object])(np.asarray(values[name], dtype=object))
                point[name] = arr + sign * h * v[off: off + arr.size].reshape(arr.shape)
                off += arr.size
            outs = numerical_outputs(arch, kind, point, work)
            if observe is not None:
                A = MPMath(work)
                outs = {output[0]: np.asarray(observe(A, A.const(outs[output[0]] if np.asarray(values["X"]).ndim == 3
                                                                 else outs[output[0]][0])), dtype=object)}
            moved.append(outs)
        start, tol = 0, mpmath.mpf(10) ** -(digits // 2)
        for name in output:
            if name not in moved[0]:
                continue
            plus, minus = (np.asarray(o[name], dtype=object).reshape(-1) for o in moved)
            m = plus.size
            slope, mean = (plus - minus) / (2 * h), (plus + minus) / 2
            want = claim[start: start + m]
            scale = 1 + max(abs(x) for x in np.concatenate([slope, want, mean]))
            bad_d = max(abs(x) for x in slope - want) > tol * scale
            bad_v = False
            if outputs is not None and name in outputs:
                got = np.vectorize(_mpf, otypes=[object])(np.asarray(outputs[name], dtype=object)).reshape(-1)
                bad_v = max(abs(x) for x in got - mean) > tol * scale
            if bad_d or bad_v:
                raise CheckFailed(f"the {'value' if bad_v else 'Jacobian'} of {name} disagrees with the naive "
                                  f"reference evaluation of the layer formulas ({arch.parts() or 'the paper stack'}) "
                                  f"on a random direction (numerical: mpmath central difference, agreement "
                                  f"required to 10^-{digits // 2} relative): the graph of a layer kind or an "
                                  "elementwise function is wrong")
            start += m
