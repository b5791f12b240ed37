"""``symattn sensitivity --depth D --width d --rank R --tokens n --normalizer PHI``.

For an architecture on the Theorem 4 path ``Q_i = t U_i``, ``K_i = t W_i``,
``V_i = I`` (seeded rational ``U_i, W_i`` and bank, as in ``symattn spectrum``)
prints the contact bands ``sigma ~ c t^beta`` (orders and multiplicities exact,
from the certified Smith form of :func:`symattn.analyses.spectrum.native_spectrum`), the
leading coefficients ``c`` measured at a moderate ``t`` in high precision, the
``t`` below which float64 (``eps sigma_1``) no longer resolves each band, the
float64 rank to expect at ``--t-min`` and the digits that resolve every band
there (:func:`symattn.analyses.sensitivity.sensitivity`). The working precision is chosen from
the exact orders and ``--t-ref`` and verified by a second run at 1.5 times the
digits.
"""

from __future__ import annotations

import argparse
import json

from symattn.commands import add_architecture_arguments, float_range, int_range
from symattn.commands.spectrum import check_work
from symattn.commands.layer_options import add_layer_arguments, architecture_or_spec
from symattn.core.limits import MAX_DIGITS
from symattn.analyses.sensitivity import sensitivity
from symattn.core.provenance import architecture_inputs, numerical_kind, provenance

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
    add_architecture_arguments(parser, required=False)
    parser.add_argument("--t-min", type=float_range(1e-100, 0.999), default=0.01,
                        help="smallest t of interest, in [1e-100, 0.999] (default 0.01)")
    parser.add_argument("--t-ref", type=float_range(1e-6, 0.999), default=0.25,
                        help="moderate t where the leading coefficients are measured (default 0.25)")
    parser.add_argument("--digits", type=int_range(15, MAX_DIGITS), default=None,
                        help="smallest working digits of that measurement (default: chosen from "
                             "the exact orders and --t-ref, then verified at 1.5x the digits)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    add_layer_arguments(parser, spec=True)
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
    arch = architecture_or_spec(args)
    check_work(args, arch)
    report = sensitivity(arch, t_min=args.t_min, t_ref=args.t_ref, digits=args.digits)
    if args.json:
        report["provenance"] = provenance(numerical_kind(report["digits"]), {
            **architecture_inputs(arch), "t_min": args.t_min, "t_ref": args.t_ref, "digits": args.digits})
        print(json.dumps(report, indent=2))
        return 0
    if arch.parts():
        print(f"stack: {arch.parts()}")
    if report["theorem"] is None:
        print(f"theorem: none ({report['label']})")
    tier = "numerical" if "unexplained" in report else "exact"  # the numerical bands of a transformer block
    extra = f", unexplained kernel {report['unexplained']} (numerical)" if tier == "numerical" else ""
    print(f"sensitivity along Q_i = t U_i, K_i = t W_i, V_i = I: rank {report['rank']} ({tier}), "
          f"kernel {report['kernel']} (exact){extra}, bank of {report['bank_size']} inputs")
    if tier == "numerical":
        print(f"  tier: {report['kind']}")
    print(f"sigma_1 = {report['sigma_1']:.6g} at t = {report['t_ref']} "
          f"(numerical at {report['digits']} digits; every singular value agrees with the "
          f"{report['verified_at_digits']}-digit run to "
          f"{'float64 resolution' if report['agreement'] == 0 else format(report['agreement'], '.1e')}"
          f"); eps = {report['eps']:.3g} (float64)")
    header = [f"order ({tier})", f"multiplicity ({tier})", "c range (numerical)",
              "float64 loss starts below t", "band lost below t"]
    rows = [[str(b["order"]), str(b["multiplicity"]),
             f"{min(b['leading_coefficients']):.3g}..{max(b['leading_coefficients']):.3g}",
             _threshold(b["float64_loss_starts_below_t"]), _threshold(b["float64_lost_below_t"])]
            for b in report["bands"]]
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    for r in [header] + rows:
        print("  " + "  ".join(c.rjust(w) for c, w in zip(r, widths)))
    print(f"at t = {report['t_min']}: float64 resolves rank about {report['float64_rank_at_t_min']} "
          f"of {report['rank']} (predicted, numerical); resolving every band needs about "
          f"{report['digits_needed_at_t_min']} digits")
    return 0


def _threshold(value: float | None) -> str:
    return "never" if value is None else f"{value:.4g}"
