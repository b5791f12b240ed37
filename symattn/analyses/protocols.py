r"""The numerical protocols of Appendix F: F.1, F.2 and F.3.

* :func:`protocol_f1` -- scalar depth four, 110 digits: final-pair slopes of
  the query/key singular values against the predicted orders;
* :func:`protocol_f2` -- d = 4, r = 2, D = 3, 48 inputs from a PyTorch
  generator seeded at 21 (:func:`f2_data`), 120 digits vs float64 autodiff;
* :func:`protocol_f3` -- one noisy observation, 400 draws, bisection at 100
  digits.

The Jacobians and singular values they use come from :mod:`symattn.analyses.numerics`;
every number is numerical at the stated digits, while ranks, kernels and band
orders come exact from :mod:`symattn.analyses.spectrum`. :func:`path_theta` (the
Theorem 4 path) and :func:`f3_mean` (the F.3 mean map) are public for the
proofs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Sequence

import numpy as np

from symattn.render.rich_result import RichResult
from symattn.core.algebras import BallAlgebra, Float64
from symattn.core.errors import SymattnError
from symattn.core.optional import require_torch
from symattn.model.network import evaluate, jacobian, native_network
from symattn.core.linalg import identity_matrix
from symattn.model.architecture import Architecture
from symattn.model.parameters import NativeParams, exact_rationals
from symattn.analyses.numerics import (
    autodiff_jacobian,
    check_digits,
    digits_needed,
    final_pair_slopes,
    midpoint,
    numerical_rank,
    observation_jacobian,
    positive_singular_values,
    project_out,
    subspace_sine,
)
from symattn.theorems.formulas import divisibility_orders
from symattn.model.symmetries import GaugeKernel, visible_blocks
from symattn.analyses.spectrum import native_spectrum

__all__ = ["F1", "F2", "F3", "F2_T", "F3_ALPHAS", "protocol_f1", "protocol_f2", "protocol_f3",
           "f2_data", "path_theta", "f3_mean"]


# -------------------------------------------------------------------- F.1
@dataclass(repr=False)
class F1(RichResult):
    """Result of :func:`protocol_f1`; ``singular_values[k]`` belongs to ``t[k]``."""

    t: list[str]
    digits: int
    singular_values: list[list[Any]]
    slopes: list[float]
    predicted: list[int]
    weakest: Any
    kernel: int
    seconds: float

    def to_json(self) -> dict:
        return {"t": self.t, "digits": self.digits, "kind": f"numerical at {self.digits} digits",
                "singular_values": [[midpoint(s) for s in row] for row in self.singular_values],
                "slopes": self.slopes, "predicted": self.predicted, "weakest": midpoint(self.weakest),
                "kernel": self.kernel, "seconds": self.seconds}

    def _headline(self) -> str:
        slopes = ", ".join(f"{s:.3f}" for s in self.slopes)
        return (f"slopes {slopes} vs predicted orders {self.predicted}, kernel {self.kernel}, t = "
                f"{', '.join(self.t)}; numerical at {self.digits} digits")

    def _summary(self) -> tuple[str, list[tuple[str, str]]]:
        return "App. F.1: scalar depth-four spectrum", [
            ("$t$", ", ".join(self.t)), ("final-pair slopes", ", ".join(f"{s:.4f}" for s in self.slopes)),
            ("predicted orders", ", ".join(map(str, self.predicted)) + " (Theorem 4)"),
            ("kernel", str(self.kernel)), ("kind", f"numerical at {self.digits} digits")]


def protocol_f1(digits: int = 110, ts: Sequence[str] = ("0.08", "0.04", "0.02"),
                depth: int = 4, normalizer: str = "exp") -> F1:
    """App. F.1: two scalar tokens, ``depth`` softmax layers, values one,
    ``q_i = k_i = t``, inputs ``(1 + z_j, 1 - z_j)``, ``z_j = 0.45 + 0.2 j``
    (j = 0..3), observation the mean of the two output tokens.

    The ``4 x 2 depth`` native query/key Jacobian is evaluated at each ``t``
    (exact decimals) in ball arithmetic at ``digits`` digits; its positive
    singular values, ``sigma(D_c B sqrt(2) t I)`` by the identity of F.1, are
    those on the exact complement of the factor gauges ``(1, -1)/sqrt(2)``.

    Parameters
    ----------
    digits : int
        The ball precision.
    ts : sequence of str
        The path parameters (exact decimals).
    depth : int
        The number of layers.
    normalizer : str
        The normalizer.

    Returns
    -------
    F1

    Examples
    --------
    >>> r = protocol_f1(digits=40, ts=("0.2", "0.1"), depth=2)
    >>> [round(s) for s in r.slopes], r.predicted, r.kernel
    ([1, 5], [1, 5], 2)
    """
    start = time.perf_counter()
    arch = Architecture.uniform(depth, 1, 1, 2, normalizer)
    betas = divisibility_orders(arch)
    check_digits(digits, betas, ts, "F.1")
    bank = np.empty((4, 1, 2), dtype=object)
    for j in range(4):
        z = Fraction("0.45") + Fraction("0.2") * j
        bank[j, 0] = [1 + z, 1 - z]
    seeds = [b.name for b in arch.blocks if b.is_factor]
    algebra = BallAlgebra(digits)
    sigmas, kernel = [], 0
    for t in ts:
        tq = Fraction(str(t))
        theta = NativeParams(*(tuple(np.array([[v]], dtype=object) for _ in range(depth))
                               for v in (tq, tq, Fraction(1))))
        J = observation_jacobian(arch, theta.as_dict(), bank, algebra, seeds,
                                 observe=lambda T, F: T.mul(T.sum(F, axis=-1), T.const(Fraction(1, 2))))
        gauges = GaugeKernel(arch, theta)
        kernel = len(gauges.vectors(seeds))
        sigmas.append(positive_singular_values(J, gauges.complement(seeds), digits))
    slopes = final_pair_slopes((ts[-2], ts[-1]), (sigmas[-2], sigmas[-1]))
    return F1([str(t) for t in ts], digits, sigmas, slopes, betas, sigmas[-1][-1], kernel,
              round(time.perf_counter() - start, 3))


# -------------------------------------------------------------------- F.2
def f2_data(seed: int = 21, size: int = 48, d: int = 4, r: int = 2, depth: int = 3,
            tokens: int = 4) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray]]:
    """The inputs and factors of App. F.2, drawn in float64 from
    ``torch.Generator().manual_seed(seed)`` in the stated order: ``X = 0.6
    randn(size, tokens, d)`` (tokens as rows), then ``U_i = randn(d, r) / 2``
    for every layer, then ``W_i = U_i + 0.3 randn(d, r) / 2``. Returns the
    bank with tokens as columns, ``(size, d, tokens)``, and ``U``, ``W``
    (binary64 arrays: exact dyadic rationals).

    Parameters
    ----------
    seed : int
        The torch seed.
    size : int
        The inputs.
    d, r, depth, tokens : int
        The width, rank, depth and tokens.

    Returns
    -------
    tuple
        ``(X, U, W)``.
    """
    torch = require_torch()
    g = torch.Generator().manual_seed(seed)
    X = 0.6 * torch.randn(size, tokens, d, generator=g, dtype=torch.float64)
    U = [torch.randn(d, r, generator=g, dtype=torch.float64) / 2 for _ in range(depth)]
    W = [u + 0.3 * torch.randn(d, r, generator=g, dtype=torch.float64) / 2 for u in U]
    return (X.transpose(-1, -2).numpy().copy(), [u.numpy().copy() for u in U],
            [w.numpy().copy() for w in W])


@dataclass(repr=False)
class F2(RichResult):
    """Result of :func:`protocol_f2` (see :meth:`to_json`)."""

    t: list[str]
    digits: int
    rank: int
    kernel: int
    bands: list[dict]
    singular_values: list[list[Any]]
    smallest_positive: dict
    float64_numerical_rank: list[int]
    high_precision_numerical_rank: list[int]
    ad_relative_error: float
    weak_space_sine: list[float]
    precision_change: float | None
    seconds: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"t": self.t, "digits": self.digits, "kind": f"numerical at {self.digits} digits; "
                "rank, kernel and band orders exact; float64 figures from autodiff",
                "rank": self.rank, "kernel": self.kernel, "bands": self.bands,
                "singular_values": [[midpoint(s) for s in row] for row in self.singular_values],
                "smallest_positive": self.smallest_positive,
                "float64_numerical_rank": self.float64_numerical_rank,
                "high_precision_numerical_rank": self.high_precision_numerical_rank,
                "ad_relative_error": self.ad_relative_error,
                "weak_space_sine": self.weak_space_sine,
                "precision_change": self.precision_change, "seconds": self.seconds}

    def _headline(self) -> str:
        return (f"rank {self.rank}, kernel {self.kernel}, float64 numerical rank {self.float64_numerical_rank} vs "
                f"high precision {self.high_precision_numerical_rank}; numerical at {self.digits} digits")

    def _summary(self) -> tuple[str, list[tuple[str, str]]]:
        return "App. F.2: full native matrix spectrum", [
            ("rank, kernel", f"{self.rank}, {self.kernel} (exact)"), ("$t$", ", ".join(self.t)),
            ("float64 numerical rank", ", ".join(map(str, self.float64_numerical_rank))),
            ("high-precision numerical rank", ", ".join(map(str, self.high_precision_numerical_rank))),
            ("autodiff relative error", f"{self.ad_relative_error:.2e}"),
            ("kind", f"numerical at {self.digits} digits; rank, kernel and band orders exact")]


F2_T = ("0.6", "0.4", "0.25", "0.16", "0.1", "0.06")


def path_theta(U, W, t: Fraction) -> NativeParams:
    """The Theorem 4 path ``Q_i = t U_i, K_i = t W_i, V_i = I`` at ``t`` (binary64 or
    rational ``U, W`` imported exactly).

    Parameters
    ----------
    U, W : sequence of numpy.ndarray
        The path's factors.
    t : Fraction
        The path parameter.

    Returns
    -------
    NativeParams

    Examples
    --------
    >>> theta = path_theta([np.array([[0.5]])], [np.array([[2.0]])], Fraction(1, 3))
    >>> [str(m[0, 0]) for m in (theta.Q[0], theta.K[0], theta.V[0])]
    ['1/6', '2/3', '1']
    """
    eye = identity_matrix(U[0].shape[0])
    return NativeParams(tuple(exact_rationals(u) * t for u in U), tuple(exact_rationals(w) * t for w in W),
                        tuple(eye for _ in U))


def protocol_f2(digits: int = 120, ts: Sequence[str] = F2_T, seed: int = 21, size: int = 48,
                compare_digits: int | None = 90, progress: Callable[[str], None] | None = None,
                data: tuple | None = None, float64: str = "autodiff") -> F2:
    """App. F.2: full native matrix spectrum, softmax, d = n = 4, r = 2, D = 3.

    For each ``t`` the 768 x 96 Jacobian is evaluated in ball arithmetic at
    ``digits`` (binary64 data imported exactly, ``t`` an exact decimal) and by
    float64 PyTorch autodiff; reported: the exact rank, kernel and bands of the
    same stack on the same data (binary64 values are rationals; certified by
    :func:`symattn.analyses.spectrum.native_spectrum`), the 52 positive singular values,
    final-pair slopes per band (last two ``t``), the float64 and high-precision
    numerical ranks under ``1e-10 sigma_1``, the largest relative Frobenius
    error of autodiff, the sine of the largest angle between the weakest
    left singular space and the final-layer image with the value and earlier
    layer images projected out, and the largest relative change of a positive
    singular value between ``compare_digits`` and ``digits`` (None, or too few
    digits for the weakest band, to skip).

    ``data = (bank, U, W)`` replaces the PyTorch draws of :func:`f2_data`, and
    ``float64="graph"`` replaces autodiff by the graph in
    :class:`~symattn.core.algebras.Float64` (both for runs without PyTorch).

    Parameters
    ----------
    digits : int
        The ball precision.
    ts : sequence of str
        The path parameters.
    seed : int
        The seed of the data (:func:`f2_data`).
    size : int
        The inputs.
    compare_digits : int or None
        The digits of the float64 comparison (None: none).
    progress : callable, optional
        Progress lines.
    data : tuple, optional
        The data instead of drawing it.
    float64 : str
        ``"autodiff"`` or ``"graph"``.

    Returns
    -------
    F2

    Raises
    ------
    SymattnError
        An unknown ``float64``, or an exact spectrum that is not certified.
    """
    if float64 not in ("autodiff", "graph"):
        raise SymattnError(f"float64 must be 'autodiff' or 'graph', got {float64!r}")
    say = progress or (lambda msg: None)
    timing: dict[str, float] = {}
    start = time.perf_counter()
    arch = Architecture.uniform(3, 4, 2, 4, "exp")
    betas = divisibility_orders(arch)
    check_digits(digits, betas, ts, "F.2")
    if compare_digits is not None and compare_digits < digits_needed(max(betas), min(map(float, ts))):
        compare_digits = None  # too few digits to be a meaningful comparison: skip it
    bank, U, W = f2_data(seed, size) if data is None else data
    say("exact spectrum of the same stack on the same data (modular, certified)")
    exact_U, exact_W = [exact_rationals(u) for u in U], [exact_rationals(w) for w in W]
    spec = native_spectrum(arch, bank=exact_rationals(bank),
                           path=(exact_U, exact_W, [identity_matrix(arch.d)] * arch.depth))
    if not spec.certified:
        raise SymattnError("the exact spectrum of the F.2 data is not certified: "
                           + "; ".join(spec.notes))
    timing["exact_spectrum"] = round(time.perf_counter() - start, 3)
    sig_hp, sig_cmp, ranks64, ranks_hp, ad_err, sines = [], [], [], [], 0.0, []
    # the factor complement of App. F.2 (V_3; lower query rows, all key rows),
    # the same columns as the exact spectrum's visible blocks
    blocks = [cols for _, _, cols in visible_blocks(arch, exact_U)]
    strong, weak = [c for cols in blocks[:-1] for c in cols], blocks[-1]
    m_weak = spec.bands[-1].multiplicity
    t_hp = t_ad = 0.0
    for t in ts:
        tq = Fraction(str(t))
        theta = path_theta(U, W, tq)
        params = theta.as_dict()
        comp = GaugeKernel(arch, theta).complement()
        say(f"t = {t}: Jacobian at {digits} digits")
        t0 = time.perf_counter()
        J = observation_jacobian(arch, params, bank, BallAlgebra(digits))
        sig, left = positive_singular_values(J, comp, digits, vectors=True)
        t_hp += time.perf_counter() - t0
        sig_hp.append(sig)
        if compare_digits is not None:
            Jc = observation_jacobian(arch, params, bank, BallAlgebra(compare_digits))
            sig_cmp.append(positive_singular_values(Jc, comp, compare_digits))
        sines.append(subspace_sine(project_out(J[:, weak], J[:, strong], digits),
                                   left[:, -m_weak:], digits))
        ranks_hp.append(numerical_rank([midpoint(s) for s in sig]))
        t0 = time.perf_counter()
        float_params = {k: np.vectorize(float)(v) for k, v in params.items()}
        Jad = (autodiff_jacobian(arch, float_params, bank) if float64 == "autodiff"
               else observation_jacobian(arch, float_params, bank, Float64()))
        t_ad += time.perf_counter() - t0
        ranks64.append(numerical_rank(np.linalg.svd(Jad, compute_uv=False)))
        Jmid = np.vectorize(midpoint)(J)
        ad_err = max(ad_err, float(np.linalg.norm(Jad - Jmid) / np.linalg.norm(Jmid)))
    timing["high_precision"] = round(t_hp, 3)
    timing["autodiff"] = round(t_ad, 3)
    slopes = final_pair_slopes((ts[-2], ts[-1]), (sig_hp[-2], sig_hp[-1]))
    bands, k = [], 0
    for b in sorted(spec.bands, key=lambda band: band.order):
        part = slopes[k: k + b.multiplicity]
        bands.append({"order": b.order, "multiplicity": b.multiplicity, "layer": b.layer,
                      "slope_min": min(part), "slope_max": max(part)})
        k += b.multiplicity
    change = None
    if compare_digits is not None:
        change = max(midpoint(abs(a - b) / a) for row_a, row_b in zip(sig_hp, sig_cmp)
                     for a, b in zip(row_a, row_b))
    timing["total"] = round(time.perf_counter() - start, 3)
    return F2([str(t) for t in ts], digits, spec.rank, spec.kernel, bands, sig_hp,
              {"t": str(ts[-1]), "value": midpoint(sig_hp[-1][-1])}, ranks64, ranks_hp, ad_err, sines,
              change, timing)


# -------------------------------------------------------------------- F.3
#: The noise multipliers of F.3. Our copy of the paper omits the table of the
#: four alpha values; Section 6 states that the noise standard deviation runs
#: from 1.57e-10 to 1.57e-7, which with the computed b w_*^2 = 1.566e-8 are the
#: four decades below (``proofs/n3_noisy_recovery.py`` checks the endpoints).
F3_ALPHAS = ("0.01", "0.1", "1", "10")


@dataclass(repr=False)
class F3(RichResult):
    """Result of :func:`protocol_f3` (see :meth:`to_json`)."""

    digits: int
    m: Any
    z: Any
    b: Any
    slope: Any
    rows: list[dict]
    seconds: float

    def to_json(self) -> dict:
        return {"digits": self.digits, "kind": f"numerical at {self.digits} digits",
                "m": midpoint(self.m), "z": midpoint(self.z), "b": midpoint(self.b), "slope_at_zero": midpoint(self.slope),
                "rows": self.rows, "seconds": self.seconds}

    def _headline(self) -> str:
        return (f"slope at zero {float(midpoint(self.slope)):.6g}, {len(self.rows)} noise levels; "
                f"numerical at {self.digits} digits")

    def _summary(self) -> tuple[str, list[tuple[str, str]]]:
        return "App. F.3: noisy one-parameter recovery", [
            ("slope at zero", f"{float(midpoint(self.slope)):.8g}"), ("noise levels", str(len(self.rows))),
            ("kind", f"numerical at {self.digits} digits")]


def f3_mean(arch: Architecture, algebra: BallAlgebra, c: np.ndarray, x: np.ndarray,
             q1: Fraction, depth: int | None = None):
    """Mean of the output tokens of the F.3 stack for final scores ``c`` (batched:
    ``Q_D = c``, ``K_D = 1``, so the final score is ``c``), or the prefix output
    when ``depth`` is 1 (the map :func:`protocol_f3` inverts).

    Parameters
    ----------
    arch : Architecture
        The architecture.
    algebra : symattn.core.algebras.balls.BallAlgebra
        The ball algebra.
    c : numpy.ndarray
        The final scores (batched).
    x : numpy.ndarray
        The input.
    q1 : Fraction
        The first layer's factor.
    depth : int, optional
        1 for the prefix output.

    Returns
    -------
    numpy.ndarray
    """
    one = np.array([[1]], dtype=object)
    vals = {"X": algebra.const(x), "Q1": algebra.const([[q1]]), "K1": algebra.const([[q1]]),
            "V1": algebra.const(one)}
    if depth != 1:
        vals.update({"Q2": np.asarray(c, dtype=object).reshape(-1, 1, 1), "K2": algebra.const(one),
                     "V2": algebra.const(one)})
    out = evaluate(native_network(arch), algebra, vals)["F"]
    return out if depth == 1 else np.vectorize(lambda v: v / 2, otypes=[object])(
        algebra.sum(out, -1)).reshape(-1)


def protocol_f3(digits: int = 100, alphas: Sequence[str] = F3_ALPHAS, draws: int = 400,
                seed: int = 20261001, steps: int = 75) -> F3:
    """App. F.3: recover ``w`` (``q_2 = k_2 = w``, ``w_* = 0.1``) from one noisy
    output mean of the depth-two scalar softmax stack on the input (1.5, 0.5)
    with known ``q_1 = k_1 = 0.1`` and unit values.

    The noise is ``tau Z`` with ``tau = alpha b w_*^2`` and ``Z`` the
    ``draws`` draws of ``numpy.random.default_rng(seed).standard_normal``
    (the paper's "NumPy seed 20261001"), imported exactly. The mean map
    ``f(c)`` is the network itself (evaluated in ball arithmetic at ``digits``),
    inverted on ``[0, 0.09]`` after clipping by ``steps`` bisection steps, all
    draws at once. ``b = m z^2`` from the prefix tokens ``m +- z``; ``slope``
    is ``f'(0)`` from forward-mode tangents (they agree, F.3).

    Parameters
    ----------
    digits : int
        The ball precision.
    alphas : sequence of str
        The noise levels.
    draws : int
        The noise draws.
    seed : int
        The NumPy seed.
    steps : int
        The bisection steps.

    Returns
    -------
    F3

    Examples
    --------
    >>> r = protocol_f3(digits=30, alphas=("1",), draws=20, steps=40)
    >>> len(r.rows), r.rows[0]["alpha"]
    (1, '1')
    """
    start = time.perf_counter()
    arch = Architecture.uniform(2, 1, 1, 2, "exp")
    prefix = Architecture.uniform(1, 1, 1, 2, "exp")
    A = BallAlgebra(digits)
    x = np.array([[[Fraction(3, 2), Fraction(1, 2)]]], dtype=object)
    q1, w_star, c_max = Fraction(1, 10), Fraction(1, 10), Fraction(9, 100)
    Z = np.random.default_rng(seed).standard_normal(draws)
    rows = []
    with A.working():
        tokens = f3_mean(prefix, A, None, x, q1, depth=1)[0, 0]
        m, z = (tokens[0] + tokens[1]) / 2, (tokens[0] - tokens[1]) / 2
        b = m * z * z
        vals = {"X": A.const(x), "Q1": A.const([[q1]]), "K1": A.const([[q1]]), "V1": A.const([[1]]),
                "Q2": A.const([[0]]), "K2": A.const([[1]]), "V2": A.const([[1]])}
        J = jacobian(native_network(arch), A, vals, ["Q2"])   # rows: the two output tokens
        slope = (J[0, 0] + J[1, 0]) / 2
        f0, fmax, fstar = f3_mean(arch, A, A.const([0, c_max, w_star ** 2]), x, q1)
        for alpha in alphas:
            tau = A.embed(Fraction(str(alpha))) * b * A.embed(w_star ** 2)
            Y = np.array([fstar + tau * A.embed(float(zj)) for zj in Z], dtype=object)
            Y = np.array([fmax if y.mid() > fmax.mid() else f0 if y.mid() < f0.mid() else y
                          for y in Y], dtype=object)
            lo = np.array([A.embed(0)] * draws, dtype=object)
            hi = np.array([A.embed(c_max)] * draws, dtype=object)
            for _ in range(steps):
                mid = np.array([(a + c) / 2 for a, c in zip(lo, hi)], dtype=object)
                below = np.array([u.mid() < y.mid() for u, y in
                                  zip(f3_mean(arch, A, mid, x, q1), Y)], dtype=bool)
                lo = np.where(below, mid, lo)
                hi = np.where(below, hi, mid)
            w_hat = [((a + c) / 2).sqrt() for a, c in zip(lo, hi)]
            err = [w - A.embed(w_star) for w in w_hat]
            mse = sum(e * e for e in err) / draws
            bias = sum(err) / draws
            rows.append({"alpha": str(alpha), "tau": midpoint(tau), "mse": midpoint(mse), "bias": midpoint(bias),
                         "relative_rmse": midpoint(mse.sqrt() / A.embed(w_star))})
    return F3(digits, m, z, b, slope, rows, round(time.perf_counter() - start, 3))
