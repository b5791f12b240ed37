"""``symattn variant``: spectrum or dimension of a stack with skips, masks, multi-head layers.

``symattn variant spectrum|dimension (--spec FILE.toml | --depth D --width d ...
[--residual] [--mask ...] [--heads H])``. The same analyses as ``symattn spectrum``
and ``symattn dimension`` (one implementation each); this command also reads
mixed stacks from a TOML spec. Every result outside the paper's hypotheses is
labelled "computed; no theorem in the paper covers this architecture" and has
``"theorem": null`` in its JSON.
"""

from __future__ import annotations

import argparse

from symattn.commands import add_seed_argument, int_range
from symattn.commands.layer_options import add_layer_arguments, layer_kind_from_args, read_spec
from symattn.core.errors import SymattnError
from symattn.core.limits import MAX_SERIES_ORDER

__all__ = ["architecture", "register", "run"]


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
    add_layer_arguments(p, spec=True)
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
    """The :class:`~symattn.model.architecture.Architecture` of ``--spec`` or of the options."""
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


def run(args: argparse.Namespace) -> int:
    """The spectrum or dimension of the stack: the same analyses as ``symattn spectrum`` and
    ``symattn dimension`` (:func:`~symattn.commands.spectrum.run_spectrum`,
    :func:`~symattn.commands.dimension.run_dimension`)."""
    from symattn.commands.dimension import run_dimension
    from symattn.commands.spectrum import run_spectrum

    arch = architecture(args)
    return run_spectrum(args, arch) if args.analysis == "spectrum" else run_dimension(args, arch)
