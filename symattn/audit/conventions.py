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

from symattn.core.errors import InternalError, SymattnError
from symattn.model.normalizer import normalizers
from symattn.core.optional import require_torch
from symattn.audit.model import ACTIVATIONS, MLP, Attention, Head, ImportedModel, Norm, TransformerLayer
from symattn.audit.readers import check_count, check_tokens, real_array

__all__ = ["from_arrays", "from_state_dict", "from_torch", "ACTIVATIONS"]


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


def _attention_weights(i: int, in_name: str, w_in: Any, out_name: str, w_out: Any,
                       width: int | None) -> tuple[np.ndarray, np.ndarray, int]:
    """``in_proj_weight`` and ``out_proj.weight`` of layer ``i`` as checked float64 arrays, and ``E``."""
    w_in, w_out = real_array(in_name, w_in), real_array(out_name, w_out)
    E = w_in.shape[1]
    if w_in.shape != (3 * E, E) or w_out.shape != (E, E):
        raise SymattnError(f"layer {i}: in_proj_weight {w_in.shape} and out_proj.weight "
                           f"{w_out.shape} do not form an E x E attention layer")
    if width is not None and width != E:
        raise SymattnError(f"layer {i} has embed_dim {E} but layer {i - 1} outputs width "
                           f"{width}: the shapes do not chain")
    return w_in, w_out, E


def _from_mha(layers: Sequence[tuple[str, Any, Any, int]], tokens: int, source: str, kind: str,
              notes: list[str], outside: list[str]) -> ImportedModel:
    """``(name, in_proj_weight, out_proj.weight, num_heads)`` per layer -> heads
    ``Q_h = c W_q[h]^T, K_h = W_k[h]^T, V_h = W_o[:, h] W_v[h]``, ``c = 1/sqrt(E/H)``."""
    out, width = [], None
    for i, (name, w_in, w_out, H) in enumerate(layers, 1):
        w_in, w_out, E = _attention_weights(i, f"{name}in_proj_weight", w_in, f"{name}out_proj.weight",
                                            w_out, width)
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
_LAYER_PARTS = ("linear1", "linear2", "norm1", "norm2")


def _group(state: Mapping[str, Any]) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Attention entries by module prefix (in the state dict's order, which is module order) and the rest."""
    groups: dict[str, dict[str, Any]] = {}
    other: list[str] = []
    for key in state:
        key = str(key)
        for f in sorted(_ATTENTION, key=len, reverse=True):
            if key == f or key.endswith("." + f):
                if f in _REFUSED:
                    raise SymattnError(f"{key[:80]}: not covered: {_REFUSED[f]}")
                groups.setdefault(key[: len(key) - len(f)], {})[f] = key
                break
        else:
            other.append(key)
    return groups, other


def _norm(state: Mapping[str, Any], prefix: str, eps: float, stated: bool = False) -> Norm:
    """The norm at ``prefix``: a LayerNorm, said as assumed unless ``stated`` (a module, a config,
    ``--norm-kind``) or a bias is stored (an RMSNorm stores a gain alone, as a bias-free LayerNorm)."""
    gain, bias = state.get(prefix + "weight"), state.get(prefix + "bias")
    name = prefix.rstrip(".")
    return Norm(name, None if gain is None else real_array(prefix + "weight", gain, ndim=(1,)),
                None if bias is None else real_array(prefix + "bias", bias, ndim=(1,)), eps,
                "given" if stated or bias is not None else "assumed")


def _linear(state: Mapping[str, Any], prefix: str) -> tuple[np.ndarray, np.ndarray | None]:
    if prefix + "weight" not in state:
        raise SymattnError(f"{prefix}weight is missing (an encoder layer's feed-forward sublayer)")
    w = real_array(prefix + "weight", state[prefix + "weight"])
    b = state.get(prefix + "bias")
    return w, None if b is None else real_array(prefix + "bias", b, ndim=(1,))


def _vector(state, key: str | None, size: int) -> np.ndarray | None:
    if key is None:
        return None
    v = real_array(key, state[key], ndim=(1,))
    if v.shape != (size,):
        raise SymattnError(f"{key} has shape {v.shape}, expected ({size},)")
    return v


def _check_read(state: Mapping[str, Any], groups: Mapping[str, Mapping[str, str]], blocks: Sequence[TransformerLayer],
                config: Mapping[str, Any], layer_config: Mapping[str, Mapping[str, Any]], heads_known: bool) -> None:
    """Post-conditions of :func:`from_state_dict`, checked where the layers are used: they are in module
    order (each layer's first entry comes later in the state dict than the previous layer's), and a
    head count the file's config gives is the one read. A violation is a bug (exit 70), never a report
    of a different model."""
    keys = {str(k): j for j, k in enumerate(state)}
    first = [min(keys[k] for k in g.values()) for g in groups.values()]
    read = [b.attention.name for b in blocks]
    order = [p.rstrip(".") or "(no prefix)" for _, p in sorted(zip(first, groups))]
    if read != order:
        raise InternalError(f"layers read out of module order ({', '.join(read[:4])}, ... instead of "
                            f"{', '.join(order[:4])}, ...); please report this bug")
    if config.get("heads") and not heads_known:
        wrong = [b.attention.name for b in blocks if b.attention.heads_from == "the checkpoint's config"
                 and b.attention.heads != config["heads"]]
        if wrong:
            raise InternalError(f"{wrong[0]}: num_heads read differs from the config's {config['heads']}; "
                                f"please report this bug")


def from_state_dict(state: Mapping[str, Any], tokens: int | None = 4, source: str = "state dict",
                    heads: "int | Sequence[int] | None" = 1, kind: str = "torch-state-dict",
                    heads_known: bool = False, config: Mapping[str, Any] | None = None,
                    layer_config: Mapping[str, Mapping[str, Any]] | None = None,
                    notes: Sequence[str] = ()) -> ImportedModel:
    """A model from the state dict of ``nn.MultiheadAttention`` layers or ``nn.TransformerEncoderLayer``
    layers (an ``nn.TransformerEncoder``, inside a larger module or not), in module order.

    Attention layers are the prefixes with ``in_proj_weight`` and
    ``out_proj.weight``; an encoder layer is a prefix ``p`` with
    ``p.self_attn.*``, ``p.linear1``, ``p.linear2``, ``p.norm1``, ``p.norm2``.
    Layers are taken in the order of the state dict, which is the order in
    which PyTorch registered the modules. A state dict records neither
    ``num_heads`` nor ``norm_first`` nor the activation: ``heads`` (or
    ``config["nhead"]``), ``config["norm_first"]``, ``config["activation"]``
    give them; otherwise PyTorch's defaults (post-norm, ReLU) are assumed and
    said. ``layer_config`` (from :func:`from_torch`) gives them per layer
    prefix. A LayerNorm after the last layer (``encoder.norm``) is the final
    norm; entries of no layer (an embedding, a readout) are named in
    :attr:`ImportedModel.outside`.

    Raises
    ------
    SymattnError
        For ``bias_k``/``bias_v``, separate ``q/k/v_proj_weight``, the
        cross-attention of a decoder layer, a layer missing one of its two
        weights, heads that do not divide the width, or no attention layer.

    Examples
    --------
    >>> sd = {"0.in_proj_weight": np.ones((3, 1)), "0.out_proj.weight": np.ones((1, 1))}
    >>> m = from_state_dict(sd)
    >>> m.arch.widths, [str(v) for v in m.theta.V[0].flat], m.transformer_layers[0].kind
    ((1, 1), ['1'], 'attention')
    """
    from symattn.core.validate import require_int, require_mapping

    require_mapping(state, "state")
    check_tokens(tokens or 4)
    for h in [heads] if not isinstance(heads, (list, tuple)) else heads:
        if h is not None:
            require_int(h, "heads", 1, 4096)
    check_count(0, len(state), source)
    config = dict(config or {})
    layer_config = dict(layer_config or {})
    groups, other = _group(state)
    notes = list(notes)
    for prefix in groups:
        if prefix.endswith("multihead_attn."):
            raise SymattnError(f"{prefix}*: cross-attention of a decoder layer (it attends to the "
                               f"encoder's memory, not to its own tokens): not covered; audit the "
                               f"encoder (its layers' state dict) instead")
    owners = {p[: -len("self_attn.")] for p in groups if p.endswith("self_attn.")}
    if any(k.startswith(o + "norm3") for o in owners for k in other):
        raise SymattnError("a decoder layer (norm3): its cross-attention attends to the encoder's "
                           "memory: not covered; audit the encoder instead")
    prefixes = list(groups)
    per_layer = ([heads] * len(prefixes) if isinstance(heads, int) or heads is None
                 else list(heads))
    if len(per_layer) != len(prefixes):
        raise SymattnError(f"--heads gives {len(per_layer)} values for {len(prefixes)} layers")
    if not prefixes:
        raise SymattnError("the state dict holds no attention layers (in_proj_weight and "
                           "out_proj.weight of nn.MultiheadAttention)")
    used: set[str] = set()
    blocks, layers, assumed = [], [], set()
    width = None
    for i, prefix in enumerate(prefixes, 1):
        g = groups[prefix]
        missing = sorted({"in_proj_weight", "out_proj.weight"} - set(g))
        if missing:
            raise SymattnError(f"layer {prefix or '(no prefix)'} lacks {', '.join(missing)}")
        owner = prefix[: -len("self_attn.")] if prefix.endswith("self_attn.") else None
        lc = layer_config.get(owner if owner is not None else prefix, {})
        if lc.get("heads"):
            H, heads_from = lc["heads"], "the module"
        elif heads_known and per_layer[i - 1]:
            H, heads_from = per_layer[i - 1], "--heads"
        elif config.get("heads"):
            H, heads_from = config["heads"], "the checkpoint's config"
        else:
            H, heads_from = per_layer[i - 1] or 1, "assumed"
            assumed.add(H)
        w_in, w_out, E = _attention_weights(i, g["in_proj_weight"], state[g["in_proj_weight"]],
                                            g["out_proj.weight"], state[g["out_proj.weight"]], width)
        width = E
        attn = Attention(prefix.rstrip(".") or "(no prefix)", w_in,
                         _vector(state, g.get("in_proj_bias"), 3 * E), w_out,
                         _vector(state, g.get("out_proj.bias"), E), int(H), heads_from)
        used.update(g.values())
        if owner is not None and any(k.startswith(owner + p + ".") for p in _LAYER_PARTS for k in other):
            parts = {p: [k for k in other if k.startswith(owner + p + ".")] for p in _LAYER_PARTS}
            for keys in parts.values():
                used.update(keys)
            eps = float(lc.get("eps", config.get("eps", 1e-5)))
            norm_first = lc.get("norm_first", config.get("norm_first"))
            said = config.get("stated_by", {})
            placement = ("the module" if "norm_first" in lc else
                         said.get("norm_first", "the checkpoint's config") if norm_first is not None
                         else "assumed")
            stated = lc.get("norm_kind", config.get("norm_kind")) == "layernorm"
            if norm_first is None:
                norm_first = False
            activation = lc.get("activation", config.get("activation"))
            act_from = "assumed" if activation is None else "given"
            activation = activation or "relu"
            w1, b1 = _linear(state, owner + "linear1.")
            w2, b2 = _linear(state, owner + "linear2.")
            if w1.shape[1] != E or w2.shape != (E, w1.shape[0]):
                raise SymattnError(f"{owner}linear1 {w1.shape} and linear2 {w2.shape} do not form a "
                                   f"feed-forward sublayer of width {E}")
            norms = tuple(_norm(state, owner + f"norm{j}.", eps, stated) for j in (1, 2))
            for n in norms:
                for v in (n.gain, n.bias):
                    if v is not None and v.shape != (E,):
                        raise SymattnError(f"{n.name} has {v.shape[0]} entries, the layer width is {E}")
            mlp = MLP(f"{owner}linear1, linear2", w1, b1, w2, b2, activation, act_from)
            blocks.append(TransformerLayer(i, owner.rstrip(".") or "(no prefix)", attn, norms, mlp, bool(norm_first),
                                placement))
            if placement == "assumed":
                notes.append(f"{owner.rstrip('.') or 'layer'}: norm_first not recorded in a state dict: "
                             f"post-norm assumed (PyTorch's default; give a config with norm_first)")
            if act_from == "assumed":
                notes.append(f"{owner.rstrip('.') or 'layer'}: activation not recorded: relu assumed "
                             f"(PyTorch's default; give a config with activation)")
        else:
            blocks.append(TransformerLayer(i, attn.name, attn))
        layers.append((prefix, w_in, w_out, int(H)))
    final, outside = None, []
    rest = [k for k in other if k not in used]
    last = max(list(state).index(k) for k in used)
    norm_prefixes = {k.rsplit(".", 1)[0] + "." for k in rest
                     if k.rsplit(".", 1)[-1] in ("weight", "bias") and "norm" in k.rsplit(".", 2)[-2]}
    for p in sorted(norm_prefixes, key=lambda p: list(state).index(p + "weight") if p + "weight" in state else 0):
        if (p + "weight" in state and list(state).index(p + "weight") > last and final is None
                and np.asarray(_shape(state[p + "weight"])).tolist() == [width]):
            final = _norm(state, p, float(config.get("eps", 1e-5)), config.get("norm_kind") == "layernorm")
            used.update(k for k in (p + "weight", p + "bias") if k in state)
    for key in rest:
        if key not in used:
            outside.append(f"{key[:80]}: not part of the attention stack (read, not audited: the audit "
                           f"is of the stack from its input tokens to its output tokens)")
    if assumed:
        notes.append(f"num_heads = {', '.join(map(str, sorted(assumed)))} assumed (a state dict does "
                     f"not record it): give --heads H or a checkpoint config with nhead")
    notes.append("dropout is not applied (the audit is of the model in eval mode); attention masks "
                 "are call-time arguments: the audit is of unmasked self-attention "
                 "unless --causal")
    _check_read(state, groups, blocks, config, layer_config, heads_known)
    model = _from_mha(layers, tokens or 4, source, kind, notes, outside)
    model.transformer_layers, model.final_norm = blocks, final
    model.sequence_length = config.get("sequence_length")
    return model


def _shape(value: Any) -> tuple:
    return tuple(value.shape) if hasattr(value, "shape") else np.shape(value)


def _activation(torch, layer) -> str:
    """PyTorch's activation of an encoder layer, by name (refused if it is none of ours)."""
    F = torch.nn.functional
    act = layer.activation
    if getattr(layer, "activation_relu_or_gelu", 0) == 1 or act is F.relu or isinstance(act, torch.nn.ReLU):
        return "relu"
    if isinstance(act, torch.nn.GELU):
        return "gelu_tanh" if act.approximate == "tanh" else "gelu"
    if getattr(layer, "activation_relu_or_gelu", 0) == 2 or act is F.gelu:
        return "gelu"
    if act in (torch.tanh, F.tanh) or isinstance(act, torch.nn.Tanh):
        return "tanh"
    if act is F.silu or isinstance(act, torch.nn.SiLU):
        return "silu"
    raise SymattnError(f"activation {getattr(act, '__name__', type(act).__name__)} of an encoder layer "
                       f"is not covered: use one of {', '.join(ACTIVATIONS)}")


def from_torch(modules: "Iterable | Any", tokens: int | None = 4, source: str = "torch modules") -> ImportedModel:
    """A model from PyTorch modules, read in module order: ``nn.MultiheadAttention``,
    ``nn.TransformerEncoderLayer``, an ``nn.TransformerEncoder`` (its final ``norm`` included), a
    sequence of those, or any module containing them (an embedding or readout is named outside).

    ``num_heads``, ``norm_first``, the activation and ``eps`` are read from
    each module; see :func:`from_state_dict` for the rest.

    Raises
    ------
    SymattnError
        For a decoder layer (cross-attention), an attention module with
        ``add_zero_attn``, an unknown activation, or no attention layer.

    Examples
    --------
    >>> import torch                                        # doctest: +SKIP
    >>> mha = torch.nn.MultiheadAttention(4, 2, bias=False)  # doctest: +SKIP
    >>> from_torch([mha]).heads                              # doctest: +SKIP
    (2,)
    """
    torch = require_torch()
    nn = torch.nn
    if isinstance(modules, (list, tuple)):
        for i, m in enumerate(modules):
            if not isinstance(m, (nn.MultiheadAttention, nn.TransformerEncoderLayer, nn.TransformerEncoder)):
                raise SymattnError(f"layer {i + 1} is a {type(m).__name__}: only nn.MultiheadAttention, "
                                   f"nn.TransformerEncoderLayer and nn.TransformerEncoder are covered")
        root = nn.ModuleList(list(modules))
    elif isinstance(modules, nn.Module):
        root = modules if not isinstance(modules, (nn.MultiheadAttention, nn.TransformerEncoderLayer)) \
            else nn.ModuleList([modules])
    else:
        raise SymattnError(f"a {type(modules).__name__} is not a PyTorch module")
    layer_config: dict[str, dict] = {}
    inside: list[str] = []
    for name, m in root.named_modules():
        if any(name.startswith(p + ".") for p in inside):
            continue
        if isinstance(m, (nn.TransformerDecoderLayer, nn.TransformerDecoder, nn.Transformer)):
            raise SymattnError(f"{name or 'the model'} is a {type(m).__name__}: its cross-attention "
                               f"attends to the encoder's memory: not covered; audit the encoder")
        if isinstance(m, nn.TransformerEncoderLayer):
            attn = m.self_attn
            for norm in (m.norm1, m.norm2):
                if not isinstance(norm, nn.LayerNorm):
                    raise SymattnError(f"{name or 'layer'}: a {type(norm).__name__} norm: only LayerNorm is "
                                       f"a part of symattn's model yet")
            layer_config[name + "."] = {"heads": attn.num_heads, "norm_first": bool(m.norm_first),
                                        "activation": _activation(torch, m), "eps": float(m.norm1.eps),
                                        "norm_kind": "layernorm"}
            inside.append(name)
        elif isinstance(m, nn.MultiheadAttention):
            attn = m
            layer_config[name + "." if name else ""] = {"heads": m.num_heads}
            inside.append(name)
        else:
            continue
        if attn.add_zero_attn:
            raise SymattnError(f"{name or 'layer'}: add_zero_attn=True adds a token: not covered")
    if not layer_config:
        raise SymattnError(f"a {type(root).__name__} with no nn.MultiheadAttention or "
                           f"nn.TransformerEncoderLayer: only those are covered")
    eps = next((float(m.eps) for m in root.modules() if isinstance(m, nn.LayerNorm)), 1e-5)
    if any(type(m).__name__ == "RMSNorm" for m in root.modules()):
        raise SymattnError("an RMSNorm module: only LayerNorm is a part of symattn's model yet")
    return from_state_dict(root.state_dict(), tokens, source, None, "torch-modules",
                           heads_known=True, layer_config=layer_config, config={"eps": eps, "norm_kind": "layernorm"})


# ------------------------------------------------------------------ files
