"""``symattn variant``: spectrum or dimension of a stack with skips, masks, multi-head layers.

``symattn variant spectrum|dimension (--spec FILE.toml | --depth D --width d ...
[--residual] [--mask ...] [--heads H])``. The same analyses are reached from
``symattn spectrum`` and ``symattn dimension`` with the variant options; this
command also reads mixed stacks from a TOML spec. Every result outside the
paper's hypotheses is labelled "computed; no theorem in the paper covers this
architecture" and has ``"theorem": null`` in its JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from symattn.commands import add_seed_argument, int_range
from symattn.commands.variant_options import add_variant_arguments, layer_kind_from_args, read_spec
from symattn.core.errors import SymattnError
from symattn.core.limits import MAX_SERIES_ORDER, graph_evaluation_bytes, require_memory, require_order

__all__ = ["architecture", "register", "run", "run_variant", "format_variant", "check_variant_work"]


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``variant`` subcommand."""
    p = subparsers.add_parser(
        "variant", help="spectrum or dimension of stacks with skips, masks, multi-head layers",
        description="Contact spectrum or neuromanifold dimension of a variant attention stack "
                    "(beyond the paper; computed and labelled, never quoted from a theorem).",
        epilog="example: symattn variant spectrum --depth 2 --width 2 --tokens 3 --residual --mask causal")
    p.add_argument("analysis", choices=["spectrum", "dimension"], help="what to compute")
    p.add_argument("--depth", type=int_range(1, 16), metavar="D", help="number of layers (without --spec)")
    p.add_argument("--width", type=int_range(1, 64), metavar="d", help="token width (without --spec)")
    p.add_argument("--rank", default="1", metavar="R", help="head rank, or a comma list per layer (default 1)")
    p.add_argument("--tokens", type=int_range(2, 64), default=2, metavar="n", help="tokens (default 2)")
    p.add_argument("--normalizer", default="exp", metavar="PHI", help="normalizer(s) (default exp)")
    add_variant_arguments(p, spec=True)
    p.add_argument("--bank", default="auto", metavar="N|auto", help="spectrum bank size (default auto)")
    p.add_argument("--values", choices=["identity", "random"], default="identity",
                   help="summed heads' values along the spectrum path (default identity)")
    p.add_argument("--order", type=int_range(1, MAX_SERIES_ORDER), default=None, metavar="N",
                   help="spectrum truncation in t (default automatic)")
    add_seed_argument(p, "the path, point and bank")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run)
    return p


def architecture(args: argparse.Namespace):
    """The :class:`~symattn.model.variants.VariantArchitecture` of ``--spec`` or of the options."""
    from symattn.model.architecture import Architecture

    if args.spec is not None:
        if layer_kind_from_args(args) is not None or args.depth or args.width:
            raise SymattnError("give either --spec or --depth/--width with the layer options, not both")
        return read_spec(args.spec)
    if args.depth is None or args.width is None:
        raise SymattnError("give --spec FILE.toml, or --depth D and --width d")
    base = Architecture.uniform(args.depth, args.width, args.rank, args.tokens, args.normalizer)
    kind = layer_kind_from_args(args)
    return base if kind is None else base.with_layers(**kind)


def check_variant_work(args: argparse.Namespace, arch, order: int, inputs: int) -> None:
    """Refuse work estimated beyond ``--max-memory`` (heads count as layers)."""
    require_order(order, "this analysis")
    layers = sum(len(k.heads) for k in arch.layers)
    nbytes = graph_evaluation_bytes(order, arch.native_size, inputs, arch.tokens, arch.d, layers)
    require_memory(nbytes, "this analysis", getattr(args, "max_memory", None))


def run(args: argparse.Namespace) -> int:
    return run_variant(args, architecture(args), args.analysis)


def run_variant(args: argparse.Namespace, arch, analysis: str) -> int:
    """Run ``analysis`` (``spectrum`` or ``dimension``) on ``arch`` and print it; also
    used by ``symattn spectrum`` and ``symattn dimension`` with the variant options."""
    from symattn.commands import bank_argument
    from symattn.analyses.jets import prop_c1_degree
    from symattn.theorems.formulas import divisibility_orders
    from symattn.analyses.variant_spectrum import variant_dimension, variant_spectrum

    start = time.perf_counter()

    def progress(msg: str) -> None:
        print(f"[{time.perf_counter() - start:7.2f} s] {msg}", file=sys.stderr, flush=True)

    per_input = arch.d * arch.tokens
    if analysis == "spectrum":
        bank = bank_argument(args.bank)
        inputs = bank if isinstance(bank, int) else 3 * (-(-arch.native_size // per_input) + 1)
        check_variant_work(args, arch, args.order or 2 * max(divisibility_orders(arch)) + 4, inputs)
        res = variant_spectrum(arch, bank=bank, seed=args.seed, values=args.values, order=args.order,
                               progress=progress)
    else:
        check_variant_work(args, arch, 2 * prop_c1_degree(arch) + 2,
                           2 * (-(-arch.native_size // per_input) + 1))
        res = variant_dimension(arch, seed=args.seed)
    print(json.dumps(res.to_json(), indent=2) if args.json else format_variant(res))
    return 0


def format_variant(res) -> str:
    """Text of a :class:`~symattn.analyses.variant_spectrum.VariantSpectrum` or ``VariantDimension``."""
    lines = [f"architecture: {res.architecture}",
             f"theorem: {res.theorem or 'none (computed; no theorem in the paper covers this architecture)'}"]
    if hasattr(res, "bands"):
        lines += [f"  parameters {res.parameters}, bank {res.bank_size}, truncation t^{res.order}", "",
                  f"  {'block':<12} {'order':>6} {'multiplicity':>13}"]
        lines += [f"  {b['block']:<12} {b['order']:>6} {b['multiplicity']:>13}" for b in res.bands]
        lines += [f"  {'kernel':<12} {'zero':>6} {res.kernel:>13}  {res.kernel_kinds}", "",
                  f"  rank {res.rank}, undecided {res.undecided}; certificate: {res.certificate}; "
                  f"{res.seconds:.2f} s"]
    else:
        lines += [f"  dimension {res.dimension if res.certified else 'undecided'} "
                  f"({'certified: bounds meet' if res.certified else 'bounds differ'})",
                  f"  lower bound {res.lower_bound} (rank mod p), upper bound {res.upper_bound} "
                  f"(P - rank of declared symmetries {res.symmetries}), parameters {res.parameters}"]
    for p in res.head_permutations:
        lines.append(f"  layer {p['layer']}: head permutations of equal-shape heads {p['classes']}: a "
                     f"finite group of order {p['group_order']}, {p['generators']} generating "
                     f"transpositions verified (exact series): {p['verified']}")
    lines += [f"  note: {n}" for n in res.notes]
    return "\n".join(lines)

