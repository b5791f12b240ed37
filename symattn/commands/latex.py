"""``symattn latex PROOF_ID|--all [--path DIR] [--full] [--output FILE] [--document]``: derivations as LaTeX.

One proof prints its derivation as a fragment to paste (``\\paragraph`` title,
steps with their computed displays, a ``longtable`` of checks; it needs
``amsmath``, ``amssymb`` and ``longtable``); ``--document`` wraps it in a
complete document, and ``--all`` runs every proof script and writes one
document with a table of contents and one section per statement (see
:func:`symattn.render.derivation.latex_document`). Compile a document with
``pdflatex`` twice (the second run fills in the table of contents).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from symattn.commands import add_force_argument
from symattn.core.errors import SymattnError
from symattn.commands.prove import add_path_option
from symattn.core.output import check_target, stamp_text, write_file
from symattn.render.latex import latex_document
from symattn.theorems.registry import PAPER_SOURCE, ProofResult, discover, run_proof, select

__all__ = ["DOCUMENT_TITLE", "OTHER_TITLE", "register", "run"]

#: Title of the document written by ``symattn latex --all`` (the paper's proofs only).
DOCUMENT_TITLE = ("Computed derivations for ``Identifiability and Observability of Deep "
                  "Normalized Attention'' (Konda, 2026)")
#: Title of a document with proofs of other sources (proof packages, ``--path``).
OTHER_TITLE = "Computed derivations (symattn)"

_PREFACE = ("Every display below was computed by symattn from the model when this document was "
            "written; long expressions are shown by their leading terms "
            "and sizes. Each section ends with its named checks: the value computed from the model, "
            "the theorem's formula evaluated separately, and whether the check is exact, certified "
            "or numerical.")

_EPILOG = """\
examples:
  symattn latex t4                               fragment for Theorem 4 on stdout
  symattn latex t3 --document --output t3.tex    one statement as a document
  symattn latex --all --output derivations.tex   every statement, one document
  symattn latex --path mylemmas mylemmas:l1      a statement of one's own proof folder
  pdflatex derivations.tex && pdflatex derivations.tex"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``latex`` subcommand.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The ``symattn`` subcommand collection.
    """
    parser = subparsers.add_parser(
        "latex",
        help="print a proof's derivation as LaTeX, or write all of them as one document",
        description=(
            "Run one proof script and print its derivation as a LaTeX fragment: "
            "the statement, the numbered steps with their computed displays and "
            "the table of checks. With --all, run every proof script and write one "
            "complete LaTeX document (preamble, table of contents, one section per "
            "statement) that compiles with pdflatex."
        ),
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("proof_id", metavar="PROOF_ID", nargs="?",
                        help="proof id or unique prefix, e.g. t4; with --document also SOURCE: for "
                             "every script of a source (omit with --all)")
    parser.add_argument("--all", action="store_true", help="every proof script, as one document")
    parser.add_argument("--document", action="store_true",
                        help="a complete document rather than a fragment (implied by --all)")
    parser.add_argument("--output", "-o", metavar="FILE", type=Path,
                        help="write to FILE instead of stdout (checked before the proofs run; an "
                             "existing file is replaced only if symattn wrote it, or with --force)")
    add_force_argument(parser)
    add_path_option(parser)
    parser.add_argument("--full", action="store_true", help="run the full (long) case lists")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the proofs and print or write their LaTeX.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed ``proof_id``, ``all``, ``document``, ``output``, ``path`` and ``full``.

    Returns
    -------
    int
        0 if every proof passed, 1 if one failed (the reason goes to stderr;
        a proof whose script raised has no derivation and is left out of the
        document, the others are written).

    Raises
    ------
    SymattnError
        If neither or both of PROOF_ID and ``--all`` are given, or the id
        matches no proof, or several without ``--document``, or the output
        file cannot or may not be written (checked before any proof runs;
        see :mod:`symattn.core.output`).
    """
    if args.all == (args.proof_id is not None):
        raise SymattnError("give one PROOF_ID (e.g. `symattn latex t4`) or --all, not both or neither")
    if args.output is not None:
        check_target(args.output, args.force, "LaTeX output")  # before any proof runs
    if args.all:
        ids = discover(args.path)
    else:
        ids = select([args.proof_id], args.path)
        if len(ids) > 1 and not args.document:
            raise SymattnError(f"{args.proof_id!r} is ambiguous: {', '.join(ids)}; give one id, "
                               "or --document for one document of all of them")
    results: list[ProofResult] = []
    for proof_id in ids:
        if len(ids) > 1:
            print(f"symattn latex: running {proof_id} ...", file=sys.stderr)
        results.append(run_proof(proof_id, full=args.full, paths=args.path))
    derivations = [r.derivation for r in results if r.derivation is not None]
    if args.all or args.document:
        paper = all(r.source == PAPER_SOURCE for r in results)
        text = latex_document(derivations, DOCUMENT_TITLE if paper else OTHER_TITLE, _PREFACE)
    else:
        text = derivations[0].to_latex() + "\n" if derivations else ""
    if args.output is None:
        sys.stdout.write(text)
    else:
        write_file(args.output, stamp_text(text), args.force, "LaTeX output")
        print(f"symattn latex: wrote {args.output} ({len(derivations)} derivations)", file=sys.stderr)
    failed = [r for r in results if r.status != "pass"]
    for result in failed:
        print(f"symattn: proof {result.id} failed: {result.error}", file=sys.stderr)
    return 1 if failed else 0
