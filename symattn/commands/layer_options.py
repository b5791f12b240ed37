"""Command-line options of the layer parts beyond the paper's model (no subcommand of its own).

``--residual [value|folded]``, ``--mask causal|window:W|FILE``, ``--heads H``,
``--combine sum|concat`` and the transformer-block parts ``--bias``, ``--norm pre|post``,
``--eps RATIONAL``, ``--mlp M``, ``--activation NAME`` give every layer those parts
(:meth:`symattn.model.layers.Layer.with_kind`); ``--spec FILE.toml`` (see
:func:`symattn.model.spec.load_spec`) describes a mixed stack. A mask FILE holds
one row of 0/1 per query (whitespace or commas between entries, ``#`` comments).
Every analysis runs on the resulting :class:`~symattn.model.architecture.Architecture`;
what no theorem of the paper covers is labelled so.
"""

from __future__ import annotations

import argparse

from symattn.core.errors import SymattnError

__all__ = ["add_layer_arguments", "check_part_options", "layer_kind_from_args", "read_spec", "read_mask_file",
           "with_layer_options", "architecture_or_spec"]

_MAX_SPEC_BYTES = 64 * 1024


def add_layer_arguments(parser: argparse.ArgumentParser, spec: bool = False) -> None:
    """Add the layer options (``--spec`` too with ``spec=True``)."""
    from symattn.commands import int_range

    g = parser.add_argument_group("layer parts beyond the paper (results outside its theorems are labelled)")
    g.add_argument("--residual", nargs="?", const="value", choices=["value", "folded"], default=None,
                   help="skip connection in every layer: X + V S_A(X) (value, the default) or "
                        "X + S_A(X) (folded)")
    g.add_argument("--mask", default=None, metavar="causal|window:W|FILE",
                   help="attention mask of every layer: causal, a sliding window of width W, or a "
                        "file of 0/1 rows (masked keys leave the normalisation)")
    g.add_argument("--heads", type=int_range(1, 16), default=None, metavar="H",
                   help="heads per layer, each of rank --rank (outputs summed through per-head values)")
    g.add_argument("--combine", choices=["sum", "concat"], default=None,
                   help="sum the heads through per-head values (default) or concatenate them and mix "
                        "by W_O")
    g.add_argument("--bias", action="store_true", default=None,
                   help="biases on the queries, keys, values and output projection of every layer")
    g.add_argument("--norm", choices=["pre", "post"], default=None,
                   help="a LayerNorm around each sublayer: post (LN(X + Att(X)), needs nothing) or pre "
                        "(X + Att(LN(X)), needs --residual)")
    from symattn.model.parts import NORM_KINDS

    g.add_argument("--norm-kind", dest="norm_kind", choices=sorted(NORM_KINDS), default=None,
                   help="the norm part placed by --norm (default layernorm)")
    g.add_argument("--eps", default=None, metavar="RATIONAL",
                   help="LayerNorm eps as an exact rational (1/100000, 1e-5; default 1/100000)")
    g.add_argument("--mlp", type=int_range(1, 64), default=None, metavar="M",
                   help="an MLP sublayer W_2 f(W_1 y + b_1) + b_2 of hidden width M in every layer")
    g.add_argument("--activation", default=None, metavar="tanh|gelu|gelu_tanh|silu|sigmoid|relu|poly:c0,c1,..",
                   help="the MLP activation (default tanh; relu only in float tiers)")
    if spec:
        g.add_argument("--spec", default=None, metavar="FILE.toml",
                       help="a TOML stack description ([[layer]] tables; see the docs)")


def read_mask_file(path: str) -> tuple[tuple[int, ...], ...]:
    """A 0/1 pattern from a text file (rows of 0 and 1).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
    ...     _ = f.write("1 0\\n1 1\\n")
    >>> read_mask_file(f.name)
    ((1, 0), (1, 1))
    """
    text = _read(path, "mask file")
    rows = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].replace(",", " ").strip()
        if not line:
            continue
        entries = line.split()
        if any(e not in ("0", "1") for e in entries):
            raise SymattnError(f"mask file {path!r}: entries must be 0 or 1, got {line!r}")
        rows.append(tuple(int(e) for e in entries))
    if not rows or len({len(r) for r in rows}) != 1:
        raise SymattnError(f"mask file {path!r} must hold rows of equal length")
    return tuple(rows)


def _read(path: str, what: str) -> str:
    """The text of a small regular file (see :func:`symattn.core.validate.read_text_file`)."""
    from symattn.core.validate import read_text_file

    return read_text_file(path, what, _MAX_SPEC_BYTES)


def read_spec(path: str):
    """The :class:`~symattn.model.architecture.Architecture` of a TOML spec file."""
    from symattn.model.spec import load_spec

    return load_spec(_read(path, "spec file"))


def layer_kind_from_args(args: argparse.Namespace) -> dict | None:
    """The layer parts of the options (keywords of
    :meth:`~symattn.model.layers.Layer.with_kind`), or None when none is given."""
    from symattn.model.architecture import Layer, parse_mask
    from symattn.model.normalizer import Normalizer

    block = {key: getattr(args, key, None) for key in ("bias", "norm", "eps", "mlp", "activation", "norm_kind")}
    if block["norm_kind"] is not None and block["norm"] is None:
        raise SymattnError("--norm-kind needs --norm pre|post (it says which norm part --norm places)")
    if args.residual is None and args.mask is None and args.heads is None and args.combine is None \
            and all(v is None for v in block.values()):
        return None
    mask = "none"
    if args.mask is not None:
        named = args.mask in ("none", "causal") or args.mask.startswith("window:")
        mask = parse_mask(args.mask) if named else read_mask_file(args.mask)
    kind = dict(skip=args.residual or "none", mask=mask, heads=args.heads or 1, combine=args.combine or "sum")
    if any(v is not None for v in block.values()):
        kind.update(bias=bool(block["bias"]), norm=block["norm"] or "none",
                    eps="1/100000" if block["eps"] is None else block["eps"],
                    mlp=block["mlp"] or 0, activation="tanh" if block["activation"] is None else block["activation"],
                    norm_kind=block["norm_kind"] or "layernorm")
    Layer(2, 2, Normalizer("exp")).with_kind(**kind)  # validated before any work
    check_part_options(block["norm"], block["eps"], block["mlp"], block["activation"], "--")
    return kind


def check_part_options(norm, eps, mlp, activation, prefix: str = "--") -> None:
    """Refuse an option of a transformer-block part that is absent: ``eps`` without a LayerNorm
    (``norm`` None or ``"none"``), ``activation`` without an MLP (``mlp`` None or 0). ``prefix``
    names the options (``"--"`` on the command line, ``""`` for the keys of a ``--spec`` layer).

    Raises
    ------
    SymattnError
        One line naming the conflict.

    Examples
    --------
    >>> check_part_options(None, "1e-5", None, None)
    Traceback (most recent call last):
    ...
    symattn.core.errors.SymattnError: --eps is the LayerNorm's eps, but no LayerNorm is asked for: give --norm pre|post with it, or drop --eps
    """
    if eps is not None and norm in (None, "none"):
        raise SymattnError(f"{prefix}eps is the LayerNorm's eps, but no LayerNorm is asked for: give "
                           f"{prefix}norm pre|post with it, or drop {prefix}eps")
    if activation is not None and not mlp:
        raise SymattnError(f"{prefix}activation is the MLP's activation, but no MLP is asked for: give "
                           f"{prefix}mlp M with it, or drop {prefix}activation")


def with_layer_options(args: argparse.Namespace, base=None):
    """The architecture of ``--spec``, or ``base`` (an :class:`~symattn.model.architecture.Architecture`)
    with the layer options; None when neither a spec nor a layer option is given."""
    kind = layer_kind_from_args(args)
    if getattr(args, "spec", None) is not None:
        if kind is not None:
            raise SymattnError("give either --spec or the layer options (--residual, --mask, --heads, "
                               "--combine, --bias, --norm, --eps, --mlp, --activation), not both")
        return read_spec(args.spec)
    if kind is None:
        return None
    if base is None:
        raise SymattnError("give --depth and --width with the layer options, or --spec FILE.toml")
    return base.with_layers(**kind)


def architecture_or_spec(args: argparse.Namespace):
    """The architecture of a command with :func:`~symattn.commands.add_architecture_arguments`
    (``required=False``) and the layer options with ``--spec``: the options' stack (with
    their layer parts), or the spec's."""
    from symattn.commands import architecture_from_args

    base = architecture_from_args(args) if args.depth is not None and args.width is not None else None
    if getattr(args, "spec", None) is not None and (args.depth or args.width):
        raise SymattnError("give either --spec or --depth/--width, not both")
    arch = with_layer_options(args, base)
    if arch is None:
        arch = base
    if arch is None:
        raise SymattnError("give --depth D and --width d (or --spec FILE.toml)")
    return arch
