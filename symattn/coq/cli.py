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
import shlex
from pathlib import Path
from typing import Sequence

from symattn.core.errors import CheckFailed, SymattnError
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
    """Before any work: ``--coq DIR`` must name a folder (or one that can be made; an empty name is
    refused, never ignored), the method must be exact or modular (``--method numerical`` proves
    nothing for Coq to check), and, given ``arch``, it must be the paper's plain stack (bad input
    otherwise: the Coq network is the paper's layer only). The folder's own checks (links, foreign
    files, names) run in :func:`symattn.coq.export.write_project`, before it writes anything."""
    if getattr(args, "coq", None) is None:
        return
    if not args.coq:
        raise SymattnError("--coq needs a folder name (got an empty one)")
    if getattr(args, "method", None) == "numerical":
        raise SymattnError("--coq certifies exact results: it does not take --method numerical (drop one of them)")
    if arch is not None and not arch.in_paper_model:
        raise SymattnError(f"--coq covers the paper's plain attention stack; this one has {arch.parts()} "
                           "(no Coq certificate)")
    from symattn.core.output import check_folder

    check_folder(args.coq, "Coq folder")


def write_certificates(directory: str, certificates: "Sequence[Certificate]", force: bool = False,
                       expected: "Sequence[dict] | None" = None) -> str:
    """Write the certificates and return the report line (paths shell-quoted).

    Parameters
    ----------
    directory : the Coq folder
    certificates : the certificates of the analysis
    force : replace files symattn did not write
    expected : the point of the printed result for each certificate
        (:func:`symattn.coq.cases.spectrum_point` and friends); each certificate's own point must
        equal it, and its claim file is written from it, so that ``make`` checks the certificate
        against what was printed

    Raises
    ------
    CheckFailed
        A certificate is about another point than the printed result (nothing is written).
    SymattnError
        The folder cannot be written (nothing is written).

    >>> from symattn.coq.export import identity_certificate
    >>> import tempfile; d = tempfile.mkdtemp()
    >>> write_certificates(d, [identity_certificate()]).startswith("Coq certificate")
    True
    """
    from symattn.coq.export import point_digest, write_project

    if expected is not None:
        for cert, point in zip(certificates, expected, strict=True):
            if point_digest(cert.point) != point_digest(point):
                keys = sorted(k for k in set(cert.point) | set(point) if cert.point.get(k) != point.get(k))
                data = sorted(k for k in set(cert.point.get("data", {})) | set(point.get("data", {}))
                              if cert.point.get("data", {}).get(k) != point.get("data", {}).get(k))
                raise CheckFailed(f"the Coq certificate {cert.name} is about another point than the printed result "
                                  f"(they differ in {', '.join(keys)}{' (' + ', '.join(data) + ')' if data else ''}); "
                                  "nothing was written")
    try:
        root = write_project(directory, certificates, force, claims=expected)
    except OSError as exc:
        raise SymattnError(f"cannot write the Coq certificate into {directory!r}: {exc.strerror}") from None
    files = ", ".join(shlex.quote(str(Path(root) / "certificates" / f"{c.name}.v")) for c in certificates)
    noun = "certificate" if len(certificates) == 1 else "certificates"
    return f"Coq {noun}: {files} (check with: make -C {shlex.quote(str(root))})"
