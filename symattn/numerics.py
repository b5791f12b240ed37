r"""Numerical sensitivity: the protocols of Appendix F and float64 vs high precision.

The Jacobian :math:`J_B(t) = D_\theta \mathcal O_B|_{\theta(t)}` of the bank
observation (eq. 43-44) is evaluated from the network graph by forward-mode
tangents (:class:`~symattn.algebras.Tangent`) in three number systems:

* :class:`BallAlgebra` -- python-flint ``arb`` balls at ``digits`` decimal
  digits in NumPy object arrays (a Jacobian about 18x faster than with
  ``mpmath`` numbers on a pure-Python mpmath backend);
  :class:`~symattn.algebras.MPMath` works too (``algebra=MPMath(digits)``);
* :class:`~symattn.algebras.Float64` -- the same graph in binary64;
* :func:`autodiff_jacobian` -- an independent PyTorch implementation (tokens
  as rows, as in App. F.2) differentiated by PyTorch autodiff in float64.
  PyTorch is optional (``pip install 'symattn[torch]'``) and imported lazily.

Positive singular values are never separated from zero by a tolerance: the
exact kernel (factor gauges, eq. 50, and interface directions, App. F.2) is
built in exact rational arithmetic from the model, and the singular values of
``J`` restricted to its exact orthogonal complement are the square roots of
the eigenvalues of ``S^{-1} G`` (``G = (JB)^T JB``, ``S = B^T B``, ``B`` an
integer basis of the complement). That linear algebra runs on ``arb``
matrices at twice the working precision, so the only error is the Jacobian's
own (absolute ``10^-digits``): a band ``sigma ~ t^beta`` is resolved when
``digits`` exceeds ``beta log10(1/t)`` (:func:`digits_needed`).

Protocols: :func:`protocol_f1` (scalar depth four, 110 digits),
:func:`protocol_f2` (d = 4, r = 2, D = 3, 48 inputs from a PyTorch generator
seeded at 21, 120 digits vs float64 autodiff), :func:`protocol_f3` (one noisy
observation, 400 draws, bisection at 100 digits), and :func:`sensitivity`
(where float64 loses each band of any architecture on the Theorem 4 path).

Notes
-----
Every number here is numerical (at N digits, or float64); exact orders and
ranks come from :mod:`symattn.spectrum`. Ball radii are carried through the
Jacobian, but the singular values come from approximate eigenvalues of the
midpoint matrices, so they are reported as numerical, not certified. Only
normalizers made of ``exp``, ``log``, ``sqrt``, hyperbolic and trigonometric
functions and rationals run in ball arithmetic.
"""

from __future__ import annotations

import contextlib
import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Sequence

import flint
import numpy as np
import sympy

from .algebras import BallAlgebra, Float64
from .algebras.balls import _bits, _precision, _to_arb
from .algebras.base import Algebra
from .errors import SymattnError
from .graph import evaluate, jacobian, native_network
from .model import (
    Architecture,
    NativeParams,
    exact_rationals,
    gauge_directions,
    identity_matrix,
    random_bank,
)
from .spectrum import (
    divisibility_orders,
    native_spectrum,
    path_parameters,
    visible_blocks,
)

__all__ = [
    "BallAlgebra", "observation_jacobian", "autodiff_jacobian", "exact_kernel_vectors",
    "kernel_complement", "positive_singular_values", "numerical_rank", "final_pair_slopes",
    "subspace_sine", "digits_needed", "F1", "F2", "F3", "protocol_f1", "protocol_f2",
    "f2_data", "protocol_f3", "sensitivity", "TORCH_HINT",
]

#: What to do when PyTorch is missing.
TORCH_HINT = "PyTorch is not installed: pip install 'symattn[torch]' (torch==2.13.0)"

#: Guard digits added to ``beta log10(1/t)`` by :func:`digits_needed`.
GUARD_DIGITS = 15


# --------------------------------------------------------------------- Jacobians
def _context(algebra: Algebra) -> contextlib.AbstractContextManager:
    return algebra.working() if isinstance(algebra, BallAlgebra) else contextlib.nullcontext()


def observation_jacobian(arch: Architecture, params: dict[str, Any], bank: Any, algebra: Algebra,
                         seeds: Sequence[str] | None = None,
                         observe: Callable[[Algebra, Any], Any] | None = None) -> np.ndarray:
    """Jacobian of the bank observation in the native entries, by forward mode.

    Parameters
    ----------
    arch : the architecture
    params : native weights by name (``"Q1"``, ``"K1"``, ``"V1"``, ...): exact
        rationals or binary64 values, embedded exactly where possible
    bank : inputs, shape ``(size, d_0, n)`` (tokens as columns)
    algebra : :class:`BallAlgebra`, :class:`~symattn.algebras.MPMath` or
        :class:`~symattn.algebras.Float64`
    seeds : the native blocks differentiated (default: all, in native order);
        columns follow the flat native order restricted to these blocks
    observe : map from the network output to the observation, given the
        tangent algebra and ``F`` (default: every output entry)

    Returns
    -------
    numpy.ndarray
        ``(rows, P)``: rows ordered (input, coordinate, token) as in
        :func:`symattn.spectrum.bank_jacobian`; entries of ``algebra``.

    Examples
    --------
    >>> arch = Architecture.uniform(1, 1, 1, 2, "exp")
    >>> p = {"Q1": [[Fraction(1, 2)]], "K1": [[Fraction(1, 2)]], "V1": [[1]]}
    >>> J = observation_jacobian(arch, p, [[[1, -1]]], Float64())
    >>> J.shape
    (2, 3)
    """
    names = [n for n, _ in arch.native_shapes()] if seeds is None else list(seeds)
    shapes = dict(arch.native_shapes())
    unknown = [n for n in names if n not in shapes]
    if unknown:
        raise SymattnError(f"unknown native blocks {unknown}; the architecture has {list(shapes)}")
    names = [n for n in shapes if n in names]  # columns in flat native order
    with _context(algebra):
        vals = {name: algebra.const(np.asarray(params[name], dtype=object).reshape(shape))
                for name, shape in arch.native_shapes()}
        vals["X"] = algebra.const(np.asarray(bank, dtype=object))
        return jacobian(native_network(arch), algebra, vals, names, observe=observe)


def _torch():
    try:
        import torch
    except ImportError:
        raise SymattnError(TORCH_HINT) from None
    return torch


def autodiff_jacobian(arch: Architecture, params: dict[str, Any], bank: Any) -> np.ndarray:
    """Float64 PyTorch autodiff Jacobian (vectorised forward mode) of the bank observation.

    An implementation independent of the graph, in the convention of App. F.2:
    tokens as rows, ``Z = X M X^T``, ``A`` its rowwise normalisation,
    ``X -> A X V^T``. Rows and columns are ordered as in
    :func:`observation_jacobian`. Needs PyTorch (``pip install 'symattn[torch]'``).

    Examples
    --------
    >>> arch = Architecture.uniform(1, 1, 1, 2, "exp")
    >>> p = {"Q1": [[0.5]], "K1": [[0.5]], "V1": [[1.0]]}
    >>> J = autodiff_jacobian(arch, p, [[[1.0, -1.0]]])     # doctest: +SKIP
    >>> J.shape                                             # doctest: +SKIP
    (2, 3)
    """
    torch = _torch()
    shapes = arch.native_shapes()
    flat = np.concatenate([np.asarray(params[n], dtype=np.float64).reshape(-1) for n, _ in shapes])
    X = torch.tensor(np.asarray(bank, dtype=np.float64)).transpose(-1, -2)  # tokens as rows
    phis = [sympy.lambdify(phi.s, phi.expr, "torch") for phi in arch.normalizers]

    def forward(theta):
        x, k = X, 0
        blocks = {}
        for name, shape in shapes:
            size = int(np.prod(shape))
            blocks[name] = theta[k: k + size].reshape(shape)
            k += size
        for i, phi in enumerate(phis, 1):
            m = blocks[f"Q{i}"] @ blocks[f"K{i}"].T
            w = phi(x @ m @ x.transpose(-1, -2))
            x = (w / w.sum(-1, keepdim=True)) @ x @ blocks[f"V{i}"].T
        return x.transpose(-1, -2).reshape(-1)

    J = torch.autograd.functional.jacobian(forward, torch.tensor(flat, dtype=torch.float64),
                                         vectorize=True, strategy="forward-mode")
    return J.numpy()


# ------------------------------------------------------------ exact kernel
def exact_kernel_vectors(arch: Architecture, theta: NativeParams,
                         seeds: Sequence[str] | None = None) -> list[np.ndarray]:
    """Factor gauges (eq. 50) and interface directions (App. F.2) at ``theta``,
    exact, restricted to the coordinates of the blocks in ``seeds`` (those
    directions that live inside them)."""
    cols = _seed_columns(arch, seeds)
    out = []
    for vec in gauge_directions(arch, theta):
        outside = np.setdiff1d(np.arange(arch.native_size), cols)
        if all(vec[j] == 0 for j in outside):
            out.append(vec[cols])
    return out


def _seed_columns(arch: Architecture, seeds: Sequence[str] | None) -> np.ndarray:
    off, shapes = arch.offsets(), dict(arch.native_shapes())
    names = [n for n, _ in arch.native_shapes()] if seeds is None else list(seeds)
    return np.concatenate([np.arange(off[n], off[n] + int(np.prod(shapes[n]))) for n in names])


def kernel_complement(vectors: Sequence[np.ndarray], size: int) -> np.ndarray:
    """An integer basis (columns) of the orthogonal complement of the span of
    exact rational ``vectors`` in Q^size (python-flint ``fmpz_mat.nullspace``).

    >>> B = kernel_complement([np.array([Fraction(1, 2), Fraction(-1, 2)])], 2)
    >>> B.shape, B[0, 0] == B[1, 0] != 0
    ((2, 1), True)
    """
    if not len(vectors):
        return np.array([[int(i == j) for j in range(size)] for i in range(size)], dtype=object)
    rows = []
    for v in vectors:
        q = [Fraction(x) for x in v]
        den = math.lcm(*[x.denominator for x in q])
        rows.append([int(x * den) for x in q])
    basis, nullity = flint.fmpz_mat(rows).nullspace()
    out = np.empty((size, nullity), dtype=object)
    for i in range(size):
        for j in range(nullity):
            out[i, j] = int(basis[i, j])
    return out


def _arb_mat(a: np.ndarray) -> flint.arb_mat:
    a = np.asarray(a, dtype=object)
    return flint.arb_mat(a.shape[0], a.shape[1], [flint.arb(v) if not isinstance(v, flint.arb)
                                                  else v.mid() for v in a.reshape(-1)])


def _real_eig(K: flint.arb_mat, right: bool = False):
    """Approximate eigenvalues (and right eigenvectors) of a real matrix with
    real spectrum, sorted descending; vectors rescaled to be real."""
    res = flint.acb_mat(K).eig(right=right, algorithm="approx")
    values, vecs = (res if right else (res, None))
    order = sorted(range(len(values)), key=lambda i: -float(values[i].real.mid()))
    lam = [values[i].real.mid() for i in order]
    if not right:
        return lam, None
    n = K.nrows()
    V = np.empty((n, len(order)), dtype=object)
    for c, i in enumerate(order):
        col = [vecs[r, i] for r in range(n)]
        pivot = max(col, key=lambda z: float(abs(z).mid()))
        for r in range(n):
            V[r, c] = (col[r] / pivot).real.mid()
    return lam, V


def positive_singular_values(J: np.ndarray, complement: np.ndarray, digits: int,
                             vectors: bool = False):
    """Positive singular values of ``J`` on the exact orthogonal complement of its kernel.

    ``sigma_j^2`` are the eigenvalues of ``S^{-1} G`` with ``G = (J B)^T J B``,
    ``S = B^T B`` (``B`` = ``complement``), computed on ``arb`` matrices at
    twice the working precision. With ``vectors=True`` also returns the left
    singular directions ``J B v_j`` (columns, not normalised) as an object array.

    Returns
    -------
    list of flint.arb (descending), and the left directions when asked

    Raises
    ------
    SymattnError
        If an eigenvalue is not positive: the digits do not resolve the
        weakest band, or ``J`` has rank below the complement's dimension.

    Examples
    --------
    >>> J = np.array([[2, 2], [0, 0]], dtype=object)
    >>> s = positive_singular_values(J, kernel_complement([np.array([1, -1])], 2), 20)
    >>> float(s[0])   # sqrt(8)
    2.8284271247461903
    """
    with _precision(2 * _bits(digits)):
        M = _arb_mat(J) * _arb_mat(complement)
        G = M.transpose() * M
        S = _arb_mat(complement).transpose() * _arb_mat(complement)
        lam, V = _real_eig(S.solve(G), right=vectors)
        floor = lam[0] * flint.arb(10) ** (-2 * digits) if lam else 0  # below: rounding noise
        if not all(x > floor for x in lam):
            raise SymattnError(f"a positive singular value is not resolved at {digits} digits "
                               "(or the bank does not separate): raise the digits")
        sig = [flint.arb(x).sqrt() for x in lam]
        if not vectors:
            return sig
        left = M * _arb_mat(V)
        return sig, np.array(left.tolist(), dtype=object)


def numerical_rank(singular_values: Sequence[float], cutoff: float = 1e-10) -> int:
    """``#{j : sigma_j > cutoff * sigma_1}`` (the diagnostic of App. F.2).

    >>> numerical_rank([1.0, 1e-3, 1e-12])
    2
    """
    s = [float(x) for x in singular_values]
    return sum(1 for x in s if x > cutoff * max(s)) if s else 0


def final_pair_slopes(t_pair: tuple[Any, Any], sigma_pair: tuple[Sequence, Sequence]) -> list[float]:
    """Final-pair estimator ``(log s_j(t1) - log s_j(t2)) / log(t1 / t2)`` (App. F.1).

    >>> [round(s, 12) for s in final_pair_slopes((0.04, 0.02), ([0.04**5], [0.02**5]))]
    [5.0]
    """
    t1, t2 = (_to_arb(Fraction(str(t))) for t in t_pair)
    out = []
    for a, b in zip(*sigma_pair):
        a, b = flint.arb(a), flint.arb(b)
        out.append(float(((a.log() - b.log()) / (t1.log() - t2.log())).mid()))
    return out


def subspace_sine(A: np.ndarray, B: np.ndarray, digits: int) -> float:
    """Sine of the largest principal angle between ``im A`` and ``im B`` (equal dimensions).

    >>> e = np.array([[1], [0]], dtype=object); f = np.array([[1], [1]], dtype=object)
    >>> round(subspace_sine(e, f, 20), 12)
    0.707106781187
    """
    with _precision(2 * _bits(digits)):
        a, b = _arb_mat(A), _arb_mat(B)
        X = a.transpose() * a
        Y = a.transpose() * b * (b.transpose() * b).solve(b.transpose() * a)
        lam, _ = _real_eig(X.solve(X - Y))
        return float(flint.arb(max(lam[0], 0)).sqrt().mid())


def digits_needed(beta: int, t: Any) -> int:
    """Working digits that resolve a band ``sigma ~ t^beta`` against the
    Jacobian's absolute error ``10^-digits``: ``ceil(beta log10(1/t)) + 15``.

    >>> digits_needed(53, 0.02)
    106
    """
    return int(math.ceil(beta * math.log10(1 / float(t)))) + GUARD_DIGITS


def _check_digits(digits: int, betas: Sequence[int], ts: Sequence[Any], what: str) -> None:
    need = digits_needed(max(betas), min(float(t) for t in ts))
    if digits < need:
        raise SymattnError(f"{what} at t = {min(float(t) for t in ts)} needs at least {need} digits "
                           f"(the weakest band ~ t^{max(betas)}); got {digits}")


def _f(x: Any) -> float:
    return float(flint.arb(x).mid()) if isinstance(x, flint.arb) else float(x)


# -------------------------------------------------------------------- F.1
@dataclass
class F1:
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
                "singular_values": [[_f(s) for s in row] for row in self.singular_values],
                "slopes": self.slopes, "predicted": self.predicted, "weakest": _f(self.weakest),
                "kernel": self.kernel, "seconds": self.seconds}


def protocol_f1(digits: int = 110, ts: Sequence[str] = ("0.08", "0.04", "0.02"),
                depth: int = 4, normalizer: str = "exp") -> F1:
    """App. F.1: two scalar tokens, ``depth`` softmax layers, values one,
    ``q_i = k_i = t``, inputs ``(1 + z_j, 1 - z_j)``, ``z_j = 0.45 + 0.2 j``
    (j = 0..3), observation the mean of the two output tokens.

    The ``4 x 2 depth`` native query/key Jacobian is evaluated at each ``t``
    (exact decimals) in ball arithmetic at ``digits`` digits; its positive
    singular values, ``sigma(D_c B sqrt(2) t I)`` by the identity of F.1, are
    those on the exact complement of the factor gauges ``(1, -1)/sqrt(2)``.

    Examples
    --------
    >>> r = protocol_f1(digits=40, ts=("0.2", "0.1"), depth=2)
    >>> [round(s) for s in r.slopes], r.predicted, r.kernel
    ([1, 5], [1, 5], 2)
    """
    start = time.perf_counter()
    arch = Architecture.uniform(depth, 1, 1, 2, normalizer)
    betas = divisibility_orders(arch)
    _check_digits(digits, betas, ts, "F.1")
    bank = np.empty((4, 1, 2), dtype=object)
    for j in range(4):
        z = Fraction("0.45") + Fraction("0.2") * j
        bank[j, 0] = [1 + z, 1 - z]
    seeds = [n for n, _ in arch.native_shapes() if n[0] in "QK"]
    algebra = BallAlgebra(digits)
    sigmas, kernel = [], 0
    for t in ts:
        tq = Fraction(str(t))
        theta = NativeParams(*(tuple(np.array([[v]], dtype=object) for _ in range(depth))
                               for v in (tq, tq, Fraction(1))))
        J = observation_jacobian(arch, theta.as_dict(), bank, algebra, seeds,
                                 observe=lambda T, F: T.mul(T.sum(F, axis=-1), T.const(Fraction(1, 2))))
        vecs = exact_kernel_vectors(arch, theta, seeds)
        kernel = len(vecs)
        sigmas.append(positive_singular_values(J, kernel_complement(vecs, J.shape[1]), digits))
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
    (binary64 arrays: exact dyadic rationals)."""
    torch = _torch()
    g = torch.Generator().manual_seed(seed)
    X = 0.6 * torch.randn(size, tokens, d, generator=g, dtype=torch.float64)
    U = [torch.randn(d, r, generator=g, dtype=torch.float64) / 2 for _ in range(depth)]
    W = [u + 0.3 * torch.randn(d, r, generator=g, dtype=torch.float64) / 2 for u in U]
    return (X.transpose(-1, -2).numpy().copy(), [u.numpy().copy() for u in U],
            [w.numpy().copy() for w in W])


@dataclass
class F2:
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
                "singular_values": [[_f(s) for s in row] for row in self.singular_values],
                "smallest_positive": self.smallest_positive,
                "float64_numerical_rank": self.float64_numerical_rank,
                "high_precision_numerical_rank": self.high_precision_numerical_rank,
                "ad_relative_error": self.ad_relative_error,
                "weak_space_sine": self.weak_space_sine,
                "precision_change": self.precision_change, "seconds": self.seconds}


F2_T = ("0.6", "0.4", "0.25", "0.16", "0.1", "0.06")


def _path_theta(U, W, t: Fraction) -> NativeParams:
    """The Theorem 4 path ``Q_i = t U_i, K_i = t W_i, V_i = I`` at ``t`` (binary64 or
    rational ``U, W`` imported exactly)."""
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
    :func:`symattn.spectrum.native_spectrum`), the 52 positive singular values,
    final-pair slopes per band (last two ``t``), the float64 and high-precision
    numerical ranks under ``1e-10 sigma_1``, the largest relative Frobenius
    error of autodiff, the sine of the largest angle between the weakest
    left singular space and the final-layer image with the value and earlier
    layer images projected out, and the largest relative change of a positive
    singular value between ``compare_digits`` and ``digits`` (None, or too few
    digits for the weakest band, to skip).

    ``data = (bank, U, W)`` replaces the PyTorch draws of :func:`f2_data`, and
    ``float64="graph"`` replaces autodiff by the graph in
    :class:`~symattn.algebras.Float64` (both for runs without PyTorch).
    """
    if float64 not in ("autodiff", "graph"):
        raise SymattnError(f"float64 must be 'autodiff' or 'graph', got {float64!r}")
    say = progress or (lambda msg: None)
    timing: dict[str, float] = {}
    start = time.perf_counter()
    arch = Architecture.uniform(3, 4, 2, 4, "exp")
    betas = divisibility_orders(arch)
    _check_digits(digits, betas, ts, "F.2")
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
        theta = _path_theta(U, W, tq)
        params = theta.as_dict()
        comp = kernel_complement(exact_kernel_vectors(arch, theta), arch.native_size)
        say(f"t = {t}: Jacobian at {digits} digits")
        t0 = time.perf_counter()
        J = observation_jacobian(arch, params, bank, BallAlgebra(digits))
        sig, left = positive_singular_values(J, comp, digits, vectors=True)
        t_hp += time.perf_counter() - t0
        sig_hp.append(sig)
        if compare_digits is not None:
            Jc = observation_jacobian(arch, params, bank, BallAlgebra(compare_digits))
            sig_cmp.append(positive_singular_values(Jc, comp, compare_digits))
        sines.append(subspace_sine(_project_out(J[:, weak], J[:, strong], digits),
                                   left[:, -m_weak:], digits))
        ranks_hp.append(numerical_rank([_f(s) for s in sig]))
        t0 = time.perf_counter()
        float_params = {k: np.vectorize(float)(v) for k, v in params.items()}
        Jad = (autodiff_jacobian(arch, float_params, bank) if float64 == "autodiff"
               else observation_jacobian(arch, float_params, bank, Float64()))
        t_ad += time.perf_counter() - t0
        ranks64.append(numerical_rank(np.linalg.svd(Jad, compute_uv=False)))
        Jmid = np.vectorize(_f)(J)
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
        change = max(_f(abs(a - b) / a) for row_a, row_b in zip(sig_hp, sig_cmp)
                     for a, b in zip(row_a, row_b))
    timing["total"] = round(time.perf_counter() - start, 3)
    return F2([str(t) for t in ts], digits, spec.rank, spec.kernel, bands, sig_hp,
              {"t": str(ts[-1]), "value": _f(sig_hp[-1][-1])}, ranks64, ranks_hp, ad_err, sines,
              change, timing)


def _project_out(A: np.ndarray, B: np.ndarray, digits: int) -> np.ndarray:
    """``(I - P_B) A`` with ``P_B`` the orthogonal projection onto ``im B``."""
    with _precision(2 * _bits(digits)):
        a, b = _arb_mat(A), _arb_mat(B)
        R = a - b * (b.transpose() * b).solve(b.transpose() * a)
        return np.array(R.tolist(), dtype=object)


# -------------------------------------------------------------------- F.3
#: The noise multipliers of F.3. Our copy of the paper omits the table of the
#: four alpha values; Section 6 states that the noise standard deviation runs
#: from 1.57e-10 to 1.57e-7, which with the computed b w_*^2 = 1.566e-8 are the
#: four decades below (``proofs/n3_noisy_recovery.py`` checks the endpoints).
F3_ALPHAS = ("0.01", "0.1", "1", "10")


@dataclass
class F3:
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
                "m": _f(self.m), "z": _f(self.z), "b": _f(self.b), "slope_at_zero": _f(self.slope),
                "rows": self.rows, "seconds": self.seconds}


def _f3_mean(arch: Architecture, algebra: BallAlgebra, c: np.ndarray, x: np.ndarray,
             q1: Fraction, depth: int | None = None):
    """Mean of the output tokens for final scores ``c`` (batched: ``Q_D = c``,
    ``K_D = 1``, so the final score is ``c``), or the prefix output when
    ``depth`` is 1."""
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
        tokens = _f3_mean(prefix, A, None, x, q1, depth=1)[0, 0]
        m, z = (tokens[0] + tokens[1]) / 2, (tokens[0] - tokens[1]) / 2
        b = m * z * z
        vals = {"X": A.const(x), "Q1": A.const([[q1]]), "K1": A.const([[q1]]), "V1": A.const([[1]]),
                "Q2": A.const([[0]]), "K2": A.const([[1]]), "V2": A.const([[1]])}
        J = jacobian(native_network(arch), A, vals, ["Q2"])   # rows: the two output tokens
        slope = (J[0, 0] + J[1, 0]) / 2
        f0, fmax, fstar = _f3_mean(arch, A, A.const([0, c_max, w_star ** 2]), x, q1)
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
                                  zip(_f3_mean(arch, A, mid, x, q1), Y)], dtype=bool)
                lo = np.where(below, mid, lo)
                hi = np.where(below, hi, mid)
            w_hat = [((a + c) / 2).sqrt() for a, c in zip(lo, hi)]
            err = [w - A.embed(w_star) for w in w_hat]
            mse = sum(e * e for e in err) / draws
            bias = sum(err) / draws
            rows.append({"alpha": str(alpha), "tau": _f(tau), "mse": _f(mse), "bias": _f(bias),
                         "relative_rmse": _f(mse.sqrt() / A.embed(w_star))})
    return F3(digits, m, z, b, slope, rows, round(time.perf_counter() - start, 3))


# ------------------------------------------------------------ sensitivity
def sensitivity(arch: Architecture, t_min: float = 0.01, t_ref: float = 0.25, bank: int | str = "auto",
                digits: int = 60, eps: float = float(np.finfo(np.float64).eps)) -> dict:
    """Predicted float64 band loss along the Theorem 4 path of ``arch``.

    The bands ``sigma ~ c_i t^beta_i`` come from the exact spectrum
    (:func:`symattn.spectrum.native_spectrum`, seeded path and bank); the
    leading coefficients ``c`` of each band are its singular values at
    ``t_ref``, measured at ``digits`` digits, divided by
    ``t_ref^beta_i``. A band is lost in float64 below the ``t`` where
    ``c_i t^beta_i = eps sigma_1``; resolving every band at ``t_min`` takes
    about ``beta_max log10(1/t_min) + 15`` digits (:func:`digits_needed`).

    Examples
    --------
    >>> r = sensitivity(Architecture.uniform(2, 2, 1, 2, "exp"), t_min=0.05)
    >>> [(b["order"], b["multiplicity"]) for b in r["bands"]]
    [(0, 4), (1, 3), (5, 3)]
    """
    if not 0 < t_min < 1 or not 0 < t_ref < 1:
        raise SymattnError("t_min and t_ref must lie in (0, 1)")
    spec = native_spectrum(arch, bank=bank)
    U, W, _ = path_parameters(arch, 0, "identity")
    X = random_bank(arch, spec.bank_size, 0)
    betas = [b.order for b in spec.bands]
    _check_digits(digits, betas, [t_ref], "the reference measurement")
    tq = Fraction(str(t_ref))
    theta = _path_theta(U, W, tq)
    comp = kernel_complement(exact_kernel_vectors(arch, theta), arch.native_size)
    J = observation_jacobian(arch, theta.as_dict(), X, BallAlgebra(digits))
    sig = positive_singular_values(J, comp, digits)
    s1 = _f(sig[0])
    bands, k, kept = [], 0, 0
    for band in sorted(spec.bands, key=lambda b: b.order):
        coeffs = [_f(s) / t_ref ** band.order for s in sig[k: k + band.multiplicity]]
        k += band.multiplicity
        kept += sum(1 for c in coeffs if c * t_min ** band.order > eps * s1)
        loss = [None if band.order == 0 else (eps * s1 / c) ** (1 / band.order) for c in coeffs]
        bands.append({"order": band.order, "multiplicity": band.multiplicity, "layer": band.layer,
                      "leading_coefficients": coeffs,
                      "float64_loss_starts_below_t": None if band.order == 0 else max(loss),
                      "float64_lost_below_t": None if band.order == 0 else min(loss)})
    return {"rank": spec.rank, "kernel": spec.kernel, "bank_size": spec.bank_size,
            "sigma_1": s1, "t_ref": t_ref, "t_min": t_min, "eps": eps, "bands": bands,
            "digits_needed_at_t_min": digits_needed(max(betas), t_min),
            "float64_rank_at_t_min": kept,
            "kind": f"bands and rank exact; coefficients numerical at {digits} digits"}
