"""``symattn spectrum``: the exact native contact spectrum of an architecture.

Theorem 4 / Prop. D.1 along ``Q_i = t U_i, K_i = t W_i, V_i = I`` (or fixed
generic invertible values), on a seeded bank: Smith orders of ``J(t)``, their
multiplicities and blocks, the exact kernel, and whether the bank separates.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from symattn.commands import (add_architecture_arguments, add_plot_argument, add_seed_argument, check_plot,
                              architecture_from_args, bank_argument, int_range, plot_written,
                              require_graph_memory)
from symattn.commands.variant_options import add_variant_arguments, layer_kind_from_args
from symattn.coq.cli import add_coq_argument, check_coq_option, write_certificates
from symattn.core.errors import SymattnError
from symattn.core.limits import MAX_SERIES_ORDER
from symattn.model.architecture import Architecture
from symattn.core.provenance import architecture_inputs, provenance, spectrum_kind
from symattn.theorems.formulas import divisibility_orders
from symattn.analyses.spectrum import Spectrum, native_spectrum

__all__ = ["check_work", "format_spectrum", "register", "run"]


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
    p.add_argument("--values", choices=["identity", "random"], default="identity",
                   help="V_i = I along the path (identity, default) or seeded random values")
    p.add_argument("--method", choices=["modular", "exact"], default="modular",
                   help="modular (fast, certified; default) or exact (Smith form over Q[[t]]; "
                        "small cases)")
    p.add_argument("--order", type=int_range(1, MAX_SERIES_ORDER), default=None, metavar="N",
                   help="truncation in t (default: automatic)")
    add_plot_argument(p, "draw log sigma against log t for the bands with their leading "
                         "coefficients")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    add_coq_argument(p, force=False)  # --force comes with --plot
    add_variant_arguments(p)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    check_plot(args)
    check_coq_option(args)
    arch = architecture_from_args(args)
    kind = layer_kind_from_args(args)
    if kind is not None:  # skips, masks, heads: symattn.analyses.variant_spectrum
        from symattn.commands.variant import run_variant
        from symattn.model.variants import with_layers

        check_coq_option(args, variants=True)
        return run_variant(args, with_layers(arch, kind), "spectrum")
    check_work(args, arch, args.bank, args.method, args.order)
    start = time.perf_counter()

    def progress(msg: str) -> None:
        print(f"[{time.perf_counter() - start:7.2f} s] {msg}", file=sys.stderr, flush=True)

    s = native_spectrum(arch, bank=bank_argument(args.bank), seed=args.seed, values=args.values,
                        method=args.method, order=args.order, progress=progress,
                        leading=args.plot is not None)
    coq = None
    if args.coq:
        from symattn.coq.cases import spectrum_case

        coq = write_certificates(args.coq, [spectrum_case(arch, bank=bank_argument(args.bank), seed=args.seed,
                                                          values=args.values, spectrum=s)], args.force)
    if args.plot:
        plot_spectrum(s, args.plot, args.force)
        plot_written(args.plot)
    if args.json:
        out = s.to_json()
        if coq:
            out["coq"] = coq
        out["provenance"] = provenance(spectrum_kind(out), {
            **architecture_inputs(arch), "bank": args.bank, "seed": args.seed, "values": args.values,
            "method": args.method, "order": args.order})
    print(json.dumps(out, indent=2) if args.json else format_spectrum(arch, s))
    if coq and not args.json:
        print(coq)
    return 0


def check_work(args: argparse.Namespace, arch: Architecture, bank: str = "auto",
               method: str = "modular", order: int | None = None) -> None:
    """Refuse a spectrum whose series Jacobian is estimated beyond ``--max-memory``.

    The truncation is the automatic first one (largest divisibility order + 2;
    it grows only when orders stay undecided) or ``--order``; the bank is
    ``--bank`` or, for ``auto``, about 1.5 rows per parameter.
    """
    betas = divisibility_orders(arch)
    order = order or max(betas) + 2
    P = arch.native_size
    bank = bank_argument(bank)
    inputs = bank if isinstance(bank, int) else -(-3 * P // (2 * arch.tokens * arch.widths[-1])) + 1
    require_graph_memory(args, "this spectrum", arch, order, P, inputs, exact=method == "exact")


def format_spectrum(arch: Architecture, s: Spectrum) -> str:
    """Human-readable table of a :class:`~symattn.analyses.spectrum.Spectrum`."""
    status = ("exact (Smith form over Q[[t]])" if s.method == "exact" else "modular over F_p")
    lines = [
        f"native contact spectrum: D = {arch.depth}, d = {arch.d}, r = {list(arch.ranks)}, "
        f"n = {arch.tokens}, phi = {[p.name for p in arch.normalizers]}",
        f"  parameters {s.parameters}, bank {s.bank_size} inputs "
        f"({'separating' if s.bank_separating else 'NOT separating'}), truncation t^{s.order}",
        "",
        f"  {'block':<32} {'order':>6} {'multiplicity':>13}",
    ]
    for b in s.bands:
        lines.append(f"  {b.block:<32} {b.order:>6} {b.multiplicity:>13}")
    lines += [
        f"  {'exact kernel (gauges, interfaces)':<32} {'zero':>6} {s.kernel:>13}",
        "",
        f"  units {s.units}, rank {s.rank}, kernel {s.kernel}; method: {status}; "
        f"certificate: {s.certificate}; {s.seconds:.2f} s",
    ]
    lines += [f"  note: {n}" for n in s.notes]
    return "\n".join(lines)


def plot_spectrum(s: Spectrum, path: str, force: bool = False) -> None:
    """log sigma against log t: each band ``c t^order`` with its leading coefficients."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from symattn.core.output import save_figure

    if not any(b.leading for b in s.bands):
        raise SymattnError("no leading coefficients to plot: the spectrum is not certified "
                           "(use a separating bank, e.g. --bank auto)")
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
