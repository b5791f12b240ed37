"""``symattn latex``: fragments, the ``--all`` document, and that they compile where pdflatex exists."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import FakeProofs
from symattn.cli import main
from symattn.render.derivation import latex_document
from symattn.theorems.registry import run_proof

needs_pdflatex = pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex not installed")


def _compile(tex: str, folder: Path) -> subprocess.CompletedProcess:
    (folder / "d.tex").write_text(tex)
    for _ in range(2):  # the second run fills in the table of contents
        done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "d.tex"],
                              cwd=folder, capture_output=True, text=True, timeout=300)
        if done.returncode:
            break
    return done


def test_all_writes_one_document(fake_proofs: FakeProofs, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "derivations.tex"
    status = main(["latex", "--all", "--output", str(out)])
    err = capsys.readouterr().err
    assert status == 1  # two fake proofs fail; the others are still written
    assert "symattn: proof t2_beta failed" in err and "symattn: proof n1_delta failed" in err
    text = out.read_text()
    assert text.startswith("\\documentclass") and text.rstrip().endswith("\\end{document}")
    assert "\\tableofcontents" in text
    assert "\\section{Binomial square}\\label{proof:t1_alpha}" in text
    assert "\\section{Square root}\\label{proof:t10_gamma}" in text
    assert text.index("proof:t1_alpha") < text.index("proof:t10_gamma")


def test_document_of_one_proof_on_stdout(fake_proofs: FakeProofs,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["latex", "t1", "--document"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("\\documentclass") and "\\section{Binomial square}" in out


@pytest.mark.parametrize("argv", [["latex"], ["latex", "t1", "--all"]])
def test_id_or_all_is_required(fake_proofs: FakeProofs, capsys: pytest.CaptureFixture[str],
                               argv: list[str]) -> None:
    assert main(argv) == 2
    assert capsys.readouterr().err == ("symattn: error: give one PROOF_ID (e.g. `symattn latex t4`) "
                                       "or --all, not both or neither\n")


@needs_pdflatex
def test_document_compiles(tmp_path: Path) -> None:
    derivations = [run_proof(proof_id).derivation for proof_id in ("t6_scaling_and_fisher", "t7_flat_normalizer")]
    done = _compile(latex_document(derivations, "Two derivations"), tmp_path)
    assert done.returncode == 0, done.stdout[-2000:]
    assert (tmp_path / "d.pdf").stat().st_size > 10_000


@pytest.mark.slow
@needs_pdflatex
def test_all_proofs_document_compiles(tmp_path: Path) -> None:
    out = tmp_path / "derivations.tex"
    assert main(["latex", "--all", "--output", str(out)]) == 0
    done = _compile(out.read_text(), tmp_path)
    assert done.returncode == 0, done.stdout[-2000:]
    overfull = [float(v) for v in re.findall(r"Overfull \\hbox \(([\d.]+)pt", (tmp_path / "d.log").read_text())]
    assert max(overfull, default=0) < 50, overfull  # no display runs far off the page
