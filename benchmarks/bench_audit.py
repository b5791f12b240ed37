"""Benchmarks of ``symattn audit`` on realistic models (figures in docs/benchmarks.rst).

Run from the repository root: ``python benchmarks/bench_audit.py [--only NAME] [--rst]``.
Each case writes a model file (seeded), then runs ``symattn audit FILE --json
--quiet`` in a fresh process and reports its wall-clock and CPU seconds and
peak resident memory (``/usr/bin/time -f "%M %U %S"``) beside the audit's own estimate
(``work.peak_bytes``: :func:`symattn.audit.modules.memory_estimate` for a model with
block parts), with the tiers that
ran and what the budget stopped. Targets: issue 16, a 6-layer single-head
model of width 64 and a 2-layer 4-head attention stack of width 128 in under
60 s and 2 GB; issue 24, the 2-layer ``nn.TransformerEncoder`` (d_model 32, 4
heads, feed-forward 64) in under 60 s end to end and a 6-layer one of d_model
128 in under 5 minutes, each with its tier labelled; issue 40, a 6-layer Llama-style decoder of
d_model 128 (4 heads, 2 KV heads, SwiGLU 256; a Hugging Face folder written by
``examples/make_hf_example.py``) in under 5 minutes of CPU time, and the five 2-layer Hugging Face
folders of the issue (``--only HF``; BERT, DistilBERT, GPT-2, ViT, Llama, hidden 32, 4 heads) each
with a certified tier in under 60 s of CPU time (the tier each reaches is in its row).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

#: name -> (kind, d, depth, heads, init or feed-forward, extra arguments)
CASES = {
    "example (d = 4, r = 2, D = 3)": ("example", 0, 0, 0, None, []),
    "random N(0, 1), d = 8, D = 2": ("npz", 8, 2, 1, "normal", []),
    "single-head d = 64, D = 6 (Xavier-like)": ("npz", 64, 6, 1, "xavier", []),
    "4-head d = 128, D = 2 (nn.MultiheadAttention init)": ("torch", 128, 2, 4, "torch", ["--heads", "4"]),
    "trained transformer example (d_model 8, 2 heads, ff 16, D = 2)": ("trained", 0, 0, 0, None, []),
    "nn.TransformerEncoder d_model 32, 4 heads, ff 64, D = 2": ("encoder", 32, 2, 4, 64, []),
    "nn.TransformerEncoder d_model 128, 4 heads, ff 512, D = 6": ("encoder", 128, 6, 4, 512,
                                                                  ["--budget", "270"]),
    "Llama examples/llama_tiny (d_model 16, 4 heads, 2 KV heads, SwiGLU 32, D = 2)": ("llama_tiny", 0, 0, 0, None, []),
    "Llama d_model 128, 4 heads, 2 KV heads, SwiGLU 256, D = 6": ("llama", 128, 6, 4, 256, ["--budget", "280"]),
    # issue 40 item 6: the five 2-layer Hugging Face folders (hidden 32, 4 heads), default budget 60 CPU seconds
    "HF BERT hidden 32, 4 heads, ff 64, D = 2": ("hf", 0, 0, 0, "bert", []),
    "HF DistilBERT hidden 32, 4 heads, ff 64, D = 2": ("hf", 0, 0, 0, "distilbert", []),
    "HF GPT-2 n_embd 32, 4 heads, ff 128, D = 2": ("hf", 0, 0, 0, "gpt2", []),
    "HF ViT hidden 32, 4 heads, ff 64, D = 2": ("hf", 0, 0, 0, "vit", []),
    "HF Llama hidden 32, 4 heads, 2 KV heads, SwiGLU 64, D = 2": ("hf", 0, 0, 0, "llama", []),
}

#: The configs of the ``hf`` cases (issue 40's five 2-layer models; tests/test_audit_hf.py builds the same).
HF_CONFIGS = {
    "bert": dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, vocab_size=50,
                 max_position_embeddings=16),
    "distilbert": dict(dim=32, n_layers=2, n_heads=4, hidden_dim=64, vocab_size=50, max_position_embeddings=16),
    "gpt2": dict(n_embd=32, n_layer=2, n_head=4, vocab_size=50, n_positions=16, bos_token_id=0, eos_token_id=0),
    "vit": dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, image_size=8,
                patch_size=4),
    "llama": dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                  intermediate_size=64, vocab_size=50, max_position_embeddings=16),
}


def _write(kind: str, d: int, depth: int, heads: int, init, folder: Path) -> Path:
    rng = np.random.default_rng(2026)
    if kind == "npz":
        scale = 1.0 if init == "normal" else d ** -0.75
        arrays = {}
        for i in range(1, depth + 1):
            arrays[f"Q{i}"] = rng.normal(size=(d, d)) * scale
            arrays[f"K{i}"] = rng.normal(size=(d, d)) * scale
            arrays[f"V{i}"] = (rng.normal(size=(d, d)) if init == "normal"
                               else np.eye(d) + 0.3 * rng.normal(size=(d, d)) / np.sqrt(d))
        path = folder / f"m{d}x{depth}.npz"
        np.savez(path, **arrays)
        return path
    if kind == "llama":  # a Hugging Face folder written by the example script (random weights, seed 2041)
        out = folder / f"llama{d}x{depth}"
        subprocess.run([sys.executable, str(ROOT / "examples" / "make_hf_example.py"), "--family", "llama",
                        "--layers", str(depth), "--width", str(d), "--heads", str(heads), "--kv-heads",
                        str(heads // 2), "--ff", str(init), "--out", str(out)], check=True, capture_output=True)
        return out
    import torch

    torch.manual_seed(2026)
    if kind == "hf":  # a randomly initialised model saved with save_pretrained (no hub access)
        import transformers

        transformers.utils.logging.set_verbosity_error()
        transformers.utils.logging.disable_progress_bar()
        model = transformers.AutoModel.from_config(transformers.AutoConfig.for_model(init, **HF_CONFIGS[init]))
        with torch.no_grad():  # biases and gains away from their initial 0 and 1
            for p in model.parameters():
                p.add_(0.05 * torch.randn_like(p))
        model.save_pretrained(folder / init)
        return folder / init
    if kind == "torch":
        mods = torch.nn.ModuleList([torch.nn.MultiheadAttention(d, heads, bias=False)
                                    for _ in range(depth)])
        path = folder / f"mh{d}x{depth}.pt"
        torch.save(mods.state_dict(), path)
        return path
    layer = torch.nn.TransformerEncoderLayer(d, heads, init, dropout=0.0, batch_first=True)
    enc = torch.nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
    with torch.no_grad():  # distinct layers (the clones start equal) and nonzero biases
        for p in enc.parameters():
            p.add_(0.02 * torch.randn_like(p))
    path = folder / f"enc{d}x{depth}.pt"
    torch.save({"model_state_dict": enc.state_dict(),
                "config": {"nhead": heads, "norm_first": False, "activation": "relu", "seq_len": 8}}, path)
    return path


def run_case(name: str, spec: tuple, folder: Path) -> dict:
    """One fresh ``symattn audit`` process: seconds, CPU seconds, peak GiB, the tiers."""
    kind, d, depth, heads, init, extra = spec
    if kind == "example":
        path = ROOT / "examples" / "example_model.npz"
    elif kind == "llama_tiny":
        path = ROOT / "examples" / "llama_tiny"
    elif kind == "trained":
        path = ROOT / "examples" / "transformer" / "model.pt"
        extra = ["--inputs", str(ROOT / "examples" / "transformer" / "inputs.npz")]
    else:
        path = _write(kind, d, depth, heads, init, folder)
    t0 = time.perf_counter()
    run = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", sys.executable, "-m", "symattn", "audit",
                          str(path), "--json", "--quiet", *extra], capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if run.returncode != 0:
        return {"case": name, "error": f"exit {run.returncode}: {run.stderr.strip()[-300:]}"}
    peak_kb, user, system = run.stderr.strip().splitlines()[-1].split()
    report = json.loads(run.stdout)
    tiers = report["summary"].split("tiers: ")[-1].rsplit(";", 1)[0]
    stopped = (report.get("modules") or {}).get("not_run", [])
    return {"case": name, "seconds": round(seconds, 1), "cpu_seconds": round(float(user) + float(system), 1),
            "peak_gib": round(int(peak_kb) / 2 ** 20, 2),
            "estimate_gib": round(report["work"]["peak_bytes"] / 2 ** 30, 2), "parameters": report["summary"].split(
                " parameters")[0].rsplit(", ", 1)[-1], "tiers": tiers, "not_run": stopped,
            "analysis_seconds": report["work"]["seconds"], "budget": report["work"]["budget_seconds"],
            "dimension": _dimension(report), "certified": _certified(report)}


def _certified(report: dict) -> str | None:
    """The certified tier's bounds in words (None when it did not run)."""
    c = report.get("certified")
    if not c:
        return None
    lb, up = c["rank_lower_bound"], c["symmetries"]["upper_bound"]
    where = "" if lb["columns"] == c["parameters"] else f" on {lb['columns']} of {c['parameters']} columns"
    return (f"certified rank >= {lb['value']}{where} ({lb['inputs']} inputs, {lb['strong']} + {lb['weak']} "
            f"directions, {c['seconds']} s)" + (f", <= {up}" if up is not None else ", no certified upper bound")
            + (": determined" if c["determined"] else ""))


def _dimension(report: dict) -> str | None:
    dim = (report.get("modules") or {}).get("dimension")
    if not dim:
        return None
    if dim.get("numerical_rank") is not None:
        return (f"rank {dim['numerical_rank']} = P - {dim['parameters'] - dim['numerical_rank']}; declared "
                f"symmetries {dim['declared']}, unexplained {dim['unexplained_kernel']}")
    return f"{dim.get('lower_bound')} <= rank <= {dim['upper_bound']} (declared symmetries {dim['declared']})"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=None, help="run the cases whose name contains this text")
    parser.add_argument("--rst", action="store_true", help="print the docs table (list-table rows)")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, spec in CASES.items():
            if args.only and args.only not in name:
                continue
            row = run_case(name, spec, Path(tmp))
            rows.append(row)
            if "error" in row:
                print(f"{name}: {row['error']}")
                continue
            print(f"{name}: {row['seconds']} s wall ({row['cpu_seconds']} s CPU, analysis "
                  f"{row['analysis_seconds']} s of budget {row['budget']:g}), peak {row['peak_gib']} GiB "
                  f"(estimated {row['estimate_gib']} GiB), "
                  f"{row['parameters']} parameters; tiers: {row['tiers']}"
                  + (f"; dimension: {row['dimension']}" if row["dimension"] else "")
                  + (f"; {row['certified']}" if row["certified"] else "")
                  + (f"; not run: {'; '.join(row['not_run'])}" if row["not_run"] else ""), flush=True)
    if args.rst:
        for row in rows:
            if "error" not in row:
                print(f"   * - {row['case']}\n     - {row['seconds']} s ({row['cpu_seconds']} s CPU)\n"
                      f"     - {row['peak_gib']} GiB ({row['estimate_gib']})\n     - {row['tiers']}"
                      + (f"; {row['certified']}" if row["certified"] else "")
                      + (f"; {row['dimension']}" if row["dimension"] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
