"""``symattn bank``: least separating bank size of a bank family (the paper's open problem).

``symattn bank --depth D --width d --rank r --tokens n --normalizer PHI
[--family random|integer|sparse] [--trials T] [--json]``: the least ``m``
at which the family's bank separates (``E(0)`` of App. D.3 full rank, proved
exactly at the bank returned), why ``m - 1`` fails (evidence over ``T``
banks, or proved below the counting bound), the counting bound, and whether
the threshold was the same for every seed (``generic``). See :mod:`symattn.analyses.bank`.
With the layer options (``--residual``, ``--mask``, ``--heads``, ``--combine``, ``--spec``) the
bank separates when it reaches the certified orders of a reference bank of the
family (no divided frame; ``theorem`` null). ``--method numerical [--digits N]``: the least bank whose
numerical spectrum (orders, multiplicities, rank, unexplained kernel) at ``N`` digits equals that of a
large reference bank, the tier of transformer blocks whose exact series are refused (as ``spectrum``, the
exact route does not fall back by itself: it says undecided and names this option). Unresolved slopes are
undecided (exit 1); the result is labelled numerical and proves nothing about smaller banks.
"""

from __future__ import annotations

import argparse
import json

from symattn.commands import add_architecture_arguments, add_seed_argument, int_range, require_graph_memory
from symattn.commands.layer_options import add_layer_arguments, architecture_or_spec
from symattn.core.errors import SymattnError

__all__ = ["register", "run"]


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``bank`` subcommand."""
    from symattn.analyses.bank import FAMILIES, METHODS, NUMERICAL_T_EXPONENT

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
    p.add_argument("--method", choices=METHODS, default="exact",
                   help="exact (E(0) or certified reference orders, proved mod p; default) or numerical "
                        "(the least bank reaching the numerical spectrum of a large reference bank at --digits "
                        "digits: the tier for LayerNorm, GELU, tanh, whose exact series are refused)")
    p.add_argument("--digits", type=int_range(20, 400), default=300, metavar="N",
                   help="working digits of --method numerical (default 300)")
    p.add_argument("--t-exponent", type=int_range(2, 200), default=NUMERICAL_T_EXPONENT, metavar="K",
                   help="--method numerical: final-pair slopes at t = 2^-K, 2^-(K+1) (default "
                        f"{NUMERICAL_T_EXPONENT}; larger K separates close orders, with more digits)")
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
    if args.method == "numerical":
        return run_numerical(args, arch)
    from symattn.analyses.bank import NUMERICAL_T_EXPONENT

    if args.digits != 300 or args.t_exponent != NUMERICAL_T_EXPONENT:
        raise SymattnError("--digits and --t-exponent are for --method numerical")
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


def run_numerical(args: argparse.Namespace, arch) -> int:
    """``--method numerical``: :func:`~symattn.analyses.bank.least_bank` at ``--digits`` digits."""
    from symattn.analyses.bank import least_bank

    res = least_bank(arch, args.family, args.trials, args.seed, args.max_size, method="numerical",
                     digits=args.digits, max_memory_gib=getattr(args, "max_memory", None),
                     t_exponent=args.t_exponent)
    if args.json:
        print(json.dumps(res.to_json(), indent=2))
        return 0
    print(f"least bank reaching the numerical reference spectrum ({res.tier}): {arch.describe()}, "
          f"family {res.family}")
    bands = ", ".join(f"t^{o} x {k}" for o, k in res.reference["bands"])
    if res.least_size is None:
        print(f"  least size m      none found up to {res.reference['bank_size']} inputs  ({res.tier})")
    else:
        print(f"  least size m      {res.least_size}  ({res.tier}: no smaller bank reached the reference at these "
              "t and digits; proves nothing)")
    print(f"  reference         {bands}; rank {res.reference['rank']}, unexplained kernel "
          f"{res.reference['unexplained']}, bank {res.reference['bank_size']}  ({res.tier})")
    print(f"  counting bound    {res.counting_bound}  (from the numerical rank)")
    print(f"  generic           {res.generic}  (least size by seed {res.least_by_seed}; numerical)")
    print("  theorem           none (no theorem of the paper covers this search)")
    for note in res.notes:
        print(f"  note: {note}")
    return 0
