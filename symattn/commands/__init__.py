"""The subcommands of ``symattn``, one module each.

A module here is a subcommand when it defines ``register(subparsers)``:
:mod:`symattn.cli` imports every module of this package (sorted by name) and
calls it. ``register`` adds one parser with ``subparsers.add_parser(name,
help=..., description=...)``, its arguments, and ``set_defaults(func=run)``
where ``run(args: argparse.Namespace) -> int`` returns the exit status
(0 success, 1 a failed check). Raise :class:`symattn.errors.SymattnError` for
bad input: the command line prints its message and exits with status 2.
"""

from __future__ import annotations

import argparse

__all__ = ["add_architecture_arguments", "architecture_from_args", "bank_argument"]


def add_architecture_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--depth --width --rank --tokens --normalizer`` (equal widths)."""
    parser.add_argument("--depth", type=int, required=True, metavar="D", help="number of layers")
    parser.add_argument("--width", type=int, required=True, metavar="d", help="token width")
    parser.add_argument("--rank", default="1", metavar="R",
                        help="query/key width r_i, or a comma list r_1,...,r_D (default 1)")
    parser.add_argument("--tokens", type=int, default=2, metavar="n", help="token count (default 2)")
    parser.add_argument("--normalizer", default="exp", metavar="PHI",
                        help="catalogue name or expression in s, or a comma list (one per layer); "
                             "default exp (softmax)")


def architecture_from_args(args: argparse.Namespace):
    """The :class:`~symattn.model.Architecture` named by :func:`add_architecture_arguments`."""
    from symattn.model import Architecture

    return Architecture.uniform(args.depth, args.width, args.rank, args.tokens, args.normalizer)


def bank_argument(text: str) -> "int | str":
    """Parse ``--bank N|auto``: a positive number of seeded inputs, or ``"auto"``."""
    from symattn.errors import SymattnError

    if text == "auto":
        return "auto"
    try:
        value = int(text)
    except ValueError:
        raise SymattnError(f"--bank takes a positive integer or 'auto', got {text!r}") from None
    if value < 1:
        raise SymattnError(f"--bank must be positive, got {value}")
    return value
