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


#: The CPU-time limit of the documentation build in the test (it takes about 4 minutes here):
#: CPU time, so that a busy machine (other jobs beside the tests) does not use it up.
DOCS_BUILD_SECONDS = 1200
#: A wall-clock guard against a build that hangs without computing (waiting on a child): a
#: hang guard only, many times the CPU limit, never a budget of the build.
DOCS_HANG_SECONDS = 6 * DOCS_BUILD_SECONDS


def _own_atlas_store(target: Path) -> Path:
    """The atlas store of this test's build: a consistent copy (SQLite's backup) of
    ``docs/generated/atlas.sqlite`` if a build started by hand left a symattn store there (the
    sweep then resumes from it), else a new one; never that file itself."""
    import sqlite3

    from symattn.sweep.store import Store

    source = ROOT / "docs" / "generated" / "atlas.sqlite"
    try:
        Store(source, create=False, readonly=True).close()  # a symattn store of this schema
        with sqlite3.connect(f"file:{source}?mode=ro", uri=True) as src, sqlite3.connect(target) as dst:
            src.backup(dst)
    except Exception:  # no usable store: the build makes its own
        target.unlink(missing_ok=True)
    return target


def test_html_build_has_no_warnings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Also the guarantee that green tests imply green proofs: the build runs every proof's
    quick list through the real registry, and a failing proof is a warning (so -W fails)."""
    env = {k: v for k, v in os.environ.items() if k != "SYMATTN_DOCS_SKIP_PROOFS"}
    conf = _docs_conf(monkeypatch)
    env[conf.ATLAS_STORE_VARIABLE] = str(_own_atlas_store(tmp_path.parent / f"{tmp_path.name}-atlas.sqlite"))
    # A build that spends DOCS_BUILD_SECONDS of CPU time gets SIGXCPU, prints the stacks of its
    # threads and ends, so that the failure below shows where it was (a CI run once stopped in
    # this test at its limit). CPU time: other jobs on the machine do not count against it. Only
    # the soft limit: the hard one stays, so that the build's children may set their own.
    sphinx = ("import faulthandler, resource, signal, sys; "
              "faulthandler.register(signal.SIGXCPU, all_threads=True, chain=True); "
              "resource.setrlimit(resource.RLIMIT_CPU, (%d, resource.getrlimit(resource.RLIMIT_CPU)[1])); "
              "from sphinx.cmd.build import main; sys.exit(main(sys.argv[1:]))" % DOCS_BUILD_SECONDS)
    # The output goes to a file, not a pipe: a process the build leaves behind (a kernel, a
    # resource tracker) would hold a pipe open, and reading it to its end would wait for that.
    log = tmp_path.parent / f"{tmp_path.name}-sphinx.log"
    with open(log, "w") as out:
        done = subprocess.run(
            [sys.executable, "-c", sphinx, "-W", "-q", "-b", "html", str(ROOT / "docs"), str(tmp_path)],
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
            check=False,
            env=env,
            timeout=DOCS_HANG_SECONDS,
        )
    assert done.returncode == 0, log.read_text()
    for page in ("index", "theory", "proofs", "cli", "api", "benchmarks", "proof_packages", "changelog", "citing"):
        assert (tmp_path / f"{page}.html").is_file()
    proofs_html = (tmp_path / "proofs.html").read_text()
    article = proofs_html.split("<article")[1].split("</article>")[0]
    sidebar = proofs_html.split('class="sidebar-tree"')[1].split("</div>")[0]
    for proof_id in discover():
        # the proof list once in the page and once in the navigation, in registry order
        assert article.count(f'href="statements/{proof_id}.html"') == 1, proof_id
        assert sidebar.count(f'href="statements/{proof_id}.html"') == 1, proof_id
        page = (tmp_path / "statements" / f"{proof_id}.html").read_text()
        assert "<strong>pass</strong>" in page and f'id="proof-{proof_id.replace("_", "-")}"' in page
        assert "``" not in re.sub(r"<[^>]+>", "", page), f"raw markup on the page of {proof_id}"
    for html in (article, sidebar):
        positions = [html.index(f'href="statements/{proof_id}.html"') for proof_id in discover()]
        assert positions == sorted(positions)
    index_html = (tmp_path / "index.html").read_text()
    assert "furo" in index_html and "statements/" not in index_html.split("<article")[1].split("</article>")[0]
    assert "example_lemmas-l1_cosh_cubic.html" in (tmp_path / "proof_packages.html").read_text()
    cli_html = (tmp_path / "cli.html").read_text()
    assert 'id="symattn-prove-help"' in cli_html
    assert 'id="symattn-latex-help"' in cli_html
    atlas_html = (tmp_path / "atlas.html").read_text()
    assert "t^0 x" not in atlas_html and r"\times" in atlas_html  # bands typeset as math
    # math is typeset by the local MathJax copy, never a network script
    assert (tmp_path / "_static" / "mathjax" / "MathJax.js").is_file()
    for page in ("index", "tutorials/notebook", "statements/t3_sharp_taylor"):
        text = (tmp_path / f"{page}.html").read_text()
        assert re.search(r'<script[^>]*src="[^"]*_static/mathjax/MathJax\.js', text), page
        assert not re.search(r'<script[^>]*src="https?://', text), page
    # the notebook tutorial was executed: its outputs are the computed displays
    notebook = (tmp_path / "tutorials" / "notebook.html").read_text()
    assert notebook.count('class="symattn-derivation"') == 3 and "Native contact spectrum (Theorem 4)" in notebook


def test_cli_page_has_a_hand_written_section_per_command() -> None:
    from symattn.cli import help_texts

    text = (ROOT / "docs" / "cli.rst").read_text()
    titles = set(re.findall(r"^(``symattn [a-z]+``(?: and ``symattn [a-z]+``)?)\n-+$", text, re.MULTILINE))
    described = {name for title in titles for name in re.findall(r"symattn ([a-z]+)", title)}
    commands = {name.split()[1] for name in help_texts() if len(name.split()) == 2}
    assert commands <= described, f"no section for {sorted(commands - described)}"


def test_statement_page_of_a_proof(fake_proofs: FakeProofs) -> None:
    from symattn.render.sphinx import _Page, _page
    from symattn.theorems.registry import find, load, run_proof

    proof = next(p for p in find() if p.id == "t10_gamma")
    text = _page(_Page(proof, load("t10_gamma"), "Fake 10: a square root", "certified", run_proof("t10_gamma")))
    lines = text.splitlines()
    assert lines[4:6] == ["Fake 10: a square root", "======================"]
    assert ":Result: **pass**" in text and ":Kind: certified" in text and ":Cases checked: 1" in text
    assert f".. automodule:: {fake_proofs.package}.t10_gamma" in text
    assert "``symattn prove t10_gamma``" in text and "Computed derivation" in text


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
            "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test,docs,torch,hf]' "
            "&& .venv/bin/python -m pytest -q -n auto",
        ),
    ],
)
def test_readme_commands(label: str, expected: str) -> None:
    assert _readme_command(label) == expected
