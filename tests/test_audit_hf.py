"""The audit of Hugging Face folders (issue 40 items 1, 3-5; issue 42 item 4; issue 43 items 4-5):
each family built with ``transformers`` and audited, the forward check against the file's own model
(layer by layer and head by head) and the readings it catches, refusals by name, properties stated
on the command line, and the safetensors reader's fixes."""

from __future__ import annotations

import json
import struct
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT
from symattn.cli import main
from symattn.core.errors import CheckFailed, SymattnError

torch = pytest.importorskip("torch")

SMALL = {"bert": dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                      vocab_size=50, max_position_embeddings=16),
         "roberta": dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                         vocab_size=50, max_position_embeddings=16),
         "distilbert": dict(dim=32, n_layers=2, n_heads=4, hidden_dim=64, vocab_size=50,
                            max_position_embeddings=16),
         "gpt2": dict(n_embd=32, n_layer=2, n_head=4, vocab_size=50, n_positions=16, bos_token_id=0,
                      eos_token_id=0),
         "vit": dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                     image_size=8, patch_size=4)}
#: The first line's description of each family (issue 40 item 5).
DESCRIPTION = {
    "bert": "BERT (bert): 2 layers, 4 heads (4 KV heads), LayerNorm post-norm, gelu, not causal",
    "roberta": "RoBERTa (roberta): 2 layers, 4 heads (4 KV heads), LayerNorm post-norm, gelu, not causal",
    "distilbert": "DistilBERT (distilbert): 2 layers, 4 heads (4 KV heads), LayerNorm post-norm, gelu, not causal",
    "gpt2": "GPT-2 (gpt2): 2 layers, 4 heads (4 KV heads), LayerNorm pre-norm, gelu_tanh, causal",
    "vit": "ViT (vit): 2 layers, 4 heads (4 KV heads), LayerNorm pre-norm, gelu, not causal",
}


def _transformers():
    return pytest.importorskip("transformers", reason="transformers is not installed (pip install 'symattn[hf]')")


def _folder(root: Path, family: str, seed: int = 0, **save) -> Path:
    """A randomly initialised ``family`` model saved with ``save_pretrained`` (no hub access)."""
    T = _transformers()
    T.utils.logging.set_verbosity_error()
    T.utils.logging.disable_progress_bar()
    config = T.AutoConfig.for_model(family, **SMALL[family])
    torch.manual_seed(seed)
    model = T.AutoModel.from_config(config)
    with torch.no_grad():  # biases and gains away from their initial 0 and 1
        for p in model.parameters():
            p.add_(0.05 * torch.randn_like(p))
    path = root / family
    model.save_pretrained(path, **save)
    return path


def _cli(capsys, *argv):
    status = main([str(a) for a in argv])
    out = capsys.readouterr()
    return status, out.out, out.err


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("hf")
    return {f: _folder(root, f) for f in SMALL}


@pytest.mark.parametrize("family", list(SMALL))
def test_each_family_is_read_checked_and_described(folders, capsys, family) -> None:
    """The folder is audited as its family: the first line names it, and the forward check against the
    folder's own transformers model passes, layer by layer and head by head, before any figure."""
    status, out, err = _cli(capsys, "audit", folders[family], "--budget", "0", "--quiet", "--json")
    assert status == 0, err
    r = json.loads(out)
    assert DESCRIPTION[family] in r["summary"].splitlines()[0]
    assert "forward check against the file's own model passed" in r["summary"]
    fwd = r["forward"]
    assert fwd["passed"] and "transformers" in fwd["reference"] and "from_pretrained" in fwd["reference"]
    assert len(fwd["layers"]) >= 2 and all(x["relative_difference"] <= fwd["tolerance"] for x in fwd["layers"])
    assert fwd["heads_max_relative_difference"] <= fwd["tolerance"]
    assert r["assumed"] == [] and r["hugging_face"]["heads"] == 4
    assert r["work"]["budget_measure"] == "CPU seconds of the whole process tree"


def test_without_transformers_the_check_is_the_naive_formula_and_says_so(folders, monkeypatch) -> None:
    from symattn.audit import load_model
    from symattn.audit.forward import forward_check

    monkeypatch.setitem(sys.modules, "transformers", None)
    for family in ("gpt2", "bert"):
        m = load_model(folders[family])
        r = forward_check(m, causal=bool(m.causal))
        assert r["passed"] and r["reference"].startswith("the naive reference of the family's formula")
        assert "transformers is not installed" in r["reference"]


def test_a_transposed_conv1d_reading_is_caught_by_the_users_command(folders, capsys, monkeypatch) -> None:
    """GPT-2's c_proj read as stored (Conv1D's (in, out), untransposed): exit 1 naming h.0."""
    from symattn.audit import hf

    real = hf._to_encoder_layout

    def untransposed(state, cfg, where):
        out, lc, names, used = real(state, cfg, where)
        key = "h.0.self_attn.out_proj.weight"
        out[key] = np.asarray(out[key]).T.copy()
        return out, lc, names, used
    monkeypatch.setattr(hf, "_to_encoder_layout", untransposed)
    status, out, err = _cli(capsys, "audit", folders["gpt2"], "--budget", "0", "--quiet")
    assert status == 1 and out == ""
    assert err.startswith("symattn: ") and "forward check: h.0 differs" in err and len(err.splitlines()) == 1


def test_a_head_read_from_rows_of_w_o_is_caught_head_by_head(folders) -> None:
    """Issue 42 item 4: head h's output map taken from rows instead of columns of W_o. The layer output
    (from the stored W_o) still agrees; the per-head comparison with the file's own module does not."""
    import dataclasses

    from symattn.audit import load_model
    from symattn.audit.forward import forward_check

    m = load_model(folders["bert"])
    E, dh = 32, 8
    w_o = m.transformer_layers[0].attention.out_proj_weight
    m.layers[0] = [dataclasses.replace(h, v_out=w_o[k * dh:(k + 1) * dh, :].T.copy())
                   for k, h in enumerate(m.layers[0])]
    with pytest.raises(CheckFailed, match=r"encoder\.layer\.0\.attention head 1: the audit's reading differs"):
        forward_check(m)
    assert E == w_o.shape[0]


def test_a_state_dict_head_mismatch_is_caught_against_torch_mha() -> None:
    """The same per-head check on a PyTorch state dict: the reference is nn.MultiheadAttention."""
    import dataclasses

    from symattn.audit import from_torch
    from symattn.audit.forward import forward_check

    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True).double().eval()
    m = from_torch(torch.nn.TransformerEncoder(layer, 1, enable_nested_tensor=False), tokens=3)
    ok = forward_check(m)
    assert ok["passed"] and "nn.TransformerEncoderLayer's formula" in ok["reference"]
    m.layers[0] = [dataclasses.replace(h, v=-h.v) for h in m.layers[0]]
    with pytest.raises(CheckFailed, match="head 1"):
        forward_check(m)


def test_a_non_causal_reading_of_gpt2_fails_the_check(folders) -> None:
    from symattn.audit import load_model
    from symattn.audit.forward import forward_check

    with pytest.raises(CheckFailed, match="h.0 differs"):
        forward_check(load_model(folders["gpt2"]), causal=False)


def test_sharded_and_bin_folders(tmp_path, folders, capsys) -> None:
    """The sharded index (tensors in several files; a name in two shards is refused) and pytorch_model.bin."""
    sharded = _folder(tmp_path, "bert", max_shard_size="20KB")
    assert (sharded / "model.safetensors.index.json").is_file()
    status, out, err = _cli(capsys, "audit", sharded, "--budget", "0", "--quiet")
    assert status == 0, err
    assert DESCRIPTION["bert"] in out.splitlines()[0]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "config.json").write_text((folders["distilbert"] / "config.json").read_text())
    from symattn.audit.readers import read_safetensors

    state = {k: torch.as_tensor(np.array(v)) for k, v in
             read_safetensors(folders["distilbert"] / "model.safetensors").items()}
    torch.save(state, bin_dir / "pytorch_model.bin")
    status, out, err = _cli(capsys, "audit", bin_dir, "--budget", "0", "--quiet")
    assert status == 0, err
    assert DESCRIPTION["distilbert"] in out.splitlines()[0]
    index = json.loads((sharded / "model.safetensors.index.json").read_text())
    shards = sorted(set(index["weight_map"].values()))
    first = read_safetensors(sharded / shards[0])
    _write_safetensors(sharded / shards[1], {**read_safetensors(sharded / shards[1]),
                                             next(iter(first)): next(iter(first.values()))})
    status, _, err = _cli(capsys, "audit", sharded, "--budget", "0", "--quiet")
    assert status == 2 and "appears in two weight files" in err


def _write_safetensors(path: Path, arrays: dict, metadata: dict | None = None, raw_header: bytes | None = None):
    header, blobs, offset = {}, [], 0
    for name, a in arrays.items():
        a = np.ascontiguousarray(a, dtype=np.float32)
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + a.nbytes]}
        blobs.append(a.tobytes())
        offset += a.nbytes
    if metadata is not None:
        header["__metadata__"] = metadata
    text = raw_header if raw_header is not None else json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def test_gpt2_mask_buffers_are_read_and_unknown_layer_parts_refused(tmp_path, folders, capsys) -> None:
    """Older GPT-2 files store the causal mask as h.i.attn.bias (not a weight: read past); an entry inside
    a layer that is none of the parts symattn reads is refused by name, never dropped."""
    from symattn.audit.readers import read_safetensors

    state = read_safetensors(folders["gpt2"] / "model.safetensors")
    folder = tmp_path / "gpt2"
    folder.mkdir()
    (folder / "config.json").write_text((folders["gpt2"] / "config.json").read_text())
    mask = np.tril(np.ones((16, 16)))[None, None]
    _write_safetensors(folder / "model.safetensors", {**state, "h.0.attn.bias": mask, "h.1.attn.bias": mask})
    status, out, err = _cli(capsys, "audit", folder, "--budget", "0", "--quiet")
    assert status == 0 and DESCRIPTION["gpt2"] in out.splitlines()[0], err
    _write_safetensors(folder / "model.safetensors", {**state, "h.1.attn.rel.weight": np.ones((2, 2))})
    status, out, err = _cli(capsys, "audit", folder, "--budget", "0", "--quiet")
    assert status == 2 and "h.1.attn.rel.weight is inside a GPT-2 layer" in err and out == ""


@pytest.mark.parametrize("model_type, said", [
    ("t5", "model_type 't5' is not covered (covered: bert, roberta, distilbert, gpt2, vit, llama, mistral, qwen2"),
    ("gemma", "model_type 'gemma' is not covered"),
])
def test_other_families_are_refused_by_name(tmp_path, capsys, model_type, said) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"model_type": model_type, "hidden_size": 32}))
    status, out, err = _cli(capsys, "audit", tmp_path)
    assert status == 2 and out == "" and said in err and len(err.splitlines()) == 1


def test_folder_refusals(tmp_path, folders, capsys) -> None:
    status, _, err = _cli(capsys, "audit", tmp_path)
    assert status == 2 and "without config.json" in err
    bad = tmp_path / "dup"
    bad.mkdir()
    (bad / "config.json").write_text('{"model_type": "bert", "model_type": "gpt2"}')
    status, _, err = _cli(capsys, "audit", bad)
    assert status == 2 and "appears twice" in err
    status, _, err = _cli(capsys, "audit", folders["bert"], "--causal")
    assert status == 2 and "--causal contradicts" in err
    status, _, err = _cli(capsys, "audit", folders["gpt2"], "--post-norm")
    assert status == 2 and "contradicts" in err and "config.json" in err
    status, _, err = _cli(capsys, "audit", folders["bert"], "--heads", "2")
    assert status == 2 and "--heads 2 contradicts" in err
    status, _, err = _cli(capsys, "audit", folders["bert"], "--norm-kind", "rmsnorm")
    assert status == 2 and "--norm-kind rmsnorm contradicts" in err


def test_safetensors_header_fixes(tmp_path, capsys) -> None:
    """Issue 43: {"Q1": "F32"} and duplicate tensor names exit 2 with one line; issue 40: metadata past
    the 64th entry are read (nhead and norm_first at the end of 80 entries)."""
    p = tmp_path / "q.safetensors"
    _write_safetensors(p, {}, raw_header=b'{"Q1": "F32"}')
    status, _, err = _cli(capsys, "audit", p)
    assert status == 2 and "malformed entry" in err and len(err.splitlines()) == 1
    _write_safetensors(p, {}, raw_header=b'{"Q1": {"dtype": "F32", "shape": [1, 1], "data_offsets": [0, 4]}, '
                                         b'"Q1": {"dtype": "F32", "shape": [1, 1], "data_offsets": [0, 4]}}')
    status, _, err = _cli(capsys, "audit", p)
    assert status == 2 and "'Q1' appears twice" in err
    from symattn.audit import load_model

    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True, norm_first=True)
    sd = {k: v.detach().numpy() for k, v in
          torch.nn.TransformerEncoder(layer, 1, enable_nested_tensor=False).state_dict().items()}
    meta = {f"note{j}": "x" for j in range(78)} | {"nhead": "2", "norm_first": "true"}
    _write_safetensors(p, sd, meta)
    m = load_model(p)
    assert m.transformer_layers[0].attention.heads == 2 and m.transformer_layers[0].norm_first is True
    assert m.transformer_layers[0].placement_from == "the checkpoint's config" and "heads" not in m.assumptions


def test_assumptions_make_a_warn_and_flags_state_them(tmp_path, capsys) -> None:
    """Issue 40: a pre-norm GELU encoder saved as a bare state dict is no longer PASS as post-norm ReLU:
    without flags it is WARN with what was assumed on the first line; with --norm-first --activation
    gelu --heads 2 nothing is assumed."""
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True, norm_first=True,
                                             activation="gelu")
    enc = torch.nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)
    path = tmp_path / "enc.pt"
    torch.save(enc.state_dict(), path)
    status, out, err = _cli(capsys, "audit", path, "--budget", "0", "--quiet")
    first = out.splitlines()[0]
    assert status == 0 and first.startswith("WARN: ")
    assert "assumed: heads, norm placement, activation" in first and "post-norm (assumed)" in first
    assert "Assumed, not read from the file" in out
    status, out, err = _cli(capsys, "audit", path, "--budget", "0", "--quiet", "--heads", "2", "--norm-first",
                            "--activation", "gelu", "--json")
    r = json.loads(out)
    assert status == 0 and r["assumed"] == [] and "pre-norm, gelu" in r["summary"]
    assert r["blocks"][0]["placement_from"] == "the command line"


def test_a_norm_without_bias_is_an_assumed_layernorm(tmp_path, capsys) -> None:
    """An RMSNorm stores a gain alone, as a bias-free LayerNorm does: the kind is assumed (WARN) unless
    --norm-kind layernorm; an RMSNorm module is refused by name."""
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    sd = {k: v for k, v in torch.nn.TransformerEncoder(layer, 1, enable_nested_tensor=False).state_dict().items()
          if not k.endswith(("norm1.bias", "norm2.bias"))}
    path = tmp_path / "rms.pt"
    torch.save(sd, path)
    status, out, _ = _cli(capsys, "audit", path, "--budget", "0", "--quiet", "--heads", "2", "--post-norm",
                          "--activation", "relu")
    assert status == 0 and out.startswith("WARN: ") and "assumed: norm kind" in out.splitlines()[0]
    status, out, _ = _cli(capsys, "audit", path, "--budget", "0", "--quiet", "--heads", "2", "--post-norm",
                          "--activation", "relu", "--norm-kind", "layernorm", "--json")
    assert status == 0 and json.loads(out)["assumed"] == []
    from symattn.audit import from_torch

    if hasattr(torch.nn, "RMSNorm"):
        layer.norm1 = torch.nn.RMSNorm(8)
        with pytest.raises(SymattnError, match="RMSNorm norm: only LayerNorm"):
            from_torch(torch.nn.TransformerEncoder(layer, 1, enable_nested_tensor=False))


def test_plot_where_no_numerical_tier_ran(tmp_path, folders, capsys) -> None:
    """Issue 40: --plot with a budget that runs no numerical tier draws each head's exact facts and
    prints the report (no 'install PyTorch' with PyTorch installed)."""
    png = tmp_path / "p.png"
    status, out, err = _cli(capsys, "audit", folders["vit"], "--budget", "0", "--quiet", "--plot", png)
    assert status == 0 and png.stat().st_size > 0 and out.startswith("PASS: ") and "install" not in err
    status, _, err = _cli(capsys, "audit", folders["vit"], "--plot", tmp_path / "p.txt")
    assert status == 2


def test_the_shipped_example_folder_is_made_by_its_script(tmp_path) -> None:
    """examples/make_hf_example.py writes the GPT-2-style folder with random weights (no transformers);
    the shipped folder is what it writes."""
    import runpy

    script = ROOT / "examples" / "make_hf_example.py"
    ns = runpy.run_path(str(script))
    ns["write"](tmp_path / "gpt2_tiny")
    for name in ("config.json", "model.safetensors"):
        assert (tmp_path / "gpt2_tiny" / name).read_bytes() == (ROOT / "examples" / "gpt2_tiny" / name).read_bytes()
