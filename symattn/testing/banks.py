"""Banks built for a test: inputs on which a special model's exact series can run.

A test bank is special on purpose (arithmetically, never generically), so it lives
here, with the test kit, and every result that uses one says so.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from symattn.core.errors import SymattnError
from symattn.model.architecture import Architecture

__all__ = ["square_bank"]


def square_bank(arch: Architecture, size: int, seed: int = 0) -> np.ndarray:
    """A bank on which the exact series of a one-layer LayerNorm stack run: ``d = 2``, one
    layer with a LayerNorm and no biases or MLP, on the path with identity values.

    At ``t = 0`` every head averages the tokens, so the LayerNorm reads ``y_a = x_a`` (pre-norm),
    ``x_bar`` (post-norm) or ``x_a + x_bar`` (post-norm with skip). With ``d = 2`` the variance of
    ``y = (m + delta, m - delta)`` is ``delta^2``, and ``delta = (eps - k^2) / (2 k)`` makes
    ``delta^2 + eps = ((eps + k^2) / (2 k))^2`` a rational square. The targets ``y_a`` are drawn
    with a random rational ``k`` and mean ``m`` each (every real ``delta`` is a limit of such
    values: the bank is special arithmetically, not geometrically) and the tokens solved from
    them. Said in every result that uses it.

    Parameters
    ----------
    arch : Architecture
        One layer of width 2 with a mean-removing norm (LayerNorm), no biases and no MLP.
    size : int
        The number of inputs.
    seed : int
        Seeds the rational targets.

    Returns
    -------
    numpy.ndarray
        An object array of shape ``(size, 2, n)`` of :class:`~fractions.Fraction` tokens.

    Raises
    ------
    SymattnError
        If ``arch`` is not such a layer.

    Examples
    --------
    >>> arch = Architecture.uniform(1, 2, 1, 3, "exp", skip="value", norm="post", eps="1/10")
    >>> square_bank(arch, 1).shape
    (1, 2, 3)
    """
    import random

    if arch.depth != 1 or arch.widths != (2, 2) or not arch.layers[0].has_norm or arch.layers[0].bias \
            or not arch.layers[0].norm_part.removes_mean \
            or arch.layers[0].mlp:
        raise SymattnError("square_bank needs one layer of width 2 with a LayerNorm and no biases or MLP")
    layer, n = arch.layers[0], arch.tokens
    rng = random.Random(7919 * seed + 3)

    def target() -> np.ndarray:
        k = Fraction(rng.randint(1, 9), rng.randint(1, 9))
        m = Fraction(rng.randint(-6, 6), rng.randint(1, 4))
        delta = (layer.eps - k * k) / (2 * k)
        return np.array([m + delta, m - delta], dtype=object)

    out = np.empty((size, 2, n), dtype=object)
    for j in range(size):
        if layer.pre_norm:
            X = np.stack([target() for _ in range(n)], axis=1)
        elif not layer.residual:  # y = x_bar: the token mean on the target, zero-sum deviations
            dev = np.array([[Fraction(rng.randint(-6, 6), rng.randint(1, 4)) for _ in range(n)] for _ in range(2)],
                           dtype=object)
            dev = dev - (dev.sum(axis=1, keepdims=True) / n)
            X = target()[:, None] + dev
        else:  # y_a = x_a + x_bar, so y_bar = 2 x_bar
            Y = np.stack([target() for _ in range(n)], axis=1)
            X = Y - Y.sum(axis=1, keepdims=True) / (2 * n)
        out[j] = X
    return out
