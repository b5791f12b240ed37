"""``symattn dimension``: certified neuromanifold dimension of a native attention stack.

``symattn dimension --depth l --widths d0,...,dl --ranks a1,...,al --tokens t
--normalizer PHI [--json]`` prints the dimension of the image of the native
parameters (Henry-Marchetti-Kohn's neuromanifold dimension) with its proven
lower bound (rank mod p, or over Q with ``--method exact``, of the native
Jacobian of jet coefficients at a seeded rational point) and upper bound
(gauges, and rank conditions on the effective tuple), see
:mod:`symattn.analyses.dimension`. ``--hmk`` prints the certified HMK table instead.
JSON keys: ``dimension``, ``parameters``, ``lower_bound``, ``upper_bound``,
``method`` (``certified`` when the bounds meet, else ``exact``/``modular``).
"""

from __future__ import annotations

import argparse
import json

from symattn.analyses.dimension import hmk_table, neuromanifold_dimension
from symattn.commands import add_force_argument, add_seed_argument, int_range, positive_int, require_graph_memory
from symattn.commands.layer_options import add_layer_arguments, with_layer_options
from symattn.coq.cli import add_coq_argument, check_coq_option, write_certificates
from symattn.core.errors import SymattnError
from symattn.analyses.jets import default_rays, prop_c1_degree
from symattn.model.architecture import Architecture
from symattn.model.normalizer import normalizers
from symattn.core.provenance import architecture_inputs, dimension_kind, provenance


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``dimension`` subcommand to ``subparsers``."""
    parser = subparsers.add_parser(
        "dimension", help="certified neuromanifold dimension (HMK), any widths and head ranks",
        description="Dimension of the function space of a native attention stack: a lower bound "
                    "from a modular/exact Jacobian rank and proven upper bounds (gauges, rank "
                    "conditions); 'certified' when they meet.")
    parser.add_argument("--depth", type=positive_int, metavar="l",
                        help="number of layers l (required unless --hmk, which ignores it)")
    parser.add_argument("--widths", metavar="d0,...,dl", help="l + 1 widths (one value: all equal)")
    parser.add_argument("--ranks", metavar="a1,...,al", help="head widths (one value: all equal)")
    parser.add_argument("--tokens", type=int_range(2, 4096), default=3, metavar="t",
                        help="token count t >= 2 (default 3)")
    parser.add_argument("--normalizer", default="exp", metavar="PHI[,PHI...]",
                        help="one normalizer, or one per layer separated by commas (default exp)")
    parser.add_argument("--method", choices=("modular", "exact", "numerical"), default="modular",
                        help="rank of the lower bound mod p (default) or over Q (jets from X = 0), or "
                             "numerical: the ball tier of transformer blocks (a certified rank of the output "
                             "Jacobian on a bank, the exact series refuse biases, irrational LayerNorm roots "
                             "and activations)")
    parser.add_argument("--digits", type=int_range(20, 400), default=60, metavar="N",
                        help="working precision of --method numerical (default 60)")
    add_seed_argument(parser, "the generic point and the rays")
    parser.add_argument("--hmk", action="store_true",
                        help="the certified HMK table (l = 2, t = 3, a = 2, delta = 3..10); "
                             "ignores --depth, --widths, --ranks, --tokens and --method")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    add_coq_argument(parser)
    add_force_argument(parser)
    add_layer_arguments(parser)
    parser.set_defaults(func=run)
    return parser


def _ints(text: str | None, count: int, what: str) -> tuple[int, ...]:
    if not text:
        raise SymattnError(f"--{what} is required (comma-separated integers)")
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        raise SymattnError(f"--{what} takes comma-separated integers, got {text!r}") from None
    if len(values) == 1:
        values = values * count
    if len(values) != count:
        raise SymattnError(f"--{what} needs {count} values, got {len(values)}")
    return tuple(values)


def run(args: argparse.Namespace) -> int:
    """Compute and print the dimension (or the HMK table); return the exit status."""
    check_coq_option(args)
    if args.hmk:
        rows = hmk_table(normalizer=args.normalizer, seed=args.seed)
        coq = None
        if args.coq:
            from symattn.coq.cases import dimension_case

            coq = write_certificates(args.coq, [dimension_case(
                Architecture.uniform(2, row["delta"], 2, 3, args.normalizer), args.seed,
                name=f"hmk_delta{row['delta']}") for row in rows], args.force)
        for row in rows:
            row["provenance"] = provenance(dimension_kind({"certified": row["method"] == "certified"}), {
                "depth": 2, "widths": [row["delta"]] * 3, "ranks": [2, 2], "tokens": 3,
                "normalizer": args.normalizer, "method": "modular", "seed": args.seed})
        if args.json:
            print(json.dumps({"rows": rows, "coq": coq} if coq else rows, indent=2))
            return 0
        print("HMK experiment (l = 2, t = 3, a = 2, all widths delta); params and formula exact, "
              "dimension certified (exact lower bound = exact upper bound)")
        print(f"  {'delta':>5} {'params':>6} {'dimension':>9} {'formula':>7}  method")
        for r in rows:
            print(f"  {r['delta']:>5} {r['parameters']:>6} {r['dimension']!s:>9} "
                  f"{r['formula']:>7}  {r['method']}")
        if coq:
            print(coq)
        return 0
    if args.depth is None or args.depth < 1:
        raise SymattnError("--depth l (a positive integer) is required")
    widths = _ints(args.widths, args.depth + 1, "widths")
    ranks = _ints(args.ranks, args.depth, "ranks")
    base = Architecture(widths, ranks, args.tokens, normalizers(args.normalizer, args.depth))
    return run_dimension(args, with_layer_options(args, base) or base)


def run_dimension(args: argparse.Namespace, arch: Architecture) -> int:
    """Compute and print the dimension of ``arch`` (also ``symattn variant dimension``)."""
    method = getattr(args, "method", "modular")
    check_coq_option(args, arch)
    P = arch.native_size
    if method == "numerical":
        if P > 200:
            raise SymattnError(f"the ball tier of the dimension is limited to 200 native parameters (this stack "
                               f"has {P})")
        from symattn.analyses.dimension import BALL_RANK_MAX_DIGITS, ball_dimension_bytes
        from symattn.core.limits import require_memory

        require_memory(ball_dimension_bytes(arch), "the ball tier of this dimension (balls at up to "
                       f"{BALL_RANK_MAX_DIGITS} digits)", getattr(args, "max_memory", None))
    else:
        require_graph_memory(args, "this dimension", arch, prop_c1_degree(arch) + 1, P,
                             default_rays(arch, P), exact=method == "exact")
    res = neuromanifold_dimension(arch, seed=args.seed, method=method, digits=getattr(args, "digits", 60))
    coq = None
    if getattr(args, "coq", None):
        from symattn.coq.cases import dimension_case, dimension_point

        coq = write_certificates(args.coq, [dimension_case(arch, args.seed, result=res)],
                                 getattr(args, "force", False), expected=[dimension_point(arch, res, args.seed)])
    if args.json:
        out = res.to_json()
        if coq:
            out["coq"] = coq
        out["provenance"] = provenance(dimension_kind(out), {
            **architecture_inputs(arch), "method": method, "seed": args.seed})
        print(json.dumps(out, indent=2))
        return 0
    given = getattr(args, "normalizer", None) if getattr(args, "spec", None) is None else None
    print(format_dimension(arch, res, method, given))
    if coq:
        print(coq)
    return 0


def format_dimension(arch: Architecture, res, method: str, normalizer: str | None = None) -> str:
    """Aligned ``label  value  kind`` rows of a :class:`~symattn.analyses.dimension.Dimension`."""
    from symattn.commands.spectrum import head_permutation_line, hidden_sign_flip_line

    kind = ("certified (bounds meet)" if res.certified else "not certified: bounds differ")
    how = (f"exact ({method} rank: a proven lower bound)" if res.tier == "exact" else
           f"{res.tier}: a proven lower bound")
    rows = [("dimension", res.dimension if res.certified else "undecided", kind),
            ("lower bound", res.lower_bound, how),
            ("upper bound", res.upper_bound, "exact"),
            ("  P - rank(gauges)", res.gauge_bound, "exact"),
            ("  rank conditions", res.rank_condition_bound if res.rank_condition_bound is not None
             else "n/a", "exact" if res.rank_condition_bound is not None else "no effective reduction"),
            ("native parameters", res.parameters, "exact"),
            ("unexplained kernel", res.unexplained, "beyond the declared symmetries (upper - lower)"),
            ("generic claim", res.generic, "(a rank at a point bounds the generic rank from below)"),
            ("seconds", res.seconds, "numerical (wall clock)")]
    width = max(len(r[0]) for r in rows)
    phi = normalizer or ",".join(dict.fromkeys(p.name for p in arch.normalizers))
    lines = [f"dimension: widths {','.join(map(str, arch.widths))}, ranks {','.join(map(str, arch.ranks))}, "
             f"tokens {arch.tokens}, normalizer {phi}"]
    if arch.parts():
        lines.append(f"  {arch.parts()}")
    lines += [f"  {label:<{width}}  {value!s:<10}  {k}" for label, value, k in rows]
    lines += [head_permutation_line(p) for p in res.head_permutations]
    lines += [hidden_sign_flip_line(p) for p in res.hidden_sign_flips]
    lines += [f"  note: {note}" for note in res.notes]
    return "\n".join(lines)
