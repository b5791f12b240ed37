"""The ``symattn`` command line.

Subcommands are discovered, not listed: every module of the package
:mod:`symattn.commands` that defines ``register(subparsers)`` is imported and
registered, in sorted module order. ``register`` adds a parser to
``subparsers`` and sets ``func`` with ``set_defaults(func=run)``, where
``run(args) -> int`` returns the exit status.

Exit statuses: what the subcommand returns (0 success, 1 a failed check);
2 for a usage error or a :class:`~symattn.errors.SymattnError`, reported as
one line ``symattn: error: <message>`` on stderr without a traceback; 130 on
keyboard interrupt.
"""

from __future__ import annotations

import argparse
import os
import importlib
import pkgutil
import sys
from collections.abc import Sequence

import symattn.commands
from symattn.errors import SymattnError

__all__ = ["build_parser", "help_texts", "main"]

_DESCRIPTION = """\
Exact and certified recomputation of the identifiability and contact-spectrum
results of P. V. Konda, "Identifiability and Observability of Deep Normalized
Attention" (2026). Every reported number says whether it is exact (rational or
modular arithmetic), certified (ball arithmetic) or numerical."""

_EPILOG = """\
examples:
  symattn prove                  run every proof script and print the table
  symattn prove t4 --full        Theorem 4 with its full case list
  symattn prove --json           the same table as JSON
  symattn prove --list           list the proof scripts without running them
  symattn latex t4               the Theorem 4 derivation as a LaTeX fragment
  symattn COMMAND --help         options of one command"""


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser with every discovered subcommand.

    Returns
    -------
    argparse.ArgumentParser
        The ``symattn`` parser.
    """
    return _build()[0]


def help_texts() -> dict[str, str]:
    """The ``--help`` text of ``symattn`` and of each subcommand.

    Returns
    -------
    dict of str to str
        ``"symattn"`` and ``"symattn <command>"`` mapped to their help text,
        the subcommands in registration order (used to render the CLI
        reference in the documentation).
    """
    parser, subparsers = _build()
    texts = {"symattn": parser.format_help()}
    for name, subparser in subparsers.choices.items():
        texts[f"symattn {name}"] = subparser.format_help()
    return texts


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name; defaults to ``sys.argv[1:]``.

    Returns
    -------
    int
        The exit status.
    """
    try:
        parser = build_parser()
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # --help, --version and usage errors
            return exc.code if isinstance(exc.code, int) else 2
        return int(args.func(args))
    except SymattnError as exc:
        print(f"symattn: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("symattn: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into e.g. head: stop quietly
        sys.stdout = open(os.devnull, "w")
        return 0


def _build() -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:
    parser = argparse.ArgumentParser(
        prog="symattn",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {symattn.__version__}")
    subparsers = parser.add_subparsers(
        title="commands", metavar="COMMAND", dest="command", required=True
    )
    for info in sorted(pkgutil.iter_modules(symattn.commands.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{symattn.commands.__name__}.{info.name}")
        if hasattr(module, "register"):
            module.register(subparsers)
    return parser, subparsers

