"""``symattn conjecture``: contact orders of a variant family, fitted and tested on held-out depths.

``symattn conjecture --family residual|causal|multihead [--width d] [--rank r]
[--tokens n] [--max-depth D] [--fit F] [--plot FILE] [--json]``: certified
spectra at depths 1..D, the simplest formula (constant, ``a D + b``, or
``x_D = a x_{D-1} + b``) fitted on depths 1..F for the top order of the last
layer, the kernel and the rank, each tested on depths F+1..D. Nothing here is
a theorem: every formula is a conjecture with its evidence (see
:mod:`symattn.analyses.conjectures`).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from symattn.commands import add_plot_argument, add_seed_argument, check_plot, int_range, plot_written

__all__ = ["register", "run", "plot_bands"]

#: Default deepest depth per family (multi-head spectra grow fastest).
DEFAULT_DEPTH = {"residual": 4, "causal": 4, "multihead": 3, "ln-post": 3, "post-norm": 3, "pre-norm": 3, "mlp": 3,
                 "mlp-poly": 3, "layer": 2}

#: The families' descriptions (``--family``).
FAMILY_HELP = ("residual (X + V S_A(X)), causal (causal masks), multihead (two summed heads); transformer "
               "blocks: ln-post (attention + post-norm LayerNorm), post-norm and pre-norm (blocks with skip), "
               "mlp (attention + tanh MLP, m = 2), mlp-poly (MLP x + x^2/2), layer (the full post-norm layer: "
               "biases, W_O, GELU MLP); blocks fall back to the numerical spectrum where the exact series "
               "refuse them, said per row")


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``conjecture`` subcommand."""
    p = subparsers.add_parser(
        "conjecture", help="fit contact-order formulas for a variant family, test on held-out depths",
        description="Certified spectra of a variant family over depths, the simplest recursion or "
                    "closed form fitted on the small depths and tested on the larger ones.",
        epilog="example: symattn conjecture --family causal --json")
    p.add_argument("--family", choices=list(DEFAULT_DEPTH), required=True, help=FAMILY_HELP)
    p.add_argument("--width", type=int_range(1, 4), default=2, metavar="d", help="token width (default 2)")
    p.add_argument("--rank", type=int_range(1, 4), default=1, metavar="r", help="head rank (default 1)")
    p.add_argument("--tokens", type=int_range(2, 6), default=3, metavar="n", help="tokens (default 3)")
    p.add_argument("--max-depth", type=int_range(2, 6), default=None, metavar="D",
                   help="deepest depth computed (default 4; multihead 3)")
    p.add_argument("--fit", type=int_range(1, 5), default=None, metavar="F",
                   help="fit on depths 1..F, test on F+1..D (default D - 1)")
    add_seed_argument(p, "the paths and banks")
    add_plot_argument(p, "draw the bands (order against layer, area ~ multiplicity) of the deepest "
                         "spectrum beside the paper's orders")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    check_plot(args)
    from symattn.commands import require_graph_memory
    from symattn.analyses.conjectures import FAMILY_KINDS, conjectures
    from symattn.model.architecture import Architecture
    from symattn.theorems.formulas import divisibility_orders

    depth = args.max_depth or DEFAULT_DEPTH[args.family]
    fit = args.fit or depth - 1
    deepest = Architecture.uniform(depth, args.width, args.rank, args.tokens, **FAMILY_KINDS[args.family])
    require_graph_memory(args, "this analysis", deepest, 4 * max(divisibility_orders(deepest)) + 8,
                         deepest.native_size, 3 * (-(-deepest.native_size // (args.width * args.tokens)) + 1))
    start = time.perf_counter()

    def progress(msg: str) -> None:
        print(f"[{time.perf_counter() - start:7.2f} s] {msg}", file=sys.stderr, flush=True)

    out = conjectures(args.family, args.width, args.rank, args.tokens, depth, fit, seed=args.seed,
                      progress=progress)
    if args.plot:
        plot_bands(out, args.plot, args.force)
        plot_written(args.plot)
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"family {out['family']}: d = {args.width}, r = {args.rank}, n = {args.tokens}; {out['label']}")
    print(f"  {'D':>2}  {'rank':>5} {'kernel':>6} {'unexpl.':>7} {'top order':>9} {'jet':>4}  tier; claim  "
          "bands (layer, order, mult.)")
    for row in out["table"]:
        print(f"  {row['depth']:>2}  {row['rank']:>5} {row['kernel']:>6} {row['unexplained']:>7} "
              f"{row['top_order_last_layer']!s:>9} {row['jet_degree']!s:>4}  {row['tier']}; {row['claim']}  "
              f"{row['bands']}")
    for c in out["conjectures"]:
        verdict = "survived" if c["held_out_ok"] else "FAILED"
        held = ", ".join(f"D = {h['depth']}: computed {h['computed']}, predicted {h['predicted']}"
                         for h in c["held_out"])
        print(f"  conjecture ({verdict}): {c['quantity']}: {c['formula']} (fitted on D = {c['fitted_on']}; "
              f"held out {held})")
        for e in c["excluded"]:
            print(f"    not fitted: D = {e['depth']}: {e['reason']}")
    return 0


def plot_bands(out: dict, path: str, force: bool = False) -> None:
    """Orders against layer for the deepest spectrum, marker area ~ multiplicity."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from symattn.core.output import save_figure
    from symattn.model.architecture import Architecture
    from symattn.theorems.formulas import divisibility_orders

    row = out["table"][-1]
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    for layer, order, mult in row["bands"]:
        ax.scatter([layer], [order], s=40 * mult, alpha=0.6, color="C0")
        ax.annotate(str(mult), (layer, order), fontsize=7, ha="center", va="center")
    D = row["depth"]
    betas = divisibility_orders(Architecture.uniform(D, 1, 1, 2))
    ax.plot(range(1, D + 1), betas, "k--", lw=1, label="paper: beta_i = 2 3^(i-1) - 1 (no variant)")
    ax.set_yscale("symlog", linthresh=2)
    ax.set_xticks(range(1, D + 1))
    ax.set_xlabel("layer i")
    ax.set_ylabel("Smith order (t-power)")
    ax.set_title(f"{out['family']} family, D = {D}: bands ({row['claim']})", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, path, force, dpi=120)
