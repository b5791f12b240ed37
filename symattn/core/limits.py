"""Documented limits on one command's work, and the checks that enforce them.

Scope: symattn refuses, before allocating anything large, work that would not
fit the machine, and bounds the time of symbolic work whose cost cannot be
estimated in advance. Two mechanisms:

* **memory estimates.** :func:`graph_evaluation_bytes` estimates the peak
  memory of evaluating the attention graph in a (tangent) series algebra:
  every analysis that builds a Jacobian of series (spectrum, jet, dimension,
  fiber verification) is such an evaluation, with ``order`` series
  coefficients, ``directions`` tangent directions, ``inputs`` bank inputs of
  ``tokens`` tokens of width ``width``, through ``depth`` layers.
  :func:`require_memory` compares an estimate with the limit, by default
  :data:`DEFAULT_MAX_MEMORY_GIB` GiB (raise it with ``--max-memory GIB`` on any
  command), and refuses with a line that states the estimate and how to raise
  the limit. The estimates are calibrated on measured peaks (within a factor
  2 of them, ``tests/test_memory_estimates.py``): a refused case may still
  fit, and ``--max-memory`` is the way to try it.
* **time budgets.** :func:`time_budget` bounds a block by a wall-clock budget
  (``SIGALRM``; effective in the main thread of the main interpreter, where the
  CLI runs; elsewhere, e.g. inside a Dask worker thread, it is a no-op and the
  caller's own limits apply). Exceeding it raises
  :class:`~symattn.core.errors.SymattnError`. Symbolic Taylor expansion of a
  normalizer runs under :data:`NORMALIZER_SECONDS`.

Other fixed limits: :data:`MAX_TAYLOR_ORDER` for a printed normalizer series,
:data:`MAX_DIGITS` for any working precision, :data:`MAX_SERIES_ORDER` for any
series truncation, and :data:`MAX_DEPTH`, :data:`MAX_WIDTH`,
:data:`MAX_TOKENS` for an architecture (sanity bounds checked when it is built;
the memory estimates refuse much smaller sizes for the exact analyses).

Examples
--------
>>> graph_evaluation_bytes(order=19, directions=96, inputs=48, tokens=4, width=4, depth=3)
168099840
>>> require_memory(10 * 2**30, "a test", max_memory_gib=8)
Traceback (most recent call last):
...
symattn.core.errors.SymattnError: a test would need about 10.0 GiB, above the limit of 8 GiB; raise it with --max-memory GIB if the machine has the memory
"""

from __future__ import annotations

import contextlib
import math
import signal
import sys
import threading
import time
from collections.abc import Iterator

from symattn.core.errors import SymattnError

__all__ = [
    "DEFAULT_MAX_MEMORY_GIB", "MAX_DEPTH", "MAX_DIGITS", "MAX_TOKENS", "MAX_WIDTH", "MAX_SERIES_ORDER", "MAX_TAYLOR_ORDER",
    "NORMALIZER_SECONDS", "PROOF_SECONDS", "ball_evaluation_bytes", "graph_evaluation_bytes", "require_memory", "require_order",
    "spectrum_bytes", "time_budget",
]

DEFAULT_MAX_MEMORY_GIB = 12.0  #: default memory limit of one command (a 24 GiB machine)
MAX_TAYLOR_ORDER = 1000  #: highest order of a printed normalizer Taylor series
MAX_DIGITS = 10_000  #: highest working precision in decimal digits
MAX_SERIES_ORDER = 20_000  #: longest series truncation of any analysis
NORMALIZER_SECONDS = 30.0  #: time budget of the symbolic expansion of one normalizer
#: time budget of a spectrum's model-based column proof (the primes it may use follow from it)
PROOF_SECONDS = 1200.0
MAX_DEPTH = 256  #: layers of an architecture
MAX_WIDTH = 65_536  #: token width (any layer)
MAX_TOKENS = 65_536  #: tokens per input

#: Measured peak bytes of one tangent-series evaluation per cell ``order x directions x inputs
#: x tokens x max(width, tokens) x depth`` (:func:`graph_evaluation_bytes`), mod p and over Q:
#: 33-45 and 123-279 bytes on four shapes (the F.2 size at bank 24, D = 4 d = 2 to order 55,
#: d = 8 r = 4, n = 6), fitted to their geometric middle.
_GRAPH_BYTES_PER_CELL = {False: 40.0, True: 185.0}


def graph_evaluation_bytes(order: int, directions: int, inputs: int, tokens: int, width: int,
                           depth: int, exact: bool = False) -> int:
    """Estimated peak bytes of one tangent-series evaluation of the attention graph.

    A tangent tensor holds ``order x directions x inputs x tokens x max(width,
    tokens)`` coefficients (scores are ``tokens x tokens``), and the live ones grow
    with the depth; the measured peak is about 40 bytes per such coefficient and
    layer mod p and 185 over Q (calibrated: ``tests/test_memory_estimates.py``
    holds the estimate within a factor 2 of the peak).

    Parameters
    ----------
    order : int
        Series coefficients.
    directions : int
        Tangent directions.
    inputs : int
        Bank inputs.
    tokens : int
    width : int
    depth : int
    exact : bool, optional
        Over Q (else mod p).

    Returns
    -------
    int

    Examples
    --------
    >>> graph_evaluation_bytes(7, 10, 2, 2, 2, 2, exact=True) > graph_evaluation_bytes(7, 10, 2, 2, 2, 2)
    True
    """
    cells = (max(order, 1) * max(directions, 1) * max(inputs, 1) * max(tokens, 1)
             * max(width, tokens, 1) * max(depth, 1))
    return int(cells * _GRAPH_BYTES_PER_CELL[bool(exact)])


#: Measured peak bytes of a spectrum per cell ``order x directions x inputs x tokens x
#: max(width, tokens) x depth`` (:func:`spectrum_bytes`), by route: fitted on the F.2 size
#: (banks 24 and 48) and D = 2, d = 8, r = 4 (a bank of 109) to within a factor 1.4
#: (``tests/test_memory_estimates.py`` holds every estimate within a factor 2 of the peak).
_SPECTRUM_BYTES_PER_CELL = {"modular": 11.0, "exact": 21.0}


def spectrum_bytes(order: int, directions: int, inputs: int, tokens: int, width: int, depth: int,
                   method: str = "modular") -> int:
    """Estimated peak bytes of a native spectrum (above the interpreter and its imports): the
    tangent-series evaluation mod p of the bank Jacobian in ``u = t^2``, the Jacobian and its
    Smith forms; for ``method="exact"`` also the column groups over Q (exact rationals, each
    to its own order), about twice as much. Unlike :func:`graph_evaluation_bytes` it is
    calibrated on measured peaks: within a factor 2 of them.

    Parameters
    ----------
    order : int
        Series coefficients.
    directions : int
        Tangent directions.
    inputs : int
        Bank inputs.
    tokens : int
    width : int
    depth : int
    method : {"modular", "exact"}, optional

    Returns
    -------
    int

    Examples
    --------
    >>> round(spectrum_bytes(19, 96, 48, 4, 4, 3) / 2**20)               # the F.2 size mod p (MiB)
    44
    >>> round(spectrum_bytes(19, 96, 48, 4, 4, 3, method="exact") / 2**20)
    84
    """
    cells = (max(order, 1) * max(directions, 1) * max(inputs, 1) * max(tokens, 1)
             * max(width, tokens, 1) * max(depth, 1))
    return int(cells * _SPECTRUM_BYTES_PER_CELL[method])


#: Measured peak bytes of one ball-arithmetic tangent evaluation per cell ``directions x inputs x
#: tokens x max(width, tokens) x depth`` (:func:`ball_evaluation_bytes`): about 2.9 KB at 60
#: digits and 3.7 KB at 240 on the post-norm MLP block at D = 1, 2 (width 4, m = 4), so a fixed
#: part and a part per digit.
_BALL_BYTES_PER_CELL = (2600.0, 4.5)
#: The fixed part of a ball evaluation (the arrays of the bank and the point, the Jacobian).
_BALL_BYTES_FIXED = 8 * 2**20


def ball_evaluation_bytes(directions: int, inputs: int, tokens: int, width: int, depth: int,
                          digits: int) -> int:
    """Estimated peak bytes of one forward-mode evaluation of a Jacobian in ball arithmetic
    (``directions`` tangent directions, ``inputs`` bank inputs) at ``digits`` digits: the ball
    tier of the dimension (:func:`symattn.analyses.dimension.ball_dimension`), whose every
    point evaluates such a Jacobian. Calibrated on measured peaks (see
    :data:`_BALL_BYTES_PER_CELL`; ``tests/test_untrusted_limits.py`` holds it within a factor
    2 of one).

    Parameters
    ----------
    directions : int
        Tangent directions.
    inputs : int
        Bank inputs.
    tokens : int
    width : int
    depth : int
    digits : int
        The working precision.

    Returns
    -------
    int

    Examples
    --------
    >>> round(ball_evaluation_bytes(176, 24, 3, 4, 2, 60) / 2**20)  # D = 2, width 4, MLP 4 (MiB)
    285
    """
    cells = max(directions, 1) * max(inputs, 1) * max(tokens, 1) * max(width, tokens, 1) * max(depth, 1)
    fixed, per_digit = _BALL_BYTES_PER_CELL
    return int(_BALL_BYTES_FIXED + cells * (fixed + per_digit * max(digits, 1)))


def _gib(nbytes: float) -> str:
    gib = nbytes / 2**30
    if gib >= 1e6:
        return f"10^{math.log10(gib):.0f} GiB"
    return f"{gib:.1f} GiB" if gib >= 0.1 else f"{nbytes / 2**20:.1f} MiB"


def require_memory(nbytes: int, what: str, max_memory_gib: float | None = None) -> None:
    """Refuse ``what`` when its estimated ``nbytes`` exceed the limit.

    Parameters
    ----------
    nbytes : int
        The estimate (e.g. from :func:`graph_evaluation_bytes`).
    what : str
        The work, as the user would name it.
    max_memory_gib : float, optional
        The limit in GiB (default :data:`DEFAULT_MAX_MEMORY_GIB`).

    Raises
    ------
    SymattnError
        If the estimate exceeds the limit (the message says how to raise it).
    """
    limit = DEFAULT_MAX_MEMORY_GIB if max_memory_gib is None else max_memory_gib
    if nbytes > limit * 2**30:
        raise SymattnError(f"{what} would need about {_gib(nbytes)}, above the limit of "
                           f"{limit:g} GiB; raise it with --max-memory GIB if the machine has "
                           "the memory")


def require_order(order: int, what: str) -> int:
    """Refuse a series truncation beyond :data:`MAX_SERIES_ORDER`; return ``order``.

    Parameters
    ----------
    order : int
    what : str
        The work, as the user would name it.

    Returns
    -------
    int
        ``order``.

    Raises
    ------
    SymattnError
        If ``order`` exceeds :data:`MAX_SERIES_ORDER`.

    Examples
    --------
    >>> require_order(55, "the jet")
    55
    """
    if order > MAX_SERIES_ORDER:
        shown = f"about 10^{math.log10(order):.0f}" if order > 10**9 else str(order)
        raise SymattnError(f"{what} needs series to order {shown}, beyond the limit "
                           f"{MAX_SERIES_ORDER}; use fewer layers")
    return order


@contextlib.contextmanager
def time_budget(seconds: float, what: str, cpu: bool = False) -> Iterator[None]:
    """Run the block under a wall-clock budget (with ``cpu``: a budget of the process's CPU
    time, user and system, which a busy machine does not use up); raise SymattnError when it
    is exceeded.

    Effective only in the main thread (it uses ``SIGALRM``, with ``cpu`` ``SIGPROF``); nested
    budgets of the same clock keep the outer one. The alarm interrupts the block with an exception that ``except
    Exception`` does not catch. The timer then repeats every 50 ms, because Python drops
    an exception raised inside a weakref callback or ``__del__``; a repeat rings again
    only when no alarm is on its way out (none is being handled or propagating through a
    ``finally``), or when one has been for :data:`_GRACE_SECONDS`: cleanup code on the
    way out runs undisturbed, and an interrupted cleanup cannot leave a lock held. A
    block that swallows every alarm still ends in the SymattnError.

    Parameters
    ----------
    seconds : float
        The budget.
    what : str
        The work, as the user would name it.
    cpu : bool, optional
        Count the process's CPU time instead of wall-clock time.

    Yields
    ------
    None

    Raises
    ------
    SymattnError
        When the block exceeds the budget.

    Examples
    --------
    >>> with time_budget(5, "a quick step"):
    ...     total = sum(range(10))
    >>> total
    45
    """
    timer, signum = (signal.ITIMER_PROF, signal.SIGPROF) if cpu else (signal.ITIMER_REAL, signal.SIGALRM)
    usable = (hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
              and signal.getitimer(timer)[0] == 0)
    if not usable:
        yield
        return
    fired, armed, rung = False, True, 0.0

    def expired(signum, frame):
        nonlocal fired, rung
        if not armed:
            return
        now = time.monotonic()
        if fired and _expired_on_its_way_out() and now - rung < _GRACE_SECONDS:
            return
        fired, rung = True, now
        raise _Expired

    previous = signal.signal(signum, expired)
    # After the first alarm the timer repeats every 50 ms: an alarm that lands in a weakref
    # callback or a __del__ is reported as "ignored" by Python and lost, so it is raised again.
    signal.setitimer(timer, seconds, _REPEAT_SECONDS)
    failure = SymattnError(f"{what} took longer than {seconds:g} s{' of CPU time' if cpu else ''}; "
                           "simplify the input")
    try:
        yield
    except BaseException:
        armed = False  # before the raise below: a late alarm must not replace it
        if fired:
            raise failure from None
        raise
    finally:
        armed = False
        signal.setitimer(timer, 0)
        signal.signal(signum, previous)
    if fired:
        # every alarm was swallowed on the way and the block still ended: the budget was exceeded
        raise failure


_REPEAT_SECONDS = 0.05
#: How long an alarm that is on its way out (being handled, or propagating through
#: ``finally`` blocks and ``__exit__`` methods) is left to arrive before the next rings.
_GRACE_SECONDS = 5.0


def _expired_on_its_way_out() -> bool:
    """Whether the exception being handled here (``sys.exception()``, which includes one
    propagating through a ``finally``) is a budget's alarm or was caused by one."""
    exc, seen = sys.exception(), 0
    while exc is not None and seen < 64:
        if isinstance(exc, _Expired):
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


class _Expired(BaseException):
    """Raised by the alarm of :func:`time_budget` inside the timed code: a BaseException, so
    that a library's ``except Exception`` (or ``except ValueError``, which SymattnError is) on
    the way cannot swallow it; the budget turns it into a SymattnError at its end."""
