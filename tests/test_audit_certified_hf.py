"""The certified tier of Hugging Face folders (issue 40 item 6): GPT-2 (causal, pre-norm, gelu_new, Conv1D,
final ``ln_f``) and ViT (pre-norm, final ``layernorm``) on the one model's layer kinds, their rank lower bounds
consistent with the numerical tier (PyTorch's own Jacobian on the same inputs), and the user's command
reaching the certified tier within the default budget (CPU seconds)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from symattn.cli import main

torch = pytest.importorskip("torch")
pytest.importorskip("transformers", reason="transformers is not installed (pip install 'symattn[hf]')")

from test_audit_hf import _folder  # noqa: E402  (the families' builders)


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("hf_certified")
    return {f: _folder(root, f) for f in ("gpt2", "vit")}


def _numerical_rank(model, bank: np.ndarray, causal: bool, name: str) -> int:
    """The float64 rank of PyTorch's own Jacobian (the file's modules) in the parameter ``name`` on ``bank``."""
    from symattn.audit.modules import TorchStack

    stack = TorchStack(model, "float64", causal=causal)
    where = stack.where(name)
    x = torch.tensor(bank, dtype=torch.float64)

    def f(p):
        theta = stack.theta.clone()
        theta[where] = p
        return stack.run(theta, x).reshape(-1)

    J = torch.func.jacrev(f)(stack.theta[where].clone()).numpy()
    s = np.linalg.svd(J, compute_uv=False)
    return int((s > 1e-10 * s[0]).sum())


@pytest.mark.parametrize("family", ["gpt2", "vit"])
def test_certified_tier_on_the_layer_kinds(folders, family) -> None:
    """The folder as the one model (causal mask, the final LayerNorm as the final norm part), the graph
    checked against PyTorch's modules, and a certified rank bound no larger than the float64 rank of
    PyTorch's own Jacobian on the same inputs and block."""
    from symattn.analyses.matrix_free import gaussian_bank
    from symattn.audit import load_model
    from symattn.audit.certified import block_architecture, certified_tier

    model = load_model(folders[family])
    causal = bool(model.causal)
    assert causal == (family == "gpt2")
    arch, reasons = block_architecture(model, causal)
    assert reasons == [] and arch.final_norm is not None and arch.final_norm.part.title == "LayerNorm"
    assert all(layer.mask == ("causal" if causal else "none") and layer.pre_norm for layer in arch.layers)
    from symattn.audit.modules import TorchStack

    assert arch.native_size == TorchStack(model, "float64", causal=causal).size  # every parameter, once
    bank = gaussian_bank(model.widths[0], model.tokens, 24, 0).numpy()
    out = certified_tier(model, arch, bank, 6.0, causal=causal)
    assert out["graph_check"]["relative_difference"] <= 1e-9
    lb = out["rank_lower_bound"]
    assert lb["value"] > 0 and lb["tier"].startswith("certified") and lb["blocks"] == ["mlp.in1"]
    assert "final LayerNorm" in out["architecture"] and ("mask causal" in out["architecture"]) == causal
    assert lb["value"] <= _numerical_rank(model, bank[:lb["inputs"]], causal, "0.linear1.weight")


def test_a_causal_model_read_unmasked_fails_the_graph_check(folders) -> None:
    """GPT-2's layer kinds without the causal mask disagree with PyTorch's causal modules: a failed check."""
    from symattn.audit import load_model
    from symattn.audit.certified import block_architecture, certified_tier
    from symattn.core.errors import CheckFailed

    model = load_model(folders["gpt2"])
    arch, _ = block_architecture(model, False)
    bank = np.random.default_rng(0).standard_normal((4, model.tokens, model.widths[0]))
    with pytest.raises(CheckFailed, match="disagree"):
        certified_tier(model, arch, bank, 4.0, causal=True)


def test_the_users_command_reaches_the_certified_tier(folders, capsys) -> None:
    """``symattn audit FOLDER`` at the default budget (60 CPU seconds): GPT-2's first line names a certified
    rank bound, which lies below the numerical tier's upper bound (P minus the declared symmetries)."""
    status = main(["audit", str(folders["gpt2"]), "--quiet", "--json"])
    out = capsys.readouterr()
    assert status == 0, out.err
    r = json.loads(out.out)
    first = r["summary"].splitlines()[0]
    assert "certified rank >=" in first and r["tiers"]["certified"].startswith("certified")
    lb = r["certified"]["rank_lower_bound"]["value"]
    assert 0 < lb <= r["modules"]["dimension"]["upper_bound"] <= r["certified"]["parameters"]
    assert r["work"]["seconds"] <= r["work"]["budget_seconds"] and r["work"]["budget_measure"].startswith("CPU")


TINY = {"gpt2": dict(n_embd=8, n_layer=2, n_head=2, n_inner=16, vocab_size=50, n_positions=16, bos_token_id=0,
                     eos_token_id=0),
        "vit": dict(hidden_size=8, num_hidden_layers=2, num_attention_heads=2, intermediate_size=16, image_size=8,
                    patch_size=4)}


@pytest.mark.parametrize("family", list(TINY))
def test_a_small_folder_gets_its_rank_determined(tmp_path, family) -> None:
    """Width 8, 2 heads, 2 layers (1216 parameters): all columns certified and the declared symmetries' exact
    upper bound met, the LayerNorm shifts through the final norm among them (2 x 26: without them the bounds
    would not meet); the determined rank equals the float64 rank of PyTorch's own Jacobian on the same inputs."""
    import transformers as T

    from symattn.audit import load_model
    from symattn.audit.certified import block_architecture, certified_tier
    from symattn.audit.modules import TorchStack
    from symattn.analyses.matrix_free import gaussian_bank

    T.utils.logging.set_verbosity_error()
    torch.manual_seed(0)
    m = T.AutoModel.from_config(T.AutoConfig.for_model(family, **TINY[family]))
    with torch.no_grad():
        for p in m.parameters():
            p.add_(0.05 * torch.randn_like(p))
    m.save_pretrained(tmp_path / family)
    model = load_model(tmp_path / family)
    causal = bool(model.causal)
    arch, _ = block_architecture(model, causal)
    bank = gaussian_bank(model.widths[0], model.tokens, 200, 0).numpy()
    out = certified_tier(model, arch, bank, 60.0, causal=causal)
    lb, sy = out["rank_lower_bound"], out["symmetries"]
    assert lb["columns"] == arch.native_size == 1216 and sy["kinds"]["LayerNorm shift"] == 52
    assert out["determined"] and out["rank_bounds"] == [lb["value"], sy["upper_bound"]] == [860, 860]
    stack = TorchStack(model, "float64", causal=causal)
    x = torch.tensor(bank[:lb["inputs"]], dtype=torch.float64)
    J = torch.func.jacfwd(lambda t: stack.run(t, x).reshape(-1))(stack.theta).numpy()
    s = np.linalg.svd(J, compute_uv=False)
    assert int((s > 1e-10 * s[0]).sum()) == lb["value"]
