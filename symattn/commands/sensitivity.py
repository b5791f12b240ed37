"""``symattn sensitivity --depth D --width d --rank R --tokens n --normalizer PHI``.

For an architecture on the Theorem 4 path ``Q_i = t U_i``, ``K_i = t W_i``,
``V_i = I`` (seeded rational ``U_i, W_i`` and bank, as in ``symattn spectrum``)
prints the contact bands ``sigma ~ c t^beta`` (orders and multiplicities exact,
from the certified Smith form of :func:`symattn.spectrum.native_spectrum`), the
leading coefficients ``c`` measured at a moderate ``t`` in high precision, the
``t`` below which float64 (``eps sigma_1``) no longer resolves each band, the
float64 rank to expect at ``--t-min`` and the digits that resolve every band
there (:func:`symattn.numerics.sensitivity`).
"""

from __future__ import annotations

import argparse
import json

from symattn.commands import add_architecture_arguments, architecture_from_args
from symattn.numerics import sensitivity
from symattn.provenance import architecture_inputs, numerical_kind, provenance

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``sensitivity`` subcommand.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The ``symattn`` subcommand collection.
    """
    parser = subparsers.add_parser(
        "sensitivity", help="where float64 loses each contact band along the Theorem 4 path",
        description="Predicted singular-value bands sigma ~ c t^beta (orders exact), the t "
                    "below which float64 loses each band, and the digits needed at --t-min.")
    add_architecture_arguments(parser)
    parser.add_argument("--t-min", type=float, default=0.01, help="smallest t of interest")
    parser.add_argument("--t-ref", type=float, default=0.25,
                        help="moderate t where the leading coefficients are measured")
    parser.add_argument("--digits", type=int, default=60, help="digits of that measurement")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print the sensitivity report; return the exit status.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options.

    Returns
    -------
    int
        0 on success.
    """
    arch = architecture_from_args(args)
    report = sensitivity(arch, t_min=args.t_min, t_ref=args.t_ref, digits=args.digits)
    if args.json:
        report["provenance"] = provenance(numerical_kind(args.digits), {
            **architecture_inputs(arch), "t_min": args.t_min, "t_ref": args.t_ref, "digits": args.digits})
        print(json.dumps(report, indent=2))
        return 0
    print(f"sensitivity along Q_i = t U_i, K_i = t W_i, V_i = I: rank {report['rank']}, "
          f"kernel {report['kernel']} (exact), bank of {report['bank_size']} inputs")
    print(f"sigma_1 = {report['sigma_1']:.6g} at t = {report['t_ref']} "
          f"(numerical at {args.digits} digits); eps = {report['eps']:.3g} (float64)")
    header = ["order (exact)", "multiplicity (exact)", "c range (numerical)",
              "float64 loss starts below t", "band lost below t"]
    rows = [[str(b["order"]), str(b["multiplicity"]),
             f"{min(b['leading_coefficients']):.3g}..{max(b['leading_coefficients']):.3g}",
             _t(b["float64_loss_starts_below_t"]), _t(b["float64_lost_below_t"])]
            for b in report["bands"]]
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    for r in [header] + rows:
        print("  " + "  ".join(c.rjust(w) for c, w in zip(r, widths)))
    print(f"at t = {report['t_min']}: float64 resolves rank about {report['float64_rank_at_t_min']} "
          f"of {report['rank']} (predicted, numerical); resolving every band needs about "
          f"{report['digits_needed_at_t_min']} digits")
    return 0


def _t(value: float | None) -> str:
    return "never" if value is None else f"{value:.4g}"
