"""How a layer combines its heads: summed, or concatenated and mixed by the output projection ``W_O``.

Two parts, spelled as in specs and on the command line (``combine``, ``--combine``): ``sum``
(``sum_h V_h S_h(X)``, each ``V_h`` of shape ``d_out x d_in``) and ``concat`` (``W_O [V_1 S_1; ...]``
``= sum_h O_h V_h S_h(X)`` with ``W_O = [O_1 ... O_H]``, ``V_h`` of shape ``d_v x d_in``). Each owns
the shapes of its value and output blocks (:meth:`Combine.value_shape`), its graph node
(:meth:`Combine.build`), its naive formula (:meth:`Combine.reference`), its declared symmetry (the
value gauge ``(C V_h, O_h C^-1)``, :meth:`Combine.value_gauge_dimension`) and its PyTorch reading
(:attr:`Combine.torch_attribute`: ``nn.MultiheadAttention.out_proj``). Analyses ask
:attr:`Combine.has_output_projection`, never the spelling.
"""

from __future__ import annotations

from typing import Any, ClassVar

from symattn.core.errors import SymattnError
from symattn.model.parts.ring import product
from symattn.model.parts.kind import PartKind

__all__ = ["Combine", "SumHeads", "ConcatHeads", "COMBINE_KINDS", "combine_part"]


class Combine(PartKind):
    """How a layer combines its heads (see the module docstring).

    Attributes
    ----------
    spelling : str
        The name in specs (``combine``) and on the command line (``--combine``).
    has_output_projection : bool
        Each head's value output is mixed by its block ``O_h`` of ``W_O`` (a block ``O``; with biases,
        one output bias ``bO`` per layer).
    torch_attribute : str or None
        The attribute of ``nn.MultiheadAttention`` that holds ``W_O`` (None: no such map).
    """

    spelling: ClassVar[str]
    has_output_projection: ClassVar[bool]
    torch_attribute: ClassVar[str | None] = None

    def value_shape(self, width_in: int, width_out: int, value_width: int) -> tuple[int, int]:
        """The shape of a head's value map ``V_h``.

        Parameters
        ----------
        width_in, width_out : int
            The layer's input and output widths.
        value_width : int
            The head's ``d_v`` (read by concatenated heads only).

        Returns
        -------
        tuple of int
            ``(d_v, width_in)`` with an output projection, else ``(width_out, width_in)``.
        """
        return (value_width if self.has_output_projection else width_out, width_in)

    def value_gauge_dimension(self, value_width: int) -> int:
        """The value gauges one head declares: ``d_v^2`` (``(C V_h, O_h C^-1)``, ``C`` in ``gl(d_v)``) with
        an output projection, else 0.

        Parameters
        ----------
        value_width : int
            The head's ``d_v``.

        Returns
        -------
        int
        """
        return value_width ** 2 if self.has_output_projection else 0

    def build(self, b: Any, o: str | None, y: str, name: str) -> str:
        """The head's output node: ``O_h y`` (node ``name``) with an output projection, else ``y``.

        Parameters
        ----------
        b : Builder
            The graph builder (:class:`~symattn.model.network.Builder`).
        o : str or None
            The head's ``O`` input node (None: no projection).
        y : str
            The head's value output ``V_h S_h(X)``.
        name : str
            The name of the product node.

        Returns
        -------
        str
        """
        return b.op(name, "matmul", o, y) if self.has_output_projection else y

    def reference(self, R: Any, O: Any, Y: list) -> list:
        """The naive formula: ``O Y`` (lists of rows over the ring ``R``) or ``Y``.

        Parameters
        ----------
        R : ring
            The scalar ring of :mod:`symattn.model.reference`.
        O : list of list or None
            The head's output block (None: no projection).
        Y : list of list
            The head's value output.

        Returns
        -------
        list of list
        """
        return product(R, O, Y) if self.has_output_projection else Y


class SumHeads(Combine):
    """Summed heads: ``sum_h V_h S_h(X)`` (the paper's heads; no ``W_O``).

    >>> SumHeads().has_output_projection, SumHeads().value_shape(2, 3, 1)
    (False, (3, 2))
    """

    spelling = "sum"
    has_output_projection = False


class ConcatHeads(Combine):
    """Concatenated heads mixed by ``W_O``: ``sum_h O_h V_h S_h(X)`` (PyTorch's ``nn.MultiheadAttention``).

    >>> ConcatHeads().has_output_projection, ConcatHeads().value_shape(2, 3, 1), ConcatHeads().value_gauge_dimension(2)
    (True, (1, 2), 4)
    """

    spelling = "concat"
    has_output_projection = True
    torch_attribute = "out_proj"


#: The head combinations by spelling.
COMBINE_KINDS: dict[str, Combine] = {part.spelling: part for part in (SumHeads(), ConcatHeads())}


def combine_part(spelling: str) -> Combine:
    """The head combination spelled ``spelling``.

    Parameters
    ----------
    spelling : str
        ``"sum"`` or ``"concat"``.

    Returns
    -------
    Combine

    Raises
    ------
    SymattnError
        An unknown spelling (one line).

    Examples
    --------
    >>> combine_part("concat")
    ConcatHeads()
    >>> combine_part("stack")
    Traceback (most recent call last):
    ...
    symattn.core.errors.SymattnError: combine must be sum or concat, got 'stack'
    """
    if not isinstance(spelling, str) or spelling not in COMBINE_KINDS:
        raise SymattnError(f"combine must be {' or '.join(COMBINE_KINDS)}, got {spelling!r}")
    return COMBINE_KINDS[spelling]
