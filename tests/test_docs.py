"""The documentation builds without warnings; README and CI agree."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from conftest import ROOT, FakeProofs
from symattn.theorems.registry import discover


def _docs_conf(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.setattr(sys, "path", list(sys.path))  # conf.py prepends the repository root
    spec = importlib.util.spec_from_file_location("symattn_docs_conf", ROOT / "docs" / "conf.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_html_build_has_no_warnings(tmp_path: Path) -> None:
    """Also the guarantee that green tests imply green proofs: the build runs every proof's
    quick list through the real registry, and a failing proof is a warning (so -W fails)."""
    env = {k: v for k, v in os.environ.items() if k != "SYMATTN_DOCS_SKIP_PROOFS"}
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", str(ROOT / "docs"), str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for page in ("index", "theory", "proofs", "cli", "api", "benchmarks"):
        assert (tmp_path / f"{page}.html").is_file()
    proofs_html = (tmp_path / "proofs.html").read_text()
    for proof_id in discover():
        assert f'id="proof-{proof_id.replace("_", "-")}"' in proofs_html
        assert "<strong>pass</strong>" in (tmp_path / "statements" / f"{proof_id}.html").read_text()
    cli_html = (tmp_path / "cli.html").read_text()
    assert 'id="symattn-prove-help"' in cli_html
    assert 'id="symattn-latex-help"' in cli_html
    # math is typeset by the local MathJax copy, never a network script
    assert (tmp_path / "_static" / "mathjax" / "MathJax.js").is_file()
    for page in ("index", "tutorials/notebook", "statements/t3_sharp_taylor"):
        text = (tmp_path / f"{page}.html").read_text()
        assert re.search(r'<script[^>]*src="[^"]*_static/mathjax/MathJax\.js', text), page
        assert not re.search(r'<script[^>]*src="https?://', text), page
    # the notebook tutorial was executed: its outputs are the computed displays
    notebook = (tmp_path / "tutorials" / "notebook.html").read_text()
    assert notebook.count('class="symattn-derivation"') == 3 and "Native contact spectrum (Theorem 4)" in notebook


def test_proofs_page_lists_the_registry(
    fake_proofs: FakeProofs, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = _docs_conf(monkeypatch)._proofs_page()
    assert re.findall(r"^\.\. automodule:: (\S+)$", page, re.MULTILINE) == [
        f"{fake_proofs.package}.{proof_id}" for proof_id in ("t1_alpha", "t2_beta", "t10_gamma", "n1_delta")
    ]
    assert "   * - :ref:`t10_gamma <proof-t10_gamma>`\n     - Fake 10: a square root\n     - certified" in page
    assert ":Run: ``symattn prove n1_delta``" in page
    assert "common" not in page


def test_proofs_page_without_proofs(
    fake_proofs: FakeProofs, monkeypatch: pytest.MonkeyPatch
) -> None:
    for path in (fake_proofs.root / fake_proofs.package).glob("[tn]*.py"):
        path.unlink()
    assert "No proof scripts are registered yet" in _docs_conf(monkeypatch)._proofs_page()


def _readme_command(label: str) -> str:
    readme = (ROOT / "README.md").read_text()
    match = re.search(rf"{label}:\s*\n+```(?:sh|bash)?\n(.+?)\n```", readme)
    assert match is not None, f"README has no fenced command after {label!r}"
    return match.group(1)


def test_ci_runs_exactly_the_readme_test_command() -> None:
    script = (ROOT / ".ci" / "run").read_text().splitlines()
    assert script[:2] == ["#!/usr/bin/env bash", "set -euo pipefail"]
    assert script[-1] == _readme_command("Tests")
    assert (ROOT / ".ci" / "run").stat().st_mode & 0o111


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("Main job", "python3 -m venv .venv && .venv/bin/pip install -q -e '.[torch]' && .venv/bin/symattn prove"),
        (
            "Tests",
            "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test,docs,torch]' "
            "&& .venv/bin/python -m pytest -q",
        ),
    ],
)
def test_readme_commands(label: str, expected: str) -> None:
    assert _readme_command(label) == expected
