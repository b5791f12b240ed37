"""The audit's data model: the attention heads of an imported model, exact and as floats.

An :class:`ImportedModel` is a stack of layers of :class:`~symattn.audit.Head` objects in the
paper's convention (tokens as columns: ``Q, K`` of shape ``(d_in, r)``, ``V`` of
shape ``(d_out, d_in)``, or ``V = V_out V_in`` for a PyTorch head), read by the
readers of :mod:`symattn.audit.readers` through the convention mapping of
:mod:`symattn.audit.conventions`; it gives its
:class:`~symattn.model.architecture.Architecture` (:meth:`ImportedModel.architecture`,
several heads and a causal mask included) and its exact point.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property

import flint
import numpy as np

from symattn.model.architecture import Architecture
from symattn.model.normalizer import Normalizer  # noqa: F401  doctests
from symattn.model.parameters import NativeParams

#: Activations of an MLP sublayer the audit reads (PyTorch's names; ``gelu_tanh`` is ``approximate="tanh"``).
ACTIVATIONS = ("relu", "gelu", "gelu_tanh", "tanh", "silu")

__all__ = ["ACTIVATIONS", "Head", "ImportedModel", "Norm", "MLP", "Attention", "TransformerLayer", "exact_matrix",
           "rational_array"]


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


@dataclass(frozen=True)
class Norm:
    """A LayerNorm ``x -> gain * (x - mean) / sqrt(var + eps) + bias`` over a token's coordinates.

    ``name`` is its module name in the file (``layers.0.norm1``); ``gain`` and
    ``bias`` are float64 vectors (None when ``elementwise_affine=False``).
    ``kind_from`` is ``"given"`` (a module, a config, ``--norm-kind``, or a
    stored bias, which an RMSNorm does not have) or ``"assumed"`` (a gain
    alone: an RMSNorm stores the same).
    """

    name: str
    gain: np.ndarray | None
    bias: np.ndarray | None
    eps: float = 1e-5
    kind_from: str = "given"
    #: the norm part's spelling (:func:`symattn.model.parts.norm_part`): ``layernorm`` or ``rmsnorm``
    kind: str = "layernorm"

    @property
    def title(self) -> str:
        """The norm part's name (``LayerNorm``, ``RMSNorm``)."""
        from symattn.model.parts import norm_part

        return norm_part(self.kind).title


@dataclass(frozen=True)
class MLP:
    """The feed-forward sublayer ``x -> W_2 act(W_1 x + b_1) + b_2`` (PyTorch's ``linear1``, ``linear2``),
    or with ``gate`` the SwiGLU ``x -> W_2 (act(W_g x) * (W_1 x))`` (:mod:`symattn.model.parts.swiglu`:
    ``w1`` is ``up_proj``, ``gate`` is ``gate_proj``, ``w2`` is ``down_proj``).

    ``activation`` is ``relu``, ``gelu``, ``gelu_tanh``, ``tanh`` or ``silu``.
    """

    name: str
    w1: np.ndarray
    b1: np.ndarray | None
    w2: np.ndarray
    b2: np.ndarray | None
    activation: str = "relu"
    #: ``"given"`` (the module or a config) or ``"assumed"`` (PyTorch's default, the file does not record it)
    activation_from: str = "given"
    #: SwiGLU's gate weight ``W_g`` (``ff x d``), None for a plain MLP
    gate: np.ndarray | None = None


@dataclass(frozen=True)
class Attention:
    """An ``nn.MultiheadAttention`` sublayer as stored: ``in_proj_weight = [W_q; W_k; W_v]``,
    ``out_proj.weight = W_o``, their biases (None if absent), ``heads`` and where ``heads`` came from.

    A decoder's attention (Llama, Mistral, Qwen2) also has ``kv_heads`` key/value heads
    (grouped-query attention, :mod:`symattn.model.parts.gqa`: ``W_k``, ``W_v`` have ``kv_heads e``
    rows) and ``rotary`` (a :class:`~symattn.model.parts.rotary.Rotary`, or None).
    """

    name: str
    in_proj_weight: np.ndarray
    in_proj_bias: np.ndarray | None
    out_proj_weight: np.ndarray
    out_proj_bias: np.ndarray | None
    heads: int
    heads_from: str = "the module"
    kv_heads: int | None = None
    rotary: object = None

    @property
    def width(self) -> int:
        """``embed_dim``."""
        return self.out_proj_weight.shape[0]

    @property
    def kv(self) -> int:
        """The key/value heads (``heads`` without grouped-query attention)."""
        return self.kv_heads or self.heads

    @property
    def head_dim(self) -> int:
        """The head width ``e``."""
        return self.out_proj_weight.shape[1] // self.heads


@dataclass(frozen=True)
class TransformerLayer:
    """One layer of a real model, in module order: a bare attention layer or a transformer
    encoder layer (attention, LayerNorms ``norm1``/``norm2``, MLP, residual connections).

    ``norm_first`` is PyTorch's flag (pre-norm when True); None for a bare
    attention layer (no residual, no norm); ``placement_from`` says where it
    was read (the module, a config, or PyTorch's default).
    """

    index: int
    name: str
    attention: Attention
    norms: tuple = ()
    mlp: MLP | None = None
    norm_first: bool | None = None
    placement_from: str = "the module"

    @property
    def kind(self) -> str:
        """``"encoder layer"``, ``"decoder layer"`` or ``"attention"``."""
        return "attention" if self.norm_first is None else "decoder layer" if self.decoder else "encoder layer"

    @property
    def decoder(self) -> bool:
        """Whether the layer has a part ``nn.TransformerEncoderLayer`` lacks (rotary positions, grouped-query
        attention, SwiGLU, RMSNorm): it is rebuilt as :class:`symattn.audit.decoder.DecoderLayer`."""
        a = self.attention
        return (a.rotary is not None or a.kv != a.heads or (self.mlp is not None and self.mlp.gate is not None)
                or any(n.kind != "layernorm" for n in self.norms))

    @property
    def parts_beyond_attention(self) -> list[str]:
        """Named parts of this layer outside the paper's bias-free attention map."""
        out = []
        a = self.attention
        if a.in_proj_bias is not None or a.out_proj_bias is not None:
            out.append(f"{a.name} biases ("
                       + ", ".join(n for n, v in (("in_proj_bias", a.in_proj_bias), ("out_proj.bias", a.out_proj_bias))
                                   if v is not None) + ")")
        if a.rotary is not None:
            out.append(f"{a.name} {a.rotary.title} ({a.rotary.describe()})")
        if a.kv != a.heads:
            out.append(f"{a.name} grouped-query attention ({a.heads} query heads, {a.kv} KV heads)")
        out += [f"{n.title} {n.name}" for n in self.norms]
        if self.mlp is not None:
            out.append(f"{'SwiGLU MLP' if self.mlp.gate is not None else 'MLP'} {self.mlp.name} ({self.mlp.activation}"
                       + (", assumed" if self.mlp.activation_from == "assumed" else "") + ")")
        if self.norm_first is not None:
            out.append(f"residual connections of {self.name} "
                       f"({'pre' if self.norm_first else 'post'}-norm"
                       + (", assumed" if self.placement_from == "assumed" else "") + ")")
        return out


@dataclass
class ImportedModel:
    """A stack of (multi-head) attention layers read from a file or object.

    Layer ``i`` maps ``X`` to ``sum_h V_{i,h} S_{Q_{i,h} K_{i,h}^T}(X)`` (one head:
    the paper's native layer). The paper's theorems are about single-head
    stacks; :attr:`arch` and :attr:`theta` exist only for those.

    Attributes
    ----------
    layers : list of list of symattn.audit.Head
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
    transformer_layers : list of TransformerLayer
        The layers as stored (PyTorch models): attention with its biases,
        LayerNorms, MLP, placement; empty for arrays in the paper's convention.
    final_norm : Norm or None
        A LayerNorm after the last layer (``nn.TransformerEncoder(norm=...)``).
    sequence_length : int or None
        The model's sequence length where the file says it (a config).
    hf : dict or None
        A Hugging Face folder's architecture as its ``config.json`` states it
        (:func:`symattn.audit.hf.read_hf_config`: family, heads, KV heads,
        eps, placement, activation, causal, tied weights), None otherwise.
    causal : bool or None
        Whether the file's model masks attention causally, where the file says
        it (a Hugging Face config); None where it is not recorded.
    """

    layers: list
    normalizers: tuple
    tokens: int
    source: str
    kind: str
    notes: list = field(default_factory=list)
    outside: list = field(default_factory=list)
    torch_layout: bool = False
    transformer_layers: list = field(default_factory=list)
    final_norm: Norm | None = None
    sequence_length: int | None = None
    hf: dict | None = None
    causal: bool | None = None

    @property
    def beyond_attention(self) -> list[str]:
        """Parts of the model outside the paper's bias-free attention maps (read, in the data model)."""
        out = [p for b in self.transformer_layers for p in b.parts_beyond_attention]
        if self.final_norm is not None:
            out.append(f"{self.final_norm.title} {self.final_norm.name} (final)")
        return out

    @property
    def assumptions(self) -> list[str]:
        """The properties the file does not record and the import assumed (empty when all were read
        or stated): a model with any gets no PASS and no certified statement without a warning."""
        out = []
        if any(b.attention.heads_from == "assumed" for b in self.transformer_layers):
            out.append("heads")
        if any(b.placement_from == "assumed" for b in self.transformer_layers if b.norm_first is not None):
            out.append("norm placement")
        if any(b.mlp.activation_from == "assumed" for b in self.transformer_layers if b.mlp is not None):
            out.append("activation")
        norms = [n for b in self.transformer_layers for n in b.norms] + ([self.final_norm] if self.final_norm else [])
        if any(n.kind_from == "assumed" for n in norms):
            out.append("norm kind")
        return out

    @property
    def attention_only(self) -> bool:
        """Whether the model is a stack of bias-free attention maps (the paper's kind of model)."""
        return not self.beyond_attention

    # the old name of transformer_layers (a "block" is a parameter block now); undocumented, so that
    # the API page has one "blocks" (Architecture.blocks)
    blocks = property(lambda self: self.transformer_layers,
                      lambda self, value: setattr(self, "transformer_layers", value))

    @property
    def torch_parameters(self) -> int:
        """The number of entries of the model's own PyTorch parameters (weights, biases and gains)."""
        if not self.transformer_layers:
            return self.parameters
        arrays = [self.final_norm.gain, self.final_norm.bias] if self.final_norm else []
        for b in self.transformer_layers:
            a = b.attention
            arrays += [a.in_proj_weight, a.in_proj_bias, a.out_proj_weight, a.out_proj_bias]
            arrays += [x for n in b.norms for x in (n.gain, n.bias)]
            if b.mlp is not None:
                arrays += [b.mlp.w1, b.mlp.b1, b.mlp.w2, b.mlp.b2, b.mlp.gate]
        return sum(x.size for x in arrays if x is not None)

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

    def architecture(self, causal: bool = False) -> Architecture:
        """The stack as an :class:`~symattn.model.architecture.Architecture`: summed heads with
        their own ranks (``V_h = W_o[:, h] W_v[h]`` one value map per head), causal masks if asked.

        >>> m = ImportedModel([[Head(np.eye(2), np.eye(2), np.eye(2))] * 2], (Normalizer("exp"),), 3, "demo", "npz")
        >>> m.architecture(causal=True).parts()
        'layer 1: mask causal, 2 heads'
        """
        base = Architecture(self.widths, tuple(layer[0].q.shape[1] for layer in self.layers), self.tokens,
                            self.normalizers)
        layers = tuple(part.with_kind(mask="causal" if causal else "none", heads=len(layer),
                                      head_ranks=tuple(h.q.shape[1] for h in layer))
                       for part, layer in zip(base.layers, self.layers))
        return Architecture(layers=layers, tokens=self.tokens)

    def point(self, causal: bool = False) -> dict[str, np.ndarray]:
        """The model's exact weights as the native blocks of :meth:`architecture` (Fraction arrays)."""
        arch = self.architecture(causal)
        out = {}
        for i, layer in enumerate(self.exact_heads, 1):
            for blocks, (q, k, v) in zip(arch.layers[i - 1].head_blocks(i), layer):
                for role, m in zip("QKV", (q, k, v)):
                    out[blocks[role].name] = rational_array(m)
        return out

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


