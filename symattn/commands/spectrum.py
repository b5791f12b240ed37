"""``symattn spectrum``: the exact native contact spectrum of an architecture.

Theorem 4 / Prop. D.1 along ``Q_i = t U_i, K_i = t W_i, V_i = I`` (or fixed
generic invertible values), on a seeded bank: Smith orders of ``J(t)``, their
multiplicities and blocks, the exact kernel, and whether the bank separates.
With the layer options (``--residual``, ``--mask``, ``--heads``, ``--combine``) the
same analysis runs on that stack; no theorem of the paper covers it, which the
output says (``theorem: null`` in the JSON).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from symattn.commands import (add_architecture_arguments, add_plot_argument, add_seed_argument, check_plot,
                              architecture_from_args, bank_argument, int_range, plot_written)
from symattn.commands.layer_options import add_layer_arguments, with_layer_options
from symattn.coq.cli import add_coq_argument, check_coq_option, write_certificates
from symattn.core.errors import SymattnError
from symattn.core.limits import MAX_SERIES_ORDER
from symattn.model.architecture import Architecture
from symattn.core.provenance import architecture_inputs, provenance, spectrum_kind
from symattn.theorems import statements
from symattn.theorems.formulas import divisibility_orders
from symattn.analyses.spectrum import Spectrum, native_spectrum

__all__ = ["check_work", "format_spectrum", "head_permutation_line", "hidden_sign_flip_line", "register", "run",
           "run_spectrum"]


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``spectrum`` subcommand."""
    p = subparsers.add_parser(
        "spectrum", help="exact native contact spectrum (Theorem 4, Prop. D.1)",
        description="Smith factors over k[[t]] of the native bank Jacobian along Q_i = t U_i, "
                    "K_i = t W_i, V_i = I (Theorem 4 / Prop. D.1), computed exactly (Q) or "
                    "modularly (F_p; certificate 'certified' when the lower bounds are proved from the "
                    "model with several primes, 'conditional' when they rest on App. D.2).",
        epilog="example: symattn spectrum --depth 3 --width 4 --rank 2 --tokens 4 --bank 48 --seed 21")
    add_architecture_arguments(p)
    p.add_argument("--bank", default="auto", metavar="N|auto",
                   help="number of seeded random inputs, or auto: grow until the bank separates "
                        "(default auto)")
    add_seed_argument(p, "the bank and the path's random values")
    p.add_argument("--points", type=int_range(1, 8), default=None, metavar="K",
                   help="independent seeded points behind the generic claim (seeds S, S+1, ...; default 1 where "
                        "Theorem 4 covers the stack, else 2; 1: the result is about this point only)")
    p.add_argument("--values", choices=["identity", "random"], default="identity",
                   help="V_i = I along the path (identity, default) or seeded random values")
    p.add_argument("--method", choices=["modular", "exact", "constants", "numerical"], default="modular",
                   help="modular (fast, certified; default; where the modular series refuse a stack, "
                        "LayerNorm or tanh/GELU/SiLU, or its rank falls short of the declared symmetries, it "
                        "continues by the constants route and says so), exact (the orders over Q itself, "
                        "certificate 'exact': each column group's valuation over Q, or the Smith form "
                        "over Q[[t]] by elimination where the columns are not column-reduced; slower "
                        "than modular, see the benchmarks page), constants (exact in Q adjoined the stack's "
                        "constants: LayerNorm's square roots and the activations' values; a column-reduced "
                        "frame with exact zeros and a leading minor certified in balls; certificate "
                        "'certified', the unexplained kernel as a gap of orders >= t^N) or numerical "
                        "(singular-value slopes at 300 digits, on a grown bank)")
    p.add_argument("--order", type=int_range(1, MAX_SERIES_ORDER), default=None, metavar="N",
                   help="truncation in t (default: automatic)")
    add_plot_argument(p, "draw log sigma against log t for the bands with their leading "
                         "coefficients")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    add_coq_argument(p)  # --force comes with --plot
    add_layer_arguments(p)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    check_plot(args)
    check_coq_option(args)
    base = architecture_from_args(args)
    return run_spectrum(args, with_layer_options(args, base) or base)


def run_numerical(args: argparse.Namespace, arch: Architecture) -> int:
    """``--method numerical``: :func:`~symattn.analyses.numerical_spectrum.numerical_path_spectrum`."""
    from symattn.analyses.numerical_spectrum import grown_bank_size, numerical_path_spectrum, require_numerical

    require_numerical(arch, grown_bank_size(arch), 300, "the numerical path spectrum",
                      getattr(args, "max_memory", None))
    start = time.perf_counter()
    n = numerical_path_spectrum(arch, seed=args.seed, progress=lambda msg: print(
        f"[{time.perf_counter() - start:7.2f} s] {msg}", file=sys.stderr, flush=True))
    if args.json:
        print(json.dumps(n.to_json(), indent=2))
        return 0
    bands = ", ".join(f"t^{o} x {m}" for o, m in n.bands)
    print(f"native contact spectrum along Q = t U, K = t W (numerical at {n.digits} digits)\n"
          f"  {arch.describe()}\n  orders: {bands}\n  rank {n.rank} of {n.parameters}; kernel {n.kernel}: "
          f"{n.declared} declared ({n.kernel_kinds}), {n.unexplained} unexplained; bank {n.bank_size}; "
          f"{n.seconds:.1f} s")
    for note in n.notes:
        print(f"  note: {note}")
    return 0


def run_spectrum(args: argparse.Namespace, arch: Architecture) -> int:
    """Compute and print the spectrum of ``arch`` (also ``symattn variant spectrum``)."""
    check_coq_option(args, arch)
    if getattr(args, "method", "modular") == "numerical":
        return run_numerical(args, arch)
    check_work(args, arch, args.bank, getattr(args, "method", "modular"), args.order)
    start = time.perf_counter()

    def progress(msg: str) -> None:
        print(f"[{time.perf_counter() - start:7.2f} s] {msg}", file=sys.stderr, flush=True)

    plot = getattr(args, "plot", None)
    method = getattr(args, "method", "modular")
    s = native_spectrum(arch, bank=bank_argument(args.bank), seed=args.seed, values=args.values,
                        method=method, order=args.order, progress=progress, leading=plot is not None,
                        max_memory_gib=getattr(args, "max_memory", None), points=getattr(args, "points", None))
    coq = None
    if getattr(args, "coq", None):
        from symattn.coq.cases import spectrum_case, spectrum_point

        bank = bank_argument(args.bank)
        coq = write_certificates(args.coq, [spectrum_case(arch, bank=bank, seed=args.seed, values=args.values,
                                                          spectrum=s)], getattr(args, "force", False),
                                 expected=[spectrum_point(arch, s, args.seed, args.values, bank)])
    if plot:
        plot_spectrum(s, plot, getattr(args, "force", False))
        plot_written(plot)
    if args.json:
        out = s.to_json()
        if coq:
            out["coq"] = coq
        out["provenance"] = provenance(spectrum_kind(out), {
            **architecture_inputs(arch), "bank": args.bank, "seed": args.seed, "values": args.values,
            "method": method, "order": args.order})
    print(json.dumps(out, indent=2) if args.json else format_spectrum(arch, s))
    if coq and not args.json:
        print(coq)
    return 0


def check_work(args: argparse.Namespace, arch: Architecture, bank: str = "auto",
               method: str = "modular", order: int | None = None) -> None:
    """Refuse a spectrum whose series Jacobian is estimated beyond ``--max-memory``.

    With the divided frame of App. D.3 the truncation is the automatic first one
    (largest divisibility order + 2; it grows only when orders stay undecided) or
    ``--order`` and the bank is ``--bank`` or, for ``auto``, about 1.5 rows per
    parameter; without it the bank grows until its orders are stable and the
    truncation doubles, so twice the order and three rows per parameter are
    estimated. Heads count as layers. The estimate is
    :func:`~symattn.core.limits.spectrum_bytes` (calibrated on measured peaks); the
    exact route's elimination over Q[[t]], taken only when the columns are not
    column-reduced, is checked again before it starts (:func:`native_spectrum`).
    """
    betas = divisibility_orders(arch)
    P = arch.native_size
    bank = bank_argument(bank)
    if statements.APP_D3.covers(arch):
        order = order or max(betas) + 2
        inputs = bank if isinstance(bank, int) else -(-3 * P // (2 * arch.tokens * arch.widths[-1])) + 1
    else:
        order = order or 2 * max(betas) + 4
        inputs = bank if isinstance(bank, int) else 3 * (-(-P // (arch.widths[-1] * arch.tokens)) + 1)
    from symattn.core.limits import require_memory, require_order, spectrum_bytes

    require_order(order, "this spectrum")
    require_memory(spectrum_bytes(order, P, inputs, arch.tokens, max(arch.widths),
                                  sum(len(layer.heads) for layer in arch.layers),
                                  "exact" if method == "constants" else method),
                   "this spectrum", getattr(args, "max_memory", None))


def format_spectrum(arch: Architecture, s: Spectrum) -> str:
    """Human-readable table of a :class:`~symattn.analyses.spectrum.Spectrum`."""
    status = {"exact": "exact (Smith form over Q[[t]])", "constants": "exact in Q[constants], leading minor in balls"
              }.get(s.method, "modular over F_p")
    from symattn.analyses.constant_spectrum import RANKED_PREFIX

    if s.method == "constants" and any(n.startswith(RANKED_PREFIX) for n in s.notes):
        status = "ranks of the truncations in balls (no exact series)"
    separation = {True: "separating", False: "NOT separating", None: "separation not decided by a divided frame"}
    lines = [
        f"native contact spectrum: D = {arch.depth}, d = {arch.d}, r = {list(arch.ranks)}, "
        f"n = {arch.tokens}, phi = {[p.name for p in arch.normalizers]}",
    ]
    if arch.parts():
        lines.append(f"  {arch.parts()}")
    lines += [
        f"  parameters {s.parameters}, bank {s.bank_size} inputs "
        f"({separation[s.bank_separating]}), truncation t^{s.order}",
        "",
        f"  {'block':<32} {'order':>6} {'multiplicity':>13}",
    ]
    for b in s.bands:
        lines.append(f"  {b.block:<32} {b.order:>6} {b.multiplicity:>13}")
    if s.past:
        lines.append(f"  {'finite orders past t^' + str(s.order):<32} {'>= ' + str(s.order):>6} {s.past:>13}")
    if s.undecided > s.past:
        lines.append(f"  {'gap (orders >= t^' + str(s.order) + ' or zero)':<32} {'>= ' + str(s.order):>6} "
                     f"{s.undecided - s.past:>13}")
    lines += [
        f"  {'exact kernel (gauges, interfaces)':<32} {'zero':>6} {s.kernel:>13}",
        "",
        f"  units {s.units}, rank {s.rank + s.past}, kernel {s.kernel}; method: {status}; "
        f"certificate: {s.certificate} ({s.about}); {s.seconds:.2f} s",
        f"  generic: {s.generic}" + (f" (seed {', '.join(map(str, s.claim['special']))} special)"
                                     if s.claim.get("special") else ""),
    ]
    lines += [head_permutation_line(p) for p in s.head_permutations]
    lines += [hidden_sign_flip_line(p) for p in s.hidden_sign_flips]
    lines += [f"  note: {n}" for n in s.notes]
    return "\n".join(lines)


def head_permutation_line(p: dict) -> str:
    """One line on the verified head permutation group of a layer."""
    return (f"  layer {p['layer']}: head permutations of equal-shape heads {p['classes']}: a finite group of "
            f"order {p['group_order']}, {p['generators']} generating transpositions verified (exact series): "
            f"{p['verified']}")


def hidden_sign_flip_line(p: dict) -> str:
    """One line on the hidden-unit sign flips of a layer's MLP with an odd activation."""
    exact = {True: "verified", False: "FAILED", None: "not decided (irrational constants)"}[p["verified"]]
    return (f"  layer {p['layer']}: hidden-unit sign flips (odd activation, {p['identity']}): a finite group of "
            f"order {p['group_order']} for every parameter value, {p['generators']} generating flips checked: "
            f"exact series {exact}, float64 {'verified' if p['numerical'] else 'FAILED'}")


def plot_spectrum(s: Spectrum, path: str, force: bool = False) -> None:
    """log sigma against log t: each band ``c t^order`` with its leading coefficients."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from symattn.core.output import save_figure

    if not any(b.leading for b in s.bands):
        raise SymattnError("no leading coefficients to plot: the spectrum is not certified "
                           "(use a separating bank, e.g. --bank auto), or no divided frame of App. D.3 "
                           "gives its bands (a stack beyond the paper's model)")
    t = np.logspace(-3, 0, 50)
    fig, ax = plt.subplots(figsize=(6, 4))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, b in enumerate(s.bands):
        for j, c in enumerate(b.leading):
            ax.loglog(t, c * t ** b.order, color=colors[k % len(colors)], lw=1,
                      label=f"{b.block}: t^{b.order} x{b.multiplicity}" if j == 0 else None)
    ax.set_xlabel("t")
    ax.set_ylabel("predicted singular value  c t^order")
    ax.set_title("native contact spectrum (orders exact; coefficients float64)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, path, force, dpi=120)
