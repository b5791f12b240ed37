"""One layer of an attention stack, and the typed keys of its native blocks.

A :class:`Layer` maps tokens of width ``width_in`` to width ``width_out`` with its normalizer
``phi`` and its parts, each off by default so that the paper's layer ``V S_{Q K^T}(X)`` (eq. 1) is
unchanged: heads ``A_h = Q_h K_h^T`` (:class:`Head`, rank ``r_h``), a skip (``skip``: ``none``,
``value`` ``X + sum_h V_h S_h(X)``, ``folded`` ``X + sum_h S_h(X)``), a head combination
(``combine``: ``sum``, or ``concat`` mixed by ``W_O``), an attention mask (``mask``: ``none``,
``causal``, ``window:W`` or a 0/1 pattern; :func:`mask_matrix`), biases (``bias``), a norm (its
placement ``norm``: ``none``, ``pre``, ``post``; its kind ``norm_kind`` and ``eps``) and an MLP
sublayer of hidden width ``mlp`` with its ``activation``. Each part is an object of
:mod:`symattn.model.parts` that owns its formulas and facts; the layer holds the spellings (those of
specs and of the command line) and hands out the objects (:attr:`Layer.skip_part`,
:attr:`Layer.combine_part`, :attr:`Layer.bias_part`, :attr:`Layer.norm_part`). So
``skip="value", norm="post", mlp=m, bias=True, combine="concat"`` is PyTorch's
``TransformerEncoderLayer`` (``norm_first=False``); ``norm="pre"`` is ``norm_first=True``.

A :class:`Block` (a parameter block: the one meaning of "block") is a typed key (layer, role, head,
part) whose display name (``Q1``, ``V2``, ``Q1h2``, ``O3h1``, ``bQ1``, ``attn_norm.gain1``,
``mlp.in1``) is the name of the graph input and of the entry in a point's dict; code asks for a
block's identity and never parses a name. The bias of a query or key factor has the factor's role
(it moves with the factor along the collapse path); norm blocks have role ``"N"``, MLP blocks ``"F"``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Sequence

import numpy as np

from symattn.core.errors import SymattnError
from symattn.model.normalizer import Normalizer
from symattn.model.parts import activation_part, bias_part, combine_part, norm_part, skip_part
from symattn.model.parts.activation import Activation, Tanh
from symattn.model.parts.bias import Bias
from symattn.model.parts.head import Head
from symattn.model.parts.norm import Norm
from symattn.model.parts.output import COMBINE_KINDS, Combine
from symattn.model.parts.skip import SKIP_KINDS, Skip

__all__ = ["Block", "Head", "Layer", "ROLES", "SKIPS", "COMBINES", "NORMS", "NORM_SITES", "MLP_PARTS", "MAX_HEADS",
           "MAX_MLP",
           "parse_mask", "mask_matrix"]


#: Native block roles: query and key factors (``A = Q K^T``), value maps, output projections,
#: LayerNorm gains and shifts, MLP weights.
ROLES = ("Q", "K", "V", "O", "N", "F")

#: LayerNorm placements.
NORMS = ("none", "pre", "post")

#: The norm sites of a layer: the attention sublayer's and the MLP sublayer's.
NORM_SITES = ("attn_norm", "mlp_norm")

#: The MLP's blocks: ``mlp.out f(mlp.in y + mlp.in_bias) + mlp.out_bias``.
MLP_PARTS = ("mlp.in", "mlp.in_bias", "mlp.out", "mlp.out_bias")

#: Largest MLP hidden width.
MAX_MLP = 1024


#: Skip connections of a layer (see the module docstring; the parts: :mod:`symattn.model.parts.skip`).
SKIPS = tuple(SKIP_KINDS)

#: How a layer combines its heads (the parts: :mod:`symattn.model.parts.output`).
COMBINES = tuple(COMBINE_KINDS)

#: Most heads a layer may have.
MAX_HEADS = 64


Mask = Any  # "none", "causal", "window:W", or a tuple of 0/1 rows


@dataclass(frozen=True)
class Block:
    """A native parameter block: layer ``layer`` (1-based), role ``role`` (:data:`ROLES`),
    head ``head`` (1-based; None when the layer has one head).

    >>> Block(2, "K"), Block(1, "O", 3).name
    (Block(layer=2, role='K', head=None), 'O1h3')
    >>> Block(1, "Q").is_factor, Block(1, "V").is_factor
    (True, False)
    """

    layer: int
    role: str
    head: int | None = None
    #: ``""`` for a weight matrix, ``"bias"`` for the bias of a Q, K, V or O block, or the
    #: name of a norm/MLP block (:data:`LAYER_PARTS`: ``attn_norm.gain``, ``mlp.in``, ...)
    part: str = ""

    @property
    def name(self) -> str:
        """The display name: role, layer and (several heads) ``h`` and the head."""
        if self.part == "bias":
            return f"b{self.role}{self.layer}{self.suffix}"
        if self.part:
            return f"{self.part}{self.layer}"
        return f"{self.role}{self.layer}{self.suffix}"

    @property
    def is_norm_gain(self) -> bool:
        """The gain ``g`` of a norm part (``attn_norm.gain1``, ``mlp_norm.gain2``)."""
        return self.role == "N" and self.part.endswith(".gain")

    @property
    def is_bias(self) -> bool:
        return self.part == "bias"

    @property
    def is_shift(self) -> bool:  # a norm's shift or an MLP bias (additive blocks outside the heads)
        return self.part.endswith((".shift", "_bias"))

    def __repr__(self) -> str:
        part = f", part={self.part!r}" if self.part else ""
        return f"Block(layer={self.layer}, role={self.role!r}, head={self.head!r}{part})"

    @property
    def suffix(self) -> str:
        """The head part of the name: ``""`` for a layer's only head, else ``"h{head}"``."""
        return "" if self.head is None else f"h{self.head}"

    @property
    def is_factor(self) -> bool:
        """A query or key factor (the score ``A = Q K^T`` depends on it)."""
        return self.role in ("Q", "K")

    def __str__(self) -> str:
        return self.name


def parse_mask(text: str) -> str:
    """Validate a mask name: ``none``, ``causal`` or ``window:W`` (``W >= 1``).

    >>> parse_mask("window:2")
    'window:2'
    >>> parse_mask("diagonal")
    Traceback (most recent call last):
    ...
    symattn.core.errors.SymattnError: mask must be none, causal, window:W or a 0/1 pattern, got 'diagonal'
    """
    if text in ("none", "causal"):
        return text
    if text.startswith("window:"):
        try:
            w = int(text.split(":", 1)[1])
        except ValueError:
            w = 0
        if w < 1:
            raise SymattnError(f"window width must be a positive integer, got {text!r}")
        return f"window:{w}"
    raise SymattnError(f"mask must be none, causal, window:W or a 0/1 pattern, got {text!r}")


def mask_matrix(mask: Mask, n: int) -> np.ndarray | None:
    """The 0/1 matrix ``m[a, b]`` (query ``a``, key ``b``) of a mask on ``n`` tokens, or
    None for ``"none"``.

    >>> mask_matrix("causal", 3).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    >>> mask_matrix("window:2", 3).tolist()
    [[1, 1, 0], [1, 1, 1], [0, 1, 1]]
    """
    if isinstance(mask, str):
        if mask == "none":
            return None
        if mask == "causal":
            return np.tril(np.ones((n, n), dtype=int))
        w = int(mask.split(":")[1])
        a = np.arange(n)
        return (abs(a[:, None] - a[None, :]) < w).astype(int)
    m = np.asarray(mask, dtype=int)
    if m.shape != (n, n):
        raise SymattnError(f"mask pattern is {m.shape[0]} x {m.shape[1] if m.ndim > 1 else 0}; "
                           f"the architecture has n = {n} tokens")
    return m


def _check_mask(mask: Mask) -> Mask:
    if isinstance(mask, str):
        return parse_mask(mask)
    if not isinstance(mask, (Sequence, np.ndarray)) or not all(
            isinstance(row, (Sequence, np.ndarray)) and not isinstance(row, str) for row in mask) \
            or len({len(row) for row in mask}) > 1:
        raise SymattnError("a mask pattern must be a square 0/1 matrix (rows of equal length)")
    m = np.asarray(mask)
    if m.ndim != 2 or m.shape[0] != m.shape[1] or not np.isin(m, (0, 1)).all():
        raise SymattnError("a mask pattern must be a square 0/1 matrix")
    if not m.any(axis=1).all():
        raise SymattnError("every query (row) of a mask pattern must see at least one key")
    return tuple(tuple(int(v) for v in row) for row in m)


@dataclass(frozen=True)
class Layer:
    """One layer of an :class:`Architecture` (see the module docstring for its map).

    ``Layer(d_in, d_out, phi)`` is the paper's layer ``V S_{Q K^T}(X)`` with one
    head of rank 1; :meth:`with_kind` gives the same widths, normalizer and rank
    with other parts.

    >>> layer = Layer(2, 2, Normalizer("exp"))
    >>> layer.in_paper_model, layer.with_kind(skip="value").in_paper_model
    (True, False)
    >>> [(b.name, s) for b, s in layer.with_kind(heads=2, combine="concat").blocks(1)][2:4]
    [('V1h1', (2, 2)), ('O1h1', (2, 2))]
    """

    width_in: int
    width_out: int
    normalizer: Normalizer
    heads: tuple[Head, ...] = field(default=(Head(),))
    skip: str = "none"
    mask: Mask = "none"
    combine: str = "sum"
    bias: bool = False
    norm: str = "none"
    eps: Fraction = Fraction(1, 100000)
    mlp: int = 0
    #: the MLP's activation part (:data:`symattn.model.parts.ACTIVATION_KINDS`; a spelling is read)
    activation: Activation = Tanh()
    #: the norm part's spelling (:data:`symattn.model.parts.NORM_KINDS`); its placement is ``norm``
    norm_kind: str = "layernorm"

    def __post_init__(self) -> None:
        has_expr = hasattr(type(self.normalizer), "expr") or "expr" in getattr(self.normalizer, "__dict__", {})
        if isinstance(self.normalizer, (str, bytes)) or not has_expr:  # duck-typed; the property is not evaluated
            from symattn.core.validate import BadType

            raise BadType(f"a normalizer must be a Normalizer (e.g. Normalizer({str(self.normalizer)[:40]!r})), "
                          f"got {type(self.normalizer).__name__}")
        self._check_block_parts()
        for w in (self.width_in, self.width_out):
            if isinstance(w, bool) or not isinstance(w, (int, np.integer)) or w < 1:
                raise SymattnError(f"widths must be positive integers, got {w!r}")
        object.__setattr__(self, "width_in", int(self.width_in))
        object.__setattr__(self, "width_out", int(self.width_out))
        skip_part(self.skip)  # a known part, else one line
        combine_part(self.combine)  # a known part, else one line
        heads = tuple(self.heads)
        if not 1 <= len(heads) <= MAX_HEADS or not all(isinstance(h, Head) for h in heads):
            raise SymattnError(f"a layer needs 1 to {MAX_HEADS} heads, got {len(heads)}")
        object.__setattr__(self, "heads", heads)
        for h in heads:
            if isinstance(h.rank, bool) or not isinstance(h.rank, (int, np.integer)) or h.rank < 1:
                raise SymattnError(f"head ranks must be positive integers, got {h.rank!r}")
        if not self.has_values and self.combine_part.has_output_projection:
            raise SymattnError("a folded skip has no values to concatenate; use combine = sum")
        if self.residual and self.width_in != self.width_out:
            raise SymattnError(f"a skip connection needs equal input and output widths, got "
                               f"{self.width_in} and {self.width_out}")
        for h in heads:
            if h.value_width is not None and not 1 <= h.value_width <= self.width_in:
                raise SymattnError(f"head_width must be in [1, {self.width_in}], got {h.value_width}")
        object.__setattr__(self, "mask", _check_mask(self.mask))

    def __repr__(self) -> str:
        fields = ["width_in", "width_out", "normalizer", "heads", "skip", "mask", "combine"]
        text = ", ".join(f"{f}={getattr(self, f)!r}" for f in fields)
        if self.has_block_parts:
            text += f", bias={self.bias!r}, norm={self.norm!r}, eps={self.eps!r}, mlp={self.mlp!r}, " \
                    f"activation={str(self.activation)!r}"
            if self.norm_kind != "layernorm":
                text += f", norm_kind={self.norm_kind!r}"
        return f"Layer({text})"

    def _check_block_parts(self) -> None:
        bias_part(self.bias)  # true or false, else one line
        if self.norm not in NORMS:
            raise SymattnError(f"norm must be one of {', '.join(NORMS)}, got {self.norm!r}")
        norm_part(self.norm_kind)  # a known part, else one line
        if isinstance(self.eps, float):
            raise SymattnError(f"LayerNorm eps must be a rational in [0, 1] (e.g. 1/100000), got {self.eps!r}")
        object.__setattr__(self, "eps", _eps(self.eps))
        if isinstance(self.mlp, bool) or not isinstance(self.mlp, (int, np.integer)) or not 0 <= self.mlp <= MAX_MLP:
            raise SymattnError(f"the MLP hidden width must be an integer in [0, {MAX_MLP}], got {self.mlp!r}")
        object.__setattr__(self, "mlp", int(self.mlp))
        object.__setattr__(self, "activation", activation_part(self.activation))
        if (self.norm != "none" or self.mlp) and self.width_in != self.width_out:
            raise SymattnError("LayerNorm and MLP sublayers need equal input and output widths")
        if self.norm == "pre" and not self.residual:
            raise SymattnError("a pre-norm layer needs its residual connection (skip value or folded)")

    @property
    def norm_part(self) -> Norm:
        """The norm part (:mod:`symattn.model.parts`) this layer places at :attr:`norm`."""
        return norm_part(self.norm_kind)

    @property
    def skip_part(self) -> Skip:
        """The skip part (:mod:`symattn.model.parts.skip`) spelled :attr:`skip`."""
        return skip_part(self.skip)

    @property
    def bias_part(self) -> Bias:
        """The bias part (:mod:`symattn.model.parts.bias`) of the flag :attr:`bias`."""
        return bias_part(self.bias)

    @property
    def combine_part(self) -> Combine:
        """The head combination (:mod:`symattn.model.parts.output`) spelled :attr:`combine`."""
        return combine_part(self.combine)

    @property
    def residual(self) -> bool:
        """The layer adds its input to each sublayer's output (:attr:`Skip.is_residual`)."""
        return self.skip_part.is_residual

    @property
    def has_values(self) -> bool:
        """The heads carry value maps ``V`` (:attr:`Skip.has_values`)."""
        return self.skip_part.has_values

    @property
    def pre_norm(self) -> bool:
        """A norm on each sublayer's input (``X + Att(N(X))``)."""
        return self.norm == "pre"

    @property
    def post_norm(self) -> bool:
        """A norm after each residual sum (``N(X + Att(X))``)."""
        return self.norm == "post"

    @property
    def has_norm(self) -> bool:
        """A norm part placed pre or post."""
        return self.norm != "none"

    @property
    def norm_sites(self) -> tuple[str, ...]:
        """The sublayers with a norm: ``"attn_norm"`` (attention) and ``"mlp_norm"`` (the MLP), or none."""
        return (NORM_SITES if self.mlp else NORM_SITES[:1]) if self.has_norm else ()

    @property
    def has_block_parts(self) -> bool:
        """Biases, a LayerNorm or an MLP sublayer."""
        return self.bias or self.norm != "none" or bool(self.mlp)

    # -- the kind of the layer ----------------------------------------------------------
    @property
    def rank(self) -> int:
        """The query/key width of the first head (the paper's ``r_i``)."""
        return self.heads[0].rank

    @property
    def head_ranks(self) -> tuple[int, ...]:
        return tuple(h.rank for h in self.heads)

    @property
    def in_paper_model(self) -> bool:
        """The paper's layer (eq. 1): the default layer of these widths, normalizer and rank."""
        return self == Layer(self.width_in, self.width_out, self.normalizer, (Head(self.rank),))

    @property
    def reduces(self) -> bool:
        """``X -> V S^mask_A(X)``: one summed head with a value map and no skip, so that the
        layer acts on an effective score ``M = P^T A P`` (``S_A(P X) = P S_{P^T A P}(X)``;
        a mask acts on token indices only)."""
        return (len(self.heads) == 1 and not self.combine_part.has_output_projection and not self.residual
                and not self.has_block_parts)

    def with_kind(self, *, skip: str = "none", mask: Mask = "none", heads: int = 1,
                  head_ranks: Sequence[int] | None = None, combine: str = "sum",
                  head_width: int | None = None, bias: bool = False, norm: str = "none",
                  eps: "Fraction | int | str" = Fraction(1, 100000), mlp: int = 0,
                  activation: "str | Activation" = "tanh", norm_kind: str = "layernorm") -> "Layer":
        """This layer's widths, normalizer and rank with the given parts (``heads`` heads of
        rank ``head_ranks``, default the layer's rank; ``head_width`` of concatenated heads)."""
        if isinstance(heads, bool) or not isinstance(heads, (int, np.integer)) or not 1 <= heads <= MAX_HEADS:
            raise SymattnError(f"heads must be an integer in [1, {MAX_HEADS}], got {heads!r}")
        ranks = tuple(head_ranks) if head_ranks is not None else (self.rank,) * heads
        if len(ranks) != heads:
            raise SymattnError(f"head_ranks has {len(ranks)} entries for {heads} heads")
        width = head_width if combine == "concat" else None
        return Layer(self.width_in, self.width_out, self.normalizer,
                     tuple(Head(int(r), width) for r in ranks), skip, mask, combine, bias, norm,
                     _rational(eps), mlp, activation_part(activation), norm_kind)

    def value_width(self, head: Head) -> int:
        """``d_v`` of a concatenated head (default: the input width)."""
        return head.value_width or self.width_in

    # -- blocks ---------------------------------------------------------------------------
    def head_blocks(self, i: int) -> list[dict[str, Block]]:
        """Per head of this layer as layer ``i``: its blocks by role (``"Q"``, ``"K"`` and, where
        the layer has them, ``"V"`` and ``"O"``)."""
        several = len(self.heads) > 1
        out = []
        for h in range(1, len(self.heads) + 1):
            index = h if several else None
            roles = ["Q", "K"] + (["V"] if self.has_values else []) + (["O"] if self.combine_part.has_output_projection else [])
            blocks = {role: Block(i, role, index) for role in roles}
            blocks.update({"b" + role: Block(i, role, index, "bias") for role in roles if role in self.bias_part.roles})
            out.append(blocks)
        return out

    def layer_blocks(self, i: int) -> dict[str, Block]:
        """The blocks of layer ``i`` outside its heads, by part: ``bO`` (the output projection's
        bias), the norms' gains and shifts ``attn_norm.gain``, ``attn_norm.shift`` (``mlp_norm.gain``,
        ``mlp_norm.shift``), the MLP's ``mlp.in``, ``mlp.in_bias``, ``mlp.out``, ``mlp.out_bias``."""
        out = {}
        if self.bias and self.combine_part.has_output_projection:
            out["bO"] = Block(i, "O", None, "bias")
        norms = [f"{site}.{p}" for site in self.norm_sites for p in self.norm_part.parameters]
        out.update({p: Block(i, "N", None, p) for p in norms})
        if self.mlp:
            out.update({p: Block(i, "F", None, p) for p in MLP_PARTS})
        return out

    def blocks(self, i: int) -> list[tuple[Block, tuple[int, int]]]:
        """The native blocks of this layer as layer ``i`` and their shapes, in flat order."""
        out = []
        several = len(self.heads) > 1
        for h, head in enumerate(self.heads, 1):
            index = h if several else None
            out += [(Block(i, "Q", index), head.factor_shape(self.width_in)),
                    (Block(i, "K", index), head.factor_shape(self.width_in))]
            if self.bias:
                out += [(Block(i, "Q", index, "bias"), (1, head.rank)),
                        (Block(i, "K", index, "bias"), (1, head.rank))]
            if self.has_values:  # V (d_v or d_out rows), then O with a projection, then bV
                shape = self.combine_part.value_shape(self.width_in, self.width_out, self.value_width(head))
                out.append((Block(i, "V", index), shape))
                if self.combine_part.has_output_projection:
                    out.append((Block(i, "O", index), (self.width_out, shape[0])))
                if self.bias:
                    out.append((Block(i, "V", index, "bias"), (shape[0], 1)))
        d, m = self.width_out, self.mlp
        shapes = {"bO": (d, 1), "mlp.in": (m, d), "mlp.in_bias": (m, 1), "mlp.out": (d, m), "mlp.out_bias": (d, 1)}
        for site in NORM_SITES:  # a pre-norm's attention norm acts on the input
            width = self.width_in if self.pre_norm and site == "attn_norm" else d
            shapes.update({f"{site}.{p}": (width, 1) for p in self.norm_part.parameters})
        out += [(block, shapes[part]) for part, block in self.layer_blocks(i).items()]
        return out

    def describe(self, i: int) -> str:
        """``layer i: skip none, mask none, 1 head r = [1]`` (and ``concat d_v = ...``)."""
        mask = self.mask if isinstance(self.mask, str) else "pattern"
        H = len(self.heads)
        bits = [f"skip {self.skip}", f"mask {mask}", f"{H} head{'s' if H > 1 else ''} r = {list(self.head_ranks)}"]
        if self.combine_part.has_output_projection:
            bits.append(f"concat d_v = {self.value_width(self.heads[0])}")
        return f"layer {i}: " + ", ".join(bits + self._block_parts())

    def _block_parts(self) -> list[str]:
        out = ["biases"] if self.bias else []
        if self.has_norm:
            out.append(self.norm_part.describe(self.norm, self.eps))
        if self.mlp:
            out.append(f"MLP m = {self.mlp} {self.activation}")
        return out

    def parts(self) -> list[str]:
        """The parts that differ from the paper's layer, in words (empty for the paper's layer).

        >>> Layer(2, 2, Normalizer("exp")).with_kind(skip="value", mask="causal", heads=2).parts()
        ['skip value', 'mask causal', '2 heads']
        """
        out = []
        if self.residual:
            out.append(f"skip {self.skip}")
        if self.mask != "none":
            out.append(f"mask {self.mask if isinstance(self.mask, str) else 'pattern'}")
        if len(self.heads) > 1:
            out.append(f"{len(self.heads)} heads")
        if self.combine != "sum":
            out.append(f"combine {self.combine}")
        return out + self._block_parts()


def _rational(value) -> Fraction:
    """``eps`` as an exact rational (``"1e-5"`` and ``"1/100000"`` are read exactly)."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, float):
        raise SymattnError(f"give eps as an exact rational (e.g. '1/100000' or '1e-5'), got the float {value!r}")
    return _eps(value)


def _eps(value) -> Fraction:
    """``eps`` range-checked before it is built (:func:`symattn.core.parse.parse_rational`); a small
    Fraction in range, the default, needs no parser (and so no sympy at start-up)."""
    if isinstance(value, Fraction) and 0 <= value <= 1 and max(value.numerator.bit_length(),
                                                             value.denominator.bit_length()) <= 64:
        return value
    from symattn.core.parse import parse_rational

    return parse_rational(value, "LayerNorm eps", 0, 1)
