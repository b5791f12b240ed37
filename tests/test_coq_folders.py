"""Coq folders keep the contract (issue 43, item 1) and certificates are bound to the printed point
(issue 42, item 2): the replayed cases.

Rules: ``--coq DIR`` checks everything before it writes anything (links anywhere on the path and at
the project folders, ``.v`` files symattn did not write, the user's own Makefile, every target);
``_CoqProject`` and the Makefile list only what symattn's manifests list; certificate names come
from a hash of the point and are valid Coq module names, so that no certificate replaces another;
the Makefile's default target fails unless ``Print Assumptions`` of every claim lists only the
standard library's axioms (an ``Admitted`` certificate fails ``make``); printed commands are
shell-quoted; an option that does not apply is refused with one line; a certificate about another
point than the printed result is refused (in Python before writing, and by Coq at ``make``).
Tests that need ``coqc`` are skipped, with the reason, where it is absent.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symattn.cli import main
from symattn.coq.export import NAME_PATTERN, THEORY_FILES, certificate_name, write_project
from symattn.coq.run import check_certificate, compile_theory, coqc_path

needs_coq = pytest.mark.skipif(coqc_path() is None,
                               reason="coqc not found: install Coq 8.16 (apt-get install coq) to run the Coq checks")
needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="make not found")

JET = ["jet", "--depth", "1", "--width", "2"]


def run(argv: list[str]) -> tuple[int, str, str]:
    """``symattn ARGV`` in this process: exit status, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def refused(code: int, err: str, *words: str) -> None:
    """Exit 2 with one line ``symattn: error: ...`` naming ``words``."""
    lines = [line for line in err.splitlines() if line.startswith("symattn:")]
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("symattn: error:"), err
    for word in words:
        assert word in lines[0], lines[0]


def tree(root: Path) -> list[str]:
    """Every path below ``root`` (links not followed)."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


# ---------------------------------------------------------------- nothing runs that nobody asked for
def test_stray_backtick_file_is_refused_and_never_listed(tmp_path):
    """``c/certificates/b`id>PWNED`.v``: refused before anything is written; with ``--force`` it stays
    but is neither listed in ``_CoqProject`` nor named in the Makefile."""
    c = tmp_path / "c"
    (c / "certificates").mkdir(parents=True)
    stray = c / "certificates" / "b`id>PWNED`.v"
    stray.touch()
    before = tree(c)
    code, _, err = run([*JET, "--coq", str(c)])
    refused(code, err, "did not write")
    assert tree(c) == before
    code, out, err = run([*JET, "--coq", str(c), "--force"])
    assert code == 0, err
    assert "PWNED" not in (c / "_CoqProject").read_text() and "PWNED" not in (c / "Makefile").read_text()
    assert "`" not in (c / "Makefile").read_text()
    assert stray.exists()


def test_foreign_file_with_a_space_is_refused(tmp_path):
    """A foreign ``.v`` with a space in its name: one line, exit 2 (no CalledProcessError), nothing written."""
    c = tmp_path / "c"
    (c / "certificates").mkdir(parents=True)
    (c / "certificates" / "my notes.v").write_text("(* mine *)\n")
    before = tree(c)
    code, _, err = run([*JET, "--coq", str(c)])
    refused(code, err, "my notes.v")
    assert tree(c) == before


def test_project_lists_only_the_manifest(tmp_path):
    """``_CoqProject`` lists the theory and symattn's certificates with their claim files, nothing else;
    a certificate edited by the user after symattn wrote it is no longer listed."""
    c = tmp_path / "c"
    assert run([*JET, "--coq", str(c)])[0] == 0
    assert run([*JET, "--normalizer", "cosh", "--coq", str(c)])[0] == 0
    certs = sorted(p.stem for p in (c / "certificates").glob("*.v"))
    assert len(certs) == 2
    listed = [line for line in (c / "_CoqProject").read_text().splitlines() if line.endswith(".v")]
    assert listed == ([f"theories/{t}.v" for t in THEORY_FILES]
                      + [f for n in certs for f in (f"certificates/{n}.v", f"claims/{n}.v")])
    exp = next(n for n in certs if "_exp_" in n)
    edited = c / "certificates" / f"{exp}.v"
    edited.write_text(edited.read_text() + "(* edited *)\n")
    code, _, err = run([*JET, "--normalizer", "cosh", "--coq", str(c), "--force"])
    assert code == 0, err
    assert exp not in (c / "_CoqProject").read_text() and exp not in (c / "Makefile").read_text()
    assert edited.read_text().endswith("(* edited *)\n")


# ---------------------------------------------------------------- files replaced or written where they should not be
@pytest.mark.parametrize("where", ["theories", "certificates", "claims", "root", "parent"])
def test_links_on_the_path_are_refused(tmp_path, where):
    """A symbolic link at DIR, at one of its project folders or above DIR: refused, and nothing is
    written into the link's target (nor anywhere else)."""
    target = tmp_path / "elsewhere"
    target.mkdir()
    if where == "root":
        c = tmp_path / "c"
        c.symlink_to(target, target_is_directory=True)
    elif where == "parent":
        (tmp_path / "up").symlink_to(target, target_is_directory=True)
        c = tmp_path / "up" / "c"
    else:
        c = tmp_path / "c"
        c.mkdir()
        (c / where).symlink_to(target, target_is_directory=True)
    before = tree(tmp_path)
    code, _, err = run([*JET, "--coq", str(c)])
    refused(code, err, "symbolic link")
    assert tree(tmp_path) == before and not list(target.iterdir())


def test_users_makefile_refused_before_anything_is_written(tmp_path):
    c = tmp_path / "c"
    c.mkdir()
    (c / "Makefile").write_text("all:\n\techo mine\n")
    code, _, err = run([*JET, "--coq", str(c)])
    refused(code, err, "Makefile")
    assert tree(c) == ["Makefile"]
    assert (c / "Makefile").read_text() == "all:\n\techo mine\n"


@pytest.mark.parametrize("first,second,depth", [("exp(s^2)", "exp(s)^2", "1"), ("exp,cosh", "exp,exp", "2"),
                                                ("exp(0.5*s)", "exp(s/2)", "1")])
def test_names_are_distinct_valid_and_nothing_is_replaced(tmp_path, first, second, depth):
    """Names come from a hash of the point (normalizers' names and series, seed, data, claim): two
    different claims never share a file, and every name is a Coq module name."""
    c = tmp_path / "c"
    argv = ["jet", "--depth", depth, "--width", "2", "--coq", str(c)]
    code, _, err = run([*argv, "--normalizer", first])
    assert code == 0, err
    (one,) = list((c / "certificates").glob("*.v"))
    kept = one.read_bytes()
    code, _, err = run([*argv, "--normalizer", second])
    assert code == 0, err
    names = sorted(p.stem for p in (c / "certificates").glob("*.v"))
    assert len(names) == 2 and all(NAME_PATTERN.fullmatch(n) for n in names), names
    assert one.read_bytes() == kept


def test_name_hash_covers_every_layer_and_the_seed():
    base = {"kind": "jet", "architecture": {"normalizers": ["exp", "cosh"]}, "seed": 0}
    names = {certificate_name("jet", {**base, **change}) for change in
             ({}, {"architecture": {"normalizers": ["exp", "exp"]}}, {"seed": 1}, {"data": {"rays": [["1"]]}})}
    assert len(names) == 4


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=120), st.text(max_size=40), st.text(max_size=40))
def test_fuzzed_names_are_module_names_and_follow_the_point(prefix, phi, other):
    """Any prefix (a normalizer as typed, control characters, quotes, backticks) gives a Coq module
    name that is a plain file name; two points that differ in a normalizer's name get two names."""
    one = certificate_name(prefix, {"kind": "jet", "architecture": {"normalizers": [phi]}})
    two = certificate_name(prefix, {"kind": "jet", "architecture": {"normalizers": [other]}})
    assert NAME_PATTERN.fullmatch(one) and NAME_PATTERN.fullmatch(two)
    assert (one == two) == (phi == other)


def test_printed_command_is_shell_quoted(tmp_path):
    c = tmp_path / "a b;$(x)"
    code, out, err = run([*JET, "--coq", str(c)])
    assert code == 0, err
    line = next(line for line in out.splitlines() if line.startswith("Coq certificate"))
    assert line.endswith(f"(check with: make -C {shlex.quote(str(c))})")
    path = re.match(r"Coq certificate: (.*) \(check with", line).group(1)
    assert shlex.split(path) == [str(next((c / "certificates").glob("*.v")))]


# ---------------------------------------------------------------- options that do not apply
def test_empty_coq_folder_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = run([*JET, "--coq", ""])
    refused(code, err, "--coq")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("command", [["spectrum", "--depth", "1", "--width", "2", "--rank", "1"],
                                     ["jet", "--depth", "1", "--width", "2"],
                                     ["dimension", "--depth", "1", "--widths", "2", "--ranks", "1"]])
def test_numerical_method_with_coq_is_refused(tmp_path, command):
    code, _, err = run([*command, "--method", "numerical", "--coq", str(tmp_path / "c")])
    refused(code, err, "--coq", "--method numerical")
    assert not (tmp_path / "c").exists()


def test_constants_method_writes_the_certificate(tmp_path):
    """``--method constants`` on the paper's stack certifies the spectrum (its bank's separation is
    evidence there; the certificate's frame witness decides it), so the certificate is written."""
    c = tmp_path / "c"
    code, out, err = run(["spectrum", "--depth", "1", "--width", "2", "--rank", "1", "--method", "constants",
                          "--coq", str(c)])
    assert code == 0, err
    assert "Coq certificate" in out and len(list((c / "certificates").glob("spectrum_*.v"))) == 1


def test_normalizer_with_a_slash_gets_a_certificate(tmp_path):
    """``--normalizer 'exp(s/2)'`` with ``--coq``: a valid module name (no exit 70, nothing written first)."""
    code, out, err = run([*JET, "--normalizer", "exp(s/2)", "--coq", str(tmp_path / "c")])
    assert code == 0, err
    (cert,) = list((tmp_path / "c" / "certificates").glob("*.v"))
    assert NAME_PATTERN.fullmatch(cert.stem)


# ---------------------------------------------------------------- certificates bound to the printed point
def test_certificate_of_another_point_is_refused(tmp_path, monkeypatch):
    """The exporter built from another seed than the printed result: refused (exit 1, one line),
    nothing written."""
    import symattn.coq.cases as cases

    real = cases.jet_certificate
    monkeypatch.setattr(cases, "jet_certificate", lambda arch, eta, rays, degree, **kw: real(
        arch, eta, cases.random_bank(arch, len(rays), 1), degree, **kw))
    code, _, err = run([*JET, "--coq", str(tmp_path / "c")])
    assert code == 1, err
    assert "another point than the printed result" in err and "rays" in err
    assert not (tmp_path / "c").exists()


@pytest.fixture(scope="module")
def theory(tmp_path_factory):
    """A project folder with the theory compiled once (copied into each test's folder)."""
    if coqc_path() is None:
        pytest.skip("coqc not found: install Coq 8.16 (apt-get install coq) to run the Coq checks")
    root = tmp_path_factory.mktemp("theory")
    write_project(root, [])
    run_ = compile_theory(root)
    assert run_.ok, run_.message
    return root / "theories"


def _project(theory: Path, root: Path) -> Path:
    shutil.copytree(theory, root / "theories")
    return root


@needs_coq
def test_coq_refuses_a_certificate_of_another_point(theory, tmp_path):
    """Coq's own check: the claim file, written from the printed point, refuses a certificate whose
    data are another point's, though the certificate itself checks."""
    from symattn.analyses.jets import generic_effective, sharp_degree
    from symattn.coq.cases import jet_case, jet_point
    from symattn.model.architecture import Architecture

    arch = Architecture.uniform(1, 2, 1, 2, "exp")
    eta = generic_effective(arch, 0)
    res = sharp_degree(arch, eta, seed=0)
    other = jet_case(arch, generic_effective(arch, 1), seed=1)
    root = write_project(_project(theory, tmp_path / "c"), [other], claims=[jet_point(arch, eta, res, 0)])
    run_ = check_certificate(root, other.name)
    assert run_.status == "failed" and run_.message.startswith("claim:"), run_.message


@needs_coq
@needs_make
def test_make_fails_on_an_admitted_certificate(theory, tmp_path):
    """The Makefile's default target: green for symattn's certificate, red once its proof is
    replaced by ``Admitted.`` (Print Assumptions lists the claim itself)."""
    c = _project(theory, tmp_path / "c")
    code, out, err = run([*JET, "--coq", str(c)])
    assert code == 0, err
    env = {**os.environ, "LC_ALL": "C"}
    ok = subprocess.run(["make", "-C", str(c)], capture_output=True, text=True, env=env)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "theories/Alg.v" not in ok.stdout  # the copied theory was not recompiled
    (cert,) = list((c / "certificates").glob("*.v"))
    text = cert.read_text()
    cert.write_text(text.replace("vm_compute. reflexivity. Qed.", "Admitted."))
    bad = subprocess.run(["make", "-C", str(c)], capture_output=True, text=True, env=env)
    assert bad.returncode != 0
    assert "assumptions beyond the standard library" in bad.stdout, bad.stdout[-2000:]


# ---------------------------------------------------------------- the trusted base (issue 42, item 3)
#: The checker's arithmetic bounds, stated as lemmas of ``Checker.v`` (docs/coq.rst lists them).
BOUND_LEMMAS = ("bound_modulus", "bound_residue_sum", "bound_residue_product", "bound_no_wrap", "bound_zero_primes")


def _statement(text: str, name: str) -> str:
    """The statement of ``Lemma name`` (up to ``Proof.``), whitespace-normalized."""
    m = re.search(rf"^Lemma {name}\b(.*?)\nProof\.", text, re.S | re.M)
    assert m, f"Checker.v states no lemma {name}"
    return " ".join(f"Lemma {name}{m.group(1)}".split())


def test_bound_lemmas_are_stated_and_listed():
    """Each bound is a lemma of the theory, and docs/coq.rst quotes its statement verbatim, so a
    loosened statement is seen (a loosened check breaks the lemma's proof: the theory stops
    compiling). The Python side's moduli satisfy the lemmas' hypotheses."""
    from symattn.coq.export import MODULUS, theory_dir, zero_candidates

    checker = (theory_dir() / "Checker.v").read_text()
    docs = " ".join((Path(__file__).resolve().parents[1] / "docs" / "coq.rst").read_text().split())
    for name in BOUND_LEMMAS:
        assert _statement(checker, name) in docs, f"docs/coq.rst does not quote {name} as Checker.v states it"
    assert 1 < MODULUS < 2**31 and all(1 < p < 2**31 for p in zero_candidates())
    assert "(to_Z p <? 2147483648)%Z" in checker  # p_ok: the bound bound_modulus names


def test_the_trusted_theory_compiles(theory):
    """The default suite compiles the theory (``coqc`` on ``coq/theories``, about 20 s; the .v
    mutants of the catalogue are killed here) and every file has its ``.vo``."""
    assert all((theory / f"{name}.vo").is_file() for name in THEORY_FILES)


def test_prove_coq_stops_at_a_broken_theory(tmp_path, monkeypatch):
    """``symattn prove --coq`` compiles the theory first: a theory that fails fails every covered
    proof at once (no certificate is built), and an uncovered proof stays "not covered"."""
    import symattn.coq.prove as coq_prove
    from symattn.coq.run import CoqRun

    monkeypatch.setattr(coq_prove, "coqc_path", lambda: "/usr/bin/coqc")
    monkeypatch.setattr(coq_prove, "compile_theory", lambda root, timeout: CoqRun(
        "theory", "failed", 1.0, 1.0, "Checker.v: Error: Tactic failure"))
    monkeypatch.setattr(coq_prove, "proof_certificates", lambda *a: pytest.fail("a certificate was built"))
    cells, _ = coq_prove.check_proofs(["t1_effective_identifiability", "t2_exceptional_fibers"],
                                      directory=str(tmp_path / "p"), say=lambda msg: None)
    assert cells["t1_effective_identifiability"].failed
    assert cells["t1_effective_identifiability"].message.startswith("theory: Checker.v")
    assert cells["t2_exceptional_fibers"].text() == "not covered"


@needs_coq
def test_check_certificate_reads_the_assumptions(theory, tmp_path):
    """``symattn prove --coq``'s check (``check_certificate``) fails a certificate whose proof was
    replaced by ``Admitted.``, as ``make`` does."""
    from symattn.coq.export import identity_certificate

    cert = identity_certificate("q")
    root = write_project(_project(theory, tmp_path / "c"), [cert])
    assert check_certificate(root, cert.name).ok
    path = root / "certificates" / f"{cert.name}.v"
    path.write_text(path.read_text().replace("Proof. intros; apply layer_identity; auto. Qed.", "Admitted."))
    run_ = check_certificate(root, cert.name)
    assert run_.status == "failed" and "beyond the standard library" in run_.message, run_.message
