"""The three kinds of failure symattn distinguishes, and how the CLI reports them.

* :class:`SymattnError`: bad input, or a request beyond a documented limit;
  the message says what to do instead. CLI exit status 2.
* :class:`CheckFailed`: a computed check (a proof, a verification) disagreed
  with what it checks. CLI exit status 1.
* :class:`InternalError`: an inconsistency that only a bug in symattn can
  cause; reported as a bug. CLI exit status 70.

All three derive from :class:`SymattnException`. :class:`SymattnError` is also
a ``ValueError`` so that library callers may catch it as one. Any other
exception that reaches the command line is reported as an internal error too
(exit 70, traceback only under ``symattn --debug``).

Examples
--------
>>> from symattn.core.errors import SymattnError, CheckFailed, InternalError
>>> issubclass(SymattnError, ValueError), issubclass(CheckFailed, ValueError)
(True, False)
"""

__all__ = ["SymattnException", "SymattnError", "CheckFailed", "InternalError"]


class SymattnException(Exception):
    """Base class of every exception symattn raises on purpose."""


class SymattnError(SymattnException, ValueError):
    """Bad input, or a request symattn cannot decide (say what to do instead)."""


class CheckFailed(SymattnException):
    """A computed check failed: the computation disagrees with what it verifies."""


class InternalError(SymattnException, RuntimeError):
    """An inconsistency that only a bug in symattn can cause."""
