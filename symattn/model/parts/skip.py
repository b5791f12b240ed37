"""Skip connections: whether a layer adds its input to each sublayer's output, and whether its heads keep ``V``.

Three parts, spelled as in specs (``skip``) and on the command line (``--residual``): ``none`` (the
paper's ``V S_A(X)``), ``value`` (``X + V S_A(X)``) and ``folded`` (``X + S_A(X)``: the values folded
into the skip, no ``V``). Each owns its graph node (:meth:`Skip.build`), its naive formula
(:meth:`Skip.reference`) and the two facts the symmetry declarations and counts ask:
:attr:`Skip.is_residual` (the input is added: the interface gauge ``S_A(G X) = G S_{G^T A G}(X)``
breaks, and a norm's output is carried on to the next norm) and :attr:`Skip.has_values` (the heads
carry a value map). PyTorch has no module for it: the residual sums of ``nn.TransformerEncoderLayer``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from symattn.core.errors import SymattnError
from symattn.model.parts.ring import plus
from symattn.model.parts.kind import PartKind

__all__ = ["Skip", "NoSkip", "ValueSkip", "FoldedSkip", "SKIP_KINDS", "skip_part"]


class Skip(PartKind):
    """A layer's skip connection (see the module docstring).

    Attributes
    ----------
    spelling : str
        The name in specs (``skip``) and on the command line (``--residual``).
    is_residual : bool
        The layer adds its input to each sublayer's output (``X + ...``).
    has_values : bool
        The heads carry a value map ``V`` (and its bias).
    """

    spelling: ClassVar[str]
    is_residual: ClassVar[bool]
    has_values: ClassVar[bool]

    def build(self, b: Any, x: str, y: str, name: str) -> str:
        """The node of the sublayer output ``y`` with the skip: ``x + y`` (node ``name``) or ``y``.

        Parameters
        ----------
        b : Builder
            The graph builder (:class:`~symattn.model.network.Builder`).
        x, y : str
            The sublayer's input and output nodes.
        name : str
            The name of the sum node.

        Returns
        -------
        str
            The output node.
        """
        return b.op(name, "add", x, y) if self.is_residual else y

    def reference(self, R: Any, X: list, Y: list) -> list:
        """The naive formula: ``X + Y`` (matrices as lists of rows over the ring ``R``) or ``Y``.

        Parameters
        ----------
        R : ring
            The scalar ring of :mod:`symattn.model.reference`.
        X, Y : list of list
            The sublayer's input and output.

        Returns
        -------
        list of list
        """
        return plus(R, X, Y) if self.is_residual else Y


class NoSkip(Skip):
    """No skip: ``V S_A(X)`` (the paper's layer).

    >>> NoSkip().is_residual, NoSkip().has_values
    (False, True)
    """

    spelling = "none"
    is_residual = False
    has_values = True


class ValueSkip(Skip):
    """A residual around the heads: ``X + V S_A(X)`` (and ``Y + MLP(Y)``).

    >>> ValueSkip().is_residual, ValueSkip().has_values
    (True, True)
    """

    spelling = "value"
    is_residual = True
    has_values = True


class FoldedSkip(Skip):
    """A residual with the values folded away: ``X + S_A(X)``.

    >>> FoldedSkip().is_residual, FoldedSkip().has_values
    (True, False)
    """

    spelling = "folded"
    is_residual = True
    has_values = False


#: The skip parts by spelling.
SKIP_KINDS: dict[str, Skip] = {part.spelling: part for part in (NoSkip(), ValueSkip(), FoldedSkip())}


def skip_part(spelling: str) -> Skip:
    """The skip part spelled ``spelling``.

    Parameters
    ----------
    spelling : str
        ``"none"``, ``"value"`` or ``"folded"``.

    Returns
    -------
    Skip

    Raises
    ------
    SymattnError
        An unknown spelling (one line).

    Examples
    --------
    >>> skip_part("folded")
    FoldedSkip()
    >>> skip_part("gated")
    Traceback (most recent call last):
    ...
    symattn.core.errors.SymattnError: skip must be one of none, value, folded, got 'gated'
    """
    if not isinstance(spelling, str) or spelling not in SKIP_KINDS:
        raise SymattnError(f"skip must be one of {', '.join(SKIP_KINDS)}, got {spelling!r}")
    return SKIP_KINDS[spelling]
