"""The four kinds of failure symattn distinguishes, and how the CLI reports them.

* :class:`SymattnError`: bad input, or a request beyond a documented limit;
  the message says what to do instead. CLI exit status 2.
* :class:`CheckFailed`: a computed check (a proof, a verification) disagreed
  with what it checks. CLI exit status 1.
* :class:`Undecided`: the input is valid but this computation could not decide
  it, and says so: an unlucky prime (:class:`UnluckyPrime`), a value not
  resolved at the working precision (:class:`Unresolved`), data outside a
  theorem's hypotheses at this point (:class:`OutsideHypotheses`). Neither bad
  input nor a failure: the CLI prints ``symattn: undecided: ...`` and exits with
  the status the command documents (1 unless it says otherwise,
  :data:`symattn.cli.EXIT_UNDECIDED`).
* :class:`InternalError`: an inconsistency that only a bug in symattn can
  cause; reported as a bug. CLI exit status 70.

All four derive from :class:`SymattnException`. :class:`SymattnError` is also
a ``ValueError`` so that library callers may catch it as one. Any other
exception that reaches the command line is reported as an internal error too
(exit 70, traceback only under ``symattn --debug``).

Examples
--------
>>> from symattn.core.errors import SymattnError, CheckFailed, InternalError, Undecided, UnluckyPrime
>>> issubclass(SymattnError, ValueError), issubclass(CheckFailed, ValueError)
(True, False)
>>> issubclass(UnluckyPrime, Undecided), issubclass(UnluckyPrime, SymattnError)
(True, False)
"""

__all__ = ["SymattnException", "SymattnError", "CheckFailed", "Undecided", "UnluckyPrime", "Unresolved",
           "OutsideHypotheses", "InternalError"]


class SymattnException(Exception):
    """Base class of every exception symattn raises on purpose."""


class SymattnError(SymattnException, ValueError):
    """Bad input, or a request beyond a documented limit (say what to do instead)."""


class CheckFailed(SymattnException):
    """A computed check failed: the computation disagrees with what it verifies."""


class Undecided(SymattnException):
    """Valid input this computation could not decide (said as such, never as bad input)."""


class UnluckyPrime(Undecided):
    """A rational's denominator is divisible by the prime ``p``: the data have no
    reduction mod p, so this prime proves nothing about them.

    Narrow on purpose: a caller that can move on to another prime catches this
    type only; anywhere else it reaches the user as undecided for that prime.
    """


class Unresolved(Undecided):
    """A positive singular value is not separated from the rounding noise at the
    working digits (or the Jacobian has rank below the complement's dimension).
    Narrow on purpose: callers that raise the digits, or report the values as
    unresolved, catch this type only."""


class OutsideHypotheses(Undecided):
    """The data are valid but outside Theorem 4's setting at this path or bank
    (the gauges do not split off, a column is not divisible by its proven power of
    t, no separating bank). Narrow on purpose: a caller that can go on without a
    spectrum (the audit) catches this type only."""


class InternalError(SymattnException, RuntimeError):
    """An inconsistency that only a bug in symattn can cause."""
