"""``symattn audit FILE``: what a trained attention stack's function determines, and how sensitively.

``symattn audit FILE [--json] [--bank N|auto] [--plot FILE.png] [--tokens n]
[--normalizer PHI] [--digits N] [--seed S] [--heads H] [--budget SECONDS]
[--causal]``

``FILE`` is a NumPy ``.npz`` or ``.safetensors`` file with arrays ``Q1, K1, V1,
..., QD, KD, VD`` (tokens as columns; a leading head axis for multi-head
layers) or a PyTorch ``.pt``/``.pth`` state dict of ``nn.MultiheadAttention``
or ``nn.TransformerEncoderLayer`` layers (``--heads`` gives ``num_heads``);
see :mod:`symattn.audit` for the exact formats, the convention mapping and
what is outside the paper's model. The audit is tiered: cheap exact work
always runs, expensive tiers run when their estimated cost fits ``--budget``,
and the report names the tier of every number. The whole report is built
before anything is printed: bad input prints one error line and exits 2,
never a partial report. Multi-head stacks and ``--causal`` are outside the
paper's hypotheses: the report then has a section (and a JSON key
``variants``) with the same analyses at the model's weights (:func:`symattn.audit.analysis.beyond_the_paper`),
each labelled "computed; no theorem in the paper covers this architecture".
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from symattn.audit import audit, load_model
from symattn.audit.report import format_along, format_report, plot_along, plot_report
from symattn.audit.result import DEFAULT_BUDGET, DEFAULT_MAX_MEMORY
from symattn.commands import add_force_argument, bank_argument, check_plot, plot_path
from symattn.core.errors import SymattnError

__all__ = ["register", "run", "MAX_FILES"]

#: Files one ``symattn audit`` call audits at most.
MAX_FILES = 64


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``audit`` subcommand to ``subparsers``."""
    p = subparsers.add_parser(
        "audit", help="audit a model's attention weights: fiber, hypotheses, spectrum, ranks",
        description="Import a stack of single-head attention layers (.npz arrays Q1, K1, V1, ... "
                    "or a PyTorch MultiheadAttention state dict) and report its effective tuple "
                    "in exact rationals, which hypotheses of Theorems 1-4 hold, the effective "
                    "fiber, distances to the collapse loci, the contact spectrum along the "
                    "model's own query/key ray, float64 vs high-precision singular values and "
                    "ranks, and a plain-language verdict.",
        epilog="example: symattn audit examples/example_model.npz --plot audit.png")
    p.add_argument("file", metavar="FILE", nargs="+",
                   help="model file: .npz or .safetensors (arrays) or .pt/.pth (state dict); "
                        "several files (e.g. training checkpoints, in order) are audited one by "
                        "one and summarised side by side")
    p.add_argument("--tokens", type=int, default=4, metavar="n",
                   help="token count n >= 2 of the audit (default 4)")
    p.add_argument("--normalizer", default=None, metavar="PHI",
                   help="normalizer(s) of an .npz model (default exp = softmax); PyTorch is softmax")
    p.add_argument("--bank", default="auto", metavar="N|auto",
                   help="number of seeded rational inputs, or auto: grow until the bank separates "
                        "(default auto)")
    p.add_argument("--digits", type=int, default=50, metavar="N",
                   help="digits of the high-precision singular values (default 50)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="seed of the bank and rays")
    p.add_argument("--plot", type=plot_path, default=None, metavar="FILE.png",
                   help="draw the singular values (one file) or the distances to collapse and "
                        "the float64/float32 digits along the files (several); .png, .pdf or .svg, "
                        "checked before the audit; an existing file is replaced only if symattn "
                        "wrote it, or with --force")
    add_force_argument(p)
    p.add_argument("--heads", type=int, default=None, metavar="H",
                   help="num_heads of a state dict's attention layers (default 1; a state dict "
                        "does not record it)")
    p.add_argument("--budget", type=float, default=DEFAULT_BUDGET, metavar="SECONDS",
                   help=f"seconds the expensive exact and high-precision tiers may take, by "
                        f"their estimated cost (default {DEFAULT_BUDGET:g})")
    p.add_argument("--causal", action="store_true",
                   help="audit the causally masked map (is_causal; outside the paper's model: "
                        "exact facts about the weights, numerical tiers, and the variant analyses "
                        "labelled 'no theorem')")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Build the whole report, write the plot if asked, then print; return the exit status."""
    check_plot(args)
    bank = bank_argument(args.bank)
    if args.heads is not None and args.heads < 1:
        raise SymattnError(f"--heads must be a positive integer, got {args.heads}")
    if args.seed < 0:
        raise SymattnError(f"--seed must be a non-negative integer, got {args.seed}")
    gib = getattr(args, "max_memory", None)  # symattn's common --max-memory GIB, where present
    max_memory = DEFAULT_MAX_MEMORY if gib is None else int(gib * 2 ** 30)
    if args.tokens < 2:
        raise SymattnError(f"the token count n must be at least 2, got --tokens {args.tokens}")
    if len(args.file) > MAX_FILES:
        raise SymattnError(f"{len(args.file)} files given, beyond the limit {MAX_FILES}")
    models = [load_model(f, args.normalizer, args.tokens, heads=args.heads) for f in args.file]
    reports = [audit(m, bank=bank, digits=args.digits, seed=args.seed, budget=args.budget,
                     max_memory=max_memory, causal=args.causal)
               for m in models]
    if len(reports) == 1:
        text = json.dumps(reports[0].to_json(), indent=2) if args.json else format_report(reports[0])
        if args.plot:
            plot_report(reports[0], Path(args.plot), args.force)
    else:
        text = (json.dumps([r.to_json() for r in reports], indent=2) if args.json
                else format_along(reports))
        if args.plot:
            plot_along(reports, Path(args.plot), args.force)
    print(text)
    return 0
