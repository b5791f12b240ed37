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

With the layer options (``--residual``, ``--mask``, ``--heads``, ``--combine``,
or ``--spec FILE.toml``) the same analysis (:func:`symattn.analyses.jets.sharp_degree`)
asks the effective masked map, or the native map modulo the declared symmetries;
the JSON always has ``map``, ``symmetry_rank``, ``last_layer_enters`` and
``theorem`` (null outside the paper's hypotheses; the formula columns come from
the statements of :mod:`symattn.theorems.statements`).
"""

from __future__ import annotations

import argparse
import json

from symattn.commands import add_force_argument, add_seed_argument, int_range, positive_int, require_graph_memory
from symattn.commands.layer_options import add_layer_arguments, with_layer_options
from symattn.coq.cli import add_coq_argument, check_coq_option, write_certificates
from symattn.core.errors import SymattnError
from symattn.theorems import statements
from symattn.theorems.formulas import prop_c1_degree
from symattn.theorems.statements import NO_THEOREM
from symattn.analyses.jets import default_rays, generic_effective, sharp_degree
from symattn.analyses.numerical_jets import DEFAULT_DIGITS, NUMERICAL_MAX_DEGREE
from symattn.model.architecture import Architecture
from symattn.core.provenance import jet_kind, provenance

#: The largest jet degree the command attempts (softmax depth six needs 487).
_DEGREE_LIMIT = 600

#: The largest jet degree the numerical tier attempts (its series hold mpmath numbers).
_NUMERICAL_DEGREE_LIMIT = 63


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
    parser.add_argument("--method", choices=("modular", "exact", "numerical"), default="modular",
                        help="ranks mod p (default; a full rank is a proof), over Q, or numerical (mpmath "
                             f"series and singular values at {DEFAULT_DIGITS} digits, expanded around the actual "
                             "scores at X = 0: the tier for biases, LayerNorm and MLP stacks; proves nothing "
                             "beyond numerical)")
    parser.add_argument("--max-degree", type=int_range(1, _DEGREE_LIMIT), default=None, metavar="N",
                        help=f"largest degree searched (default 200, at most {_DEGREE_LIMIT}; numerical: default "
                             f"{NUMERICAL_MAX_DEGREE}, at most {_NUMERICAL_DEGREE_LIMIT})")
    add_seed_argument(parser, "the generic tuple and the rays")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--rank", default="1", metavar="R",
                        help="head rank r_i of variant layers (native map), or a comma list (default 1)")
    add_coq_argument(parser)
    add_force_argument(parser)
    add_layer_arguments(parser, spec=True)
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
    arch = with_layer_options(args, base) or base
    if arch is None:
        raise SymattnError("--depth D and --width d are required (or --spec FILE.toml with layer parts)")
    check_coq_option(args, arch)
    numerical = args.method == "numerical"
    if args.max_degree is None:
        args.max_degree = NUMERICAL_MAX_DEGREE if numerical else 200
    elif numerical and args.max_degree > _NUMERICAL_DEGREE_LIMIT:
        raise SymattnError(f"--max-degree {args.max_degree}: the numerical tier searches at most degree "
                           f"{_NUMERICAL_DEGREE_LIMIT}")
    skew = _skew_flags(args.skew, arch.depth)
    if any(skew) and not statements.THEOREM_3.covers(arch):
        raise SymattnError("--skew is for the paper's effective map; other stacks use seeded generic points")
    formula, source = _formula(arch, skew)
    hint = formula if formula is not None else prop_c1_degree(arch)
    if formula is not None and formula > _DEGREE_LIMIT:
        raise SymattnError(f"the expected degree {formula} is beyond the degree {_DEGREE_LIMIT} this command "
                           "can decide in reasonable time")
    if formula is not None and formula > args.max_degree:
        raise SymattnError(f"the expected degree {formula} exceeds --max-degree {args.max_degree}; "
                           "raise --max-degree to decide it")
    if formula is None and hint > args.max_degree:
        raise SymattnError(f"the first degree tried, {hint}, exceeds --max-degree {args.max_degree}")
    effective = arch.effective_map is not None
    if numerical:  # asked for by name: mpmath series at DEFAULT_DIGITS digits, any stack
        from symattn.analyses.numerical_jets import numerical_sharp_degree, require_numerical_jet

        require_numerical_jet(arch, args.max_degree, DEFAULT_DIGITS, getattr(args, "max_memory", None))
        eta = generic_effective(arch, args.seed, skew=skew) if effective else None
        res = numerical_sharp_degree(arch, eta, seed=args.seed, digits=DEFAULT_DIGITS, max_degree=args.max_degree,
                                     hint=formula if effective else None)
        coq = None
    elif effective:  # the effective map: its parameters L, M_i
        P = arch.effective_size
        order = formula if formula is not None else min(args.max_degree, 2 * hint + 1) + 1
        require_graph_memory(args, "this jet", arch, order, P, default_rays(arch, P), exact=args.method == "exact")
        eta = generic_effective(arch, args.seed, skew=skew)
        res = sharp_degree(arch, eta, seed=args.seed, method=args.method, max_degree=args.max_degree,
                           hint=formula).label_generic(formula, given=False)  # eta is the seeded draw
        coq = None
        if args.coq:  # the paper's stack (check_coq_option): its effective map
            from symattn.coq.cases import jet_case, jet_point

            coq = write_certificates(args.coq, [jet_case(arch, eta, seed=args.seed, result=res)], args.force,
                                     expected=[jet_point(arch, eta, res, args.seed)])
    else:  # the native map modulo the declared symmetries, at three seeded points
        # estimated at one doubling of the first degree (the search grows only when a rank falls short)
        require_graph_memory(args, "this jet", arch, min(args.max_degree, 2 * hint + 1) + 1, arch.native_size,
                             4 * default_rays(arch, arch.native_size))
        res = sharp_degree(arch, seed=args.seed, method=args.method, max_degree=args.max_degree)
        coq = None
    out = res.to_json()
    out.pop("profile")
    if coq:
        out["coq"] = coq
    out.update(formula=formula, formula_source=source)
    inputs = {"depth": arch.depth, "width": arch.widths[0], "tokens": arch.tokens,
              "normalizer": args.normalizer if getattr(args, "spec", None) is None
              else [phi.name for phi in arch.normalizers],
              "skew": args.skew, "method": args.method, "max_degree": args.max_degree, "seed": args.seed}
    if arch.parts():
        inputs.update(ranks=list(arch.ranks), layers=arch.describe())
    out["provenance"] = provenance(jet_kind(out), inputs)
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"jet: depth {arch.depth}, width {arch.widths[0]}, tokens {arch.tokens}, "
          f"normalizer {inputs['normalizer'] if isinstance(inputs['normalizer'], str) else ','.join(inputs['normalizer'])}"
          + (f", skew layers {args.skew}" if any(skew) else ""))
    if arch.parts():
        print(f"  {arch.parts()}")
    if res.method == "numerical":
        print(f"  method: numerical at {res.digits} digits (mpmath series and singular values by the gap rule; "
              "nothing proved beyond numerical)")
    if res.theorem is None:
        print(f"  theorem: none ({NO_THEOREM})")
    _print_rows(_rows(res, formula, source), res.notes)
    if coq:
        print(coq)
    return 0


def _formula(arch, skew: list[bool]) -> tuple[int | None, str]:
    """The closed form of the sharp degree and its source, from the statements that cover ``arch``."""
    if not statements.THEOREM_3.covers(arch):
        return None, f"none ({NO_THEOREM})"
    if any(skew):
        if not statements.PROP_C3.covers(arch):
            return None, "none (Prop. C.3 is for two tokens; Cor. C.2 bounds it by 4*3^(D-1)-1)"
        return statements.PROP_C3.closed_form(arch, skew), statements.PROP_C3.short
    return statements.THEOREM_3.closed_form(arch), "Prop. C.1"


def _rows(res, formula, source) -> list:
    """The rows of the text output: the effective map's, or the native map's."""
    kind = ("exact" if res.method == "exact" else f"numerical at {res.digits} digits" if res.method == "numerical"
            else "exact (rank mod p, a lower bound: full rank is a proof)")
    enters = f"numerical at {res.digits} digits" if res.method == "numerical" else "exact over Q"
    if res.map.startswith("effective"):
        rows = [("map", res.map, "")] if res.map != "effective" else []
        return rows + [
            ("sharp degree N", res.sharp_degree if res.sharp_degree is not None else "undecided", kind),
            ("D T_N injective (immersion)", res.immersion, kind),
            ("lower jets independent of M_D", res.lower_jets_independent_of_last, enters),
        ] + ([(f"formula ({source})", formula, "exact")] if res.theorem is not None else []) + [
            ("effective parameters", res.parameters, "exact"),
            ("generic claim", res.generic, "a point's degree bounds the generic one from above"),
            ("rays", res.rays, ""),
            ("seconds", res.seconds, "numerical (wall clock)"),
        ]
    return [("map", res.map, ""),
            ("sharp degree N", res.sharp_degree if res.sharp_degree is not None else "undecided", kind),
            ("D T_N injective" + (" mod symmetries" if res.symmetry_rank else ""), res.immersion, kind),
            ("last layer first enters", res.last_layer_enters, f"{enters} on the rays"),
            ("parameters", res.parameters, "exact"),
            ("rank of declared symmetries", res.symmetry_rank, "exact"),
            ("generic claim", res.generic, "a point's degree bounds the generic one from above"),
            ("rays", res.rays, ""),
            ("seconds", res.seconds, "numerical (wall clock)")]


def _print_rows(rows: list, notes: list) -> None:
    """Aligned ``label  value  kind`` rows, then the notes."""
    width = max(len(r[0]) for r in rows)
    for label, value, k in rows:
        print(f"  {label:<{width}}  {value!s:<10}  {k}")
    for note in notes:
        print(f"  note: {note}")
