"""``symattn prove [ID ...] [--full] [--json] [--list]``: run the proof scripts."""

from __future__ import annotations

import argparse
import json
import sys

from symattn.theorems.registry import ProofResult, load, run_proof, select

__all__ = ["register", "run"]

_EPILOG = """\
examples:
  symattn prove              every proof script
  symattn prove t4 n1        Theorem 4 and protocol F.1 (ids or prefixes)
  symattn prove --full t3    Theorem 3 with the full case list
  symattn prove --json       results as a JSON list"""


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
            "Run the proof scripts (all, or those matching the given ids or id "
            "prefixes) and print, for each, its statement, the cases checked, "
            "the kind (exact, certified or numerical), the time and pass/fail. "
            "Progress goes to stderr. Exit status 1 if any proof fails."
        ),
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "ids", nargs="*", metavar="ID", help="proof id or prefix, e.g. t4 or n1 (default: all)"
    )
    parser.add_argument("--full", action="store_true", help="run the full (long) case lists")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument(
        "--list", action="store_true", help="list the selected proofs (id, kind, statement) only"
    )
    parser.add_argument(
        "--coq", action="store_true",
        help="also export the Coq certificates of each proof's quick cases (all with --full), check them "
             "with coqc and add a column (checked by Coq / not covered / FAILED); a failed Coq check "
             "fails the proof",
    )
    parser.add_argument("--coq-dir", metavar="DIR", default=None,
                        help="where --coq writes the certificates (default: a new temporary directory)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the selected proofs and print the table (or JSON, or the list).

    Parameters
    ----------
    args : argparse.Namespace
        Parsed ``ids``, ``full``, ``json`` and ``list``.

    Returns
    -------
    int
        1 if any proof failed, else 0.
    """
    ids = select(args.ids)
    if args.list:
        return _list(ids, as_json=args.json)
    results = []
    for number, proof_id in enumerate(ids, start=1):
        print(f"[{number}/{len(ids)}] {proof_id} ...", file=sys.stderr, flush=True)
        results.append(run_proof(proof_id, full=args.full))
    coq = None
    if args.coq:
        from symattn.coq.prove import check_proofs

        coq, where = check_proofs(ids, full=args.full, directory=args.coq_dir)
        print(f"Coq certificates in {where}", file=sys.stderr)
    if args.json:
        summaries = [result.summary() for result in results]
        if coq is not None:
            for summary in summaries:
                cell = coq.get(summary["id"])
                summary["coq"] = {"status": cell.status, "cases": cell.cases, "seconds": round(cell.seconds, 3),
                                  "message": cell.message} if cell else None
        print(json.dumps(summaries, indent=2))
        for result in results:
            if result.error:
                print(f"{result.id}: {result.error}", file=sys.stderr)
    else:
        print(_table(results, coq))
    failed_coq = coq is not None and any(cell.failed for cell in coq.values())
    return 1 if any(result.status == "fail" for result in results) or failed_coq else 0


def _list(ids: list[str], as_json: bool) -> int:
    modules = [load(proof_id) for proof_id in ids]
    rows = [
        {
            "id": proof_id,
            "kind": str(getattr(module, "KIND", "")),
            "statement": str(getattr(module, "STATEMENT", "")),
        }
        for proof_id, module in zip(ids, modules, strict=True)
    ]
    if as_json:
        print(json.dumps(rows, indent=2))
    else:
        print(_format_rows(["id", "kind", "statement"], [list(row.values()) for row in rows]))
    return 0


def _table(results: list[ProofResult], coq: dict | None = None) -> str:
    rows = [
        [r.id, r.statement, str(r.cases), r.kind, f"{r.seconds:.2f}", r.status.upper()]
        + ([coq[r.id].text() if r.id in coq else "not covered"] if coq is not None else [])
        for r in results
    ]
    header = ["id", "statement", "cases", "kind", "seconds", "result"] + (["coq"] if coq is not None else [])
    lines = [_format_rows(header, rows)]
    failed = [r for r in results if r.status == "fail"]
    total = sum(r.seconds for r in results)
    lines.append("")
    lines.append(
        f"{len(results)} proofs: {len(results) - len(failed)} passed, "
        f"{len(failed)} failed ({total:.1f} s)"
    )
    lines.extend(f"FAIL {r.id}: {r.error}" for r in failed)
    if coq is not None:
        lines.extend(f"COQ FAIL {pid}: {cell.message}" for pid, cell in coq.items() if cell.failed)
    return "\n".join(lines)


def _format_rows(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=True)]
    rule = ["-" * width for width in widths]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in [header, rule, *rows]
    )
