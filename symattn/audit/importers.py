"""Importers of the audit: untrusted model files and objects -> attention heads in the paper's convention.

Formats (the PyTorch -> paper convention mapping is in :mod:`symattn.audit`):

* ``.npz`` (NumPy) and ``.safetensors``: arrays ``Q1, K1, V1, ..., QD, KD, VD``
  (tokens as columns), each a matrix (one head) or a stack ``(H, ...)`` of
  ``H`` heads (:func:`from_arrays`);
* ``.pt``/``.pth``: a PyTorch state dict of ``nn.MultiheadAttention`` layers or
  of ``nn.TransformerEncoderLayer`` layers (:func:`from_state_dict`);
* PyTorch modules in memory (:func:`from_torch`).

Every file is untrusted. Nothing is unpickled: ``.npz`` members are parsed
from their ``.npy`` headers (object arrays refused before any data is read),
``torch.load`` runs with ``weights_only=True``, ``.safetensors`` is a JSON
header plus raw numbers. Before any data is decompressed or converted, the
file size, the declared uncompressed size of every archive member (a zip bomb
is refused from its directory), the number of arrays and the total number of
entries are checked against :data:`LIMITS`; then every number must be finite
and at most :data:`LIMITS` ``["max_abs_weight"]`` in magnitude. Every refusal
is one :class:`~symattn.core.errors.SymattnError` line.

Parts of a file that lie outside the paper's model (biases, the feed-forward
block, LayerNorms and residual connections of an encoder layer, unknown
entries) are listed in :attr:`ImportedModel.outside`, never silently dropped;
the audit is of the bias-free attention maps alone.
"""

from __future__ import annotations

import json
import math
import re
import zipfile
import zlib
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import flint
import numpy as np

from symattn.core.errors import SymattnError
from symattn.model.architecture import Architecture, NativeParams
from symattn.model.normalizer import normalizers
from symattn.analyses.numerics import require_torch

__all__ = ["Head", "ImportedModel", "LIMITS", "from_arrays", "from_torch", "from_state_dict",
           "load_model", "exact_matrix", "rational_array"]

#: Limits on untrusted input, checked before the corresponding work is done.
LIMITS = {
    "max_file_bytes": 2 ** 31,          # a model file on disk (2 GiB)
    "max_uncompressed_bytes": 2 ** 31,  # all archive members, as declared, before decompressing
    "max_arrays": 4096,                 # arrays (archive members, state-dict entries)
    "max_entries": 2 ** 25,             # numbers in all arrays together (33.5 million)
    "max_abs_weight": 1e8,              # |w| of any weight: no trained network comes near
}


# ------------------------------------------------------------------ exact matrices
def exact_matrix(a: np.ndarray) -> flint.fmpq_mat:
    """The exact rational matrix of a float64 array (binary64 values are dyadic rationals).

    >>> m = exact_matrix(np.array([[0.5, 3.0]]))
    >>> m.nrows(), m.ncols(), str(m[0, 0])
    (1, 2, '1/2')
    """
    a = np.asarray(a, dtype=np.float64)
    return flint.fmpq_mat(a.shape[0], a.shape[1], [flint.fmpq(*x.as_integer_ratio()) for x in a.reshape(-1).tolist()])


def rational_array(m: flint.fmpq_mat) -> np.ndarray:
    """A python-flint rational matrix as a NumPy object array of :class:`fractions.Fraction`.

    >>> rational_array(exact_matrix(np.array([[0.25]])))[0, 0]
    Fraction(1, 4)
    """
    out = np.empty((m.nrows(), m.ncols()), dtype=object)
    for i in range(m.nrows()):
        for j in range(m.ncols()):
            v = m[i, j]
            out[i, j] = Fraction(int(v.p), int(v.q))
    return out


@dataclass(frozen=True)
class Head:
    """One attention head ``X -> V S_{Q K^T}(X)`` in the paper's convention (tokens as columns).

    Attributes
    ----------
    q, k : numpy.ndarray
        Float64 ``(d_in, r)`` factors as stored in the file.
    v : numpy.ndarray
        Float64 value map ``(d_out, d_in)``, or the value projection
        ``(r_v, d_in)`` when ``v_out`` is given.
    scale : Fraction
        The score scale: ``Q = scale * q`` (PyTorch's ``1/sqrt(head_dim)``).
    v_out : numpy.ndarray or None
        PyTorch's ``out_proj`` columns of this head: ``V = v_out @ v``.
    """

    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    scale: Fraction = Fraction(1)
    v_out: np.ndarray | None = None

    def exact(self) -> tuple[flint.fmpq_mat, flint.fmpq_mat, flint.fmpq_mat]:
        """``(Q, K, V)`` as exact rationals of the stored binary64 numbers."""
        Q = exact_matrix(self.q) * flint.fmpq(self.scale.numerator, self.scale.denominator)
        V = exact_matrix(self.v) if self.v_out is None else exact_matrix(self.v_out) * exact_matrix(self.v)
        return Q, exact_matrix(self.k), V

    def floats(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(Q, K, V)`` in float64 (the scale and ``v_out @ v`` rounded once each)."""
        V = self.v if self.v_out is None else self.v_out @ self.v
        return self.q * float(self.scale), self.k, V


@dataclass
class ImportedModel:
    """A stack of (multi-head) attention layers read from a file or object.

    Layer ``i`` maps ``X`` to ``sum_h V_{i,h} S_{Q_{i,h} K_{i,h}^T}(X)`` (one head:
    the paper's native layer). The paper's theorems are about single-head
    stacks; :attr:`arch` and :attr:`theta` exist only for those.

    Attributes
    ----------
    layers : list of list of Head
        Per layer, its heads.
    normalizers : tuple of Normalizer
        One per layer.
    tokens : int
        The token count ``n`` of the audit.
    source : str
        Where it came from.
    kind : str
        ``"npz"``, ``"safetensors"``, ``"torch-modules"`` or ``"torch-state-dict"``.
    notes : list of str
        Assumptions of the import (a rounded scale, ``num_heads`` from ``--heads``,
        the ``W_o W_v`` folding).
    outside : list of str
        Parts of the source outside the paper's model, by name (not audited).
    torch_layout : bool
        Whether values are ``W_o W_v`` products of a PyTorch layer.
    """

    layers: list
    normalizers: tuple
    tokens: int
    source: str
    kind: str
    notes: list = field(default_factory=list)
    outside: list = field(default_factory=list)
    torch_layout: bool = False

    @property
    def depth(self) -> int:
        """The number of layers ``D``."""
        return len(self.layers)

    @property
    def heads(self) -> tuple[int, ...]:
        """Heads per layer."""
        return tuple(len(layer) for layer in self.layers)

    @property
    def single_head(self) -> bool:
        """Whether every layer has one head (the paper's model)."""
        return all(h == 1 for h in self.heads)

    @property
    def widths(self) -> tuple[int, ...]:
        """``d_0, ..., d_D``."""
        return (self.layers[0][0].q.shape[0],) + tuple(layer[0].floats()[2].shape[0]
                                                        for layer in self.layers)

    @property
    def parameters(self) -> int:
        """Native entries ``Q, K, V`` of every head (with ``V`` as one matrix per head)."""
        return sum(h.q.size + h.k.size + h.q.shape[0] * (h.v.shape[0] if h.v_out is None
                                                          else h.v_out.shape[0])
                   for layer in self.layers for h in layer)

    @property
    def arch(self) -> Architecture | None:
        """The paper's architecture (single-head stacks only; None otherwise)."""
        if not self.single_head:
            return None
        return Architecture(self.widths, tuple(layer[0].q.shape[1] for layer in self.layers),
                            self.tokens, self.normalizers)

    @cached_property
    def exact_heads(self) -> list[list[tuple[flint.fmpq_mat, flint.fmpq_mat, flint.fmpq_mat]]]:
        """``(Q, K, V)`` of every head as exact rational matrices (cached)."""
        return [[h.exact() for h in layer] for layer in self.layers]

    @cached_property
    def theta(self) -> NativeParams | None:
        """``Q_i, K_i, V_i`` as exact rationals (Fraction arrays; single-head stacks only)."""
        if not self.single_head:
            return None
        blocks = [[rational_array(m) for m in layer[0]] for layer in self.exact_heads]
        return NativeParams(*(tuple(b[j] for b in blocks) for j in range(3)))

    def float_params(self) -> dict[str, np.ndarray]:
        """Single-head native weights ``Q1, K1, V1, ...`` as float64 arrays."""
        out = {}
        for i, layer in enumerate(self.layers, 1):
            Q, K, V = layer[0].floats()
            out.update({f"Q{i}": Q, f"K{i}": K, f"V{i}": V})
        return out


# ------------------------------------------------------------------ checks
def _real_array(name: str, value: Any, ndim: Sequence[int] = (2,)) -> np.ndarray:
    """A finite real float64 array from untrusted ``value`` (exact for float16/32/64, small ints)."""
    arr = np.asarray(value) if not hasattr(value, "detach") else _tensor_array(name, value)
    if arr.dtype.hasobject or arr.dtype.kind not in "fiu" or arr.dtype.fields is not None:
        raise SymattnError(f"array {name} has dtype {arr.dtype}: only real numbers are supported")
    if arr.ndim not in ndim:
        raise SymattnError(f"array {name} has shape {arr.shape}: every weight must be a matrix"
                           + (" (or a stack of head matrices)" if 3 in ndim else ""))
    if arr.size > LIMITS["max_entries"]:
        raise SymattnError(f"array {name} has {arr.size} entries, beyond the limit "
                           f"{LIMITS['max_entries']}")
    if arr.dtype.kind in "iu" and arr.size and int(np.abs(arr).max()) > 2 ** 53:
        raise SymattnError(f"array {name} has integers beyond 2^53 (not exact in binary64)")
    out = arr.astype(np.float64)
    if not np.isfinite(out).all():
        bad = "NaN" if np.isnan(out).any() else "inf"
        raise SymattnError(f"array {name} contains {bad}: the audit needs finite weights")
    big = float(np.abs(out).max()) if out.size else 0.0
    if big > LIMITS["max_abs_weight"]:
        raise SymattnError(f"array {name} has an entry of magnitude {big:.3g}, beyond "
                           f"{LIMITS['max_abs_weight']:.0e}: no trained network has such weights; "
                           f"rescale the model")
    return out


def _tensor_array(name: str, value: Any) -> np.ndarray:
    torch = require_torch()
    _check_tensor(f"array {str(name)[:60]}", value)
    integer = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)
    if value.is_complex() or not (value.is_floating_point() or value.dtype in integer):
        raise SymattnError(f"array {name} has dtype {value.dtype}: only real numbers are supported")
    if value.numel() > LIMITS["max_entries"]:
        raise SymattnError(f"array {name} has {value.numel()} entries, beyond the limit "
                           f"{LIMITS['max_entries']}")
    return value.detach().cpu().double().numpy()


def _check_tensor(what: str, value: Any) -> None:
    """Refuse a tensor without plain dense data: sparse (COO, CSR, ...), meta (no data),
    quantized or nested tensors (``what`` names it in the message)."""
    torch = require_torch()
    if getattr(value, "is_meta", False) or value.device.type == "meta":
        raise SymattnError(f"{what} is a meta tensor (a shape without data): save the "
                           "trained weights, e.g. torch.save(model.state_dict(), path)")
    if value.layout != torch.strided or getattr(value, "is_nested", False):
        raise SymattnError(f"{what} is a {str(value.layout).replace('torch.', '')} tensor: only "
                           "dense weights are supported (convert with tensor.to_dense())")
    if getattr(value, "is_quantized", False):
        raise SymattnError(f"{what} is quantized ({value.dtype}): only real numbers are "
                           "supported (dequantize it first)")


def _check_tokens(tokens: Any) -> int:
    """The token count ``n`` of an audit: an integer in [2, MAX_TOKENS]."""
    from symattn.core.limits import MAX_TOKENS
    from symattn.core.validate import require_int

    return require_int(tokens, "tokens (the token count n)", 2, MAX_TOKENS)


def _check_count(entries: int, arrays: int, where: str) -> None:
    if arrays > LIMITS["max_arrays"]:
        raise SymattnError(f"{where} holds {arrays} arrays, beyond the limit {LIMITS['max_arrays']}")
    if entries > LIMITS["max_entries"]:
        raise SymattnError(f"{where} holds {entries} numbers, beyond the limit "
                           f"{LIMITS['max_entries']} (the audit needs far fewer)")


# ------------------------------------------------------------------ arrays (npz, safetensors)
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
    _check_tokens(tokens)
    _check_count(0, len(arrays), source)
    for key in arrays:
        match = _ARRAY_KEY.match(str(key))
        if not match:
            hint = " (biases are not covered)" if "b" in str(key).lower() else ""
            raise SymattnError(f"unknown array {str(key)[:60]!r}{hint}: the arrays must be named "
                               f"exactly Q1, K1, V1, Q2, K2, V2, ...")
        value = _real_array(key, arrays[key], ndim=(2, 3))
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


# ------------------------------------------------------------------ PyTorch
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
        w_in = _real_array(f"{name}in_proj_weight", w_in)
        w_out = _real_array(f"{name}out_proj.weight", w_out)
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
    _check_tokens(tokens)
    for h in [heads] if not isinstance(heads, (list, tuple)) else heads:
        require_int(h, "heads", 1, 4096)
    _check_count(0, len(state), source)
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
def _check_zip(path: Path, zf: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    infos = zf.infolist()
    declared = sum(i.file_size for i in infos)
    if len(infos) > LIMITS["max_arrays"]:
        raise SymattnError(f"{path} holds {len(infos)} archive members, beyond the limit "
                           f"{LIMITS['max_arrays']}")
    if declared > LIMITS["max_uncompressed_bytes"]:
        raise SymattnError(f"{path} declares {declared} bytes uncompressed, beyond the limit "
                           f"{LIMITS['max_uncompressed_bytes']}: refused before decompressing")
    return infos


def _read_npz(path: Path) -> dict[str, np.ndarray]:
    """The arrays of an ``.npz``, parsed from their ``.npy`` headers; never unpickles."""
    arrays, entries = {}, 0
    try:
        with zipfile.ZipFile(path) as zf:
            for info in _check_zip(path, zf):
                name = info.filename
                if not name.endswith(".npy") or info.is_dir():
                    raise SymattnError(f"{path}: member {name[:60]!r} is not a .npy array")
                with zf.open(info) as fp:
                    version = np.lib.format.read_magic(fp)
                    read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                                   else np.lib.format.read_array_header_2_0)
                    shape, fortran, dtype = read_header(fp)
                    if dtype.hasobject or dtype.fields is not None or dtype.kind not in "fiu":
                        raise SymattnError(f"{path}: array {name[:-4]!r} has dtype {dtype}: only "
                                           f"real numbers are supported (object arrays are never "
                                           f"loaded)")
                    count = math.prod(shape)
                    entries += count
                    _check_count(entries, len(arrays) + 1, str(path))
                    data = fp.read(count * dtype.itemsize)
                    if len(data) != count * dtype.itemsize:
                        raise SymattnError(f"{path}: array {name[:-4]!r} is truncated")
                    arrays[name[:-4]] = np.frombuffer(data, dtype=dtype).reshape(
                        shape, order="F" if fortran else "C")
    except SymattnError:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, NotImplementedError,
            KeyError, SyntaxError) as exc:
        raise SymattnError(f"cannot read {path} as a NumPy .npz archive ({type(exc).__name__}: "
                           f"{str(exc)[:80]}); write it with numpy.savez") from None
    return arrays


def _count(value: Any) -> bool:
    """A non-negative integer that is not a bool (JSON ``true`` is not a size)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


_SAFETENSORS_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4",
                       "I16": "<i2", "I8": "i1", "U8": "u1"}


def _read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The arrays of a ``.safetensors`` file: an 8-byte header length, a JSON header, raw numbers."""
    size = path.stat().st_size
    try:
        with path.open("rb") as fp:
            head = fp.read(8)
            if len(head) != 8:
                raise SymattnError(f"{path} is too short to be a .safetensors file")
            n = int.from_bytes(head, "little")
            if n > min(size - 8, 100 * 2 ** 20):
                raise SymattnError(f"{path}: the .safetensors header length {n} does not fit the "
                                   f"file ({size} bytes)")
            header = json.loads(fp.read(n))
            if not isinstance(header, dict):
                raise SymattnError(f"{path}: the .safetensors header is not a JSON object")
            header.pop("__metadata__", None)
            _check_count(0, len(header), str(path))
            arrays, entries, base, spans = {}, 0, 8 + n, []
            for name, spec in header.items():
                dtype_name = spec.get("dtype") if isinstance(spec, dict) else spec
                if not isinstance(dtype_name, str) or dtype_name not in _SAFETENSORS_DTYPES:
                    raise SymattnError(f"{path}: tensor {str(name)[:60]!r} has dtype "
                                       f"{str(dtype_name)[:20]}: only real numbers are supported")
                shape, offsets = spec.get("shape"), spec.get("data_offsets")
                if (not isinstance(shape, list) or len(shape) > 8
                        or not all(_count(s) for s in shape)
                        or not isinstance(offsets, list) or len(offsets) != 2
                        or not all(_count(o) for o in offsets)):
                    raise SymattnError(f"{path}: tensor {str(name)[:60]!r} has a malformed entry "
                                       "(shape and data_offsets must be lists of non-negative integers)")
                dtype = np.dtype(_SAFETENSORS_DTYPES[spec["dtype"]])
                count = math.prod(shape)
                entries += count
                _check_count(entries, len(arrays) + 1, str(path))
                start, stop = offsets
                if stop - start != count * dtype.itemsize or start < 0 or base + stop > size:
                    raise SymattnError(f"{path}: tensor {str(name)[:60]!r} does not fit the file "
                                       f"(truncated or malformed)")
                spans.append((start, stop, str(name)))
                fp.seek(base + start)
                arrays[str(name)] = np.frombuffer(fp.read(stop - start), dtype=dtype).reshape(shape)
            spans.sort()
            for (_, stop, first), (start, _, second) in zip(spans, spans[1:]):
                if start < stop:
                    raise SymattnError(f"{path}: tensors {first[:40]!r} and {second[:40]!r} overlap "
                                       "in the file (malformed .safetensors data_offsets)")
    except SymattnError:
        raise
    except (OSError, ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise SymattnError(f"cannot read {path} as a .safetensors file ({type(exc).__name__})") from None
    return arrays


def _read_torch(path: Path) -> Mapping[str, Any]:
    """A state dict via ``torch.load(weights_only=True)`` (nothing is executed), sizes checked first."""
    torch = require_torch()
    if zipfile.is_zipfile(path):
        try:
            with zipfile.ZipFile(path) as zf:
                _check_zip(path, zf)
        except zipfile.BadZipFile as exc:
            raise SymattnError(f"cannot read {path} as a PyTorch file ({exc})") from None
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # UnpicklingError for anything but tensors, RuntimeError, EOFError, ...
        raise SymattnError(f"cannot read {path} as a PyTorch state dict ({type(exc).__name__}); "
                           f"save it with torch.save(model.state_dict(), path)") from None
    if not isinstance(state, Mapping):
        raise SymattnError(f"{path} holds a {type(state).__name__}, not a state dict")
    entries = 0
    for key, value in state.items():
        if not isinstance(value, torch.Tensor):
            raise SymattnError(f"{path}: entry {str(key)[:60]!r} is a {type(value).__name__}, "
                               f"not a tensor")
        _check_tensor(f"{path}: entry {str(key)[:60]!r}", value)
        entries += value.numel()
    _check_count(entries, len(state), str(path))
    return state


def load_model(path: "str | Path", normalizer: "str | Sequence | None" = None,
               tokens: int = 4, heads: "int | Sequence[int] | None" = None) -> ImportedModel:
    """Read a model file: ``.npz`` / ``.safetensors`` arrays or a ``.pt``/``.pth`` state dict.

    Parameters
    ----------
    path : str or Path
        The file (untrusted: see the module docstring for what is checked).
    normalizer : str or sequence, optional
        For arrays (default softmax ``exp``); a PyTorch model is always softmax,
        so any other value is refused there.
    tokens : int
        The token count ``n >= 2`` of the audit.
    heads : int or sequence, optional
        ``num_heads`` of a state dict's layers (default 1); arrays carry their
        heads in their shapes, so any other value is refused there.

    Raises
    ------
    SymattnError
        Missing file, directory, unknown suffix, unreadable or oversize file,
        or an unsupported model.
    """
    from symattn.core.validate import require_path

    path = Path(require_path(path, "path"))
    _check_tokens(tokens)
    if path.is_dir():
        raise SymattnError(f"{path} is a directory: give a model file (.npz, .safetensors, .pt)")
    if not path.is_file():
        raise SymattnError(f"no such file: {path}")
    size = path.stat().st_size
    if size > LIMITS["max_file_bytes"]:
        raise SymattnError(f"{path} has {size} bytes, beyond the limit {LIMITS['max_file_bytes']}")
    suffix = path.suffix.lower()
    if suffix in (".npz", ".safetensors"):
        if heads not in (None, 1):
            raise SymattnError("--heads is for PyTorch state dicts: arrays carry their heads as a "
                               "leading axis (H, ...)")
        arrays = _read_npz(path) if suffix == ".npz" else _read_safetensors(path)
        return from_arrays(arrays, normalizer or "exp", tokens, str(path), suffix[1:])
    if suffix in (".pt", ".pth"):
        if normalizer not in (None, "exp"):
            raise SymattnError("torch.nn.MultiheadAttention always uses softmax: --normalizer "
                               "must be exp (or omitted) for a PyTorch file")
        return from_state_dict(_read_torch(path), tokens, str(path), 1 if heads is None else heads,
                               heads_known=heads is not None)
    raise SymattnError(f"unknown model format {suffix[:20] or '(no suffix)'!r} of {path}: use .npz "
                       f"or .safetensors (arrays Q1, K1, V1, ...) or .pt/.pth (a state dict)")
