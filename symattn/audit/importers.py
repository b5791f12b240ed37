"""Importers of the audit: model files and objects -> a native stack in the paper's convention.

Formats, the PyTorch -> paper convention mapping and what is not covered are
described in :mod:`symattn.audit`. Every file is untrusted input.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ..errors import SymattnError
from ..model import Architecture, NativeParams, exact_rationals
from ..normalizer import normalizers
from ..numerics import require_torch

__all__ = ["ImportedModel", "from_arrays", "from_torch", "from_state_dict", "load_model"]


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
    torch = require_torch()
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
        torch = require_torch()
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
