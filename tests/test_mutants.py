"""The mutation catalogue (benchmarks/mutants.py): patches apply, the page matches the matrix,
and (slow) a few mutants are killed by the proofs."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

from conftest import ROOT


def _mutants() -> ModuleType:
    spec = importlib.util.spec_from_file_location("symattn_mutants", ROOT / "benchmarks" / "mutants.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up
    spec.loader.exec_module(module)
    return module


def test_catalogue_is_large_named_and_covers_the_areas() -> None:
    mutants = _mutants()
    names = [m.name for m in mutants.MUTANTS]
    assert len(names) == len(set(names)) >= 30
    assert {"normalizer", "tangent", "series", "modular", "layer", "reduction", "gauges", "bank", "smith",
            "rank", "kernel", "signatures", "jets", "fibers", "numerics"} <= set(mutants.AREAS)
    assert all(m.intent for m in mutants.MUTANTS)


def test_every_patch_targets_its_text_exactly_once() -> None:
    for m in _mutants().MUTANTS:
        text = (ROOT / m.path).read_text()
        assert text.count(m.old) == 1, m.name
        assert m.old != m.new, m.name


def test_a_missing_target_fails_loudly(tmp_path: Path) -> None:
    mutants = _mutants()
    m = mutants.MUTANTS[0]
    (tmp_path / m.path).parent.mkdir(parents=True)
    (tmp_path / m.path).write_text("nothing to patch here\n")
    with pytest.raises(RuntimeError, match="occurs 0 times"):
        mutants.apply(m, tmp_path)


def test_the_docs_page_is_the_rendered_matrix() -> None:
    mutants = _mutants()
    matrix = json.loads(mutants.JSON_PATH.read_text())
    assert mutants.RST_PATH.read_text() == mutants.kill_matrix_rst(matrix) + "\n"
    assert matrix["baseline_ok"]
    known = {m.name for m in mutants.MUTANTS}
    assert {r["name"] for r in matrix["results"]} <= known


@pytest.mark.slow
def test_a_few_mutants_are_killed(tmp_path: Path) -> None:
    mutants = _mutants()
    base = mutants.snapshot(tmp_path / "repo")
    by_name = {m.name: m for m in mutants.MUTANTS}
    for name in ("series-reciprocal-sign", "tangent-product-rule-half"):
        result = mutants.run_mutant(by_name[name], base)
        assert result["status"] == "killed", result
    shutil.rmtree(base)


def test_the_child_imports_the_patched_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A mutant of a proof script and one of a package module are both seen by the child (issue 23:
    the editable install resolved ``symattn.proofs`` to the live tree, so proof mutants never applied)."""
    mutants = _mutants()
    base = mutants.snapshot(tmp_path / "repo")
    probe = "raise AssertionError('the patched copy was imported')\n"
    header = "from __future__ import annotations\n"
    proof = mutants.Mutant("probe-proof", "probe", "proofs/t1_effective_identifiability.py", header,
                           header + probe, "a proof that fails unconditionally")
    result = mutants.run_mutant(proof, base, limit=60, proofs="t1")
    assert result["status"] == "killed", result
    assert "the patched copy was imported" in result["errors"]["t1_effective_identifiability"], result
    package = mutants.Mutant("probe-package", "probe", "symattn/theorems/registry.py", header, header + probe,
                             "a package module that fails on import")
    result = mutants.run_mutant(package, base, limit=60, proofs="t1")
    assert result["status"] == "killed" and "the patched copy was imported" in result["errors"]["(runner)"], result
    # the check itself: without the proofs link the editable (or any) install's symattn.proofs is
    # outside the copy, and the harness refuses to record a result
    assert mutants.run_mutant(None, base, limit=60, proofs="no-such-proof")["status"] == "baseline"
    if importlib.util.find_spec("symattn.proofs") is not None:
        monkeypatch.setattr(mutants, "_prepare", lambda copy: None)
        with pytest.raises(RuntimeError, match="outside the patched copy"):
            mutants.run_mutant(None, base, limit=60, proofs="no-such-proof")  # imports symattn.proofs only


def test_the_origins_check_refuses_a_silent_child(tmp_path: Path) -> None:
    mutants = _mutants()
    with pytest.raises(RuntimeError, match="no origins line"):
        mutants._origins('{"id": "t1", "status": "pass"}\n', tmp_path, required=True)
    mutants._origins("", tmp_path, required=False)
    line = json.dumps({"id": "(origins)", "outside": ["symattn.proofs"], "symattn": "x", "proofs": "y"})
    with pytest.raises(RuntimeError, match="symattn.proofs from outside"):
        mutants._origins(line, tmp_path, required=False)


#: The modules added since the transformer blocks (issue 42, "What it must show"), each with at least three blind
#: mutants; the Coq theory's files count as one module.
BLIND_MODULES = (
    "symattn/model/parts/norm.py", "symattn/model/parts/layernorm.py", "symattn/model/parts/rmsnorm.py",
    "symattn/model/parts/activation.py", "symattn/model/parts/rotary.py", "symattn/model/parts/swiglu.py",
    "symattn/model/parts/gqa.py", "symattn/model/reference.py", "symattn/model/symmetries.py",
    "symattn/model/symmetry_kinds.py", "symattn/model/symmetry_counts.py", "symattn/analyses/constant_spectrum.py",
    "symattn/analyses/score_orders.py", "symattn/analyses/path_rank.py", "symattn/coq/export.py", "coq/theories/*.v",
    "symattn/sweep/store.py", "symattn/core/output.py", "symattn/audit/readers.py", "symattn/audit/hf.py",
    "symattn/audit/decoder.py")


def test_every_module_since_the_blocks_has_three_blind_mutants_and_the_page_says_so() -> None:
    mutants = _mutants()
    counts: dict[str, int] = {}
    for m in mutants.MUTANTS:
        if m.area == "blind":
            key = "coq/theories/*.v" if m.path.startswith("coq/theories/") else m.path
            counts[key] = counts.get(key, 0) + 1
    assert {module: counts.get(module, 0) for module in BLIND_MODULES if counts.get(module, 0) < 3} == {}
    page = mutants.RST_PATH.read_text()
    assert ":Blind mutants: " in page and ":Self-written mutants: " in page and "Blind mutants per module" in page
    assert all(f"``{module}``" in page for module in BLIND_MODULES)


def test_selection_by_area_and_changed_files() -> None:
    mutants = _mutants()
    blind = mutants.select([], "blind")
    assert blind and all(m.area == "blind" and not m.equivalent for m in blind)
    rotary = mutants.select([], "", {"symattn/model/parts/rotary.py"})
    assert rotary and {m.path for m in rotary} == {"symattn/model/parts/rotary.py"}
    assert mutants.select([], "blind", {"symattn/model/parts/rotary.py"}) == [m for m in rotary if m.area == "blind"]
    assert mutants.select([], "", set()) == []
