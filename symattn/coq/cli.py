"""The ``--coq DIR`` option of ``symattn spectrum``, ``jet`` and ``dimension``.

:func:`add_coq_argument` declares it; :func:`check_coq_option` checks it before
any work (the paper's plain stack only; ``DIR`` a folder or one that can be
made); :func:`write_certificates` writes the certificates of the analysis into
``DIR`` (a self-contained Coq project, :func:`symattn.coq.export.write_project`,
through symattn's safe writer: no file symattn did not write is replaced
without ``--force``) and returns a one-line report. Writing never needs Coq;
``make -C DIR`` checks.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Sequence

from symattn.core.errors import SymattnError
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the exporter (and sympy) loads only when a certificate is written
    from symattn.coq.export import Certificate
    from symattn.model.architecture import Architecture

__all__ = ["add_coq_argument", "check_coq_option", "write_certificates"]


def add_coq_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--coq DIR`` (the command adds ``--force``: :func:`symattn.commands.add_force_argument`)."""
    parser.add_argument("--coq", metavar="DIR", default=None,
                        help="also write a Coq certificate of the result into DIR (a self-contained Coq "
                             "project: the theory, one .v per claim, _CoqProject, Makefile); "
                             "check it with make -C DIR; a file there that symattn did not write is "
                             "replaced only with --force")


def check_coq_option(args: argparse.Namespace, arch: "Architecture | None" = None) -> None:
    """Before any work: ``--coq DIR`` must be a folder (or one that can be made), and, given
    ``arch``, it must be the paper's plain stack (bad input otherwise: the Coq network is the
    paper's layer only)."""
    if not getattr(args, "coq", None):
        return
    if arch is not None and not arch.in_paper_model:
        raise SymattnError(f"--coq covers the paper's plain attention stack; this one has {arch.parts()} "
                           "(no Coq certificate)")
    from symattn.core.output import check_folder

    check_folder(args.coq, "Coq folder")


def write_certificates(directory: str, certificates: "Sequence[Certificate]", force: bool = False) -> str:
    """Write the certificates and return the report line.

    >>> from symattn.coq.export import identity_certificate
    >>> import tempfile; d = tempfile.mkdtemp()
    >>> write_certificates(d, [identity_certificate()]).startswith("Coq certificate")
    True
    """
    from symattn.coq.export import write_project

    try:
        root = write_project(directory, certificates, force)
    except OSError as exc:
        raise SymattnError(f"cannot write the Coq certificate into {directory!r}: {exc.strerror}") from None
    files = ", ".join(str(Path(root) / "certificates" / f"{c.name}.v") for c in certificates)
    noun = "certificate" if len(certificates) == 1 else "certificates"
    return f"Coq {noun}: {files} (check with: make -C {root})"
