"""``symattn reproduce f1|f2|f3 [--json] [--plot FILE.png] [--digits N]``: Appendix F.

Runs one numerical protocol of Appendix F (:mod:`symattn.analyses.numerics`) with the
paper's tokens, paths, ``t`` values, digits and seeds, and prints its results
as an aligned table in which every number is labelled (numerical at N digits,
float64, or exact for ranks and orders from the exact spectrum), or as JSON.
``--plot`` draws Figure 2 (f1), Figure 1(a) (f2) or Figure 1(b) (f3) with
matplotlib's Agg backend. f2 needs PyTorch (its data come from a PyTorch
generator): ``pip install 'symattn[torch]'``.
"""

from __future__ import annotations

import argparse
import json
import sys

from symattn.commands import add_plot_argument, check_plot, int_range, plot_written
from symattn.core.output import save_figure
from symattn.core.errors import SymattnError
from symattn.analyses import protocols
from symattn.core.provenance import numerical_kind, provenance

__all__ = ["register", "run"]

_DEFAULT_DIGITS = {"f1": 110, "f2": 120, "f3": 100}

_EPILOG = """\
examples:
  symattn reproduce f1                    App. F.1 at 110 digits
  symattn reproduce f2 --json             App. F.2 (needs PyTorch) as JSON
  symattn reproduce f3 --plot fig1b.png   App. F.3 and Figure 1(b)"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``reproduce`` subcommand.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The ``symattn`` subcommand collection.
    """
    parser = subparsers.add_parser(
        "reproduce", help="run a numerical protocol of Appendix F (f1, f2, f3)",
        description="Run protocol F.1 (scalar depth-four spectrum), F.2 (full native "
                    "matrix spectrum vs float64 autodiff) or F.3 (one noisy observation). "
                    "Every number is labelled numerical at N digits, float64, or exact.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("protocol", metavar="PROTOCOL", help="f1, f2 or f3")
    parser.add_argument("--digits", type=int_range(15, 2000), default=None, metavar="N",
                        help="working decimal digits, 15 to 2000 (default 110, 120, 100 for "
                             "f1, f2, f3)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    add_plot_argument(parser, "draw the paper's figure")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the protocol; return the exit status.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed ``protocol``, ``digits``, ``json`` and ``plot``.

    Returns
    -------
    int
        0 on success.
    """
    check_plot(args)
    name = args.protocol.lower()
    if name not in _DEFAULT_DIGITS:
        raise SymattnError(f"unknown protocol {args.protocol!r}: choose f1, f2 or f3")
    digits = args.digits if args.digits is not None else _DEFAULT_DIGITS[name]
    if name == "f1":
        result = protocols.protocol_f1(digits)
    elif name == "f2":
        result = protocols.protocol_f2(digits, compare_digits=digits - 30,
                                      progress=lambda m: print(m, file=sys.stderr))
    else:
        result = protocols.protocol_f3(digits)
    data = result.to_json()
    if args.json:
        data["provenance"] = provenance(numerical_kind(digits), {"protocol": name, "digits": digits})
    format_table, plot = _OUTPUTS[name]
    print(json.dumps(data, indent=2) if args.json else format_table(data))
    if args.plot:
        plot(data, args.plot, args.force)
        plot_written(args.plot)
    return 0


def _number(x: float, digits: int = 6) -> str:
    return f"{x:.{digits}g}"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    return ["  " + "  ".join(str(c).rjust(w) for c, w in zip(r, widths)) for r in [header] + rows]


def _format_f1(d: dict) -> str:
    n = d["digits"]
    lines = [f"F.1 scalar depth-four softmax spectrum (numerical at {n} digits)",
             "positive query/key singular values (4 exact factor-gauge zeros omitted):"]
    rows = [[t] + [_number(s) for s in sv] for t, sv in zip(d["t"], d["singular_values"])]
    lines += _table(["t"] + [f"sigma_{j + 1}" for j in range(len(d["predicted"]))], rows)
    lines.append(f"final-pair slopes (t = {d['t'][-2]}, {d['t'][-1]}; numerical at {n} digits):")
    lines += _table(["predicted (exact)", "fitted"],
                    [[str(p), _number(s, 8)] for p, s in zip(d["predicted"], d["slopes"])])
    err = max(abs(p - s) for p, s in zip(d["predicted"], d["slopes"]))
    lines.append(f"max |fitted - predicted|: {_number(err, 3)} (numerical at {n} digits)")
    lines.append(f"weakest positive value at t = {d['t'][-1]}: {_number(d['weakest'])} "
                 f"(numerical at {n} digits)")
    return "\n".join(lines)


def _format_f2(d: dict) -> str:
    n = d["digits"]
    lines = ["F.2 full native matrix spectrum: softmax, d = n = 4, r = 2, D = 3, 48 inputs (seed 21)",
             f"rank {d['rank']}, kernel {d['kernel']} (exact: certified Smith form of the same data)",
             f"band slopes from the final pair t = {d['t'][-2]}, {d['t'][-1]} "
             f"(orders exact, slopes numerical at {n} digits):"]
    lines += _table(["order", "multiplicity", "smallest fit", "largest fit"],
                    [[str(b["order"]), str(b["multiplicity"]), _number(b["slope_min"], 8),
                      _number(b["slope_max"], 8)] for b in d["bands"]])
    lines.append("per t: numerical rank under 1e-10 sigma_1 (float64 autodiff; "
                 f"{n} digits), weak-space sine ({n} digits):")
    lines += _table(["t", "rank float64", f"rank {n} digits", "weak-space sine"],
                    [[t, str(a), str(b), _number(s, 3)] for t, a, b, s in
                     zip(d["t"], d["float64_numerical_rank"], d["high_precision_numerical_rank"],
                         d["weak_space_sine"])])
    sp = d["smallest_positive"]
    lines.append(f"smallest positive value at t = {sp['t']}: {_number(sp['value'])} (numerical at {n} digits)")
    lines.append(f"float64 autodiff vs {n} digits, max relative Frobenius error: "
                 f"{_number(d['ad_relative_error'], 3)} (float64)")
    if d["precision_change"] is not None:
        lines.append(f"largest relative change of a positive value, {n - 30} vs {n} digits: "
                     f"{_number(d['precision_change'], 3)}")
    return "\n".join(lines)


def _format_f3(d: dict) -> str:
    n = d["digits"]
    lines = [f"F.3 one noisy observation with a known prefix (numerical at {n} digits; "
             "noise: numpy.random.default_rng(20261001), 400 draws)",
             f"prefix mean m = {_number(d['m'], 12)}, contrast z = {_number(d['z'], 12)}, "
             f"b = m z^2 = {_number(d['b'], 12)}, f'(0) = {_number(d['slope_at_zero'], 12)}"]
    lines += _table(["alpha", "tau", "MSE", "bias", "relative RMSE"],
                    [[r["alpha"], _number(r["tau"], 3), _number(r["mse"], 4), _number(r["bias"], 4),
                      _number(r["relative_rmse"], 4)] for r in d["rows"]])
    return "\n".join(lines)


def _figure():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _plot_f1(d: dict, path: str, force: bool = False) -> None:
    plt = _figure()
    ts = [float(t) for t in d["t"]]
    fig, ax = plt.subplots(figsize=(5, 4))
    for j, beta in enumerate(d["predicted"]):
        s = [row[j] for row in d["singular_values"]]
        ax.loglog(ts, s, "o", label=f"sigma_{j + 1}")
        anchor = s[-1] / ts[-1] ** beta
        ax.loglog(ts, [anchor * t ** beta for t in ts], "--", color="gray")
    ax.set_xlabel("t")
    ax.set_ylabel(f"singular value (numerical, {d['digits']} digits)")
    ax.set_title("Fig. 2: scalar softmax; guides t^" + ", t^".join(map(str, d["predicted"])),
                 fontsize=10)
    ax.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, path, force)


def _plot_f2(d: dict, path: str, force: bool = False) -> None:
    plt = _figure()
    ts = [float(t) for t in d["t"]]
    fig, ax = plt.subplots(figsize=(5, 4))
    for t, row in zip(ts, d["singular_values"]):
        ax.semilogy([t] * len(row), row, ".", color="C0", markersize=3)
        ax.semilogy([t], [1e-10 * row[0]], "_", color="C3", markersize=12)
    ax.set_xscale("log")
    ax.minorticks_off()
    ax.set_xticks(ts, [str(t) for t in d["t"]])
    ax.set_xlabel("t")
    ax.set_ylabel(f"positive singular values ({d['digits']} digits)")
    ax.set_title(f"Fig. 1(a): {len(d['singular_values'][0])} positive values; red: 1e-10 sigma_1")
    fig.tight_layout()
    save_figure(fig, path, force)


def _plot_f3(d: dict, path: str, force: bool = False) -> None:
    plt = _figure()
    taus = [r["tau"] for r in d["rows"]]
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.loglog(taus, [r["relative_rmse"] for r in d["rows"]], "o-")
    ax.set_xlabel("noise standard deviation tau")
    ax.set_ylabel(f"RMSE(w)/w* ({d['digits']} digits, 400 trials)")
    ax.set_title("Fig. 1(b): recovery of the final factor")
    fig.tight_layout()
    save_figure(fig, path, force)


#: The text table and the plot of each protocol's result.
_OUTPUTS = {"f1": (_format_f1, _plot_f1), "f2": (_format_f2, _plot_f2), "f3": (_format_f3, _plot_f3)}
