r"""Where floating point loses each contact band along the native path (Theorem 4's path).

:func:`sensitivity` predicts, for any architecture on the path ``Q = t U``,
``K = t W``, values fixed (``V = I`` for the paper's stack), the bands
``sigma ~ c_i t^beta_i`` (orders exact and certified, from
:func:`symattn.analyses.spectrum.native_spectrum`, leading coefficients measured in
ball arithmetic on the exact complement of the declared symmetries) and the ``t``
below which float64 no longer resolves each. The result carries the spectrum's
``theorem`` (Theorem 4 for the paper's stack, None elsewhere) and its ``label``.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable

import flint  # noqa: F401  (the doctests)
import numpy as np

from symattn.core.validate import require_int, require_real
from symattn.model.architecture import require_architecture
from symattn.render.rich_result import RichResult
from symattn.core.algebras import BallAlgebra
from symattn.core.algebras.functions import NotRational
from symattn.core.errors import InternalError, SymattnError
from symattn.model.architecture import Architecture
from symattn.model.parameters import random_bank
from symattn.analyses.numerics import (
    check_digits,
    digits_needed,
    midpoint,
    observation_jacobian,
    positive_singular_values,
    Unresolved,
)
from symattn.model.symmetries import GaugeKernel
from symattn.analyses.spectrum import native_spectrum, path_point_of
from symattn.theorems.statements import NO_THEOREM

__all__ = ["sensitivity", "band_protocol", "Sensitivity", "AGREEMENT", "MAX_DIGITS"]


#: Relative agreement of the leading coefficients at two precisions that verifies a measurement.
AGREEMENT = 1e-12

#: The largest working precision the automatic choice may reach.
MAX_DIGITS = 2000


def _measure(arch: Architecture, theta: dict, X: np.ndarray, comp: np.ndarray, digits: int) -> list | None:
    """Positive singular values at ``digits``, or None when they are not resolved there."""
    J = observation_jacobian(arch, theta, X, BallAlgebra(digits))
    try:
        return positive_singular_values(J, comp, digits)
    except Unresolved:  # an eigenvalue at the noise floor: more digits are needed
        return None


def _relative_change(a: list, b: list) -> float:
    return max(abs(midpoint(x) - midpoint(y)) / abs(midpoint(y)) for x, y in zip(a, b))


def sensitivity(arch: Architecture, t_min: float = 0.01, t_ref: float = 0.25, bank: int | str = "auto",
                digits: int | None = None, eps: float = float(np.finfo(np.float64).eps), seed: int = 0) -> dict:
    """Predicted float64 band loss along the native path of ``arch``.

    The bands ``sigma ~ c_i t^beta_i`` come from the exact spectrum
    (:func:`symattn.analyses.spectrum.native_spectrum`, seeded path and bank); the
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
        For ``t`` outside ``(0, 1)``, when the spectrum has undecided or uncertified
        orders (the protocol needs exact bands), or when no precision up to
        :data:`MAX_DIGITS` resolves the bands (the message says which was tried).

    Parameters
    ----------
    arch : Architecture
    t_min : float, optional
        The smallest ``t`` the prediction covers, in ``(0, 1)``.
    t_ref : float, optional
        Where the leading coefficients are measured, in ``(0, 1)``.
    bank : int or "auto", optional
        The bank of the exact spectrum.
    digits : int, optional
        The least working precision (default: :func:`digits_needed`).
    eps : float, optional
        The unit roundoff of the format predicted (default float64's).
    seed : int, optional

    Returns
    -------
    Sensitivity
        A dict: the ``bands`` (order, multiplicity, ``leading_coefficients``,
        ``float64_lost_below_t``), the precisions used, their ``agreement``, the rank and the
        ``theorem``.

    Examples
    --------
    >>> r = sensitivity(Architecture.uniform(2, 2, 1, 2, "exp"), t_min=0.05)
    >>> [(b["order"], b["multiplicity"]) for b in r["bands"]], r["agreement"] < 1e-12
    ([(0, 4), (1, 3), (5, 3)], True)
    >>> r = sensitivity(Architecture.uniform(1, 2, 1, 2, "exp", skip="value"), t_min=0.05)
    >>> [(b["order"], b["multiplicity"]) for b in r["bands"]], r["theorem"], r["agreement"] < 1e-12
    ([(0, 4), (1, 3)], None, True)
    """
    require_architecture(arch)
    require_real(t_min, "t_min", 0, 1, open_low=True)
    require_real(t_ref, "t_ref", 0, 1, open_low=True)
    require_int(seed, "seed", 0, 2**63 - 1)
    if digits is not None:
        require_int(digits, "digits", 1)
    if not 0 < t_min < 1 or not 0 < t_ref < 1:
        raise SymattnError("t_min and t_ref must lie in (0, 1)")
    blocks = any(layer.has_block_parts for layer in arch.layers)
    try:
        spec = native_spectrum(arch, bank=bank, seed=seed)
    except NotRational:
        if not blocks:
            raise
        spec = None
    t = Fraction(str(t_ref))
    theta = {name: value * t if arch.block(name).is_factor else value
             for name, value in path_point_of(arch, seed, "identity").items()}
    if spec is None or blocks and (not spec.certified or spec.undecided):
        return _numerical_sensitivity(arch, theta, t_min, t_ref, digits, eps, seed)
    if not spec.certified or spec.undecided:
        raise SymattnError(f"the spectrum has {spec.undecided} undecided orders (certificate "
                           f"{spec.certificate}); the precision protocol needs exact bands: give --bank "
                           "larger or a smaller stack")
    X = random_bank(arch, spec.bank_size, seed)
    comp = GaugeKernel(arch, theta).complement()
    bands = [(b.order, b.multiplicity, b.layer) for b in spec.bands]
    out = band_protocol(bands, lambda w: _measure(arch, theta, X, comp, w), t_min, t_ref, digits, eps)
    return Sensitivity({"rank": spec.rank, "kernel": spec.kernel, "bank_size": spec.bank_size, **out,
                        "architecture": spec.architecture, "theorem": spec.theorem,
                        "label": spec.theorem or NO_THEOREM})


def _numerical_sensitivity(arch: Architecture, theta: dict, t_min: float, t_ref: float, digits: int | None,
                           eps: float, seed: int) -> "Sensitivity":
    """The protocol on the numerical bands of a transformer block
    (:func:`~symattn.analyses.numerical_spectrum.numerical_path_spectrum`, where the exact tier refuses
    the stack or leaves orders undecided): the ``rank`` largest singular values on the complement
    of the declared symmetries (mpmath at each working precision), everything numerical."""
    import mpmath

    from symattn.analyses.numerical_spectrum import numerical_path_spectrum

    n = numerical_path_spectrum(arch, seed=seed)
    X = random_bank(arch, n.bank_size, seed)
    comp = GaugeKernel(arch, theta).complement()

    def measure(w: int) -> list:
        ctx = mpmath.mp.clone()
        ctx.dps = w
        J = observation_jacobian(arch, theta, X, BallAlgebra(w))
        M = ctx.matrix([[ctx.mpf(v.mid().str(w + 5, radius=False)) for v in row] for row in J])
        Q, _ = ctx.qr(ctx.matrix([[int(v) for v in row] for row in comp]))
        sv = sorted((abs(x) for x in ctx.svd_r(M * Q[:, : comp.shape[1]], compute_uv=False)), reverse=True)
        return [flint.arb(ctx.nstr(x, w)) for x in sv[: n.rank]]

    bands = [(order, mult, 0) for order, mult in n.bands]
    out = band_protocol(bands, measure, t_min, t_ref, digits, eps)
    out["kind"] = (f"bands and rank numerical at {n.digits} digits (the exact tier refuses this stack or leaves "
                   f"orders undecided; slopes within {n.max_slope_error:.2g} of integers); "
                   + out["kind"].replace("bands and rank exact; ", ""))
    return Sensitivity({"rank": n.rank, "kernel": n.declared, "unexplained": n.unexplained,
                        "bank_size": n.bank_size, **out, "architecture": n.architecture, "theorem": None,
                        "label": NO_THEOREM})


class Sensitivity(RichResult, dict):
    """Result of :func:`sensitivity`: a dict (the JSON keys of ``symattn sensitivity --json``) with a
    one-line repr and rich displays.

    >>> Sensitivity({"bands": [{"order": 1, "multiplicity": 3, "float64_lost_below_t": 1e-8}], "rank": 7,
    ...              "float64_rank_at_t_min": 4, "t_min": 0.01, "digits": 30, "label": "Theorem 4"})
    <Sensitivity: float64 keeps rank 4 of 7 at t = 0.01; t^1 x3 lost below t = 1e-08; numerical at 30 digits; Theorem 4>
    """

    def _headline(self) -> str:
        lost = ", ".join(f"t^{b['order']} x{b['multiplicity']} lost below t = {b['float64_lost_below_t']:.2g}"
                         for b in self.get("bands", []) if b.get("float64_lost_below_t") is not None)
        return (f"float64 keeps rank {self.get('float64_rank_at_t_min')} of {self.get('rank')} at "
                f"t = {self.get('t_min')}; {lost or 'no band lost'}; numerical at {self.get('digits')} digits; "
                f"{self.get('label')}")

    def _summary(self) -> tuple[str, list[tuple[str, str]]]:
        rows = [(f"band $t^{{{b['order']}}}$ (x{b['multiplicity']})",
                 "exact unit" if b.get("float64_lost_below_t") is None else
                 f"float64 loses it below $t = {b['float64_lost_below_t']:.3g}$") for b in self.get("bands", [])]
        rows += [("float64 rank", f"{self.get('float64_rank_at_t_min')} of {self.get('rank')} at "
                                  f"$t = {self.get('t_min')}$"),
                 ("kind", str(self.get("kind", "")))]
        return f"Float64 sensitivity ({self.get('label')})", rows


def band_protocol(bands: list[tuple[int, int, int]], measure: Callable[[int], list | None], t_min: float,
                  t_ref: float, digits: int | None = None,
                  eps: float = float(np.finfo(np.float64).eps)) -> dict:
    """The precision protocol of :func:`sensitivity` for any exact bands.

    ``bands`` are ``(order, multiplicity, layer)`` (exact, e.g. certified Smith
    orders) and ``measure(digits)`` returns the positive singular values (balls,
    descending) of the Jacobian at ``t_ref`` on the exact complement of its
    kernel, or None when ``digits`` do not resolve them. Returns the band
    table, the float64 loss thresholds and the digits (the keys of
    :func:`sensitivity` without ``rank``, ``kernel``, ``bank_size``).

    Parameters
    ----------
    bands : list of tuple
        ``(order, multiplicity, layer)``.
    measure : callable
        ``digits -> singular values or None``.
    t_min, t_ref : float
        The smallest ``t`` and the reference point, in ``(0, 1)``.
    digits : int, optional
        The working precision (default: grown until the values stabilise).
    eps : float
        The float64 unit roundoff.

    Returns
    -------
    dict

    Raises
    ------
    SymattnError
        ``t_min`` or ``t_ref`` out of range, ``digits`` beyond the limit, or values that do not stabilise.
    InternalError
        The band table does not reproduce its own measurements.

    Examples
    --------
    >>> out = band_protocol([(0, 1, 0), (1, 1, 1)], lambda w: [flint.arb(1), flint.arb("0.025")],
    ...                     0.01, 0.25)
    >>> [b["leading_coefficients"] for b in out["bands"]], out["float64_rank_at_t_min"]
    ([[1.0], [0.1]], 2)
    """
    if not 0 < t_min < 1 or not 0 < t_ref < 1:
        raise SymattnError("t_min and t_ref must lie in (0, 1)")
    betas = [order for order, _, _ in bands]
    start = digits_needed(max(betas), t_ref)
    if digits is not None:
        if digits > MAX_DIGITS:
            raise SymattnError(f"--digits {digits} is beyond the limit {MAX_DIGITS}; the working "
                               f"precision is chosen automatically when --digits is omitted")
        check_digits(digits, betas, [t_ref], "the reference measurement")
        start = max(start, digits)
    tried, prev, sig, agreement, work = [], None, None, None, start
    while work <= MAX_DIGITS:
        tried.append(work)
        cur = measure(work)
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
    table, k, kept = [], 0, 0
    for order, multiplicity, layer in sorted(bands, key=lambda b: b[0]):
        coeffs = [midpoint(s) / t_ref ** order for s in sig[k: k + multiplicity]]
        k += multiplicity
        kept += sum(1 for c in coeffs if c * t_min ** order > eps * s1)
        loss = [None if order == 0 else (eps * s1 / c) ** (1 / order) for c in coeffs]
        table.append({"order": order, "multiplicity": multiplicity, "layer": layer,
                      "leading_coefficients": coeffs,
                      "float64_loss_starts_below_t": None if order == 0 else max(loss),
                      "float64_lost_below_t": None if order == 0 else min(loss)})
    # post-condition: each coefficient reproduces its measured value at t_ref, each loss threshold
    # solves c t^beta = eps sigma_1 (a wrong table is a bug: exit 70, never printed)
    measured = [midpoint(x) for x in sig[:k]]
    predicted = [c * t_ref ** row["order"] for row in table for c in row["leading_coefficients"]]
    lost = [(row["order"], max(row["leading_coefficients"]), row["float64_lost_below_t"]) for row in table if row["order"]]
    if (any(abs(a - b) > 1e-9 * abs(b) for a, b in zip(predicted, measured))
            or any(abs(c * t ** o - eps * s1) > 1e-9 * eps * s1 for o, c, t in lost)):
        raise InternalError("the band table does not reproduce its own measurements; please report this bug")
    return {"sigma_1": s1, "t_ref": t_ref, "t_min": t_min, "eps": eps, "bands": table,
            "digits_needed_at_t_min": digits_needed(max(betas), t_min),
            "float64_rank_at_t_min": kept, "digits": used, "verified_at_digits": check,
            "agreement": agreement, "digits_tried": tried,
            "kind": f"bands and rank exact; coefficients numerical at {used} digits, verified "
                    f"against {check} digits (relative agreement {agreement:.1e})"}
