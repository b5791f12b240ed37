"""Write ``examples/example_model.npz``: the small model audited in :mod:`symattn.audit`.

A 3-layer softmax attention stack with d = 4, r = 2, drawn from NumPy's
``default_rng(2026)`` in this order: for each layer, ``Q_i`` and ``K_i``
(4 x 2, entries ``0.25 * N(0, 1)``: PyTorch's Xavier initialisation of a
4-wide ``MultiheadAttention`` has standard deviation ``sqrt(6/16)/sqrt(3) = 0.35``
per entry, and its score scale ``1/sqrt(4)`` split over the two factors
gives ``0.35 / sqrt(2) = 0.25``) and ``V_i = I + 0.3 * N(0, 1)`` (4 x 4, near the identity as
in a residual-like stack). Only NumPy is needed, so the file is reproducible
without PyTorch; ``python examples/make_example_model.py`` rewrites it
byte for byte (``--check`` only compares).

Then audit it::

    symattn audit examples/example_model.npz --plot audit.png
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np

SEED, DEPTH, WIDTH, RANK = 2026, 3, 4, 2
QK_SCALE, V_SCALE = 0.25, 0.3
PATH = Path(__file__).resolve().parent / "example_model.npz"


def draw() -> dict[str, np.ndarray]:
    """The weights ``Q1, K1, V1, ..., Q3, K3, V3`` (float64, tokens as columns)."""
    rng = np.random.default_rng(SEED)
    arrays = {}
    for i in range(1, DEPTH + 1):
        arrays[f"Q{i}"] = QK_SCALE * rng.standard_normal((WIDTH, RANK))
        arrays[f"K{i}"] = QK_SCALE * rng.standard_normal((WIDTH, RANK))
        arrays[f"V{i}"] = np.eye(WIDTH) + V_SCALE * rng.standard_normal((WIDTH, WIDTH))
    return arrays


def encode(arrays: dict[str, np.ndarray]) -> bytes:
    """The .npz bytes (uncompressed, fixed key order)."""
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def main(argv: list[str]) -> int:
    arrays = draw()
    if "--check" in argv:
        with np.load(PATH, allow_pickle=False) as data:
            same = sorted(data.files) == sorted(arrays) and all(
                np.array_equal(data[k], v) for k, v in arrays.items())
        print("example_model.npz matches the seed" if same else "example_model.npz DIFFERS")
        return 0 if same else 1
    PATH.write_bytes(encode(arrays))
    print(f"wrote {PATH}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
