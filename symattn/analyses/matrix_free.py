r"""Matrix-free Jacobian spectra of (multi-head) attention stacks at scale, with PyTorch.

Where exact or high-precision linear algebra on the full bank Jacobian is out
of reach (a 6-layer width-64 stack has 73 728 native parameters: its dense
Jacobian would take tens of GB), the leading singular values of
:math:`J = D_\theta \mathcal O_B` are computed from Jacobian-vector products
(``torch.func.jvp``) and vector-Jacobian products (``torch.func.vjp``) only,
by randomized subspace iteration (:func:`top_singular_values`, with numerical residual error
estimates), in float64 and float32 side by side. Memory is linear in the parameters.

Tokens are rows here (``X`` is ``(B, n, d)``), as in PyTorch; the layer is
``X -> sum_h A_h X V_h^T`` with ``A_h`` the row-normalised
``phi(X Q_h K_h^T X^T)``, which is the paper's ``V S_{Q K^T}`` transposed.
PyTorch is optional (``pip install 'symattn[torch]'``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import sympy

from symattn.model.normalizer import Normalizer
from symattn.core.optional import require_torch

__all__ = ["StackLayout", "stack_layout", "stack_forward", "top_singular_values", "ray_spectra",
           "gaussian_bank", "OVERSAMPLE"]

#: Extra random directions of the randomized range finder.
OVERSAMPLE = 8


@dataclass(frozen=True)
class StackLayout:
    """Where each head's ``Q, K, V`` sit in the flat parameter vector.

    ``heads[i][h] = (shape_q, shape_k, shape_v, offset)``; ``query_key[i]``
    lists the flat indices of layer ``i``'s query and key entries (all heads).
    """

    heads: tuple
    size: int
    query_key: tuple


def stack_layout(layers: Sequence[Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]]]) -> StackLayout:
    """The flat layout of per-layer, per-head ``(Q, K, V)`` arrays.

    Parameters
    ----------
    layers : sequence
        Per layer, per head ``(Q, K, V)`` arrays.

    Returns
    -------
    StackLayout

    Examples
    --------
    >>> lay = stack_layout([[(np.ones((2, 1)), np.ones((2, 1)), np.ones((2, 2)))]])
    >>> lay.size, list(lay.query_key[0])
    (8, [0, 1, 2, 3])
    """
    heads, offset, qk = [], 0, []
    for layer in layers:
        row, idx = [], []
        for q, k, v in layer:
            row.append((q.shape, k.shape, v.shape, offset))
            idx.extend(range(offset, offset + q.size + k.size))
            offset += q.size + k.size + v.size
        heads.append(tuple(row))
        qk.append(tuple(idx))
    return StackLayout(tuple(heads), offset, tuple(qk))


def _flat(layers, torch, dtype):
    parts = [np.asarray(m, dtype=np.float64).reshape(-1) for layer in layers for head in layer
             for m in head]
    return torch.tensor(np.concatenate(parts), dtype=dtype)


def _log_weights(phi: Normalizer, torch) -> Callable[[Any], Any]:
    """``s -> log phi(s)`` as a torch function (softmax of it is the stable normalisation)."""
    s = phi.s
    if sympy.simplify(phi.expr - sympy.exp(s)) == 0:
        return lambda x: x
    log_phi = sympy.expand_log(sympy.log(phi.expr), force=True)
    return sympy.lambdify(s, log_phi, "torch")


def stack_forward(layout: StackLayout, normalizers: Sequence[Normalizer], bank,
                  causal: bool = False) -> Callable:
    """``theta -> output`` (flat) of the stack on ``bank`` (``(B, n, d_0)`` tensor, tokens as rows).

    Softmax is ``torch.softmax`` of the scores; another normalizer is a
    softmax of ``log phi`` (valid where ``phi > 0``; elsewhere the output is
    not finite and the caller reports it). ``causal``: token ``a`` attends
    only to tokens ``b <= a`` (PyTorch's ``is_causal``; outside the paper's model).

    Parameters
    ----------
    layout : StackLayout
        The flat layout (:func:`stack_layout`).
    normalizers : sequence of Normalizer
        One per layer.
    bank : torch.Tensor
        ``(B, n, d_0)``.
    causal : bool
        Apply a causal mask.

    Returns
    -------
    callable

    Notes
    -----
    The forward pass is numerically stable: scores are formed as ``(X Q)(X K)^T``
    and normalised by log-sum-exp (``torch.softmax``) for softmax, and for any
    normalizer that is positive on the scores by a softmax of ``log phi``; no
    overflow warning is raised and an overflow shows as a non-finite value, which
    is reported, not propagated into a singular value.
    """
    torch = require_torch()
    logs = [_log_weights(phi, torch) for phi in normalizers]
    n = bank.shape[-2]
    future = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1) if causal else None

    def forward(theta):
        x = bank.to(theta.dtype)
        for layer, log_phi in zip(layout.heads, logs):
            out = 0
            for shape_q, shape_k, shape_v, off in layer:
                nq, nk, nv = math.prod(shape_q), math.prod(shape_k), math.prod(shape_v)
                Q = theta[off: off + nq].reshape(shape_q)
                K = theta[off + nq: off + nq + nk].reshape(shape_k)
                V = theta[off + nq + nk: off + nq + nk + nv].reshape(shape_v)
                scores = (x @ Q) @ (x @ K).transpose(-1, -2)
                logits = log_phi(scores)
                if future is not None:
                    logits = logits.masked_fill(future, float("-inf"))
                A = torch.softmax(logits, dim=-1)
                out = out + A @ x @ V.T
            x = out
        return x.reshape(-1)

    return forward


def gaussian_bank(width: int, tokens: int, size: int, seed: int):
    """``size`` inputs of ``tokens`` tokens with N(0, 1) entries (the scale of LayerNorm outputs),
    from ``torch.Generator().manual_seed(seed)``, float64, tokens as rows.

    Parameters
    ----------
    width : int
        The token width ``d``.
    tokens : int
        The tokens ``n``.
    size : int
        The inputs.
    seed : int
        The seed.

    Returns
    -------
    torch.Tensor
        ``(size, tokens, width)``.
    """
    torch = require_torch()
    g = torch.Generator().manual_seed(seed)
    return torch.randn(size, tokens, width, generator=g, dtype=torch.float64)


def top_singular_values(forward: Callable, theta, k: int, power: int = 2, seed: int = 0,
                        columns: Sequence[int] | None = None, oversample: int = OVERSAMPLE) -> dict:
    """The ``k`` largest singular values of ``J = d forward / d theta`` (restricted to
    ``columns`` of ``theta`` if given), matrix-free, with residual error estimates.

    Parameters
    ----------
    forward : callable
        ``theta -> output`` (flat, torch).
    theta : torch.Tensor
        The point.
    k : int
        The number of singular values.
    power : int
        Power iterations.
    seed : int
        The seed of the start vectors.
    columns : sequence of int, optional
        The entries of ``theta`` differentiated (default: all).
    oversample : int
        Extra start vectors.

    Returns
    -------
    dict
        ``values`` (descending), ``errors`` (absolute: some singular value
        lies within it), ``finite`` (False if the forward pass overflowed).

    Notes
    -----
    Randomized subspace iteration (Halko, Martinsson and Tropp 2011): ``k + 8`` random directions
    (``k + 3`` for one value), ``power`` rounds of ``J J^T`` with re-orthonormalisation, then the SVD of
    the small matrix ``Q^T J``. Memory is ``O((k + 8) P)`` for ``P`` parameters plus one forward pass per
    direction.

    Error estimate: for each computed triple ``(sigma_j, u_j, v_j)`` (unit
    vectors) the residuals ``r_1 = ||J v_j - sigma_j u_j||`` and
    ``r_2 = ||J^T u_j - sigma_j v_j||`` are computed with one more batch of
    products; some singular value of ``J`` lies within
    ``sqrt((r_1^2 + r_2^2) / 2)`` of ``sigma_j`` (it is the residual of an
    eigenpair of the symmetric ``[[0, J], [J^T, 0]]``). That bound is
    evaluated in the working precision, so it is a numerical estimate, reported
    as such. Every computation runs in float64 and in float32 side by side.

    Examples
    --------
    >>> import torch                                         # doctest: +SKIP
    >>> A = torch.diag(torch.tensor([3.0, 2.0, 1.0], dtype=torch.float64))  # doctest: +SKIP
    >>> r = top_singular_values(lambda x: A @ x, torch.zeros(3, dtype=torch.float64), 2)  # doctest: +SKIP
    >>> [round(v, 12) for v in r["values"]]                   # doctest: +SKIP
    [3.0, 2.0]
    """
    torch = require_torch()
    from torch.func import jvp, vjp, vmap

    dtype = theta.dtype
    if columns is not None:
        idx = torch.tensor(list(columns), dtype=torch.long)
        base = theta.detach().clone()

        def f(block):
            return forward(base.index_copy(0, idx, block))

        x0 = theta[idx].detach().clone()
    else:
        f, x0 = forward, theta.detach().clone()
    y0, pullback = vjp(f, x0)
    if not bool(torch.isfinite(y0).all()):
        return {"values": [], "errors": [], "finite": False}
    n, m = x0.numel(), y0.numel()
    width = min(k + oversample, n, m)
    g = torch.Generator().manual_seed(seed)
    push = vmap(lambda v: jvp(f, (x0,), (v,))[1])
    pull = vmap(lambda u: pullback(u)[0])

    def orth(rows):  # orthonormal rows spanning the rows of ``rows``
        return torch.linalg.qr(rows.T).Q.T

    Y = push(torch.randn(width, n, generator=g, dtype=torch.float64).to(dtype))
    for _ in range(power):
        Y = push(orth(pull(orth(Y))))
    Qr = orth(Y)                      # (width, m)
    B = pull(Qr)                      # rows J^T q: B = Qr J
    Ub, S, Vh = torch.linalg.svd(B, full_matrices=False)
    keep = min(k, S.numel())
    U = (Ub.T @ Qr)[:keep]            # left singular vectors (rows)
    V = Vh[:keep]
    r1 = torch.linalg.vector_norm(push(V) - S[:keep, None] * U, dim=1)
    r2 = torch.linalg.vector_norm(pull(U) - S[:keep, None] * V, dim=1)
    err = torch.sqrt((r1 ** 2 + r2 ** 2) / 2)
    ok = bool(torch.isfinite(S).all())
    return {"values": [float(s) for s in S[:keep]], "errors": [float(e) for e in err],
            "finite": ok}


def ray_spectra(layers, normalizers: Sequence[Normalizer], tokens: int, ts: Sequence[float],
                k: int = 8, bank_size: int = 8, seed: int = 0, power: int = 2,
                dtypes: Sequence[str] = ("float64", "float32"), causal: bool = False) -> dict:
    """Leading singular values along the ray ``t -> (t Q, t K, V)`` of a stack, matrix-free.

    For each ``t`` and each dtype: the ``k`` largest singular values of the
    whole bank Jacobian, and the largest singular value of each layer's
    query/key block, with their error estimates. The bank is
    :func:`gaussian_bank` (``bank_size`` inputs of ``tokens`` N(0, 1) tokens).

    Parameters
    ----------
    layers : per layer, per head ``(Q, K, V)`` float64 arrays (paper convention)
    normalizers : one per layer
    tokens : the token count ``n``
    ts : the points of the ray (1 is the model itself)
    k : the number of leading singular values
    bank_size : the inputs of the Gaussian bank
    seed : the seed of the bank and of the random start vectors
    power : the power iterations of the randomized range finder
    dtypes : the floating-point types measured (``"float64"``, ``"float32"``)
    causal : apply a causal mask (token ``a`` attends to ``b <= a``)

    Returns
    -------
    dict
        ``parameters``, ``rows``, ``bank``, ``k``, ``power``, and per dtype a
        list over ``t`` of ``{"t", "top", "top_errors", "layers": [{"value",
        "error"}], "finite"}``; ``float32_vs_float64`` the largest relative
        difference of the leading values.
    """
    torch = require_torch()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # small batched products: threads only contend (100x slower on 2 cores)
    try:
        return _ray_spectra(torch, layers, normalizers, tokens, ts, k, bank_size, seed, power, dtypes,
                            causal)
    finally:
        torch.set_num_threads(threads)


def _ray_spectra(torch, layers, normalizers, tokens, ts, k, bank_size, seed, power, dtypes,
                 causal) -> dict:
    layout = stack_layout(layers)
    bank = gaussian_bank(layers[0][0][0].shape[0], tokens, bank_size, seed)
    forward = stack_forward(layout, normalizers, bank, causal)
    qk = torch.tensor(sorted(i for idx in layout.query_key for i in idx), dtype=torch.long)
    out: dict = {"parameters": layout.size, "bank": f"{bank_size} inputs x {tokens} tokens, N(0, 1) "
                 f"entries (torch seed {seed})", "k": k, "power": power}
    for name in dtypes:
        dtype = getattr(torch, name)
        rows = []
        for t in ts:
            theta = _flat(layers, torch, torch.float64)
            theta[qk] *= t
            theta = theta.to(dtype)
            top = top_singular_values(forward, theta, k, power, seed)
            per_layer = []
            for idx in layout.query_key:
                r = top_singular_values(forward, theta, 1, power, seed + 1, columns=idx, oversample=3)
                per_layer.append({"value": r["values"][0] if r["values"] else None,
                                  "error": r["errors"][0] if r["errors"] else None})
            rows.append({"t": t, "top": top["values"], "top_errors": top["errors"],
                         "layers": per_layer, "finite": top["finite"]})
        out[name] = rows
        out["rows"] = int(forward(_flat(layers, torch, torch.float64)).numel())
    if "float64" in out and "float32" in out:
        diffs = [abs(a - b) / a for r64, r32 in zip(out["float64"], out["float32"])
                 for a, b in zip(r64["top"], r32["top"]) if a > 0]
        out["float32_vs_float64"] = max(diffs) if diffs else None
    return out

