"""The linter and the type checker run with the tests: ruff on everything, mypy on the core and
model floors (their configurations are in pyproject.toml)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing():
    if shutil.which("ruff") is None and not (Path(sys.executable).parent / "ruff").exists():
        pytest.skip("ruff is not installed (it comes with the test extra: pip install -e '.[test]')")
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    out = subprocess.run([ruff, "check", "symattn", "proofs", "tests", "benchmarks", "docs", "examples"],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_mypy_finds_nothing_in_core_and_model():
    try:
        import mypy  # noqa: F401
    except ImportError:
        pytest.skip("mypy is not installed (it comes with the test extra: pip install -e '.[test]')")
    out = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary"], cwd=ROOT, capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stdout + out.stderr
