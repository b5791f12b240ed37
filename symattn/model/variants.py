"""Variant layer kinds beyond the paper: skip connections, masks, multi-head layers.

Scope: a :class:`VariantArchitecture` is a stack of equal-width layers, each of
a :class:`LayerKind`, built as one graph (:func:`variant_network`) from the
same node kinds as :mod:`symattn.model.network` plus ``add``, ``sub`` and ``const``.
Layer ``i`` with input ``X`` (tokens as columns), heads ``h = 1..H`` with
``A_h = Q_h K_h^T`` (``Q_h, K_h`` of shape ``d x r_h``):

* ``skip = "none"``: ``X -> sum_h V_h S^mask_{A_h}(X)`` (one head: the paper's
  native layer ``V S_A(X)``);
* ``skip = "value"``: ``X -> X + sum_h V_h S^mask_{A_h}(X)``;
* ``skip = "folded"``: ``X -> X + sum_h S^mask_{A_h}(X)`` (values folded, no ``V``);
* ``combine = "concat"``: heads of width ``d_v`` are concatenated and mixed by
  ``W_O = [O_1 ... O_H]`` (``d x H d_v``): ``sum_h O_h V_h S_h(X)`` with
  ``V_h`` of shape ``d_v x d`` (the same function as ``W_O concat(V_h S_h)``,
  the columns of ``W_O`` listed block by block);
* ``mask``: ``causal`` (query ``a`` sees keys ``b <= a``), ``window:w``
  (``|a - b| < w``) or a user 0/1 pattern (every row needs a one); masked keys
  leave the normalisation: ``S^mask_A(X)_a = sum_{b in N(a)} phi(x_a^T A x_b) x_b
  / sum_{b in N(a)} phi(x_a^T A x_b)``.

A layer of the default kind (no skip, no mask, one head) is the paper's layer,
built node for node as :func:`symattn.model.network.native_network` builds it, so an
all-default stack *is* today's graph (:attr:`VariantArchitecture.is_plain`).

Each layer kind declares its continuous symmetries (:func:`symmetry_directions`):
per-head factor gauges ``(Q_h B, -K_h B^T)`` (``Q K^T`` is unchanged), per-head
value gauges of a concatenated head (``V_h -> C V_h``, ``O_h -> O_h C^{-1}``),
and the interface ``GL(d)`` at the output of layer ``j`` when neither layer
``j`` nor ``j + 1`` has a skip (``S_A(GX) = G S_{G^T A G}(X)``, which every
mask respects since it acts on token indices only). A skip connection breaks
the interface action (``X + ...`` is not equivariant). Head permutations of
equal-shape heads are a finite symmetry (:func:`head_classes`,
:func:`head_permutation_check`: the full group, verified on its generators):
they cost no dimension. Analyses verify every declared direction as a kernel
vector of the computed Jacobian; they never assume it.

Caveats: no theorem of the paper covers a non-default layer
(:data:`NO_THEOREM`); masked layers are written with the row-normalised mask
``m_ab / |N(a)|`` and ``W - 1`` (same function; every row sum then has the
constant term 1, which the majorant bounds of :mod:`symattn.core.certify` need).
Specs come from the command line or a small TOML file (:func:`load_spec`),
validated with one-line :class:`~symattn.core.errors.SymattnError` messages;
normalizer strings go through :class:`~symattn.model.normalizer.Normalizer`.
"""

from __future__ import annotations

import itertools
import random
import tomllib
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Iterator

import networkx as nx
import numpy as np

from symattn.core.errors import SymattnError
from symattn.model.network import Builder, layer
from symattn.core.limits import MAX_TOKENS
from symattn.core.linalg import identity_matrix
from symattn.model.architecture import Architecture, random_rational_matrix
from symattn.model.normalizer import Normalizer

__all__ = [
    "NO_THEOREM", "LayerKind", "VariantArchitecture", "parse_mask", "mask_matrix", "load_spec",
    "variant_network", "score_network", "score_names", "random_variant_point", "symmetry_directions",
    "head_classes", "head_permutation_check", "with_layers",
]

#: The label of every result outside the paper's hypotheses (text and JSON ``theorem: null``).
NO_THEOREM = "computed; no theorem in the paper covers this architecture"

SKIPS = ("none", "value", "folded")
COMBINES = ("sum", "concat")


def parse_mask(text: str) -> "str | tuple[tuple[int, ...], ...]":
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


def mask_matrix(mask: "str | tuple", n: int) -> np.ndarray | None:
    """The 0/1 matrix ``m[a, b]`` (query ``a``, key ``b``) of a mask on ``n`` tokens, or
    None for ``"none"``.

    >>> mask_matrix("causal", 3).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    >>> mask_matrix("window:2", 3).tolist()
    [[1, 1, 0], [1, 1, 1], [0, 1, 1]]
    """
    if mask == "none":
        return None
    if mask == "causal":
        return np.tril(np.ones((n, n), dtype=int))
    if isinstance(mask, str):
        w = int(mask.split(":")[1])
        a = np.arange(n)
        return (abs(a[:, None] - a[None, :]) < w).astype(int)
    m = np.asarray(mask, dtype=int)
    if m.shape != (n, n):
        raise SymattnError(f"mask pattern is {m.shape[0]} x {m.shape[1] if m.ndim > 1 else 0}; "
                           f"the architecture has n = {n} tokens")
    return m


@dataclass(frozen=True)
class LayerKind:
    """One layer's kind: skip form, mask, heads (see the module docstring).

    ``head_ranks`` defaults to the layer's rank for every head; ``head_width``
    (``d_v`` of a concatenated head) defaults to ``d``.

    >>> LayerKind().is_plain, LayerKind(skip="value").is_plain
    (True, False)
    """

    skip: str = "none"
    mask: "str | tuple[tuple[int, ...], ...]" = "none"
    heads: int = 1
    head_ranks: tuple[int, ...] | None = None
    combine: str = "sum"
    head_width: int | None = None

    def __post_init__(self) -> None:
        if self.skip not in SKIPS:
            raise SymattnError(f"skip must be one of {', '.join(SKIPS)}, got {self.skip!r}")
        if self.combine not in COMBINES:
            raise SymattnError(f"combine must be sum or concat, got {self.combine!r}")
        if not isinstance(self.heads, int) or not 1 <= self.heads <= 64:
            raise SymattnError(f"heads must be an integer in [1, 64], got {self.heads!r}")
        if self.head_ranks is not None and len(self.head_ranks) != self.heads:
            raise SymattnError(f"head_ranks has {len(self.head_ranks)} entries for {self.heads} heads")
        if self.skip == "folded" and self.combine == "concat":
            raise SymattnError("a folded skip has no values to concatenate; use combine = sum")
        if isinstance(self.mask, str):
            parse_mask(self.mask)
        else:
            m = np.asarray(self.mask)
            if m.ndim != 2 or m.shape[0] != m.shape[1] or not np.isin(m, (0, 1)).all():
                raise SymattnError("a mask pattern must be a square 0/1 matrix")
            if not m.any(axis=1).all():
                raise SymattnError("every query (row) of a mask pattern must see at least one key")

    @property
    def is_plain(self) -> bool:
        """No skip, no mask, one summed head: the paper's layer."""
        return self.skip == "none" and self.mask == "none" and self.heads == 1 and self.combine == "sum"

    def ranks(self, r: int) -> tuple[int, ...]:
        """Head ranks ``r_h`` given the layer's rank ``r``."""
        return self.head_ranks or (r,) * self.heads


@dataclass(frozen=True)
class VariantArchitecture:
    """An equal-width stack of :class:`LayerKind` layers over a base
    :class:`~symattn.model.architecture.Architecture` (width, tokens, ranks, normalizers).

    Examples
    --------
    >>> base = Architecture.uniform(2, 2, 1, 3, "exp")
    >>> VariantArchitecture(base).is_plain, VariantArchitecture(base).native_size == base.native_size
    (True, True)
    >>> v = VariantArchitecture(base, (LayerKind(skip="folded", mask="causal", heads=2),) * 2)
    >>> [name for name, _ in v.native_shapes()][:4], v.native_size
    (['Q1h1', 'K1h1', 'Q1h2', 'K1h2'], 16)
    """

    base: Architecture
    layers: tuple[LayerKind, ...] = ()

    def __post_init__(self) -> None:
        D = self.base.depth
        if not self.layers:
            object.__setattr__(self, "layers", (LayerKind(),) * D)
        if len(self.layers) != D:
            raise SymattnError(f"need one layer kind per layer (D = {D}), got {len(self.layers)}")
        d = self.base.d if any(not k.is_plain for k in self.layers) else None
        for i, kind in enumerate(self.layers, 1):
            for r in kind.ranks(self.base.ranks[i - 1]):
                if not 1 <= r:
                    raise SymattnError(f"layer {i}: head ranks must be positive, got {r}")
            if d is not None:
                mask_matrix(kind.mask, self.base.tokens)
                if kind.head_width is not None and not 1 <= kind.head_width <= d:
                    raise SymattnError(f"layer {i}: head_width must be in [1, {d}]")

    @property
    def depth(self) -> int:
        return self.base.depth

    @property
    def tokens(self) -> int:
        return self.base.tokens

    @property
    def d(self) -> int:
        return self.base.d

    @property
    def normalizers(self) -> tuple[Normalizer, ...]:
        return self.base.normalizers

    @property
    def is_plain(self) -> bool:
        """Every layer of the paper's kind: the paper's theorems apply."""
        return all(k.is_plain for k in self.layers)

    def head_names(self, i: int) -> list[str]:
        """Suffixes of layer ``i``'s heads: ``[""]`` for one head, else ``["h1", ...]``."""
        H = self.layers[i - 1].heads
        return [""] if H == 1 else [f"h{h}" for h in range(1, H + 1)]

    def native_shapes(self) -> list[tuple[str, tuple[int, int]]]:
        """Native blocks in flat order: per layer, per head ``Q, K`` then ``V`` (and ``O``)."""
        out = []
        for i, kind in enumerate(self.layers, 1):
            d = self.base.widths[i - 1]
            dv = kind.head_width or d
            for suffix, r in zip(self.head_names(i), kind.ranks(self.base.ranks[i - 1])):
                out += [(f"Q{i}{suffix}", (d, r)), (f"K{i}{suffix}", (d, r))]
                if kind.combine == "concat":
                    out += [(f"V{i}{suffix}", (dv, d)), (f"O{i}{suffix}", (self.base.widths[i], dv))]
                elif kind.skip != "folded":
                    out.append((f"V{i}{suffix}", (self.base.widths[i], d)))
        return out

    @property
    def native_size(self) -> int:
        return sum(a * b for _, (a, b) in self.native_shapes())

    def offsets(self) -> dict[str, int]:
        out, k = {}, 0
        for name, (a, b) in self.native_shapes():
            out[name] = k
            k += a * b
        return out

    def describe(self) -> str:
        """One line per distinct layer kind, e.g. ``layers 1-3: skip value, mask causal, 2 heads``."""
        parts = []
        for i, kind in enumerate(self.layers, 1):
            bits = [f"skip {kind.skip}", f"mask {kind.mask if isinstance(kind.mask, str) else 'pattern'}",
                    f"{kind.heads} head{'s' if kind.heads > 1 else ''} "
                    f"r = {list(kind.ranks(self.base.ranks[i - 1]))}"]
            if kind.combine == "concat":
                bits.append(f"concat d_v = {kind.head_width or self.base.widths[i - 1]}")
            parts.append(f"layer {i}: " + ", ".join(bits))
        return "; ".join(parts)


# ------------------------------------------------------------------ the graph

def _masked_layer(b: Builder, x: str, a: str, normalizer, mask: np.ndarray, tag: str) -> str:
    """``S^mask_a(x)`` written with the row-normalised mask ``m' = m_ab / |N(a)|``:
    ``W = phi(Z)``, ``E = m' (W - 1)``, ``A = (m' + E) / (1 + rowsum E)``."""
    n = mask.shape[0]
    mn = np.empty(mask.shape, dtype=object)
    for (r, c), v in np.ndenumerate(mask):
        mn[r, c] = Fraction(int(v), int(mask[r].sum()))
    xt = b.op(f"{tag}.XT", "transpose", x)
    z = b.op(f"{tag}.Z", "matmul", b.op(f"{tag}.XTM", "matmul", xt, a), x)
    w = b.op(f"{tag}.W", "phi", z, normalizer=normalizer, layer=b.layer)
    m = b.op(f"{tag}.mask", "const", values=mn)
    e = b.op(f"{tag}.E", "mul", m, b.op(f"{tag}.W1", "sub", w, b.op(f"{tag}.ones", "const",
                                                                     values=np.ones((n, n), dtype=int))))
    den = b.op(f"{tag}.den", "add", b.op(f"{tag}.one", "const", values=np.ones((n, 1), dtype=int)),
               b.op(f"{tag}.rowsum", "sum", e, axis=-1))
    att = b.op(f"{tag}.A", "mul", b.op(f"{tag}.num", "add", m, e), b.op(f"{tag}.inv", "reciprocal", den))
    return b.op(f"{tag}.S", "matmul", x, b.op(f"{tag}.AT", "transpose", att))


def variant_network(arch: VariantArchitecture) -> nx.DiGraph:
    """The stack as a graph: inputs ``X`` and the native blocks of
    :meth:`VariantArchitecture.native_shapes`; outputs ``X1..XD`` and ``F``.

    A plain layer is built exactly as in :func:`symattn.model.network.native_network`.

    >>> from symattn.model.network import native_network
    >>> base = Architecture.uniform(2, 2, 1, 2, "exp")
    >>> g, h = variant_network(VariantArchitecture(base)), native_network(base)
    >>> sorted(g.nodes) == sorted(h.nodes) and all(g.nodes[v]["op"] == h.nodes[v]["op"] for v in g)
    True
    """
    b = Builder("variant" if not arch.is_plain else "native")

    def head(i: int, suffix: str, kind: LayerKind, x: str, phi, mask) -> str:
        tag = f"layer{i}{suffix}"
        q, k = b.input(f"Q{i}{suffix}"), b.input(f"K{i}{suffix}")
        v = None if kind.skip == "folded" else b.input(f"V{i}{suffix}")
        o = b.input(f"O{i}{suffix}") if kind.combine == "concat" else None
        a = b.op(f"A{i}{suffix}", "matmul", q, b.op(f"K{i}{suffix}T", "transpose", k))
        s = _attention(b, x, a, phi, mask, tag)
        if kind.is_plain:  # the paper's layer, named as in native_network
            return b.op(f"X{i}", "matmul", v, s)
        if v is not None:
            s = b.op(f"{tag}.VS", "matmul", v, s)
        if o is not None:
            s = b.op(f"{tag}.OVS", "matmul", o, s)
        return s

    b.g.graph["outputs"]["F"] = _stack(b, arch, b.input("X"), head)
    return b.g


def _stack(b: Builder, arch: VariantArchitecture, x: str, head) -> str:
    """Layer by layer: ``head(i, suffix, kind, x, phi, mask)`` adds one head's term;
    the terms are summed (:func:`_layer_output`). Returns the last layer's output."""
    for i, (phi, kind) in enumerate(zip(arch.normalizers, arch.layers), 1):
        b.layer = i
        mask = mask_matrix(kind.mask, arch.tokens)
        x = _layer_output(b, i, kind, x, [head(i, suffix, kind, x, phi, mask) for suffix in arch.head_names(i)])
    return x


def _attention(b: Builder, x: str, a: str, phi, mask: np.ndarray | None, tag: str) -> str:
    """``S_a(x)``, masked when ``mask`` is given."""
    return layer(b, x, a, phi, tag) if mask is None else _masked_layer(b, x, a, phi, mask, tag)


def _layer_output(b: Builder, i: int, kind: LayerKind, x: str, terms: list[str]) -> str:
    """Sum the heads' ``terms``, add the skip, record the output ``X{i}``."""
    y = terms[0]
    for h, term in enumerate(terms[1:], 2):
        y = b.op(f"layer{i}.heads{h}", "add", y, term)
    if kind.skip != "none":
        y = b.op(f"X{i}", "add", x, y)
    b.g.graph["outputs"][f"X{i}"] = y
    return y


def score_network(arch: VariantArchitecture) -> nx.DiGraph:
    """The *score model* of the stack: values ``V = I`` and a readout ``L``.

    Inputs ``X``, ``L`` and one score ``M{i}{suffix}`` per layer and head (used as
    ``A_h``); layer ``i`` maps ``X -> [X +] sum_h S^mask_{M_{i,h}}(X)`` and the
    output is ``F = L X_D``. For a stack without skips and with one head per
    layer this is the effective map ``L S^mask_{M_D} ... S^mask_{M_1}`` (the
    reduction ``pi`` holds because a mask acts on token indices only); a plain
    stack gives :func:`symattn.model.network.effective_network` node for node. For
    skips and several heads it is the sub-family of the native model with
    identity values (no theorem reduces the native model to it).

    >>> from symattn.model.network import effective_network
    >>> base = Architecture.uniform(2, 2, 1, 2, "exp")
    >>> g, h = score_network(VariantArchitecture(base)), effective_network(base)
    >>> sorted(g.nodes) == sorted(h.nodes) and all(g.nodes[v]["op"] == h.nodes[v]["op"] for v in g)
    True
    """
    if any(k.combine == "concat" for k in arch.layers):
        raise SymattnError("the score model sums heads through V = I; concatenated heads have no "
                           "score model (use combine = sum)")
    b = Builder("effective" if arch.is_plain else "score")
    x = b.input("X")
    L = b.input("L")

    def head(i: int, suffix: str, kind: LayerKind, x: str, phi, mask) -> str:
        return _attention(b, x, b.input(f"M{i}{suffix}"), phi, mask, f"layer{i}{suffix}")

    b.g.graph["outputs"]["F"] = b.op("F", "matmul", L, _stack(b, arch, x, head))
    return b.g


def score_names(arch: VariantArchitecture) -> list[str]:
    """Parameter blocks of :func:`score_network`: ``L`` then ``M{i}{suffix}``."""
    return ["L"] + [f"M{i}{s}" for i in range(1, arch.depth + 1) for s in arch.head_names(i)]


# ---------------------------------------------------------------- parameters

def random_variant_point(arch: VariantArchitecture, seed: int = 0, values: str = "random"
                         ) -> dict[str, np.ndarray]:
    """Seeded rational native weights by block name (``values="identity"``: every
    summed head's ``V = I``; concatenated heads keep random ``V_h, O_h``)."""
    rng = random.Random(seed)
    out = {}
    for name, shape in arch.native_shapes():
        if values == "identity" and name[0] == "V" and shape[0] == shape[1]:
            out[name] = identity_matrix(shape[0])
        else:
            out[name] = random_rational_matrix(rng, shape)
    return out


def _flat(arch: VariantArchitecture, blocks: dict[str, np.ndarray]) -> np.ndarray:
    """A flat native vector: the given blocks, zero elsewhere."""
    return np.concatenate([np.asarray(blocks[name], dtype=object).reshape(-1) if name in blocks
                           else np.full(a * b, Fraction(0), dtype=object)
                           for name, (a, b) in arch.native_shapes()])


def _units(n: int, m: int) -> Iterator[np.ndarray]:
    for a, c in itertools.product(range(n), range(m)):
        e = np.full((n, m), Fraction(0), dtype=object)
        e[a, c] = Fraction(1)
        yield e


def symmetry_directions(arch: VariantArchitecture, theta: dict[str, np.ndarray]
                        ) -> list[tuple[str, np.ndarray]]:
    """The declared infinitesimal symmetries at ``theta`` (flat native vectors, linear
    in ``theta``), each with its kind: ``factor gauge`` (per head),
    ``value gauge`` (concatenated heads), ``interface`` (between two layers
    without skips).

    >>> base = Architecture.uniform(2, 2, 1, 2, "exp")
    >>> v = VariantArchitecture(base, (LayerKind(heads=2),) * 2)
    >>> from collections import Counter
    >>> Counter(k for k, _ in symmetry_directions(v, random_variant_point(v)))
    Counter({'factor gauge': 4, 'interface': 4})
    """
    out = []
    for i, kind in enumerate(arch.layers, 1):
        for suffix, r in zip(arch.head_names(i), kind.ranks(arch.base.ranks[i - 1])):
            q, k = theta[f"Q{i}{suffix}"], theta[f"K{i}{suffix}"]
            for B in _units(r, r):
                out.append(("factor gauge", _flat(arch, {f"Q{i}{suffix}": q.dot(B),
                                                         f"K{i}{suffix}": -k.dot(B.T)})))
            if kind.combine == "concat":
                v, o = theta[f"V{i}{suffix}"], theta[f"O{i}{suffix}"]
                for C in _units(v.shape[0], v.shape[0]):
                    out.append(("value gauge", _flat(arch, {f"V{i}{suffix}": C.dot(v),
                                                            f"O{i}{suffix}": -o.dot(C)})))
    for j in range(1, arch.depth):
        if arch.layers[j - 1].skip != "none" or arch.layers[j].skip != "none":
            continue
        d = arch.base.widths[j]
        for H in _units(d, d):
            blocks = {}
            for suffix in arch.head_names(j):
                out_name = f"O{j}{suffix}" if arch.layers[j - 1].combine == "concat" else f"V{j}{suffix}"
                blocks[out_name] = H.dot(theta[out_name])
            for suffix in arch.head_names(j + 1):
                blocks[f"Q{j + 1}{suffix}"] = -H.T.dot(theta[f"Q{j + 1}{suffix}"])
                blocks[f"K{j + 1}{suffix}"] = -H.T.dot(theta[f"K{j + 1}{suffix}"])
                blocks[f"V{j + 1}{suffix}"] = -theta[f"V{j + 1}{suffix}"].dot(H)
            out.append(("interface", _flat(arch, blocks)))
    return out


def head_classes(arch: VariantArchitecture, i: int) -> list[list[int]]:
    """Heads of layer ``i`` (1-based numbers) grouped by equal block shapes (rank
    ``r_h``, value width): any permutation within a class is a symmetry.

    >>> base = Architecture.uniform(1, 3, 1, 2, "exp")
    >>> head_classes(VariantArchitecture(base, (LayerKind(heads=3, head_ranks=(1, 2, 1)),)), 1)
    [[1, 3], [2]]
    """
    shapes = dict(arch.native_shapes())
    classes: dict = {}
    for h, suffix in enumerate(arch.head_names(i), 1):
        key = tuple(shapes.get(f"{c}{i}{suffix}") for c in "QKVO")
        classes.setdefault(key, []).append(h)
    return list(classes.values())


def head_permutation_check(arch: VariantArchitecture, theta: dict[str, np.ndarray],
                           bank: np.ndarray, order: int = 6) -> list[dict]:
    """The head permutation group of every multi-head layer, verified on generators.

    The heads of a layer are summed, so any permutation of heads of equal shapes
    (:func:`head_classes`) is an exact symmetry of the function; the group is
    the product of the symmetric groups of the classes, of order
    ``prod |class|!``. The computed check: for every generator (the adjacent
    transpositions ``(h, h')`` within a class, which generate that group) the
    network with the two heads' blocks exchanged is compared with the original
    on ``bank`` as exact rational series along ``rho`` (inputs ``rho X``, every
    coefficient through ``rho^(order-1)``, at ``theta``). Returns per layer
    ``{"layer", "classes", "group_order", "generators", "verified"}``.

    >>> base = Architecture.uniform(1, 2, 1, 2, "exp")
    >>> v = VariantArchitecture(base, (LayerKind(heads=3, mask="causal"),))
    >>> from symattn.model.architecture import random_bank
    >>> head_permutation_check(v, random_variant_point(v), random_bank(base, 2))
    [{'layer': 1, 'classes': [[1, 2, 3]], 'group_order': 6, 'generators': 2, 'verified': True}]
    """
    from math import factorial, prod

    from symattn.core.algebras import exact_series
    from symattn.model.network import evaluate

    A = exact_series(order)
    graph = variant_network(arch)
    X = A.series([np.zeros(bank.shape, dtype=int), bank])

    def run(params):
        vals = {k: A.const(v) for k, v in params.items()}
        vals["X"] = X
        return evaluate(graph, A, vals)["F"]

    reference = None
    out = []
    for i, kind in enumerate(arch.layers, 1):
        if kind.heads < 2:
            continue
        names = arch.head_names(i)
        classes = head_classes(arch, i)
        verified, generators = True, 0
        for cls in classes:
            for a, b in zip(cls, cls[1:]):
                swapped = dict(theta)
                for c in "QKVO":
                    if f"{c}{i}{names[a - 1]}" in theta:
                        swapped[f"{c}{i}{names[a - 1]}"] = theta[f"{c}{i}{names[b - 1]}"]
                        swapped[f"{c}{i}{names[b - 1]}"] = theta[f"{c}{i}{names[a - 1]}"]
                reference = run(theta) if reference is None else reference
                verified &= bool(A.field.is_zero(A.sub(reference, run(swapped))).all())
                generators += 1
        out.append({"layer": i, "classes": classes, "group_order": prod(factorial(len(c)) for c in classes),
                    "generators": generators, "verified": verified})
    return out


# ------------------------------------------------------------------ the specs

_LAYER_KEYS = {"rank", "normalizer", "skip", "mask", "heads", "head_ranks", "combine", "head_width", "repeat"}
_TOP_KEYS = {"width", "tokens", "layer"}


def _want(value: Any, kind: type, where: str) -> Any:
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise SymattnError(f"{where} must be an integer, got {value!r}")
    if kind is str and not isinstance(value, str):
        raise SymattnError(f"{where} must be a string, got {value!r}")
    return value


#: Deepest nesting of arrays and tables in a ``--spec`` file (a [[layer]] mask pattern is 4).
_MAX_NESTING = 6


def load_spec(text: str) -> VariantArchitecture:
    """A :class:`VariantArchitecture` from TOML text (parsed by :mod:`tomllib`, validated).

    Top level: ``width``, ``tokens``; then one ``[[layer]]`` table per layer (or
    per ``repeat`` layers) with ``rank`` (default 1), ``normalizer`` (default
    ``"exp"``), ``skip`` (``none|value|folded``), ``mask`` (``none``,
    ``causal``, ``window:W`` or a list of 0/1 rows), ``heads``, ``head_ranks``,
    ``combine`` (``sum|concat``), ``head_width``, ``repeat``.

    >>> v = load_spec('width = 2\\ntokens = 3\\n[[layer]]\\nskip = "value"\\nmask = "causal"\\nrepeat = 2')
    >>> v.depth, v.layers[1].skip, v.layers[1].mask
    (2, 'value', 'causal')
    >>> load_spec('width = 2\\ntokens = 3\\n[[layer]]\\nheads = "two"')
    Traceback (most recent call last):
    ...
    symattn.core.errors.SymattnError: spec layer 1: heads must be an integer, got 'two'
    """
    from symattn.core.validate import nesting_depth

    if not isinstance(text, str):
        raise SymattnError(f"a spec is TOML text, got {type(text).__name__}")
    try:
        spec = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SymattnError(f"spec is not valid TOML: {exc}") from None
    except RecursionError:
        raise SymattnError(f"spec nests arrays or tables too deeply (at most {_MAX_NESTING})") from None
    if nesting_depth(spec, _MAX_NESTING) > _MAX_NESTING:
        raise SymattnError(f"spec nests arrays or tables more than {_MAX_NESTING} deep (a [[layer]] "
                           "mask is 4)")
    unknown = set(spec) - _TOP_KEYS
    if unknown:
        raise SymattnError(f"unknown spec keys {sorted(unknown)}; allowed: {sorted(_TOP_KEYS)}")
    for key in ("width", "tokens", "layer"):
        if key not in spec:
            raise SymattnError(f"spec needs '{key}'" + (" (one [[layer]] table per layer)" if key == "layer" else ""))
    width = _want(spec["width"], int, "spec width")
    tokens = _want(spec["tokens"], int, "spec tokens")
    if not 1 <= width <= 64 or not 2 <= tokens <= min(64, MAX_TOKENS):
        raise SymattnError("spec width must be in [1, 64] and tokens in [2, 64]")
    if not isinstance(spec["layer"], list) or not spec["layer"]:
        raise SymattnError("spec 'layer' must be one or more [[layer]] tables")
    ranks, phis, kinds = [], [], []
    for i, table in enumerate(spec["layer"], 1):
        where = f"spec layer {i}"
        if not isinstance(table, dict):
            raise SymattnError(f"{where} must be a [[layer]] table")
        unknown = set(table) - _LAYER_KEYS
        if unknown:
            raise SymattnError(f"{where}: unknown keys {sorted(unknown)}; allowed: {sorted(_LAYER_KEYS)}")
        repeat = _want(table.get("repeat", 1), int, f"{where}: repeat")
        if not 1 <= repeat <= 16:
            raise SymattnError(f"{where}: repeat must be in [1, 16]")
        heads = _want(table.get("heads", 1), int, f"{where}: heads")
        head_ranks = table.get("head_ranks")
        if head_ranks is not None:
            if not isinstance(head_ranks, list):
                raise SymattnError(f"{where}: head_ranks must be a list of integers")
            head_ranks = tuple(_want(r, int, f"{where}: head_ranks entries") for r in head_ranks)
        mask = table.get("mask", "none")
        if isinstance(mask, list):
            if not all(isinstance(row, list) and all(v in (0, 1) and not isinstance(v, bool) for v in row)
                       for row in mask):
                raise SymattnError(f"{where}: a mask pattern is a list of rows of 0 and 1")
            if len({len(row) for row in mask}) > 1:
                raise SymattnError(f"{where}: the rows of a mask pattern must have equal lengths "
                                   f"(got {sorted({len(row) for row in mask})})")
            mask = tuple(tuple(row) for row in mask)
        else:
            mask = parse_mask(_want(mask, str, f"{where}: mask"))
        head_width = table.get("head_width")
        try:
            kind = LayerKind(skip=_want(table.get("skip", "none"), str, f"{where}: skip"), mask=mask,
                             heads=heads, head_ranks=head_ranks,
                             combine=_want(table.get("combine", "sum"), str, f"{where}: combine"),
                             head_width=None if head_width is None else _want(head_width, int,
                                                                               f"{where}: head_width"))
        except SymattnError as exc:
            raise SymattnError(f"{where}: {exc}") from None
        rank = _want(table.get("rank", head_ranks[0] if head_ranks else 1), int, f"{where}: rank")
        phi = Normalizer(_want(table.get("normalizer", "exp"), str, f"{where}: normalizer"))
        ranks += [rank] * repeat
        phis += [phi] * repeat
        kinds += [kind] * repeat
    if len(kinds) > 16:
        raise SymattnError(f"spec has {len(kinds)} layers; at most 16")
    base = Architecture((width,) * (len(kinds) + 1), tuple(ranks), tokens, tuple(phis))
    return VariantArchitecture(base, tuple(kinds))


def with_layers(base: Architecture, kind: LayerKind) -> VariantArchitecture:
    """Every layer of ``base`` of the one kind ``kind``."""
    return VariantArchitecture(base, (kind,) * base.depth)

