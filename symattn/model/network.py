"""The network as a networkx DAG of tensor-level operations: the one graph builder.

``graph.graph["inputs"]`` lists the input nodes and ``graph.graph["outputs"]``
maps output names to nodes: ``F`` and the layer outputs ``X1..XD`` of a
network, or ``L, M1..MD`` of the reduction. Three graphs describe an
:class:`~symattn.model.architecture.Architecture`: :func:`native_network` (inputs ``X`` and
the native blocks), :func:`effective_network` (inputs ``X``, ``L`` and one score per layer and
head: eq. 2, or the score model) and :func:`reduction_graph` (the reduction ``pi`` of eq. 3).
A node carries ``op`` (an algebra method), ``args`` (its predecessors), ``params`` and
``layer`` (:class:`Builder`). One attention layer ``S_M^phi(X)`` (eq. 1, tokens as columns) is
``Z = X^T M X, W = phi(Z), A = W / rowsum(W), S = X A^T`` (:func:`layer`; masked:
:func:`masked_layer`). :func:`add_layer` builds a layer from its parts
(:mod:`symattn.model.parts`: each part adds its own nodes). The graphs are evaluated by
:mod:`symattn.model.interpreter` (:func:`evaluate`, :func:`jacobian`), whose names are
importable from here.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Sequence

import networkx as nx
import numpy as np

from symattn.core.errors import SymattnError
from symattn.model.architecture import Architecture, Layer, mask_matrix
from symattn.model.sublayers import mlp
from symattn.model.interpreter import evaluate, jacobian, series_derivative_check
from symattn.model.normalizer import Normalizer

__all__ = ["native_network", "effective_network", "reduction_graph", "evaluate", "jacobian",
           "series_derivative_check", "layer", "masked_layer", "add_layer", "Builder"]


class Builder:
    """Builds a graph node by node; nodes made while :attr:`layer` is ``i`` carry ``layer=i``.

    Parameters
    ----------
    name : str
        The graph's name.

    Notes
    -----
    Nodes carry ``op`` (``input``, ``matmul``, ``transpose``, ``phi``, ``sum``, ``reciprocal``, ``mul``,
    ``add``, ``sub``, ``const``, ``fn``), ``args`` (ordered predecessor names), ``params`` (keyword
    arguments of the algebra method: ``normalizer`` and ``layer`` of ``phi``, ``axis`` of ``sum``, the
    fixed exact array ``values`` of ``const``) and ``layer`` (``i`` for the nodes of layer ``i``, 0
    outside the layers).

    Examples
    --------
    >>> b = Builder("demo")
    >>> b.layer = 1
    >>> b.op("s", "sum", b.input("x"), axis=-1)
    's'
    >>> b.g.nodes["s"]["params"], b.g.nodes["s"]["layer"], b.g.nodes["x"]["layer"]
    ({'axis': -1}, 1, 1)
    """

    def __init__(self, name: str):
        self.g = nx.DiGraph(name=name, inputs=[], outputs={})
        #: the layer the next nodes belong to (0: outside the layers)
        self.layer = 0

    def input(self, name: str) -> str:
        self.g.add_node(name, op="input", args=(), params={}, layer=self.layer)
        self.g.graph["inputs"].append(name)
        return name

    def op(self, name: str, op: str, *args: str, **params: Any) -> str:
        """Add node ``name`` computing ``algebra.<op>(*args, **params)``."""
        self.g.add_node(name, op=op, args=args, params=params, layer=self.layer)
        for a in args:
            self.g.add_edge(a, name)
        return name


def layer(b: Builder, x: str, m: str, normalizer, tag: str, scores: str | None = None) -> str:
    """Add ``S_m^phi(x)`` to the builder (its nodes in layer ``b.layer``); returns the output node name.
    ``scores`` (a node) replaces ``x^T m x`` (biased scores).

    Parameters
    ----------
    b : Builder
        The graph builder.
    x : str
        The input node (tokens as columns).
    m : str
        The score node ``M`` (read as ``x^T M x``).
    normalizer : Normalizer
        The layer's ``phi``.
    tag : str
        The prefix of the new nodes.
    scores : str or None
        A score node that replaces ``x^T m x``.

    Returns
    -------
    str
        The output node ``S``.
    """
    xt = b.op(f"{tag}.XT", "transpose", x)
    z = scores or b.op(f"{tag}.Z", "matmul", b.op(f"{tag}.XTM", "matmul", xt, m), x)
    w = b.op(f"{tag}.W", "phi", z, normalizer=normalizer, layer=b.layer)
    den = b.op(f"{tag}.den", "sum", w, axis=-1)
    a = b.op(f"{tag}.A", "mul", w, b.op(f"{tag}.inv", "reciprocal", den))
    return b.op(f"{tag}.S", "matmul", x, b.op(f"{tag}.AT", "transpose", a))


def masked_layer(b: Builder, x: str, a: str, normalizer, mask: np.ndarray, tag: str,
                 scores: str | None = None) -> str:
    """``S^mask_a(x)`` written with the row-normalised mask ``m' = m_ab / |N(a)|``:
    ``W = phi(Z)``, ``E = m' (W - 1)``, ``A = (m' + E) / (1 + rowsum E)`` (the same
    function; every row sum has the constant term 1, which the majorant bounds of
    :mod:`symattn.core.certify` need).

    Parameters
    ----------
    b : Builder
        The graph builder.
    x : str
        The input node.
    a : str
        The score node ``A`` (read as ``x^T A x``).
    normalizer : Normalizer
        The layer's ``phi``.
    mask : numpy.ndarray
        The 0/1 mask ``m[a, b]`` (query ``a``, key ``b``).
    tag : str
        The prefix of the new nodes.
    scores : str or None
        A score node that replaces ``x^T a x``.

    Returns
    -------
    str
        The output node ``S``.
    """
    n = mask.shape[0]
    mn = np.empty(mask.shape, dtype=object)
    for (r, c), v in np.ndenumerate(mask):
        mn[r, c] = Fraction(int(v), int(mask[r].sum()))
    xt = b.op(f"{tag}.XT", "transpose", x)
    z = scores or b.op(f"{tag}.Z", "matmul", b.op(f"{tag}.XTM", "matmul", xt, a), x)
    w = b.op(f"{tag}.W", "phi", z, normalizer=normalizer, layer=b.layer)
    m = b.op(f"{tag}.mask", "const", values=mn)
    e = b.op(f"{tag}.E", "mul", m, b.op(f"{tag}.W1", "sub", w, b.op(f"{tag}.ones", "const",
                                                                     values=np.ones((n, n), dtype=int))))
    den = b.op(f"{tag}.den", "add", b.op(f"{tag}.one", "const", values=np.ones((n, 1), dtype=int)),
               b.op(f"{tag}.rowsum", "sum", e, axis=-1))
    att = b.op(f"{tag}.A", "mul", b.op(f"{tag}.num", "add", m, e), b.op(f"{tag}.inv", "reciprocal", den))
    return b.op(f"{tag}.S", "matmul", x, b.op(f"{tag}.AT", "transpose", att))


def _attention(b: Builder, x: str, a: str | None, phi, mask: np.ndarray | None, tag: str,
               scores: str | None = None) -> str:
    """``S_a(x)``, masked when ``mask`` is given (``scores``: a score node instead of ``x^T a x``)."""
    score = a or ""  # unused when the score node is given
    if mask is None:
        return layer(b, x, score, phi, tag, scores)
    return masked_layer(b, x, score, phi, mask, tag, scores)


def _combine(b: Builder, i: int, layer: Layer, x: str, terms: list[str]) -> str:
    """Sum the heads' ``terms``, add the skip, record the output ``X{i}``."""
    y = terms[0]
    for h, term in enumerate(terms[1:], 2):
        y = b.op(f"layer{i}.heads{h}", "add", y, term)
    y = layer.skip_part.build(b, x, y, f"X{i}")
    b.g.graph["outputs"][f"X{i}"] = y
    return y


def add_layer(b: Builder, i: int, layer: Layer, x: str, tokens: int) -> str:
    """Add native layer ``i`` (its block inputs and nodes) on the input node ``x``; returns
    its output node. Per head: ``A = Q K^T``, ``S^mask_A(x)``, then the head's value map
    ``V`` and output projection ``O`` where it has them; the heads are summed and the
    skip added (:func:`_combine`). The paper's layer gives the nodes ``A{i}``,
    ``layer{i}.*`` and ``X{i} = V{i} S``.

    Parameters
    ----------
    b : Builder
        The graph builder.
    i : int
        The layer's number (1-based).
    layer : Layer
        The layer and its parts.
    x : str
        The input node.
    tokens : int
        The number of tokens ``n`` (for the mask).

    Returns
    -------
    str
        The output node ``X{i}``.
    """
    if layer.has_block_parts:
        return _add_block_layer(b, i, layer, x, tokens)
    mask = mask_matrix(layer.mask, tokens)
    last = len(layer.heads) == 1 and not layer.residual  # the head's product is the layer's output
    terms = []
    for blocks, head in zip(layer.head_blocks(i), layer.heads):
        suffix = blocks["Q"].suffix
        tag = f"layer{i}{suffix}"
        q, k = b.input(blocks["Q"].name), b.input(blocks["K"].name)
        v, o = (b.input(blocks[role].name) if role in blocks else None for role in ("V", "O"))
        a = head.score(b, q, k, f"A{i}{suffix}", f"{blocks['K'].name}T")
        y = _attention(b, x, a, layer.normalizer, mask, tag)
        if v is not None:  # the last product of the only head is the layer's output X{i}
            projected = layer.combine_part.has_output_projection
            y = b.op(f"X{i}" if last and not projected else f"{tag}.VS", "matmul", v, y)
            y = layer.combine_part.build(b, o, y, f"X{i}" if last else f"{tag}.OVS")
        terms.append(y)
    return _combine(b, i, layer, x, terms)


def _block_heads(b: Builder, i: int, layer: Layer, x: str, mask, parts: dict) -> str:
    """``sum_h [O_h] (V_h S_h(x) + bV_h) + bO`` of a layer with block parts."""
    terms = []
    for blocks, head in zip(layer.head_blocks(i), layer.heads):
        suffix = blocks["Q"].suffix
        tag = f"layer{i}{suffix}"
        name = {role: b.input(block.name) for role, block in blocks.items()}
        if layer.bias:
            scores = layer.bias_part.scores(b, x, name["Q"], name["K"], name["bQ"], name["bK"], tag)
            y = _attention(b, x, None, layer.normalizer, mask, tag, scores)
        else:
            a = head.score(b, name["Q"], name["K"], f"A{i}{suffix}", f"{blocks['K'].name}T")
            y = _attention(b, x, a, layer.normalizer, mask, tag)
        if "V" in name:
            y = b.op(f"{tag}.VS", "matmul", name["V"], y)
            y = layer.bias_part.values(b, y, name.get("bV"), f"{tag}.VSb")
        y = layer.combine_part.build(b, name.get("O"), y, f"{tag}.OVS")
        terms.append(y)
    y = terms[0]
    for h, term in enumerate(terms[1:], 2):
        y = b.op(f"layer{i}.heads{h}", "add", y, term)
    if "bO" in parts:
        y = b.op(f"layer{i}.att", "add", y, parts["bO"])
    return y


def _add_block_layer(b: Builder, i: int, layer: Layer, x: str, tokens: int) -> str:
    """Layer ``i`` with biases, a norm part (pre or post; its nodes from the part) and/or an MLP sublayer (see
    :mod:`symattn.model.layers`): attention sublayer, residual, norm; then the MLP
    sublayer, residual, norm."""
    mask = mask_matrix(layer.mask, tokens)
    parts = {part: b.input(block.name) for part, block in layer.layer_blocks(i).items()}
    d, eps = layer.width_out, layer.eps

    part = layer.norm_part

    def norm(y: str, which: str) -> str:
        params = {p: parts[f"{which}.{p}"] for p in part.parameters}
        return part.build(b, y, params, eps, d, f"layer{i}.{which}")

    pre, post = layer.pre_norm, layer.post_norm
    y = _block_heads(b, i, layer, norm(x, "attn_norm") if pre else x, mask, parts)
    y = layer.skip_part.build(b, x, y, f"layer{i}.res")
    if post:
        y = norm(y, "attn_norm")
    if layer.mlp:
        z = mlp(b, norm(y, "mlp_norm") if pre else y, parts, layer.activation, f"layer{i}.MLP")
        z = layer.skip_part.build(b, y, z, f"layer{i}.resF")
        y = norm(z, "mlp_norm") if post else z
    b.g.graph["outputs"][f"X{i}"] = y
    return y


def native_network(arch: Architecture) -> nx.DiGraph:
    """The native stack (e.g. ``X -> V_i S_{Q_i K_i^T}(X)``); inputs ``X`` and the native
    blocks; outputs ``X1..XD`` and ``F``.

    Parameters
    ----------
    arch : Architecture
        Any layer parts.

    Returns
    -------
    networkx.DiGraph

    Examples
    --------
    >>> g = native_network(Architecture.uniform(1, 2, 1, 3, "exp", skip="value", heads=2))
    >>> g.graph["inputs"], g.graph["outputs"]["F"]
    (['X', 'Q1h1', 'K1h1', 'V1h1', 'Q1h2', 'K1h2', 'V1h2'], 'X1')
    """
    b = Builder("native")
    x = b.input("X")
    for i, part in enumerate(arch.layers, 1):
        b.layer = i
        x = add_layer(b, i, part, x, arch.tokens)
    if arch.final_norm is not None:  # the model-level part, in layer D
        D = arch.depth
        params = {p: b.input(f"{p}{D}") for p in arch.final_norm.parameters}
        x = arch.final_norm.build(b, x, params, arch.widths[-1], "final_norm")
    b.g.graph["outputs"]["F"] = x
    _mark_for_reference(b, arch, "native")
    return b.g


def _mark_for_reference(b: Builder, arch: Architecture, kind: str) -> None:
    """Tag the graph of a stack beyond the paper's whose layer kinds the naive reference knows
    (:func:`~symattn.model.reference.covers`): :func:`~symattn.model.interpreter.jacobian`
    checks such a graph against the reference."""
    from symattn.model.reference import covers

    if not arch.in_paper_model and covers(arch):
        b.g.graph.update(architecture=arch, kind=kind)


def effective_network(arch: "Architecture | Sequence[Normalizer]") -> nx.DiGraph:
    """``F_{L,M}(X) = L S_{M_D} ... S_{M_1}(X)`` (eq. 2); inputs X, L, M1..MD; output F.

    The graph depends on the normalizers only: ``arch`` is an architecture or
    the sequence ``phi_1, ..., phi_D`` (any widths then fit). For an architecture
    with skips, masks or several heads it is the *score model*: one score
    ``M{i}h{h}`` per layer and head (used as ``A_h``), values ``V = I``, layer ``i``
    mapping ``X -> [X +] sum_h S^mask_{M_{i,h}}(X)``. Without skips and with one head
    per layer that is the effective (masked) map of the native model (the
    reduction ``pi`` holds because a mask acts on token indices only,
    :attr:`~symattn.model.architecture.Architecture.has_effective_map`); otherwise
    it is the sub-family of the native model with identity values.

    Parameters
    ----------
    arch : Architecture or sequence of Normalizer

    Returns
    -------
    networkx.DiGraph

    Raises
    ------
    SymattnError
        For concatenated heads (the score model sums heads through ``V = I``).

    Examples
    --------
    >>> effective_network(Architecture.uniform(2, 2, 1, 3, heads=2)).graph["inputs"]
    ['X', 'L', 'M1h1', 'M1h2', 'M2h1', 'M2h2']
    """
    if not isinstance(arch, Architecture):
        phis = tuple(arch)
        arch = Architecture((1,) * (len(phis) + 1), (1,) * len(phis), 2, phis)
    if any(part.combine_part.has_output_projection for part in arch.layers):
        raise SymattnError("the score model sums heads through V = I; concatenated heads have no "
                           "score model (use combine = sum)")
    b = Builder("effective")
    x = b.input("X")
    L = b.input("L")
    for i, part in enumerate(arch.layers, 1):
        b.layer = i
        mask = mask_matrix(part.mask, arch.tokens)
        terms = [_attention(b, x, b.input(f"M{i}{s}"), part.normalizer, mask, f"layer{i}{s}")
                 for s in arch.head_names(i)]
        x = _combine(b, i, part, x, terms)
    b.layer = 0
    b.g.graph["outputs"]["F"] = b.op("F", "matmul", L, x)
    _mark_for_reference(b, arch, "effective")
    return b.g


def reduction_graph(arch: Architecture) -> nx.DiGraph:
    """The reduction pi (eq. 3) as a graph: inputs Q_i, K_i, V_i; outputs L, M_1..M_D.

    Defined for architectures with an effective map
    (:attr:`~symattn.model.architecture.Architecture.has_effective_map`).

    Parameters
    ----------
    arch : Architecture

    Returns
    -------
    networkx.DiGraph

    Raises
    ------
    SymattnError
        If the architecture has no effective map (a skip connection, several heads, a
        transformer-block part).
    """
    if not arch.has_effective_map:
        raise SymattnError("this architecture has no effective reduction pi (a skip connection, "
                           "several heads or concatenated heads)")
    b = Builder("reduction")
    P = None  # P_{i-1}; None stands for P_0 = I
    for i in range(1, arch.depth + 1):
        b.layer = i
        q, k, v = b.input(f"Q{i}"), b.input(f"K{i}"), b.input(f"V{i}")
        kt = b.op(f"K{i}T", "transpose", k)
        if P is None:
            b.op(f"M{i}", "matmul", q, kt)
            P = v
        else:
            a = b.op(f"A{i}", "matmul", q, kt)
            pa = b.op(f"PT{i}A", "matmul", b.op(f"PT{i}", "transpose", P), a)
            b.op(f"M{i}", "matmul", pa, P)
            P = b.op(f"P{i}", "matmul", v, P)
    b.g.graph["outputs"] = {"L": P, **{f"M{i}": f"M{i}" for i in range(1, arch.depth + 1)}}
    return b.g
