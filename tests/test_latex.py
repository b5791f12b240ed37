"""``symattn latex`` output compiles (with amsmath, amssymb) where pdflatex exists."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from symattn.prove import run_proof


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex not installed")
@pytest.mark.parametrize("proof_id", ["t6_scaling_and_fisher", "t7_flat_normalizer"])
def test_derivation_latex_compiles(proof_id, tmp_path):
    derivation = run_proof(proof_id).derivation
    (tmp_path / "d.tex").write_text("\\documentclass{article}\n\\usepackage{amsmath,amssymb}\n"
                                    "\\begin{document}\n" + derivation.to_latex() + "\n\\end{document}\n")
    done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "d.tex"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:]
