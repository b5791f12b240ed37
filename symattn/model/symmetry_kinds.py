"""The symmetry record, and the symmetries the transformer-block parts declare.

:class:`Symmetry` is one declared infinitesimal symmetry (used by
:mod:`symattn.model.symmetries`, which declares the attention stack's own and verifies
them all); :func:`block_symmetries` adds those of biases, LayerNorms and MLP sublayers
(:mod:`symattn.model.layers`), empty for every stack without them.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction
from typing import Iterator, Mapping

import numpy as np

from symattn.model.architecture import Architecture, Block
from symattn.model.parameters import flat_vector, point_of

__all__ = ["Symmetry", "block_symmetries"]


@dataclass(frozen=True)
class Symmetry:
    """One declared infinitesimal symmetry: its kind (:data:`KINDS`), the layer (for an
    interface: the layer whose output it acts on), the head (None: not per head) and
    the flat native direction at the point (exact)."""

    kind: str
    layer: int
    head: int | None
    vector: np.ndarray
    #: the direction does not depend on the point (a shift, not a linear vector field)
    constant: bool = False


def _units(n: int, m: int) -> Iterator[tuple[int, int, np.ndarray]]:
    """``(a, b, E_ab)`` for the unit matrices of shape ``n x m``, ``a`` outer."""
    for a, b in itertools.product(range(n), range(m)):
        e = np.full((n, m), Fraction(0), dtype=object)
        e[a, b] = Fraction(1)
        yield a, b, e


def _bias(blocks: Mapping[str, Block], role: str) -> Block | None:
    return blocks.get("b" + role)


def _ones_times(shape: tuple[int, int], k: int) -> np.ndarray:
    """The matrix ``1 e_k^T`` of ``shape`` (column ``k`` all ones)."""
    e = np.full(shape, Fraction(0), dtype=object)
    e[:, k] = Fraction(1)
    return e


def _transfers(arch: Architecture, theta, i: int, layer, parts) -> list[Symmetry]:
    """The bias transfers and the MLP interface of layer ``i`` (see :func:`block_symmetries`)."""
    out = []
    heads = layer.head_blocks(i)
    if layer.bias and "bO" in parts:
        for blocks in heads:
            bv, o = blocks["bV"], blocks["O"]
            for _, _, E in _units(*arch.shape(bv)):
                vec = flat_vector(arch, {bv.name: E, parts["bO"].name: -theta[o.name].dot(E)})
                out.append(Symmetry("bias transfer", i, bv.head, vec, True))
    elif layer.bias and len(heads) > 1 and all("bV" in b for b in heads):
        first = heads[0]["bV"]
        for blocks in heads[1:]:
            for _, _, E in _units(*arch.shape(first)):
                vec = flat_vector(arch, {first.name: E, blocks["bV"].name: -E})
                out.append(Symmetry("bias transfer", i, blocks["bV"].head, vec, True))
    if layer.mlp and layer.skip == "none" and layer.norm == "none" and all("V" in b for b in heads):
        d = layer.width_out
        for _, _, H in _units(d, d):
            move = {parts["Fa"].name: -theta[parts["Fa"].name].dot(H)}
            for blocks in heads:
                writer = blocks["O" if "O" in blocks else "V"]
                move[writer.name] = H.dot(theta[writer.name])
                if "O" not in blocks and "bV" in blocks:
                    move[blocks["bV"].name] = H.dot(theta[blocks["bV"].name])
            if "bO" in parts:
                move[parts["bO"].name] = H.dot(theta[parts["bO"].name])
            out.append(Symmetry("MLP interface", i, None, flat_vector(arch, move)))
    return out


def _diagonal(theta, g: str, s: str, k: int, readers: dict[str, str]) -> dict[str, np.ndarray]:
    """``diag(1 + e_k)`` on the gain ``g`` and shift ``s``, its inverse on each reader (``"row"``:
    a factor read as ``Q^T x``, ``"col"``: a map read as ``V x``)."""
    move = {n: np.full(theta[n].shape, Fraction(0), dtype=object) for n in (g, s, *readers)}
    move[g][k], move[s][k] = theta[g][k], theta[s][k]
    for name, how in readers.items():
        if how == "row":
            move[name][k, :] = -theta[name][k, :]
        else:
            move[name][:, k] = -theta[name][:, k]
    return move


def _pre_norm_interface(arch: Architecture, theta, i: int, layer, parts) -> list[Symmetry]:
    """The diagonal interfaces inside the pre-norm layer ``i`` (see :func:`block_symmetries`)."""
    readers: dict[str, str] = {}
    for head in layer.head_blocks(i):
        readers.update({head["Q"].name: "row", head["K"].name: "row"})
        if "V" in head:
            readers[head["V"].name] = "col"
    out = [Symmetry("LayerNorm interface", i, None,
                    flat_vector(arch, _diagonal(theta, parts["gA"].name, parts["sA"].name, k, readers)))
           for k in range(layer.width_in)]
    if layer.mlp:
        out += [Symmetry("LayerNorm interface", i, None,
                         flat_vector(arch, _diagonal(theta, parts["gF"].name, parts["sF"].name, k,
                                                     {parts["Fa"].name: "col"})))
                for k in range(layer.width_out)]
    return out


def _norm_interface(arch: Architecture, theta, i: int, parts) -> list[Symmetry]:
    """The diagonal interface after the post-norm layer ``i`` (see :func:`block_symmetries`)."""
    which = "F" if arch.layers[i - 1].mlp else "A"
    readers: dict[str, str] = {}
    for head in arch.layers[i].head_blocks(i + 1):
        readers.update({head["Q"].name: "row", head["K"].name: "row"})
        if "V" in head:
            readers[head["V"].name] = "col"
    return [Symmetry("LayerNorm interface", i, None,
                     flat_vector(arch, _diagonal(theta, parts[f"g{which}"].name, parts[f"s{which}"].name, k,
                                                 readers)))
            for k in range(arch.widths[i])]


def block_symmetries(arch: Architecture, theta) -> list[Symmetry]:
    """The symmetries the transformer-block parts bring (empty for every stack without them):

    * **LayerNorm shift** (constant directions): a post-norm LayerNorm removes the mean over
      the features, so a parameter change that adds a multiple of ``1`` to every token of
      its input is invisible: the rows of the map that writes the input (``V_h`` of summed
      heads, ``O_h`` of concatenated ones, ``Fb`` of the MLP) moved by ``1 w^T``, and the bias
      just before it (``bV_h`` or ``bO``, ``fb``) moved by ``1``;
    * **softmax key bias** (constant): with ``phi = exp`` the key bias adds ``(q_a + bQ) . delta``
      to every score of query ``a``, which the row normalisation cancels;
    * **MLP scaling**: with a monomial activation ``c x^k``, hidden unit ``j``'s row of ``Fa`` and
      entry of ``fa`` times ``l`` and column of ``Fb`` times ``l^-k``;
    * **bias transfer**: only the sum of the constant terms of a layer's heads is seen:
      ``bV_h + delta``, ``bO - O_h delta`` (concatenated heads), ``bV_1 + delta``, ``bV_h - delta``
      (summed heads);
    * **MLP interface**: when the attention sublayer feeds only the MLP (no residual, no
      LayerNorm), ``G = I + H`` acts as ``O_h`` (or ``V_h``) and its bias ``-> G .``, ``Fa -> Fa G^-1``;
    * **LayerNorm interface**: when a post-norm layer ``j`` feeds layer ``j + 1`` through its heads
      only (no residual, no pre-norm), a diagonal ``G = diag(l)`` scales the last LayerNorm's gain
      and shift and acts as ``G^-1`` on the next layer's ``Q, K`` (rows) and ``V`` (columns); the
      same inside a pre-norm layer, whose LayerNorms feed only its heads (``gA, sA``) and its
      MLP (``gF, sF`` against the columns of ``Fa``).

    Each is verified as an exact kernel vector where it is used, like every declared one.
    """
    theta = point_of(theta)
    out = []
    for i, layer in enumerate(arch.layers, 1):
        parts = layer.layer_blocks(i)
        if layer.norm == "post":
            for blocks in layer.head_blocks(i):
                writer = blocks["O" if "O" in blocks else "V"] if ("O" in blocks or "V" in blocks) else None
                if writer is not None:
                    shape = arch.shape(writer)
                    for k in range(shape[1]):
                        out.append(Symmetry("LayerNorm shift", i, writer.head,
                                            flat_vector(arch, {writer.name: _ones_times(shape, k)}), True))
                bias = _bias(blocks, "V") if "O" not in blocks else None
                if bias is not None:
                    out.append(Symmetry("LayerNorm shift", i, bias.head,
                                        flat_vector(arch, {bias.name: _ones_times(arch.shape(bias), 0)}), True))
            for name in ("bO",) + (("Fb", "fb") if layer.mlp else ()):
                if name in parts:
                    shape = arch.shape(parts[name])
                    for k in range(shape[1]):
                        out.append(Symmetry("LayerNorm shift", i, None,
                                            flat_vector(arch, {parts[name].name: _ones_times(shape, k)}), True))
        if layer.bias and layer.normalizer.name == "exp":
            for blocks in layer.head_blocks(i):
                bk = blocks["bK"]
                for _, _, E in _units(*arch.shape(bk)):
                    out.append(Symmetry("softmax key bias", i, bk.head, flat_vector(arch, {bk.name: E}), True))
        out += _transfers(arch, theta, i, layer, parts)
        if layer.norm == "post" and i < arch.depth and arch.layers[i].skip == "none" and arch.layers[i].norm != "pre":
            out += _norm_interface(arch, theta, i, parts)
        if layer.norm == "pre":
            out += _pre_norm_interface(arch, theta, i, layer, parts)
        degree = layer.activation.monomial_degree if layer.mlp else None
        if degree is not None:
            Fa, fa, Fb = (parts[p].name for p in ("Fa", "fa", "Fb"))
            for j in range(layer.mlp):
                move = {n: np.full(theta[n].shape, Fraction(0), dtype=object) for n in (Fa, fa, Fb)}
                move[Fa][j, :], move[fa][j, :] = theta[Fa][j, :], theta[fa][j, :]
                move[Fb][:, j] = -degree * theta[Fb][:, j]
                out.append(Symmetry("MLP scaling", i, None, flat_vector(arch, move)))
    return out
