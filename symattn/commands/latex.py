"""``symattn latex PROOF_ID [--full]``: print a proof's derivation as LaTeX."""

from __future__ import annotations

import argparse
import sys

from symattn.errors import SymattnError
from symattn.prove import run_proof, select

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``latex`` subcommand.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The ``symattn`` subcommand collection.
    """
    parser = subparsers.add_parser(
        "latex",
        help="print a proof's derivation as a LaTeX fragment",
        description=(
            "Run one proof script and print its derivation as a LaTeX fragment: "
            "the statement, the numbered steps with their displays and the table "
            "of checks. Example: symattn latex t4 > t4.tex"
        ),
    )
    parser.add_argument("proof_id", metavar="PROOF_ID", help="proof id or unique prefix, e.g. t4")
    parser.add_argument("--full", action="store_true", help="run the full (long) case list")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the proof and print its LaTeX.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed ``proof_id`` and ``full``.

    Returns
    -------
    int
        0 if the proof passed, 1 if it failed (the reason goes to stderr).

    Raises
    ------
    SymattnError
        If the id matches no proof or several.
    """
    ids = select([args.proof_id])
    if len(ids) > 1:
        raise SymattnError(f"{args.proof_id!r} is ambiguous: {', '.join(ids)}")
    result = run_proof(ids[0], full=args.full)
    if result.derivation is not None:
        print(result.derivation.to_latex())
    if result.error:
        print(f"symattn: proof {result.id} failed: {result.error}", file=sys.stderr)
    return 0 if result.status == "pass" else 1
