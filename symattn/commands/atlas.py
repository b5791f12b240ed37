"""``symattn atlas STORE --output DIR``: tables and plots of a sweep store.

Writes ``atlas.md``, ``atlas.html``, one CSV per analysis and PNG plots into
``DIR`` (see :mod:`symattn.sweep.atlas`): each computed value beside the paper's
formula where one exists, with ``DIFFERS`` where they disagree, and float32
rank estimates beside the exact ranks. The store is opened read-only; ``DIR``
gets a manifest (``symattn-manifest.json``) of the files written, and a file
there that symattn did not write (or that was changed since) is refused unless
``--force`` is given; nothing is written then.
"""

from __future__ import annotations

import argparse

from symattn.core.errors import SymattnError

__all__ = ["register", "run"]


def register(subparsers) -> argparse.ArgumentParser:
    """Add the ``atlas`` subcommand to ``subparsers``."""
    p = subparsers.add_parser(
        "atlas", help="tables (Markdown/HTML/CSV) and plots of a sweep store, beside the paper's formulas",
        description="Tables and plots of the rows of a sweep store (one symattn version): every "
                    "computed value beside the paper's formula where one exists, marked DIFFERS "
                    "where they disagree; float32 rank estimates beside the exact ranks.",
        epilog="example: symattn atlas small.sqlite --output atlas/")
    p.add_argument("store", metavar="STORE.sqlite", help="a store written by symattn sweep")
    p.add_argument("--output", required=True, metavar="DIR", help="folder for the tables and plots")
    p.add_argument("--format", default="md,html,csv", metavar="md,html,csv",
                   help="table formats to write (default all three)")
    p.add_argument("--version", dest="store_version", default=None, metavar="V",
                   help="read the rows of symattn version V (default: this version)")
    p.add_argument("--no-plots", action="store_true", help="write the tables only")
    p.add_argument("--force", action="store_true",
                   help="replace files in DIR that symattn did not write (or that were changed since)")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Write the atlas; return the exit status."""
    from symattn.core.output import check_folder
    from symattn.sweep.atlas import FORMATS, write_atlas
    from symattn.sweep.store import Store

    formats = tuple(f.strip() for f in args.format.split(",") if f.strip())
    bad = [f for f in formats if f not in FORMATS]
    if bad or not formats:
        raise SymattnError(f"--format takes a comma list of {', '.join(FORMATS)}, got {args.format[:60]!r}")
    if args.store_version is not None and (len(args.store_version) > 60 or not args.store_version.isprintable()):
        raise SymattnError("--version must be a symattn version such as 0.1.0")
    check_folder(args.output, "atlas folder")  # before the store is read
    with Store(args.store, create=False, version=args.store_version, readonly=True) as store:
        if not any(True for _ in store.rows()):
            raise SymattnError(f"{args.store} has no rows of symattn {store.version}; "
                               "see 'symattn sweep --status --store STORE' for the versions it holds")
        files = write_atlas(store, args.output, formats, plots=not args.no_plots, force=args.force)
    for path in files:
        print(path)
    return 0
