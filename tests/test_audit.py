"""Tests of :mod:`symattn.audit` and ``symattn audit``: import mapping, report fields, bad input."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT
from symattn.core.algebras import Float64
from symattn.audit import audit, from_arrays, from_state_dict, load_model
from symattn.cli import main
from symattn.core.errors import SymattnError
from symattn.model.network import evaluate, native_network
from symattn.model.parameters import reduction
from symattn.theorems.statements import NO_THEOREM

EXAMPLE = ROOT / "examples" / "example_model.npz"


def _save(path: Path, **arrays) -> Path:
    np.savez(path, **arrays)
    return path


def _native_float(model, X: np.ndarray) -> np.ndarray:
    """The native network of the imported model in Float64 on inputs ``X`` (B, d, n)."""
    A = Float64()
    vals = {k: A.const(v) for k, v in model.float_params().items()}
    vals["X"] = A.const(X)
    return evaluate(native_network(model.arch), A, vals)["F"]


@pytest.fixture(scope="module")
def example_report():
    return audit(load_model(EXAMPLE))


# ------------------------------------------------------------------ import mapping
def test_npz_import_is_exact_and_chains_rectangular_widths(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    arrays = {"Q1": rng.normal(size=(3, 1)), "K1": rng.normal(size=(3, 1)),
              "V1": rng.normal(size=(2, 3)), "Q2": rng.normal(size=(2, 2)),
              "K2": rng.normal(size=(2, 2)), "V2": rng.normal(size=(5, 2))}
    m = load_model(_save(tmp_path / "m.npz", **arrays))
    assert m.arch.widths == (3, 2, 5) and m.arch.ranks == (1, 2)
    for key, value in arrays.items():
        got = m.theta.as_dict()[key]
        assert got.shape == value.shape
        assert all(g == Fraction(float(v)) for g, v in zip(got.flat, value.flat))
    eta = reduction(m.theta)
    assert eta.L.shape == (5, 3) and all(Mi.shape == (3, 3) for Mi in eta.M)


def test_npz_native_network_is_the_papers_layer(tmp_path: Path) -> None:
    """``X -> V softmax-attention(X)`` with tokens as columns, computed directly in NumPy."""
    rng = np.random.default_rng(1)
    q, k, v = rng.normal(size=(3, 2)), rng.normal(size=(3, 2)), rng.normal(size=(3, 3))
    m = from_arrays({"Q1": q, "K1": k, "V1": v})
    X = rng.normal(size=(5, 3, 4))
    Z = np.swapaxes(X, 1, 2) @ (q @ k.T) @ X  # Z[a, b] = x_a^T A x_b
    W = np.exp(Z)
    attn = W / W.sum(axis=-1, keepdims=True)
    direct = v @ X @ np.swapaxes(attn, 1, 2)
    # float64 rounding of O(10) values through exp: 1e-12 relative is ample
    assert np.allclose(_native_float(m, X), direct, rtol=1e-12, atol=1e-12)


def _torch_stack(torch, E: int, depth: int, seed: int):
    torch.manual_seed(seed)
    layers = torch.nn.ModuleList([torch.nn.MultiheadAttention(E, 1, bias=False).double()
                                  for _ in range(depth)])
    with torch.no_grad():
        for layer in layers:
            layer.in_proj_weight.normal_(0, 0.6)
            layer.out_proj.weight.normal_(0, 0.6)
    return layers


def _torch_forward(torch, layers, X: np.ndarray) -> np.ndarray:
    """PyTorch's own forward on tokens as columns ``X`` (B, E, n): returns (B, E, n)."""
    x = torch.tensor(np.transpose(X, (2, 0, 1)))  # (n, B, E): batch_first=False
    with torch.no_grad():
        for layer in layers:
            x = layer(x, x, x, need_weights=False)[0]
    return np.transpose(x.numpy(), (1, 2, 0))


@pytest.mark.parametrize("E", [4, 3])
def test_torch_mapping_reproduces_multihead_attention(E: int) -> None:
    """Q = W_q^T / sqrt(E), K = W_k^T, V = W_o W_v: the Float64 native network equals
    PyTorch's float64 output to ~1e-12 (both are float64 evaluations of the same map;
    E = 3 also exercises the binary64-rounded scale 1/sqrt(3))."""
    torch = pytest.importorskip("torch")
    from symattn.audit import from_torch

    layers = _torch_stack(torch, E, 3, seed=E)
    m = from_torch(layers)
    assert m.arch.widths == (E,) * 4 and m.arch.ranks == (E,) * 3
    X = np.random.default_rng(E).normal(size=(6, E, 5))
    ours, theirs = _native_float(m, X), _torch_forward(torch, layers, X)
    assert np.max(np.abs(ours - theirs)) <= 1e-12 * max(1.0, np.max(np.abs(theirs)))
    assert any("not a perfect square" in n for n in m.notes) == (E == 3)


def test_torch_state_dict_file_matches_modules(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    from symattn.audit import from_torch

    layers = _torch_stack(torch, 4, 2, seed=7)
    path = tmp_path / "model.pt"
    torch.save(layers.state_dict(), path)
    a, b = from_torch(layers), load_model(path)
    assert b.kind == "torch-state-dict" and any("num_heads = 1" in n for n in b.notes)
    for key, value in a.theta.as_dict().items():
        assert (value == b.theta.as_dict()[key]).all()  # exact rationals, equal
    torch.save(layers, tmp_path / "whole.pt")  # a pickled module is refused, not executed
    with pytest.raises(SymattnError, match="state dict"):
        load_model(tmp_path / "whole.pt")


@pytest.mark.parametrize("kwargs, message", [
    ({"add_bias_kv": True, "bias": False}, "bias_k"),
    ({"kdim": 2, "bias": False}, "kdim/vdim"),
    ({"add_zero_attn": True, "bias": False}, "add_zero_attn"),
])
def test_torch_unsupported_layers_are_refused(kwargs: dict, message: str) -> None:
    torch = pytest.importorskip("torch")
    from symattn.audit import from_torch

    kwargs = {"bias": False, **kwargs}
    with pytest.raises(SymattnError, match=message):
        from_torch([torch.nn.MultiheadAttention(4, **({"num_heads": 1} | kwargs))])
    with pytest.raises(SymattnError, match="only nn.MultiheadAttention"):
        from_torch([torch.nn.Linear(4, 4)])


def test_torch_biases_and_dropout_are_named_not_dropped() -> None:
    torch = pytest.importorskip("torch")
    from symattn.audit import from_torch

    m = from_torch([torch.nn.MultiheadAttention(4, 1, dropout=0.1)])
    assert any("in_proj_bias" in o and "bias-free" in o for o in m.outside)
    assert any("dropout is not applied" in n for n in m.notes)


@pytest.mark.parametrize("state, message", [
    ({"0.in_proj_weight": np.ones((3, 1))}, "lacks out_proj.weight"),
    ({"0.q_proj_weight": np.ones((1, 1))}, "kdim/vdim"),
    ({"0.linear.weight": np.ones((1, 1))}, "no attention layers"),
    ({"0.in_proj_weight": np.ones((6, 2)), "0.out_proj.weight": np.ones((2, 2)),
      "1.in_proj_weight": np.ones((3, 1)), "1.out_proj.weight": np.ones((1, 1))}, "do not chain"),
    ({"0.in_proj_weight": np.ones((9, 3)), "0.out_proj.weight": np.ones((3, 3))}, "not divisible"),
])
def test_bad_state_dicts(state: dict, message: str) -> None:
    heads = 2 if message == "not divisible" else 1
    with pytest.raises(SymattnError, match=message):
        from_state_dict(state, heads=heads)


def test_state_dict_mapping_by_hand() -> None:
    """E = 1: Q = w_q / 1, K = w_k, V = w_o w_v, layers ordered by their index (10 after 2)."""
    state = {f"layers.{i}.{f}": np.array(v, dtype=float) for i, (w, o) in
             {2: ([[2.0], [3.0], [5.0]], [[7.0]]), 10: ([[0.5], [0.25], [4.0]], [[0.5]])}.items()
             for f, v in (("in_proj_weight", w), ("out_proj.weight", o))}
    m = from_state_dict(state)
    assert [str(q[0, 0]) for q in m.theta.Q] == ["2", "1/2"]
    assert [str(k[0, 0]) for k in m.theta.K] == ["3", "1/4"]
    assert [str(v[0, 0]) for v in m.theta.V] == ["35", "2"]


# ------------------------------------------------------------------ report fields
def test_example_report(example_report) -> None:
    r = example_report
    assert r.fiber.fiber == "singleton" and r.fiber.verified
    assert all(h["holds"] for h in r.hypotheses if "collapse" not in h["name"])
    assert not any(h["holds"] for h in r.hypotheses if "collapse" in h["name"])
    s = r.spectrum
    assert s.certified and [(b.order, b.multiplicity) for b in s.bands] == [
        (0, 16), (1, 12), (5, 12), (17, 12)]
    assert r.ranks["exact"] == 52 == s.parameters - s.kernel
    assert r.kernel == {"factor_gauges": 12, "interface": 32, "rank": 44, "tier": "exact"}
    hp = r.singular_values["high_precision"]
    assert len(hp) == 52 and all(x > 0 for x in hp) and hp == sorted(hp, reverse=True)
    # the numerical rank is the count above the cutoff, and float64 agrees with 50 digits here
    assert r.ranks["high_precision_numerical"] == sum(1 for x in hp if x > 1e-10 * hp[0])
    assert r.ranks["float64_numerical"] == r.ranks["high_precision_numerical"] == 51
    assert r.ranks["below_cutoff"] == 1
    assert "determines L and M_1..M_3 exactly" in r.verdict and "44 native directions" in r.verdict
    eta = reduction(load_model(EXAMPLE).theta)
    assert (r.effective.M[2] == eta.M[2]).all()
    d = r.distances["layers"][0]
    M1 = np.vectorize(float)(eta.M[0])
    assert d["sym_M_frobenius"] == pytest.approx(np.linalg.norm((M1 + M1.T) / 2), rel=1e-12)


def test_collapsed_layer_report(tmp_path: Path) -> None:
    """A zero query factor: Theorem 2's free suffix, Theorem 4's rank hypothesis fails."""
    I2 = np.eye(2)
    arrays = {"Q1": np.array([[1.0], [0.5]]), "K1": np.array([[0.75], [-1.0]]), "V1": I2,
              "Q2": np.zeros((2, 1)), "K2": np.array([[1.0], [2.0]]), "V2": I2,
              "Q3": np.array([[0.5], [1.0]]), "K3": np.array([[1.0], [0.25]]), "V3": I2}
    r = audit(from_arrays(arrays, tokens=3), bank=4, matrix_free=False)
    assert r.fiber.fiber == "free-suffix" and r.fiber.first_collapse == 2
    assert r.fiber.free_layers == [3] and r.fiber.verified
    holds = {h["name"]: h["holds"] for h in r.hypotheses}
    assert holds["M_2 in Z_2 (collapse)"] is True and holds["Q_2, K_2 full column rank"] is False
    assert r.spectrum is None and "full column rank" in r.spectrum_note
    assert r.ranks["exact"] is None
    assert "M_3 cannot be determined" in r.verdict
    layer2 = r.distances["layers"][1]  # exp with n = 3: Theorem 2 leaves Z_2 beyond {0} open
    assert layer2["M_frobenius"] == 0.0 and layer2["distance_to_collapse"] is None


def test_unequal_widths_report_says_why_no_spectrum() -> None:
    rng = np.random.default_rng(3)
    arrays = {"Q1": rng.normal(size=(2, 1)), "K1": rng.normal(size=(2, 1)),
              "V1": rng.normal(size=(3, 2))}
    r = audit(from_arrays(arrays, tokens=2), matrix_free=False)
    assert r.spectrum is None and "equal widths" in r.spectrum_note
    assert r.ranks["exact"] is None and "at most" in r.ranks["exact_kind"]
    assert len(r.singular_values["float64"]) == 10 == r.ranks["parameters"]  # 2 + 2 + 3 x 2
    assert r.kernel["rank"] == 1 and len(r.singular_values["high_precision"]) == 9


# ------------------------------------------------------------------ command line
def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_cli_json_and_plot(capsys, tmp_path: Path) -> None:
    png = tmp_path / "audit.png"
    status, out, err = _cli(capsys, "audit", str(EXAMPLE), "--json", "--plot", str(png))
    assert status == 0 and err == ""
    report = json.loads(out)
    assert set(report) >= {"source", "format", "architecture", "effective", "hypotheses", "fiber",
                           "distances", "spectrum", "kernel", "singular_values", "ranks",
                           "verdict", "kinds"}
    assert report["ranks"]["exact"] == 52 and report["fiber"]["fiber"] == "singleton"
    L = np.vectorize(float)(reduction(load_model(EXAMPLE).theta).L)
    assert Fraction(report["effective"]["L"][0][0]) == Fraction(reduction(load_model(EXAMPLE).theta).L[0, 0])
    assert float(Fraction(report["effective"]["L"][0][0])) == L[0, 0]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_text_labels_every_section(capsys) -> None:
    status, out, _ = _cli(capsys, "audit", str(EXAMPLE), "--bank", "19")
    assert status == 0
    for label in ("(exact", "numerical, float64", "(50 digits)", "(certified)", "(predicted",
                  "verdict"):
        assert label in out


def _bad_npz(tmp_path: Path, name: str, **arrays) -> str:
    return str(_save(tmp_path / name, **arrays))


@pytest.mark.parametrize("make, message", [
    (lambda p: str(p / "missing.npz"), "no such file"),
    (lambda p: (p / "m.txt").write_text("x") and str(p / "m.txt"), "unknown model format"),
    (lambda p: (p / "bad.npz").write_bytes(b"not a zip") and str(p / "bad.npz"), "cannot read"),
    (lambda p: _bad_npz(p, "nan.npz", Q1=np.array([[np.nan]]), K1=np.ones((1, 1)), V1=np.ones((1, 1))),
     "contains NaN"),
    (lambda p: _bad_npz(p, "inf.npz", Q1=np.ones((1, 1)), K1=np.array([[np.inf]]), V1=np.ones((1, 1))),
     "contains inf"),
    (lambda p: _bad_npz(p, "bias.npz", Q1=np.ones((1, 1)), K1=np.ones((1, 1)), V1=np.ones((1, 1)),
                        b1=np.ones(1)), "biases are not covered"),
    (lambda p: _bad_npz(p, "chain.npz", Q1=np.ones((2, 1)), K1=np.ones((2, 1)), V1=np.ones((3, 2)),
                        Q2=np.ones((2, 1)), K2=np.ones((2, 1)), V2=np.ones((2, 2))), "do not chain"),
    (lambda p: _bad_npz(p, "missing.npz", Q1=np.ones((1, 1)), K1=np.ones((1, 1)), V1=np.ones((1, 1)),
                        Q2=np.ones((1, 1))), "missing array"),
    (lambda p: _bad_npz(p, "vec.npz", Q1=np.ones(2), K1=np.ones((2, 1)), V1=np.ones((2, 2))),
     "must be a matrix"),
    (lambda p: _bad_npz(p, "complex.npz", Q1=np.ones((1, 1)) * 1j, K1=np.ones((1, 1)),
                        V1=np.ones((1, 1))), "only real"),
])
def test_cli_bad_input_exits_2_without_a_report(capsys, tmp_path: Path, make, message: str) -> None:
    status, out, err = _cli(capsys, "audit", make(tmp_path))
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and message in err


def test_cli_bad_options_exit_2(capsys, tmp_path: Path) -> None:
    for argv, message in ((["--bank", "0"], "between 1 and"), (["--tokens", "1"], "at least 2"),
                          (["--plot", str(tmp_path / "no" / "a.png")], "no folder"),
                          (["--digits", "5"], "at least 20")):
        status, out, err = _cli(capsys, "audit", str(EXAMPLE), *argv)
        assert status == 2 and out == "" and message in err, (argv, err)


def test_even_normalizer_gives_a_sign_orbit() -> None:
    rng = np.random.default_rng(5)
    arrays = {f"{c}{i}": rng.normal(size=(2, 1) if c != "V" else (2, 2)) * 0.7
              for i in (1, 2) for c in "QKV"}
    r = audit(from_arrays(arrays, normalizer="cosh", tokens=3), matrix_free=False)
    assert r.fiber.fiber == "sign-orbit" and r.fiber.sign_flip_layers == [1, 2] and r.fiber.verified
    # cosh: k = 2, so the query/key bands sit at 2k 3^(i-1) - 1 = 3, 11 (exact, certified)
    assert [(b.order, b.multiplicity) for b in r.spectrum.bands] == [(0, 4), (3, 3), (11, 3)]
    assert "sign flips of M_1, M_2" in r.verdict


def test_torch_file_refuses_another_normalizer(tmp_path: Path) -> None:
    path = tmp_path / "m.pt"
    path.write_bytes(b"")
    with pytest.raises(SymattnError, match="always uses softmax"):
        load_model(path, normalizer="cosh")


def test_shipped_example_is_reproducible_from_its_seed() -> None:
    import runpy

    script = runpy.run_path(str(ROOT / "examples" / "make_example_model.py"))
    with np.load(EXAMPLE, allow_pickle=False) as data:
        stored = {k: data[k] for k in data.files}
    drawn = script["draw"]()
    assert sorted(stored) == sorted(drawn) == sorted(f"{c}{i}" for i in (1, 2, 3) for c in "QKV")
    assert all(np.array_equal(stored[k], drawn[k]) for k in drawn)
    assert script["encode"](drawn) == EXAMPLE.read_bytes()


def test_cli_audits_a_torch_state_dict(capsys, tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    layers = _torch_stack(torch, 2, 2, seed=11)
    path = tmp_path / "model.pt"
    torch.save(layers.state_dict(), path)
    status, out, err = _cli(capsys, "audit", str(path), "--json")
    assert status == 0, err
    report = json.loads(out)
    assert report["format"] == "torch-state-dict"
    assert report["architecture"]["widths"] == [2, 2, 2] and report["architecture"]["ranks"] == [2, 2]
    assert any("1/sqrt(2)" in n for n in report["notes"])
    assert "out_proj" in report["verdict"]


def test_state_dict_extra_entries_are_named_outside() -> None:
    state = {"0.in_proj_weight": np.ones((3, 1)), "0.out_proj.weight": np.ones((1, 1)),
             "causal_mask": np.ones((4, 4)), "0.in_proj_bias": np.ones(3)}
    m = from_state_dict(state)
    assert any(o.startswith("causal_mask: not part of an attention layer") for o in m.outside)
    assert any("0.in_proj_bias" in o for o in m.outside)
    assert any("unmasked" in n for n in m.notes)


def test_two_token_skew_collapse() -> None:
    """n = 2, softmax (h odd): a skew first score lies in Z_1 (Theorem 2(ii)), M_2 is free."""
    arrays = {"Q1": np.eye(2), "K1": np.array([[0.0, -1.0], [1.0, 0.0]]), "V1": np.eye(2),
              "Q2": np.array([[1.0, 0.0], [0.5, 1.0]]), "K2": np.eye(2), "V2": np.eye(2)}
    m = from_arrays(arrays, tokens=2)
    M1 = reduction(m.theta).M[0]
    assert (M1 == -M1.T).all() and (M1 != 0).any()  # Q1 K1^T is skew, nonzero
    r = audit(m, bank=3, matrix_free=False)
    holds = {h["name"]: h["holds"] for h in r.hypotheses}
    assert holds["sym M_1 != 0"] is False and holds["M_1 in Z_1 (collapse)"] is True
    assert r.fiber.fiber == "free-suffix" and r.fiber.theorem == "Theorem 2(ii)"
    assert r.fiber.free_layers == [2] and r.fiber.verified
    assert r.distances["layers"][0]["distance_to_collapse"] == 0.0
    assert "not certified (Theorem 4 needs sym(Q_1 K_1^T) != 0)" in r.verdict
    assert "weaken like" not in r.verdict


# ------------------------------------------------------------------ untrusted input (issue 11)
class _Hook:
    """Unpickling this runs ``os.system``: a loader that unpickles would create the marker."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        import os

        return (os.system, (f"touch {self.marker}",))


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")
def test_torch_pickle_with_a_reduce_hook_is_refused_and_runs_nothing(capsys, tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    import pickle

    marker = tmp_path / "pwned"
    zipped, legacy = tmp_path / "hook.pt", tmp_path / "legacy.pth"
    torch.save({"0.in_proj_weight": _Hook(marker)}, zipped)
    legacy.write_bytes(pickle.dumps({"x": _Hook(marker)}))
    for path in (zipped, legacy):
        status, out, err = _cli(capsys, "audit", str(path))
        assert status == 2 and out == "" and err.count("\n") == 1 and "cannot read" in err
    assert not marker.exists()


def test_npz_object_array_is_refused_and_runs_nothing(capsys, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    path = tmp_path / "obj.npz"
    np.savez(path, Q1=np.array([_Hook(marker)], dtype=object), K1=np.ones((1, 1)),
             V1=np.ones((1, 1)))
    status, out, err = _cli(capsys, "audit", str(path))
    assert status == 2 and "object arrays are never loaded" in err and "allow_pickle" not in err
    assert not marker.exists()


def _write(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


def _zip_bytes(tmp_path: Path) -> bytes:
    path = _save(tmp_path / "ok.npz", Q1=np.ones((1, 1)), K1=np.ones((1, 1)), V1=np.ones((1, 1)))
    return path.read_bytes()


@pytest.mark.parametrize("make, message", [
    (lambda p: _write(p / "empty.npz", b""), "cannot read"),
    (lambda p: _write(p / "rand.npz", np.random.default_rng(0).bytes(4096)), "cannot read"),
    (lambda p: _write(p / "trunc.npz", _zip_bytes(p)[:200]), "cannot read"),
    (lambda p: (p / "dir.npz").mkdir() or str(p / "dir.npz"), "is a directory"),
    (lambda p: _bad_npz(p, "huge.npz", Q1=np.full((1, 1), 1e300), K1=np.ones((1, 1)),
                        V1=np.ones((1, 1))), "magnitude 1e+300"),
    (lambda p: _bad_npz(p, "near_max.npz", Q1=np.full((2, 2), 1.7e308), K1=np.ones((2, 2)),
                        V1=np.ones((2, 2))), "rescale the model"),
    (lambda p: _bad_npz(p, "bool.npz", Q1=np.ones((1, 1), dtype=bool), K1=np.ones((1, 1)),
                        V1=np.ones((1, 1))), "only real"),
    (lambda p: _bad_npz(p, "str.npz", Q1=np.array([["a"]]), K1=np.ones((1, 1)), V1=np.ones((1, 1))),
     "only real"),
    (lambda p: _write(p / "x.safetensors", b"\xff" * 8 + b"{}"), "does not fit"),
])
def test_hostile_files_exit_2_with_one_line(capsys, tmp_path: Path, make, message: str) -> None:
    status, out, err = _cli(capsys, "audit", make(tmp_path))
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and message in err and "allow_pickle" not in err


def test_zip_bomb_is_refused_from_its_directory(monkeypatch, tmp_path: Path) -> None:
    """A member that declares more than the limit uncompressed is refused before it is inflated."""
    import zipfile

    from symattn.audit import readers

    path = tmp_path / "bomb.npz"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("Q1.npy", b"\0" * 2_000_000)
    assert path.stat().st_size < 10_000
    monkeypatch.setitem(readers.LIMITS, "max_uncompressed_bytes", 1_000_000)
    monkeypatch.setattr(readers.np.lib.format, "read_magic",
                        lambda fp: pytest.fail("decompressed a refused archive"))
    with pytest.raises(SymattnError, match="declares 2000000 bytes uncompressed"):
        load_model(path)


def test_too_many_entries_are_refused_before_reading(monkeypatch, tmp_path: Path) -> None:
    from symattn.audit import importers

    path = _save(tmp_path / "big.npz", Q1=np.ones((30, 30)), K1=np.ones((30, 30)),
                 V1=np.ones((30, 30)))
    monkeypatch.setitem(importers.LIMITS, "max_entries", 1000)
    with pytest.raises(SymattnError, match="beyond the limit 1000"):
        load_model(path)


def test_safetensors_arrays_load_exactly(tmp_path: Path) -> None:
    pytest.importorskip("safetensors")
    from safetensors.numpy import save_file

    rng = np.random.default_rng(4)
    arrays = {"Q1": rng.normal(size=(3, 2)), "K1": rng.normal(size=(3, 2)),
              "V1": rng.normal(size=(3, 3)).astype(np.float32)}
    save_file(arrays, str(tmp_path / "m.safetensors"))
    m = load_model(tmp_path / "m.safetensors")
    assert m.kind == "safetensors" and m.arch.widths == (3, 3)
    assert all(Fraction(float(a)) == b for a, b in zip(arrays["V1"].flat, m.theta.V[0].flat))


# ------------------------------------------------------------------ tiers, scale and real formats (issue 16)
def test_random_normal_width_8_has_no_overflow_and_no_svd_failure(recwarn) -> None:
    """N(0, 1) weights of width 8 once overflowed float64 and ended in 'SVD did not converge'."""
    rng = np.random.default_rng(0)
    arrays = {f"{c}{i}": rng.normal(size=(8, 8)) for i in (1, 2) for c in "QKV"}
    r = audit(from_arrays(arrays), budget=2)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
    assert r.fiber.fiber == "singleton" and r.tiers["hypotheses"] == "exact"
    assert r.predicted and [p["order"] for p in r.predicted] == [1, 5]
    if r.matrix_free is not None:
        assert r.matrix_free["float64"][0]["finite"] and r.matrix_free["float64"][0]["top"][0] > 0


def test_tokens_beyond_memory_are_refused_before_allocating(capsys) -> None:
    status, out, err = _cli(capsys, "audit", str(EXAMPLE), "--tokens", "10000")
    assert status == 2 and out == "" and "--max-memory" in err and "GiB" in err


def test_budget_zero_names_the_tier_of_what_was_skipped() -> None:
    r = audit(load_model(EXAMPLE), budget=0, matrix_free=False)
    assert r.spectrum is None and "beyond the remaining budget" in r.spectrum_note
    assert r.tiers["spectrum"].startswith("skipped") and "verification skipped" in r.tiers["fiber"]
    assert r.singular_values["high_precision"] is None and r.ranks["exact"] is None
    assert [p["order"] for p in r.predicted] == [1, 5, 17]  # predicted, not computed
    assert "predicted to weaken like t^1 (layer 1), t^5 (layer 2), t^17 (layer 3)" in r.verdict


def test_matrix_free_slopes_match_the_predicted_orders() -> None:
    """Along the example's own ray the query/key block of layer i scales like t^beta_i (1, 5, 17):
    the matrix-free float64 final-pair slopes agree with Prop. D.1 to 0.05."""
    pytest.importorskip("torch")
    r = audit(load_model(EXAMPLE), budget=0, matrix_free=True)
    slopes = [s["slope_t_half_to_quarter"] for s in r.sensitivity]
    assert [round(s) for s in slopes] == [1, 5, 17]
    assert all(abs(s - p["order"]) < 0.05 for s, p in zip(slopes, r.predicted))
    at1 = r.matrix_free["float64"][0]
    assert all(e < 1e-3 * at1["top"][0] for e in at1["top_errors"][:1])


def _mha_forward(torch, modules, X: np.ndarray) -> np.ndarray:
    """PyTorch's own attention forward (bias-free modules) on tokens as rows (B, n, E)."""
    x = torch.tensor(X)
    with torch.no_grad():
        for m in modules:
            x = m(x, x, x, need_weights=False)[0]
    return x.numpy()


def test_multihead_mapping_reproduces_pytorch() -> None:
    """Head h: Q_h = W_q[h]^T / sqrt(E/H), K_h = W_k[h]^T, V_h = W_o[:, h] W_v[h]; the stable
    forward of the imported heads equals nn.MultiheadAttention(num_heads = 4) to 1e-12."""
    torch = pytest.importorskip("torch")
    from symattn.audit import from_torch
    from symattn.analyses.matrix_free import stack_forward, stack_layout

    torch.manual_seed(3)
    mods = [torch.nn.MultiheadAttention(8, 4, bias=False, batch_first=True).double() for _ in range(2)]
    m = from_torch(mods)
    assert m.heads == (4, 4) and not m.single_head and m.arch is None
    assert all(h.q.shape == (8, 2) for layer in m.layers for h in layer)
    X = np.random.default_rng(1).normal(size=(3, 5, 8))
    layers = [[h.floats() for h in layer] for layer in m.layers]
    ours = stack_forward(stack_layout(layers), m.normalizers, torch.tensor(X))(
        torch.tensor(np.concatenate([a.reshape(-1) for layer in layers for h in layer for a in h])))
    theirs = _mha_forward(torch, mods, X)
    assert np.max(np.abs(ours.numpy().reshape(theirs.shape) - theirs)) < 1e-12


def test_multihead_state_dict_with_heads_option(capsys, tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    torch.manual_seed(5)
    mods = torch.nn.ModuleList([torch.nn.MultiheadAttention(4, 2, bias=False) for _ in range(2)])
    path = tmp_path / "mh.pt"
    torch.save(mods.state_dict(), path)
    status, out, err = _cli(capsys, "audit", str(path), "--heads", "2", "--json")
    assert status == 0, err
    report = json.loads(out)
    assert report["architecture"]["heads"] == [2, 2] and len(report["heads"]) == 4
    assert report["fiber"] is None and report["tiers"]["fiber"].startswith("skipped")
    # the variant analyses instead of a refusal, labelled
    v = report["variants"]
    assert v["theorem"] is None and v["label"] == NO_THEOREM and "2 heads" in v["architecture"]
    assert v["dimension"]["lower_bound"] <= v["dimension"]["upper_bound"]
    assert [p["group_order"] for p in v["dimension"]["head_permutations"]] == [2, 2]
    assert v["fiber"]["fiber"] in ("locally-determined", "undecided")
    assert "outside the paper's hypotheses" in report["verdict"]
    assert report["matrix_free"]["float64"][0]["finite"]


def test_transformer_encoder_layers_audit_the_attention_sublayer() -> None:
    torch = pytest.importorskip("torch")
    from symattn.audit import from_torch

    torch.manual_seed(0)
    enc = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0,
                                                                       batch_first=True), 2,
                                      enable_nested_tensor=False)
    m = from_torch(enc)
    assert m.heads == (2, 2)
    text = " ".join(m.outside)
    for part in ("residual connections", "LayerNorm norm1", "LayerNorm norm2", "feed-forward linear1",
                 "in_proj_bias"):
        assert part in text
    # the imported heads of layer 1 reproduce its self-attention sublayer (biases set to zero)
    layer = enc.layers[0]
    with torch.no_grad():
        layer.self_attn.in_proj_bias.zero_()
        layer.self_attn.out_proj.bias.zero_()
    X = np.random.default_rng(2).normal(size=(2, 3, 8))
    from symattn.analyses.matrix_free import stack_forward, stack_layout

    heads = [[h.floats() for h in m.layers[0]]]
    ours = stack_forward(stack_layout(heads), m.normalizers[:1], torch.tensor(X))(
        torch.tensor(np.concatenate([a.reshape(-1) for h in heads[0] for a in h])))
    theirs = _mha_forward(torch, [layer.self_attn.double()], X)
    assert np.max(np.abs(ours.numpy().reshape(theirs.shape) - theirs)) < 1e-6  # float32 weights


# ------------------------------------------------------------------ a trained model (issue 16 item 4)
TRAINED = sorted((ROOT / "examples" / "trained").glob("step_*.pt"))


def test_shipped_trained_model_audit() -> None:
    pytest.importorskip("torch")
    r = audit(load_model(TRAINED[-1]), budget=10)
    assert r.model.kind == "torch-state-dict" and r.model.widths == (4, 4, 4)
    assert r.fiber.fiber == "singleton" and r.fiber.verified
    assert r.ranks["exact"] == 48 and r.spectrum.certified
    assert [(b.order, b.multiplicity) for b in r.spectrum.bands if b.order] == [(1, 16), (5, 16)]
    assert all(s["float32_sees"] for s in r.sensitivity)


def test_training_moved_layer_1_away_from_collapse(capsys, tmp_path: Path) -> None:
    """Along the shipped checkpoints ||sym Q_1 K_1^T||_F (certified) grows 25-fold, and the CLI
    summarises and plots the four audits side by side."""
    pytest.importorskip("torch")
    png = tmp_path / "along.png"
    status, out, err = _cli(capsys, "audit", *map(str, TRAINED), "--budget", "0", "--json",
                            "--plot", str(png))
    assert status == 0, err
    reports = json.loads(out)
    sym = [[h["sym_score_frobenius"]["value"] for h in r["heads"]] for r in reports]
    assert [Path(r["source"]).name for r in reports] == [
        "step_0000.pt", "step_0030.pt", "step_0100.pt", "step_0300.pt"]
    assert sym[-1][0] > 20 * sym[0][0]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_training_script_reproduces_the_shipped_checkpoints() -> None:
    torch = pytest.importorskip("torch")
    import runpy

    script = runpy.run_path(str(ROOT / "examples" / "train_example_model.py"))
    result = script["train"](folder=None)
    assert result["losses"][300] < result["losses"][0] - 0.2  # it learned something
    for step, state in result["states"].items():
        shipped = torch.load(TRAINED[0].parent / f"step_{step:04d}.pt", weights_only=True)
        assert all(torch.allclose(state[k], shipped[k], atol=1e-5) for k in shipped)


def test_causal_mask_matches_pytorch_and_is_named_outside_the_theorems(capsys, tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    from symattn.audit import from_torch
    from symattn.analyses.matrix_free import stack_forward, stack_layout

    torch.manual_seed(8)
    mods = [torch.nn.MultiheadAttention(4, 2, bias=False, batch_first=True).double()]
    m = from_torch(mods)
    X = np.random.default_rng(3).normal(size=(2, 5, 4))
    layers = [[h.floats() for h in layer] for layer in m.layers]
    ours = stack_forward(stack_layout(layers), m.normalizers, torch.tensor(X), causal=True)(
        torch.tensor(np.concatenate([a.reshape(-1) for layer in layers for h in layer for a in h])))
    x = torch.tensor(X)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.float64)
    with torch.no_grad():
        theirs = mods[0](x, x, x, attn_mask=mask, need_weights=False)[0].numpy()
    assert np.max(np.abs(ours.numpy().reshape(theirs.shape) - theirs)) < 1e-12
    path = tmp_path / "one.pt"
    torch.save(torch.nn.ModuleList([torch.nn.MultiheadAttention(4, 1, bias=False)]).state_dict(), path)
    status, out, err = _cli(capsys, "audit", str(path), "--causal", "--json")
    assert status == 0, err
    report = json.loads(out)
    assert report["fiber"] is None and "causal mask is outside" in report["tiers"]["fiber"]
    assert report["spectrum"] is None
    v = report["variants"]  # the masked effective map: variant spectrum, dimension and fiber evidence
    assert v["theorem"] is None and "mask causal" in v["architecture"]
    assert v["fiber"]["theorem"] is None and "outside the paper's hypotheses" in report["verdict"]
