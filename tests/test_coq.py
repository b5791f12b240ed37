"""Certificates that Coq checks (issue 25).

Rules: the theory contains no ``Admitted``, ``admit``, ``Axiom`` or
``Parameter``; every exported certificate states its claim on one line marked
``(* claim *)``; ``coqc`` accepts the certificates symattn exports and rejects
each single-entry corruption of one (a claimed order, a multiplicity, a
witness entry, a bank input, a U_i entry, the kernel count). Tests that need
``coqc`` are skipped, with the reason, where it is absent; the long cases run
with ``--runslow``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from symattn.coq.cases import dimension_case, jet_case, proof_certificates, spectrum_case
from symattn.coq.export import THEORY_FILES, identity_certificate, theory_dir, write_project
from symattn.coq.run import check_certificate, check_project, compile_theory, coqc_path
from symattn.model.architecture import Architecture

ROOT = Path(__file__).resolve().parents[1]

needs_coq = pytest.mark.skipif(coqc_path() is None,
                               reason="coqc not found: install Coq 8.16 (apt-get install coq) to run the Coq checks")

#: Words that would stand for an unproved fact.
FORBIDDEN = re.compile(r"\b(Admitted|admit|Axiom|Axioms|Parameter|Parameters|Conjecture|Hypothesis\s+\w+\s*:\s*False)\b")


def _strip_comments(text: str) -> str:
    out, depth, i = [], 0, 0
    while i < len(text):
        if text.startswith("(*", i):
            depth, i = depth + 1, i + 2
        elif text.startswith("*)", i) and depth:
            depth, i = depth - 1, i + 2
        else:
            if not depth:
                out.append(text[i])
            i += 1
    return "".join(out)


def test_theory_has_no_admitted_or_axioms():
    for name in THEORY_FILES:
        code = _strip_comments((theory_dir() / f"{name}.v").read_text())
        found = FORBIDDEN.findall(code)
        assert not found, f"{name}.v uses {found}"
        assert "Abort" not in code, f"{name}.v leaves an aborted proof"


def test_theory_files_are_the_project():
    on_disk = sorted(p.stem for p in theory_dir().glob("*.v"))
    assert sorted(THEORY_FILES) == on_disk
    listed = [line.strip() for line in (ROOT / "coq" / "_CoqProject").read_text().splitlines()
              if line.strip().endswith(".v")]
    assert listed == [f"theories/{n}.v" for n in THEORY_FILES]


@pytest.fixture(scope="module")
def quick():
    """Small certificates, computed by symattn."""
    return {
        "spectrum": spectrum_case(Architecture.uniform(2, 2, 1, 2, "exp"), name="q_spectrum_D2"),
        "spectrum1": spectrum_case(Architecture.uniform(1, 2, 1, 2, "exp"), name="q_spectrum_D1"),
        "jet": jet_case(Architecture.uniform(2, 2, 1, 2, "exp"), name="q_jet_D2"),
        "dimension": dimension_case(Architecture.uniform(1, 2, 1, 2, "exp"), name="q_dimension"),
        "identity": identity_certificate("q_identity"),
    }


def test_each_certificate_states_one_claim(quick):
    for cert in quick.values():
        claims = [line for line in cert.source.splitlines() if line.rstrip().endswith("(* claim *)")]
        assert len(claims) == 1, cert.name
        assert cert.claim in claims[0]
        assert f"Theorem {cert.name}" in cert.source
        assert "vm_compute" in cert.source or cert.kind == "identity"


def test_spectrum_claim_is_symattns_result(quick):
    claim = quick["spectrum"].claim
    # Theorem 4, softmax, d = 2, r = 1, D = 2: 4 units, t^1 x 3, t^5 x 3, kernel 6 (computed, not typed here)
    from symattn.analyses.spectrum import native_spectrum

    s = native_spectrum(Architecture.uniform(2, 2, 1, 2, "exp"))
    orders = [b.order for b in s.bands for _ in range(b.multiplicity)]
    assert f"([{'; '.join(map(str, orders))}])%nat {s.kernel}" in claim


def test_project_is_self_contained(tmp_path, quick):
    write_project(tmp_path, [quick["identity"]])
    for name in THEORY_FILES:
        assert (tmp_path / "theories" / f"{name}.v").is_file()
    assert (tmp_path / "_CoqProject").read_text().startswith("-Q theories Symattn")
    assert (tmp_path / "Makefile").is_file()
    assert (tmp_path / "certificates" / f"{quick['identity'].name}.v").is_file()
    assert (tmp_path / "claims" / f"{quick['identity'].name}.v").is_file()


@pytest.fixture(scope="module")
def compiled(tmp_path_factory, quick):
    """A project with the quick certificates and the theory compiled."""
    if coqc_path() is None:
        pytest.skip("coqc not found: install Coq 8.16 (apt-get install coq)")
    root = tmp_path_factory.mktemp("coq")
    write_project(root, list(quick.values()))
    theory = compile_theory(root)
    assert theory.ok, theory.message
    return root


@needs_coq
def test_coqc_accepts_the_quick_certificates(compiled, quick):
    for cert in quick.values():
        run = check_certificate(compiled, cert.name)
        assert run.ok, f"{cert.name}: {run.status}: {run.message}"


def _mutate(root: Path, cert_name: str, new_name: str, edit) -> str:
    src = (root / "certificates" / f"{cert_name}.v").read_text()
    src = src.replace(f"Theorem {cert_name}", f"Theorem {new_name}")
    cert_name = new_name
    changed = edit(src).replace(f"Theorem {cert_name}", f"Theorem {new_name}")
    assert changed != src.replace(f"Theorem {cert_name}", f"Theorem {new_name}"), "the mutation changed nothing"
    (root / "certificates" / f"{new_name}.v").write_text(changed)
    return new_name


def _first_number_after(src: str, marker: str, delta: int = 1) -> str:
    """Add ``delta`` to the first integer literal after ``marker``."""
    i = src.index(marker) + len(marker)
    m = re.compile(r"-?\d+").search(src, i)
    return src[: m.start()] + str(int(m.group()) + delta) + src[m.end():]


MUTATIONS = {
    # one claimed order: the last t^5 becomes t^6
    "order": ("spectrum", lambda s: s.replace("5; 5; 5])%nat 6", "5; 5; 6])%nat 6")),
    # one multiplicity: t^5 x 2 and one more kernel direction (the count still adds up)
    "multiplicity": ("spectrum", lambda s: s.replace("5; 5; 5])%nat 6", "5; 5])%nat 7")),
    # the kernel count alone
    "kernel": ("spectrum", lambda s: s.replace("5; 5; 5])%nat 6", "5; 5; 5])%nat 5")),
    # one entry of the inverse witness of the divided frame
    "witness": ("spectrum", lambda s: _first_number_after(s, "sw_WE := ([[")),
    # one entry of one bank input
    "bank": ("spectrum", lambda s: _first_number_after(s, "Definition bank : list QSM := map fixed_input [[[(")),
    # one entry of U_1
    "U": ("spectrum", lambda s: _first_number_after(s, "Definition U : list QM := [[[(")),
    # the jet: the sharp degree claimed one lower
    "jet-degree": ("jet", lambda s: s.replace("(constant L) rays) 12 7", "(constant L) rays) 12 6")),
    # the dimension: one more than the rank
    "dimension": ("dimension", lambda s: re.sub(r"\) (\d+)\. \(\* claim \*\)",
                                                 lambda m: f") {int(m.group(1)) + 1}. (* claim *)", s)),
}


@needs_coq
@pytest.mark.parametrize("kind", sorted(MUTATIONS))
def test_coqc_rejects_a_broken_certificate(compiled, quick, kind):
    source, edit = MUTATIONS[kind]
    name = _mutate(compiled, quick[source].name, f"broken_{kind.replace('-', '_')}", edit)
    run = check_certificate(compiled, name)
    assert run.status == "failed", f"{kind}: coqc {run.status}"


@needs_coq
def test_only_standard_library_axioms(compiled):
    probe = compiled / "certificates" / "axioms.v"
    probe.write_text("From Symattn Require Import Checker Identity.\n"
                     "Print Assumptions check_spectrum_mod_sound.\nPrint Assumptions check_jet_mod_sound.\n"
                     "Print Assumptions check_native_rank_sound.\nPrint Assumptions reduction_d2.\n")
    out = subprocess.run([coqc_path(), "-Q", "theories", "Symattn", "-Q", "certificates", "Cert",
                          "certificates/axioms.v"], cwd=compiled, capture_output=True, text=True, check=True).stdout
    names = set(re.findall(r"^([A-Za-z_][\w.']*) :", out, re.M))
    allowed = ("Uint63.", "PrimInt63.", "ClassicalDedekindReals.", "Classical_Prop.", "FunctionalExtensionality.")
    assert names and all(n.startswith(allowed) for n in names), sorted(n for n in names if not n.startswith(allowed))


def test_cli_writes_a_certificate(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "symattn", "jet", "--depth", "1", "--width", "2", "--coq",
                           str(tmp_path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "Coq certificate" in proc.stdout
    assert list((tmp_path / "certificates").glob("jet_*.v"))


def test_cli_keeps_a_file_it_did_not_write(tmp_path):
    """``--coq DIR`` goes through symattn's safe writer: a foreign file is refused (exit 2, one line,
    left as it was), ``--force`` replaces it; a file where the folder should be is refused first."""
    argv = [sys.executable, "-m", "symattn", "jet", "--depth", "1", "--width", "2", "--coq", str(tmp_path)]
    (tmp_path / "certificates").mkdir()
    assert subprocess.run(argv, capture_output=True, text=True).returncode == 0
    mine = next((tmp_path / "certificates").glob("jet_*.v"))
    mine.write_text("(* the user's notes *)\n")
    proc = subprocess.run(argv, capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.strip().count("\n") == 0, proc.stderr
    assert "refusing to overwrite" in proc.stderr and "--force" in proc.stderr
    assert mine.read_text() == "(* the user's notes *)\n"
    assert subprocess.run(argv + ["--force"], capture_output=True, text=True).returncode == 0
    assert "(* claim *)" in mine.read_text()
    (tmp_path / "plain").write_text("x")
    proc = subprocess.run(argv[:-1] + [str(tmp_path / "plain")], capture_output=True, text=True)
    assert proc.returncode == 2 and "not a folder" in proc.stderr


def test_theory_copy_is_kept_when_unchanged(tmp_path, quick):
    """A second export leaves the theory files as they were, so compiled ``.vo`` files stay valid."""
    write_project(tmp_path, [quick["identity"]])
    stamp = [(tmp_path / "theories" / f"{n}.v").stat().st_mtime_ns for n in THEORY_FILES]
    write_project(tmp_path, [quick["jet"]])
    assert stamp == [(tmp_path / "theories" / f"{n}.v").stat().st_mtime_ns for n in THEORY_FILES]
    assert f"certificates/{quick['identity'].name}.v" in (tmp_path / "_CoqProject").read_text()


def test_prove_coq_without_coqc_says_so(tmp_path, monkeypatch):
    """Where ``coqc`` is absent the certificates are still written and the column says ``coqc absent``
    (never a pass, never a crash)."""
    import symattn.coq.prove as coq_prove
    import symattn.coq.run as coq_run

    monkeypatch.setattr(coq_prove, "coqc_path", lambda: None)
    monkeypatch.setattr(coq_run, "coqc_path", lambda: None)
    said = []
    cells, where = coq_prove.check_proofs(["t1_effective_identifiability", "t2_exceptional_fibers"],
                                          directory=str(tmp_path), say=said.append)
    assert cells["t1_effective_identifiability"].text() == "coqc absent"
    assert not cells["t1_effective_identifiability"].failed
    assert cells["t2_exceptional_fibers"].text() == "not covered"
    assert any("coqc not found" in msg and "apt-get install coq" in msg for msg in said)
    assert list((tmp_path / "certificates").glob("*.v"))


def test_cli_refuses_variants_with_coq(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "symattn", "spectrum", "--depth", "1", "--width", "2",
                           "--rank", "1", "--residual", "value", "--coq", str(tmp_path)],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "--coq" in proc.stderr


def with_compiled_theory(compiled: Path, root: Path) -> Path:
    """``root`` with a copy of the compiled theory (and its manifest), so that nothing recompiles it."""
    import shutil

    shutil.copytree(compiled / "theories", root / "theories")
    return root


@needs_coq
def test_prove_coq_column(compiled, tmp_path):
    from symattn.coq.prove import check_proofs

    cells, _ = check_proofs(["t1_effective_identifiability", "t2_exceptional_fibers"],
                            directory=str(with_compiled_theory(compiled, tmp_path / "p")), say=lambda msg: None)
    assert cells["t1_effective_identifiability"].status == "checked"
    assert cells["t2_exceptional_fibers"].text() == "not covered"


@pytest.mark.slow
@needs_coq
def test_every_quick_proof_case_checks(tmp_path):
    certs = [c for pid in ("t1_effective_identifiability", "t3_sharp_taylor", "t4_native_spectrum")
             for c in proof_certificates(pid)]
    write_project(tmp_path, certs)
    theory, runs = check_project(tmp_path, [c.name for c in certs])
    assert theory.ok, theory.message
    assert all(r.ok for r in runs), [(r.name, r.status, r.message) for r in runs if not r.ok]
