"""Tests of symattn.theorems.registry on the fake proof package, and of the real registry's scripts
(importing them; tests/test_docs.py runs every proof's quick list once)."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ROOT, FakeProofs
from symattn.render.derivation import Derivation
from symattn.core.errors import SymattnError
from symattn.theorems.registry import _entry_point_sources, discover, load, main_for, run_proof, select


def test_discover_orders_theorems_then_numerics_numerically(fake_proofs: FakeProofs) -> None:
    assert discover() == ["t1_alpha", "t2_beta", "t10_gamma", "n1_delta"]


def test_discover_without_package_is_a_user_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("symattn.theorems.registry.PROOF_PACKAGE", "no_such_package_symattn")
    with pytest.raises(SymattnError, match="cannot import the proof package"):
        discover()


@pytest.mark.parametrize(
    ("patterns", "expected"),
    [
        ([], ["t1_alpha", "t2_beta", "t10_gamma", "n1_delta"]),
        (["t1"], ["t1_alpha"]),
        (["t10"], ["t10_gamma"]),
        (["T2"], ["t2_beta"]),
        (["t"], ["t1_alpha", "t2_beta", "t10_gamma"]),
        (["n1_delta", "t1_alpha", "t1"], ["t1_alpha", "n1_delta"]),
    ],
)
def test_select(fake_proofs: FakeProofs, patterns: list[str], expected: list[str]) -> None:
    assert select(patterns) == expected


def test_select_unknown_id(fake_proofs: FakeProofs) -> None:
    with pytest.raises(SymattnError, match=r"unknown proof id 't3'; known ids: t1_alpha, "):
        select(["t1", "t3"])


def test_select_empty_registry(fake_proofs: FakeProofs) -> None:
    for path in (fake_proofs.root / fake_proofs.package).glob("[tn]*.py"):
        path.unlink()
    with pytest.raises(SymattnError, match="no proof scripts found"):
        select([])


def test_run_proof_pass(fake_proofs: FakeProofs) -> None:
    result = run_proof("t1_alpha")
    assert (result.id, result.statement, result.status, result.kind) == (
        "t1_alpha",
        "Fake 1: binomial square",
        "pass",
        "exact",
    )
    assert result.cases == 2
    assert result.error == ""
    assert isinstance(result.derivation, Derivation)
    assert result.seconds >= 0
    assert run_proof("t1_alpha", full=True).cases == 3


def test_run_proof_failed_check(fake_proofs: FakeProofs) -> None:
    result = run_proof("t2_beta")
    assert result.status == "fail"
    assert result.derivation is None
    assert result.cases == 0
    assert result.error.startswith(
        "AssertionError: t2_beta: check 'eq. (2)' failed: computed 1, expected 2 [t2_beta.py:"
    )


def test_run_proof_other_exception(fake_proofs: FakeProofs) -> None:
    result = run_proof("n1_delta")
    assert (result.status, result.kind) == ("fail", "numerical")
    assert result.error.startswith("RuntimeError: boom [n1_delta.py:")


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (
            '"""Import fails."""\nimport no_such_module_symattn\n',
            "cannot import proof 't3_bad': ModuleNotFoundError",
        ),
        ('"""No STATEMENT."""\nKIND = "exact"\n', "the script defines no STATEMENT"),
        ('"""Bad KIND."""\nSTATEMENT = "s"\nKIND = "proved"\n', "KIND must be one of"),
        ('"""No run."""\nSTATEMENT = "s"\nKIND = "exact"\n', "the script defines no run"),
        (
            '"""Wrong return."""\nSTATEMENT = "s"\nKIND = "exact"\n\n\ndef run(full=False):\n    return True\n',
            "run() returned bool, not a Derivation",
        ),
        (
            '"""Vacuous."""\nSTATEMENT = "s"\nKIND = "exact"\n\n\ndef run(full=False):\n'
            '    return Derivation("t3_bad", "t", "s", "exact")\n',
            "the derivation records no check",
        ),
        (
            '"""Swallowed failure."""\nSTATEMENT = "s"\nKIND = "exact"\n\n\ndef run(full=False):\n'
            '    d = Derivation("t3_bad", "t", "s", "exact")\n'
            "    try:\n        d.check('c', 1, 2)\n    except AssertionError:\n        pass\n"
            "    return d\n",
            "a failed check was recorded without raising",
        ),
    ],
)
def test_run_proof_malformed_script(fake_proofs: FakeProofs, body: str, error: str) -> None:
    fake_proofs.add("t3_bad", body)
    result = run_proof("t3_bad")
    assert result.status == "fail"
    assert error in result.error


def test_load_does_not_run(fake_proofs: FakeProofs) -> None:
    module = load("n1_delta")
    assert module.STATEMENT == "Fake N1: crashes"


def test_summary_keys(fake_proofs: FakeProofs) -> None:
    summary = run_proof("t10_gamma").summary()
    assert list(summary) == ["id", "source", "statement", "status", "cases", "kind", "seconds"]
    assert summary["source"] == "symattn"
    assert summary["status"] == "pass"
    assert summary["kind"] == "certified"


def test_main_for_in_process(fake_proofs: FakeProofs, capsys: pytest.CaptureFixture[str]) -> None:
    module = load("t1_alpha")
    assert main_for(module.__name__, ["--full"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("t1_alpha: Binomial square [exact]")
    assert "Cases checked: 3" in out
    assert "t1_alpha: pass" in err
    assert main_for(load("t2_beta").__name__, ["--latex"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert "t2_beta: FAIL: AssertionError" in err


def _script_env(fake_proofs: FakeProofs) -> dict[str, str]:
    path = os.pathsep.join([str(ROOT), str(fake_proofs.root), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path}


def test_script_runs_alone(fake_proofs: FakeProofs) -> None:
    script = fake_proofs.root / fake_proofs.package / "t1_alpha.py"
    done = subprocess.run(
        [sys.executable, str(script), "--latex"],
        capture_output=True,
        text=True,
        env=_script_env(fake_proofs),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(r"\paragraph{t1\_alpha: Binomial square (exact).}")
    failing = fake_proofs.root / fake_proofs.package / "t2_beta.py"
    done = subprocess.run(
        [sys.executable, str(failing)],
        capture_output=True,
        text=True,
        env=_script_env(fake_proofs),
        check=False,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr


def test_real_registry_lists_every_statement() -> None:
    """The real proof package (not the fake one): every script imports and states its kind.

    Running every proof's quick list is done once per test run by the Sphinx build of
    ``tests/test_docs.py`` (a failing proof fails that build and the test), not again here.
    """
    from symattn.render.derivation import KINDS

    ids = discover()
    assert [i.split("_")[0] for i in ids] == ["t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9", "t10", "t11",
                                             "t12", "n1", "n2", "n3", "n4", "n5", "n6"]
    assert all(load(i).KIND in KINDS for i in ids)


def test_t7_fails_when_the_flat_phi_is_replaced_by_exp(monkeypatch: pytest.MonkeyPatch) -> None:
    t7 = load("t7_flat_normalizer")
    monkeypatch.setattr(t7, "LOG_PHI", t7.s)  # h = s: softmax instead of the flat phi
    with pytest.raises(AssertionError, match="flatness"):
        t7.run()


def test_t7_jets_see_the_score_with_exp(monkeypatch: pytest.MonkeyPatch) -> None:
    """The jet comparison itself fails for exp: the graph over series sees the score."""
    import numpy as np

    from symattn.model.architecture import Architecture
    from symattn.model.parameters import random_bank

    t7 = load("t7_flat_normalizer")
    monkeypatch.setattr(t7, "LOG_PHI", t7.s)
    arch = Architecture.uniform(1, 1, 1, 2, "exp")
    g = t7.flat_network(arch, t7.TaylorNormalizer(6))
    Y = random_bank(arch, 2, seed=1)
    one = np.array([[1]], dtype=object)
    a = t7._ray_jets(arch, g, one, [one], Y, 7)
    b = t7._ray_jets(arch, g, one, [2 * one], Y, 7)
    assert not (a == b).all()


def test_a_proof_claiming_more_than_its_weakest_check_fails(fake_proofs: FakeProofs) -> None:
    path = fake_proofs.root / fake_proofs.package / "t1_alpha.py"
    text = path.read_text().replace("return d", 'd.check("n", 1, 1, kind="numerical")\n    return d', 1)
    path.write_text(text)
    result = run_proof("t1_alpha")
    assert result.status == "fail"
    assert "weakest of its checks is 'numerical'" in result.error


def _t1_derivation() -> Derivation:
    return Derivation("t1_test", "Theorem 1 (test)", "a broken input", "exact")


def test_eq20_fails_when_the_competitor_prefix_differs() -> None:
    """Eq. (20) needs equal prefixes; a competitor with another M_1 breaks the identity."""
    t1 = load("t1_effective_identifiability")
    S1, S2 = [[1, 2], [0, -1]], [[1, 1], [2, 1]]
    t1.competitor_difference(_t1_derivation(), "exp", [S1, S2], [S1, S1], [[1, 2]], 2)
    with pytest.raises(AssertionError, match=r"eq\. \(20\): difference of the isolated"):
        t1.competitor_difference(_t1_derivation(), "exp", [S1, S2], [S2, S1], [[1, 2]], 2)


def test_eq21_fails_off_the_paper_probe() -> None:
    """Eq. (21) is for the probe m + eps c_a z; a spread at order eps^2 breaks it."""
    t1 = load("t1_effective_identifiability")
    S1, S2 = [[1, 2], [0, -1]], [[1, 1], [2, 1]]
    t1.competitor_contrast_order(_t1_derivation(), "exp", [S1, S2], 2)
    with pytest.raises(AssertionError, match=r"eq\. \(21\)"):
        t1.competitor_contrast_order(_t1_derivation(), "exp", [S1, S2], 2, r=2)


def test_sign_group_check_fails_when_every_flip_is_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fiber-flip-evidence mutant: a flip accepted without a witness fails t1 at an even phi."""
    from symattn.analyses.fibers import Evidence

    t1 = load("t1_effective_identifiability")
    monkeypatch.setattr(t1, "flip_evidence", lambda *args, **kw: Evidence("flip", True, "no witness"))
    with pytest.raises(AssertionError, match=r"flipping \$M_i\$ changes \$F\$ \(exact witness\) iff"):
        t1._flip_witnesses(_t1_derivation(), False)


# ------------------------------------------------------------ proof sources: --path, entry points

EXAMPLE = ROOT / "examples" / "proof-package" / "example_lemmas"
REAL_ENTRY_POINTS = _entry_point_sources  # the fake_proofs fixture hides installed packages


@pytest.fixture(autouse=True)
def _forget_lemma_packages() -> Iterator[None]:
    """Packages loaded from a test's folders are forgotten after it (a later test reuses the names)."""
    yield
    for name in [n for n in sys.modules if n.split(".")[0] in ("mylemmas", "pkg_lemmas")]:
        del sys.modules[name]


def _lemmas(root: Path, name: str = "mylemmas") -> Path:
    """A folder of proof scripts of one's own (one passes, one fails, one helper)."""
    folder = root / name
    folder.mkdir()
    (folder / "common.py").write_text("VALUE = 2\n")
    header = "from symattn.render.derivation import Derivation\n"
    (folder / "l1_two.py").write_text(
        '"""Lemma 1: two is two."""\n' + header + f"from {name}.common import VALUE\n"
        'STATEMENT = "Lemma 1: two"\nKIND = "exact"\n\n\ndef run(full=False):\n'
        '    d = Derivation("l1_two", "Two", "$2 = 2$", KIND)\n    d.check("c", VALUE, 2)\n    return d\n')
    (folder / "l2_three.py").write_text(
        '"""Lemma 2: false."""\n' + header + 'STATEMENT = "Lemma 2: false"\nKIND = "exact"\n\n\n'
        'def run(full=False):\n    d = Derivation("l2_three", "Three", "$3 = 2$", KIND)\n'
        '    d.check("c", 3, 2)\n    return d\n')
    importlib.invalidate_caches()
    return folder


def test_path_source_ids_are_qualified_and_follow_the_paper(fake_proofs: FakeProofs, tmp_path: Path) -> None:
    folder = _lemmas(tmp_path)
    assert discover([folder]) == ["t1_alpha", "t2_beta", "t10_gamma", "n1_delta", "mylemmas:l1_two",
                                  "mylemmas:l2_three"]
    assert select(["mylemmas:"], [folder]) == ["mylemmas:l1_two", "mylemmas:l2_three"]
    assert select(["l1"], [folder]) == ["mylemmas:l1_two"]
    assert select(["mylemmas:l2", "t1"], [folder]) == ["t1_alpha", "mylemmas:l2_three"]
    passed = run_proof("mylemmas:l1_two", paths=[folder])
    assert (passed.status, passed.source, passed.summary()["source"]) == ("pass", "mylemmas", "mylemmas")
    failed = run_proof("mylemmas:l2_three", paths=[folder])
    assert failed.status == "fail" and "computed 3, expected 2" in failed.error


def test_bad_paths_are_user_errors(fake_proofs: FakeProofs, tmp_path: Path) -> None:
    with pytest.raises(SymattnError, match="not a folder"):
        discover([tmp_path / "missing"])
    (tmp_path / "my-lemmas").mkdir()
    with pytest.raises(SymattnError, match="not a Python name"):
        discover([tmp_path / "my-lemmas"])
    (tmp_path / "json").mkdir()  # the name of an imported module elsewhere
    with pytest.raises(SymattnError, match="already imported"):
        discover([tmp_path / "json"])
    with pytest.raises(SymattnError, match="unknown proof id 'nope:'"):
        select(["nope:"])


class _Entry:
    """An entry point as importlib.metadata gives it (name, value, dist, load)."""

    def __init__(self, name: str, value: str, dist: str = "mydist") -> None:
        self.name, self.value = name, value
        self.dist = type("Dist", (), {"name": dist, "version": "1.0"})()

    def load(self):
        return importlib.import_module(self.value)


def _entry_points(monkeypatch: pytest.MonkeyPatch, *entries: _Entry) -> None:
    import symattn.theorems.registry as registry

    monkeypatch.setattr(registry, "_entry_point_sources", REAL_ENTRY_POINTS)
    monkeypatch.setattr(registry.importlib.metadata, "entry_points",
                        lambda group: [e for e in entries] if group == "symattn.proofs" else [])


def test_entry_point_sources(fake_proofs: FakeProofs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    _lemmas(tmp_path, "pkg_lemmas")
    (tmp_path / "pkg_lemmas" / "__init__.py").write_text('"""Installed lemmas."""\n')
    _entry_points(monkeypatch, _Entry("mine", "pkg_lemmas"))
    assert discover()[-2:] == ["mine:l1_two", "mine:l2_three"]
    assert run_proof("mine:l1_two").status == "pass"
    # the installed package given again as a folder is the same source, not a duplicate
    with pytest.raises(SymattnError, match="two proof sources are named 'pkg_lemmas'"):
        _entry_points(monkeypatch, _Entry("pkg_lemmas", "pkg_lemmas"), _Entry("pkg_lemmas", "email"))
        discover()
    _entry_points(monkeypatch, _Entry("pkg_lemmas", "pkg_lemmas"))
    assert discover([tmp_path / "pkg_lemmas"])[-1] == "pkg_lemmas:l2_three"


@pytest.mark.parametrize(("entry", "error"), [
    (_Entry("symattn", "json"), "reserved"),
    (_Entry("broken", "no_such_module_symattn"), "cannot import the proof package of entry point broken"),
    (_Entry("flat", "json.decoder"), "does not name a package"),
])
def test_bad_entry_points_are_user_errors(fake_proofs: FakeProofs, monkeypatch: pytest.MonkeyPatch,
                                          entry: _Entry, error: str) -> None:
    _entry_points(monkeypatch, entry)
    with pytest.raises(SymattnError, match=error):
        discover()


def test_example_proof_package_runs_from_its_folder(capsys: pytest.CaptureFixture[str]) -> None:
    """The template of the docs (examples/proof-package) passes through the real registry."""
    from symattn.cli import main

    assert main(["prove", "--path", str(EXAMPLE), "example_lemmas:", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["id"], r["source"], r["status"], r["kind"]) for r in rows] == [
        ("example_lemmas:l1_cosh_cubic", "example_lemmas", "pass", "certified")]
    assert rows[0]["cases"] == 2


def test_the_paper_proofs_are_symattn_proofs_not_a_top_level_package() -> None:
    import symattn.theorems.registry as registry

    assert registry.PROOF_PACKAGE == "symattn.proofs"
    assert Path(load("t3_sharp_taylor").__file__).parent == ROOT / "proofs"
    done = subprocess.run([sys.executable, "-c", "import proofs"], cwd="/", capture_output=True, text=True)
    assert "No module named 'proofs'" in done.stderr


def test_a_source_checkout_without_install_reads_the_proofs_folder() -> None:
    """With symattn on PYTHONPATH but not installed, the paper's proofs come from ./proofs."""
    code = ("import sys; sys.meta_path[:] = [f for f in sys.meta_path if 'Editable' not in repr(f)]; "
            "from symattn.theorems.registry import discover, load; "
            "print(len(discover()), load('t3_sharp_taylor').__file__)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    count, path = done.stdout.split()
    assert int(count) >= 11 and Path(path) == ROOT / "proofs" / "t3_sharp_taylor.py"


# -- names (issue 38 item 3): a proof is selected by its id, an id prefix (the old alias) or its name

_PAPER_NAMES = {"t1": "effective-identifiability", "t4": "native-contact-spectrum", "t8": "sign-degree-covariance-fibers",
                "t10": "catalogue-series-match-expressions", "n4": "transformer-block-parts",
                "n6": "symmetry-completeness"}


def test_names_default_to_the_module_name_after_its_prefix(fake_proofs: FakeProofs) -> None:
    from symattn.theorems.registry import find

    assert [(p.id, p.name) for p in find()] == [("t1_alpha", "alpha"), ("t2_beta", "beta"),
                                                ("t10_gamma", "gamma"), ("n1_delta", "delta")]
    assert select(["alpha", "T1"]) == select(["t1_alpha"]) == ["t1_alpha"]
    assert select(["symattn:gamma"]) == ["t10_gamma"]
    assert run_proof("alpha").id == "t1_alpha"


def test_a_declared_name_selects_and_a_bad_one_is_a_user_error(fake_proofs: FakeProofs) -> None:
    from conftest import FAKE_SCRIPTS

    body = FAKE_SCRIPTS["t1_alpha"].replace('STATEMENT =', 'NAME = "binomial-square"  # what it shows\nSTATEMENT =')
    fake_proofs.add("t1_alpha", body)
    assert select(["binomial-square"]) == select(["binomial_square"]) == ["t1_alpha"]
    with pytest.raises(SymattnError, match="unknown proof id 'alpha'"):
        select(["alpha"])  # the default name gives way to the declared one
    fake_proofs.add("t1_alpha", body.replace("binomial-square", "Binomial Square"))
    with pytest.raises(SymattnError, match="declares NAME = 'Binomial Square', not a name"):
        discover()
    fake_proofs.add("t1_alpha", body.replace("binomial-square", "beta"))
    with pytest.raises(SymattnError, match="t1_alpha and t2_beta .* are both named 'beta'"):
        discover()


def test_a_package_with_a_bad_name_is_that_package_s_failure(fake_proofs: FakeProofs, tmp_path: Path) -> None:
    from symattn.theorems.registry import find

    folder = tmp_path / "badnames"
    folder.mkdir()
    (folder / "l1_x.py").write_text('NAME = "Not A Name"\n')
    broken: list = []
    assert [p.id for p in find([folder], broken)] == discover()
    assert [s.name for s in broken] == ["badnames"] and "not a name" in broken[0].problem
    with pytest.raises(SymattnError, match="not a name"):
        find([folder])


def test_the_paper_s_proofs_have_names_and_their_old_ids_stay_aliases() -> None:
    from symattn.theorems.registry import find

    proofs = find()
    for proof in proofs:  # each declares its NAME (a later file rename keeps it)
        alias = proof.script.split("_")[0]
        assert select([alias]) == select([proof.name]) == select([proof.id]) == [proof.id], proof
        assert f'NAME = "{proof.name}"' in Path(ROOT, "proofs", f"{proof.script}.py").read_text()
    assert {alias: select([name]) for alias, name in _PAPER_NAMES.items()} == {
        alias: select([alias]) for alias in _PAPER_NAMES}


def test_an_unknown_proof_name_exits_2_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    from symattn.cli import main

    assert main(["prove", "--list", "no-such-statement"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and captured.err.startswith("symattn: error: unknown proof id "
                                                                       "'no-such-statement'")
