"""What every normalization part (LayerNorm, RMSNorm, ...) owns, and what the analyses may ask it.

A norm part is one object in one module (:mod:`symattn.model.parts.layernorm`,
:mod:`symattn.model.parts.rmsnorm`): its graph builder (:meth:`Norm.build`, the same nodes in every
algebra), its naive reference formula (:meth:`Norm.reference`, scalar ring operations only: a
second code path that shares nothing with the graph), its parameters (a gain ``gain`` and, where it has
one, a shift ``shift``; the layer names them ``attn_norm.gain1``, ``attn_norm.shift1``, ...), the facts its declared symmetries rest
on (:meth:`Norm.normals`, :meth:`Norm.interface_directions`) with the properties that gate them,
its PyTorch reading (:attr:`Norm.torch_type`, :meth:`Norm.torch_module`) and its spelling in specs
and on the command line (:attr:`Norm.spelling`). Analyses and symmetry declarations ask the
properties (``removes_mean``, ``has_shift``, ...), never the spelling.
"""

from __future__ import annotations

import functools
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
from symattn.model.parts.kind import PartKind

__all__ = ["Norm", "rsqrt"]


@functools.cache
def rsqrt():
    """``x -> 1/sqrt(x)`` (an :class:`~symattn.core.algebras.functions.Elementwise`), the one non-polynomial
    function of a norm (held as a constant by the exact routes: one per token and norm); made on first
    use, so reading the parts' spellings imports no algebra."""
    from symattn.core.algebras.functions import Elementwise

    return Elementwise("rsqrt")


class Norm(PartKind):
    """A normalization over the features of each token (tokens are columns).

    Subclasses set the class attributes and implement :meth:`build` and :meth:`reference`.

    Attributes
    ----------
    spelling : str
        The name in specs and on the command line (``--norm-kind``).
    title : str
        The name in sentences and tables.
    removes_mean : bool
        Every output ``y = g * xhat (+ s)`` has ``1^T xhat = 0``: the outputs lie on a hyperplane
        (a line at width 2), and an input change along ``1`` is invisible.
    has_shift : bool
        The part adds a learned shift ``s`` (a parameter block).
    torch_type : str
        The ``torch.nn`` module class that computes it.
    """

    spelling: ClassVar[str]
    title: ClassVar[str]
    removes_mean: ClassVar[bool]
    has_shift: ClassVar[bool]
    torch_type: ClassVar[str]
    #: ``N(R y) = diag(g) R diag(g)^-1 N(y)`` for every rotation ``R`` of the features (RMSNorm)
    rotation_equivariant: ClassVar[bool] = False
    #: a polynomial map of its input (never: 1/sqrt)
    is_polynomial: ClassVar[bool] = False
    #: entire in its input (never: 1/sqrt has a branch point)
    is_entire: ClassVar[bool] = False
    #: constants one token adds to the exact routes (the value of 1/sqrt)
    constants_per_token: ClassVar[int] = 1

    @property
    def parameters(self) -> tuple[str, ...]:
        """The parameter blocks' names: ``("gain", "shift")`` or ``("gain",)`` (the layer prefixes the
        site, ``attn_norm.`` or ``mlp_norm.``, and appends its index)."""
        return ("gain", "shift") if self.has_shift else ("gain",)

    def homogeneous_degree(self, eps: Fraction) -> int | None:
        """``k`` with ``N(c y) = c^k N(y)`` for ``c > 0``: 0 for ``eps = 0`` (scale invariant), else None."""
        return 0 if eps == 0 else None

    def build(self, b: Any, y: str, params: dict[str, str], eps: Fraction, width: int, tag: str) -> str:
        """Add the norm of the node ``y`` (features on axis ``-2``) to the graph builder ``b``; ``params``
        maps ``"gain"`` (and ``"shift"``) to graph inputs. Returns the output node."""
        raise NotImplementedError

    def reference(self, R: Any, Y: list, params: dict[str, list], eps: Fraction) -> list:
        """The naive formula on the matrix ``Y`` (a list of rows of ring elements; tokens are
        columns) with the ring ``R`` (``number``, ``zero``, ``add``, ``sub``, ``mul``, ``fn``);
        ``params`` maps ``"gain"`` (and ``"shift"``) to ``d x 1`` matrices of ring elements."""
        raise NotImplementedError

    def normals(self, gain: list[Fraction], shift: list[Fraction] | None) -> list[tuple[np.ndarray, Fraction]]:
        """Exact ``(w, c)`` with ``w^T y = c`` for every output ``y`` (empty where there is none)."""
        return []

    def interface_directions(self, width: int, kind: str = "gl") -> list[np.ndarray]:
        """The ``H`` of the interfaces ``G = I + H`` that map every output of the part to the output
        of the same part with other parameters (``"gl"``), or that move every output by a multiple of
        ``1`` (``"mean"``, which a following mean-removing norm cancels). Diagonal ``H`` scale the
        gain (and shift); see the subclasses for more."""
        if kind == "mean":
            return []
        return [_unit(width, k, k) for k in range(width)]

    def torch_module(self, width: int, eps: Fraction, gain, shift=None):
        """The ``torch.nn`` module that computes this part with these parameters (float64)."""
        raise NotImplementedError

    def describe(self, placement: str, eps: Fraction) -> str:
        """``post-norm LayerNorm eps = 1/100000``."""
        return f"{placement}-norm {self.title} eps = {eps}"


def _unit(width: int, k: int, l: int) -> np.ndarray:
    """The unit matrix ``E_kl`` of size ``width`` (exact)."""
    E = np.full((width, width), Fraction(0), dtype=object)
    E[k, l] = Fraction(1)
    return E
