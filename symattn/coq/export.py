"""Certificates that Coq checks: ``.v`` files of data and witnesses, and their project.

symattn is the untrusted oracle: it writes, for one claim, a ``.v`` file with the
exact rational data (path, bank, point, rays), the claim on one line marked
``(* claim *)``, and witnesses (visible columns, kernel directions, pivot rows,
inverses mod p). The proof is one call of a checker from ``coq/theories``
(``Checker.v``), whose soundness is proved there; ``vm_compute`` runs it and
the kernel re-checks it at ``Qed``. The Jacobian is recomputed inside Coq from
the Coq definition of the network; Python never exports a matrix of it.

:func:`write_project` writes a self-contained directory: the theory, the
certificates, a ``_CoqProject`` and a ``Makefile`` (from ``coq_makefile``), so
that ``make -C DIR`` checks everything.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass, field
from fractions import Fraction  # noqa: F401 (the doctests use it)
from pathlib import Path
from typing import Sequence

import flint
import numpy as np

from symattn.core.algebras import DEFAULT_PRIME
from symattn.core.algebras.modular import PrimeField
from symattn.core.algebras.series import SeriesAlgebra
from symattn.core.errors import SymattnError
from symattn.model.architecture import Architecture
from symattn.model.parameters import NativeParams
from symattn.model.symmetries import GaugeKernel, path_direction
from symattn.coq.literals import fraction, nat_list, normalizer_term, qmat, qseries, zmat

__all__ = ["Certificate", "THEORY_FILES", "theory_dir", "certificate_point", "point_digest", "certificate_name",
           "claim_source", "point_definitions", "spectrum_certificate", "jet_certificate",
           "dimension_certificate", "identity_certificate", "write_project", "coq_row_order", "pivot_rows",
           "pivot_columns", "inverse_mod"]

#: The theory, in dependency order (``coq/theories``).
THEORY_FILES = ("Alg", "Series", "Tangent", "Network", "Modp", "Jacobian", "Rank", "Smith", "Bounds", "Checker",
                "Identity")

#: The modulus of every mod-p witness: the default prime of the modular algebra
#: (below 2^23, so the Coq checker's products stay below 2^62).
MODULUS = DEFAULT_PRIME


@dataclass
class Certificate:
    """One claim for Coq: the module ``name`` (a ``.v`` file) and what it states.

    ``point`` is the exact point the claim is about (:func:`certificate_point`: the
    architecture, the normalizers' series, the seed, the path or point, the bank or rays,
    and the claimed numbers), from the data the certificate exports; ``name`` ends in a
    hash of it (:func:`certificate_name`).
    """

    name: str
    kind: str
    statement: str
    claim: str
    source: str
    notes: list[str] = field(default_factory=list)
    point: dict = field(default_factory=dict)


#: A certificate's module name: a Coq identifier that is also a plain file name.
NAME_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,150}")


def _rationals(A) -> list:
    """An array of exact rationals as nested lists of strings (``"-3/4"``)."""
    arr = np.asarray(A, dtype=object)
    return [str(fraction(v)) for v in arr.reshape(-1)] if arr.ndim == 1 else [_rationals(r) for r in arr]


def certificate_point(kind: str, arch: "Architecture | None", seed: "int | None", data: dict,
                      claim: dict, order: int = 0) -> dict:
    """The exact point a certificate is about, as JSON-able data.

    Parameters
    ----------
    kind : ``"spectrum"``, ``"jet"``, ``"dimension"`` or ``"identity"``
    arch : the architecture (None for the identity, which has no data)
    seed : the seed the point and the bank come from (None when given by hand)
    data : name -> exact rational array (``U``, ``W``, ``V``, ``bank``; ``L``, ``Ms``, ``rays``; ...)
    claim : the claimed numbers (orders and kernel; degree; rank)
    order : the truncation of the normalizers' series (their Coq terms are part of the point)

    Returns
    -------
    dict
        ``kind``, ``architecture`` (depth, widths, head widths, tokens, normalizer names),
        ``normalizers`` (each one's Coq term: its Taylor series), ``seed``, ``data``, ``claim``.

    >>> certificate_point("identity", None, None, {}, {})["kind"]
    'identity'
    """
    point = {"kind": kind, "seed": seed, "claim": claim,
             "data": {k: _rationals(v) if not isinstance(v, list) else [_rationals(a) for a in v]
                      for k, v in data.items()}}
    if arch is not None:
        point["architecture"] = {"depth": arch.depth, "widths": list(arch.widths), "ranks": list(arch.ranks),
                                 "tokens": arch.tokens, "normalizers": [phi.name for phi in arch.normalizers]}
        point["normalizers"] = [normalizer_term(phi, order)[0] for phi in arch.normalizers]
    return point


def point_digest(point: dict) -> str:
    """The SHA-256 (hex) of a point's canonical JSON.

    >>> len(point_digest({"kind": "identity"}))
    64
    """
    return hashlib.sha256(json.dumps(point, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def certificate_name(prefix: str, point: dict) -> str:
    """A valid Coq module name: a readable ``prefix`` (characters other than letters and digits
    become ``_``) and 16 hex digits of the point's hash, so that two different points never share
    a name.

    >>> certificate_name("jet_D1_exp(0.5*s)", {"kind": "jet"})[:17]
    'jet_D1_exp_0_5_s_'
    """
    readable = re.sub(r"[^A-Za-z0-9]+", "_", prefix).strip("_")[:80] or "claim"
    if not readable[0].isalpha():
        readable = "c_" + readable
    name = f"{readable}_{point_digest(point)[:16]}"
    assert NAME_PATTERN.fullmatch(name), name
    return name


def theory_dir() -> Path:
    """The folder of the Coq theory (``coq/theories`` of the repository; in a wheel, installed as
    ``symattn/coq/theories``).

    >>> (theory_dir() / "Network.v").is_file()
    True
    """
    here = Path(__file__).resolve()
    if (here.parent / "theories" / "Network.v").is_file():
        return here.parent / "theories"
    for parent in here.parents:
        candidate = parent / "coq" / "theories"
        if (candidate / "Network.v").is_file():
            return candidate
    raise SymattnError("the Coq theory (coq/theories) was not found beside the package; "
                       "install symattn from the repository (pip install -e .)")


def coq_row_order(inputs: int, d: int, n: int) -> np.ndarray:
    """For each Coq row (input, token, coordinate) the Python row (input, coordinate, token).

    >>> coq_row_order(1, 2, 3).tolist()
    [0, 3, 1, 4, 2, 5]
    """
    out = [b * d * n + c * n + a for b in range(inputs) for a in range(n) for c in range(d)]
    return np.array(out, dtype=int)


def pivot_rows(F: np.ndarray, p: int) -> list[int]:
    """Indices of ``F.shape[1]`` rows of ``F`` (entries mod p) independent mod ``p`` (the
    first in row order), or fewer when ``F`` has lower rank.

    >>> pivot_rows(np.array([[1, 2], [2, 4], [0, 1]]), 7)
    [0, 2]
    """
    rows, cols = F.shape
    if cols == 0:
        return []
    T = flint.nmod_mat(cols, rows, [int(x) % p for x in F.T.reshape(-1)], p)
    R, rank = T.rref()
    out = []
    for k in range(rank):
        j = next(j for j in range(rows) if int(R[k, j]) != 0)
        out.append(j)
    return out


def inverse_mod(A: np.ndarray, p: int) -> list[list[int]]:
    """The inverse of a square matrix mod ``p`` (entries in ``[0, p)``).

    >>> inverse_mod(np.array([[2, 0], [0, 3]]), 7)
    [[4, 0], [0, 5]]
    """
    n = A.shape[0]
    M = flint.nmod_mat(n, n, [int(x) % p for x in A.reshape(-1)], p)
    try:
        inv = M.inv()
    except ZeroDivisionError:
        raise SymattnError("the witness matrix is singular mod p: nothing to certify") from None
    return [[int(inv[i, j]) for j in range(n)] for i in range(n)]


def _reduce(v, p: int) -> int:
    f = fraction(v)
    if f.denominator % p == 0:
        raise SymattnError(f"a denominator of the data is divisible by p = {p}")
    return f.numerator * pow(f.denominator, -1, p) % p


#: Candidate moduli for the zero checks: the largest primes below 2^31 (Coq takes the
#: shortest prefix whose product exceeds the a-priori bound it computes itself).
def zero_candidates(count: int = 40) -> list[int]:
    """The ``count`` largest primes below 2^31 (python-flint's test, a proof at this size;
    Coq only needs them pairwise coprime, which it checks).

    >>> zero_candidates(2)
    [2147483647, 2147483629]
    """
    out, p = [], 2**31 - 1
    while len(out) < count:
        if flint.fmpz(p).is_prime():
            out.append(p)
        p -= 1
    return out


def _prime_factors(n: int) -> set[int]:
    out, k = set(), 2
    n = abs(int(n))
    while k * k <= n:
        while n % k == 0:
            out.add(k)
            n //= k
        k += 1
    if n > 1:
        out.add(n)
    return out


def zero_bases(values, tokens: int, order: int, coefficients=()) -> list[int]:
    """Bases for the denominators of every coefficient: 2, 3 and the product of the other
    primes of the data's denominators, of the token count and of ``k!`` for ``k < order``
    (and of the denominators of given Taylor coefficients).

    >>> zero_bases([Fraction(1, 10)], 2, 4)
    [2, 3, 5]
    """
    primes = {p for p in range(2, max(order, 2) + 1) if all(p % k for k in range(2, p))}
    for v in values:
        primes |= _prime_factors(fraction(v).denominator)
    primes |= _prime_factors(tokens)
    for c in coefficients:
        primes |= _prime_factors(fraction(c).denominator)
    rest = 1
    for p in primes - {2, 3}:
        rest *= p
    return [2, 3] + ([rest] if rest > 1 else [])


def _zero_witness(bases: Sequence[int]) -> str:
    cands = zero_candidates()
    return ("{| zw_bases := " + "([" + "; ".join(str(b) for b in bases) + "])%Z;\n  zw_cands := ["
            + "; ".join(f"{p}%uint63" for p in cands) + "] |}")


def _header(title: str, lines: Sequence[str], claim: bool = False) -> str:
    body = "\n".join(f"    {line}" for line in lines)
    tail = "" if claim else "\n\n    Written by symattn (untrusted); checked by Coq's kernel at Qed."
    return (f"(** * {title}\n\n{body}{tail} *)\n\n"
            # a claim file does not import Uint63, so Print Assumptions names its axioms in full
            f"From Coq Require Import List QArith ZArith{'' if claim else ' Uint63'}.\n"
            "From Symattn Require Import Alg Network Jacobian Rank Smith Bounds Checker.\n"
            "Import ListNotations.\nLocal Open Scope Q_scope.\n\n")


def _tokens(X: np.ndarray) -> str:
    """An input ``(d, n)`` as its list of tokens (the columns)."""
    return qmat(np.asarray(X, dtype=object).T)


def _phi_data(arch, order: int) -> list:
    """The Taylor coefficients of the normalizers that are not computed by Coq (their
    denominators enter the bases)."""
    out = []
    for phi in arch.normalizers:
        term, how = normalizer_term(phi, order)
        if not term.startswith(("exp_taylor", "cosh_taylor", "gauss_taylor")):
            out += list(phi.rational_phi_taylor(order - 1))
    return out


#: The data definitions of each kind of certificate (besides ``normalizers``), in order.
_DATA = {"spectrum": ("U", "W", "V", "bank"), "jet": ("L", "Ms", "rays"), "dimension": ("Qs", "Ks", "Vs", "rays"),
         "identity": ()}


def _fr(nested) -> np.ndarray:
    """Nested lists of rational strings as an array of Fractions."""
    return np.vectorize(Fraction, otypes=[object])(np.asarray(nested, dtype=object))


def _mats(items) -> str:
    return "[" + "; ".join(qmat(_fr(m)) for m in items) + "]"


def point_definitions(point: dict) -> str:
    """The Coq definitions of a point's data (rendered from the point alone), so that a
    certificate and the claim file of the printed result define the same names."""
    kind, data = point["kind"], point.get("data", {})
    if kind == "identity":
        return ""
    src = ""
    if kind == "spectrum":
        src += "".join(f"Definition {k} : list QM := {_mats(data[k])}.\n" for k in ("U", "W", "V"))
    elif kind == "jet":
        src += f"Definition L : QM := {qmat(_fr(data['L']))}.\nDefinition Ms : list QM := {_mats(data['Ms'])}.\n"
    else:
        src += "".join(f"Definition {k} : list QM := {_mats(data[k])}.\n" for k in ("Qs", "Ks", "Vs"))
    src += "Definition normalizers : list (list Q) := [" + "; ".join(point["normalizers"]) + "].\n"
    if kind == "spectrum":
        src += "Definition layers := path_layers normalizers U W V.\n"
        src += "Definition bank : list QSM := map fixed_input [" + "; ".join(
            _tokens(_fr(x)) for x in data["bank"]) + "].\n\n"
    elif kind == "jet":
        src += "Definition scores := zipw pair normalizers (map constant Ms).\n"
        src += _rays_def(_fr(data["rays"]))
    else:
        src += "Definition layers := point_layers normalizers Qs Ks Vs.\n"
        src += _rays_def(_fr(data["rays"]))
    return src


_IDENTITY_CLAIM = ("forall phi P A X, two2 P -> two2 A -> Forall two X -> attention Ralg phi A "
                   "(map (mat_vec Ralg P) X) = map (mat_vec Ralg P) (attention Ralg phi (mat_mul2 (transpose2 P) "
                   "(mat_mul2 A P)) X)")


def claim_statement(point: dict) -> str:
    """The Coq statement of a point's claim (about the names :func:`point_definitions` defines).

    >>> claim_statement({"kind": "dimension", "claim": {"degree": 4, "rank": 7}})
    'rank_at_least (qray 4 (native_jacobian Qalg 5 layers rays)) 7'
    """
    kind, c = point["kind"], point.get("claim", {})
    if kind == "spectrum":
        M = max(c["orders"]) + 1
        return f"smith_form {M} (native_jacobian Qalg {M} layers bank) {nat_list(c['orders'])} {int(c['kernel'])}"
    if kind == "jet":
        N = int(c["degree"])
        return (f"sharp_degree (effective_jacobian Qalg {N + 1} scores (constant L) rays) {int(c['parameters'])} "
                f"{N} {nat_list(c['last'])}")
    if kind == "dimension":
        N = int(c["degree"])
        return f"rank_at_least (qray {N} (native_jacobian Qalg {N + 1} layers rays)) {int(c['rank'])}"
    return _IDENTITY_CLAIM


def _describe_point(point: dict) -> list[str]:
    """The point in words, for the header of a certificate and of its claim file."""
    if point["kind"] == "identity":
        return ["Point: none (the statement holds for every normalizer, value, score and input)."]
    a = point["architecture"]
    seed = "given by hand" if point.get("seed") is None else f"seed {point['seed']}"
    sizes = ", ".join(f"{k} {len(v)}" for k, v in point["data"].items() if isinstance(v, list))
    return [f"Point: depth {a['depth']}, widths {a['widths']}, head widths {a['ranks']}, n = {a['tokens']}, "
            f"normalizers {a['normalizers']}; {seed}; data ({sizes}) as defined below;",
            f"point digest sha256 {point_digest(point)}."]


def claim_source(name: str, point: dict) -> str:
    """The claim file of certificate ``name``: the point and the claim as symattn printed them,
    checked against ``certificates/NAME.v`` (its data must be the same, ``eq_refl``; its theorem must
    prove this statement), then ``Print Assumptions`` (read by the Makefile)."""
    if not NAME_PATTERN.fullmatch(name):
        raise SymattnError(f"not a Coq module name: {name[:80]!r}")
    kind = point["kind"]
    src = _header(f"Claim of {name}, about the point of the printed result", [
        "Written by symattn from the result it printed; make checks that certificates/" + name + ".v",
        "proves exactly this statement about exactly this point, with no assumption beyond Coq's",
        "standard library.", *_describe_point(point)], claim=True)
    if kind == "identity":
        src = src.replace("From Symattn Require Import Alg Network Jacobian Rank Smith Bounds Checker.",
                          "From Coq Require Import Reals.\nFrom Symattn Require Import Alg Network Identity.")
    src += f"From Cert Require {name}.\n\n" + point_definitions(point)
    for k in (*_DATA[kind], *(("normalizers",) if kind != "identity" else ())):
        src += f"Example same_{k} : Cert.{name}.{k} = {k} := eq_refl.\n"
    src += f"\nTheorem claim :\n  {claim_statement(point)}.\nProof. exact Cert.{name}.{name}. Qed.\n"
    src += "Print Assumptions claim.\n"
    return src


def spectrum_certificate(arch: Architecture, bank: np.ndarray, U, W, V, orders: Sequence[int], kernel: int,
                         name: str = "spectrum_case", statement: str = "", seed: "int | None" = None) -> Certificate:
    """The certificate of ``smith_form M J orders kernel`` for the Jacobian ``J`` of the native
    network along ``Q_i = t U_i``, ``K_i = t W_i``, ``V_i`` on ``bank``, with ``M = max(orders) + 1``.

    ``orders`` (sorted, with multiplicities) and ``kernel`` are the claim, from symattn's own
    computation; the witness is built here: the visible columns and kernel directions of
    :class:`~symattn.model.symmetries.GaugeKernel`, pivot rows of the divided frame and the
    inverses mod p of the frame and of ``B(0)``, from the modular Jacobian.
    ``name`` is the readable prefix of the module name (:func:`certificate_name`); ``seed`` is
    recorded in the point.
    """
    orders = [int(o) for o in orders]
    if sorted(orders) != orders:
        raise SymattnError("the claimed orders must be sorted")
    M = max(orders) + 1
    d, n, P = arch.d, arch.tokens, arch.native_size
    p = MODULUS
    theta = NativeParams(tuple(U), tuple(W), tuple(V))
    gk = GaugeKernel(arch, theta)
    vis = [c for _, _, cols in gk.visible_blocks() for c in cols]
    xi = []
    for symmetry in gk.symmetries:  # interface directions move with t along the path; gauges do not
        direction = symmetry.vector
        coeffs = path_direction(arch, direction) if symmetry.kind == "interface" else np.stack(
            [np.asarray(direction, dtype=object), np.zeros(P, dtype=object)])
        xi.append([[coeffs[0][j], coeffs[1][j]] for j in range(P)])
    r = len(orders)
    if len(vis) != r:
        raise SymattnError(f"{r} claimed orders but {len(vis)} visible columns: nothing to certify")
    # B(0) = (e_vis | xi(0)) and its inverse mod p
    B0 = np.zeros((P, P), dtype=object)
    for c, j in enumerate(vis):
        B0[j, c] = 1
    for k, x in enumerate(xi):
        for j in range(P):
            B0[j, r + k] = fraction(x[j][0])
    WB = inverse_mod(np.vectorize(lambda v: _reduce(v, p), otypes=[object])(B0), p)
    # the divided frame mod p, rows in Coq's order
    from symattn.analyses.collapse import bank_jacobian

    X = np.asarray(bank, dtype=object)
    J = bank_jacobian(arch, X, U, W, V, SeriesAlgebra(PrimeField(p), M), verify=0)
    order = coq_row_order(len(X), d, n)
    F = np.array([[int(J[orders[c]][order[i], vis[c]]) for c in range(r)] for i in range(len(order))],
                 dtype=object).reshape(len(order), r)
    rows = pivot_rows(F, p)
    if len(rows) < r:
        raise SymattnError(f"the divided frame has rank {len(rows)} < {r} mod p: the bank does not separate")
    WE = inverse_mod(F[rows], p)
    phis = [normalizer_term(phi, M) for phi in arch.normalizers]
    lines = [statement or "Theorem 4 / Prop. D.1: native contact spectrum.",
             f"Architecture: D = {arch.depth}, d = {d}, r = {list(arch.ranks)}, n = {n}, "
             f"normalizers {[phi.name for phi in arch.normalizers]} ({'; '.join(sorted({h for _, h in phis}))}).",
             f"Path Q_i = t U_i, K_i = t W_i, V_i; bank of {len(X)} inputs; {P} native parameters.",
             f"Claim: the Smith orders over Q[t]/(t^{M}) of the bank Jacobian in all native parameters",
             f"are {orders} and {kernel} zeros."]
    point = certificate_point("spectrum", arch, seed, {"U": list(U), "W": list(W), "V": list(V), "bank": list(X)},
                              {"orders": orders, "kernel": int(kernel)}, M)
    name = certificate_name(name, point)
    src = _header("Certificate: native contact spectrum", lines + _describe_point(point))
    src += point_definitions(point)
    src += "(** The witness: checked, not trusted. *)\n"
    src += "Definition witness : spectrum_witness := {|\n"
    src += f"  sw_vis := {nat_list(vis)};\n"
    src += "  sw_xi := [" + ";\n    ".join("[" + "; ".join(qseries(e) for e in x) + "]" for x in xi) + "];\n"
    src += f"  sw_rows := {nat_list(rows)};\n"
    src += f"  sw_p := {p}%uint63;\n"
    src += f"  sw_WB := {zmat(WB)};\n"
    src += f"  sw_WE := {zmat(WE)} |}}.\n"
    values = [v for A in list(U) + list(W) + list(V) + list(X) for v in np.asarray(A, dtype=object).reshape(-1)]
    values += [v for x in xi for e in x for v in e]
    src += "Definition zeros : zero_witness :=\n  " + _zero_witness(zero_bases(values, n, M, _phi_data(arch, M))) + ".\n\n"
    claim = claim_statement(point)
    src += f"Theorem {name} :\n  {claim}. (* claim *)\n"
    src += (f"Proof. apply (check_spectrum_mod_sound {M} layers bank _ _ witness zeros). "
            "vm_compute. reflexivity. Qed.\n")
    return Certificate(name, "spectrum", lines[0], claim, src, point=point)


def pivot_columns(A: np.ndarray, p: int) -> list[int]:
    """Indices of a maximal set of columns of ``A`` independent mod ``p`` (the pivots).

    >>> pivot_columns(np.array([[1, 2, 0], [2, 4, 1]]), 7)
    [0, 2]
    """
    return pivot_rows(np.asarray(A).T, p) if A.size else []


def _ray_rows(J: np.ndarray, inputs: int, d_out: int, n: int) -> np.ndarray:
    """The ray coefficient matrix (``ray_coefficients`` of ``Checker.v``) from a ray Jacobian
    ``J`` of shape ``(N + 1, rows, P)`` in Python's row order (input, coordinate, token): Coq's
    rows are (input, token, coordinate, degree)."""
    order = coq_row_order(inputs, d_out, n)
    K = J.shape[0]
    return np.array([[int(J[k][r][j]) for j in range(J.shape[2])] for r in order for k in range(K)],
                    dtype=object).reshape(len(order) * K, J.shape[2])


def _square_witness(A: np.ndarray, columns: Sequence[int], p: int) -> tuple[list[int], list[list[int]]]:
    """Rows ``I`` with ``A[I][:, columns]`` invertible mod p, and its inverse."""
    sub = A[:, list(columns)]
    rows = pivot_rows(sub, p)
    if len(rows) < len(columns):
        raise SymattnError(f"rank {len(rows)} < {len(columns)} mod p: nothing to certify")
    return rows, inverse_mod(sub[rows], p)


def jet_certificate(arch: Architecture, eta, rays: np.ndarray, degree: int, name: str = "jet_case",
                    exact_last: bool = True, seed: "int | None" = None) -> Certificate:
    """The certificate of ``sharp_degree J P N last`` (``Checker.v``): the ray Jacobian of the
    effective network at ``eta`` on ``rays`` (``X = rho Y``) through degree ``N = degree`` has
    full column rank (a mod-p inverse witness), and its ``M_D`` columns vanish below degree ``N``
    (computed over Q by Coq).
    """
    from symattn.analyses.jets import ray_jacobian

    p = MODULUS
    N = int(degree)
    names = list(eta.as_dict())
    P = sum(eta.as_dict()[k].size for k in names)
    Y = np.asarray(rays, dtype=object)
    J = ray_jacobian(arch, eta, Y, SeriesAlgebra(PrimeField(p), N + 1))
    A = _ray_rows(J, len(Y), arch.widths[-1], arch.tokens)
    rows, Winv = _square_witness(A, range(P), p)
    last = list(range(P - eta.M[-1].size, P))
    phis = [normalizer_term(phi, N + 1) for phi in arch.normalizers]
    lines = ["Theorem 3 / Prop. C.1: sharp zero-input jet degree.",
             f"Architecture: D = {arch.depth}, widths {list(arch.widths)}, n = {arch.tokens}, normalizers "
             f"{[phi.name for phi in arch.normalizers]} ({'; '.join(sorted({h for _, h in phis}))}).",
             f"Effective point (L, M_1..M_D) exact rational; {len(Y)} rays X = rho Y; {P} effective parameters.",
             f"Claim: the ray coefficients through degree {N} have full column rank {P} (D T_{N} injective on",
             f"these rays), and the entries of M_D enter no ray coefficient below degree {N}."]
    point = certificate_point("jet", arch, seed, {"L": eta.L, "Ms": list(eta.M), "rays": list(Y)},
                              {"degree": N, "parameters": P, "last": last}, N + 1)
    name = certificate_name(name, point)
    src = _header("Certificate: sharp jet degree", lines + _describe_point(point))
    src += point_definitions(point)
    src += "(** The witness: checked, not trusted. *)\n"
    src += (f"Definition witness : rank_witness := {{| rw_cols := []; rw_rows := {nat_list(rows)}; "
            f"rw_p := {p}%uint63;\n  rw_W := {zmat(Winv)} |}}.\n")
    values = [v for A in [eta.L, *eta.M, *Y] for v in np.asarray(A, dtype=object).reshape(-1)]
    src += ("Definition zeros : zero_witness :=\n  "
            + _zero_witness(zero_bases(values, arch.tokens, N + 1, _phi_data(arch, N + 1))) + ".\n\n")
    claim = claim_statement(point)
    src += f"Theorem {name} :\n  {claim}. (* claim *)\n"
    src += (f"Proof. apply (check_jet_mod_sound {N} scores (constant L) rays _ witness zeros). "
            "vm_compute. reflexivity. Qed.\n")
    return Certificate(name, "jet", lines[0], claim, src, point=point)


def _rays_def(Y) -> str:
    """The Coq definition of the ray inputs ``X = rho Y``."""
    return "Definition rays : list QSM := map ray_input [" + "; ".join(_tokens(y) for y in Y) + "].\n\n"


def dimension_certificate(arch: Architecture, theta: NativeParams, rays: np.ndarray, degree: int, rank: int,
                          name: str = "dimension_case", seed: "int | None" = None) -> Certificate:
    """The certificate of ``rank_at_least A rank`` for the ray coefficient matrix ``A``
    (through ``degree``) of the native network's Jacobian at ``theta`` on ``rays``: the
    lower bound of the neuromanifold dimension (Henry-Marchetti-Kohn)."""
    from symattn.analyses.jets import ray_jacobian

    p = MODULUS
    N = int(degree)
    Y = np.asarray(rays, dtype=object)
    J = ray_jacobian(arch, theta, Y, SeriesAlgebra(PrimeField(p), N + 1))
    A = _ray_rows(J, len(Y), arch.widths[-1], arch.tokens)
    cols = pivot_columns(A, p)
    if len(cols) < rank:
        raise SymattnError(f"rank {len(cols)} < {rank} mod p: nothing to certify")
    cols = cols[:rank]
    rows, Winv = _square_witness(A, cols, p)
    phis = [normalizer_term(phi, N + 1) for phi in arch.normalizers]
    lines = ["Neuromanifold dimension (Henry-Marchetti-Kohn): lower bound.",
             f"Architecture: widths {list(arch.widths)}, head widths {list(arch.ranks)}, n = {arch.tokens}, "
             f"normalizers {[phi.name for phi in arch.normalizers]} ({'; '.join(sorted({h for _, h in phis}))}).",
             f"Native point (Q_i, K_i, V_i) exact rational; {len(Y)} rays X = rho Y; degree {N}.",
             f"Claim: the native Jacobian of the ray coefficients has rank at least {rank}, hence so has",
             "D(theta -> F_theta) at this point, and the neuromanifold has dimension at least that."]
    point = certificate_point("dimension", arch, seed, {"Qs": list(theta.Q), "Ks": list(theta.K), "Vs": list(theta.V),
                                                        "rays": list(Y)}, {"degree": N, "rank": int(rank)}, N + 1)
    name = certificate_name(name, point)
    src = _header("Certificate: dimension lower bound", lines + _describe_point(point))
    src += point_definitions(point)
    src += "(** The witness: checked, not trusted. *)\n"
    src += (f"Definition witness : rank_witness := {{| rw_cols := {nat_list(cols)}; rw_rows := {nat_list(rows)};\n"
            f"  rw_p := {p}%uint63; rw_W := {zmat(Winv)} |}}.\n\n")
    claim = claim_statement(point)
    src += f"Theorem {name} :\n  {claim}. (* claim *)\n"
    src += (f"Proof. apply (check_native_rank_sound {N} layers rays {int(rank)} witness). "
            "vm_compute. reflexivity. Qed.\n")
    return Certificate(name, "dimension", lines[0], claim, src, point=point)


def identity_certificate(name: str = "identity_A3") -> Certificate:
    """Eq. (A.3) and eq. (3) at width 2 for any normalizer: the theorems of ``Identity.v``,
    restated (no data: they hold for every 2 x 2 value, score and input and every ``phi``)."""
    lines = ["Theorem 1, eq. (3) / (A.3): S_A(P X) = P S_{P^T A P}(X) and the reduction pi, width 2.",
             "For every normalizer phi : R -> R, every 2 x 2 P, A, every depth and every token count."]
    point = certificate_point("identity", None, None, {}, {})
    name = certificate_name(name, point)
    src = _header("Certificate: eq. (A.3) and eq. (3)", lines).replace(
        "From Symattn Require Import Alg Network Jacobian Rank Smith Bounds Checker.",
        "From Coq Require Import Reals.\nFrom Symattn Require Import Alg Network Identity.")
    claim = claim_statement(point)
    src += f"Theorem {name} :\n  {claim}. (* claim *)\n"
    src += "Proof. intros; apply layer_identity; auto. Qed.\n\n"
    src += ("Theorem reduction_width2 : forall (N : Type) (ph : N -> R -> R) layers X, Forall (square2 N) layers ->\n"
            "  Forall two X -> X <> [] -> native_net Ralg N ph layers X =\n"
            "  effective_net Ralg N ph (fst (reduction N layers)) (snd (reduction N layers)) X.\n"
            "Proof. intros; apply reduction_d2; auto. Qed.\n")
    return Certificate(name, "identity", lines[0], claim, src, point=point)


#: The folders of a Coq project symattn writes, each with its manifest.
SUBFOLDERS = ("theories", "certificates", "claims")

#: What ``Print Assumptions`` may list, by full name: the standard library's primitive 63-bit
#: integers (the operations and their specifications) and, for the identity (``Identity.v``), the
#: reals' axioms. Anything else (an ``Admitted`` certificate, an axiom) fails ``make``.
ALLOWED_AXIOMS = (
    *(f"PrimInt63.{op}" for op in ("int", "add", "sub", "mul", "mod", "div", "eqb", "ltb", "leb", "land", "lor",
                                   "lxor", "lsl", "lsr", "compare", "addc", "subc", "addcarryc", "subcarryc",
                                   "mulc", "diveucl", "diveucl_21", "addmuldiv", "head0", "tail0")),
    *(f"Uint63.{spec}" for spec in ("of_to_Z", "add_spec", "sub_spec", "mul_spec", "mod_spec", "div_spec", "eqb_refl",
                                    "eqb_correct", "ltb_spec", "leb_spec", "land_spec", "lor_spec", "lxor_spec",
                                    "lsl_spec", "lsr_spec", "compare_def_spec", "addc_def_spec", "subc_def_spec",
                                    "addcarryc_def_spec", "subcarryc_def_spec", "mulc_spec", "diveucl_def_spec",
                                    "diveucl_21_spec", "addmuldiv_def_spec", "head0_spec", "tail0_spec", "land_spec'",
                                    "bit_spec")),
    "ClassicalDedekindReals.sig_forall_dec", "ClassicalDedekindReals.sig_not_dec",
    "FunctionalExtensionality.functional_extensionality_dep")


def _refuse_links(root: Path) -> None:
    """No symbolic link anywhere on the path of ``root`` (every existing component of its
    absolute path) nor at its project folders; each project folder is a folder or absent."""
    absolute = Path(os.path.abspath(root))
    for part in [*reversed(absolute.parents), absolute, *(absolute / sub for sub in SUBFOLDERS)]:
        try:
            info = os.lstat(part)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise SymattnError(f"cannot read {str(part)[:200]!r}: {exc.strerror}") from None
        if stat.S_ISLNK(info.st_mode):
            raise SymattnError(f"{str(part)[:200]!r} is a symbolic link: symattn never writes a Coq folder "
                               "through a link; give the real path or another folder")
        if not stat.S_ISDIR(info.st_mode):
            raise SymattnError(f"{str(part)[:200]!r} is not a folder: cannot write the Coq folder there")


def _foreign_sources(folder: Path, owned: dict, writing) -> list[str]:
    """The ``.v`` files of ``folder`` that symattn's manifest does not list unchanged (and that
    this run does not write)."""
    try:
        names = sorted(e.name for e in os.scandir(folder) if e.name.endswith(".v"))
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise SymattnError(f"cannot list {str(folder)[:200]!r}: {exc.strerror}") from None
    return [n for n in names if n not in owned and n not in writing]


def makefile_source(theory: Sequence[str], names: Sequence[str]) -> str:
    """The project's Makefile: compile the theory (in dependency order), each certificate and its
    claim file, and fail unless ``Print Assumptions`` of every claim lists only
    :data:`ALLOWED_AXIOMS` (the default target ``all``). Every name is a checked module name, so
    nothing from a file name reaches the shell."""
    for n in [*theory, *names]:
        if not NAME_PATTERN.fullmatch(n):
            raise SymattnError(f"not a Coq module name: {n[:80]!r}")
    allowed = "|".join(re.escape(a).replace("'", "") for a in ALLOWED_AXIOMS if "'" not in a)
    out = ["# Written by symattn. make (target all) compiles the theory, every certificate and the claim",
           "# file of each (the point and the claim symattn printed), and fails unless Print Assumptions",
           "# of every claim lists nothing beyond Coq's standard library (the primitive 63-bit integers;",
           "# the reals' axioms for the identity).",
           "COQC ?= coqc", "COQFLAGS = -Q theories Symattn -Q certificates Cert -Q claims Claim",
           "THEORY = " + " ".join(f"theories/{t}.vo" for t in theory),
           "CLAIMS = " + " ".join(f"claims/{n}.checked" for n in names), "",
           "all: $(THEORY) $(CLAIMS)", "", ".PHONY: all clean", ""]
    for i, t in enumerate(theory):
        deps = " ".join(f"theories/{u}.vo" for u in theory[:i])
        out += [f"theories/{t}.vo: theories/{t}.v {deps}".rstrip(), f"\t$(COQC) $(COQFLAGS) theories/{t}.v", ""]
    for n in names:
        out += [f"certificates/{n}.vo: certificates/{n}.v $(THEORY)", f"\t$(COQC) $(COQFLAGS) certificates/{n}.v", "",
                f"claims/{n}.checked: claims/{n}.v certificates/{n}.vo",
                f"\t@rm -f claims/{n}.checked",
                f"\t$(COQC) $(COQFLAGS) claims/{n}.v > claims/{n}.assumptions",
                f"\t@if grep -Ev '^(Axioms:|Closed under the global context|[[:space:]]|({allowed})( |$$))' "
                f"claims/{n}.assumptions | grep -q .; then cat claims/{n}.assumptions; "
                f"echo 'FAILED: {n} rests on assumptions beyond the standard library'; exit 1; fi",
                f"\t@echo 'checked: {n}' > claims/{n}.checked", ""]
    out += ["clean:", "\trm -f theories/*.vo theories/*.vo? theories/*.glob certificates/*.vo certificates/*.vo? "
            "certificates/*.glob claims/*.vo claims/*.vo? claims/*.glob claims/*.assumptions claims/*.checked", ""]
    return "\n".join(out)


def write_project(directory: "str | Path", certificates: Sequence[Certificate], force: bool = False,
                  claims: "Sequence[dict] | None" = None) -> Path:
    """Write ``directory``: ``theories/`` (a copy of the theory), ``certificates/`` (one ``.v`` each),
    ``claims/`` (the claim file of each: :func:`claim_source`), ``_CoqProject`` and a ``Makefile``
    (:func:`makefile_source`).

    Everything is checked before anything is written: no symbolic link on the path or at a
    project folder, no ``.v`` file in a project folder that symattn did not write (without
    ``force``; with it, such a file stays and is neither listed nor built), and every target
    as :func:`symattn.core.output.write_folder` checks it (a file symattn did not write, or that
    changed since, is not replaced without ``force``). A theory file already equal to the theory
    is left as it is, so its compiled ``.vo`` stays valid. The project lists exactly the files the
    manifests list unchanged: the theory and the certificates (of this and earlier runs) that have
    their claim file.

    Parameters
    ----------
    directory : the project folder (made if missing)
    certificates : the certificates to write
    force : replace files symattn did not write, and ignore foreign ``.v`` files
    claims : the point of each certificate as the printed result gives it (default: the
        certificate's own); the claim file is written from it, so ``make`` checks the
        certificate against the printed point

    Returns
    -------
    Path
        The directory.

    Raises
    ------
    SymattnError
        A check failed; nothing was written.

    >>> import tempfile
    >>> root = write_project(tempfile.mkdtemp(), [identity_certificate("q")])
    >>> sorted(p.name for p in root.iterdir())
    ['Makefile', '_CoqProject', 'certificates', 'claims', 'symattn-manifest.json', 'theories']
    >>> write_project(root, [identity_certificate("q")]) == root       # symattn's own files: replaced
    True
    >>> name = identity_certificate("q").name
    >>> _ = (root / "certificates" / f"{name}.v").write_text("(* the user's edit *)")
    >>> write_project(root, [identity_certificate("q")])
    Traceback (most recent call last):
    ...
    symattn.core.errors.SymattnError: refusing to overwrite q_...v in ... give --force to replace them, or another folder
    """
    from symattn.core.output import check_folder, check_folder_files, owned_files, terminal_text, write_folder

    root = check_folder(directory, "Coq folder")
    _refuse_links(root)
    claims = [c.point for c in certificates] if claims is None else list(claims)
    if len(claims) != len(certificates):
        raise ValueError("one claim per certificate")
    src = theory_dir()
    theory = {f"{name}.v": (src / f"{name}.v").read_bytes() for name in THEORY_FILES}
    changed = {name: data for name, data in theory.items() if _plain_bytes(root / "theories" / name) != data}
    files = {"theories": changed,
             "certificates": {f"{c.name}.v": c.source.encode() for c in certificates},
             "claims": {f"{c.name}.v": claim_source(c.name, point).encode() for c, point in zip(certificates, claims)}}
    owned = {sub: owned_files(root / sub) for sub in SUBFOLDERS}
    if not force:
        for sub in SUBFOLDERS:
            foreign = _foreign_sources(root / sub, owned[sub], files[sub])
            if foreign:
                raise SymattnError(f"{terminal_text(str(root / sub), 120)} holds {terminal_text(foreign[0], 80)}"
                                   f"{f' and {len(foreign) - 1} more' if len(foreign) > 1 else ''}, which symattn "
                                   "did not write (or which changed since); symattn builds only its own files: "
                                   "move it away, give another folder, or --force to leave it unbuilt")
    # the certificates listed: this run's and the earlier ones still unchanged, each with its claim file
    listed = sorted({n[:-2] for n in owned["certificates"] if n.endswith(".v") and n[:-2] and
                     NAME_PATTERN.fullmatch(n[:-2]) and n in owned["claims"]} | {c.name for c in certificates})
    project = ("-Q theories Symattn\n-Q certificates Cert\n-Q claims Claim\n"
               + "".join(f"theories/{t}.v\n" for t in THEORY_FILES)
               + "".join(f"certificates/{n}.v\nclaims/{n}.v\n" for n in listed)).encode()
    top = {"_CoqProject": project, "Makefile": makefile_source(THEORY_FILES, listed).encode()}
    for sub in SUBFOLDERS:  # every target checked before the first write
        if files[sub]:
            check_folder_files(root / sub, files[sub], force, "Coq folder")
    check_folder_files(root, top, force, "Coq folder")
    for sub in SUBFOLDERS:
        if files[sub]:
            write_folder(root / sub, files[sub], force, "Coq folder")
    write_folder(root, top, force, "Coq folder")
    return root


def _plain_bytes(path: Path) -> "bytes | None":
    """The bytes of ``path`` if it is a regular file (not a link), else None."""
    try:
        return path.read_bytes() if path.is_file() and not path.is_symlink() else None
    except OSError:
        return None
