"""Graph nodes of the transformer-layer sublayers: the MLP (norms, biases, skips and ``W_O`` are parts:
:mod:`symattn.model.parts`).

Used by :func:`symattn.model.network.add_layer` for a layer with block parts
(:attr:`~symattn.model.layers.Layer.has_block_parts`); each function adds a few nodes to a
:class:`~symattn.model.network.Builder` and returns its output node. Tokens are the
columns (features on axis ``-2``), as everywhere in the graph:

* :func:`mlp`: ``mlp.out f(mlp.in y + mlp.in_bias) + mlp.out_bias`` with the layer's activation ``f``.

The reference these formulas are checked against is PyTorch's own modules
(``tests/test_blocks.py``: ``nn.MultiheadAttention``, ``nn.LayerNorm``, ``nn.Linear``).
"""

from __future__ import annotations

from symattn.model.parts.activation import Activation

__all__ = ["mlp"]


def mlp(b, y: str, blocks: dict, activation: Activation, tag: str) -> str:
    """``out f(in y + in_bias) + out_bias`` (``blocks`` maps ``mlp.in``, ``mlp.in_bias``, ``mlp.out``,
    ``mlp.out_bias`` to graph inputs).

    Parameters
    ----------
    b : Builder
        The graph builder.
    y : str
        The input node.
    blocks : dict
        The MLP's graph inputs by part name.
    activation : Activation
        The activation part (:mod:`symattn.model.parts.activation`).
    tag : str
        The prefix of the new nodes.

    Returns
    -------
    str
        The output node.
    """
    h = b.op(f"{tag}.h", "add", b.op(f"{tag}.Fay", "matmul", blocks["mlp.in"], y), blocks["mlp.in_bias"])
    a = activation.build(b, h, f"{tag}.act")
    return b.op(f"{tag}.out", "add", b.op(f"{tag}.Fba", "matmul", blocks["mlp.out"], a), blocks["mlp.out_bias"])
