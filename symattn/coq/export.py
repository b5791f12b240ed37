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

import shutil
import subprocess
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

__all__ = ["Certificate", "THEORY_FILES", "theory_dir", "spectrum_certificate", "jet_certificate",
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
    """One claim for Coq: the module ``name`` (a ``.v`` file) and what it states."""

    name: str
    kind: str
    statement: str
    claim: str
    source: str
    notes: list[str] = field(default_factory=list)


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


def _header(title: str, lines: Sequence[str]) -> str:
    body = "\n".join(f"    {line}" for line in lines)
    return (f"(** * {title}\n\n{body}\n\n    Written by symattn (untrusted); checked by Coq's kernel at Qed. *)\n\n"
            "From Coq Require Import List QArith ZArith Uint63.\n"
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


def spectrum_certificate(arch: Architecture, bank: np.ndarray, U, W, V, orders: Sequence[int], kernel: int,
                         name: str = "spectrum_case", statement: str = "") -> Certificate:
    """The certificate of ``smith_form M J orders kernel`` for the Jacobian ``J`` of the native
    network along ``Q_i = t U_i``, ``K_i = t W_i``, ``V_i`` on ``bank``, with ``M = max(orders) + 1``.

    ``orders`` (sorted, with multiplicities) and ``kernel`` are the claim, from symattn's own
    computation; the witness is built here: the visible columns and kernel directions of
    :class:`~symattn.model.symmetries.GaugeKernel`, pivot rows of the divided frame and the
    inverses mod p of the frame and of ``B(0)``, from the modular Jacobian.
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
    src = _header("Certificate: native contact spectrum", lines)
    src += "Definition U : list QM := [" + "; ".join(qmat(u) for u in U) + "].\n"
    src += "Definition W : list QM := [" + "; ".join(qmat(w) for w in W) + "].\n"
    src += "Definition V : list QM := [" + "; ".join(qmat(v) for v in V) + "].\n"
    src += _normalizers_def(phis)
    src += "Definition layers := path_layers normalizers U W V.\n"
    src += "Definition bank : list QSM := map fixed_input [" + "; ".join(_tokens(x) for x in X) + "].\n\n"
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
    claim = (f"smith_form {M} (native_jacobian Qalg {M} layers bank) {nat_list(orders)} {int(kernel)}")
    src += f"Theorem {name} :\n  {claim}. (* claim *)\n"
    src += (f"Proof. apply (check_spectrum_mod_sound {M} layers bank _ _ witness zeros). "
            "vm_compute. reflexivity. Qed.\n")
    return Certificate(name, "spectrum", lines[0], claim, src)


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
                    exact_last: bool = True) -> Certificate:
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
    src = _header("Certificate: sharp jet degree", lines)
    src += "Definition L : QM := " + qmat(eta.L) + ".\n"
    src += "Definition Ms : list QM := [" + "; ".join(qmat(m) for m in eta.M) + "].\n"
    src += _normalizers_def(phis)
    src += "Definition scores := zipw pair normalizers (map constant Ms).\n"
    src += _rays_def(Y)
    src += "(** The witness: checked, not trusted. *)\n"
    src += (f"Definition witness : rank_witness := {{| rw_cols := []; rw_rows := {nat_list(rows)}; "
            f"rw_p := {p}%uint63;\n  rw_W := {zmat(Winv)} |}}.\n")
    values = [v for A in [eta.L, *eta.M, *Y] for v in np.asarray(A, dtype=object).reshape(-1)]
    src += ("Definition zeros : zero_witness :=\n  "
            + _zero_witness(zero_bases(values, arch.tokens, N + 1, _phi_data(arch, N + 1))) + ".\n\n")
    claim = (f"sharp_degree (effective_jacobian Qalg {N + 1} scores (constant L) rays) {P} {N} {nat_list(last)}")
    src += f"Theorem {name} :\n  {claim}. (* claim *)\n"
    src += (f"Proof. apply (check_jet_mod_sound {N} scores (constant L) rays _ witness zeros). "
            "vm_compute. reflexivity. Qed.\n")
    return Certificate(name, "jet", lines[0], claim, src)


def _normalizers_def(phis) -> str:
    """The Coq definition of the normalizers' Taylor terms (``normalizer_term`` pairs)."""
    return "Definition normalizers : list (list Q) := [" + "; ".join(t for t, _ in phis) + "].\n"


def _rays_def(Y) -> str:
    """The Coq definition of the ray inputs ``X = rho Y``."""
    return "Definition rays : list QSM := map ray_input [" + "; ".join(_tokens(y) for y in Y) + "].\n\n"


def dimension_certificate(arch: Architecture, theta: NativeParams, rays: np.ndarray, degree: int, rank: int,
                          name: str = "dimension_case") -> Certificate:
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
    src = _header("Certificate: dimension lower bound", lines)
    src += "Definition Qs : list QM := [" + "; ".join(qmat(x) for x in theta.Q) + "].\n"
    src += "Definition Ks : list QM := [" + "; ".join(qmat(x) for x in theta.K) + "].\n"
    src += "Definition Vs : list QM := [" + "; ".join(qmat(x) for x in theta.V) + "].\n"
    src += _normalizers_def(phis)
    src += "Definition layers := point_layers normalizers Qs Ks Vs.\n"
    src += _rays_def(Y)
    src += "(** The witness: checked, not trusted. *)\n"
    src += (f"Definition witness : rank_witness := {{| rw_cols := {nat_list(cols)}; rw_rows := {nat_list(rows)};\n"
            f"  rw_p := {p}%uint63; rw_W := {zmat(Winv)} |}}.\n\n")
    claim = f"rank_at_least (qray {N} (native_jacobian Qalg {N + 1} layers rays)) {int(rank)}"
    src += f"Theorem {name} :\n  {claim}. (* claim *)\n"
    src += (f"Proof. apply (check_native_rank_sound {N} layers rays {int(rank)} witness). "
            "vm_compute. reflexivity. Qed.\n")
    return Certificate(name, "dimension", lines[0], claim, src)


def identity_certificate(name: str = "identity_A3") -> Certificate:
    """Eq. (A.3) and eq. (3) at width 2 for any normalizer: the theorems of ``Identity.v``,
    restated (no data: they hold for every 2 x 2 value, score and input and every ``phi``)."""
    lines = ["Theorem 1, eq. (3) / (A.3): S_A(P X) = P S_{P^T A P}(X) and the reduction pi, width 2.",
             "For every normalizer phi : R -> R, every 2 x 2 P, A, every depth and every token count."]
    src = _header("Certificate: eq. (A.3) and eq. (3)", lines).replace(
        "From Symattn Require Import Alg Network Jacobian Rank Smith Bounds Checker.",
        "From Coq Require Import Reals.\nFrom Symattn Require Import Alg Network Identity.")
    claim = ("forall phi P A X, two2 P -> two2 A -> Forall two X -> attention Ralg phi A (map (mat_vec Ralg P) X) "
             "= map (mat_vec Ralg P) (attention Ralg phi (mat_mul2 (transpose2 P) (mat_mul2 A P)) X)")
    src += f"Theorem {name} :\n  {claim}. (* claim *)\n"
    src += "Proof. intros; apply layer_identity; auto. Qed.\n\n"
    src += ("Theorem reduction_width2 : forall (N : Type) (ph : N -> R -> R) layers X, Forall (square2 N) layers ->\n"
            "  Forall two X -> X <> [] -> native_net Ralg N ph layers X =\n"
            "  effective_net Ralg N ph (fst (reduction N layers)) (snd (reduction N layers)) X.\n"
            "Proof. intros; apply reduction_d2; auto. Qed.\n")
    return Certificate(name, "identity", lines[0], claim, src)


def write_project(directory: "str | Path", certificates: Sequence[Certificate], force: bool = False) -> Path:
    """Write ``directory``: ``theories/`` (a copy of the theory), ``certificates/`` (one ``.v`` each),
    ``_CoqProject`` and a ``Makefile`` (``coq_makefile``; a plain one when it is absent).

    Every file goes through :func:`symattn.core.output.write_folder` (each of the three folders
    has its manifest): a file symattn did not write, or that changed since, is not replaced
    without ``force``, no symbolic link is written through, and each write is atomic. A theory
    file already equal to the theory is left as it is, so its compiled ``.vo`` stays valid.
    Certificates of earlier runs in ``certificates/`` stay and are listed in the project.

    Returns the directory.

    >>> import tempfile
    >>> root = write_project(tempfile.mkdtemp(), [identity_certificate("q")])
    >>> sorted(p.name for p in root.iterdir())
    ['Makefile', '_CoqProject', 'certificates', 'symattn-manifest.json', 'theories']
    >>> write_project(root, [identity_certificate("q")]) == root       # symattn's own files: replaced
    True
    >>> _ = (root / "certificates" / "q.v").write_text("(* the user's edit *)")
    >>> write_project(root, [identity_certificate("q")])
    Traceback (most recent call last):
    ...
    symattn.core.errors.SymattnError: refusing to overwrite q.v in ... give --force to replace them, or another folder
    """
    from symattn.core.output import check_folder, write_folder

    root = check_folder(directory, "Coq folder")
    src = theory_dir()
    theory = {f"{name}.v": (src / f"{name}.v").read_bytes() for name in THEORY_FILES}
    changed = {name: data for name, data in theory.items() if _plain_bytes(root / "theories" / name) != data}
    if changed:
        write_folder(root / "theories", changed, force, "Coq folder")
    write_folder(root / "certificates", {f"{c.name}.v": c.source.encode() for c in certificates}, force,
                 "Coq folder")
    present = sorted(f"certificates/{f.name}" for f in (root / "certificates").glob("*.v") if f.is_file())
    names = [f"theories/{t}.v" for t in THEORY_FILES] + present
    project = ("-Q theories Symattn\n-Q certificates Cert\n" + "\n".join(names) + "\n").encode()
    if shutil.which("coq_makefile"):
        import tempfile

        with tempfile.TemporaryDirectory(prefix="symattn-coq-makefile-") as tmp:
            (Path(tmp) / "_CoqProject").write_bytes(project)
            subprocess.run(["coq_makefile", "-f", "_CoqProject", "-o", "Makefile"], cwd=tmp, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            makefile = (Path(tmp) / "Makefile").read_bytes()
    else:  # no Coq here: a plain Makefile doing the same, in dependency order
        makefile = ("\n".join(["all:"] + [f"\tcoqc -Q theories Symattn -Q certificates Cert {n}" for n in names])
                    + "\n").encode()
    write_folder(root, {"_CoqProject": project, "Makefile": makefile}, force, "Coq folder")
    return root


def _plain_bytes(path: Path) -> "bytes | None":
    """The bytes of ``path`` if it is a regular file (not a link), else None."""
    try:
        return path.read_bytes() if path.is_file() and not path.is_symlink() else None
    except OSError:
        return None
