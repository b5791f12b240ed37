"""The rational local inverse of Appendix C.3 (``k = 1``): the effective tuple from finitely many jet coordinates.

:func:`local_inverse` reads finitely many linear functionals of ``T_{N_D}`` (the
part linear in a mean direction ``m`` of the ray coefficients along line probes
``X = rho (m 1^T + z_b c^T)``, :func:`taylor_observation`) and returns ``(L, M)``
by the formulas ``M_j z_b = c_{j,b} / (s_2^{3^{j-1}} a_{j-1}(0, z_b)^2 g_j(0) (l z_b))``
where ``s_2 = (1/n) sum c_a^2`` (the paper normalises ``s_2 = 1``; the power
follows by homogeneity in ``z``) after subtracting the exact mean of the
recovered prefix (:func:`inverse_chart` chooses the probe directions). The round
trip ``G o T_{N_D} = id`` is exact. The paper's stack only (the formulas are App. C.3's).
"""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np

from symattn.analyses.jets import _ray_input, generic_effective  # noqa: F401  generic_effective: doctests
from symattn.core.algebras import exact_series
from symattn.core.algebras.series import SeriesAlgebra
from symattn.core.errors import SymattnError
from symattn.core.linalg import Matrix
from symattn.model.architecture import Architecture
from symattn.model.network import effective_network, jacobian
from symattn.model.parameters import EffectiveParams, random_rational_matrix
from symattn.theorems.formulas import common_k_sharp_degree

__all__ = ["inverse_chart", "local_inverse", "taylor_observation"]


def _fractions(x: np.ndarray) -> np.ndarray:
    """An object array of python-flint ``fmpq`` (or Fractions) as Fractions."""
    out = np.empty(np.shape(x), dtype=object)
    for idx, v in np.ndenumerate(np.asarray(x, dtype=object)):
        out[idx] = Fraction(int(v.p), int(v.q)) if hasattr(v, "q") else Fraction(v)
    return out


def _contrast(n: int) -> list[Fraction]:
    """Token coefficients ``c`` with mean zero: ``(1, -1, 1, -1, ...)``, last 0 if n is odd."""
    c = [Fraction((-1) ** a) for a in range(n)]
    if n % 2:
        c[-1] = Fraction(0)
    return c


def _slopes(arch: Architecture) -> list[Fraction]:
    g = []
    for i, phi in enumerate(arch.normalizers, 1):
        s = phi.slope
        if s == 0:
            raise SymattnError(f"layer {i}: h'(0) = 0; the rational inverse of App. C.3 needs k = 1")
        g.append(Fraction(int(s.p), int(s.q)))
    return g


def inverse_chart(arch: Architecture, eta: EffectiveParams, seed: int = 0) -> tuple[np.ndarray, int]:
    """Probe directions ``Z = (z_1..z_d)`` (columns, invertible) and a row index ``l``
    with ``L_l z_b != 0`` and ``z_b^T M_i z_b != 0`` (``i < D``), chosen at the marked tuple.

    Parameters
    ----------
    arch : Architecture
        The architecture.
    eta : EffectiveParams
        The marked tuple.
    seed : int
        The seed of the probe directions.

    Returns
    -------
    tuple
        ``(Z, l)``.

    Raises
    ------
    SymattnError
        ``L = 0``, or no probe directions are found.

    Examples
    --------
    >>> arch = Architecture.uniform(2, 2, 2, 2, "exp")
    >>> Z, l = inverse_chart(arch, generic_effective(arch))
    >>> Z.shape, l
    ((2, 2), 0)
    """
    d0 = arch.widths[0]
    rows = [r for r in range(eta.L.shape[0]) if (eta.L[r] != 0).any()]
    if not rows:
        raise SymattnError("L = 0: the readout is zero and no score is identifiable (Theorem 2)")
    l = rows[0]
    rng = random.Random(seed)
    cols: list[np.ndarray] = []
    for _ in range(200 * d0):
        z = random_rational_matrix(rng, (d0,))
        ok = eta.L[l].dot(z) != 0 and all(z.dot(m).dot(z) != 0 for m in eta.M[:-1])
        if ok and Matrix.rational(np.array(cols + [z], dtype=object)).rank() == len(cols) + 1:
            cols.append(z)
            if len(cols) == d0:
                return np.array(cols, dtype=object).T, l
    raise SymattnError("no probe directions found: some prefix score has zero symmetric part "
                       "(z^T M_i z vanishes identically)")


def _probe_directions(arch: Architecture, algebra: SeriesAlgebra, Z: np.ndarray):
    """Inputs ``rho z_b c^T`` (batch b) and the directions ``rho e_i 1^T`` (i = 1..d_0),
    the latter as a ``(d_0, size of X)`` tensor of ``algebra``."""
    d0, n = arch.widths[0], arch.tokens
    c = np.array(_contrast(n), dtype=object)
    base = np.array([np.outer(Z[:, b], c) for b in range(Z.shape[1])], dtype=object)
    tan = np.zeros((d0, Z.shape[1], d0, n), dtype=object)
    for i in range(d0):
        tan[i, :, i, :] = 1
    return _ray_input(algebra, base), _ray_input(algebra, tan.reshape(d0, -1))


def _mean_linear_part(arch: Architecture, eta: EffectiveParams, Z: np.ndarray, order: int) -> np.ndarray:
    """The part linear in the mean direction of the output token mean along the probes:
    array ``(order, d_0 [direction i], B [probe b], d_D)`` over Q."""
    A = exact_series(order)
    vals = {k: A.const(v) for k, v in eta.as_dict().items()}
    vals["X"], directions = _probe_directions(arch, A, Z)
    J = jacobian(effective_network(arch), A, vals, ["X"], directions=directions)
    J = J.reshape((order, Z.shape[1], arch.widths[-1], arch.tokens, -1))
    mean = A.scale(J.sum(axis=3), Fraction(1, arch.tokens))   # (order, B, d_D, d_0)
    return np.moveaxis(mean, 3, 1)


def taylor_observation(arch: Architecture, eta: EffectiveParams, Z: np.ndarray) -> dict[int, np.ndarray]:
    """The jet coordinates the inverse reads: for ``N = 1`` and ``N = N_j = 2 * 3^(j-1) + 1``,
    the degree-``N`` coefficient of :func:`_mean_linear_part` (linear functionals of ``T_{N_D}``).

    Parameters
    ----------
    arch : Architecture
        The architecture.
    eta : EffectiveParams
        The effective tuple.
    Z : numpy.ndarray
        The probe directions.

    Returns
    -------
    dict
        Degree to coefficient array.
    """
    top = common_k_sharp_degree(arch.depth)
    C = _mean_linear_part(arch, eta, Z, top + 1)
    return {N: C[N] for N in [1] + [common_k_sharp_degree(j) for j in range(1, arch.depth + 1)]}


def _prefix(arch: Architecture, L: np.ndarray, M: list[np.ndarray]):
    """The recovered prefix network ``L S_{M_{j-1}} ... S_{M_1}`` (None for j = 1)."""
    j = len(M)
    if j == 0:
        return None, None
    sub = Architecture(tuple(arch.widths[:j]) + (arch.widths[-1],), (1,) * j, arch.tokens,
                       arch.normalizers[:j])
    return sub, EffectiveParams(L, tuple(M))


def local_inverse(arch: Architecture, observation: dict[int, np.ndarray], Z: np.ndarray,
                  l: int) -> EffectiveParams:
    """The rational map G of App. C.3 (``k = 1``): ``(L, M)`` from the jet coordinates.

    ``L`` from the degree-one consensus coefficient; then layer by layer,
    ``M_j z_b = c_{j,b} / (s_2^{3^{j-1}} a_{j-1}(0, z_b)^2 g_j(0) (l z_b))`` with
    ``c_{j,b}`` the row ``l`` of the degree-``N_j`` coefficient minus the exact
    mean of the recovered prefix, and ``M_j = (M_j z_b)_b Z^{-1}``.

    Parameters
    ----------
    arch : Architecture
        The architecture.
    observation : dict
        The jet coordinates by degree (:func:`taylor_observation`).
    Z : numpy.ndarray
        The probe directions.
    l : int
        The row index.

    Returns
    -------
    EffectiveParams

    Raises
    ------
    SymattnError
        The recovered readout's row ``l`` is zero, or a denominator vanishes.

    Examples
    --------
    >>> arch = Architecture.uniform(2, 2, 2, 2, "exp")
    >>> eta = generic_effective(arch, seed=3)
    >>> Z, l = inverse_chart(arch, eta)
    >>> back = local_inverse(arch, taylor_observation(arch, eta, Z), Z, l)
    >>> all((a == b).all() for a, b in zip(back.as_dict().values(), eta.as_dict().values()))
    True
    """
    g = _slopes(arch)
    n = arch.tokens
    s2 = sum(x * x for x in _contrast(n)) / n
    d0 = arch.widths[0]
    L = _fractions(observation[1][:, 0, :].T)
    if not (L[l] != 0).any():
        raise SymattnError(f"row {l} of the recovered readout is zero; choose the chart at L != 0")
    Zinv = _fractions(Matrix.rational(Z).inverse().entries)
    M: list[np.ndarray] = []
    for j in range(1, arch.depth + 1):
        N = common_k_sharp_degree(j)
        obs = _fractions(observation[N])
        sub, prefix = _prefix(arch, L, M)
        if sub is not None:
            obs = obs - _fractions(_mean_linear_part(sub, prefix, Z, N + 1)[N])
        cols = []
        for b in range(d0):
            z = Z[:, b]
            a = Fraction(1)
            for i, m in enumerate(M, 1):
                a *= (g[i - 1] * z.dot(m).dot(z)) ** (3 ** (j - 1 - i))
            den = s2 ** (3 ** (j - 1)) * a * a * g[j - 1] * L[l].dot(z)
            if den == 0:
                raise SymattnError(f"the chart degenerates at layer {j}: a denominator vanishes")
            cols.append(obs[:, b, l] / den)
        M.append(np.array(cols, dtype=object).T.dot(Zinv))
    return EffectiveParams(L, tuple(M))
