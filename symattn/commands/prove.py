"""``symattn prove [ID ...] [--path DIR] [--full] [--json] [--list] [--coq]``: run the proof scripts.

The table is made from :data:`COLUMNS` (header, cell of a result): a new
column is one entry there.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path

from symattn.core.errors import SymattnError
from symattn.theorems.isolation import Limits, Listing, list_proofs, one_line, run_proofs
from symattn.theorems.registry import ENTRY_POINT_GROUP, Proof, ProofResult, Source, choose, find

__all__ = ["COLUMNS", "register", "run", "table"]

_EPILOG = f"""\
examples:
  symattn prove                    every proof script (the paper's and installed proof packages')
  symattn prove t4 n1              Theorem 4 and protocol F.1 (ids or prefixes)
  symattn prove native-contact-spectrum
                                   Theorem 4 by its name (what it shows)
  symattn prove --full t3          Theorem 3 with the full case list
  symattn prove --json             results as a JSON list
  symattn prove --path mylemmas mylemmas:
                                   the proof scripts in the folder mylemmas/ only
  symattn prove --list             the ids, names, sources, kinds and titles
  symattn prove --coq t4           Theorem 4, its quick cases re-checked by Coq (coqc)

Installed packages add proof scripts through the entry-point group {ENTRY_POINT_GROUP!r};
see the documentation's page on proof packages. Each source (the paper's proofs, each
package, each --path folder) runs in a child process of its own, with the limits below;
a package that exits, crashes or hangs is that package's failure (exit 1)."""

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
            "prefixes, names or SOURCE: names) and print, for each, its statement, the cases "
            "checked, the kind (exact, certified, conditional or numerical), the time "
            "and pass/fail. The scripts are the paper's, those of installed proof "
            "packages and those of every --path folder, each source in a child process "
            "with time and memory limits. Progress goes to stderr. "
            "Exit status 1 if any proof (or source) fails."
        ),
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "ids", nargs="*", metavar="ID",
        help="proof id or prefix (t4, n1, l1), name (native-contact-spectrum), SOURCE: for every "
             "script of a source, or SOURCE:PREFIX (default: all)",
    )
    add_path_option(parser)
    parser.add_argument("--full", action="store_true", help="run the full (long) case lists")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument(
        "--list", action="store_true", help="list the selected proofs (id, name, source, kind, title) only"
    )
    parser.add_argument(
        "--coq", action="store_true",
        help="also export the Coq certificates of each proof's quick cases (all with --full), check them "
             "with coqc and add a column (checked by Coq / not covered / FAILED); a failed Coq check "
             "fails the proof",
    )
    parser.add_argument("--coq-dir", metavar="DIR", default=None,
                        help="where --coq writes the certificates (default: a new temporary directory)")
    defaults = Limits()
    parser.add_argument("--time-limit", metavar="SECONDS", type=float, default=defaults.proof_seconds,
                        help="wall-clock seconds one proof may take; a proof past it is killed and fails "
                             f"(default: {defaults.proof_seconds:g})")
    parser.add_argument("--source-time-limit", metavar="SECONDS", type=float, default=defaults.source_seconds,
                        help="wall-clock seconds the proofs of one source may take together; the rest of "
                             f"the source is not run and fails (default: {defaults.source_seconds:g})")
    parser.add_argument("--memory-limit", metavar="GIB", type=float,
                        default=(defaults.memory_bytes or 0) / 2**30,
                        help="the address space of each source's process, in GiB (RLIMIT_AS; "
                             f"default: {(defaults.memory_bytes or 0) / 2**30:g})")
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
        Parsed ``ids``, ``path``, ``full``, ``json``, ``list``, ``coq`` and ``coq_dir``.

    Returns
    -------
    int
        1 if any proof or source failed (a failed Coq check included), else 0.
    """
    limits = _limits(args)
    broken: list[Source] = []
    proofs = choose(find(args.path, broken), args.ids)
    broken = broken if not args.ids else []  # a broken package is reported when every proof is asked for
    if args.coq_dir is not None:  # before any proof runs
        if not args.coq:
            raise SymattnError("--coq-dir DIR goes with --coq")
        from symattn.core.output import check_folder

        check_folder(args.coq_dir, "Coq folder")
    if args.list:
        return _list(proofs, broken, limits, as_json=args.json)
    count = iter(range(1, len(proofs) + 1))

    def progress(proof: Proof) -> None:
        print(f"[{next(count, '?')}/{len(proofs)}] {one_line(proof.id)} ...", file=sys.stderr, flush=True)

    results = run_proofs(proofs, full=args.full, limits=limits, on_start=progress)
    results += [ProofResult(f"{source.name}:", "", "fail", 0, "", 0.0, None, source.problem, source.name)
                for source in broken]
    coq = None
    if args.coq:
        from symattn.coq.prove import check_proofs

        coq, where = check_proofs([proof.id for proof in proofs], full=args.full, directory=args.coq_dir)
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
                print(f"{one_line(result.id)}: {one_line(result.error)}", file=sys.stderr)
    else:
        print(table(results, coq))
    failed_coq = coq is not None and any(cell.failed for cell in coq.values())
    return 1 if any(result.status == "fail" for result in results) or failed_coq else 0


def _limits(args: argparse.Namespace) -> Limits:
    """The limits of ``--time-limit``, ``--source-time-limit`` and ``--memory-limit``, range-checked."""
    for option, value in (("--time-limit", args.time_limit), ("--source-time-limit", args.source_time_limit),
                          ("--memory-limit", args.memory_limit)):
        if not (math.isfinite(value) and value > 0):
            raise SymattnError(f"{option} must be a positive number, not {value!r}")
    if args.memory_limit > 2**20:
        raise SymattnError(f"--memory-limit {args.memory_limit:g} GiB is more than any machine has")
    return Limits(args.time_limit, args.source_time_limit, int(args.memory_limit * 2**30))


def _list(proofs: list[Proof], broken: list[Source], limits: Limits, as_json: bool) -> int:
    rows = list_proofs(proofs, limits)
    rows += [Listing(f"{source.name}:", source.name, "", "", source.problem) for source in broken]
    failed = [row for row in rows if row.error]
    if as_json:
        print(json.dumps([{"id": row.id, "name": row.name, "source": row.source, "kind": row.kind,
                           "statement": row.statement,
                           **({"error": row.error} if row.error else {})} for row in rows], indent=2))
        for row in failed:
            print(f"{one_line(row.id)}: {one_line(row.error)}", file=sys.stderr)
    else:
        lines = [_format_rows(["id", "name", "source", "kind", "title"],
                              [[row.id, row.name, row.source, row.kind, row.statement] for row in rows])]
        if failed:
            lines += ["", *(f"FAIL {one_line(row.id)}: {one_line(row.error)}" for row in failed)]
        print("\n".join(lines))
    return 1 if failed else 0


def table(results: list[ProofResult], coq: dict | None = None) -> str:
    """The pass/fail table of ``results`` (columns :data:`COLUMNS`), a summary line and the failures.

    Parameters
    ----------
    results : list of ProofResult
    coq : dict, optional
        The Coq check of each covered proof (:func:`symattn.coq.prove.check_proofs`): adds the
        column ``coq`` (a proof without Coq cases is "not covered") and the failed Coq checks.

    Returns
    -------
    str
    """
    columns = list(COLUMNS)
    if coq is not None:
        columns.append(("coq", lambda r: coq[r.id].text() if r.id in coq else "not covered"))
    rows = [[cell(r) for _, cell in columns] for r in results]
    lines = [_format_rows([header for header, _ in columns], rows)]
    failed = [r for r in results if r.status == "fail"]
    total = sum(r.seconds for r in results)
    lines.append("")
    lines.append(
        f"{len(results)} proofs: {len(results) - len(failed)} passed, "
        f"{len(failed)} failed ({total:.1f} s)"
    )
    lines.extend(f"FAIL {one_line(r.id)}: {one_line(r.error)}" for r in failed)
    if coq is not None:
        lines.extend(f"COQ FAIL {one_line(pid)}: {one_line(cell.message)}" for pid, cell in coq.items()
                     if cell.failed)
    return "\n".join(lines)


def _format_rows(header: list[str], rows: list[list[str]]) -> str:
    """The rows as aligned columns, each cell on one line (control characters escaped)."""
    rows = [[one_line(cell) for cell in row] for row in rows]
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows, strict=True)]
    rule = ["-" * width for width in widths]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in [header, rule, *rows]
    )
