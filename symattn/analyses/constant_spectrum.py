"""The ``constants`` route of the native contact spectrum: exact in Q adjoined the stack's constants.

For a stack whose series the modular and rational algebras refuse (a LayerNorm's ``1/sqrt`` of a
non-square, ``tanh``, GELU or SiLU of a nonzero constant; :class:`~symattn.core.algebras.functions.NotRational`)
and for any stack whose visible rank falls short of ``P`` minus its declared symmetries, the
Jacobian ``J(t)`` of the bank observation along ``Q = t U``, ``K = t W`` is computed exactly in
:class:`~symattn.core.algebras.constants.ConstantField` (one field per bank input: the rows of an
input depend on that input only), and its spectrum is proved by a column-reduced frame
(:func:`~symattn.analyses.frame_proof.prove_frame`): exact zeros below each frame column's order,
a certified nonzero minor of the leading matrix in python-flint balls, and the columns that vanish
mod ``t^N`` exactly as a *gap* (a kernel no declared symmetry explains, or orders past ``t^N``).

The bank and the truncation are chosen by the numerical tier
(:class:`~symattn.analyses.numerical_spectrum.PathJacobians`, 300 digits): the least prefix of a
seeded bank whose numerical spectrum equals that of the next larger prefix (evidence that it
separates), and ``N`` two past its largest order; they only choose what is proved (a wrong choice
leaves orders in the gap, never a wrong order). :func:`constant_route` is called by
:func:`~symattn.analyses.spectrum.native_spectrum` (``method="constants"``, or where the modular
series refuse a stack).
"""

from __future__ import annotations

import time
from typing import Callable

import numpy as np

from symattn.core.algebras.constants import ConstantField, constant_series
from symattn.core.errors import CheckFailed, Undecided
from symattn.model.architecture import Architecture
from symattn.model.parameters import random_bank
from symattn.analyses.collapse import bank_jacobian, kernel_product
from symattn.analyses.contact import Setup
from symattn.analyses.frame_proof import FrameProof, prove_frame

__all__ = ["constant_route", "constant_capacity", "FRAME_DIGITS"]

#: Digits of the balls that certify the leading matrix and guide the column operations (doubled,
#: up to the last, while a relation's coefficients are not resolved as small rationals).
FRAME_DIGITS = (60, 120, 240)


def constant_capacity(arch: Architecture) -> int:
    """Generators one bank input may name: per layer and token, one LayerNorm constant per norm
    and two per MLP hidden unit (GELU names ``Phi`` and ``phi``), and ``kappa``.

    >>> constant_capacity(Architecture.uniform(2, 2, 1, 3, "exp", norm="post"))
    7
    """
    per = 0
    for layer in arch.layers:
        norms = (2 if layer.mlp and layer.norm != "none" else 1) if layer.norm != "none" else 0
        per += arch.tokens * (norms + 2 * layer.mlp)
    return max(per + 1, 1)


def _input_jacobian(s: Setup, x: np.ndarray, N: int) -> tuple[np.ndarray, ConstantField]:
    """The exact Jacobian rows of one input (its own constant field), checked on a random direction
    by the second code path (series in a second variable) in the same field."""
    capacity = constant_capacity(s.arch)
    while True:
        A = constant_series(N, capacity)
        try:
            J = bank_jacobian(s.arch, x[None], s.U, s.W, s.V, A, s.columns, verify=1)
            return J, A.field
        except Undecided as exc:
            if "field is full" not in str(exc) or capacity >= 4096:
                raise
            capacity *= 2


def _guide(s: Setup, bank, say: Callable[[str], None]) -> tuple[int, int, str]:
    """The bank size and truncation the numerical tier suggests, and the bank's note."""
    from symattn.analyses.numerical_spectrum import MAX_NUMERICAL_PARAMETERS, PathJacobians

    arch, per_input = s.arch, s.arch.widths[-1] * s.arch.tokens
    first = max(2, -(-2 * s.visible // per_input))
    cap = 4 * max(s.hint) + 8
    if not isinstance(bank, str):
        size = int(bank)
        note = f"bank: {size} seeded inputs (orders can only rise on a non-separating bank)"
        sizes = [size]
    else:
        sizes = [first]
        while len(sizes) < 5:
            sizes.append(sizes[-1] + max(1, sizes[-1] // 2))
        note = ""
    if arch.native_size > MAX_NUMERICAL_PARAMETERS:
        return sizes[0], max(s.hint) + 2, note or f"bank auto: {sizes[0]} inputs (not grown: beyond the numerical tier)"
    say(f"numerical guide (300 digits): bank prefixes {sizes}")
    J = PathJacobians(arch, random_bank(arch, sizes[-1], s.seed), s.seed, 300)
    spectra = [J.spectrum(m) for m in sizes]
    chosen = spectra[-1]
    if isinstance(bank, str):
        for a, b in zip(spectra, spectra[1:]):
            if a.key() == b.key():
                chosen = a
                break
        stable = chosen is not spectra[-1] or spectra[-1].key() == spectra[-2].key()
        note = (f"bank auto: numerical spectra (300 digits) equal at {chosen.bank_size} and the next larger prefix "
                "(evidence that it separates)" if stable else
                f"bank auto: numerical spectra still changing at {chosen.bank_size} inputs")
    top = max((o for o, _ in chosen.bands), default=0)
    N = min(max(top + 2, max(s.hint) + 2), cap)
    return chosen.bank_size, N, note


def constant_route(s: Setup, bank, order: int | None, say: Callable[[str], None],
                   seconds: float | None = None) -> dict:
    """The spectrum's run (see :func:`~symattn.analyses.spectrum.native_spectrum`) in the constant
    field: the bank, the exact Jacobian, the proved frames of every block prefix.

    Returns a dict with ``X``, ``N``, ``nested`` (the certified finite orders of each block prefix),
    ``proof`` (the full frame's :class:`~symattn.analyses.frame_proof.FrameProof`), ``fields``,
    ``bank_note``, ``verified`` (how the declared symmetries were checked) and ``digits``.
    """
    start = time.perf_counter()
    arch = s.arch
    if isinstance(bank, np.ndarray):
        X, N, note = bank, order or max(s.hint) + 2, f"bank: {len(bank)} given inputs"
    else:
        size, N, note = _guide(s, bank, say)
        N = order or N
        X = random_bank(arch, size, s.seed)
    rows: list[np.ndarray] = []
    fields: list[ConstantField] = []
    for b in range(len(X)):
        if seconds is not None and time.perf_counter() - start > seconds:
            raise Undecided(f"the exact Jacobian in Q[constants] did not end within {seconds:g} s "
                            f"({b} of {len(X)} inputs done at t^{N}); use --method numerical")
        say(f"input {b + 1} of {len(X)}: Jacobian {arch.widths[-1] * arch.tokens} x {s.visible} exactly in "
            f"Q[constants] to t^{N}")
        J_b, F = _input_jacobian(s, X[b], N)
        rows.append(J_b)
        fields.append(F)
    J = np.concatenate(rows, axis=1)
    per = rows[0].shape[1]
    verified = _verify_kernel(s, X, N, say)

    def balls(v: np.ndarray, digits: int) -> np.ndarray:
        out = np.empty(len(v), dtype=object)
        for b, F in enumerate(fields):
            out[b * per: (b + 1) * per] = F.balls(v[b * per: (b + 1) * per], digits)
        return out

    nested, proofs = [], []
    for k in range(len(s.blocks)):
        cols = np.concatenate(s.block_idx[: k + 1])
        say(f"frame of {len(cols)} columns (through {s.blocks[k][0]}): exact zeros, leading minor in balls")
        proof = _prove(J[:, :, cols], balls, say)
        proofs.append(proof)
        if proof.status != "proved":
            break
        nested.append(proof.finite)
    return dict(X=X, N=N, J=J, nested=nested, proof=proofs[-1], proved=len(nested) == len(s.blocks),
                fields=fields, bank_note=note, verified=verified, separating=None, frame=None, divisible=None)


def _prove(J: np.ndarray, balls, say) -> FrameProof:
    proof = None
    for digits in FRAME_DIGITS:
        proof = prove_frame(J, lambda v, d=digits: balls(v, d), digits, say)
        if proof.status == "proved" or not ("small rational" in proof.reason or "certified minor" in proof.reason
                                            or "balls contain 0" in proof.reason):
            break
        say(f"the frame is not resolved at {digits} digits ({proof.reason}): again at more digits")
    assert proof is not None
    return proof


def _verify_kernel(s: Setup, X: np.ndarray, N: int, say: Callable[[str], None]) -> str:
    """Each declared symmetry as an exact kernel vector of ``J(t)`` mod ``t^N`` on every input, in
    that input's constant field."""
    if not s.kernel.directions:
        return "no declared symmetries"
    say(f"the {s.zeta} declared symmetries as kernel vectors, exactly in Q[constants] mod t^{N}")
    xi = s.kernel.along_path()
    for b in range(len(X)):
        A = constant_series(N, constant_capacity(s.arch))
        out = kernel_product(s.arch, X[b:b + 1], s.U, s.W, s.V, xi, A)
        if not A.field.is_zero(out).all():
            raise CheckFailed("a declared symmetry is not a kernel vector of the exact Jacobian in Q[constants]")
    return f"each verified as a kernel vector of J mod t^{N} (exact in Q[constants], every input)"


def constant_note(proof: FrameProof, fields: list[ConstantField], N: int) -> str:
    """The certificate of the constants route in words."""
    named = sum(len(F.constants) for F in fields)
    related = sum(len(F._relations) for F in fields)
    if proof.status != "proved":
        return f"certificate none: the frame in Q[constants] is undecided ({proof.reason})"
    gap = (f"; {proof.gap} further orders are >= t^{N}: {proof.gap} independent frame columns vanish mod t^{N} "
           "exactly (a kernel no declared symmetry explains, or orders past the truncation)" if proof.gap else "")
    return (f"certificate certified: the Jacobian computed exactly in Q adjoined {named} constants of the bank "
            f"({related} square roots kept with their relations w^2 = 1/c, the others free: LayerNorm's "
            "1/sqrt, the activations' values); a column-reduced frame (rational column operations, "
            "unimodular) whose columns vanish exactly below their orders, and a nonzero minor of its "
            f"leading matrix certified in python-flint balls: the first {len(proof.finite)} Smith orders over "
            f"R[[t]] are exactly these{gap}. Assumed, not proved: the forward-mode Jacobian code computes the "
            "derivative (checked on a random direction by a second code path in the same field) and the "
            "Taylor data of the functions are right")

