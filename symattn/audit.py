r"""Audit the weights of a real attention stack: what its function determines, and how sensitively.

Scope: a stack of single-head, bias-free self-attention layers, read from

* a NumPy ``.npz`` file holding exactly the arrays ``Q1, K1, V1, Q2, K2, V2,
  ..., QD, KD, VD`` (no other keys) in the paper's convention, tokens as
  columns: ``Q_i, K_i`` of shape ``(d_{i-1}, r_i)`` and ``V_i`` of shape
  ``(d_i, d_{i-1})``; the native layer is ``X -> V_i S_{Q_i K_i^T}(X)``
  (:func:`from_arrays`);
* PyTorch: a sequence (e.g. ``nn.ModuleList``) of ``torch.nn.MultiheadAttention``
  modules (:func:`from_torch`), or a state dict of such a list, in memory
  (:func:`from_state_dict`) or saved with ``torch.save(model.state_dict(), path)``
  as ``.pt``/``.pth`` (:func:`load_model`; read with ``weights_only=True``,
  so a pickled whole module is refused rather than executed).

PyTorch is optional (``pip install torch==2.13.0``) and imported only when a
PyTorch object or file is read.

Convention mapping (PyTorch -> paper)
-------------------------------------
``nn.MultiheadAttention(E, num_heads=1, bias=False)`` stores
``in_proj_weight = [W_q; W_k; W_v]`` (each ``E x E``) and
``out_proj.weight = W_o``. On tokens as *rows* ``R = X^T`` (``n x E``) it computes

.. math::

    q = R W_q^T,\quad k = R W_k^T,\quad v = R W_v^T,\quad
    \mathrm{out} = \mathrm{softmax}\!\Big(\frac{q k^T}{\sqrt{E}}\Big)\, v\, W_o^T ,

softmax over keys (row-wise). Entry ``(a, b)`` of the score is
``x_a^T W_q^T W_k x_b / sqrt(E)``, so the score matrix is
``A = Q K^T`` with ``Q = c W_q^T``, ``K = W_k^T`` and ``c = 1/sqrt(E)``
(the head width is ``E`` with one head, so ``r = d = E``). Transposing the output,
``out^T = W_o W_v X A'^T`` where ``A'`` is the row-normalised attention, i.e.
``out^T = V S_A(X)`` with ``V = W_o W_v``: the value projection and
``out_proj`` fold into one value map. Here ``phi = exp``. The scale ``c`` is
exact when ``E`` is a perfect square; otherwise the audited model uses the
binary64 rounding of ``1/sqrt(E)`` (a relative change below ``2^-53``), and
the report says so. The mapping is tested numerically: the native network in
:class:`~symattn.algebras.Float64` reproduces the PyTorch module's float64
output to about ``1e-12``.

Not covered (refused with a message): biases (``in_proj_bias``,
``out_proj.bias``, ``bias_k``/``bias_v``), ``add_zero_attn``, more than one
head, ``kdim``/``vdim`` different from ``embed_dim`` (separate
``q/k/v_proj_weight``), dropout > 0, layers that are not
``MultiheadAttention``, and stacks whose widths do not chain. Attention
masks are call-time arguments: no file carries them, and the audit is of
the *unmasked* self-attention map ``x -> attn(x, x, x)``. A state dict does
not record ``num_heads`` or dropout: they are taken as 1 and 0 and the report
lists that assumption.

What the report computes (:func:`audit`)
----------------------------------------
* the effective tuple ``(L, M_i)`` of eq. (3) in exact rationals of the
  binary64 weights (``Fraction(float)`` is exact);
* the hypotheses of Theorems 1-4, each decided exactly (rational arithmetic):
  ``L != 0``, ``sym M_i != 0``, ``h_i'(0) != 0``, ``M_i`` in the collapse
  locus ``Z_i`` (:func:`symattn.fibers.collapse_locus`), common first degree
  ``k``, equal widths, ``r_i <= d``, full column rank of ``Q_i, K_i``,
  ``sym(Q_i K_i^T) != 0``, invertible ``V_i``;
* the effective fiber (:func:`symattn.fibers.effective_fiber`, verified by
  exact series and symbolic identities);
* distances to the collapse loci and to the degenerate factor ranks
  (numerical, float64): ``||sym M_i||_F``, ``||M_i||_F``, smallest singular
  values of ``Q_i, K_i, V_i``;
* the contact spectrum along the model's own ray ``t -> (t Q, t K, V)``
  (:func:`symattn.spectrum.native_spectrum` with ``path = (Q, K, V)`` the
  model's weights as exact rationals; Theorem 4 is stated with ``V_i = I``,
  and an invertible ``V`` is carried to it by the interface gauge, which is
  constant in ``t``). It needs equal widths and invertible values; otherwise
  the report says why it is not computed;
* at ``t = 1`` (the model itself): the singular values of the bank Jacobian in
  all native entries in float64 and at ``digits`` digits (python-flint balls,
  :func:`symattn.numerics.positive_singular_values` on the exact complement of
  the gauge kernel), the float64 numerical rank under the cutoff
  ``1e-10 sigma_1`` against the exact rank ``parameters - kernel``;
* a plain-language verdict.

Caveats: the exact rank is the rank of ``J(t)`` over the field of Laurent
series, i.e. at all but finitely many ``t``; that ``t = 1`` is not one of the
exceptions is shown (numerically) by the high-precision singular values. The
bank is the seeded rational bank of :func:`symattn.model.random_bank`
(entries in ``[-4, 4]``), not the model's training data: singular values
depend on it. Theorem 3's degree is reported from its formula (Prop. C.1)
once its hypotheses are checked, not recomputed here.

Examples
--------
The shipped example (``examples/example_model.npz``, written by
``examples/make_example_model.py`` from NumPy seed 2026):

>>> from pathlib import Path
>>> example = Path(__file__).resolve().parent.parent / "examples" / "example_model.npz"
>>> report = audit(load_model(example))
>>> report.fiber.fiber, report.fiber.verified
('singleton', True)
>>> [(b.order, b.multiplicity) for b in report.spectrum.bands], report.spectrum.kernel
([(0, 16), (1, 12), (5, 12), (17, 12)], 44)
>>> report.ranks["exact"], report.ranks["float64_numerical"]
(52, 51)
>>> print(report.verdict)                                   # doctest: +NORMALIZE_WHITESPACE
The function determines L and M_1..M_3 exactly (Theorem 1, verified exactly). It
cannot determine the query/key factorization (12 directions Q_i B, K_i B^-T) or
the intermediate value maps (32 directions): 44 native directions are exact
zeros of the Jacobian. Of the 52 identifiable directions (exact rank), 1 fall
below the numerical-rank cutoff 1e-10 sigma_1 on this bank at the model's own
scale, and 0 below float64 resolution (eps sigma_1): float64 reports rank 51, 1
short of the exact rank. Along the model's own ray t (Q, K) the identifiable
query/key directions weaken like t^1 (12 directions of layer 1), t^5 (12
directions of layer 2), t^17 (12 directions of layer 3) as t -> 0: near
collapse, halving the query/key scale divides layer 3's singular values by about
2^17 = 131072.

The command line prints the whole report (``symattn audit FILE``), or
``--json`` with the keys of :meth:`Audit.to_json`, and ``--plot FILE.png``
draws the float64 and 50-digit singular values against the cutoff.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from .algebras import BallAlgebra, Float64
from .certify import rank_exact
from .errors import SymattnError
from .fibers import Fiber, collapse_locus, effective_fiber
from .model import (
    Architecture,
    EffectiveParams,
    NativeParams,
    exact_rationals,
    is_zero,
    random_bank,
    reduction,
    symmetric_part,
)
from .normalizer import normalizers
from .numerics import (
    _torch,
    exact_kernel_vectors,
    kernel_complement,
    numerical_rank,
    observation_jacobian,
    positive_singular_values,
)
from .spectrum import Spectrum, native_spectrum

__all__ = [
    "ImportedModel", "Audit", "from_arrays", "from_torch", "from_state_dict", "load_model",
    "audit", "CUTOFF",
]

#: The relative cutoff of the numerical rank (App. F.2): ``sigma > CUTOFF * sigma_1``.
CUTOFF = 1e-10

_EPS = float(np.finfo(np.float64).eps)


@dataclass
class ImportedModel:
    """A native stack read from a file or object, in the paper's convention.

    Attributes
    ----------
    arch : Architecture
        Widths ``d_0..d_D``, ranks ``r_i``, the token count and normalizers.
    theta : NativeParams
        ``Q_i, K_i, V_i`` as exact rationals of the binary64 weights.
    source : str
        Where it came from.
    kind : str
        ``"npz"``, ``"torch-modules"`` or ``"torch-state-dict"``.
    notes : list of str
        Assumptions of the import (e.g. a rounded ``1/sqrt(E)``, ``num_heads``
        not recorded) and the ``W_o W_v`` folding.
    torch_layout : bool
        Whether ``V_i = W_o W_v`` came from a PyTorch value/out projection pair
        (they are then one more gauge: ``E^2`` directions per layer).
    """

    arch: Architecture
    theta: NativeParams
    source: str
    kind: str
    notes: list = field(default_factory=list)
    torch_layout: bool = False

    def float_params(self) -> dict[str, np.ndarray]:
        """The native weights as float64 arrays (rounded where a product is not binary64)."""
        return {k: np.vectorize(float, otypes=[float])(v) for k, v in self.theta.as_dict().items()}


# ------------------------------------------------------------------ import
def _real_array(name: str, value: Any) -> np.ndarray:
    """A finite real float64 matrix from ``value`` (exact for float16/32/64 and small ints)."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "fiub":
        raise SymattnError(f"array {name} has dtype {arr.dtype}: only real numbers are supported")
    if arr.ndim != 2:
        raise SymattnError(f"array {name} has shape {arr.shape}: every weight must be a matrix")
    if arr.dtype.kind in "iu" and arr.size and int(np.abs(arr).max()) > 2 ** 53:
        raise SymattnError(f"array {name} has integers beyond 2^53 (not exact in binary64)")
    out = arr.astype(np.float64)
    if not np.isfinite(out).all():
        bad = "NaN" if np.isnan(out).any() else "inf"
        raise SymattnError(f"array {name} contains {bad}: the audit needs finite weights")
    return out


_NPZ_KEY = re.compile(r"^([QKV])([1-9][0-9]*)$")


def from_arrays(arrays: Mapping[str, Any], normalizer: "str | Sequence" = "exp", tokens: int = 4,
                source: str = "arrays") -> ImportedModel:
    """A native stack from arrays named ``Q1, K1, V1, ..., QD, KD, VD`` (tokens as columns).

    Parameters
    ----------
    arrays : mapping of str to array-like
        Exactly the keys ``Q_i, K_i`` (shape ``(d_{i-1}, r_i)``) and ``V_i``
        (shape ``(d_i, d_{i-1})``) for ``i = 1..D``; real, finite.
    normalizer : str or sequence
        One normalizer for all layers or one per layer (default softmax).
    tokens : int
        The token count ``n >= 2`` of the audit.
    source : str
        A label for the report.

    Returns
    -------
    ImportedModel

    Raises
    ------
    SymattnError
        Unknown or missing keys, non-matrices, NaN/inf, shapes that do not chain.

    Examples
    --------
    >>> m = from_arrays({"Q1": [[1.0]], "K1": [[0.5]], "V1": [[2.0]]})
    >>> m.arch.widths, m.arch.ranks, str(m.theta.K[0][0, 0])
    ((1, 1), (1,), '1/2')
    """
    layers: dict[int, dict[str, np.ndarray]] = {}
    for key in arrays:
        match = _NPZ_KEY.match(str(key))
        if not match:
            hint = " (biases are not covered)" if "b" in str(key).lower() else ""
            raise SymattnError(f"unknown array {key!r}{hint}: the arrays must be named exactly "
                               f"Q1, K1, V1, Q2, K2, V2, ...")
        layers.setdefault(int(match.group(2)), {})[match.group(1)] = _real_array(key, arrays[key])
    if not layers:
        raise SymattnError("no weight arrays found: expected Q1, K1, V1, ...")
    D = max(layers)
    for i in range(1, D + 1):
        missing = [f"{c}{i}" for c in "QKV" if c not in layers.get(i, {})]
        if missing:
            raise SymattnError(f"missing array(s) {', '.join(missing)} for a stack of depth {D}")
    widths, ranks = [layers[1]["Q"].shape[0]], []
    for i in range(1, D + 1):
        q, k, v = (layers[i][c] for c in "QKV")
        d_in = widths[-1]
        if q.shape[0] != d_in:
            raise SymattnError(f"Q{i} has {q.shape[0]} rows but the layer input has width {d_in} "
                               f"(the shapes do not chain)")
        if k.shape != q.shape:
            raise SymattnError(f"K{i} has shape {k.shape} but Q{i} has {q.shape}: both must be "
                               f"d_{i - 1} x r_{i}")
        if v.shape[1] != d_in:
            raise SymattnError(f"V{i} has shape {v.shape}: it must be d_{i} x d_{i - 1} with "
                               f"d_{i - 1} = {d_in} columns (the shapes do not chain)")
        widths.append(v.shape[0])
        ranks.append(q.shape[1])
    arch = Architecture(tuple(widths), tuple(ranks), tokens, normalizers(normalizer, D))
    theta = NativeParams(*(tuple(exact_rationals(layers[i][c]) for i in range(1, D + 1)) for c in "QKV"))
    return ImportedModel(arch, theta, source, "npz")


def _scale(E: int) -> tuple[Fraction, str | None]:
    """``1/sqrt(E)``: exact for a perfect square, else its binary64 rounding (with a note)."""
    root = math.isqrt(E)
    if root * root == E:
        return Fraction(1, root), None
    return Fraction(1 / math.sqrt(E)), (f"E = {E} is not a perfect square: the scale 1/sqrt({E}) "
                                        f"is taken as its binary64 rounding")


def _from_mha(layers: Sequence[tuple[np.ndarray, np.ndarray]], tokens: int, source: str, kind: str,
              notes: list[str]) -> ImportedModel:
    """``(in_proj_weight, out_proj.weight)`` per layer -> ``Q = c W_q^T, K = W_k^T, V = W_o W_v``."""
    Q, K, V, widths = [], [], [], []
    for i, (w_in, w_out) in enumerate(layers, 1):
        w_in = _real_array(f"layer {i} in_proj_weight", w_in)
        w_out = _real_array(f"layer {i} out_proj.weight", w_out)
        E = w_in.shape[1]
        if w_in.shape != (3 * E, E) or w_out.shape != (E, E):
            raise SymattnError(f"layer {i}: in_proj_weight {w_in.shape} and out_proj.weight "
                               f"{w_out.shape} do not form an E x E single-head attention")
        if widths and widths[-1] != E:
            raise SymattnError(f"layer {i} has embed_dim {E} but layer {i - 1} outputs width "
                               f"{widths[-1]}: the shapes do not chain")
        widths.append(E)
        c, note = _scale(E)
        if note and note not in notes:
            notes.append(note)
        w = exact_rationals(w_in)
        Q.append(w[:E].T * c)
        K.append(w[E:2 * E].T.copy())
        V.append(exact_rationals(w_out).dot(w[2 * E:]))
    if not Q:
        raise SymattnError("no attention layers found")
    notes.append("out_proj and the value projection enter only through V_i = W_o W_v "
                 "(folded; their split is not identifiable)")
    arch = Architecture(tuple([widths[0]] + widths), tuple(widths), tokens,
                        normalizers("exp", len(Q)))
    return ImportedModel(arch, NativeParams(tuple(Q), tuple(K), tuple(V)), source, kind, notes,
                         torch_layout=True)


def from_torch(modules: Iterable, tokens: int = 4, source: str = "torch modules") -> ImportedModel:
    """A native stack from ``torch.nn.MultiheadAttention`` modules (applied in order).

    Each module must have ``num_heads = 1``, no biases, no ``bias_k``/``bias_v``,
    ``add_zero_attn = False``, ``kdim = vdim = embed_dim`` and dropout 0; see
    the module docstring for the mapping.

    Raises
    ------
    SymattnError
        For anything not covered, naming what it is.

    Examples
    --------
    >>> import torch                                        # doctest: +SKIP
    >>> mha = torch.nn.MultiheadAttention(4, 1, bias=False)  # doctest: +SKIP
    >>> from_torch([mha]).arch.widths                       # doctest: +SKIP
    (4, 4)
    """
    torch = _torch()
    layers = []
    for i, m in enumerate(modules, 1):
        name = type(m).__name__
        if not isinstance(m, torch.nn.MultiheadAttention):
            raise SymattnError(f"layer {i} is a {name}: only torch.nn.MultiheadAttention "
                               f"layers are covered")
        problems = []
        if m.num_heads != 1:
            problems.append(f"num_heads = {m.num_heads} (only single-head attention is covered)")
        if not m._qkv_same_embed_dim:
            problems.append(f"kdim/vdim ({m.kdim}, {m.vdim}) differ from embed_dim {m.embed_dim}")
        if m.in_proj_bias is not None or (m.out_proj.bias is not None):
            problems.append("biases (bias=True)")
        if m.bias_k is not None or m.bias_v is not None:
            problems.append("bias_k/bias_v (add_bias_kv=True)")
        if m.add_zero_attn:
            problems.append("add_zero_attn=True")
        if m.dropout:
            problems.append(f"dropout = {m.dropout}")
        if problems:
            raise SymattnError(f"layer {i}: not covered: {'; '.join(problems)}")
        layers.append((m.in_proj_weight.detach().double().cpu().numpy(),
                       m.out_proj.weight.detach().double().cpu().numpy()))
    return _from_mha(layers, tokens, source, "torch-modules", [])


_MHA_FIELDS = {"in_proj_weight", "out_proj.weight"}
_NOT_COVERED = {
    "in_proj_bias": "biases", "out_proj.bias": "biases", "bias_k": "bias_k (add_bias_kv)",
    "bias_v": "bias_v (add_bias_kv)", "q_proj_weight": "kdim/vdim different from embed_dim",
    "k_proj_weight": "kdim/vdim different from embed_dim",
    "v_proj_weight": "kdim/vdim different from embed_dim",
}


def _layer_order(prefix: str) -> tuple:
    return tuple(int(p) if p.isdigit() else p for p in prefix.split(".") if p)


def from_state_dict(state: Mapping[str, Any], tokens: int = 4,
                    source: str = "state dict") -> ImportedModel:
    """A native stack from the state dict of a list of ``MultiheadAttention`` modules.

    Keys ``<prefix>in_proj_weight`` and ``<prefix>out_proj.weight`` per layer;
    layers ordered by their prefix (``0.``, ``1.``, ... or ``layers.0.``, ...).
    ``num_heads`` and dropout are not in a state dict: 1 and 0 are assumed and
    listed in the report.

    Raises
    ------
    SymattnError
        For biases, ``bias_k``/``bias_v``, separate ``q/k/v_proj_weight``,
        unknown keys, or a layer missing one of its two weights.

    Examples
    --------
    >>> import numpy as np
    >>> sd = {"0.in_proj_weight": np.ones((3, 1)), "0.out_proj.weight": np.ones((1, 1))}
    >>> m = from_state_dict(sd)
    >>> m.arch.widths, [str(v) for v in m.theta.V[0].flat]
    ((1, 1), ['1'])
    """
    groups: dict[str, dict[str, Any]] = {}
    for key, value in state.items():
        key = str(key)
        for f in sorted(_MHA_FIELDS | set(_NOT_COVERED), key=len, reverse=True):
            if key == f or key.endswith("." + f):
                prefix = key[: len(key) - len(f)]
                if f in _NOT_COVERED:
                    raise SymattnError(f"{key}: not covered: {_NOT_COVERED[f]}")
                groups.setdefault(prefix, {})[f] = value
                break
        else:
            if "mask" in key.lower():
                raise SymattnError(f"{key}: attention masks are not covered (the audit is of "
                                   f"unmasked self-attention)")
            raise SymattnError(f"unknown state-dict entry {key!r}: only the in_proj_weight and "
                               f"out_proj.weight of bias-free torch.nn.MultiheadAttention layers "
                               f"are covered")
    layers = []
    for prefix in sorted(groups, key=_layer_order):
        g = groups[prefix]
        missing = sorted(_MHA_FIELDS - set(g))
        if missing:
            raise SymattnError(f"layer {prefix or '(no prefix)'} lacks {', '.join(missing)}")
        layers.append(tuple(_tensor_array(g[f]) for f in ("in_proj_weight", "out_proj.weight")))
    if not layers:
        raise SymattnError("the state dict holds no attention layers")
    notes = ["num_heads = 1 and dropout = 0 assumed (a state dict does not record them); "
             "attention masks are not covered"]
    return _from_mha(layers, tokens, source, "torch-state-dict", notes)


def _tensor_array(value: Any) -> np.ndarray:
    if hasattr(value, "detach"):
        if value.is_complex():
            raise SymattnError("complex weights are not supported")
        return value.detach().double().cpu().numpy()
    return np.asarray(value)


def load_model(path: "str | Path", normalizer: "str | Sequence | None" = None,
               tokens: int = 4) -> ImportedModel:
    """Read a model file: ``.npz`` (:func:`from_arrays`) or ``.pt``/``.pth`` (a state dict).

    Parameters
    ----------
    path : str or Path
        The file.
    normalizer : str or sequence, optional
        For ``.npz`` (default softmax ``exp``); a PyTorch model is always softmax,
        so any other value is refused there.
    tokens : int
        The token count ``n >= 2`` of the audit.

    Raises
    ------
    SymattnError
        Missing file, unknown suffix, unreadable file, or an unsupported model.
    """
    path = Path(path)
    if not path.is_file():
        raise SymattnError(f"no such file: {path}")
    suffix = path.suffix.lower()
    if suffix == ".npz":
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
        except (OSError, ValueError) as exc:
            raise SymattnError(f"cannot read {path} as a NumPy .npz file: {exc}") from None
        return from_arrays(arrays, normalizer or "exp", tokens, str(path))
    if suffix in (".pt", ".pth"):
        if normalizer not in (None, "exp"):
            raise SymattnError("torch.nn.MultiheadAttention always uses softmax: --normalizer "
                               "must be exp (or omitted) for a PyTorch file")
        torch = _torch()
        try:
            state = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as exc:  # torch raises UnpicklingError, RuntimeError, ...
            raise SymattnError(f"cannot read {path} as a PyTorch state dict ({type(exc).__name__}); "
                               f"save it with torch.save(model.state_dict(), path)") from None
        if not isinstance(state, Mapping):
            raise SymattnError(f"{path} holds a {type(state).__name__}, not a state dict")
        return from_state_dict(state, tokens, str(path))
    raise SymattnError(f"unknown model format {suffix or '(no suffix)'!r} of {path}: use .npz "
                       f"(arrays Q1, K1, V1, ...) or .pt/.pth (a MultiheadAttention state dict)")


# ------------------------------------------------------------------- audit
@dataclass
class Audit:
    """The audit report of one model (see :meth:`to_json` for the keys).

    Attributes
    ----------
    model : ImportedModel
    effective : EffectiveParams
        ``(L, M_1..M_D)``, exact rationals.
    hypotheses : list of dict
        ``theorem``, ``name``, ``holds`` (True, False, or None = not decided
        by the theorem), ``detail``; all exact.
    fiber : Fiber
        :func:`symattn.fibers.effective_fiber`, verified exactly.
    distances : dict
        Float64 norms: ``L`` and one entry per layer.
    spectrum : Spectrum or None
        The contact spectrum along the model's own ray (None if not computed).
    spectrum_note : str or None
        Why it was not computed.
    kernel : dict
        Exact gauge counts: ``factor_gauges``, ``interface``, ``rank`` of
        their span.
    singular_values : dict
        ``bank_size``, ``float64`` (all ``P``), ``high_precision`` (positive ones,
        on the exact complement of the gauge kernel), ``digits``.
    ranks : dict
        ``parameters``, ``kernel``, ``exact`` (None if unknown), ``exact_kind``,
        ``float64_numerical``, ``high_precision_numerical``, ``below_cutoff``,
        ``below_float64_eps``.
    verdict : str
        The plain-language answer.
    """

    model: ImportedModel
    effective: EffectiveParams
    hypotheses: list
    fiber: Fiber
    distances: dict
    spectrum: Spectrum | None
    spectrum_note: str | None
    kernel: dict
    singular_values: dict
    ranks: dict
    verdict: str

    def to_json(self) -> dict:
        """JSON keys: ``source``, ``format``, ``architecture``, ``notes``,
        ``effective``, ``hypotheses``, ``fiber``, ``distances``, ``spectrum``,
        ``spectrum_note``, ``kernel``, ``singular_values``, ``ranks``,
        ``verdict``, ``kinds``."""
        arch = self.model.arch
        return {
            "source": self.model.source, "format": self.model.kind,
            "architecture": {"widths": list(arch.widths), "ranks": list(arch.ranks),
                             "tokens": arch.tokens, "depth": arch.depth,
                             "normalizers": [str(phi.expr) for phi in arch.normalizers],
                             "parameters": arch.native_size},
            "notes": list(self.model.notes),
            "effective": {k: [[str(v) for v in row] for row in m]
                          for k, m in self.effective.as_dict().items()},
            "hypotheses": self.hypotheses,
            "fiber": self.fiber.to_json(),
            "distances": self.distances,
            "spectrum": None if self.spectrum is None else self.spectrum.to_json(),
            "spectrum_note": self.spectrum_note,
            "kernel": self.kernel,
            "singular_values": self.singular_values,
            "ranks": self.ranks,
            "verdict": self.verdict,
            "kinds": {"effective": "exact rationals of the binary64 weights",
                      "hypotheses": "exact", "fiber": "exact (verified by exact series and "
                      "symbolic identities)", "distances": "numerical, float64",
                      "spectrum": "exact (certified modular Smith orders)",
                      "singular_values": f"numerical: float64 and {self.singular_values['digits']} "
                                         f"digits", "ranks": "exact rank from the spectrum; "
                      "numerical ranks under the cutoff 1e-10 sigma_1"},
        }

    def to_text(self) -> str:
        """The report as aligned, labelled tables."""
        return _format(self)

    def plot(self, path: "str | Path") -> None:
        """Write the singular values at ``t = 1`` (float64 and high precision) as a PNG."""
        _plot(self, Path(path))


def _hypotheses(model: ImportedModel, eta: EffectiveParams) -> list[dict]:
    arch, theta = model.arch, model.theta
    n, out = arch.tokens, []

    def add(theorem, name, holds, detail=""):
        out.append({"theorem": theorem, "name": name, "holds": holds, "detail": detail})

    add("1-3", "L != 0", not is_zero(eta.L))
    for i, (Mi, phi) in enumerate(zip(eta.M, arch.normalizers), 1):
        add("1, 3", f"sym M_{i} != 0", not is_zero(symmetric_part(Mi)))
    for i, phi in enumerate(arch.normalizers, 1):
        add("2", f"h_{i}'(0) != 0", phi.slope != 0, f"h_{i}'(0) = {phi.slope}")
    for i, (Mi, phi) in enumerate(zip(eta.M, arch.normalizers), 1):
        locus = collapse_locus(phi, n)
        if is_zero(Mi):
            holds, detail = True, "M = 0"
        elif not is_zero(symmetric_part(Mi)):
            holds, detail = False, "sym M != 0 (every collapse locus consists of skew matrices)"
        elif locus == "skew":
            holds, detail = True, f"nonzero skew M, n = {n}, h odd: Z = skew matrices"
        elif locus == "zero":
            holds, detail = False, "nonzero skew M, Z = {0}"
        else:
            holds, detail = None, "nonzero skew M: Theorem 2 does not decide Z here"
        add("2", f"M_{i} in Z_{i} (collapse)", holds, detail)
    ks = sorted({phi.k for phi in arch.normalizers})
    add("3, 4", "common first degree k", len(ks) == 1, "k = " + ", ".join(map(str, ks)))
    equal = len(set(arch.widths)) == 1
    add("4", "equal widths d_0 = ... = d_D", equal, f"widths {list(arch.widths)}")
    for i, (q, k, v, r) in enumerate(zip(theta.Q, theta.K, theta.V, arch.ranks), 1):
        d_in = arch.widths[i - 1]
        add("4", f"r_{i} <= d", r <= d_in, f"r = {r}, d = {d_in}")
        add("4", f"Q_{i}, K_{i} full column rank", rank_exact(q) == r and rank_exact(k) == r,
            f"ranks {rank_exact(q)}, {rank_exact(k)} of {r}")
        add("4", f"sym(Q_{i} K_{i}^T) != 0", not is_zero(symmetric_part(q.dot(k.T))))
        square = v.shape[0] == v.shape[1]
        add("4", f"V_{i} invertible", square and rank_exact(v) == v.shape[0],
            f"rank {rank_exact(v)} of {v.shape[0]} x {v.shape[1]}")
    return out


def _sigma_min(a: np.ndarray) -> float:
    return float(np.linalg.svd(a, compute_uv=False).min())


def _distances(model: ImportedModel, eta: EffectiveParams) -> dict:
    """Numerical (float64) distances to the collapse loci and degenerate factor ranks."""
    f = lambda a: np.vectorize(float, otypes=[float])(a)  # noqa: E731
    out = {"L_frobenius": float(np.linalg.norm(f(eta.L))), "layers": []}
    p = model.float_params()
    for i, (Mi, phi) in enumerate(zip(eta.M, model.arch.normalizers), 1):
        M = f(Mi)
        sym = float(np.linalg.norm((M + M.T) / 2))
        full = float(np.linalg.norm(M))
        locus = collapse_locus(phi, model.arch.tokens)
        dist = {"zero": full, "skew": sym}.get(locus)
        out["layers"].append({
            "layer": i, "M_frobenius": full, "sym_M_frobenius": sym,
            "sym_relative": sym / full if full else None, "collapse_locus": locus,
            "distance_to_collapse": dist,
            "sigma_min_Q": _sigma_min(p[f"Q{i}"]), "sigma_min_K": _sigma_min(p[f"K{i}"]),
            "sigma_min_V": _sigma_min(p[f"V{i}"]),
        })
    return out


def _ray_spectrum(model: ImportedModel, bank: "int | str", seed: int) -> tuple[Spectrum | None, str | None]:
    arch, theta = model.arch, model.theta
    if len(set(arch.widths)) != 1:
        return None, (f"not computed: symattn.spectrum.native_spectrum needs equal widths "
                      f"d_0 = ... = d_D (Theorem 4's setting); this stack has widths "
                      f"{list(arch.widths)}")
    try:
        spec = native_spectrum(arch, bank=bank, seed=seed, path=(theta.Q, theta.K, theta.V))
    except SymattnError as exc:
        return None, f"not computed: {exc}"
    return spec, None


def _kernel(arch: Architecture, theta: NativeParams) -> tuple[dict, np.ndarray]:
    from .model import factor_gauges, interface_directions

    gauges = len(list(factor_gauges(arch, theta)))
    interface = len(list(interface_directions(arch, theta)))
    complement = kernel_complement(exact_kernel_vectors(arch, theta), arch.native_size)
    rank = arch.native_size - complement.shape[1]
    return {"factor_gauges": gauges, "interface": interface, "rank": rank}, complement


def audit(model: ImportedModel, bank: "int | str" = "auto", digits: int = 50, seed: int = 0,
          verify: bool = True) -> Audit:
    """The full audit of an imported model (see the module docstring).

    Parameters
    ----------
    model : ImportedModel
        From :func:`load_model`, :func:`from_arrays`, :func:`from_torch` or
        :func:`from_state_dict`.
    bank : int or "auto"
        Size of the seeded rational input bank (``"auto"``: grown until it
        separates the spectrum's divided frame).
    digits : int
        Working digits of the high-precision singular values.
    seed : int
        Seed of the bank and of the fiber's rays.
    verify : bool
        Verify the fiber by exact computation (:func:`symattn.fibers.effective_fiber`).

    Returns
    -------
    Audit
        Built completely before anything is printed.
    """
    if isinstance(bank, bool) or not (bank == "auto" or (isinstance(bank, int) and bank >= 1)):
        raise SymattnError(f"bank must be a positive integer or 'auto', got {bank!r}")
    if digits < 20:
        raise SymattnError(f"use at least 20 digits for the high-precision singular values, got {digits}")
    arch, theta = model.arch, model.theta
    eta = reduction(theta)
    hypotheses = _hypotheses(model, eta)
    fib = effective_fiber(eta.L, eta.M, arch.normalizers, arch.tokens, verify=verify, seed=seed)
    distances = _distances(model, eta)
    spectrum, note = _ray_spectrum(model, bank, seed)
    kernel, complement = _kernel(arch, theta)
    if spectrum is not None:
        size = spectrum.bank_size
    elif bank != "auto":
        size = int(bank)
    else:
        size = -(-complement.shape[1] // (arch.widths[-1] * arch.tokens)) + 1
    X = random_bank(arch, size, seed)
    J64 = observation_jacobian(arch, model.float_params(), X, Float64())
    s64 = [float(x) for x in np.linalg.svd(J64, compute_uv=False)]
    Jhp = observation_jacobian(arch, theta.as_dict(), X, BallAlgebra(digits))
    try:
        shp = [float(s.mid()) for s in positive_singular_values(Jhp, complement, digits)]
        hp_note = None
    except SymattnError as exc:  # more kernel than the gauges (a degenerate model), or too few digits
        shp, hp_note = None, (f"not resolved: {exc}; the Jacobian at t = 1 may have a kernel beyond "
                              f"the exact gauges (a collapsed or rank-deficient layer)")
    sigma1 = shp[0] if shp else 0.0
    exact = spectrum.rank if spectrum is not None and spectrum.certified else None
    ranks = {
        "parameters": arch.native_size, "kernel": kernel["rank"], "exact": exact,
        "exact_kind": ("certified: parameters - exact kernel, Smith form over F_p[[t]] "
                       "against proven bounds") if exact is not None else
                      f"unknown (at most {arch.native_size - kernel['rank']}, the exact gauge bound)",
        "float64_numerical": numerical_rank(s64, CUTOFF),
        "high_precision_numerical": None if shp is None else numerical_rank(shp, CUTOFF),
        "below_cutoff": None if shp is None else sum(1 for s in shp if s <= CUTOFF * sigma1),
        "below_float64_eps": None if shp is None else sum(1 for s in shp if s <= _EPS * sigma1),
    }
    singular = {"bank_size": size, "bank": "symattn.model.random_bank(seed=%d)" % seed,
                "digits": digits, "float64": s64, "high_precision": shp,
                "high_precision_note": hp_note,
                "float64_vs_high_precision_max_relative": _agreement(s64, shp)}
    verdict = _verdict(model, fib, kernel, spectrum, note, ranks, hypotheses)
    return Audit(model, eta, hypotheses, fib, distances, spectrum, note, kernel, singular,
                 ranks, verdict)


def _agreement(s64: list[float], shp: list[float]) -> float | None:
    """Largest relative difference of the float64 and high-precision positive singular values."""
    if not shp:  # None (not resolved) or empty
        return None
    return max(abs(a - b) / b for a, b in zip(s64, shp) if b > 0)


def _layers(xs: Sequence[int]) -> str:
    if not xs:
        return ""
    if len(xs) > 2 and list(xs) == list(range(xs[0], xs[-1] + 1)):
        return f"M_{xs[0]}..M_{xs[-1]}"
    return ", ".join(f"M_{i}" for i in xs)


def _verdict(model: ImportedModel, fib: Fiber, kernel: dict, spectrum: Spectrum | None,
             note: str | None, ranks: dict, hypotheses: list[dict]) -> str:
    arch = model.arch
    D = arch.depth
    checked = "verified exactly" if fib.verified else "not verified"
    determined = [i for i in range(1, D + 1) if i not in fib.free_layers]
    if fib.fiber == "singleton":
        first = f"The function determines L and {_layers(list(range(1, D + 1)))} exactly"
    elif fib.fiber == "sign-orbit":
        first = (f"The function determines L and {_layers(list(range(1, D + 1)))} exactly up to "
                 f"independent sign flips of {_layers(fib.sign_flip_layers)} (even normalizer)")
    elif fib.fiber == "free-suffix":
        first = (f"The function determines L and {_layers(determined)} exactly; layer "
                 f"{fib.first_collapse} maps every input to consensus, so {_layers(fib.free_layers)} "
                 f"cannot be determined at all")
    elif fib.fiber == "zero-readout":
        first = "The function is identically zero (L = 0): no score matrix can be determined"
    else:
        first = f"The paper's theorems do not decide this model's fiber: {fib.sentence}"
    parts = [f"{first} ({fib.theorem}, {checked})."]
    gauge = (f"It cannot determine the query/key factorization ({kernel['factor_gauges']} "
             f"directions Q_i B, K_i B^-T)")
    if kernel["interface"]:
        gauge += f" or the intermediate value maps ({kernel['interface']} directions)"
    gauge += f": {kernel['rank']} native directions are exact zeros of the Jacobian"
    if model.torch_layout:
        extra = sum(d * d for d in arch.widths[1:])
        gauge += (f"; in PyTorch's own parameters, the split of each V_i = W_o W_v into out_proj "
                  f"and value projection adds {extra} more (when W_v is invertible)")
    parts.append(gauge + ".")
    if ranks["exact"] is not None and ranks["below_cutoff"] is not None:
        lost = ranks["exact"] - ranks["float64_numerical"]
        parts.append(
            f"Of the {ranks['exact']} identifiable directions (exact rank), "
            f"{ranks['below_cutoff']} fall below the numerical-rank cutoff 1e-10 sigma_1 on this "
            f"bank at the model's own scale, and {ranks['below_float64_eps']} below float64 "
            f"resolution (eps sigma_1): float64 reports rank {ranks['float64_numerical']}"
            + (f", {lost} short of the exact rank." if lost > 0 else
               ", the exact rank." if lost == 0 else "."))
    else:
        why = note or ("the high-precision singular values are not resolved"
                       if ranks["exact"] is not None else "the spectrum is not certified")
        parts.append(f"The exact rank is not established here ({why}); float64 sees rank "
                     f"{ranks['float64_numerical']} of at most {ranks['parameters'] - ranks['kernel']} "
                     f"(parameters minus the exact gauges).")
    if spectrum is not None and not spectrum.certified:
        failed = [h["name"] for h in hypotheses if h["theorem"] == "4" and h["holds"] is False]
        parts.append("The contact orders along the model's own ray are not certified"
                     + (f" (Theorem 4 needs {', '.join(failed)})" if failed else "")
                     + "; no sensitivity scaling is claimed.")
    elif spectrum is not None:
        bands = [b for b in spectrum.bands if b.order > 0]
        if bands:
            orders = ", ".join(f"t^{b.order} ({b.multiplicity} directions of layer {b.layer})"
                               for b in bands)
            worst = max(bands, key=lambda b: b.order)
            parts.append(f"Along the model's own ray t (Q, K) the identifiable query/key directions "
                         f"weaken like {orders} as t -> 0: near collapse, halving the query/key "
                         f"scale divides layer {worst.layer}'s singular values by about "
                         f"2^{worst.order} = {2 ** worst.order}.")
    return " ".join(parts)


def _short(v: Fraction) -> str:
    return f"{float(v):.6g}"


def _matrix_lines(name: str, m: np.ndarray) -> list[str]:
    bits = max((v.denominator.bit_length() - 1 for v in m.flat), default=0)
    head = (f"  {name} ({m.shape[0]} x {m.shape[1]}, exact rational, denominators up to 2^{bits}; "
            f"shown rounded)")
    return [head] + ["    [" + "  ".join(f"{_short(v):>11}" for v in row) + "]" for row in m]


def _yes(v) -> str:
    return {True: "yes", False: "no", None: "undecided"}[v]


def _table(rows: Sequence[tuple[str, str]], indent: str = "  ") -> list[str]:
    width = max(len(k) for k, _ in rows)
    return [f"{indent}{k:<{width}}  {v}" for k, v in rows]


def _format(a: Audit) -> str:
    m, arch = a.model, a.model.arch
    lines = [f"symattn audit of {m.source} ({m.kind})"]
    lines += _table([
        ("widths d_0..d_D", ", ".join(map(str, arch.widths))),
        ("ranks r_i", ", ".join(map(str, arch.ranks))),
        ("tokens n", str(arch.tokens)),
        ("normalizers", ", ".join(str(phi.expr) for phi in arch.normalizers)),
        ("native parameters", str(arch.native_size)),
    ])
    lines += [f"  note: {n}" for n in m.notes]
    lines.append("")
    lines.append("effective tuple (L, M_1..M_D) of eq. (3) (exact; --json gives every p/q)")
    for name, mat in a.effective.as_dict().items():
        lines += _matrix_lines(name, mat)
    lines.append("")
    lines.append("hypotheses of Theorems 1-4 (exact)")
    lines += _table([(f"Thm {h['theorem']}: {h['name']}",
                      _yes(h["holds"]) + (f"   ({h['detail']})" if h["detail"] else ""))
                     for h in a.hypotheses])
    lines.append("")
    fib = a.fiber
    lines.append(f"effective fiber (exact; {'verified' if fib.verified else 'NOT verified'} by "
                 f"exact series and symbolic identities)")
    lines += _table([("fiber", fib.fiber), ("statement", fib.theorem),
                     ("free layers", ", ".join(map(str, fib.free_layers)) or "none"),
                     ("sign-flip layers", ", ".join(map(str, fib.sign_flip_layers)) or "none")])
    lines.append(f"  {fib.sentence}")
    lines.append("")
    lines.append("distances to the collapse loci and degenerate ranks (numerical, float64)")
    lines.append(f"  ||L||_F = {a.distances['L_frobenius']:.4g}")
    head = ("layer", "||M||_F", "||sym M||_F", "to Z_i", "smin Q", "smin K", "smin V")
    rows = [head] + [(str(d["layer"]), f"{d['M_frobenius']:.4g}", f"{d['sym_M_frobenius']:.4g}",
                      "n/a" if d["distance_to_collapse"] is None else f"{d['distance_to_collapse']:.4g}",
                      f"{d['sigma_min_Q']:.4g}", f"{d['sigma_min_K']:.4g}", f"{d['sigma_min_V']:.4g}")
                     for d in a.distances["layers"]]
    widths = [max(len(r[j]) for r in rows) for j in range(len(head))]
    lines += ["  " + "  ".join(f"{c:>{w}}" for c, w in zip(r, widths)) for r in rows]
    lines.append("")
    status = ("exact" if a.spectrum is None or a.spectrum.certified
              else "modular upper bounds, NOT certified")
    lines.append(f"contact spectrum along the model's own ray t -> (t Q, t K, V) ({status})")
    if a.spectrum is None:
        lines.append(f"  {a.spectrum_note}")
    else:
        s = a.spectrum
        kind = "certified" if s.certified else "NOT certified"
        lines += _table([(f"order {b.order} ({b.block})", f"multiplicity {b.multiplicity}")
                         for b in s.bands] +
                        [("exact kernel", str(s.kernel)), ("rank", f"{s.rank} ({kind})"),
                         ("bank", f"{s.bank_size} inputs, separating: {_yes(s.bank_separating)}")])
        if not s.certified:
            lines += [f"  NOT certified: {n}" for n in s.notes]
    lines.append("")
    sv, r = a.singular_values, a.ranks
    lines.append(f"bank Jacobian at t = 1 (the model), {sv['bank_size']} seeded rational inputs "
                 f"(numerical)")
    shp = sv["high_precision"] or []
    hp = (lambda v: "n/a" if v is None else str(v))  # noqa: E731
    lines += _table([
        ("exact rank", "unknown" if r["exact"] is None else f"{r['exact']} = {r['parameters']} - "
                                                            f"{r['parameters'] - r['exact']} (exact)"),
        ("float64 numerical rank", f"{r['float64_numerical']} (cutoff 1e-10 sigma_1, float64)"),
        (f"{sv['digits']}-digit numerical rank", f"{hp(r['high_precision_numerical'])} "
                                                 f"(same cutoff, {sv['digits']} digits)"),
        ("sigma_1", f"{shp[0]:.6g} ({sv['digits']} digits)" if shp else "n/a"),
        ("smallest positive sigma", f"{shp[-1]:.6g} ({sv['digits']} digits)" if shp else "n/a"),
        ("below 1e-10 sigma_1", f"{hp(r['below_cutoff'])} positive singular values "
                                f"({sv['digits']} digits)"),
        ("below eps sigma_1", f"{hp(r['below_float64_eps'])} ({sv['digits']} digits)"),
        ("float64 vs high precision", "n/a" if sv["float64_vs_high_precision_max_relative"] is None
         else f"max relative difference {sv['float64_vs_high_precision_max_relative']:.2g}"),
    ])
    if sv["high_precision_note"]:
        lines.append(f"  {sv['digits']}-digit singular values {sv['high_precision_note']}")
    else:
        lines.append(f"  positive singular values ({sv['digits']} digits, on the complement of the "
                     f"exact kernel):")
    for k in range(0, len(shp), 8):
        lines.append("    " + " ".join(f"{x:.3e}" for x in shp[k:k + 8]))
    lines.append("")
    lines.append("verdict")
    lines.append("  " + a.verdict)
    return "\n".join(lines)


def _plot(a: Audit, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if path.suffix.lower() != ".png":
        raise SymattnError(f"--plot needs a .png file name, got {path}")
    if not path.parent.exists():
        raise SymattnError(f"cannot write {path}: no directory {path.parent}")
    sv = a.singular_values
    shp, s64 = sv["high_precision"] or [], sv["float64"]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.semilogy(range(1, len(s64) + 1), [max(x, 1e-300) for x in s64], "x", color="tab:red",
                label="float64 (all native directions)")
    ax.semilogy(range(1, len(shp) + 1), shp, "o", mfc="none", color="tab:blue",
                label=f"{sv['digits']} digits (positive, exact kernel removed)")
    if shp:
        ax.axhline(CUTOFF * shp[0], ls="--", color="gray", label="cutoff 1e-10 sigma_1")
        ax.axhline(_EPS * shp[0], ls=":", color="black", label="float64 eps sigma_1")
    if a.ranks["exact"] is not None:
        ax.axvline(a.ranks["exact"] + 0.5, color="tab:green", label=f"exact rank {a.ranks['exact']}")
    ax.set_xlabel("index")
    ax.set_ylabel("singular value of the bank Jacobian at t = 1")
    ax.set_title(f"symattn audit: {Path(a.model.source).name}")
    ax.legend(fontsize=7)
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=110)
    except OSError as exc:
        raise SymattnError(f"cannot write {path}: {exc}") from None
    finally:
        plt.close(fig)
