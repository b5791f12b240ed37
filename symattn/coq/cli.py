"""The ``--coq DIR`` option of ``symattn spectrum``, ``jet`` and ``dimension``.

:func:`add_coq_argument` declares it; :func:`write_certificates` writes the
certificates of the analysis into ``DIR`` (a self-contained Coq project,
:func:`symattn.coq.export.write_project`) and returns a one-line report.
Writing never needs Coq; ``make -C DIR`` checks.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Sequence

from symattn.core.errors import SymattnError
from symattn.coq.export import Certificate, write_project

__all__ = ["add_coq_argument", "write_certificates", "refuse_variants"]


def add_coq_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--coq DIR``."""
    parser.add_argument("--coq", metavar="DIR", default=None,
                        help="also write a Coq certificate of the result into DIR (a self-contained Coq "
                             "project: the theory, one .v per claim, _CoqProject, Makefile); "
                             "check it with make -C DIR")


def refuse_variants(args: argparse.Namespace) -> None:
    """``--coq`` covers the paper's plain stack only: bad input with variant layers."""
    if getattr(args, "coq", None):
        raise SymattnError("--coq covers the paper's plain attention stack; variant layers (skips, masks, "
                           "heads) have no Coq certificate")


def write_certificates(directory: str, certificates: Sequence[Certificate]) -> str:
    """Write the certificates and return the report line.

    >>> from symattn.coq.export import identity_certificate
    >>> import tempfile; d = tempfile.mkdtemp()
    >>> write_certificates(d, [identity_certificate()]).startswith("Coq certificate")
    True
    """
    try:
        root = write_project(directory, certificates)
    except OSError as exc:
        raise SymattnError(f"cannot write the Coq certificate into {directory!r}: {exc.strerror}") from None
    files = ", ".join(str(Path(root) / "certificates" / f"{c.name}.v") for c in certificates)
    noun = "certificate" if len(certificates) == 1 else "certificates"
    return f"Coq {noun}: {files} (check with: make -C {root})"
