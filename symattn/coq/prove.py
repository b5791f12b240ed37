"""``symattn prove --coq``: the Coq column of the proof table.

For every selected proof, the certificates of its Coq cases
(:data:`symattn.coq.cases.PROOF_CASES`) are exported into one directory and
checked by ``coqc`` (the theory once, then each certificate). A proof's cell
is ``checked by Coq`` (all its certificates accepted, with the number of cases
and the ``coqc`` time), ``not covered`` (no Coq case), ``FAILED`` (a
certificate rejected, timed out, or could not be written) or ``coqc absent``.
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import dataclass
from typing import Callable, Sequence

from symattn.core.errors import SymattnException
from symattn.coq.cases import PROOF_CASES, proof_certificates
from symattn.coq.export import write_project
from symattn.coq.run import ABSENT, check_project, compile_theory, coqc_path

__all__ = ["CoqCell", "check_proofs"]


@dataclass
class CoqCell:
    """The Coq result of one proof."""

    status: str
    cases: int = 0
    seconds: float = 0.0
    message: str = ""

    @property
    def failed(self) -> bool:
        return self.status == "failed"

    def text(self) -> str:
        """The table cell.

        >>> CoqCell("checked", 3, 12.04).text(), CoqCell("not covered").text()
        ('checked by Coq (3, 12.0 s)', 'not covered')
        """
        if self.status == "checked":
            return f"checked by Coq ({self.cases}, {self.seconds:.1f} s)"
        if self.status == "failed":
            return "FAILED"
        return {"absent": "coqc absent"}.get(self.status, self.status)


def check_proofs(ids: Sequence[str], full: bool = False, directory: str | None = None,
                 timeout: float = 900, say: Callable[[str], None] | None = None) -> tuple[dict[str, CoqCell], str]:
    """Export and check the Coq cases of ``ids``; returns the cells and the directory used.

    The theory is compiled first (about 20 s): when it fails, every covered proof fails with
    its message and no certificate is built.
    """
    say = say or (lambda msg: print(msg, file=sys.stderr, flush=True))
    root = directory or tempfile.mkdtemp(prefix="symattn-coq-")
    cells: dict[str, CoqCell] = {}
    covered = [proof_id for proof_id in ids if proof_id in PROOF_CASES]
    if covered and coqc_path() is not None:  # the trusted theory first: a broken one fails in seconds
        write_project(root, [])
        theory = compile_theory(root, timeout)
        say(f"Coq: theory {theory.status} ({theory.seconds:.1f} s, {theory.cpu:.1f} s CPU)")
        if not theory.ok:
            for proof_id in ids:
                cells[proof_id] = (CoqCell("failed", message=f"theory: {theory.message}") if proof_id in covered
                                   else CoqCell("not covered"))
            return cells, root
    owners: dict[str, str] = {}
    certs = []
    for proof_id in ids:
        try:
            mine = proof_certificates(proof_id, full)
        except SymattnException as exc:
            cells[proof_id] = CoqCell("failed", message=f"export: {exc}")
            continue
        if not mine:
            cells[proof_id] = CoqCell("not covered")
        for c in mine:
            owners[c.name] = proof_id
        certs += mine
    if not certs:
        return cells, root
    write_project(root, certs)
    if coqc_path() is None:
        say(f"symattn: {ABSENT}")
        for c in certs:
            cells[owners[c.name]] = CoqCell("absent", message=ABSENT)
        return cells, root
    say(f"Coq: checking {len(certs)} certificates in {root}")
    theory, runs = check_project(root, [c.name for c in certs], timeout)
    for run in runs:
        proof_id = owners[run.name]
        cell = cells.setdefault(proof_id, CoqCell("checked"))
        if run.ok and cell.status == "checked":
            cell.cases += 1
            cell.seconds += run.seconds
        elif not run.ok:
            cells[proof_id] = CoqCell("failed" if run.status != "absent" else "absent",
                                      message=f"{run.name}: {run.status}: {run.message}")
        say(f"Coq: {run.name} {run.status} ({run.seconds:.1f} s)")
    return cells, root
