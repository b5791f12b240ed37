r"""Jacobians of the bank observation and their singular values, float64 vs high precision.

The Jacobian :math:`J_B(t) = D_\theta \mathcal O_B|_{\theta(t)}` of the bank observation
(eq. 43-44) is evaluated from the network graph by forward-mode tangents
(:func:`observation_jacobian`) in python-flint balls (:class:`BallAlgebra`;
:class:`~symattn.core.algebras.MPMath` works too) or binary64
(:class:`~symattn.core.algebras.Float64`), and by an independent PyTorch implementation
differentiated by autodiff (:func:`autodiff_jacobian`; PyTorch is optional). Positive singular
values are never separated from zero by a tolerance: they are taken on the exact orthogonal
complement of the declared kernel (:func:`positive_singular_values`, Notes), so a band
``sigma ~ t^beta`` is resolved when ``digits`` exceeds ``beta log10(1/t)`` (:func:`digits_needed`).
The protocols of Appendix F that use these tools live in :mod:`symattn.analyses.protocols`
(F.1-F.3) and :mod:`symattn.analyses.sensitivity` (where float64 loses each band).

Every number here is numerical (at N digits, or float64), never certified: ball radii are carried
through the Jacobian, but the singular values come from approximate eigenvalues of the midpoint
matrices. Exact orders and ranks come from :mod:`symattn.analyses.spectrum`. Only normalizers
made of ``exp``, ``log``, ``sqrt``, hyperbolic and trigonometric functions and rationals run in
ball arithmetic.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Callable, Sequence

import flint
import numpy as np
import sympy

from symattn.core.algebras import BallAlgebra, Float64  # noqa: F401  Float64: doctests
from symattn.core.algebras.balls import digits_to_bits, to_arb
from symattn.core.algebras.base import Algebra
from symattn.core.errors import SymattnError, Unresolved  # noqa: F401  Unresolved: importable from here
from symattn.model.network import jacobian, native_network
from symattn.core.ball_field import Balls
from symattn.core.linalg import Matrix
from symattn.core.optional import require_torch
from symattn.model.architecture import Architecture

__all__ = [
    "BallAlgebra", "observation_jacobian", "autodiff_jacobian",
    "positive_singular_values", "numerical_rank",
    "final_pair_slopes", "subspace_sine", "project_out", "digits_needed", "check_digits",
    "midpoint", "GUARD_DIGITS", "Unresolved",
]

#: Guard digits added to ``beta log10(1/t)`` by :func:`digits_needed`.
GUARD_DIGITS = 15


# --------------------------------------------------------------------- Jacobians
def observation_jacobian(arch: Architecture, params: dict[str, Any], bank: Any, algebra: Algebra,
                         seeds: Sequence[str] | None = None,
                         observe: Callable[[Algebra, Any], Any] | None = None,
                         graph: Any = None, directions: Any = None) -> np.ndarray:
    """Jacobian of the bank observation in the native entries, by forward mode.

    Parameters
    ----------
    arch : the architecture
    params : native weights by name (``"Q1"``, ``"K1"``, ``"V1"``, ...): exact
        rationals or binary64 values, embedded exactly where possible
    bank : inputs, shape ``(size, d_0, n)`` (tokens as columns)
    algebra : :class:`BallAlgebra`, :class:`~symattn.core.algebras.MPMath` or
        :class:`~symattn.core.algebras.Float64`
    seeds : the native blocks differentiated (default: all, in native order);
        columns follow the flat native order restricted to these blocks
    observe : map from the network output to the observation, given the
        tangent algebra and ``F`` (default: every output entry)
    graph : the network (default :func:`~symattn.model.network.native_network` of ``arch``)
    directions : optional numbers ``(k, n)``, ``n`` the size of the ``seeds`` blocks: the
        columns are then the derivatives along these ``k`` directions (embedded by ``algebra``;
        see :func:`~symattn.model.interpreter.jacobian`)

    Returns
    -------
    numpy.ndarray
        ``(rows, P)``: rows ordered (input, coordinate, token) as in
        :func:`symattn.analyses.spectrum.bank_jacobian`; entries of ``algebra``.

    Raises
    ------
    SymattnError
        ``seeds`` names a block the architecture does not have.

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
    with algebra.working():
        vals = {name: algebra.const(np.asarray(params[name], dtype=object).reshape(shape))
                for name, shape in arch.native_shapes()}
        vals["X"] = algebra.const(np.asarray(bank, dtype=object))
        graph = native_network(arch) if graph is None else graph
        return jacobian(graph, algebra, vals, names, observe=observe,
                        directions=None if directions is None else algebra.const(directions))


def autodiff_jacobian(arch: Architecture, params: dict[str, Any], bank: Any) -> np.ndarray:
    """Float64 PyTorch autodiff Jacobian (vectorised forward mode) of the bank observation.

    An implementation independent of the graph, in the convention of App. F.2:
    tokens as rows, ``Z = X M X^T``, ``A`` its rowwise normalisation,
    ``X -> A X V^T``. Rows and columns are ordered as in
    :func:`observation_jacobian`. Needs PyTorch (``pip install 'symattn[torch]'``).

    Parameters
    ----------
    arch : Architecture
        The architecture.
    params : dict
        Native weights by name (floats).
    bank : array_like
        Inputs ``(size, d_0, n)``.

    Returns
    -------
    numpy.ndarray
        ``(rows, P)`` in float64.

    Examples
    --------
    >>> arch = Architecture.uniform(1, 1, 1, 2, "exp")
    >>> p = {"Q1": [[0.5]], "K1": [[0.5]], "V1": [[1.0]]}
    >>> J = autodiff_jacobian(arch, p, [[[1.0, -1.0]]])     # doctest: +SKIP
    >>> J.shape                                             # doctest: +SKIP
    (2, 3)
    """
    torch = require_torch()
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


# ------------------------------------------------ singular values (arb balls)
def positive_singular_values(J: np.ndarray, complement: np.ndarray, digits: int,
                             vectors: bool = False):
    """Positive singular values of ``J`` on the exact orthogonal complement of its kernel.

    ``sigma_j^2`` are the eigenvalues of ``S^{-1} G`` with ``G = (J B)^T J B``,
    ``S = B^T B`` (``B`` = ``complement``), computed on ``arb`` matrices at
    twice the working precision. With ``vectors=True`` also returns the left
    singular directions ``J B v_j`` (columns, not normalised) as an object array.

    Parameters
    ----------
    J : numpy.ndarray
        The Jacobian (``arb`` entries).
    complement : numpy.ndarray
        An exact basis ``B`` of the complement of the kernel (columns).
    digits : int
        The working precision.
    vectors : bool
        Also return the left singular directions.

    Returns
    -------
    list of flint.arb (descending), and the left directions when asked

    Raises
    ------
    Unresolved
        If an eigenvalue is not positive: the digits do not resolve the
        weakest band, or ``J`` has rank below the complement's dimension.

    Notes
    -----
    The exact kernel (factor gauges, eq. 50, and interface directions, App. F.2) is built in exact
    rational arithmetic from the model (:class:`symattn.model.symmetries.GaugeKernel`); the linear
    algebra runs on ``arb`` matrices (:class:`symattn.core.linalg.Matrix` over
    :class:`symattn.core.ball_field.Balls`) at twice the working precision, so the only error is the
    Jacobian's own (absolute ``10^-digits``).

    Examples
    --------
    >>> J = np.array([[2, 2], [0, 0]], dtype=object)
    >>> from symattn.core.linalg import kernel_complement
    >>> s = positive_singular_values(J, kernel_complement([np.array([1, -1])], 2), 20)
    >>> float(s[0])   # sqrt(8)
    2.8284271247461903
    """
    balls = Balls(2 * digits_to_bits(digits))
    with balls.working():
        B = Matrix(complement, balls)
        M = Matrix(J, balls) @ B
        lam, V = (B.T @ B).solve(M.T @ M).real_eigenvalues(vectors)
        floor = lam[0] * flint.arb(10) ** (-2 * digits) if lam else 0  # below: rounding noise
        if not all(x > floor for x in lam):
            raise Unresolved(f"a positive singular value is not resolved at {digits} digits "
                               "(or the bank does not separate): raise the digits")
        sig = [flint.arb(x).sqrt() for x in lam]
        if not vectors:
            return sig
        return sig, (M @ Matrix(V, balls)).entries


def numerical_rank(singular_values: Sequence[float], cutoff: float = 1e-10) -> int:
    """``#{j : sigma_j > cutoff * sigma_1}`` (the diagnostic of App. F.2).

    Parameters
    ----------
    singular_values : sequence of float
        Descending singular values.
    cutoff : float
        The relative cutoff.

    Returns
    -------
    int

    Examples
    --------
    >>> numerical_rank([1.0, 1e-3, 1e-12])
    2
    """
    s = [float(x) for x in singular_values]
    return sum(1 for x in s if x > cutoff * max(s)) if s else 0


def final_pair_slopes(t_pair: tuple[Any, Any], sigma_pair: tuple[Sequence, Sequence]) -> list[float]:
    """Final-pair estimator ``(log s_j(t1) - log s_j(t2)) / log(t1 / t2)`` (App. F.1).

    Parameters
    ----------
    t_pair : tuple
        ``(t1, t2)``.
    sigma_pair : tuple of sequence
        The singular values at ``t1`` and at ``t2``.

    Returns
    -------
    list of float

    Examples
    --------
    >>> [round(s, 12) for s in final_pair_slopes((0.04, 0.02), ([0.04**5], [0.02**5]))]
    [5.0]
    """
    t1, t2 = (to_arb(Fraction(str(t))) for t in t_pair)
    out = []
    for a, b in zip(*sigma_pair):
        a, b = flint.arb(a), flint.arb(b)
        out.append(float(((a.log() - b.log()) / (t1.log() - t2.log())).mid()))
    return out


def subspace_sine(A: np.ndarray, B: np.ndarray, digits: int) -> float:
    """Sine of the largest principal angle between ``im A`` and ``im B`` (equal dimensions).

    Parameters
    ----------
    A, B : numpy.ndarray
        Bases of the two subspaces (columns).
    digits : int
        The working precision.

    Returns
    -------
    float

    Examples
    --------
    >>> e = np.array([[1], [0]], dtype=object); f = np.array([[1], [1]], dtype=object)
    >>> round(subspace_sine(e, f, 20), 12)
    0.707106781187
    """
    balls = Balls(2 * digits_to_bits(digits))
    with balls.working():
        a, b = Matrix(A, balls), Matrix(B, balls)
        X = a.T @ a
        Y = a.T @ b @ (b.T @ b).solve(b.T @ a)
        lam, _ = X.solve(X - Y).real_eigenvalues()
        return float(flint.arb(max(lam[0], 0)).sqrt().mid())


def digits_needed(beta: int, t: Any) -> int:
    """Working digits that resolve a band ``sigma ~ t^beta`` against the
    Jacobian's absolute error ``10^-digits``: ``ceil(beta log10(1/t)) + 15``.

    Parameters
    ----------
    beta : int
        The band's order.
    t : number
        The path parameter.

    Returns
    -------
    int

    Examples
    --------
    >>> digits_needed(53, 0.02)
    106
    """
    return int(math.ceil(beta * math.log10(1 / float(t)))) + GUARD_DIGITS


def check_digits(digits: int, betas: Sequence[int], ts: Sequence[Any], what: str) -> None:
    """Refuse ``digits`` below :func:`digits_needed` for the weakest band ``max(betas)``
    at the smallest ``t`` of ``ts`` (``what`` names the measurement in the message).

    Parameters
    ----------
    digits : int
        The working digits asked for.
    betas : sequence of int
        The bands' orders.
    ts : sequence
        The path parameters.
    what : str
        The measurement, for the message.

    Raises
    ------
    SymattnError
        ``digits`` is too few (one line).

    Examples
    --------
    >>> check_digits(10, [5], ["0.1"], "F.1")
    Traceback (most recent call last):
    ...
    symattn.core.errors.SymattnError: F.1 at t = 0.1 needs at least 20 digits (the weakest band ~ t^5); got 10
    """
    need = digits_needed(max(betas), min(float(t) for t in ts))
    if digits < need:
        raise SymattnError(f"{what} at t = {min(float(t) for t in ts)} needs at least {need} digits "
                           f"(the weakest band ~ t^{max(betas)}); got {digits}")


def midpoint(x: Any) -> float:
    """The float midpoint of an ``arb`` ball (or ``float(x)`` of anything else).

    Parameters
    ----------
    x : arb or number

    Returns
    -------
    float

    Examples
    --------
    >>> midpoint(flint.arb(3) / 4)
    0.75
    """
    return float(flint.arb(x).mid()) if isinstance(x, flint.arb) else float(x)


def project_out(A: np.ndarray, B: np.ndarray, digits: int) -> np.ndarray:
    """``(I - P_B) A`` with ``P_B`` the orthogonal projection onto ``im B`` (``arb``, twice the digits).

    Parameters
    ----------
    A, B : numpy.ndarray
        The vectors (columns) and a basis of the subspace projected out.
    digits : int
        The working precision.

    Returns
    -------
    numpy.ndarray
        ``arb`` entries.

    Examples
    --------
    >>> e = np.array([[1], [1]], dtype=object); f = np.array([[1], [0]], dtype=object)
    >>> [float(x.mid()) for x in project_out(e, f, 20).flat]
    [0.0, 1.0]
    """
    balls = Balls(2 * digits_to_bits(digits))
    a, b = Matrix(A, balls), Matrix(B, balls)
    return (a - b @ (b.T @ b).solve(b.T @ a)).entries
