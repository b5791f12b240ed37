"""Tests of the audit of real transformers (issue 24 items 3-5): module order, checkpoints,
LayerNorm/MLP/bias blocks, the numerical tiers on PyTorch's own modules, the enforced budget,
the verdict and the report."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT
from symattn.audit import audit, from_state_dict, load_model
from symattn.audit.budget import OverBudget, bounded
from symattn.cli import main
from symattn.core.errors import CheckFailed, SymattnError

torch = pytest.importorskip("torch")

TRANSFORMER = ROOT / "examples" / "transformer" / "model.pt"
INPUTS = ROOT / "examples" / "transformer" / "inputs.npz"


def _encoder(d=8, heads=2, ff=16, layers=2, norm_first=False, activation="relu", final=False, seed=0):
    torch.manual_seed(seed)
    layer = torch.nn.TransformerEncoderLayer(d, heads, ff, dropout=0.0, batch_first=True,
                                             norm_first=norm_first, activation=activation)
    enc = torch.nn.TransformerEncoder(layer, layers, norm=torch.nn.LayerNorm(d) if final else None,
                                      enable_nested_tensor=False)
    with torch.no_grad():  # distinct layers and nonzero biases/gains (the clones start equal)
        for p in enc.parameters():
            p.add_(0.1 * torch.randn_like(p))
    return enc.double().eval()


def _cli(capsys, *argv):
    status = main(list(argv))
    out = capsys.readouterr()
    return status, out.out, out.err


@pytest.mark.parametrize("norm_first, activation, final", [(False, "relu", False), (True, "gelu", True)])
def test_rebuilt_modules_reproduce_the_saved_encoder(tmp_path: Path, norm_first, activation, final) -> None:
    """From a checkpoint file (config: heads, placement, activation), PyTorch's own modules
    rebuilt by the audit give the original encoder's outputs (float64)."""
    from symattn.audit.modules import TorchStack

    enc = _encoder(norm_first=norm_first, activation=activation, final=final)
    path = tmp_path / "ck.pt"
    torch.save({"epoch": 7, "model_state_dict": enc.state_dict(),
                "config": {"nhead": 2, "norm_first": norm_first, "activation": activation, "seq_len": 5}}, path)
    m = load_model(path)
    assert m.tokens == 5 and m.heads == (2, 2) and [b.norm_first for b in m.transformer_layers] == [norm_first] * 2
    assert any("entry 'model_state_dict'" in n and "epoch" in n for n in m.notes)
    assert (m.final_norm is not None) == final
    st = TorchStack(m)
    x = torch.randn(3, 5, 8, dtype=torch.float64)
    with torch.no_grad():
        assert float((st.run(st.theta, x) - enc(x)).abs().max()) < 1e-12
    assert st.size == sum(p.numel() for p in enc.parameters())


def test_layers_are_read_in_module_order_not_by_name() -> None:
    mods = torch.nn.ModuleDict({"zeta": torch.nn.MultiheadAttention(2, 1, bias=False),
                                "alpha": torch.nn.MultiheadAttention(2, 1, bias=False)})
    with torch.no_grad():
        mods["zeta"].in_proj_weight.fill_(2.0)
    m = from_state_dict(mods.state_dict())
    assert [b.name for b in m.transformer_layers] == ["zeta", "alpha"]
    assert float(m.layers[0][0].k[0, 0]) == 2.0


def test_decoder_cross_attention_is_refused_with_a_line(tmp_path: Path) -> None:
    dec = torch.nn.TransformerDecoderLayer(8, 2, 16, batch_first=True)
    torch.save(dec.state_dict(), tmp_path / "dec.pt")
    with pytest.raises(SymattnError, match="cross-attention"):
        load_model(tmp_path / "dec.pt")
    from symattn.audit import from_torch

    with pytest.raises(SymattnError, match="cross-attention"):
        from_torch(torch.nn.TransformerDecoder(dec, 1))


def test_checkpoint_without_a_state_dict_names_what_it_holds(capsys, tmp_path: Path) -> None:
    torch.save({"epoch": 3, "weights": {"a": 1}}, tmp_path / "ck.pt")
    status, out, err = _cli(capsys, "audit", str(tmp_path / "ck.pt"))
    assert status == 2 and out == "" and "model_state_dict" in err and len(err.strip().splitlines()) == 1


def test_heads_from_the_config_and_assumed_heads_warn(tmp_path: Path) -> None:
    enc = _encoder(heads=4)
    torch.save(enc.state_dict(), tmp_path / "plain.pt")
    m = load_model(tmp_path / "plain.pt")
    assert m.heads == (1, 1) and any("num_heads = 1 assumed" in n for n in m.notes)
    r = audit(m, budget=0, matrix_free=False)
    assert all(row["status"] != "pass" for row in r.rows if row["kind"] == "head")
    assert r.summary.startswith("WARN")
    # what the file does not record is said to be assumed on the first line and in the verdict
    assert ("PyTorch encoder: 2 layers, 1 heads (1 KV heads) (assumed), LayerNorm post-norm (assumed), "
            "relu (assumed), not causal") in r.summary
    assert "assumed: heads, norm placement, activation" in r.summary
    assert "(relu, assumed)" in r.verdict and "(post-norm, assumed)" in r.verdict
    # a model read from its modules says nothing is assumed
    from symattn.audit import from_torch

    given = audit(from_torch(_encoder(activation="gelu"), tokens=4), budget=0, matrix_free=False)
    assert "2 layers, 2 heads (2 KV heads), LayerNorm post-norm, gelu, not causal" in given.summary
    assert "assumed" not in given.verdict and "assumed" not in given.summary


def test_safetensors_state_dict_with_biases_is_read(tmp_path: Path) -> None:
    from safetensors.torch import save_file

    enc = _encoder()
    state = {k: v.float().contiguous() for k, v in enc.state_dict().items()}
    save_file(state, str(tmp_path / "m.safetensors"), metadata={"nhead": "2", "norm_first": "false"})
    m = load_model(tmp_path / "m.safetensors")
    assert m.heads == (2, 2) and m.transformer_layers[0].attention.in_proj_bias is not None
    assert m.transformer_layers[0].placement_from == "the checkpoint's config" and m.kind == "safetensors state dict"


@pytest.mark.parametrize("norm_first", [False, True])
def test_declared_symmetries_are_kernel_directions_and_bound_the_rank(norm_first) -> None:
    from symattn.audit import from_torch
    from symattn.audit.budget import Clock
    from symattn.audit.modules import module_tier

    m = from_torch(_encoder(d=4, heads=2, ff=8, norm_first=norm_first, final=norm_first), tokens=4)
    r = module_tier(m, Clock(900), 900)
    dim = r["dimension"]
    assert all(s["verified"] for s in dim["symmetries"]) and dim["declared"] > 0
    assert dim["numerical_rank"] is not None and dim["numerical_rank"] <= dim["upper_bound"]
    assert dim["unexplained_kernel"] == dim["parameters"] - dim["numerical_rank"] - dim["declared"] >= 0
    assert r["float64"]["top"][0] == pytest.approx(r["float32"]["top"][0], rel=1e-4)


def test_a_wrong_symmetry_is_caught() -> None:
    """Break a family on purpose: a key-bias shift applied to the query bias is not a symmetry."""
    from symattn.audit import from_torch
    from symattn.audit.budget import Clock
    import importlib

    from symattn.audit.modules import TorchStack, module_tier, symmetry_families

    mod = importlib.import_module("symattn.audit.modules")

    m = from_torch(_encoder(d=4, heads=2, ff=8), tokens=4)
    st = TorchStack(m)
    fams = symmetry_families(st)
    wrong = next(f for f in fams if "key bias" in f["name"])
    original = wrong["sample"]

    def shifted(rng):
        v = original(rng)
        return torch.roll(v, -4)  # the query bias instead of the key bias

    real = mod.symmetry_families
    mod.symmetry_families = lambda stack: [dict(f, sample=shifted) if f["name"] == wrong["name"] else f
                                           for f in real(stack)]
    try:
        r = module_tier(m, Clock(900), 900)
    finally:
        mod.symmetry_families = real
    bad = [s for s in r["dimension"]["symmetries"] if not s["verified"]]
    assert [s["name"] for s in bad] == [wrong["name"]]


def _spin() -> None:
    while True:
        pass


def test_bounded_stops_a_runaway_step() -> None:
    """A step that burns CPU is stopped at its CPU seconds, one that waits at the wall-clock safety cap
    (outcomes only: no assertion on how long either took)."""
    with pytest.raises(OverBudget, match="stopped at the budget .*CPU seconds of the whole process tree"):
        bounded(_spin, 0.5, "a runaway step")
    with pytest.raises(OverBudget, match="safety cap of a waiting step"):
        bounded(lambda: time.sleep(30), 0.2, "a waiting step")
    with pytest.raises(ZeroDivisionError):
        bounded(lambda: 1 / 0, 5, "a failing step")


def test_budget_is_enforced_on_a_realistic_encoder() -> None:
    """d_model 32, 4 heads, feed-forward 64, on an injected clock that spends 3 of its 4 seconds at
    once: the numerical steps that no longer fit are named as not run, and the first line says which
    tier stopped and why (no wall clock: the outcome does not depend on the machine's load)."""
    from symattn.audit import from_torch
    from symattn.audit.budget import Clock

    m = from_torch(_encoder(d=32, heads=4, ff=64), tokens=8)
    ticks = iter([0.0] + [3.0] * 10 ** 6)
    r = audit(m, budget=4, clock=Clock(4, timer=lambda: next(ticks)))
    assert r.modules["not_run"] and "budget" in r.modules["not_run"][0]
    assert "stopped: modules (budget, --budget SECONDS)" in r.summary.splitlines()[0]
    assert r.work["budget_measure"] == "seconds of an injected timer"


def test_verdict_speaks_only_of_what_was_analysed() -> None:
    """A ReLU encoder is analysed as the layer kinds (certified tier), with a final LayerNorm too (the final
    norm part); an MLP wider than the layer kinds' limit is not, so that model's parts are read but not
    analysed exactly; no verdict speaks of what "the function determines"."""
    from symattn.audit import from_torch

    final = audit(from_torch(_encoder(d=4, ff=3, layers=1, final=True), tokens=3), budget=30)
    assert "Analysed as symattn's layer kinds" in final.verdict and final.tiers["certified"].startswith("certified")
    assert final.certified["architecture"].endswith("final LayerNorm eps = 1/100000")
    wide = audit(from_torch(_encoder(d=4, ff=1100, layers=1, activation="gelu"), tokens=3), budget=0)
    assert "read but not analysed exactly" in wide.verdict and "MLP width 1100 beyond" in wide.tiers["certified"]
    r = audit(from_torch(_encoder(), tokens=4), budget=60)
    for v in (final.verdict, wide.verdict, r.verdict):
        assert "The function determines" not in v and "LayerNorm" in v
    assert "Analysed as symattn's layer kinds" in r.verdict and r.tiers["certified"].startswith("certified")
    assert r.fiber is None and r.spectrum is None and r.effective is None
    kinds = {row["kind"] for row in r.rows}
    assert kinds == {"head", "norm", "mlp"} and len(r.rows) == 2 * (2 + 2 + 1)
    json.dumps(r.to_json())


@pytest.mark.skipif(not TRANSFORMER.exists(), reason="examples/transformer not built")
def test_shipped_transformer_audit_from_the_cli(capsys, tmp_path: Path) -> None:
    status, out, err = _cli(capsys, "audit", str(TRANSFORMER), "--inputs", str(INPUTS), "--plot",
                            str(tmp_path / "p.png"))
    assert status == 0, err
    first = out.splitlines()[0]
    assert first.split(":")[0] in ("PASS", "WARN", "FAIL") and "PyTorch encoder: 2 layers, 2 heads (2 KV heads), LayerNorm post-norm, gelu, not causal" in first
    assert "symattn audit:" in err and "done" in err  # progress on stderr
    assert "glossary" in out and "from --inputs" in out and (tmp_path / "p.png").stat().st_size > 0
    assert "PASS  encoder.layers.0.self_attn head 1" in out or "WARN  encoder.layers.0.self_attn head 1" in out
    assert "embed.weight: not part of the attention stack" in out


def test_inputs_file_sets_the_tokens_and_is_checked(capsys, tmp_path: Path) -> None:
    enc = _encoder()
    torch.save(enc.state_dict(), tmp_path / "m.pt")
    np.savez(tmp_path / "x.npz", inputs=np.random.default_rng(0).normal(size=(4, 3, 8)))
    np.savez(tmp_path / "bad.npz", inputs=np.ones((4, 3, 5)))
    status, out, err = _cli(capsys, "audit", str(tmp_path / "m.pt"), "--inputs", str(tmp_path / "bad.npz"))
    assert status == 2 and "(B, n, 8)" in err
    status, out, err = _cli(capsys, "audit", str(tmp_path / "m.pt"), "--heads", "2", "--inputs",
                            str(tmp_path / "x.npz"), "--quiet", "--json")
    assert status == 0 and err == ""
    report = json.loads(out)
    assert report["architecture"]["tokens"] == 3 and "from --inputs" in report["modules"]["bank"]


@pytest.mark.slow
def test_training_script_reproduces_the_shipped_transformer() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("t", ROOT / "examples" / "train_example_transformer.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    result = script.train(folder=None)
    shipped = torch.load(TRANSFORMER, weights_only=True)
    assert result["accuracy"] == shipped["accuracy"]
    for k, v in result["model"].state_dict().items():
        assert torch.equal(v, shipped["model_state_dict"][k])


# ------------------------------------------------------------------ the certified tier on the layer kinds
@pytest.mark.parametrize("norm_first", [False, True])
def test_layer_kinds_compute_the_pytorch_encoder(norm_first) -> None:
    """The model as symattn's layer kinds (float64 graph) gives PyTorch's own encoder outputs."""
    from symattn.audit import from_torch
    from symattn.audit.certified import block_architecture, block_point
    from symattn.core.algebras import Float64
    from symattn.model.network import evaluate, native_network

    enc = _encoder(d=4, heads=2, ff=3, norm_first=norm_first, activation="gelu")
    m = from_torch(enc, tokens=3)
    arch, reasons = block_architecture(m)
    assert reasons == [] and arch.native_size == m.torch_parameters
    x = torch.randn(2, 3, 4, dtype=torch.float64)
    values = {k: np.vectorize(float, otypes=[float])(v) for k, v in block_point(m, arch).items()}
    values["X"] = x.numpy().transpose(0, 2, 1)
    got = np.asarray(evaluate(native_network(arch), Float64(), values)["F"], dtype=float).transpose(0, 2, 1)
    with torch.no_grad():
        want = enc(x).numpy()
    assert np.abs(got - want).max() < 1e-12


def test_parts_without_a_layer_kind_are_named() -> None:
    from symattn.audit import from_torch
    from symattn.audit.certified import block_architecture

    arch, reasons = block_architecture(from_torch(_encoder(d=4, heads=2, ff=3, final=True), tokens=3))
    assert reasons == [] and arch.final_norm.part.title == "LayerNorm"  # ReLU and the final norm have layer kinds
    arch, reasons = block_architecture(from_torch(_encoder(d=4, heads=2, ff=1100, activation="gelu"), tokens=3))
    assert arch is None and any("MLP width 1100 beyond" in r for r in reasons)


def test_certified_rank_bounds_of_a_small_encoder() -> None:
    """A nonzero ball minor: 0 < certified lower bound <= float64 rank <= P - declared symmetries;
    labels: certified for the ball tier, numerical for the tiers on PyTorch's modules."""
    from symattn.audit import from_torch

    r = audit(from_torch(_encoder(d=4, heads=2, ff=3, layers=1, activation="gelu"), tokens=3), budget=20)
    c = r.certified
    assert c is not None and r.tiers["certified"].startswith("certified")
    lb, up = c["rank_lower_bound"]["value"], c["symmetries"]["upper_bound"]
    assert 0 < lb <= up and c["graph_check"]["relative_difference"] < 1e-12
    rank = r.modules["dimension"].get("numerical_rank")
    assert rank is None or lb <= rank <= up
    assert "Analysed as symattn's layer kinds" in r.verdict and f"at least {lb} (certified" in r.verdict
    assert all("certified rank bounds" in " ".join(row["figures"]) for row in r.rows if row["kind"] == "norm")
    assert r.modules["tier"].startswith("numerical")
    json.dumps(r.to_json())


def test_memory_estimate_is_enforced_before_anything_runs() -> None:
    from symattn.audit import estimate_work, from_torch

    m = from_torch(_encoder(d=4, heads=2, ff=3, layers=1), tokens=3)
    need = estimate_work(m)["modules_bytes"]
    assert 2 ** 28 < need < 2 ** 30
    from symattn.audit.budget import Clock

    def untouched() -> float:
        raise AssertionError("the clock was read: work started before the memory refusal")
    clock = Clock(60, timer=lambda: 0.0)
    clock.timer = untouched
    with pytest.raises(SymattnError, match="--max-memory"):
        audit(m, budget=60, max_memory=need // 2, clock=clock)


def test_read_post_conditions_catch_a_wrong_order_and_heads() -> None:
    from symattn.audit.conventions import _check_read
    from symattn.core.errors import InternalError

    sd = {f"layers.{i}.self_attn.{k}": None for i in (0, 1) for k in ("in_proj_weight", "out_proj.weight")}
    groups = {f"layers.{i}.self_attn.": {k: f"layers.{i}.self_attn.{k}" for k in ("in_proj_weight", "out_proj.weight")}
              for i in (0, 1)}
    m = from_state_dict(_encoder().state_dict(), tokens=3, config={"heads": 2})
    _check_read(sd, groups, m.transformer_layers, {"heads": 2}, {}, False)
    with pytest.raises(InternalError, match="module order"):
        _check_read(sd, groups, m.transformer_layers[::-1], {"heads": 2}, {}, False)
    with pytest.raises(InternalError, match="num_heads"):
        _check_read(sd, groups, m.transformer_layers, {"heads": 4}, {}, False)


def test_a_smaller_share_certifies_a_column_subset() -> None:
    """The cost model plans fewer columns for fewer seconds: the bound is then on a column subset (named),
    certified, at most its numerical rank and at most the symmetries' upper bound."""
    from symattn.audit import certified, from_torch

    model = from_torch(_encoder(d=8, heads=2, ff=16, layers=1, activation="gelu"), tokens=4)
    arch, reasons = certified.block_architecture(model)
    assert arch is not None, reasons
    bank = np.random.default_rng(0).standard_normal((40, 4, 8))
    full = certified.certified_tier(model, arch, bank, seconds=60)
    small = certified.certified_tier(model, arch, bank, seconds=3.2)
    lf, ls = full["rank_lower_bound"], small["rank_lower_bound"]
    assert lf["columns"] == arch.native_size and lf["value"] == full["symmetries"]["upper_bound"] and full["determined"]
    assert 0 < ls["value"] <= ls["numerical_rank"] <= ls["columns"] < arch.native_size
    assert ls["blocks"][0].startswith("mlp.in") and ls["tier"].startswith("certified") and not small["determined"]


def test_relu_encoder_is_certified_where_its_signs_are() -> None:
    """ReLU: the tier runs where every pre-activation is certified nonzero, declares the rescaling of
    each hidden unit (exact kernel vectors there) and says so; a unit whose pre-activation is exactly 0
    on every input (zero row and bias) leaves no probe input: undecided, said as such."""
    from symattn.audit import certified, from_torch
    from symattn.core.errors import Undecided

    enc = _encoder(d=4, heads=2, ff=3, layers=1)
    model = from_torch(enc, tokens=3)
    arch, _ = certified.block_architecture(model)
    bank = np.random.default_rng(0).standard_normal((20, 3, 4))
    c = certified.certified_tier(model, arch, bank, seconds=30)
    assert c["symmetries"]["kinds"]["ReLU rescaling"] == 3 and c["determined"]
    assert any("ReLU: every pre-activation" in n for n in c["notes"])
    with torch.no_grad():
        enc.layers[0].linear1.weight[1].zero_()
        enc.layers[0].linear1.bias[1] = 0.0
    dead = from_torch(enc, tokens=3)
    with pytest.raises(Undecided, match="ReLU pre-activation"):
        certified.certified_tier(dead, certified.block_architecture(dead)[0], bank, seconds=30)


def test_an_input_with_a_zero_pre_activation_is_left_out() -> None:
    """Attention that adds nothing (zero value/output maps and biases) and a hidden unit reading
    ``y_0 - y_1`` with a LayerNorm shift equal in those coordinates: a token constant across the
    features has ``xhat = 0`` exactly, ``y = s`` and the unit's pre-activation exactly 0. The probe input
    with that token is left out (said in the notes); the others are certified."""
    from symattn.audit import certified, from_torch

    enc = _encoder(d=4, heads=2, ff=3, layers=1)
    layer = enc.layers[0]
    with torch.no_grad():
        layer.self_attn.in_proj_weight[8:].zero_()
        layer.self_attn.in_proj_bias[8:].zero_()
        layer.self_attn.out_proj.weight.zero_()
        layer.self_attn.out_proj.bias.zero_()
        layer.norm1.bias[:2] = 0.5
        layer.linear1.weight[0] = torch.tensor([1.0, -1.0, 0.0, 0.0], dtype=torch.float64)
        layer.linear1.bias[0] = 0.0
    model = from_torch(enc, tokens=3)
    arch, _ = certified.block_architecture(model)
    bank = np.random.default_rng(0).standard_normal((20, 3, 4))
    bank[0, 1] = 0.75  # a constant token
    c = certified.certified_tier(model, arch, bank, seconds=30)
    lb = c["rank_lower_bound"]
    assert lb["excluded_inputs"] == 1 and lb["value"] > 0 and any("left out" in n for n in c["notes"])


def test_disjoint_enclosures_are_a_failed_check(monkeypatch) -> None:
    """The binary64 balls of the Jacobian are checked against python-flint balls on a few entries: a
    binary64 algebra that drops its radii is caught (exit 1, never a wrong certificate)."""
    from symattn.audit import certified, from_torch
    from symattn.core.algebras.balls import Float64Balls

    monkeypatch.setattr(Float64Balls, "_finish", staticmethod(lambda out, absolute=0.0: out * np.array([1.0, 0.0])
                                                               .reshape((2,) + (1,) * (out.ndim - 1))))
    model = from_torch(_encoder(d=4, heads=2, ff=3, layers=1, activation="gelu"), tokens=3)
    arch, _ = certified.block_architecture(model)
    with pytest.raises(CheckFailed, match="disjoint"):
        certified.certified_tier(model, arch, np.random.default_rng(0).standard_normal((20, 3, 4)), seconds=30)