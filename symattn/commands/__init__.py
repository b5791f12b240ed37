"""The subcommands of ``symattn``, one module each.

A module here is a subcommand when it defines ``register(subparsers)``:
:mod:`symattn.cli` imports every module of this package (sorted by name) and
calls it. ``register`` adds one parser with ``subparsers.add_parser(name,
help=..., description=...)``, its arguments, and ``set_defaults(func=run)``
where ``run(args: argparse.Namespace) -> int`` returns the exit status
(0 success, 1 a failed check). Raise :class:`symattn.core.errors.SymattnError` for
bad input: the command line prints its message and exits with status 2.
"""

from __future__ import annotations

import argparse

__all__ = [
    "PLOT_FORMATS", "add_architecture_arguments", "add_force_argument", "add_plot_argument",
    "add_seed_argument", "architecture_from_args", "bank_argument", "check_plot", "float_range",
    "int_range", "nonnegative_int", "plot_path", "plot_written", "positive_int",
    "require_graph_memory",
]


def add_architecture_arguments(parser: argparse.ArgumentParser, required: bool = True) -> None:
    """Add ``--depth --width --rank --tokens --normalizer`` (equal widths); with
    ``required=False`` depth and width may be omitted (a ``--spec`` file gives them)."""
    need = "required" if required else "required unless --spec"
    parser.add_argument("--depth", type=positive_int, required=required, metavar="D",
                        help=f"number of layers ({need})")
    parser.add_argument("--width", type=positive_int, required=required, metavar="d",
                        help=f"token width ({need})")
    parser.add_argument("--rank", default="1", metavar="R",
                        help="query/key width r_i, or a comma list r_1,...,r_D (default 1)")
    parser.add_argument("--tokens", type=int_range(2, 4096), default=2, metavar="n",
                        help="token count n >= 2 (default 2)")
    parser.add_argument("--normalizer", default="exp", metavar="PHI",
                        help="catalogue name or expression in s, or a comma list (one per layer); "
                             "default exp (softmax)")


def architecture_from_args(args: argparse.Namespace):
    """The :class:`~symattn.model.architecture.Architecture` named by :func:`add_architecture_arguments`."""
    from symattn.model.architecture import Architecture

    return Architecture.uniform(args.depth, args.width, args.rank, args.tokens, args.normalizer)


def bank_argument(text: str) -> "int | str":
    """Parse ``--bank N|auto``: a positive number of seeded inputs, or ``"auto"``."""
    from symattn.core.errors import SymattnError

    if text == "auto":
        return "auto"
    try:
        value = int(text)
    except ValueError:
        raise SymattnError(f"--bank takes a positive integer or 'auto', got {text!r}") from None
    if not 1 <= value <= MAX_BANK:
        raise SymattnError(f"--bank must be between 1 and {MAX_BANK}, got {value}")
    return value


#: Largest bank (number of seeded inputs) a command accepts.
MAX_BANK = 4096


# ------------------------------------------------------------ option types
# argparse ``type=`` callables: a bad value becomes one line ``symattn: error:
# argument --x: ...`` (exit 2) through :class:`argparse.ArgumentTypeError`.

def nonnegative_int(text: str) -> int:
    """An integer >= 0 (seeds)."""
    return _int_in(text, 0, None)


def positive_int(text: str) -> int:
    """An integer >= 1 (sizes)."""
    return _int_in(text, 1, None)


def int_range(low: int, high: int):
    """An argparse type accepting integers in ``[low, high]``.

    Examples
    --------
    >>> int_range(1, 5)("3")
    3
    """
    def parse(text: str) -> int:
        return _int_in(text, low, high)

    parse.__name__ = f"integer in [{low}, {high}]"
    return parse


def float_range(low: float, high: float):
    """An argparse type accepting finite floats in ``[low, high]``.

    Examples
    --------
    >>> float_range(0.0, 1.0)("0.25")
    0.25
    """
    def parse(text: str) -> float:
        import math

        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not math.isfinite(value) or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected a number in [{low:g}, {high:g}], got {text!r}")
        return value

    parse.__name__ = f"number in [{low}, {high}]"
    return parse


def _int_in(text: str, low: int, high: int | None) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise argparse.ArgumentTypeError(f"expected an integer {bound}, got {value}")
    return value


PLOT_FORMATS = (".png", ".pdf", ".svg")


def plot_path(text: str) -> str:
    """A plot file name ending in .png, .pdf or .svg (the rest is checked by :func:`check_plot`)."""
    import os

    root, ext = os.path.splitext(text)
    if ext.lower() not in PLOT_FORMATS or not os.path.basename(root) or "\x00" in text:
        raise argparse.ArgumentTypeError(
            f"plot file {text[:200]!r} must end in {', '.join(PLOT_FORMATS)}")
    return text


def add_force_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--force``: replace an output file that symattn did not write (see :mod:`symattn.core.output`)."""
    parser.add_argument("--force", action="store_true",
                        help="replace an existing output file that symattn did not write (or that was "
                             "changed since); without it such a file is refused")


def add_plot_argument(parser: argparse.ArgumentParser, help: str) -> None:
    """Add ``--plot FILE`` (a :func:`plot_path`) and ``--force``; call :func:`check_plot` first
    thing in the command's ``run``."""
    parser.add_argument("--plot", type=plot_path, default=None, metavar="FILE.png",
                        help=f"{help} (.png, .pdf or .svg; the folder must exist; an existing file "
                             "is replaced only if symattn wrote it, or with --force)")
    add_force_argument(parser)


def check_plot(args: argparse.Namespace) -> None:
    """Refuse, before any work, a ``--plot`` file that cannot or may not be written
    (:func:`symattn.core.output.check_target`)."""
    from symattn.core.output import check_target

    if getattr(args, "plot", None):
        check_target(args.plot, getattr(args, "force", False), "plot")


def plot_written(path: str) -> None:
    """Tell the user where a plot went (stderr, so JSON on stdout stays clean)."""
    import os
    import sys

    print(f"symattn: plot written to {os.path.abspath(path)}", file=sys.stderr)


def add_seed_argument(parser: argparse.ArgumentParser, what: str = "the seeded random choices") -> None:
    """Add ``--seed S`` (a nonnegative integer, default 0)."""
    parser.add_argument("--seed", type=nonnegative_int, default=0, metavar="S",
                        help=f"seed of {what} (a nonnegative integer; default 0)")


def require_graph_memory(args: argparse.Namespace, what: str, arch, order: int, directions: int,
                         inputs: int, exact: bool = False) -> None:
    """Refuse a series evaluation of ``arch``'s graph estimated beyond ``--max-memory``.

    See :func:`symattn.core.limits.graph_evaluation_bytes` (every head counts as a layer);
    ``order`` is first checked against :data:`symattn.core.limits.MAX_SERIES_ORDER`.
    """
    from symattn.core.limits import graph_evaluation_bytes, require_memory, require_order

    require_order(order, what)
    nbytes = graph_evaluation_bytes(order, directions, inputs, arch.tokens, max(arch.widths),
                                    sum(len(layer.heads) for layer in arch.layers), exact=exact)
    require_memory(nbytes, what, getattr(args, "max_memory", None))
