"""The final norm: one norm part after the last layer (a model-level part).

GPT-2's ``ln_f``, ViT's ``layernorm`` and Llama's ``norm`` normalise the residual stream once more
after the last block: ``F(X) = N(X_D)`` with ``N`` a norm part (:mod:`symattn.model.parts`:
LayerNorm or RMSNorm) of its own gain (and shift), token by token. A
:class:`~symattn.model.architecture.Architecture` holds it as ``final_norm`` (default None, so
every stack without it is unchanged); its blocks are ``final_norm.gainD`` (and
``final_norm.shiftD``), of layer ``D`` (the tangents seeded there are zero below it), role ``"N"``.

What it owns (:class:`FinalNorm`): its blocks' parts and shapes (:meth:`FinalNorm.blocks`), its
graph nodes (:meth:`FinalNorm.build`, the norm part's), its naive reference
(:meth:`FinalNorm.reference`, the norm part's formula written out again, token by token), its
PyTorch module and its declared symmetries (:func:`final_norm_shifts`):

* **LayerNorm shift** through the final norm: when every layer is pre-norm with a residual and
  every norm (the layers' and the final one) removes the mean, every reader of the residual stream
  is a mean-removing norm, so a parameter change that adds a multiple of ``1`` to every token of
  the stream is invisible: the rows of each map that writes the stream (``O_h``, ``V_h`` of summed
  heads, ``mlp.out``) moved by ``1 w^T``, and its bias (``bO``, ``bV_h``, ``mlp.out_bias``) by ``1``.

A final norm never breaks a symmetry of the stack below it (``N(F)`` is unchanged wherever ``F``
is).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from symattn.core.errors import SymattnError

__all__ = ["FinalNorm", "final_norm_shifts", "SITE"]

#: The site of the final norm's blocks (``final_norm.gain``, ``final_norm.shift``).
SITE = "final_norm"


@dataclass(frozen=True)
class FinalNorm:
    """A norm part of kind ``kind`` (its spelling) and exact ``eps`` after the last layer.

    >>> f = FinalNorm("layernorm", Fraction(1, 100000))
    >>> f.parameters, f.describe()
    (('final_norm.gain', 'final_norm.shift'), 'final LayerNorm eps = 1/100000')
    >>> FinalNorm("rmsnorm", Fraction(1, 10 ** 6)).parameters
    ('final_norm.gain',)
    >>> FinalNorm("batchnorm")
    Traceback (most recent call last):
    ...
    symattn.core.errors.SymattnError: norm kind must be one of layernorm, rmsnorm, got 'batchnorm'
    """

    kind: str = "layernorm"
    eps: Fraction = Fraction(1, 100000)

    def __post_init__(self) -> None:
        self.part  # a known norm part, else one line
        if not isinstance(self.eps, Fraction) or not 0 <= self.eps <= 1:
            raise SymattnError(f"the final norm's eps must be an exact rational in [0, 1], got {self.eps!r}")

    @property
    def part(self):
        """The norm part (:func:`symattn.model.parts.norm_part`)."""
        from symattn.model.parts import norm_part

        return norm_part(self.kind)

    @property
    def parameters(self) -> tuple[str, ...]:
        """The parts of its blocks: ``final_norm.gain`` (and ``final_norm.shift``)."""
        return tuple(f"{SITE}.{p}" for p in self.part.parameters)

    def shapes(self, width: int) -> list[tuple[str, tuple[int, int]]]:
        """``(part, shape)`` of its blocks on tokens of width ``width`` (``width x 1`` each)."""
        return [(p, (width, 1)) for p in self.parameters]

    def build(self, b, y: str, params: dict[str, str], width: int, tag: str) -> str:
        """Add the norm of the node ``y`` to the graph builder ``b`` (``params`` maps each of
        :attr:`parameters` to a graph input); returns the output node."""
        local = {p.split(".", 1)[1]: params[p] for p in self.parameters}
        return self.part.build(b, y, local, self.eps, width, tag)

    def reference(self, R, Y: list, params: dict[str, list]) -> list:
        """The naive formula of the norm part on ``Y`` (rows of ring elements, tokens as columns)."""
        local = {p.split(".", 1)[1]: params[p] for p in self.parameters}
        return self.part.reference(R, Y, local, self.eps)

    def torch_module(self, width: int, gain, shift=None):
        """The ``torch.nn`` module of this norm with these parameters (float64)."""
        return self.part.torch_module(width, self.eps, gain, shift)

    def describe(self) -> str:
        """``final LayerNorm eps = 1/100000``."""
        return f"final {self.part.title} eps = {self.eps}"


def final_norm_shifts(arch) -> list[tuple[int, int | None, dict[str, np.ndarray]]]:
    """The **LayerNorm shift** directions through the final norm (module docstring), as
    ``(layer, head, move)`` with ``move`` the exact direction by block name (constant: it does not
    depend on the point); empty unless the architecture has a mean-removing final norm and every
    layer is pre-norm, with a value skip and a mean-removing norm part.

    Parameters
    ----------
    arch : Architecture

    Returns
    -------
    list of tuple
        ``(layer, head, move)`` per direction (:func:`symattn.model.symmetry_kinds.block_symmetries`
        makes them :class:`~symattn.model.symmetry_kinds.Symmetry` vectors).

    Examples
    --------
    >>> from symattn.model.architecture import Architecture
    >>> arch = Architecture.uniform(1, 2, 1, 2, "exp", skip="value", norm="pre", bias=True, combine="concat")
    >>> final_norm_shifts(arch), len(final_norm_shifts(arch.with_final_norm(FinalNorm())))
    ([], 3)
    """
    final = getattr(arch, "final_norm", None)
    if final is None or not final.part.removes_mean or any(
            not layer.pre_norm or layer.skip != "value" or not layer.norm_part.removes_mean for layer in arch.layers):
        return []
    out = []
    for i, layer in enumerate(arch.layers, 1):
        writers = []
        for blocks in layer.head_blocks(i):
            role = "O" if "O" in blocks else "V"
            writers += [(blocks[role], blocks[role].head), (blocks.get("bV") if role == "V" else None, blocks[role].head)]
        parts = layer.layer_blocks(i)
        writers.append((parts.get("bO"), None))
        if layer.mlp:
            writers += [(parts["mlp.out"], None), (parts["mlp.out_bias"], None)]
        for blk, head in writers:
            if blk is None:
                continue
            rows, cols = arch.shape(blk)
            for k in range(cols):
                move = np.full((rows, cols), Fraction(0), dtype=object)
                move[:, k] = Fraction(1)
                out.append((i, head, {blk.name: move}))
    return out
