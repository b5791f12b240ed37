"""Slow: a real headless browser shows typeset math on a proof page and the notebook tutorial.

Builds the documentation into ``docs/_build/html`` (running every proof and
the notebook), then runs ``docs/check_math.py``; the screenshots stay in
``docs/_build/html/_browser/`` for a person to look at. Skipped without
Chromium.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from conftest import ROOT


def _check_math():
    spec = importlib.util.spec_from_file_location("check_math", ROOT / "docs" / "check_math.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_math_is_typeset_in_a_browser(capsys: pytest.CaptureFixture[str]) -> None:
    check = _check_math()
    if check.browser() is None:
        pytest.skip("chromium not installed")
    build = ROOT / "docs" / "_build" / "html"
    done = subprocess.run([sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", str(ROOT / "docs"),
                           str(build)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert check.main(["--build", str(build)]) == 0, capsys.readouterr().out
    for page in check.DEFAULT_PAGES:
        assert (build / "_browser" / (page.replace("/", "_").removesuffix(".html") + ".png")).stat().st_size > 10_000
