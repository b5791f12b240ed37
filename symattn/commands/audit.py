"""``symattn audit FILE``: what a trained attention stack's function determines, and how sensitively.

``symattn audit FILE [--json] [--bank N|auto] [--plot FILE.png] [--tokens n]
[--inputs FILE] [--matrices] [--quiet] [--normalizer PHI] [--digits N] [--seed S] [--heads H]
[--budget SECONDS] [--causal]``

``FILE`` is a NumPy ``.npz`` or ``.safetensors`` file with arrays ``Q1, K1, V1,
..., QD, KD, VD`` (tokens as columns; a leading head axis for multi-head
layers) or a PyTorch ``.pt``/``.pth`` state dict of ``nn.MultiheadAttention``
or ``nn.TransformerEncoderLayer`` layers (LayerNorms, MLP, biases; ``--heads`` or a
checkpoint config gives ``num_heads``), or a training checkpoint holding one;
see the documentation page :doc:`/audit_reference` for the exact formats, the
convention mapping and what is outside the paper's model. The audit is tiered: cheap exact work
always runs, every other tier within ``--budget`` seconds (enforced; progress
on stderr unless ``--quiet``), and the report names the tier of every number.
It starts with a summary line and one row per named module with
pass/warn/fail and the rule in words. The whole report is built
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
from symattn.audit.budget import Clock, stderr_progress
from symattn.audit.importers import load_inputs
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
                   help="model file: .npz or .safetensors (arrays) or .pt/.pth (state dict), or a Hugging "
                        "Face folder (config.json and model.safetensors: BERT, RoBERTa, DistilBERT, GPT-2, "
                        "ViT); several files (e.g. training checkpoints, in order) are audited one by "
                        "one and summarised side by side")
    p.add_argument("--tokens", type=int, default=None, metavar="n",
                   help="token count n >= 2 of the audit (default: the model's sequence length from its "
                        "config or --inputs, else 4)")
    p.add_argument("--inputs", default=None, metavar="FILE",
                   help="probe inputs of the numerical tiers: an .npz/.safetensors/.pt file with one "
                        "array (B, n, d_model), tokens as rows (e.g. the embedded training data); "
                        "default N(0, 1) tokens")
    p.add_argument("--matrices", action="store_true",
                   help="print the effective matrices (exact, rounded for display; --json has them all)")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
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
    placement = p.add_mutually_exclusive_group()
    placement.add_argument("--norm-first", dest="norm_first", action="store_const", const=True, default=None,
                           help="the encoder layers are pre-norm (a state dict does not record it)")
    placement.add_argument("--post-norm", dest="norm_first", action="store_const", const=False,
                           help="the encoder layers are post-norm (PyTorch's default)")
    p.add_argument("--activation", default=None, metavar="NAME",
                   help="the MLP's activation: relu, gelu, gelu_tanh (gelu_new), tanh or silu (a state dict "
                        "does not record it)")
    p.add_argument("--norm-kind", default=None, metavar="KIND",
                   help="the norms' kind: layernorm, or rmsnorm for a Llama, Mistral or Qwen2 folder (checked "
                        "against its config); a state dict's norm stored without a bias is otherwise assumed to be "
                        "a LayerNorm, with a warning")
    p.add_argument("--budget", type=float, default=DEFAULT_BUDGET, metavar="SECONDS",
                   help=f"CPU seconds (of symattn's whole process tree, start-up included) the analysis of "
                        f"each file may take, enforced: exact steps run in a child process stopped at their "
                        f"share, numerical steps only when their measured cost fits (default {DEFAULT_BUDGET:g})")
    p.add_argument("--causal", action="store_true",
                   help="audit the causally masked map (is_causal; outside the paper's model: "
                        "exact facts about the weights, numerical tiers, and the variant analyses "
                        "labelled 'no theorem'); a Hugging Face config says it itself (GPT-2)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run)
    return p


def _own_process() -> bool:
    """Whether this process was started as the ``symattn`` command (its console script or
    ``python -m symattn``), so that its CPU time since it started is symattn's start-up."""
    import sys

    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    return (bool(sys.argv) and Path(sys.argv[0]).name == "symattn"
            or spec is not None and spec.name.split(".")[0] == "symattn")


def run(args: argparse.Namespace) -> int:
    """Build the whole report, write the plot if asked, then print; return the exit status."""
    check_plot(args)
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise SymattnError("--plot needs matplotlib: pip install matplotlib") from None
    bank = bank_argument(args.bank)
    if args.heads is not None and args.heads < 1:
        raise SymattnError(f"--heads must be a positive integer, got {args.heads}")
    if args.seed < 0:
        raise SymattnError(f"--seed must be a non-negative integer, got {args.seed}")
    gib = getattr(args, "max_memory", None)  # symattn's common --max-memory GIB, where present
    max_memory = DEFAULT_MAX_MEMORY if gib is None else int(gib * 2 ** 30)
    if args.tokens is not None and args.tokens < 2:
        raise SymattnError(f"the token count n must be at least 2, got --tokens {args.tokens}")
    if len(args.file) > MAX_FILES:
        raise SymattnError(f"{len(args.file)} files given, beyond the limit {MAX_FILES}")
    models = [load_model(f, args.normalizer, args.tokens, heads=args.heads, norm_first=args.norm_first,
                         activation=args.activation, norm_kind=args.norm_kind) for f in args.file]
    for m in models:
        if args.causal and m.causal is False:
            raise SymattnError(f"--causal contradicts {m.source}/config.json: a {m.hf['family']} model attends "
                               f"to every token")
    inputs = None
    if args.inputs is not None:
        inputs = load_inputs(args.inputs, models[0].widths[0])
        for m in models:
            if args.tokens is not None and args.tokens != inputs.shape[1]:
                raise SymattnError(f"--tokens {args.tokens} but --inputs has n = {inputs.shape[1]} tokens")
            if m.widths[0] != inputs.shape[2]:
                raise SymattnError(f"--inputs has width {inputs.shape[2]}, {m.source} has {m.widths[0]}")
            m.tokens = inputs.shape[1]
            m.notes.append(f"tokens n = {m.tokens} and probe inputs from --inputs {args.inputs} "
                           f"({inputs.shape[0]} inputs)")
    progress = None if args.quiet else stderr_progress
    # the first file's budget counts symattn's start-up (CPU time since the process started) when this
    # process is the symattn command; called in another program's process (main() in a test), from here
    start = 0.0 if _own_process() else None
    clocks = [Clock(args.budget, progress, since=start if j == 0 else None) for j in range(len(models))]
    reports = [audit(m, bank=bank, digits=args.digits, seed=args.seed, budget=args.budget,
                     max_memory=max_memory, causal=args.causal or bool(m.causal), inputs=inputs,
                     progress=progress, clock=clock)
               for m, clock in zip(models, clocks)]
    if len(reports) == 1:
        text = (json.dumps(reports[0].to_json(), indent=2) if args.json
                else format_report(reports[0], matrices=args.matrices))
        if args.plot:
            plot_report(reports[0], Path(args.plot), args.force)
    else:
        text = (json.dumps([r.to_json() for r in reports], indent=2) if args.json
                else format_along(reports))
        if args.plot:
            plot_along(reports, Path(args.plot), args.force)
    print(text)
    return 0
