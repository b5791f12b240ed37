"""Train ``examples/transformer/``: a small ``nn.TransformerEncoder`` (LayerNorm, MLP, biases) on a toy task.

The model: token embedding and learned positions (vocabulary ``VOCAB``,
``TOKENS`` positions, width ``D_MODEL``), a 2-layer post-norm
``nn.TransformerEncoder`` (``HEADS`` heads, feed-forward ``FF``, GELU,
biases, dropout 0) and a linear readout. The task: sort ``TOKENS`` digits
(every output position predicts the digit that belongs there in sorted
order). Adam (learning rate 0.01, batches of 256 fresh sequences), ``STEPS``
steps, seconds on one CPU core, from ``torch.manual_seed(2026)`` with one
thread (deterministic). Saved:

* ``examples/transformer/model.pt``: a training checkpoint ``{"model_state_dict": ...,
  "config": {"nhead", "norm_first", "activation", "seq_len", ...}, "step", "accuracy"}``;
* ``examples/transformer/inputs.npz``: the encoder's inputs (embedded digits plus
  positions) of 64 held-out sequences, the probe inputs of ``--inputs``.

Then audit it::

    symattn audit examples/transformer/model.pt --inputs examples/transformer/inputs.npz

Requires PyTorch (``pip install 'symattn[torch]'``).
"""

from __future__ import annotations

import sys
from pathlib import Path

SEED, VOCAB, TOKENS, D_MODEL, HEADS, FF, LAYERS = 2026, 8, 6, 8, 2, 16, 2
STEPS, LEARNING_RATE, BATCH = 600, 0.01, 256
FOLDER = Path(__file__).resolve().parent / "transformer"


def build(torch):
    """The untrained model: embedding, positions, encoder, readout."""
    nn = torch.nn

    class Sorter(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(VOCAB, D_MODEL)
            self.pos = nn.Parameter(0.1 * torch.randn(TOKENS, D_MODEL))
            layer = nn.TransformerEncoderLayer(D_MODEL, HEADS, FF, dropout=0.0, activation="gelu",
                                               batch_first=True, norm_first=False)
            self.encoder = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
            self.readout = nn.Linear(D_MODEL, VOCAB)

        def encoder_inputs(self, digits):
            return self.embed(digits) + self.pos

        def forward(self, digits):
            return self.readout(self.encoder(self.encoder_inputs(digits)))

    return Sorter()


def batch(torch, generator, size: int = BATCH):
    """Random digit sequences and their sorted versions."""
    digits = torch.randint(0, VOCAB, (size, TOKENS), generator=generator)
    return digits, digits.sort(dim=1).values


def train(steps: int = STEPS, folder: Path | None = FOLDER) -> dict:
    """Train; return ``{"model": module, "accuracy": float, "inputs": array}`` (saved when ``folder``)."""
    import numpy as np
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(SEED)
    generator = torch.Generator().manual_seed(SEED)
    model = build(torch)
    opt = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    for step in range(steps):
        x, y = batch(torch, generator)
        loss = torch.nn.functional.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    test = torch.Generator().manual_seed(SEED + 1)
    x, y = batch(torch, test, 2048)
    with torch.no_grad():
        accuracy = float((model(x).argmax(-1) == y).float().mean())
        probe = model.encoder_inputs(x[:64]).double().numpy()
    config = {"nhead": HEADS, "norm_first": False, "activation": "gelu", "seq_len": TOKENS,
              "d_model": D_MODEL, "dim_feedforward": FF, "num_layers": LAYERS, "vocab": VOCAB}
    if folder is not None:
        folder.mkdir(exist_ok=True)
        torch.save({"model_state_dict": model.state_dict(), "config": config, "step": steps,
                    "accuracy": accuracy}, folder / "model.pt")
        np.savez(folder / "inputs.npz", inputs=probe)
    return {"model": model, "accuracy": accuracy, "inputs": probe, "config": config}


def main() -> int:
    result = train()
    print(f"sorting {TOKENS} digits: accuracy {result['accuracy']:.3f} per position after {STEPS} steps; "
          f"saved {FOLDER}/model.pt and inputs.npz")
    return 0


if __name__ == "__main__":
    sys.exit(main())
