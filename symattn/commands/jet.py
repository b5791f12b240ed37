"""``symattn jet``: the sharp zero-input jet degree of Theorem 3 / Prop. C.1, computed.

``symattn jet --depth D --width d --tokens n --normalizer PHI[,PHI...] [--json]``
computes, at a seeded random rational effective tuple (``L != 0``,
``sym M_i != 0``; ``--skew`` makes chosen prefix scores skew), the least
degree ``N`` whose jet ``T_N`` has injective differential (rank of the
ray-coefficient Jacobian mod p: a proof) and whether every lower jet is
independent of the last score ``M_D`` (exact over Q), beside the degree of
Prop. C.1 (or of Prop. C.3 for skew prefixes with two tokens). JSON keys:
``sharp_degree``, ``lower_jets_independent_of_last``, ``immersion``,
``method``, ``seconds`` (and ``formula``, ``formula_source``, ``parameters``,
``rays``, ``notes``).

With the variant options (``--residual``, ``--mask``, ``--heads``, ``--combine``,
or ``--spec FILE.toml``) the sharp degree of the variant stack is computed by
:func:`symattn.analyses.variant_jets.variant_jet` (the effective masked map, or the
native map modulo the declared symmetries); its JSON adds ``map``,
``symmetry_rank``, ``last_layer_enters`` and ``theorem`` (null outside the
paper's hypotheses).
"""

from __future__ import annotations

import argparse
import json

from symattn.commands import add_seed_argument, int_range, positive_int, require_graph_memory
from symattn.commands.variant_options import add_variant_arguments, variant_from_args
from symattn.coq.cli import add_coq_argument, check_coq_option, write_certificates
from symattn.core.errors import SymattnError
from symattn.theorems.formulas import adaptive_degree, prop_c1_degree
from symattn.analyses.jets import default_rays, generic_effective, sharp_degree
from symattn.model.architecture import Architecture
from symattn.core.provenance import jet_kind, provenance

#: The largest jet degree the command attempts (softmax depth six needs 487).
_DEGREE_LIMIT = 600


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``jet`` subcommand to ``subparsers``."""
    parser = subparsers.add_parser(
        "jet", help="sharp zero-input Taylor jet degree (Theorem 3, Prop. C.1/C.3), computed",
        description="Least N such that the zero-input jet T_N has injective differential at a "
                    "seeded generic rational effective tuple (modular rank: exact lower bound, "
                    "so full rank is a proof), and whether lower jets ignore the last score "
                    "(exact over Q).")
    parser.add_argument("--depth", type=positive_int, metavar="D",
                        help="number of layers (required unless --spec)")
    parser.add_argument("--width", type=positive_int, metavar="d",
                        help="token width (required unless --spec)")
    parser.add_argument("--tokens", type=int_range(2, 4096), default=2, metavar="n",
                        help="token count n >= 2 (default 2)")
    parser.add_argument("--normalizer", default="exp", metavar="PHI[,PHI...]",
                        help="one normalizer, or one per layer separated by commas (default exp)")
    parser.add_argument("--skew", default="", metavar="I[,I...]",
                        help="prefix layers (1-based, < D) whose score is a nonzero skew matrix "
                             "(default none)")
    parser.add_argument("--method", choices=("modular", "exact"), default="modular",
                        help="ranks mod p (default; a full rank is a proof) or over Q")
    parser.add_argument("--max-degree", type=int_range(1, _DEGREE_LIMIT), default=200, metavar="N",
                        help=f"largest degree searched (default 200, at most {_DEGREE_LIMIT})")
    add_seed_argument(parser, "the generic tuple and the rays")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--rank", default="1", metavar="R",
                        help="head rank r_i of variant layers (native map), or a comma list (default 1)")
    add_coq_argument(parser)
    add_variant_arguments(parser, spec=True)
    parser.set_defaults(func=run)
    return parser


def _skew_flags(text: str, depth: int) -> list[bool]:
    flags = [False] * depth
    for item in filter(None, (s.strip() for s in text.split(","))):
        try:
            i = int(item)
        except ValueError:
            raise SymattnError(f"--skew takes layer numbers like 1,2; got {item!r}") from None
        if not 1 <= i < depth:
            raise SymattnError(f"--skew layer {i} must be a prefix layer 1..{depth - 1}")
        flags[i - 1] = True
    return flags


def run(args: argparse.Namespace) -> int:
    """Compute and print the sharp degree; return the exit status."""
    check_coq_option(args)
    base = None
    if args.depth is not None and args.width is not None:
        base = Architecture.uniform(args.depth, args.width, args.rank, args.tokens, args.normalizer)
    variant = variant_from_args(args, base)
    if variant is not None:
        check_coq_option(args, variants=True)
        return _run_variant(args, variant)
    if base is None:
        raise SymattnError("--depth D and --width d are required (or --spec FILE.toml with variant layers)")
    arch = Architecture.uniform(args.depth, args.width, 1, args.tokens, args.normalizer)
    skew = _skew_flags(args.skew, args.depth)
    if any(skew):
        if args.tokens != 2:
            formula, source = None, "none (Prop. C.3 is for two tokens; Cor. C.2 bounds it by 4*3^(D-1)-1)"
        else:
            formula, source = adaptive_degree(arch, skew), "Prop. C.3"
    else:
        formula, source = prop_c1_degree(arch), "Prop. C.1"
    if formula is not None and formula > _DEGREE_LIMIT:
        raise SymattnError(f"the expected degree {formula} is beyond the degree {_DEGREE_LIMIT} this command "
                           "can decide in reasonable time")
    if formula is not None and formula > args.max_degree:
        raise SymattnError(f"the expected degree {formula} exceeds --max-degree {args.max_degree}; "
                           "raise --max-degree to decide it")
    P = arch.effective_size
    require_graph_memory(args, "this jet", arch, formula or args.max_degree, P,
                         default_rays(arch, P),
                         exact=args.method == "exact")
    eta = generic_effective(arch, args.seed, skew=skew)
    res = sharp_degree(arch, eta, seed=args.seed, method=args.method, max_degree=args.max_degree,
                       hint=formula)
    coq = None
    if args.coq:
        from symattn.coq.cases import jet_case

        coq = write_certificates(args.coq, [jet_case(arch, eta, seed=args.seed, result=res)], args.force)
    out = res.to_json()
    out.pop("profile")
    if coq:
        out["coq"] = coq
    out.update(formula=formula, formula_source=source)
    out["provenance"] = provenance(jet_kind(out), {
        "depth": args.depth, "width": args.width, "tokens": args.tokens, "normalizer": args.normalizer,
        "skew": args.skew, "method": args.method, "max_degree": args.max_degree, "seed": args.seed})
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    kind = "exact" if res.method == "exact" else "exact (rank mod p, a lower bound: full rank is a proof)"
    rows = [
        ("sharp degree N", res.sharp_degree if res.sharp_degree is not None else "undecided", kind),
        ("D T_N injective (immersion)", res.immersion, kind),
        ("lower jets independent of M_D", res.lower_jets_independent_of_last, "exact over Q"),
        (f"formula ({source})", formula, "exact"),
        ("effective parameters", res.parameters, "exact"),
        ("rays", res.rays, ""),
        ("seconds", res.seconds, "numerical (wall clock)"),
    ]
    print(f"jet: depth {args.depth}, width {args.width}, tokens {args.tokens}, "
          f"normalizer {args.normalizer}" + (f", skew layers {args.skew}" if any(skew) else ""))
    _print_rows(rows, res.notes)
    if coq:
        print(coq)
    return 0


def _print_rows(rows: list, notes: list) -> None:
    """Aligned ``label  value  kind`` rows, then the notes."""
    width = max(len(r[0]) for r in rows)
    for label, value, k in rows:
        print(f"  {label:<{width}}  {value!s:<10}  {k}")
    for note in notes:
        print(f"  note: {note}")


def _run_variant(args: argparse.Namespace, arch) -> int:
    """The sharp degree of a variant stack (:func:`symattn.analyses.variant_jets.variant_jet`)."""
    from symattn.commands.variant import check_variant_work
    from symattn.analyses.variant_jets import variant_jet

    if any(skew for skew in _skew_flags(args.skew, arch.depth)):
        raise SymattnError("--skew is for the paper's effective map; variant stacks use seeded generic points")
    degree = prop_c1_degree(arch.base)
    if degree > args.max_degree:
        raise SymattnError(f"the first degree tried, {degree}, exceeds --max-degree {args.max_degree}")
    # estimated at one doubling of the first degree (the search grows only when a rank falls short)
    check_variant_work(args, arch, min(args.max_degree, 2 * degree + 1) + 1,
                       4 * default_rays(arch.base, arch.native_size))
    res = variant_jet(arch, seed=args.seed, method=args.method, max_degree=args.max_degree)
    if args.json:
        print(json.dumps(res.to_json(), indent=2))
        return 0
    kind = "exact" if res.method == "exact" else "exact (rank mod p, a lower bound: full rank is a proof)"
    print(f"jet of a variant stack: {res.architecture}")
    print(f"  theorem: {res.theorem or 'none (computed; no theorem in the paper covers this architecture)'}")
    rows = [("map", res.map, ""),
            ("sharp degree N", res.sharp_degree if res.sharp_degree is not None else "undecided", kind),
            ("D T_N injective" + (" mod symmetries" if res.symmetry_rank else ""), res.injective, kind),
            ("last layer first enters", res.last_layer_enters, "exact over Q on the rays"),
            ("parameters", res.parameters, "exact"),
            ("rank of declared symmetries", res.symmetry_rank, "exact"),
            ("rays", res.rays, ""),
            ("seconds", res.seconds, "numerical (wall clock)")]
    _print_rows(rows, res.notes)
    return 0
