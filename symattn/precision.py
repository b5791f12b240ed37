r"""Where floating point loses each contact band along the Theorem 4 path.

:func:`sensitivity` predicts, for an architecture on the path ``Q_i = t U_i``,
``K_i = t W_i``, ``V_i = I``, the bands ``sigma ~ c_i t^beta_i`` (orders exact
from :func:`symattn.spectrum.native_spectrum`, leading coefficients measured in
ball arithmetic) and the ``t`` below which float64 no longer resolves each.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from .algebras import BallAlgebra
from .errors import SymattnError
from .model import Architecture, random_bank
from .numerics import (
    check_digits,
    digits_needed,
    midpoint,
    observation_jacobian,
    positive_singular_values,
    Unresolved,
)
from .gauge import GaugeKernel
from .protocols import path_theta
from .spectrum import native_spectrum, path_parameters

__all__ = ["sensitivity", "AGREEMENT", "MAX_DIGITS"]


#: Relative agreement of the leading coefficients at two precisions that verifies a measurement.
AGREEMENT = 1e-12

#: The largest working precision the automatic choice may reach.
MAX_DIGITS = 2000


def _measure(arch: Architecture, theta, X, comp, digits: int) -> list | None:
    """Positive singular values at ``digits``, or None when they are not resolved there."""
    J = observation_jacobian(arch, theta.as_dict(), X, BallAlgebra(digits))
    try:
        return positive_singular_values(J, comp, digits)
    except Unresolved:  # an eigenvalue at the noise floor: more digits are needed
        return None


def _relative_change(a: list, b: list) -> float:
    return max(abs(midpoint(x) - midpoint(y)) / abs(midpoint(y)) for x, y in zip(a, b))


def sensitivity(arch: Architecture, t_min: float = 0.01, t_ref: float = 0.25, bank: int | str = "auto",
                digits: int | None = None, eps: float = float(np.finfo(np.float64).eps)) -> dict:
    """Predicted float64 band loss along the Theorem 4 path of ``arch``.

    The bands ``sigma ~ c_i t^beta_i`` come from the exact spectrum
    (:func:`symattn.spectrum.native_spectrum`, seeded path and bank); the
    leading coefficients ``c`` of each band are its singular values at
    ``t_ref``, measured in ball arithmetic, divided by ``t_ref^beta_i``. A
    band is lost in float64 below the ``t`` where ``c_i t^beta_i = eps
    sigma_1``; resolving every band at ``t_min`` takes about
    ``beta_max log10(1/t_min) + 15`` digits (:func:`digits_needed`).

    The working precision is chosen, not guessed: it starts at
    ``digits_needed(beta_max, t_ref)`` (or ``digits`` if larger), and the
    measurement is repeated at 1.5 times the digits until two successive
    precisions agree to :data:`AGREEMENT` (relative, every singular value);
    the report gives both precisions and their agreement.

    Raises
    ------
    SymattnError
        For ``t`` outside ``(0, 1)``, or when no precision up to
        :data:`MAX_DIGITS` resolves the bands (the message says which was tried).

    Examples
    --------
    >>> r = sensitivity(Architecture.uniform(2, 2, 1, 2, "exp"), t_min=0.05)
    >>> [(b["order"], b["multiplicity"]) for b in r["bands"]], r["agreement"] < 1e-12
    ([(0, 4), (1, 3), (5, 3)], True)
    """
    if not 0 < t_min < 1 or not 0 < t_ref < 1:
        raise SymattnError("t_min and t_ref must lie in (0, 1)")
    spec = native_spectrum(arch, bank=bank)
    U, W, _ = path_parameters(arch, 0, "identity")
    X = random_bank(arch, spec.bank_size, 0)
    betas = [b.order for b in spec.bands]
    start = digits_needed(max(betas), t_ref)
    if digits is not None:
        if digits > MAX_DIGITS:
            raise SymattnError(f"--digits {digits} is beyond the limit {MAX_DIGITS}; the working "
                               f"precision is chosen automatically when --digits is omitted")
        check_digits(digits, betas, [t_ref], "the reference measurement")
        start = max(start, digits)
    tq = Fraction(str(t_ref))
    theta = path_theta(U, W, tq)
    comp = GaugeKernel(arch, theta).complement()
    tried, prev, sig, agreement, work = [], None, None, None, start
    while work <= MAX_DIGITS:
        tried.append(work)
        cur = _measure(arch, theta, X, comp, work)
        if cur is not None and prev is not None:
            agreement = _relative_change(prev, cur)
            if agreement < AGREEMENT:
                sig = prev
                break
        prev = cur
        work = int(work * 1.5)
    if sig is None:
        raise SymattnError(f"the singular values at t_ref = {t_ref} did not stabilise at "
                           f"{', '.join(map(str, tried))} digits (limit {MAX_DIGITS}): use a "
                           f"larger --t-ref")
    used, check = tried[-2], tried[-1]
    s1 = midpoint(sig[0])
    bands, k, kept = [], 0, 0
    for band in sorted(spec.bands, key=lambda b: b.order):
        coeffs = [midpoint(s) / t_ref ** band.order for s in sig[k: k + band.multiplicity]]
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
            "float64_rank_at_t_min": kept, "digits": used, "verified_at_digits": check,
            "agreement": agreement, "digits_tried": tried,
            "kind": f"bands and rank exact; coefficients numerical at {used} digits, verified "
                    f"against {check} digits (relative agreement {agreement:.1e})"}
