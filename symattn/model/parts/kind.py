"""A stateless part kind: one instance per kind, equal by its type, printed by its spelling.

The norm kinds, skips, head combinations and biases hold no data of their own (the parameters are
the layer's), so two instances of one kind are the same part.
"""

from __future__ import annotations


class PartKind:
    """Equality, hashing and printing of a stateless part kind.

    >>> from symattn.model.parts.skip import ValueSkip
    >>> ValueSkip() == ValueSkip(), str(ValueSkip()), repr(ValueSkip())
    (True, 'value', 'ValueSkip()')
    """

    def __str__(self) -> str:
        """The part's spelling in specs and on the command line (``spelling``), else its repr."""
        return getattr(self, "spelling", "") or repr(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __eq__(self, other) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self).__name__)
