"""Running ``coqc`` on an exported certificate directory.

The theory (``theories/*.v``) is compiled once, in dependency order; each
certificate is then checked on its own, with a time limit, so that one
failure or timeout is reported without hiding the others. Where ``coqc`` is
absent everything reports ``absent`` with the reason, never an error.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from symattn.coq.export import ALLOWED_AXIOMS, THEORY_FILES

__all__ = ["CoqRun", "coqc_path", "ABSENT", "compile_theory", "check_certificate", "check_project",
           "foreign_assumptions"]

#: Why nothing ran when ``coqc`` is not on the PATH.
ABSENT = "coqc not found (install Coq 8.16 with `apt-get install coq`); Coq checks skipped"


@dataclass
class CoqRun:
    """One ``coqc`` run: ``status`` is ``checked``, ``failed``, ``timeout`` or ``absent``;
    ``seconds`` wall clock, ``cpu`` user + system time of the child."""

    name: str
    status: str
    seconds: float
    cpu: float
    message: str = ""
    output: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "checked"


def coqc_path() -> str | None:
    """The ``coqc`` executable, or None.

    >>> coqc_path() is None or coqc_path().endswith("coqc")
    True
    """
    return shutil.which("coqc")


def _run(directory: Path, target: str, timeout: float) -> CoqRun:
    coqc = coqc_path()
    if coqc is None:
        return CoqRun(Path(target).stem, "absent", 0.0, 0.0, ABSENT)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        proc = subprocess.run([coqc, "-Q", "theories", "Symattn", "-Q", "certificates", "Cert", "-Q", "claims", "Claim",
                               target],
                              cwd=directory, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, "LC_ALL": "C"})
    except subprocess.TimeoutExpired:  # the child was killed and reaped: its CPU time is in the rusage
        seconds = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return CoqRun(Path(target).stem, "timeout", seconds, cpu, f"coqc exceeded {timeout:.0f} s")
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode == 0:
        return CoqRun(Path(target).stem, "checked", seconds, cpu, output=proc.stdout)
    lines = [line for line in (proc.stderr + proc.stdout).splitlines() if line.strip()]
    error = next((line for line in lines if line.startswith("Error")), lines[-1] if lines else "coqc failed")
    return CoqRun(Path(target).stem, "failed", seconds, cpu, error)


def compile_theory(directory: "str | Path", timeout: float = 600) -> CoqRun:
    """Compile ``directory/theories`` (skipping files whose ``.vo`` is newer than the ``.v``)."""
    root = Path(directory)
    total, cpu = 0.0, 0.0
    for name in THEORY_FILES:
        v, vo = root / "theories" / f"{name}.v", root / "theories" / f"{name}.vo"
        if vo.exists() and vo.stat().st_mtime >= v.stat().st_mtime:
            continue
        run = _run(root, f"theories/{name}.v", timeout)
        total, cpu = total + run.seconds, cpu + run.cpu
        if not run.ok:
            return CoqRun("theory", run.status, total, cpu, f"{name}.v: {run.message}")
    return CoqRun("theory", "checked", total, cpu)


def foreign_assumptions(output: str) -> list[str]:
    """The axioms ``Print Assumptions`` lists in ``output`` beyond :data:`ALLOWED_AXIOMS`.

    >>> foreign_assumptions("Axioms:\\nPrimInt63.int : Set\\nCert.x.x : 1 = 2\\n")
    ['Cert.x.x']
    >>> foreign_assumptions("Closed under the global context\\n")
    []
    """
    names = [line.split(" ")[0] for line in output.splitlines()
             if line and not line[0].isspace() and line not in ("Axioms:", "Closed under the global context")]
    return [n for n in names if n not in ALLOWED_AXIOMS]


def check_certificate(directory: "str | Path", name: str, timeout: float = 600) -> CoqRun:
    """Check ``directory/certificates/NAME.v`` (the theory must be compiled), then its claim file
    ``claims/NAME.v`` when there is one (the same point and statement; ``Print Assumptions`` lists
    nothing beyond :data:`ALLOWED_AXIOMS`), as ``make`` does."""
    root = Path(directory)
    run = _run(root, f"certificates/{name}.v", timeout)
    if not run.ok or not (root / "claims" / f"{name}.v").is_file():
        return run
    claim = _run(root, f"claims/{name}.v", timeout)
    seconds, cpu = run.seconds + claim.seconds, run.cpu + claim.cpu
    if not claim.ok:
        return CoqRun(name, claim.status, seconds, cpu, f"claim: {claim.message}")
    foreign = foreign_assumptions(claim.output)
    if foreign:
        return CoqRun(name, "failed", seconds, cpu, f"rests on assumptions beyond the standard library: "
                                                    f"{', '.join(foreign[:3])}")
    return CoqRun(name, "checked", seconds, cpu)


def check_project(directory: "str | Path", names: Sequence[str] | None = None,
                  timeout: float = 600) -> tuple[CoqRun, list[CoqRun]]:
    """Compile the theory, then check each certificate (default: all in ``certificates/``).

    Returns the theory's run and one run per certificate; when the theory fails, every
    certificate is reported ``failed`` with that reason.
    """
    root = Path(directory)
    if names is None:
        names = sorted(f.stem for f in (root / "certificates").glob("*.v"))
    theory = compile_theory(root, timeout)
    if not theory.ok:
        return theory, [CoqRun(n, theory.status if theory.status == "absent" else "failed", 0.0, 0.0,
                               theory.message) for n in names]
    return theory, [check_certificate(root, n, timeout) for n in names]
