"""``symattn prove [ID ...] [--path DIR] [--full] [--json] [--list]``: run the proof scripts.

The table is made from :data:`COLUMNS` (header, cell of a result): a new
column is one entry there.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable
from pathlib import Path

from symattn.theorems.registry import ENTRY_POINT_GROUP, ProofResult, find, run_proof, select

__all__ = ["COLUMNS", "register", "run", "table"]

_EPILOG = f"""\
examples:
  symattn prove                    every proof script (the paper's and installed proof packages')
  symattn prove t4 n1              Theorem 4 and protocol F.1 (ids or prefixes)
  symattn prove --full t3          Theorem 3 with the full case list
  symattn prove --json             results as a JSON list
  symattn prove --path mylemmas mylemmas:
                                   the proof scripts in the folder mylemmas/ only
  symattn prove --list             the ids, sources, kinds and statements

Installed packages add proof scripts through the entry-point group {ENTRY_POINT_GROUP!r};
see the documentation's page on proof packages."""

#: The columns of the table: header and the cell of one result.
COLUMNS: list[tuple[str, Callable[[ProofResult], str]]] = [
    ("id", lambda r: r.id),
    ("statement", lambda r: r.statement),
    ("cases", lambda r: str(r.cases)),
    ("kind", lambda r: r.kind),
    ("seconds", lambda r: f"{r.seconds:.2f}"),
    ("result", lambda r: r.status.upper()),
]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``prove`` subcommand.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The ``symattn`` subcommand collection.
    """
    parser = subparsers.add_parser(
        "prove",
        help="run the proof scripts and print a pass/fail table",
        description=(
            "Run the proof scripts (all, or those matching the given ids, id "
            "prefixes or SOURCE: names) and print, for each, its statement, the cases "
            "checked, the kind (exact, certified, conditional or numerical), the time "
            "and pass/fail. The scripts are the paper's, those of installed proof "
            "packages and those of every --path folder. Progress goes to stderr. "
            "Exit status 1 if any proof fails."
        ),
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "ids", nargs="*", metavar="ID",
        help="proof id or prefix (t4, n1, l1), SOURCE: for every script of a source, "
             "or SOURCE:PREFIX (default: all)",
    )
    add_path_option(parser)
    parser.add_argument("--full", action="store_true", help="run the full (long) case lists")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument(
        "--list", action="store_true", help="list the selected proofs (id, source, kind, statement) only"
    )
    parser.set_defaults(func=run)


def add_path_option(parser: argparse.ArgumentParser) -> None:
    """The ``--path DIR`` option (repeatable), shared with ``symattn latex``."""
    parser.add_argument(
        "--path", action="append", default=[], metavar="DIR", type=Path,
        help="also run the proof scripts in the folder DIR (repeatable; the source is "
             "named after the folder; default: none)",
    )


def run(args: argparse.Namespace) -> int:
    """Run the selected proofs and print the table (or JSON, or the list).

    Parameters
    ----------
    args : argparse.Namespace
        Parsed ``ids``, ``path``, ``full``, ``json`` and ``list``.

    Returns
    -------
    int
        1 if any proof failed, else 0.
    """
    ids = select(args.ids, args.path)
    if args.list:
        return _list(ids, args.path, as_json=args.json)
    results = []
    for number, proof_id in enumerate(ids, start=1):
        print(f"[{number}/{len(ids)}] {proof_id} ...", file=sys.stderr, flush=True)
        results.append(run_proof(proof_id, full=args.full, paths=args.path))
    if args.json:
        print(json.dumps([result.summary() for result in results], indent=2))
        for result in results:
            if result.error:
                print(f"{result.id}: {result.error}", file=sys.stderr)
    else:
        print(table(results))
    return 1 if any(result.status == "fail" for result in results) else 0


def _list(ids: list[str], paths: list[Path], as_json: bool) -> int:
    rows = []
    for proof in find(paths):
        if proof.id in ids:
            module = importlib.import_module(proof.module)
            rows.append({"id": proof.id, "source": proof.source.name,
                         "kind": str(getattr(module, "KIND", "")),
                         "statement": str(getattr(module, "STATEMENT", ""))})
    if as_json:
        print(json.dumps(rows, indent=2))
    else:
        print(_format_rows(["id", "source", "kind", "statement"], [list(row.values()) for row in rows]))
    return 0


def table(results: list[ProofResult]) -> str:
    """The pass/fail table of ``results`` (columns :data:`COLUMNS`), a summary line and the failures.

    Parameters
    ----------
    results : list of ProofResult

    Returns
    -------
    str
    """
    rows = [[cell(r) for _, cell in COLUMNS] for r in results]
    lines = [_format_rows([header for header, _ in COLUMNS], rows)]
    failed = [r for r in results if r.status == "fail"]
    total = sum(r.seconds for r in results)
    lines.append("")
    lines.append(
        f"{len(results)} proofs: {len(results) - len(failed)} passed, "
        f"{len(failed)} failed ({total:.1f} s)"
    )
    lines.extend(f"FAIL {r.id}: {r.error}" for r in failed)
    return "\n".join(lines)


def _format_rows(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=True)]
    rule = ["-" * width for width in widths]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in [header, rule, *rows]
    )
