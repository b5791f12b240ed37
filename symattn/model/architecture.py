"""The one description of an attention stack: a sequence of layers, blocks as typed keys.

An :class:`Architecture` is a sequence of :class:`~symattn.model.layers.Layer`
objects (each with its widths, normalizer, heads, skip, mask and head
combination; see :mod:`symattn.model.layers`) and a token count ``n``.

The default :class:`Layer` (one head, no skip, no mask, summed) is the paper's
layer, and ``Architecture(widths, ranks, tokens, normalizers)`` is the paper's
stack. The graph of any architecture is built by :mod:`symattn.model.network`;
its symmetries are declared by :mod:`symattn.model.symmetries`; the statements
of :mod:`symattn.theorems.statements` say which architectures the paper covers.

Native parameters are *blocks*: a :class:`Block` is a typed key (layer, role,
head) whose display name (``Q1``, ``V2``, ``Q1h2``, ``O3h1``) is the name of the
graph input and of the entry in a point's dict; code asks the architecture for
a block's identity (:meth:`Architecture.block`) and never parses a name.
Flat native vectors list the blocks in :attr:`Architecture.blocks` order (per
layer, per head ``Q, K`` then ``V`` and ``O``), each block's entries row-major.

Adding a layer part (a bias, a LayerNorm, an MLP sublayer) means: an optional
field of :class:`Layer` (default off, so the paper's layer and every existing
stack are unchanged), its blocks in :meth:`Layer.blocks`, its nodes in
:mod:`symattn.model.network`, its symmetries in :mod:`symattn.model.symmetries`.
No analysis changes.

Examples
--------
>>> arch = Architecture.uniform(depth=3, width=4, rank=2, tokens=4, normalizer="exp")
>>> arch.native_size, arch.effective_size
(96, 64)
>>> v = Architecture.uniform(2, 2, 1, 3, "exp", skip="folded", mask="causal", heads=2)
>>> [b.name for b in v.blocks][:4], v.native_size, v.block("Q1h2")
(['Q1h1', 'K1h1', 'Q1h2', 'K1h2'], 16, Block(layer=1, role='Q', head=2))
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import replace
from typing import Sequence

import numpy as np

from symattn.core.errors import SymattnError
from symattn.core.validate import BadType, require_int, require_list, shown
from symattn.core.limits import MAX_DEPTH, MAX_TOKENS, MAX_WIDTH
from symattn.model.layers import (  # noqa: F401  the layer vocabulary, importable from here
    COMBINES, MAX_HEADS, ROLES, SKIPS, Block, Head, Layer, Mask, mask_matrix, parse_mask,
)
from symattn.model.normalizer import Normalizer, normalizers
from symattn.model.parts.final_norm import FinalNorm
from symattn.render.rich_result import RichResult, short

__all__ = ["Architecture", "require_architecture"]  # the layer vocabulary (Layer, Head, Block, masks) is symattn.model.layers'.


class Architecture(RichResult):
    """An attention stack: a sequence of :class:`Layer` and a token count ``n >= 2``.

    ``Architecture(widths, ranks, tokens, normalizers)`` is the paper's stack: widths
    ``d_0, ..., d_D``, query/key widths ``r_1, ..., r_D`` and one
    :class:`~symattn.model.normalizer.Normalizer` per layer; any stack is
    ``Architecture(layers=..., tokens=n)`` (consecutive widths must agree), or
    :meth:`uniform` with the layer options.

    Parameters
    ----------
    widths : sequence of int, optional
        ``d_0, ..., d_D`` (the paper's stack).
    ranks : sequence of int, optional
        ``r_1, ..., r_D``.
    tokens : int
        The token count ``n >= 2``.
    normalizers : sequence of Normalizer, optional
        One per layer (:func:`~symattn.model.normalizer.normalizers` makes them from text).
    layers : sequence of Layer, optional
        Any stack, instead of ``widths``, ``ranks`` and ``normalizers``.
    final_norm : FinalNorm, optional
        A norm part after the last layer (:mod:`symattn.model.parts.final_norm`; blocks
        ``final_norm.gainD``, ``final_norm.shiftD``); default none.

    Raises
    ------
    SymattnError
        For neither or both ways of giving the layers, no layer, sizes beyond the limits,
        fewer than two tokens, or consecutive widths that disagree.
    BadType
        For arguments of the wrong type (normalizers given as a string).

    Examples
    --------
    >>> arch = Architecture.uniform(depth=3, width=4, rank=2, tokens=4, normalizer="exp")
    >>> arch.native_size, arch.effective_size, arch.in_paper_model
    (96, 64, True)
    >>> arch == Architecture((4, 4, 4, 4), (2, 2, 2), 4, arch.normalizers)
    True
    """

    __slots__ = ("layers", "tokens", "final_norm", "_blocks", "_index")

    layers: tuple[Layer, ...]
    tokens: int
    final_norm: FinalNorm | None
    _blocks: tuple[tuple[Block, tuple[int, int]], ...]
    _index: dict[str, tuple[Block, tuple[int, int]]]

    def __init__(self, widths: Sequence[int] | None = None, ranks: Sequence[int] | None = None,
                 tokens: int | None = None, normalizers: Sequence[Normalizer] | None = None, *,
                 layers: Sequence[Layer] | None = None, final_norm: FinalNorm | None = None):
        if layers is None:
            if widths is None or ranks is None or normalizers is None:
                raise SymattnError("give widths, ranks, tokens and normalizers, or layers and tokens")
            widths = [require_int(w, "a width") for w in require_list(widths, "widths", MAX_DEPTH + 1)]
            ranks = [require_int(r, "a rank") for r in require_list(ranks, "ranks", MAX_DEPTH)]  # ranges below
            if isinstance(normalizers, str):
                raise BadType("normalizers must be a sequence of Normalizer objects, one per layer, got a "
                              "string; use symattn.model.normalizer.normalizers(text, depth)")
            layers = _paper_layers(tuple(widths), tuple(ranks), normalizers)
        elif widths is not None or ranks is not None or normalizers is not None:
            raise SymattnError("give widths, ranks and normalizers, or layers, not both")
        layers = tuple(layers)
        if not layers:
            raise SymattnError("depth D must be at least 1")
        if not all(isinstance(layer, Layer) for layer in layers):
            raise SymattnError("layers must be Layer objects")
        tokens = require_int(tokens, "the token count n (tokens)")  # its range below
        widths = (layers[0].width_in,) + tuple(layer.width_out for layer in layers)
        if len(layers) > MAX_DEPTH or max(widths) > MAX_WIDTH or tokens > MAX_TOKENS:
            raise SymattnError(f"architecture beyond the limits (depth <= {MAX_DEPTH}, widths <= "
                               f"{MAX_WIDTH}, tokens <= {MAX_TOKENS}); see symattn.core.limits")
        if tokens < 2:
            raise SymattnError(f"token count n must be at least 2, got {tokens}")
        for i, (a, b) in enumerate(zip(layers, layers[1:]), 1):
            if a.width_out != b.width_in:
                raise SymattnError(f"layer {i} has output width {a.width_out} but layer {i + 1} has "
                                   f"input width {b.width_in}")
        for i, layer in enumerate(layers, 1):
            try:
                mask_matrix(layer.mask, tokens)
            except SymattnError as exc:
                raise SymattnError(f"layer {i}: {exc}") from None
        if final_norm is not None and not isinstance(final_norm, FinalNorm):
            raise BadType(f"final_norm must be a FinalNorm (symattn.model.parts.final_norm), got {shown(final_norm)}")
        object.__setattr__(self, "layers", layers)
        object.__setattr__(self, "tokens", tokens)
        object.__setattr__(self, "final_norm", final_norm)
        blocks = [(block, shape) for i, layer in enumerate(layers, 1) for block, shape in layer.blocks(i)]
        if final_norm is not None:  # the model-level part: blocks of layer D (zero tangents below it)
            blocks += [(Block(len(layers), "N", None, part), shape) for part, shape in final_norm.shapes(widths[-1])]
        object.__setattr__(self, "_blocks", tuple(blocks))
        object.__setattr__(self, "_index", {block.name: (block, shape) for block, shape in blocks})

    def __setattr__(self, name: str, value) -> None:
        raise AttributeError("Architecture is immutable")

    def __eq__(self, other) -> bool:
        return isinstance(other, Architecture) and (self.layers, self.tokens, self.final_norm) == (
            other.layers, other.tokens, other.final_norm)

    def __hash__(self) -> int:
        return hash((self.layers, self.tokens, self.final_norm))

    def __reduce__(self):
        return (_rebuild, (self.layers, self.tokens, self.final_norm))

    def __repr__(self) -> str:
        names = ", ".join(phi.name for phi in self.normalizers)
        if self.in_paper_model:
            return f"Architecture(widths={self.widths}, ranks={self.ranks}, tokens={self.tokens}, normalizers=({names}))"
        return short(f"Architecture(widths={self.widths}, tokens={self.tokens}, normalizers=({names}); "
                     f"{self.parts()})")

    def _headline(self) -> str:
        return repr(self)

    def _summary(self) -> tuple[str, list[tuple[str, str]]]:
        """The layers and the paper's integers (``_repr_html_``, ``_repr_latex_``).

        >>> print(Architecture.uniform(2, 2, 1, 3)._repr_latex_().splitlines()[1][:-2])
        \\text{widths} & d_0, \\dots, d_D = 2, 2, 2
        """
        widths = ", ".join(map(str, self.widths))
        rows = [("widths", f"$d_0, \\dots, d_D = {widths}$"), ("ranks", ", ".join(map(str, self.ranks))),
                ("tokens", f"$n = {self.tokens}$"),
                ("normalizers", ", ".join(phi.name for phi in self.normalizers)),
                ("parameters", f"{self.native_size} native" + (f", {self.effective_size} effective"
                                                                if self.has_effective_map else ""))]
        rows += [(f"layer {i}", layer.describe(i).split(": ", 1)[-1]) for i, layer in enumerate(self.layers, 1)]
        return f"Architecture ($D = {self.depth}$)" + ("" if self.in_paper_model else ", beyond the paper"), rows

    # -- construction ------------------------------------------------------------------
    @classmethod
    def uniform(cls, depth: int, width: int, rank: "int | str | Sequence[int]", tokens: int,
                normalizer: "str | Normalizer | Sequence" = "exp", *, skip: str = "none", mask: Mask = "none",
                heads: int = 1, head_ranks: Sequence[int] | None = None, combine: str = "sum",
                head_width: int | None = None, bias: bool = False, norm: str = "none", norm_kind: str = "layernorm",
                eps="1/100000", mlp: int = 0, activation="tanh") -> "Architecture":
        """Equal widths ``d``; ``rank`` and ``normalizer`` may be per-layer lists; the layer
        options (``skip``, ``mask``, ``heads``, ``head_ranks``, ``combine``, ``head_width``, and the
        transformer-block parts ``bias``, ``norm``, ``norm_kind``, ``eps``, ``mlp``, ``activation``) apply to
        every layer.

        Parameters
        ----------
        depth : int
            The number of layers ``D``.
        width : int
            The width ``d`` of every layer.
        rank : int, str or sequence of int
            Query/key width per layer (one for all, a comma-separated string or a list).
        tokens : int
            The token count ``n``.
        normalizer : str, Normalizer or sequence, optional
            One for all layers or one per layer.
        skip, mask, heads, head_ranks, combine, head_width : optional
            The attention layer options (:class:`~symattn.model.layers.Layer`).
        bias, norm, norm_kind, eps, mlp, activation : optional
            The transformer-block parts: biases, the norm's placement (``none``, ``pre``,
            ``post``) and kind, its ``eps`` (exact), the MLP's hidden width (0: none) and its
            activation.

        Returns
        -------
        Architecture

        Raises
        ------
        SymattnError
            For a bad value of any option (one line naming it).

        Examples
        --------
        >>> Architecture.uniform(2, 2, 1, 3, skip="value").describe()
        'layer 1: skip value, mask none, 1 head r = [1]; layer 2: skip value, mask none, 1 head r = [1]'
        """
        depth = require_int(depth, "depth D")  # types here, ranges where the layers are built
        width = require_int(width, "width d")
        tokens = require_int(tokens, "the token count n (tokens)")
        if normalizer is None or isinstance(normalizer, (numbers.Number, Mapping, set, bytes)):
            raise BadType(f"normalizer must be a name or expression in s, a Normalizer, or one per layer; got "
                          f"{shown(normalizer)}")
        if depth < 1:
            raise SymattnError(f"depth D must be at least 1, got {depth}")
        if depth > MAX_DEPTH:
            raise SymattnError(f"depth {depth} is beyond the limit {MAX_DEPTH}")
        ranks = _per_layer(rank, depth, "rank")
        arch = cls(tuple([width] * (depth + 1)), ranks, tokens, normalizers(normalizer, depth))
        kind = dict(skip=skip, mask=mask, heads=heads, head_ranks=head_ranks, combine=combine,
                    head_width=head_width)
        if bias or norm != "none" or mlp:
            kind.update(bias=bias, norm=norm, eps=eps, mlp=mlp, activation=activation, norm_kind=norm_kind)
        return arch if kind == _DEFAULT_KIND else arch.with_layers(**kind)

    def with_layers(self, **kind) -> "Architecture":
        """Every layer of the kind ``kind`` (the keywords of :meth:`Layer.with_kind`)."""
        return Architecture(layers=tuple(layer.with_kind(**kind) for layer in self.layers), tokens=self.tokens,
                            final_norm=self.final_norm)

    def with_final_norm(self, final_norm: FinalNorm | None) -> "Architecture":
        """These layers with the final norm ``final_norm`` (None: without one).

        >>> from fractions import Fraction
        >>> arch = Architecture.uniform(1, 2, 1, 2, skip="value", norm="pre").with_final_norm(FinalNorm())
        >>> [b.name for b in arch.blocks][-2:], arch.describe().split("; ")[-1]
        (['final_norm.gain1', 'final_norm.shift1'], 'final LayerNorm eps = 1/100000')
        """
        return Architecture(layers=self.layers, tokens=self.tokens, final_norm=final_norm)

    def replace_layer(self, i: int, **kind) -> "Architecture":
        """Layer ``i`` (1-based) of the kind ``kind``, the others unchanged."""
        layers = list(self.layers)
        layers[i - 1] = layers[i - 1].with_kind(**kind)
        return Architecture(layers=layers, tokens=self.tokens, final_norm=self.final_norm)

    def prefix(self, depth: int, readout_width: int | None = None) -> "Architecture":
        """The first ``depth`` layers (the last output width replaced by ``readout_width``)."""
        layers = list(self.layers[:depth])
        if readout_width is not None:
            layers[-1] = replace(layers[-1], width_out=readout_width)
        return Architecture(layers=layers, tokens=self.tokens)

    # -- the paper's integers ------------------------------------------------------------
    @property
    def depth(self) -> int:
        return len(self.layers)

    @property
    def widths(self) -> tuple[int, ...]:
        """``d_0, ..., d_D``."""
        return (self.layers[0].width_in,) + tuple(layer.width_out for layer in self.layers)

    @property
    def ranks(self) -> tuple[int, ...]:
        """``r_1, ..., r_D``: the query/key width of each layer's (first) head."""
        return tuple(layer.rank for layer in self.layers)

    @property
    def normalizers(self) -> tuple[Normalizer, ...]:
        return tuple(layer.normalizer for layer in self.layers)

    @property
    def d(self) -> int:
        """The common width (error unless all widths agree)."""
        if len(set(self.widths)) != 1:
            raise SymattnError(f"this needs equal widths, got {self.widths}")
        return self.widths[0]

    @property
    def in_paper_model(self) -> bool:
        """Every layer is the paper's layer (used by the statements of
        :mod:`symattn.theorems.statements`, never by an analysis)."""
        return self.final_norm is None and all(layer.in_paper_model for layer in self.layers)

    @property
    def has_effective_map(self) -> bool:
        """Every layer reduces (:attr:`Layer.reduces`): ``F = F_eff o pi`` with the effective
        tuple ``(L, M_1..M_D)`` of the reduction ``pi`` (eq. 3), masks allowed."""
        if self.final_norm is not None:  # the final norm is no score map
            return False
        return all(layer.reduces for layer in self.layers)

    @property
    def effective_map(self) -> str | None:
        """The name of the effective map the native model reduces to: ``"effective"``,
        ``"effective (masked)"``, or None without an effective map (:attr:`has_effective_map`)."""
        if not self.has_effective_map:
            return None
        return "effective (masked)" if any(layer.mask != "none" for layer in self.layers) else "effective"

    def describe(self) -> str:
        """One clause per layer, e.g. ``layer 1: skip value, mask causal, 2 heads r = [1, 1]``."""
        final = [self.final_norm.describe()] if self.final_norm is not None else []
        return "; ".join([layer.describe(i) for i, layer in enumerate(self.layers, 1)] + final)

    def parts(self) -> str:
        """The layer parts beyond the paper's model in words (empty for the paper's stack).

        >>> Architecture.uniform(2, 2, 1, 3).parts(), Architecture.uniform(2, 2, 1, 3, mask="causal").parts()
        ('', 'layers 1-2: mask causal')
        """
        groups: list[tuple[list[int], list[str]]] = []
        for i, layer in enumerate(self.layers, 1):
            bits = layer.parts()
            if groups and groups[-1][1] == bits and groups[-1][0][-1] == i - 1:
                groups[-1][0].append(i)
            else:
                groups.append(([i], bits))
        out = []
        for layers, bits in groups:
            if bits:
                where = f"layer {layers[0]}" if len(layers) == 1 else f"layers {layers[0]}-{layers[-1]}"
                out.append(f"{where}: {', '.join(bits)}")
        if self.final_norm is not None:
            out.append(self.final_norm.describe())
        return "; ".join(out)

    # -- native blocks -------------------------------------------------------------------
    @property
    def blocks(self) -> tuple[Block, ...]:
        """The native blocks in flat order."""
        return tuple(block for block, _ in self._blocks)

    def block(self, name: str) -> Block:
        """The block whose display name is ``name`` (a lookup, never a parse)."""
        try:
            return self._index[name][0]
        except KeyError:
            raise SymattnError(f"no native block {name!r}; the architecture has "
                               f"{[b.name for b in self.blocks]}") from None

    def shape(self, block: "Block | str") -> tuple[int, int]:
        """The shape of a native block."""
        name = block if isinstance(block, str) else block.name
        if name not in self._index:
            self.block(name)  # the error naming the blocks there are
        return self._index[name][1]

    def native_shapes(self) -> list[tuple[str, tuple[int, int]]]:
        """``[("Q1", shape), ("K1", shape), ("V1", shape), ("Q2", ...), ...]`` in flat order."""
        return [(block.name, shape) for block, shape in self._blocks]

    def layer_blocks(self, i: int) -> tuple[Block, ...]:
        """The native blocks of layer ``i``."""
        return tuple(block for block in self.blocks if block.layer == i)

    def head_names(self, i: int) -> list[str]:
        """Suffixes of layer ``i``'s heads in block names: ``[""]`` for one head, else ``["h1", ...]``."""
        return [blocks["Q"].suffix for blocks in self.layers[i - 1].head_blocks(i)]

    @property
    def native_size(self) -> int:
        return sum(a * b for _, (a, b) in self._blocks)

    def offsets(self) -> dict[str, int]:
        """Start of each native block in the flat native vector."""
        out, k = {}, 0
        for block, (a, b) in self._blocks:
            out[block.name] = k
            k += a * b
        return out

    def columns(self, block: "Block | str") -> range:
        """The flat native coordinates of a block."""
        name = block if isinstance(block, str) else block.name
        start = self.offsets()[name]
        a, b = self.shape(name)
        return range(start, start + a * b)

    def column_blocks(self) -> list[Block]:
        """The block of every flat native coordinate."""
        return [block for block, (a, b) in self._blocks for _ in range(a * b)]

    # -- effective blocks ----------------------------------------------------------------
    def effective_shapes(self) -> list[tuple[str, tuple[int, int]]]:
        """``[("L", (d_D, d_0)), ("M1", (d_0, d_0)), ...]``: the readout and one score per layer
        and head (``M{i}h{h}``) of the effective map (or score model, see
        :func:`symattn.model.network.effective_network`)."""
        d0 = self.widths[0]
        return [("L", (self.widths[-1], d0))] + [(f"M{i}{s}", (d0, d0)) for i in range(1, self.depth + 1)
                                                 for s in self.head_names(i)]

    def score_names(self) -> list[str]:
        """The blocks of the effective map: ``L`` then ``M{i}`` (``M{i}h{h}`` for several heads)."""
        return [name for name, _ in self.effective_shapes()]

    @property
    def effective_size(self) -> int:
        return sum(int(np.prod(s)) for _, s in self.effective_shapes())


_DEFAULT_KIND = dict(skip="none", mask="none", heads=1, head_ranks=None, combine="sum", head_width=None)


def _rebuild(layers, tokens, final_norm=None) -> Architecture:
    return Architecture(layers=layers, tokens=tokens, final_norm=final_norm)


def _paper_layers(widths: tuple, ranks: tuple, phis) -> tuple[Layer, ...]:
    """The paper's layers of widths ``d_0..d_D`` and ranks ``r_1..r_D`` (validated with the
    messages of the paper's notation)."""
    D = len(ranks)
    if D < 1:
        raise SymattnError("depth D must be at least 1")
    if D > MAX_DEPTH or max(widths, default=0) > MAX_WIDTH:
        raise SymattnError(f"architecture beyond the limits (depth <= {MAX_DEPTH}, widths <= "
                           f"{MAX_WIDTH}, tokens <= {MAX_TOKENS}); see symattn.core.limits")
    if len(widths) != D + 1:
        raise SymattnError(f"need D + 1 = {D + 1} widths d_0..d_D, got {len(widths)}")
    if any(int(d) < 1 for d in widths):
        raise SymattnError(f"widths must be positive, got {widths}")
    for i, r in enumerate(ranks, 1):
        if r < 1:
            raise SymattnError(f"query/key width r_{i} must be at least 1, got {r}")
    phis = tuple(Normalizer(p) if isinstance(p, str) else p for p in phis)  # a name: the whitelist parser
    if len(phis) != D:
        raise SymattnError(f"need one normalizer per layer (D = {D}), got {len(phis)}")
    return tuple(Layer(int(widths[i]), int(widths[i + 1]), phis[i], (Head(int(ranks[i])),)) for i in range(D))


def require_architecture(value, name: str = "arch") -> "Architecture":
    """``value`` if it is an :class:`Architecture`, else :class:`~symattn.core.validate.BadType`
    (the public analyses check their first argument with it).

    Parameters
    ----------
    value : object
    name : str, optional
        The argument's name in the message.

    Returns
    -------
    Architecture

    Raises
    ------
    BadType
        If ``value`` is not an :class:`Architecture`.

    Examples
    --------
    >>> require_architecture("x")
    Traceback (most recent call last):
    ...
    symattn.core.validate.BadType: arch must be an Architecture (e.g. Architecture.uniform(2, 2, 1, 2)), got str 'x'
    """
    if not isinstance(value, Architecture):
        raise BadType(f"{name} must be an Architecture (e.g. Architecture.uniform(2, 2, 1, 2)), got {shown(value)}")
    return value


def _per_layer(value, depth: int, what: str) -> tuple[int, ...]:
    if isinstance(value, str):
        try:
            value = [int(v) for v in value.split(",")]
        except ValueError:
            raise SymattnError(f"{what} must be an integer or a comma list of integers, "
                               f"got {value!r}") from None
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (require_int(value, what),) * depth
    if not isinstance(value, (list, tuple, np.ndarray)):
        raise BadType(f"{what} must be an integer or one per layer, got {shown(value)}")
    try:
        value = tuple(require_int(v, what) for v in value)
    except BadType as exc:
        raise SymattnError(f"{what} must be an integer per layer: {exc}") from None
    if len(value) == 1:
        return value * depth
    if len(value) != depth:
        raise SymattnError(f"{what} list has {len(value)} entries; give 1 or D = {depth}")
    return value
