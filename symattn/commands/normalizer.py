"""``symattn normalizer EXPR [--order N] [--json]``: the derived data of one normalizer.

Prints k, b, whether phi is even, whether h = log phi is odd, h'(0), h''(0)
and the Taylor coefficients of phi and h -- all exact -- for a catalogue name
or an expression in ``s``, as an aligned table or (``--json``) as
:meth:`symattn.model.normalizer.Normalizer.report`.
"""

from __future__ import annotations

import argparse
import json

from symattn.commands import int_range
from symattn.core.limits import MAX_TAYLOR_ORDER
from symattn.model.normalizer import CATALOGUE, Normalizer
from symattn.core.provenance import provenance

_LABELS = {
    "name": "name",
    "expr": "phi(s)",
    "k": "k (first degree of h)",
    "b": "b (h = b s^k + ...)",
    "even": "phi even",
    "h_odd": "h odd",
    "slope": "h'(0)",
    "curvature": "h''(0)",
    "phi_taylor": "phi Taylor c_0..",
    "h_taylor": "h Taylor h_0..",
}


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``normalizer`` subcommand to ``subparsers``."""
    parser = subparsers.add_parser(
        "normalizer",
        help="derive k, b, parities, h'(0), h''(0) and Taylor coefficients of a normalizer",
        description="Derive k, b, whether phi is even and h = log phi odd, h'(0), h''(0) "
                    "and the Taylor coefficients of phi and h. All numbers are exact.",
    )
    parser.add_argument(
        "expr", metavar="EXPR",
        help=f"catalogue name ({', '.join(CATALOGUE)}) or an expression in s, "
             "e.g. 'exp(s^2+s^3)'")
    parser.add_argument("--order", type=int_range(0, MAX_TAYLOR_ORDER), default=None, metavar="N",
                        help="order of the printed Taylor series (default max(8, k + 4); "
                             f"at most {MAX_TAYLOR_ORDER})")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(func=run)
    return parser


def format_report(report: dict) -> str:
    """The report as a two-column table (labels left, exact values right)."""
    width = max(len(label) for label in _LABELS.values())
    lines = ["normalizer (all values exact)"]
    for key, label in _LABELS.items():
        value = report[key]
        text = ", ".join(value) if isinstance(value, list) else str(value)
        lines.append(f"  {label:<{width}}  {text}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Print the report of ``args.expr``; return the exit status."""
    report = Normalizer(args.expr).report(args.order)
    if args.json:
        report["provenance"] = provenance("exact", {"expr": args.expr, "order": args.order})
    print(json.dumps(report, indent=2) if args.json else format_report(report))
    return 0
