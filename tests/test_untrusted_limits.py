"""Bad input, limits, stores and output files: the third hostile corpus, replayed (issue 43, items
3-6; issue 42, item 4).

Each case of issue 43's list that is not about Coq folders, proof packages or the audit is a
test here, beside the replayed corpora of ``test_untrusted.py`` and ``test_untrusted_files.py``:

* **bad input exits 2 with one line**: numbers are range-checked before they are converted
  (``--eps 1e-100000`` on the command line, in ``poly:``, in ``--spec``, in ``sensitivity``,
  in matrices), ``--eps ''`` is refused, an option of an absent part (``--eps`` without
  ``--norm``, ``--activation`` without ``--mlp``) is refused naming the conflict, an
  irrational normalizer in a sweep spec is refused before anything runs, and the Python API
  refuses wrong argument types at its boundary (never a deep exception, never evaluated text);
* **limits that limit**: the ball tier of the dimension estimates its memory before it
  allocates and stops at a CPU-time budget;
* **stores**: a sweep killed by SIGKILL at any moment leaves no empty store and resumes; a
  result of another symattn version or other options is never counted as done (a property
  test); the atlas Markdown cannot start a line from a store row;
* **output files**: a file symattn wrote and the user edited is not overwritten without
  ``--force`` (the ownership check of :mod:`symattn.core.output`).

Hypothesis extends the fuzzing to written rationals and to store versions.
"""

from __future__ import annotations

import contextlib
import io
import json
import signal
import sqlite3
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symattn.cli import main
from symattn.core.errors import SymattnError
from symattn.core.validate import BadType


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


def _one_error_line(err: str) -> None:
    assert err.startswith("symattn: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err and "internal error" not in err, err


# ------------------------------------------------------------------ bad input, exit 2
_SPECS = {
    "eps-huge.toml": 'width = 2\ntokens = 3\n[[layer]]\nnorm = "post"\neps = "1e-100000"\n',
    "poly-huge.toml": 'width = 2\ntokens = 3\n[[layer]]\nmlp = 2\nactivation = "poly:1e-100000,1"\n',
    "eps-alone.toml": 'width = 2\ntokens = 3\n[[layer]]\neps = "1e-5"\n',
    "activation-alone.toml": 'width = 2\ntokens = 3\n[[layer]]\nactivation = "gelu"\n',
    "eps-empty.toml": 'width = 2\ntokens = 3\n[[layer]]\nnorm = "post"\neps = ""\n',
}
D1 = ("--depth", "1", "--width", "2")

#: (argv, a text the error line must hold): every one exits 2 with that one line.
BAD_INPUT = [
    (("jet", *D1, "--norm", "post", "--eps", "1e-100000"), "more than 1024 bits"),
    (("spectrum", *D1, "--norm", "post", "--eps", "1e-100000"), "more than 1024 bits"),
    (("dimension", "--depth", "1", "--widths", "2", "--ranks", "1", "--norm", "post", "--eps", "1e-100000"),
     "more than 1024 bits"),
    (("sensitivity", *D1, "--norm", "post", "--eps", "1e-100000"), "more than 1024 bits"),
    (("jet", *D1, "--norm", "post", "--eps", "1e999999999999"), "more than 1024 bits"),
    (("jet", *D1, "--mlp", "2", "--activation", "poly:1e-100000,1"), "more than 1024 bits"),
    (("jet", *D1, "--mlp", "2", "--activation", "poly:1,1/0"), "divides by zero"),
    (("jet", "--spec", "eps-huge.toml"), "more than 1024 bits"),
    (("sensitivity", "--spec", "eps-huge.toml"), "more than 1024 bits"),
    (("jet", "--spec", "poly-huge.toml"), "more than 1024 bits"),
    (("jet", *D1, "--norm", "post", "--eps", ""), "eps is empty"),
    (("jet", *D1, "--norm", "post", "--eps", "  "), "eps is empty"),
    (("jet", "--spec", "eps-empty.toml"), "eps is empty"),
    (("jet", *D1, "--norm", "post", "--eps", "2"), "in [0, 1]"),
    (("jet", *D1, "--norm", "post", "--eps=-1/2"), "in [0, 1]"),
    (("jet", *D1, "--norm", "post", "--eps", "0x10"), "must be a rational"),
    (("jet", *D1, "--eps", "1/10"), "--eps is the LayerNorm's eps, but no LayerNorm"),
    (("spectrum", *D1, "--eps", "1e-5", "--bias"), "--norm pre|post"),
    (("jet", *D1, "--activation", "gelu"), "--activation is the MLP's activation, but no MLP"),
    (("sensitivity", *D1, "--activation", "tanh"), "--mlp M"),
    (("jet", "--spec", "eps-alone.toml"), "eps is the LayerNorm's eps, but the layer has no norm"),
    (("jet", "--spec", "activation-alone.toml"), "activation is the MLP's, but the layer has no mlp"),
    (("fiber", "--normalizer", "exp", "--L", "[[\"1e-100000\", 0]]", "--M", "[[1, 0], [0, 2]]", "--tokens", "2"),
     "bits"),
]


@pytest.mark.parametrize("argv, message", BAD_INPUT, ids=[" ".join(a)[:70] for a, _ in BAD_INPUT])
def test_bad_input_exits_2_with_one_line(argv, message, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name, text in _SPECS.items():
        (tmp_path / name).write_text(text)
    start = time.process_time()
    status, out, err = _cli(*argv)
    assert status == 2, (argv, status, err)
    _one_error_line(err)
    assert message in err, (message, err)
    assert time.process_time() - start < 30  # CPU time: refused before any work, never a long run


def test_a_sweep_refuses_an_irrational_normalizer_before_running(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    for phi in ("exp(pi*s)", "exp(sqrt(2)*s)", "cosh(E*s)"):
        Path("i.toml").write_text(f'analyses = ["jet", "dimension"]\n[[grid]]\ndepth = 1\nwidth = 2\n'
                                  f'normalizer = "{phi}"\n')
        status, _, err = _cli("sweep", "i.toml", "--store", "i.sqlite", "--workers", "0")
        assert status == 2, err
        _one_error_line(err)
        assert "irrational Taylor coefficient" in err
        assert not Path("i.sqlite").exists()  # nothing ran, no store was made
    # the numerical tier of the dimension takes any normalizer: the spec is not refused for it
    from symattn.sweep.run import parse_spec

    spec = parse_spec({"analyses": ["dimension"], "options": {"dimension": {"method": "numerical"}},
                       "grid": [{"depth": 1, "width": 2, "normalizer": "exp(pi*s)"}]})
    assert [c.analysis for c in spec.cases] == ["dimension"]


def _api_cases():
    import sympy

    from symattn import Architecture, sharp_degree
    from symattn.analyses.fibers import effective_fiber
    from symattn.model.layers import Layer
    from symattn.model.normalizer import Normalizer
    from symattn.testing import assert_identity, assert_series_equal
    from symattn.analyses.conjectures import conjectures, family_table

    A = Architecture.uniform(1, 2, 1, 2, "exp")
    M = [[[1, 2], [0, 1]]]
    t = sympy.Symbol("t")
    return [
        ("Architecture normalizers a string", lambda: Architecture((2, 2), (1,), 2, "exp"), BadType, "normalizers"),
        ("Layer normalizer a string", lambda: Layer(2, 2, "exp"), BadType, "Normalizer"),
        ("Layer normalizer a number", lambda: Layer(2, 2, 3), BadType, "normalizer"),
        ("sharp_degree eta a string", lambda: sharp_degree(A, eta="x"), BadType, "eta"),
        ("effective_fiber a text matrix", lambda: effective_fiber("[[1,0]]", M, "exp", 2), BadType, "parse_matrix"),
        ("effective_fiber text entries", lambda: effective_fiber([["ab", 0]], M, "exp", 2), SymattnError,
         "matrix entry"),
        ("effective_fiber a huge entry", lambda: effective_fiber([["1e-100000", 0]], M, "exp", 2), SymattnError,
         "1024 bits"),
        ("effective_fiber ragged scores", lambda: effective_fiber([[1, 0]], [[[1, 2], [0]]], "exp", 2),
         SymattnError, "equal length"),
        ("effective_fiber object entries", lambda: effective_fiber([[object(), 0]], M, "exp", 2), BadType,
         "matrix entry"),
        ("a ragged mask", lambda: Layer(2, 2, Normalizer("exp")).with_kind(mask=((1, 0), (1,))), SymattnError,
         "mask"),
        ("eps a huge text", lambda: Layer(2, 2, Normalizer("exp")).with_kind(norm="post", eps="1e-100000"),
         SymattnError, "1024 bits"),
        ("eps a huge Fraction", lambda: Layer(2, 2, Normalizer("exp")).with_kind(norm="post", eps=Fraction(1, 10**5000)),
         SymattnError, "1024 bits"),
        ("conjectures depth a string", lambda: conjectures("residual", max_depth="3"), BadType, "max_depth"),
        ("conjectures fit a string", lambda: conjectures("residual", fit="2"), BadType, "fit"),
        ("family_table depths strings", lambda: family_table("causal", depths=("1",)), BadType, "depth"),
        ("assert_series_equal an int", lambda: assert_series_equal(5, [1]), BadType, "actual"),
        ("assert_series_equal a string", lambda: assert_series_equal([1], "1"), BadType, "expected"),
        ("assert_series_equal order a string", lambda: assert_series_equal([1], [1], order="2"), BadType, "order"),
        ("assert_series_equal a text coefficient", lambda: assert_series_equal(["1"], [sympy.S(1)]), BadType,
         "not text"),
        ("assert_identity an object", lambda: assert_identity(object(), 1), BadType, "lhs"),
        ("assert_identity text", lambda: assert_identity("__import__('os').system('touch pwned')", 1), BadType,
         "not text"),
        ("assert_identity a bad variable", lambda: assert_identity(t, t, variable=3, order=2), BadType, "variable"),
    ]


@pytest.mark.parametrize("case", _api_cases(), ids=lambda c: c[0])
def test_the_python_api_refuses_wrong_types_at_its_boundary(case, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    _, call, kind, word = case
    with pytest.raises(kind) as info:
        call()
    assert isinstance(info.value, SymattnError) and isinstance(info.value, (TypeError, ValueError))
    assert word in str(info.value), str(info.value)
    assert not (tmp_path / "pwned").exists()


def test_a_normalizer_name_in_architecture_is_parsed() -> None:
    from symattn import Architecture

    assert Architecture((2, 2), (1,), 2, ("exp",)) == Architecture.uniform(1, 2, 1, 2, "exp")


# ------------------------------------------------------------------ rationals, fuzzed
_WRITTEN = st.one_of(
    st.from_regex(r"\A[+-]?[0-9]{0,4}(\.[0-9]{0,4})?([eE][+-]?[0-9]{1,14})?\Z"),
    st.from_regex(r"\A[+-]?[0-9]{1,6}/[0-9]{1,6}\Z"),
    st.text(max_size=30),
    st.sampled_from(["1e-100000", "1e999999999", "9" * 400, "0." + "0" * 330 + "1", "1/" + "7" * 320,
                     "nan", "inf", "1_000", "0x1p-1000", "", " ", "1/0", "--1", "1e", ".e1"]),
)


@settings(max_examples=300, deadline=None)
@given(text=_WRITTEN)
def test_fuzz_written_rationals(text: str) -> None:
    """Any text: an exact rational within the bit bound, or one SymattnError line; in bounded
    CPU time (no number beyond the bound is ever built)."""
    from symattn.core.parse import MAX_BITS, parse_rational

    start = time.process_time()
    try:
        q = parse_rational(text, "x")
    except SymattnError as exc:
        assert "\n" not in str(exc)
    else:
        assert isinstance(q, Fraction) and max(q.numerator.bit_length(), q.denominator.bit_length()) <= MAX_BITS
        assert q == Fraction(text.strip())
    assert time.process_time() - start < 1.0


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(eps=st.one_of(st.sampled_from(["", "1e-100000", "1e-5", "1/3", "2", "-1", "abc", "1e-310", "0"]),
                     st.text(max_size=12)),
       norm=st.sampled_from([None, "post"]), activation=st.sampled_from([None, "tanh", "poly:1e-99999,1", ""]),
       mlp=st.sampled_from([None, "2"]))
def test_fuzz_block_options(eps, norm, activation, mlp, tmp_path_factory) -> None:
    """The block options in any combination: exit 0 (a valid stack) or 2 with one line, never
    another status; an option without its part is never accepted."""
    from symattn.commands.layer_options import layer_kind_from_args
    from symattn.cli import _build

    argv = ["jet", *D1, "--eps", eps]
    argv += ["--norm", norm] if norm else []
    argv += ["--activation", activation] if activation is not None else []
    argv += ["--mlp", mlp] if mlp else []
    parser = _build("jet")[0]
    try:
        layer_kind_from_args(parser.parse_args(argv))
    except SymattnError as exc:
        assert "\n" not in str(exc)
    else:
        assert norm is not None and (activation is None or mlp is not None)


# ------------------------------------------------------------------ limits that limit
def test_the_ball_tier_refuses_by_its_memory_estimate_before_allocating(monkeypatch) -> None:
    from symattn.analyses import dimension

    monkeypatch.setattr(dimension, "BALL_DIMENSION_SECONDS", 5.0)  # without the estimate: a short run
    argv = ("dimension", "--depth", "2", "--widths", "4", "--ranks", "2", "--tokens", "3", "--norm", "post",
            "--mlp", "4", "--method", "numerical", "--max-memory", "0.001")
    start = time.process_time()
    status, _, err = _cli(*argv)
    assert status == 2
    _one_error_line(err)
    assert "ball tier" in err and "above the limit of 0.001 GiB" in err
    assert time.process_time() - start < 20  # refused by the estimate, not after the work


def test_the_ball_tier_stops_at_its_cpu_budget(monkeypatch) -> None:
    from symattn import Architecture
    from symattn.analyses import dimension

    arch = Architecture.uniform(2, 4, 2, 3, "exp", norm="post", mlp=4)
    with pytest.raises(SymattnError, match="took longer than 1 s of CPU time"):
        dimension.ball_dimension(arch, seconds=1)
    monkeypatch.setattr(dimension, "BALL_DIMENSION_SECONDS", 1.0)
    status, _, err = _cli("dimension", "--depth", "2", "--widths", "4", "--ranks", "2", "--tokens", "3",
                          "--norm", "post", "--mlp", "4", "--method", "numerical")
    assert status == 2 and "CPU time" in err
    _one_error_line(err)


def test_a_cpu_budget_is_not_spent_by_waiting() -> None:
    """The CPU clock: a block that sleeps past its budget (a busy machine's waiting) is not
    stopped; one that computes past it is."""
    from symattn.core.limits import time_budget

    with time_budget(0.2, "a sleep", cpu=True):
        time.sleep(0.5)
    with pytest.raises(SymattnError, match="a busy loop took longer than 0.2 s of CPU time"):
        with time_budget(0.2, "a busy loop", cpu=True):
            while True:
                sum(range(1000))


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads VmHWM of /proc")
def test_the_ball_memory_estimate_is_within_a_factor_2_of_a_measured_peak() -> None:
    """One evaluation of the ball tier's Jacobian (the post-norm MLP block at D = 1, width 4), its
    peak resident memory measured in a fresh interpreter."""
    # VmHWM, the high-water mark of this process's own memory (ru_maxrss keeps the parent's across exec)
    code = """if True:
        import json
        hwm = lambda: 1024 * int(next(l for l in open("/proc/self/status") if l.startswith("VmHWM")).split()[1])
        from symattn import Architecture
        from symattn.analyses.dimension import _ball_bank_size, ball_dimension_bytes, generic_native
        from symattn.analyses.numerics import observation_jacobian
        from symattn.core.algebras import BallAlgebra
        from symattn.model.parameters import point_of, random_bank
        arch = Architecture.uniform(1, 4, 2, 3, "exp", norm="post", mlp=4, skip="value")
        X, values = random_bank(arch, _ball_bank_size(arch), 0), point_of(generic_native(arch, 0))
        base = hwm()
        observation_jacobian(arch, values, X, BallAlgebra(60))
        print(json.dumps([hwm() - base, ball_dimension_bytes(arch, digits=60)]))
    """
    measured, estimate = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                                   check=True).stdout)
    assert measured / 2 <= estimate <= 2 * measured, (measured, estimate)


# ------------------------------------------------------------------ stores
def _sweep_process(folder: Path) -> subprocess.Popen:
    (folder / "s.toml").write_text('analyses = ["jet"]\n[[grid]]\ndepth = 1\nwidth = [1, 2]\n')
    return subprocess.Popen([sys.executable, "-m", "symattn", "sweep", "s.toml", "--store", "st.sqlite",
                             "--workers", "0"], cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@pytest.mark.parametrize("delay", [0.0, 0.002, 0.01, 0.03])
def test_a_sweep_killed_while_it_makes_its_store_resumes(tmp_path: Path, delay: float) -> None:
    """SIGKILL as soon as the store's temporary file appears (plus a small delay): never an empty
    store under the name; the rerun resumes and removes the killed creation's temporary files
    (a file another creation still holds is never touched)."""
    proc = _sweep_process(tmp_path)
    while proc.poll() is None and not any(p.name.startswith(".st.sqlite.") for p in tmp_path.iterdir()):
        time.sleep(0.0005)
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    store = tmp_path / "st.sqlite"
    assert not store.exists() or store.stat().st_size > 0
    done = subprocess.run([sys.executable, "-m", "symattn", "sweep", "s.toml", "--store", "st.sqlite",
                           "--workers", "0"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".st.sqlite.")]


def test_a_store_in_the_making_of_a_living_sweep_is_not_removed(tmp_path: Path) -> None:
    import fcntl

    from symattn.sweep.store import Store

    held = tmp_path / ".st.sqlite.abcd1234.tmp"
    held.write_bytes(b"")
    dead = tmp_path / ".st.sqlite.efgh5678.tmp"
    dead.write_bytes(b"")
    foreign = tmp_path / ".st.sqlite.ijkl9012.tmp"
    foreign.write_bytes(b"the user's notes, not a store")
    with open(held, "rb") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)  # a living creator
        Store(tmp_path / "st.sqlite").close()
        assert held.exists() and foreign.exists() and not dead.exists()


_VERSION = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00\n\r"),
                   min_size=1, max_size=20)
_OPTIONS = st.dictionaries(st.sampled_from(["method", "order", "bank"]),
                           st.one_of(st.integers(0, 9), st.sampled_from(["modular", "exact"])), max_size=2)


class _Case:
    def __init__(self, options: dict) -> None:
        self.key = ("jet", json.dumps({"depth": 1}), json.dumps(options, sort_keys=True), 0)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(written=_VERSION, read=_VERSION, options=_OPTIONS, other=_OPTIONS)
def test_a_result_of_another_version_or_options_is_not_done(tmp_path_factory, written, read, options,
                                                              other) -> None:
    """Issue 42.4: a row written by one symattn version (or with other analysis options) is never
    a done case for another: the store's key holds the version and the options."""
    from symattn.sweep.store import Store

    path = tmp_path_factory.mktemp("versions") / "s.sqlite"
    row = {"status": "ok", "kind": "exact", "result": {"x": 1}, "error": "", "seconds": 0.0, "peak_rss": 0,
           "host": ""}
    with Store(path, version=written) as store:
        assert store.put(_Case(options), row, written)
    with Store(path, version=read) as store:
        found = store.statuses([_Case(options).key, _Case(other).key])
        rows = list(store.rows())
    expected = {}
    if read == written:
        expected[_Case(options).key] = "ok"
        if json.dumps(other, sort_keys=True) == json.dumps(options, sort_keys=True):
            expected[_Case(other).key] = "ok"
    assert found == expected
    assert len(rows) == (1 if read == written else 0)


def test_a_sweep_under_a_new_version_recomputes_every_case(tmp_path: Path, monkeypatch) -> None:
    """The same spec run under one version, then another: the second computes every case (none
    of the first's rows counts as done), and the first's rows are still there for the first."""
    import symattn
    from symattn.sweep.run import parse_spec, run_sweep
    from symattn.sweep.store import Store

    spec = parse_spec({"analyses": ["jet"], "grid": [{"depth": 1, "width": [1, 2]}]})
    path = tmp_path / "s.sqlite"
    for version, computed in (("0.1.0", 2), ("0.2.0+local", 2), ("0.1.0", 0)):
        monkeypatch.setattr(symattn, "__version__", version)
        with Store(path, version=version) as store:
            summary = run_sweep(spec, store, workers=0)
        assert (summary["computed"], summary["reused"]) == (computed, 2 - computed)


@pytest.fixture(scope="module")
def finished_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from symattn.sweep.run import parse_spec, run_sweep
    from symattn.sweep.store import Store

    path = tmp_path_factory.mktemp("atlas") / "store.sqlite"
    with Store(path) as store:
        run_sweep(parse_spec({"analyses": ["jet"], "grid": [{"depth": 1, "width": [1, 2]}]}), store, workers=0)
    return path


@pytest.mark.parametrize("brk", ["\n", "\r", "\r\n", "\x85", "\u2028", "\u2029", "\x0b", "\x0c", "\x1e"])
def test_the_atlas_markdown_never_starts_a_line_from_a_store_row(brk: str, finished_store: Path,
                                                                 tmp_path: Path) -> None:
    """A raw heading (ATX or setext) in a row's error or normalizer, behind any kind of line break,
    stays inside its table cell."""
    import shutil

    path = tmp_path / "s.sqlite"
    shutil.copy(finished_store, path)
    db = sqlite3.connect(path)
    (rowid, arch), *_ = db.execute("SELECT rowid, architecture FROM results ORDER BY rowid").fetchall()
    a = json.loads(arch)
    a["normalizers"] = [f"exp{brk}# heading{brk}==="] * a["depth"]
    db.execute("UPDATE results SET architecture = ?, status = 'failed', result = NULL, kind = NULL, error = ? "
               "WHERE rowid = ?", (json.dumps(a), f"x{brk}# heading{brk}===={brk}- item{brk}<b>", rowid))
    db.commit()
    db.close()
    status, _, err = _cli("atlas", str(path), "--output", str(tmp_path / "out"), "--no-plots")
    assert status == 0, err
    md = (tmp_path / "out" / "atlas.md").read_text()
    lines = md.splitlines()
    assert [line for line in lines if line.startswith("#")] == [lines[0], "## jet", "## failures"]
    assert all(line.startswith(("#", "|", "![")) or not line for line in lines), lines
    assert "heading" in md


# ------------------------------------------------------------------ output files: ownership
def test_a_file_the_user_edited_is_not_overwritten_without_force(tmp_path: Path, fake_proofs) -> None:
    """Issue 42.4: the ownership check of symattn.core.output on files symattn wrote and the user
    then edited (one changed byte, an appended line, a changed stamp, the same edit in a folder
    symattn wrote): each is refused without force and kept byte for byte; with force replaced."""
    from symattn.core.output import is_ours, stamp_text, write_file, write_folder

    path = tmp_path / "derivation.tex"
    write_file(path, stamp_text("\\section{A}\nfirst\n"))
    assert is_ours(path)
    write_file(path, stamp_text("\\section{A}\nsecond\n"))  # unchanged since: symattn's own
    original = path.read_bytes()
    for edit in (lambda b: b.replace(b"second", b"sEcond"), lambda b: b + b"% my note\n",
                 lambda b: b.replace(b"symattn:sha256=", b"symattn:sha256=0", 1)[:-1]):
        path.write_bytes(edit(original))
        edited = path.read_bytes()
        assert not is_ours(path)
        with pytest.raises(SymattnError, match="refusing to overwrite"):
            write_file(path, stamp_text("\\section{A}\nthird\n"))
        assert path.read_bytes() == edited
        status, _, err = _cli("latex", "t4", "--output", str(path))
        assert status == 2 and "refusing to overwrite" in err and path.read_bytes() == edited
    write_file(path, stamp_text("\\section{A}\nthird\n"), force=True)
    assert is_ours(path) and b"third" in path.read_bytes()

    folder = tmp_path / "atlas"
    write_folder(folder, {"a.csv": b"x,1\n", "b.csv": b"y,2\n"})
    write_folder(folder, {"a.csv": b"x,3\n", "b.csv": b"y,4\n"})  # listed unchanged: replaced
    (folder / "b.csv").write_bytes(b"y,4,my column\n")
    with pytest.raises(SymattnError, match="refusing to overwrite b.csv"):
        write_folder(folder, {"a.csv": b"x,5\n", "b.csv": b"y,6\n"})
    assert (folder / "a.csv").read_bytes() == b"x,3\n" and (folder / "b.csv").read_bytes() == b"y,4,my column\n"
    write_folder(folder, {"a.csv": b"x,5\n", "b.csv": b"y,6\n"}, force=True)
    assert (folder / "b.csv").read_bytes() == b"y,6\n"


def test_a_stamped_figure_edited_by_the_user_is_not_overwritten(tmp_path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from symattn.core.output import is_ours, save_figure

    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    path = tmp_path / "p.png"
    save_figure(fig, path)
    data = bytearray(path.read_bytes())
    data[-20] ^= 0xFF  # one byte of the image changed by an editor
    path.write_bytes(bytes(data))
    assert not is_ours(path)
    with pytest.raises(SymattnError, match="refusing to overwrite"):
        save_figure(fig, path)
    assert path.read_bytes() == bytes(data)
    plt.close(fig)


def test_bfloat16_tensors_are_read_exactly(tmp_path):
    """BF16 bit patterns are the top half of a binary32 (the blind mutant that shifted them by 8 survived)."""
    torch = pytest.importorskip("torch")
    safetensors_torch = pytest.importorskip("safetensors.torch")
    from symattn.audit.readers import read_safetensors

    values = [1.5, -2.0, 0.15625, 3.0e5]
    path = tmp_path / "w.safetensors"
    safetensors_torch.save_file({"w": torch.tensor(values, dtype=torch.bfloat16)}, str(path))
    got = read_safetensors(path)["w"]
    assert [float(v) for v in got] == [float(v) for v in torch.tensor(values, dtype=torch.bfloat16).float()]
