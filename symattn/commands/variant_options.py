"""Command-line options of the variant layer kinds (no subcommand of its own).

``--residual [value|folded]``, ``--mask causal|window:W|FILE``, ``--heads H``,
``--combine sum|concat`` apply one :class:`~symattn.model.variants.LayerKind` to
every layer; ``--spec FILE.toml`` (see :func:`symattn.model.variants.load_spec`)
describes a mixed stack. A mask FILE holds one row of 0/1 per query
(whitespace or commas between entries, ``#`` comments).
"""

from __future__ import annotations

import argparse

from symattn.core.errors import SymattnError

__all__ = ["add_variant_arguments", "layer_kind_from_args", "read_spec", "read_mask_file",
           "variant_from_args", "architecture_or_spec"]

_MAX_SPEC_BYTES = 64 * 1024


def add_variant_arguments(parser: argparse.ArgumentParser, spec: bool = False) -> None:
    """Add the variant options (``--spec`` too with ``spec=True``)."""
    from symattn.commands import int_range

    g = parser.add_argument_group("variant layers (beyond the paper; results are labelled)")
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
    """The :class:`~symattn.model.variants.VariantArchitecture` of a TOML spec file."""
    from symattn.model.variants import load_spec

    return load_spec(_read(path, "spec file"))


def layer_kind_from_args(args: argparse.Namespace):
    """The :class:`~symattn.model.variants.LayerKind` of the options, or None when none is given."""
    from symattn.model.variants import LayerKind, parse_mask

    if args.residual is None and args.mask is None and args.heads is None and args.combine is None:
        return None
    mask = "none"
    if args.mask is not None:
        named = args.mask in ("none", "causal") or args.mask.startswith("window:")
        mask = parse_mask(args.mask) if named else read_mask_file(args.mask)
    return LayerKind(skip=args.residual or "none", mask=mask, heads=args.heads or 1,
                     combine=args.combine or "sum")


def variant_from_args(args: argparse.Namespace, base=None):
    """The :class:`~symattn.model.variants.VariantArchitecture` of ``--spec`` or of the layer
    options applied to ``base`` (an :class:`~symattn.model.architecture.Architecture`), or None
    when neither is given (the paper's analyses then run unchanged)."""
    from symattn.model.variants import with_layers

    kind = layer_kind_from_args(args)
    if getattr(args, "spec", None) is not None:
        if kind is not None:
            raise SymattnError("give either --spec or the layer options (--residual, --mask, --heads, "
                               "--combine), not both")
        return read_spec(args.spec)
    if kind is None:
        return None
    if base is None:
        raise SymattnError("give --depth and --width with the layer options, or --spec FILE.toml")
    return with_layers(base, kind)


def architecture_or_spec(args: argparse.Namespace):
    """``(base, variant)`` of a command with :func:`~symattn.commands.add_architecture_arguments`
    (``required=False``) and the variant options with ``--spec``: ``base`` is the paper's
    :class:`~symattn.model.architecture.Architecture` of the options (None with ``--spec``), ``variant``
    the :class:`~symattn.model.variants.VariantArchitecture` or None (the paper's analysis)."""
    from symattn.commands import architecture_from_args

    base = architecture_from_args(args) if args.depth is not None and args.width is not None else None
    variant = variant_from_args(args, base)
    if base is None and variant is None:
        raise SymattnError("give --depth D and --width d (or --spec FILE.toml)")
    if variant is not None and getattr(args, "spec", None) is not None and (args.depth or args.width):
        raise SymattnError("give either --spec or --depth/--width, not both")
    return base, variant
