"""Train ``examples/trained/``: a tiny attention stack trained with PyTorch on a toy task.

The model: two bias-free single-head ``nn.MultiheadAttention(4, 1)`` layers
(tokens as rows, ``batch_first=True``), the paper's native stack with
softmax. The task ("retrieve the maximum"): on ``n = 4`` tokens of width 4
with N(0, 1) entries, every output token should equal the input token whose
first coordinate is largest. Attention must become sharp to do this, so
training drives the query/key weights away from the collapse locus (where
attention is uniform and every output token is the mean). Adam (learning
rate 0.01, batches of 256 fresh inputs), 300 steps, about a second of CPU
time, from ``torch.manual_seed(2026)``. Checkpoints at steps 0, 30, 100 and
300 are saved as state dicts (``torch.save(model.state_dict(), ...)``) in
``examples/trained/step_NNNN.pt``; ``step_0300.pt`` is the trained model.

Then audit it, or all checkpoints with a plot along training::

    symattn audit examples/trained/step_0300.pt
    symattn audit examples/trained/step_*.pt --plot training.png

Requires PyTorch (``pip install 'symattn[torch]'``).
"""

from __future__ import annotations

import sys
from pathlib import Path

SEED, WIDTH, DEPTH, TOKENS = 2026, 4, 2, 4
STEPS, CHECKPOINTS, LEARNING_RATE, BATCH = 300, (0, 30, 100, 300), 0.01, 256
FOLDER = Path(__file__).resolve().parent / "trained"


def model(torch):
    """The untrained stack: ``DEPTH`` bias-free single-head attention layers."""
    return torch.nn.ModuleList([torch.nn.MultiheadAttention(WIDTH, 1, bias=False, batch_first=True)
                                for _ in range(DEPTH)])


def forward(layers, x):
    """Self-attention applied layer after layer (``x`` is ``(B, n, d)``)."""
    for layer in layers:
        x = layer(x, x, x, need_weights=False)[0]
    return x


def batch(torch, generator):
    """Inputs and targets of the task: every output token = the token with the largest x[0]."""
    x = torch.randn(BATCH, TOKENS, WIDTH, generator=generator)
    best = x[:, :, 0].argmax(dim=1)
    target = x[torch.arange(BATCH), best][:, None, :].expand(BATCH, TOKENS, WIDTH)
    return x, target


def train(steps: int = STEPS, checkpoints=CHECKPOINTS, folder: Path | None = FOLDER) -> dict:
    """Train; return ``{step: state_dict}`` at the checkpoints (also saved when ``folder``)."""
    import torch

    torch.manual_seed(SEED)
    generator = torch.Generator().manual_seed(SEED)
    layers = model(torch)
    optimizer = torch.optim.Adam(layers.parameters(), lr=LEARNING_RATE)
    saved, losses = {}, {}
    for step in range(steps + 1):
        x, target = batch(torch, generator)
        loss = torch.nn.functional.mse_loss(forward(layers, x), target)
        if step in checkpoints:
            saved[step] = {k: v.detach().clone() for k, v in layers.state_dict().items()}
            losses[step] = loss.item()
            if folder is not None:
                folder.mkdir(exist_ok=True)
                torch.save(saved[step], folder / f"step_{step:04d}.pt")
        if step < steps:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return {"states": saved, "losses": losses}


if __name__ == "__main__":
    result = train()
    for step, loss in result["losses"].items():
        print(f"step {step:4d}: mse {loss:.4f}")
    sys.exit(0)
