"""``symattn bank``: least separating bank size of a bank family (the paper's open problem).

``symattn bank --depth D --width d --rank r --tokens n --normalizer PHI
[--family random|integer|sparse] [--trials T] [--json]``: the least ``m``
at which the family's bank separates (``E(0)`` of App. D.3 full rank, proved
exactly at the bank returned), why ``m - 1`` fails (evidence over ``T``
banks, or proved below the counting bound), the counting bound, and whether
the threshold was the same for every seed (``generic``). See :mod:`symattn.analyses.bank`.
With the layer options (``--residual``, ``--mask``, ``--heads``, ``--combine``, ``--spec``) the
bank separates when it reaches the certified orders of a reference bank of the
family (no divided frame; ``theorem`` null).
"""

from __future__ import annotations

import argparse
import json

from symattn.commands import add_architecture_arguments, add_seed_argument, int_range, require_graph_memory
from symattn.commands.layer_options import add_layer_arguments, architecture_or_spec

__all__ = ["register", "run"]


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``bank`` subcommand."""
    from symattn.analyses.bank import FAMILIES

    p = subparsers.add_parser(
        "bank", help="least separating bank size of a bank family (E(0) full rank)",
        description="Least bank size m at which banks of a family separate (E(0) of App. D.3 of full "
                    "rank: proved exactly at the bank returned), evidence for m - 1, and the counting bound.",
        epilog="example: symattn bank --depth 2 --width 3 --rank 1 --tokens 3 --family integer --json")
    add_architecture_arguments(p, required=False)
    p.add_argument("--family", choices=FAMILIES, default="random", help="bank family (default random)")
    p.add_argument("--trials", type=int_range(1, 32), default=3, metavar="T",
                   help="seeds tried for the threshold and for m - 1 (default 3)")
    p.add_argument("--max-size", type=int_range(1, 512), default=64, metavar="M",
                   help="largest bank tried (default 64)")
    add_seed_argument(p, "the path and the first bank")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    add_layer_arguments(p, spec=True)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from symattn.analyses.bank import least_bank
    from symattn.theorems import statements
    from symattn.theorems.formulas import divisibility_orders

    arch = architecture_or_spec(args)
    framed = statements.APP_D3.covers(arch)
    # the divided frame needs J mod t^(beta + 1); a reference spectrum raises its truncation
    order = max(divisibility_orders(arch)) // 2 + 2 if framed else 2 * max(divisibility_orders(arch)) + 4
    require_graph_memory(args, "this bank search", arch, order, arch.native_size, args.max_size)
    res = least_bank(arch, args.family, args.trials, args.seed, args.max_size)
    if args.json:
        print(json.dumps(res.to_json(), indent=2))
        return 0
    print(f"least separating bank: D = {arch.depth}, d = {arch.d}, r = {list(arch.ranks)}, "
          f"n = {arch.tokens}, family {res.family}")
    if arch.parts():
        print(f"  {arch.parts()}")
    why = ("E(0) full rank mod p, hence over Q" if framed else
           "the certified orders of the reference bank reached mod p, hence over Q")
    print(f"  least size m      {res.least_size}  (exact: {why})")
    print(f"  counting bound    {res.counting_bound}  (exact)")
    print(f"  generic           {res.generic}  (least size by seed {res.least_by_seed})")
    print(f"  theorem           {res.theorem or 'none (computed; no theorem in the paper covers this architecture)'}")
    for note in res.notes:
        print(f"  note: {note}")
    return 0
