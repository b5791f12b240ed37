"""``symattn fiber``: the effective fiber of one tuple (Theorems 1-2), verified.

``symattn fiber --normalizer PHI[,PHI...] --tokens n --L MATRIX --M "MATRIX;MATRIX;..." [--json]``

Matrices are nested lists of integers or exact rationals, JSON-like: both
``[[1,0],[0,"1/3"]]`` and ``[[1,0],[0,1/3]]`` are accepted; the score matrices
are separated by semicolons. Floats such as ``0.3`` are refused (give
``3/10``). The answer comes from :func:`symattn.analyses.fibers.effective_fiber`:
``fiber`` is ``singleton``, ``sign-orbit``, ``free-suffix``, ``zero-readout``
or ``outside-hypotheses``; ``verified`` is true only when there is at least
one check and every exact check (local certificate, series along rational
rays, symbolic identities, witnesses) confirmed it.

Exit status: 0 when every check held (or with ``--no-verify``, or outside the
hypotheses, where nothing is checked); 1 when a check failed (the answer is then
printed as unconfirmed, never as a result); 3 (:data:`EXIT_UNDECIDED_FIBER`)
when no check failed but one is *undecided*: no witness of a forbidden sign flip
within the degree Prop. C.4 proves on the rays tried, a flip for which no degree
is proved and none was found within the search, or (beyond the paper) no
injective jet found. ``--search-degree N`` searches the witnesses through
``rho^N`` at least; ``--seed`` draws other rays. 2 is bad input, as everywhere.

With the layer options (``--residual``, ``--mask``, ``--heads`` or ``--spec``)
the tuple is read as the *score model* of that stack (readout ``L``, per layer
the heads' scores separated by ``|``, values ``I``) and
:func:`symattn.analyses.fibers.fiber` computes the evidence: a local certificate
(injective jet differential) before anything is called determined, sign flips
and head exchanges tested on that model, suffix changes after a zero layer. Its
JSON has ``theorem: null`` and the label "computed; no theorem in the paper
covers this architecture".

A stack with transformer-block parts (``--bias``, ``--norm``, ``--mlp``) has no score model: a
score tuple would describe a different model, so ``--L``/``--M`` are refused for it (exit 2,
one line). ``--native --depth D --width d`` with the layer options gives the fiber evidence at
the seeded native point instead (:func:`symattn.analyses.fibers.native_fiber`): the local
certificate from the dimension there (exact jets where the series run, else the ball tier,
said in the evidence), for any stack.
"""

from __future__ import annotations

import argparse
import json

from symattn.commands import int_range, require_graph_memory
from symattn.commands.layer_options import add_layer_arguments, with_layer_options
from symattn.core.errors import SymattnError
from symattn.analyses.jets import prop_c1_degree
from symattn.model.architecture import Architecture
from symattn.model.normalizer import normalizers
from symattn.analyses.fibers import fiber
from symattn.core.parse import parse_matrix

__all__ = ["EXIT_UNDECIDED_FIBER", "parse_matrix", "register", "run"]

#: Exit status of ``symattn fiber`` when no check failed but one is undecided.
EXIT_UNDECIDED_FIBER = 3


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``fiber`` subcommand to ``subparsers``."""
    parser = subparsers.add_parser(
        "fiber",
        help="the effective fiber of (L, M_1..M_D) by Theorems 1-2, verified exactly",
        description="Decide the effective fiber of (L, M_1, ..., M_D): singleton, sign orbit "
                    "(Theorem 1), free suffix after the first collapse or zero readout "
                    "(Theorem 2), or outside the hypotheses of both; then verify it exactly "
                    "(series along rational input rays, symbolic identities, witnesses).",
    )
    parser.add_argument("--normalizer", required=True, metavar="PHI[,PHI...]",
                        help="one normalizer for all layers or one per layer (catalogue "
                             "names or expressions in s)")
    parser.add_argument("--tokens", required=True, type=int_range(2, 4096), metavar="n",
                        help="token count n >= 2 (required)")
    parser.add_argument("--L", metavar="MATRIX", dest="L",
                        help="readout as nested lists, e.g. '[[1,0],[0,1]]' (required unless --native)")
    parser.add_argument("--M", metavar="MATRIX;MATRIX;...", dest="M",
                        help="score matrices M_1..M_D separated by semicolons, "
                             "e.g. '[[1,0],[0,2]];[[0,1],[-1,0]]'")
    parser.add_argument("--no-verify", action="store_true",
                        help="classify only (then verified is false)")
    parser.add_argument("--search-degree", type=int_range(1, 400), metavar="N", default=None,
                        help="search the witnesses of forbidden sign flips through rho^N at least (default: "
                             "the degree Prop. C.4 proves, else twice the sharp degree)")
    parser.add_argument("--seed", type=int_range(0, 2**31 - 1), default=0, help="seed of the rational rays")
    parser.add_argument("--json", action="store_true", help="print the answer as JSON")
    parser.add_argument("--native", action="store_true",
                        help="fiber evidence at the seeded native point of the stack given by --depth, --width "
                             "(and the layer options or --spec) instead of a score tuple: the only reading of "
                             "a transformer block")
    parser.add_argument("--depth", type=int_range(1, 8), default=None, metavar="D", help="layers (--native)")
    parser.add_argument("--width", type=int_range(1, 16), default=None, metavar="d", help="width (--native)")
    add_layer_arguments(parser, spec=True)
    parser.set_defaults(func=run, undecided_status=EXIT_UNDECIDED_FIBER)
    return parser


def format_fiber(fib, title: str | None = None, exactness: str = "exact") -> str:
    """A short table and the plain-language sentence (``title`` replaces the computed one;
    ``exactness`` names what the checks rest on)."""
    def layers(xs):
        return ", ".join(str(x) for x in xs) if xs else "none"

    status = fib.status
    failed = status == "failed"
    if fib.theorem is None:  # computed evidence of a fiber no theorem classifies
        rows = [("fiber", _headline(fib)),
                ("decided by", "computed evidence (no theorem of the paper covers this architecture)"),
                ("determined", "yes (locally, computed certificate)" if fib.determined else "no"),
                ("sign flips", layers(fib.sign_flips)), ("head exchanges", layers(fib.head_permutations)),
                ("verified", f"yes ({exactness})" if fib.verified else "no")]
        title = title or f"fiber of the score model (computed): {fib.architecture}"
    else:
        rows = [
            ("fiber", _headline(fib)),
            ("decided by", fib.theorem if fib.theorem != "none" else "no statement of the paper"),
            ("first collapse", "none" if fib.first_collapse is None else f"layer {fib.first_collapse}"),
            ("sign-flip layers", layers(fib.sign_flip_layers)),
            ("free layers", layers(fib.free_layers)),
            ("verified", "yes (exact)" if fib.verified else "no"),
        ]
        title = "effective fiber (classification quoted from the statement named; checks computed)"
    rows.append(("about", f"{fib.about} (the fiber of this tuple, not a generic claim)"))
    width = max(len(k) for k, _ in rows)
    lines = [title]
    lines += [f"  {k:<{width}}  {v}" for k, v in rows]
    if failed:
        lines.append(f"The computed checks do not confirm what {fib.theorem or 'the evidence'} predicts for this "
                     "tuple (see the FAIL lines); no answer is claimed.")
    else:
        lines.append(fib.sentence)
        if status == "undecided":
            lines.append("Undecided: a check could not be decided within what is proved (see the UNDECIDED "
                         "lines); nothing failed. --search-degree N searches further, --seed draws other rays.")
    if fib.evidence:
        lines.append(f"checks (computed, {exactness}):")
        mark = {"ok": "ok  ", "failed": "FAIL", "undecided": "UNDECIDED"}
        lines += [f"  {mark[e.status]}  {e.label}: {e.detail}" for e in fib.evidence]
    lines += [f"  note: {n}" for n in fib.notes]
    return "\n".join(lines)


def _headline(fib) -> str:
    status = fib.status
    if status == "failed":
        return f"{fib.fiber} (NOT confirmed: a check failed)"
    return f"{fib.fiber} (undecided: a check is not decided)" if status == "undecided" else fib.fiber


def check_work(args: argparse.Namespace, L: list, Ms: list) -> None:
    """Refuse a verification whose series are estimated beyond the limits.

    The verification expands along rational rays to the Prop. C.1 degree of the
    tuple's depth and looks at every effective parameter.
    """
    d = len(Ms[0])
    arch = Architecture((d,) * len(Ms) + (len(L),), (1,) * len(Ms), args.tokens,
                        normalizers(args.normalizer, len(Ms)))
    require_graph_memory(args, "this fiber verification", arch, prop_c1_degree(arch) + 1,
                         arch.effective_size, 2)


def run(args: argparse.Namespace) -> int:
    """Print the fiber of the given tuple; return the exit status."""
    if args.native:
        return run_native(args)
    if args.L is None or args.M is None:
        raise SymattnError("give --L and --M (a score tuple), or --native with --depth and --width")
    L = parse_matrix(args.L)
    layers = [part for part in args.M.split(";") if part.strip()]
    if not layers:
        raise SymattnError("give at least one score matrix with --M")
    M = [[parse_matrix(h) for h in part.split("|")] for part in layers]
    d = len(M[0][0])
    phis = normalizers(args.normalizer, len(M))
    paper = Architecture((d,) * len(M) + (len(L),), (1,) * len(M), args.tokens, phis)
    arch = with_layer_options(args, Architecture((d,) * (len(M) + 1), (1,) * len(M), args.tokens, phis))
    if arch is None:  # the paper's stack: the readout's width is the output width
        arch = paper
        check_work(args, L, [heads[0] for heads in M])
    else:
        if arch.depth != len(M) or arch.widths[0] != d or arch.tokens != args.tokens:
            raise SymattnError(f"the spec has D = {arch.depth}, d = {arch.widths[0]}, n = {arch.tokens}; the "
                               f"tuple has {len(M)} layers of width {d} and --tokens {args.tokens}")
        require_graph_memory(args, "this fiber verification", arch, prop_c1_degree(arch) + 1,
                             arch.native_size, 2)
    fib = fiber(arch, L, [heads if len(heads) > 1 else heads[0] for heads in M], verify=not args.no_verify,
                seed=args.seed, search_degree=args.search_degree)
    print(json.dumps(fib.to_json(), indent=2) if args.json else format_fiber(fib))
    unbacked = not args.no_verify and fib.fiber != "outside-hypotheses" and not fib.evidence
    if fib.status == "failed" or unbacked:
        return 1
    return EXIT_UNDECIDED_FIBER if fib.status == "undecided" else 0


def run_native(args: argparse.Namespace) -> int:
    """``--native``: :func:`~symattn.analyses.fibers.native_fiber` at the seeded native point."""
    from symattn.analyses.fibers import native_fiber

    if args.L is not None or args.M is not None:
        raise SymattnError("--native reads no score tuple: drop --L and --M")
    base = None
    if args.depth is not None and args.width is not None:
        base = Architecture((args.width,) * (args.depth + 1), (1,) * args.depth, args.tokens,
                            normalizers(args.normalizer, args.depth))
    arch = with_layer_options(args, base) or base
    if arch is None:
        raise SymattnError("--native needs --depth D and --width d (or --spec FILE.toml)")
    if arch.native_size > 200:
        raise SymattnError(f"the native fiber evidence is limited to 200 native parameters (this stack has "
                           f"{arch.native_size})")
    fib = native_fiber(arch, seed=args.seed)
    ball = "balls" in fib.evidence[0].detail
    print(json.dumps(fib.to_json(), indent=2) if args.json else format_fiber(
        fib, f"fiber evidence at the seeded native point (computed): {fib.architecture}",
        "certified lower bound in balls; symmetries checked numerically" if ball else "exact"))
    return 0 if fib.verified else EXIT_UNDECIDED_FIBER
