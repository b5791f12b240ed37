"""The convention mapping: arrays and PyTorch attention modules -> heads in the paper's convention.

* ``.npz``/``.safetensors`` arrays ``Q1, K1, V1, ..., QD, KD, VD`` (tokens as
  columns), each a matrix (one head) or a stack ``(H, ...)`` of ``H`` heads
  (:func:`from_arrays`);
* a PyTorch state dict of ``nn.MultiheadAttention`` layers or of
  ``nn.TransformerEncoderLayer`` layers (:func:`from_state_dict`), and PyTorch
  modules in memory (:func:`from_torch`): head ``h`` of ``nn.MultiheadAttention``
  is ``Q_h = c W_q[h]^T``, ``K_h = W_k[h]^T``, ``V_h = W_o[:, h] W_v[h]`` (see
  :mod:`symattn.audit`).

Parts of a file that lie outside the paper's model (biases, the feed-forward
block, LayerNorms and residual connections of an encoder layer, unknown
entries) are listed in :attr:`~symattn.audit.model.ImportedModel.outside`, never
silently dropped; the audit is of the bias-free attention maps alone. Every value
goes through :func:`symattn.audit.readers.real_array` first.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from symattn.core.errors import SymattnError
from symattn.model.normalizer import normalizers
from symattn.analyses.numerics import require_torch
from symattn.audit.model import Head, ImportedModel
from symattn.audit.readers import check_count, check_tokens, real_array

__all__ = ["from_arrays", "from_state_dict", "from_torch"]


_ARRAY_KEY = re.compile(r"^([QKV])([1-9][0-9]{0,3})$")


def from_arrays(arrays: Mapping[str, Any], normalizer: "str | Sequence" = "exp", tokens: int = 4,
                source: str = "arrays", kind: str = "npz") -> ImportedModel:
    """A stack from arrays named ``Q1, K1, V1, ..., QD, KD, VD`` (tokens as columns).

    Parameters
    ----------
    arrays : mapping of str to array-like
        Exactly the keys ``Q_i, K_i`` (shape ``(d_{i-1}, r_i)``) and ``V_i``
        (shape ``(d_i, d_{i-1})``) for ``i = 1..D``; real, finite. A layer
        with ``H`` heads has arrays of shapes ``(H, d_{i-1}, r_i)`` and
        ``(H, d_i, d_{i-1})`` (its output is the sum of the heads).
    normalizer : str or sequence
        One normalizer for all layers or one per layer (default softmax).
    tokens : int
        The token count ``n >= 2`` of the audit.
    source, kind : str
        Labels for the report.

    Returns
    -------
    ImportedModel

    Raises
    ------
    SymattnError
        Unknown or missing keys, non-matrices, NaN/inf, huge entries, shapes that do not chain.

    Examples
    --------
    >>> m = from_arrays({"Q1": [[1.0]], "K1": [[0.5]], "V1": [[2.0]]})
    >>> m.arch.widths, m.arch.ranks, str(m.theta.K[0][0, 0])
    ((1, 1), (1,), '1/2')
    """
    from symattn.core.validate import require_mapping

    layers: dict[int, dict[str, np.ndarray]] = {}
    require_mapping(arrays, "arrays")
    check_tokens(tokens)
    check_count(0, len(arrays), source)
    for key in arrays:
        match = _ARRAY_KEY.match(str(key))
        if not match:
            hint = " (biases are not covered)" if "b" in str(key).lower() else ""
            raise SymattnError(f"unknown array {str(key)[:60]!r}{hint}: the arrays must be named "
                               f"exactly Q1, K1, V1, Q2, K2, V2, ...")
        value = real_array(key, arrays[key], ndim=(2, 3))
        layers.setdefault(int(match.group(2)), {})[match.group(1)] = (
            value if value.ndim == 3 else value[None])
    if not layers:
        raise SymattnError("no weight arrays found: expected Q1, K1, V1, ...")
    D = max(layers)
    for i in range(1, D + 1):
        missing = [f"{c}{i}" for c in "QKV" if c not in layers.get(i, {})]
        if missing:
            raise SymattnError(f"missing array(s) {', '.join(missing)} for a stack of depth {D}")
    out, d_in = [], layers[1]["Q"].shape[1]
    for i in range(1, D + 1):
        q, k, v = (layers[i][c] for c in "QKV")
        if not q.shape[0] == k.shape[0] == v.shape[0]:
            raise SymattnError(f"layer {i}: Q{i}, K{i}, V{i} have {q.shape[0]}, {k.shape[0]}, "
                               f"{v.shape[0]} heads")
        if q.shape[1] != d_in:
            raise SymattnError(f"Q{i} has {q.shape[1]} rows but the layer input has width {d_in} "
                               f"(the shapes do not chain)")
        if k.shape != q.shape:
            raise SymattnError(f"K{i} has shape {k.shape[1:]} but Q{i} has {q.shape[1:]}: both "
                               f"must be d_{i - 1} x r_{i}")
        if v.shape[2] != d_in or q.shape[2] == 0 or v.shape[1] == 0:
            raise SymattnError(f"V{i} has shape {v.shape[1:]}: it must be d_{i} x d_{i - 1} with "
                               f"d_{i - 1} = {d_in} columns (the shapes do not chain)")
        out.append([Head(q[h], k[h], v[h]) for h in range(q.shape[0])])
        d_in = v.shape[1]
    model = ImportedModel(out, normalizers(normalizer, D), tokens, source, kind)
    if not model.single_head:
        model.notes.append("multi-head layers: each layer's output is the sum of its heads")
    return model


def _scale(head_dim: int) -> tuple[Fraction, str | None]:
    """``1/sqrt(head_dim)``: exact for a perfect square, else its binary64 rounding (with a note)."""
    root = math.isqrt(head_dim)
    if root * root == head_dim:
        return Fraction(1, root), None
    return Fraction(1 / math.sqrt(head_dim)), (
        f"head_dim = {head_dim} is not a perfect square: the scale 1/sqrt({head_dim}) is taken "
        f"as its binary64 rounding")


def _from_mha(layers: Sequence[tuple[str, Any, Any, int]], tokens: int, source: str, kind: str,
              notes: list[str], outside: list[str]) -> ImportedModel:
    """``(name, in_proj_weight, out_proj.weight, num_heads)`` per layer -> heads
    ``Q_h = c W_q[h]^T, K_h = W_k[h]^T, V_h = W_o[:, h] W_v[h]``, ``c = 1/sqrt(E/H)``."""
    out, width = [], None
    for i, (name, w_in, w_out, H) in enumerate(layers, 1):
        w_in = real_array(f"{name}in_proj_weight", w_in)
        w_out = real_array(f"{name}out_proj.weight", w_out)
        E = w_in.shape[1]
        if w_in.shape != (3 * E, E) or w_out.shape != (E, E):
            raise SymattnError(f"layer {i}: in_proj_weight {w_in.shape} and out_proj.weight "
                               f"{w_out.shape} do not form an E x E attention layer")
        if width is not None and width != E:
            raise SymattnError(f"layer {i} has embed_dim {E} but layer {i - 1} outputs width "
                               f"{width}: the shapes do not chain")
        if H < 1 or E % H:
            raise SymattnError(f"layer {i}: embed_dim {E} is not divisible by num_heads = {H} "
                               f"(give the right --heads)")
        width, dh = E, E // H
        c, note = _scale(dh)
        if note and note not in notes:
            notes.append(note)
        heads = []
        for h in range(H):
            rows = slice(h * dh, (h + 1) * dh)
            heads.append(Head(w_in[:E][rows].T.copy(), w_in[E:2 * E][rows].T.copy(),
                              w_in[2 * E:][rows].copy(), c, w_out[:, rows].copy()))
        out.append(heads)
    if not out:
        raise SymattnError("no attention layers found")
    notes.append("out_proj and the value projection enter only through V_h = W_o[:, h] W_v[h] "
                 "(folded; their split is not identifiable)")
    return ImportedModel(out, normalizers("exp", len(out)), tokens, source, kind, notes, outside,
                         torch_layout=True)


_ATTENTION = ("in_proj_weight", "out_proj.weight", "in_proj_bias", "out_proj.bias", "bias_k",
              "bias_v", "q_proj_weight", "k_proj_weight", "v_proj_weight")
_REFUSED = {"bias_k": "bias_k (add_bias_kv=True) adds a token: not the paper's self-attention",
            "bias_v": "bias_v (add_bias_kv=True) adds a token: not the paper's self-attention",
            "q_proj_weight": "separate q/k/v_proj_weight (kdim/vdim differ from embed_dim): "
                             "not self-attention",
            "k_proj_weight": "separate q/k/v_proj_weight (kdim/vdim differ from embed_dim): "
                             "not self-attention",
            "v_proj_weight": "separate q/k/v_proj_weight (kdim/vdim differ from embed_dim): "
                             "not self-attention"}
_ENCODER_PARTS = {"linear1": "feed-forward linear1", "linear2": "feed-forward linear2",
                  "norm1": "LayerNorm norm1", "norm2": "LayerNorm norm2"}


def _layer_order(prefix: str) -> tuple:
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in prefix.split(".") if p)


def from_state_dict(state: Mapping[str, Any], tokens: int = 4, source: str = "state dict",
                    heads: "int | Sequence[int]" = 1, kind: str = "torch-state-dict",
                    heads_known: bool = False) -> ImportedModel:
    """A stack from the state dict of ``nn.MultiheadAttention`` or ``nn.TransformerEncoderLayer`` layers.

    Attention layers are the prefixes with ``in_proj_weight`` and
    ``out_proj.weight`` (``<p>self_attn.`` inside an encoder layer), ordered by
    prefix (``0.``, ``1.``, ... or ``layers.0.``, ...). A state dict does not
    record ``num_heads``: ``heads`` gives it (one value, or one per layer).
    Biases, an encoder layer's feed-forward block, LayerNorms and residual
    connections, and any other entry are named in :attr:`ImportedModel.outside`
    (outside the paper's model; the audit is of the bias-free attention maps).

    Raises
    ------
    SymattnError
        For ``bias_k``/``bias_v``, separate ``q/k/v_proj_weight``, a layer
        missing one of its two weights, heads that do not divide the width,
        or no attention layer at all.

    Examples
    --------
    >>> sd = {"0.in_proj_weight": np.ones((3, 1)), "0.out_proj.weight": np.ones((1, 1))}
    >>> m = from_state_dict(sd)
    >>> m.arch.widths, [str(v) for v in m.theta.V[0].flat]
    ((1, 1), ['1'])
    """
    from symattn.core.validate import require_int, require_mapping

    require_mapping(state, "state")
    check_tokens(tokens)
    for h in [heads] if not isinstance(heads, (list, tuple)) else heads:
        require_int(h, "heads", 1, 4096)
    check_count(0, len(state), source)
    groups: dict[str, dict[str, Any]] = {}
    other: list[str] = []
    for key, value in state.items():
        key = str(key)
        for f in sorted(_ATTENTION, key=len, reverse=True):
            if key == f or key.endswith("." + f):
                if f in _REFUSED:
                    raise SymattnError(f"{key[:80]}: not covered: {_REFUSED[f]}")
                groups.setdefault(key[: len(key) - len(f)], {})[f] = value
                break
        else:
            other.append(key)
    layer_prefixes = sorted(groups, key=_layer_order)
    notes: list[str] = []
    outside: list[str] = []
    encoder = {p[: -len("self_attn.")] for p in layer_prefixes if p.endswith("self_attn.")}
    for key in other:
        base = next((p for p in encoder if key.startswith(p)), None)
        part = key[len(base):].split(".")[0] if base is not None else None
        if part in _ENCODER_PARTS:
            continue
        outside.append(f"{key[:80]}: not part of an attention layer (not audited)")
    layers = []
    per_layer = [heads] * len(layer_prefixes) if isinstance(heads, int) else list(heads)
    if len(per_layer) != len(layer_prefixes):
        raise SymattnError(f"--heads gives {len(per_layer)} values for {len(layer_prefixes)} layers")
    for i, prefix in enumerate(layer_prefixes, 1):
        g = groups[prefix]
        missing = sorted({"in_proj_weight", "out_proj.weight"} - set(g))
        if missing:
            raise SymattnError(f"layer {prefix or '(no prefix)'} lacks {', '.join(missing)}")
        biases = [f for f in ("in_proj_bias", "out_proj.bias") if f in g]
        if biases:
            outside.append(f"layer {i}: {', '.join(prefix + b for b in biases)} (biases: the "
                           f"audit is of the bias-free attention map)")
        if prefix.endswith("self_attn.") and prefix[: -len("self_attn.")] in encoder:
            base = prefix[: -len("self_attn.")]
            parts = sorted({k[len(base):].split(".")[0] for k in other if k.startswith(base)}
                           & set(_ENCODER_PARTS))
            outside.append(f"layer {i} ({base or 'encoder layer'}): residual connections"
                           + (", " + ", ".join(_ENCODER_PARTS[p] for p in parts) if parts else "")
                           + " of the encoder layer (outside the paper's model; the audit is of "
                             "its self-attention sublayer alone)")
        layers.append((prefix, g["in_proj_weight"], g["out_proj.weight"], int(per_layer[i - 1])))
    if not layers:
        raise SymattnError("the state dict holds no attention layers (in_proj_weight and "
                           "out_proj.weight of nn.MultiheadAttention)")
    if not heads_known:
        notes.append(f"num_heads = {', '.join(map(str, sorted(set(per_layer))))} assumed (a state "
                     f"dict does not record it: give --heads H)")
    notes.append("dropout is not applied (the audit is of the model in eval mode); attention masks "
                 "are call-time arguments: the audit is of unmasked self-attention "
                 "unless --causal")
    return _from_mha(layers, tokens, source, kind, notes, outside)


def from_torch(modules: "Iterable | Any", tokens: int = 4, source: str = "torch modules") -> ImportedModel:
    """A stack from PyTorch modules: ``nn.MultiheadAttention``, ``nn.TransformerEncoderLayer``,
    an ``nn.TransformerEncoder``, or a sequence of those (applied in order).

    ``num_heads`` is read from each module; see :func:`from_state_dict` for
    what is outside the paper's model.

    Raises
    ------
    SymattnError
        For anything else, naming what it is.

    Examples
    --------
    >>> import torch                                        # doctest: +SKIP
    >>> mha = torch.nn.MultiheadAttention(4, 2, bias=False)  # doctest: +SKIP
    >>> from_torch([mha]).heads                              # doctest: +SKIP
    (2,)
    """
    torch = require_torch()
    if isinstance(modules, torch.nn.TransformerEncoder):
        modules = list(modules.layers)
    elif isinstance(modules, (torch.nn.MultiheadAttention, torch.nn.TransformerEncoderLayer)):
        modules = [modules]
    state, heads = {}, []
    for i, m in enumerate(modules):
        if isinstance(m, torch.nn.TransformerEncoderLayer):
            attn = m.self_attn
        elif isinstance(m, torch.nn.MultiheadAttention):
            attn = m
        else:
            raise SymattnError(f"layer {i + 1} is a {type(m).__name__}: only "
                               f"nn.MultiheadAttention and nn.TransformerEncoderLayer are covered")
        if attn.add_zero_attn:
            raise SymattnError(f"layer {i + 1}: add_zero_attn=True adds a token: not covered")
        heads.append(attn.num_heads)
        state.update({f"{i}.{k}": v for k, v in m.state_dict().items()})
    return from_state_dict(state, tokens, source, heads, "torch-modules", heads_known=True)


# ------------------------------------------------------------------ files
