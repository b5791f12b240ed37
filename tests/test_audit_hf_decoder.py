"""Llama, Mistral and Qwen2 folders (issue 40 items 1-3, 5, 6): read as decoder blocks (RMSNorm, rotary
positions, SwiGLU, grouped-query attention), the forward check against ``transformers``' own model and the
parts' naive formulas, the readings it catches, the declared symmetries checked on the file's weights (checks
that can fail), refusals by name, and the shipped ``examples/llama_tiny``."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from conftest import ROOT
from symattn.cli import main
from symattn.core.errors import CheckFailed

torch = pytest.importorskip("torch")

SMALL = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
             intermediate_size=64, vocab_size=50, max_position_embeddings=16)
DESCRIPTION = "{name} ({t}): 2 layers, 4 heads (2 KV heads), rotary base 10000, RMSNorm pre-norm, SwiGLU (silu), causal"
NAMES = {"llama": "Llama", "mistral": "Mistral", "qwen2": "Qwen2"}
TINY = ROOT / "examples" / "llama_tiny"


def _transformers():
    return pytest.importorskip("transformers", reason="transformers is not installed (pip install 'symattn[hf]')")


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict:
    T = _transformers()
    T.utils.logging.set_verbosity_error()
    T.utils.logging.disable_progress_bar()
    root = tmp_path_factory.mktemp("decoders")
    out = {}
    for family in NAMES:
        torch.manual_seed(0)
        model = T.AutoModel.from_config(T.AutoConfig.for_model(family, **SMALL))
        with torch.no_grad():  # gains away from 1, weights away from their small initial scale
            for p in model.parameters():
                p.add_(0.05 * torch.randn_like(p))
        model.save_pretrained(root / family)
        out[family] = root / family
    return out


def _cli(capsys, *argv):
    status = main([str(a) for a in argv])
    out = capsys.readouterr()
    return status, out.out, out.err


@pytest.mark.parametrize("family", list(NAMES))
def test_each_decoder_family_is_read_checked_and_described(folders, capsys, family) -> None:
    status, out, err = _cli(capsys, "audit", folders[family], "--budget", "0", "--quiet", "--json")
    assert status == 0, err
    r = json.loads(out)
    first = r["summary"].splitlines()[0]
    assert DESCRIPTION.format(name=NAMES[family], t=family) in first
    assert "forward check against the file's own model passed" in first
    fwd = r["forward"]
    assert fwd["passed"] and "transformers" in fwd["reference"] and fwd["tolerance"] == 1e-5
    assert fwd["naive_reference"].startswith("the naive reference") and fwd["naive_max_relative_difference"] <= 1e-8
    assert fwd["rotary_tables_relative_difference"] <= fwd["rotary_tolerance"]
    assert r["assumed"] == [] and r["hugging_face"]["kv_heads"] == 2 and r["hugging_face"]["norm_kind"] == "rmsnorm"


def test_without_transformers_the_naive_formula_checks_at_float64(folders, monkeypatch) -> None:
    from symattn.audit import load_model
    from symattn.audit.forward import TOLERANCE, forward_check

    monkeypatch.setitem(sys.modules, "transformers", None)
    m = load_model(folders["qwen2"])
    r = forward_check(m, causal=True)
    assert r["passed"] and r["tolerance"] == TOLERANCE and "transformers is not installed" in r["reference"]


def _fails(folder, match):
    from symattn.audit import load_model
    from symattn.audit.forward import forward_check

    with pytest.raises(CheckFailed, match=match):
        forward_check(load_model(folder), causal=True)


def test_a_rotary_sign_is_caught(folders, monkeypatch) -> None:
    """The rotation read the other way round (angle -a f_j): both the transformers and the naive check fail."""
    from symattn.model.parts.rotary import Rotary

    real = Rotary.tables
    monkeypatch.setattr(Rotary, "tables", lambda self, n, t, d: (real(self, n, t, d)[0], -real(self, n, t, d)[1]))
    _fails(folders["llama"], "forward check")
    monkeypatch.setitem(sys.modules, "transformers", None)
    _fails(folders["llama"], r"layers\.0 differs")


def test_kv_heads_repeated_in_the_wrong_order_are_caught(folders, monkeypatch) -> None:
    """Query head h reading KV head h % G (interleaved) instead of h // (H / G) (repeat_kv's order)."""
    from symattn.model.parts.gqa import GroupedQueryAttention

    monkeypatch.setattr(GroupedQueryAttention, "group", lambda self, h: h % self.kv_heads)
    _fails(folders["mistral"], "forward check")


def test_rmsnorm_read_as_layernorm_is_caught(folders, monkeypatch) -> None:
    from symattn.audit import hf

    monkeypatch.setitem(hf.FAMILIES, "llama", hf.dataclasses.replace(hf.FAMILIES["llama"], norm_kind="layernorm"))
    _fails(folders["llama"], r"layers\.0 differs")


def test_the_users_command_exits_1_on_a_wrong_reading(folders, capsys, monkeypatch) -> None:
    from symattn.model.parts.gqa import GroupedQueryAttention

    monkeypatch.setattr(GroupedQueryAttention, "group", lambda self, h: h % self.kv_heads)
    status, out, err = _cli(capsys, "audit", folders["llama"], "--budget", "0", "--quiet")
    assert status == 1 and out == "" and err.startswith("symattn: ") and len(err.splitlines()) == 1


def _families_checked(model):
    """Each declared family of the model's decoder layers, checked as ||J v|| / (sigma ||v||) on a small bank."""
    from torch.func import jvp

    from symattn.analyses.matrix_free import gaussian_bank
    from symattn.audit.modules import TorchStack, symmetry_families

    stack = TorchStack(model, "float64", True)
    f = stack.forward(gaussian_bank(model.widths[0], model.tokens, 2, 0))
    rng = np.random.default_rng(0)
    scale = float(torch.linalg.vector_norm(f(stack.theta)))
    out = {}
    for fam in symmetry_families(stack):
        v = fam["sample"](rng)
        Jv = jvp(f, (stack.theta,), (v,))[1]
        out[fam["name"]] = (fam["count"], float(torch.linalg.vector_norm(Jv) / (scale * torch.linalg.vector_norm(v))))
    return stack, out


def test_declared_symmetries_of_the_shipped_llama_are_kernel_directions() -> None:
    """On examples/llama_tiny: the rotary gauge (e per KV head), the value/output gauge shared by a group
    (e^2 per KV head), the RMSNorm gains folded into q, k, v and gate, up, the SwiGLU up/down scaling; each a
    kernel direction, and each with the dimension of its declaration."""
    from symattn.audit import load_model

    m = load_model(TINY)
    _, fams = _families_checked(m)
    counts = {name.split(": ", 1)[1].split(" (")[0]: c for name, (c, _) in fams.items() if name.startswith("layer 1")}
    assert counts == {"rotary query/key gauge per KV head": 8, "value/output gauge per KV head, shared by its 2 query "
                      "heads": 32, "RMSNorm norm1 gain folded into the next linear maps": 16,
                      "RMSNorm norm2 gain folded into the next linear maps": 16,
                      "SwiGLU up/down scaling of each hidden unit": 32}
    assert all(r < 1e-12 for _, r in fams.values()), fams


def test_a_wrong_declaration_fails_its_check(monkeypatch) -> None:
    """The check can fail: the full query/key gauge (A, A^-T) of a head without positions declared for a rotary
    head, or the gate scaled like the up branch of SwiGLU, is not a kernel direction."""
    import dataclasses

    from symattn.audit import decoder, load_model
    from symattn.model.parts.swiglu import SwiGLU

    real = decoder.decoder_families

    def plain(stack, i, block, add, vec, theta):
        real(stack, i, dataclasses.replace(block, attention=dataclasses.replace(block.attention, rotary=None)),
             add, vec, theta)
    monkeypatch.setattr(decoder, "decoder_families", plain)
    _, fams = _families_checked(load_model(TINY))
    assert max(r for name, (_, r) in fams.items() if "query/key gauge" in name) > 1e-4
    monkeypatch.undo()
    monkeypatch.setattr(SwiGLU, "scaling", staticmethod(lambda up, down, c: (c[:, None] * up, -down * c[None, :] / 2)))
    _, fams = _families_checked(load_model(TINY))
    assert max(r for name, (_, r) in fams.items() if "SwiGLU" in name) > 1e-4


def test_discrete_symmetries_hold_and_a_wrong_one_fails(monkeypatch) -> None:
    from symattn.analyses.matrix_free import gaussian_bank
    from symattn.audit import load_model
    from symattn.audit.decoder import discrete_checks
    from symattn.audit.modules import TorchStack
    from symattn.model.parts.swiglu import SwiGLU

    m = load_model(TINY)
    stack = TorchStack(m, "float64", True)
    bank = gaussian_bank(m.widths[0], m.tokens, 2, 0)
    checks = discrete_checks(stack, bank)
    kinds = {(c["layer"], c["kind"]) for c in checks}
    assert kinds == {(1, "numerical"), (2, "numerical"), (1, "exact"), (2, "exact")}
    assert all(c["verified"] for c in checks) and len(checks) == 8
    assert all(c["digits"] >= 12 for c in checks if c["kind"] == "numerical")
    # the down projection left unpermuted: not a symmetry, and the check says so
    monkeypatch.setattr(SwiGLU, "permute", staticmethod(lambda g, u, d, perm: (g[list(perm)], u[list(perm)], d)))
    bad = [c for c in discrete_checks(stack, bank) if "SwiGLU" in c["name"]]
    assert bad and not any(c["verified"] for c in bad)


def test_config_refusals(tmp_path, capsys) -> None:
    """Each a one-line exit 2 naming what is not covered."""
    config = json.loads((TINY / "config.json").read_text())
    cases = [({"rope_parameters": {"rope_theta": 1e4, "rope_type": "llama3"}}, "rope type 'llama3'"),
             ({"rope_scaling": {"type": "linear", "factor": 2.0}}, "rope type 'linear'"),
             ({"head_dim": 8}, "head_dim 8 is not hidden_size / num_attention_heads"),
             ({"mlp_bias": True}, "mlp_bias = true"),
             ({"hidden_act": "gelu"}, "covers silu only"),
             ({"num_key_value_heads": 3}, "3 key/value heads do not divide 4"),
             ({"layer_types": ["sliding_attention", "full_attention"]}, "sliding-window layers")]
    for change, said in cases:
        folder = tmp_path / f"c{len(said)}"
        folder.mkdir(exist_ok=True)
        (folder / "config.json").write_text(json.dumps({**config, **change}))
        (folder / "model.safetensors").write_bytes((TINY / "model.safetensors").read_bytes())
        status, out, err = _cli(capsys, "audit", folder, "--budget", "0")
        assert status == 2 and out == "" and said in err and len(err.splitlines()) == 1, (change, err)
    folder = tmp_path / "window"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({**config, "model_type": "mistral", "sliding_window": 3}))
    (folder / "model.safetensors").write_bytes((TINY / "model.safetensors").read_bytes())
    status, _, err = _cli(capsys, "audit", folder, "--budget", "0", "--tokens", "4")
    assert status == 2 and "exceed the sliding window 3" in err
    status, _, err = _cli(capsys, "audit", TINY, "--budget", "0", "--norm-kind", "layernorm")
    assert status == 2 and "--norm-kind layernorm contradicts" in err
    status, out, err = _cli(capsys, "audit", TINY, "--budget", "0", "--quiet", "--norm-kind", "rmsnorm", "--heads", "4")
    assert status == 0 and out.startswith("PASS: "), err
    torch.save({"layers.0.in_proj_weight": torch.ones(6, 2)}, tmp_path / "sd.pt")
    status, _, err = _cli(capsys, "audit", tmp_path / "sd.pt", "--norm-kind", "rmsnorm")
    assert status == 2 and "RMSNorm encoder layers are not read yet" in err


def test_the_shipped_llama_example_is_current_and_audited(capsys) -> None:
    """examples/llama_tiny is what examples/make_hf_example.py writes, and its audit (with the numerical tiers)
    reports every declared and discrete symmetry verified, labelled with their digits."""
    import subprocess

    run = subprocess.run([sys.executable, str(ROOT / "examples" / "make_hf_example.py"), "--check"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    status, out, err = _cli(capsys, "audit", TINY, "--budget", "60", "--quiet")
    assert status == 0, err
    assert out.startswith("PASS: ") and "Llama (llama): 2 layers, 4 heads (2 KV heads)" in out.splitlines()[0]
    assert "NOT a symmetry" not in out
    assert "verified: layer 1: rotary query/key gauge per KV head" in out and "(numerical at " in out
    assert "verified: layer 2: rotary gauge commutes with every rotation (exact" in out
    assert "Discrete symmetries applied to the file's weights: 8 of 8 hold" in out


def test_a_causal_lm_in_bfloat16_with_one_kv_head(tmp_path, capsys) -> None:
    """LlamaForCausalLM (prefix ``model.``, an ``lm_head``, tied embeddings) saved in bfloat16 with multi-query
    attention (1 KV head): read, checked against transformers, described."""
    T = _transformers()
    T.utils.logging.set_verbosity_error()
    config = T.AutoConfig.for_model("llama", **{**SMALL, "num_key_value_heads": 1, "tie_word_embeddings": True})
    torch.manual_seed(1)
    model = T.LlamaForCausalLM(config)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.05 * torch.randn_like(p))
    model.to(torch.bfloat16).save_pretrained(tmp_path / "lm")
    status, out, err = _cli(capsys, "audit", tmp_path / "lm", "--budget", "0", "--quiet", "--json")
    assert status == 0, err
    r = json.loads(out)
    assert "Llama (llama): 2 layers, 4 heads (1 KV heads)" in r["summary"] and r["forward"]["passed"]
    assert r["hugging_face"]["final_norm"] == "model.norm"
