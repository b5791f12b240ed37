"""The one exception type symattn raises for bad input or undecidable requests.

The command line catches :class:`SymattnError`, prints its message on one line
and exits with status 2; library callers may catch it like a ``ValueError``.
"""

__all__ = ["SymattnError"]


class SymattnError(ValueError):
    """Bad input, or a request symattn cannot decide (say what to do instead)."""
