"""Packaging: licence, citation, changelog, version, wheel contents, dependency lower bounds,
and the example proof package installed through its entry point."""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
import yaml

import symattn
from conftest import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
LOWEST = ROOT / "tests" / "data" / "lowest-dependencies.txt"
EXAMPLE = ROOT / "examples" / "proof-package"


def _pins() -> dict[str, str]:
    pins = {}
    for line in LOWEST.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, version = line.split("==")
            pins[name.lower()] = version
    return pins


def test_licence_is_bsd_3_clause_everywhere() -> None:
    assert (ROOT / "LICENSE").read_text().startswith("BSD 3-Clause License")
    assert PYPROJECT["project"]["license"] == "BSD-3-Clause"
    assert importlib.metadata.metadata("symattn")["License-Expression"] == "BSD-3-Clause"


def test_citation_names_the_paper_and_this_version() -> None:
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software"
    assert cff["version"] == symattn.__version__ and cff["license"] == "BSD-3-Clause"
    paper = cff["preferred-citation"]
    assert paper["title"] == "Identifiability and Observability of Deep Normalized Attention"
    assert (paper["year"], paper["authors"][0]["family-names"]) == (2026, "Konda")


def test_changelog_has_unreleased_and_every_version() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    versions = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$", text, re.MULTILINE)
    assert text.index("## [Unreleased]") < text.index(f"## [{versions[0][0]}]")
    released = [v for v, _ in versions]
    assert symattn.__version__ in released or "## [Unreleased]" in text
    assert released == sorted(released, key=lambda v: tuple(map(int, v.split("."))), reverse=True)


def test_version_is_single_sourced() -> None:
    assert "version" not in PYPROJECT["project"] and "version" in PYPROJECT["project"]["dynamic"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "symattn.__version__"}
    assert importlib.metadata.version("symattn") == symattn.__version__
    done = subprocess.run([sys.executable, "-m", "symattn", "--version"], capture_output=True, text=True)
    assert done.stdout.split() == ["symattn", symattn.__version__]


def test_every_package_is_listed_and_proofs_install_inside_symattn() -> None:
    import setuptools

    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    found = set(setuptools.find_packages(str(ROOT), include=["symattn", "symattn.*"]))
    assert listed == found | {"symattn.proofs"}, "list every package of symattn/ in pyproject.toml"
    assert PYPROJECT["tool"]["setuptools"]["package-dir"] == {"symattn.proofs": "proofs"}
    assert "py.typed" in PYPROJECT["tool"]["setuptools"]["package-data"]["symattn"]
    assert (ROOT / "symattn" / "py.typed").is_file()


def test_wheel_holds_one_top_level_package_with_types_and_proofs(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                           "-w", str(tmp_path), str(ROOT)], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    wheel = next(tmp_path.glob("symattn-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert {name.split("/")[0] for name in names if not name.startswith("symattn-")} == {"symattn"}
    assert "symattn/py.typed" in names and "symattn/proofs/t4_native_spectrum.py" in names
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)
    shutil.rmtree(ROOT / "build", ignore_errors=True)


def test_dependency_lower_bounds_are_the_tested_pins() -> None:
    bounds = {}
    for requirement in PYPROJECT["project"]["dependencies"]:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)(\[[^]]*\])?>=([0-9.]+)", requirement)
        assert match, f"{requirement!r} has no lower bound"
        bounds[match.group(1).lower()] = match.group(3)
    pins = _pins()
    assert {name: pins[name] for name in bounds} == bounds
    assert set(pins) - set(bounds) <= {"distributed"}  # dask[distributed]'s own package, pinned alike
    assert pins.get("distributed", pins["dask"]) == pins["dask"]


@pytest.mark.slow
def test_lowest_dependencies_pass_the_core_tests(tmp_path: Path) -> None:
    """Installs the lowest versions (from the package registry) into a new environment: minutes."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    done = subprocess.run([str(python), "-m", "pip", "install", "-q", "-c", str(LOWEST), str(ROOT),
                           "pytest", "hypothesis"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    listed = subprocess.run([str(python), "-m", "pip", "list", "--format=freeze"], capture_output=True,
                            text=True).stdout.lower()
    for name, version in _pins().items():
        assert f"{name}=={version}" in listed, f"{name} {version} was not installed"
    tests = ["tests/test_algebras.py", "tests/test_normalizer.py", "tests/test_linalg.py", "tests/test_certify.py",
             "tests/test_signatures.py", "tests/test_spectrum.py", "tests/test_graph.py", "tests/test_jets.py",
             "tests/test_fibers.py", "tests/test_dimension.py", "tests/test_numerics.py", "tests/test_sweep.py",
             "tests/test_store.py", "tests/test_derivation.py", "tests/test_prove.py"]
    # the start-up test (which modules the spectrum command imports) is left out: numpy < 2 imports
    # numpy.ma with numpy, which costs start-up time, not correctness
    done = subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests,
                           "-k", "not loads_neither"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-4000:]


def test_example_proof_package_installs_and_registers(tmp_path: Path) -> None:
    """pip installs the template; its entry point adds its statement to `symattn prove`."""
    source = tmp_path / "src"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("_build", "statements", "build", "*.egg-info"))
    target = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                           "--target", str(target), str(source)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    env = {**os.environ, "PYTHONPATH": str(target)}
    done = subprocess.run([sys.executable, "-m", "symattn", "prove", "--list", "--json", "example_lemmas:"],
                          capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert '"id": "example_lemmas:l1_cosh_cubic"' in done.stdout and '"source": "example_lemmas"' in done.stdout


def test_example_proof_package_docs_build(tmp_path: Path) -> None:
    """The template's Sphinx pages: the statement run and rendered by symattn.render.sphinx."""
    source = tmp_path / "src"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("_build", "statements", "build", "*.egg-info"))
    env = {k: v for k, v in os.environ.items() if k != "SYMATTN_DOCS_SKIP_PROOFS"}
    for _ in range(2):  # the second build starts with the pages of the first (autosummary reads them first)
        done = subprocess.run([sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", str(source / "docs"),
                               str(tmp_path / "html")], capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stdout + done.stderr
    index = (tmp_path / "html" / "index.html").read_text()
    assert 'href="statements/example_lemmas-l1_cosh_cubic.html"' in index and "pass (" in index
    page = (tmp_path / "html" / "statements" / "example_lemmas-l1_cosh_cubic.html").read_text()
    assert "Lemma 1 (example): contact orders of phi = cosh(s) + s^3" in page
    assert "<strong>pass</strong>" in page and "Computed derivation" in page
