"""The mutation catalogue: semantic mutants of the model that ``symattn prove`` must kill.

Each :class:`Mutant` is one small, reproducible source patch (an exact text
replacement in one named file of the repository) with its intent: a plausible
bug in the model or its arithmetic. For every mutant the script copies the
repository (a snapshot taken once, without ``.git`` and the virtual
environment) into a temporary folder, applies the patch there (failing loudly
if the target text does not occur exactly once), and runs the proof registry
of *that copy* with its quick case lists, one proof after the other, exactly as
``symattn prove`` does (``PYTHONPATH`` points to the copy, the working folder
is the copy, and ``symattn/proofs`` in the copy links to its ``proofs/`` folder,
the layout of an installed wheel; the child reports where it imported every
symattn module from, and a module from outside the copy, such as the live
tree's proof scripts through an editable install, stops the run with an
error instead of recording a result). A proof *kills* a mutant when it fails (a failed check, an
exception or its per-proof time limit); the mutant *survives* when every proof
passes. The result is the kill matrix (mutant x proof), written as JSON
(``benchmarks/mutants.json``) and as the reStructuredText page
``docs/mutants.rst``; an equivalent mutant (provably the same function) is
listed with the reason and not run.

Usage (from the repository root, with the project's virtual environment)::

    python benchmarks/mutants.py                 # every mutant, then write the matrix
    python benchmarks/mutants.py --list          # the catalogue only
    python benchmarks/mutants.py --check         # every patch applies (no proof is run)
    python benchmarks/mutants.py tangent-phi-doubled series-recip-sign   # some mutants,
                                                 # merged into the existing matrix
    python benchmarks/mutants.py --first-kill    # stop each mutant at its first killing
                                                 # proof (later proofs shown as not run)
    python benchmarks/mutants.py --first-kill --proofs t9,t11 NAME ...   # only these proofs
    python benchmarks/mutants.py --first-kill --area blind      # the mutants written blind
    python benchmarks/mutants.py --first-kill --since v0.3.0    # the mutants of the files changed since

The full run takes about one ``symattn prove`` per mutant (a minute each on an
idle machine). Caveats: a patch targets the text of the current sources, so a
refactoring of a targeted line makes that mutant fail loudly (``--check``) and
its patch must be updated; a kill by a time limit is reported as such.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MUTANTS", "Mutant", "apply", "blind_rst", "coverage", "kill_matrix_rst", "main", "modules", "run_mutant",
           "select", "snapshot"]

ROOT = Path(__file__).resolve().parents[1]
JSON_PATH = ROOT / "benchmarks" / "mutants.json"
RST_PATH = ROOT / "docs" / "mutants.rst"
#: Seconds allowed to one proof of a mutant (the slowest quick proof takes ~20 s).
PROOF_LIMIT = 240


@dataclass(frozen=True)
class Mutant:
    """One semantic mutant: replace ``old`` by ``new`` (exactly once) in ``path``.

    Attributes
    ----------
    name : str
        A short unique name.
    area : str
        The part of the model it breaks (see :data:`AREAS`).
    path : str
        The file, relative to the repository root.
    old, new : str
        The exact text replaced and its replacement.
    intent : str
        The bug it models, in words.
    equivalent : str
        Empty, or why the mutant computes the same function (then it is not run).
    tests : tuple of str
        Empty (the proofs kill it), or the pytest arguments (a test file and ``-k``) of the
        tests that kill it instead: a protective check of input or files (a store's
        recognition, an overwrite refusal, an escape) that no proof can reach.
    """

    name: str
    area: str
    path: str
    old: str
    new: str
    intent: str
    equivalent: str = ""
    tests: tuple[str, ...] = ()


def _m(name: str, area: str, path: str, old: str, new: str, intent: str, equivalent: str = "",
       tests: tuple[str, ...] = ()) -> Mutant:
    return Mutant(name, area, path, old, new, intent, equivalent, tests)


def _t(name: str, area: str, path: str, old: str, new: str, intent: str, selection: str,
       test_file: str = "tests/test_untrusted_files.py") -> Mutant:
    """A mutant of a protective check that the tests ``-k selection`` of ``test_file`` kill."""
    return Mutant(name, area, path, old, new, intent, "", (test_file, "-k", selection))


_NORM = "symattn/model/normalizer.py"
_LN = "symattn/model/parts/layernorm.py"
_RMS = "symattn/model/parts/rmsnorm.py"
_ACT = "symattn/model/parts/activation.py"
_PARTS_TESTS = "tests/test_parts.py"
_TAN = "symattn/core/algebras/tangent.py"
_SER = "symattn/core/algebras/series.py"
_MOD = "symattn/core/algebras/modular.py"
_GRAPH = "symattn/model/network.py"
_CONST = "symattn/core/algebras/constants.py"
_FRAME = "symattn/analyses/frame_proof.py"
_PARAMS = "symattn/model/parameters.py"
_LIN = "symattn/core/linalg.py"
_GAUGE = "symattn/model/symmetries.py"
_FORM = "symattn/theorems/formulas.py"
_SIG = "symattn/analyses/signatures.py"
_JETS = "symattn/analyses/jets.py"
_FIB = "symattn/analyses/fiber_checks.py"
_NUM = "symattn/analyses/numerics.py"
_GEO = "symattn/analyses/geometry.py"
_SPEC = "symattn/analyses/spectrum.py"
_PATH = "symattn/analyses/collapse.py"
_CERT = "symattn/core/certify.py"
_BALLS = "symattn/core/algebras/balls.py"
_BLK = "symattn/audit/certified.py"
_COQX = "symattn/coq/export.py"
_COQL = "symattn/coq/literals.py"
_STORE = "symattn/sweep/store.py"
_OUT = "symattn/core/output.py"
_RUN = "symattn/sweep/run.py"
_ISO = "symattn/theorems/isolation.py"
_ISO_TESTS = "tests/test_prove_isolation.py"

#: The catalogue.
MUTANTS: tuple[Mutant, ...] = (
    # -- the normalizer's derived data
    _m("normalizer-k-plus-one", "normalizer", _NORM, "self.k: int = k\n", "self.k: int = k + 1\n",
       "the first nonconstant degree k of h = log phi is off by one"),
    _m("normalizer-b-doubled", "normalizer", _NORM, "return self.h_taylor(self.k)[self.k]",
       "return 2 * self.h_taylor(self.k)[self.k]", "the leading coefficient b of h is doubled"),
    _m("normalizer-even-negated", "normalizer", _NORM,
       'return self._parity("phi", lambda: self.expr.subs(S, -S) - self.expr, "phi(-s) = phi(s)")',
       'return not self._parity("phi", lambda: self.expr.subs(S, -S) - self.expr, "phi(-s) = phi(s)")',
       "evenness of phi is reported the wrong way round (sign branches of Thm 1)"),
    _m("normalizer-h-odd-negated", "normalizer", _NORM,
       'return self._parity("h", lambda: self.expr * self.expr.subs(S, -S) - 1, "h(-s) = -h(s)")',
       'return not self._parity("h", lambda: self.expr * self.expr.subs(S, -S) - 1, "h(-s) = -h(s)")',
       "oddness of h (the two-token collapse condition of Thm 2) is reported the wrong way round"),
    _m("normalizer-slope-doubled", "normalizer", _NORM, "return self.h_taylor(1)[1]\n",
       "return 2 * self.h_taylor(1)[1]\n", "the slope h'(0) = g(0) is doubled"),
    _m("normalizer-derivative-coefficients", "normalizer", _NORM,
       "return [coeffs[m + j] * math.perm(m + j, j) for m in range(order + 1)]",
       "return [coeffs[m + j] * math.perm(m + j, j) * (1 + (m == 1)) for m in range(order + 1)]",
       "a Taylor coefficient of every derivative phi^(j) is wrong (the linear one doubled)"),
    # -- tangent rules (forward mode)
    _m("tangent-phi-doubled", "tangent", _TAN,
       "return Dual(value, B.mul(x.tangent, B.phi(x.value, normalizer, derivative + 1, layer)), x.start)",
       "return Dual(value, B.add(*[B.mul(x.tangent, B.phi(x.value, normalizer, derivative + 1, layer))] * 2),"
       " x.start)",
       "the chain rule for phi doubles phi' (the mutant of issue 13)"),
    _m("tangent-reciprocal-sign", "tangent", _TAN,
       "return Dual(inv, B.neg(B.mul(x.tangent, B.mul(inv, inv))), x.start)",
       "return Dual(inv, B.mul(x.tangent, B.mul(inv, inv)), x.start)",
       "d(1/x) = +dx/x^2: the sign of the reciprocal's tangent"),
    _m("tangent-sum-not-broadcast", "tangent", _TAN,
       "return Dual(value, None if tan is None else self._broadcast(tan, value), start)",
       "return Dual(value, tan, start)",
       "a sum where only the broadcast operand moves keeps its narrow tangent (a kernel product of a "
       "LayerNorm's shift alone fails to contract)"),
    _m("tangent-product-rule-half", "tangent", _TAN,
       "t2 = None if ty is None else op(x.value, ty)", "t2 = None",
       "the product rule forgets the second factor's tangent"),
    _m("tangent-sub-sign", "tangent", _TAN, "ty = None if ty is None else B.neg(ty)", "ty = ty",
       "d(x - y) = dx + dy",
       "Tangent.sub is never reached: the network graphs have no subtraction node (ops matmul, "
       "transpose, phi, sum, reciprocal, mul) and no caller subtracts duals; Tangent.neg is its own rule"),
    # -- the series product, reciprocal and exponential
    _m("series-product-top-term", "series", _SER, "if i + lo >= N:", "if i + lo >= N - 1:",
       "the Cauchy product drops the last coefficient's contributions"),
    _m("series-reciprocal-term", "series", _SER, "js = [j for j in support if j <= k]",
       "js = [j for j in support if j < k]",
       "the series reciprocal forgets one convolution term"),
    _m("series-reciprocal-sign", "series", _SER, "out[k] = field.reduce(-acc * w0)",
       "out[k] = field.reduce(acc * w0)", "the recursion of 1/x has the wrong sign"),
    _m("series-phi-horner-short", "series", _SER,
       "top = (self.order - 1) // v if v < self.order else 0",
       "top = max((self.order - 1) // v - 1, 0) if v < self.order else 0",
       "phi of a series (the exponential) is truncated one Taylor degree too early"),
    _m("series-valuation-shift", "series", _SER,
       "return np.where(nz.any(axis=0), nz.argmax(axis=0), self.order)",
       "return np.where(nz.any(axis=0), nz.argmax(axis=0) + (nz.sum(axis=0) > 1), self.order)",
       "the t-adic valuation is one too high when a series has two nonzero coefficients"),
    # -- the modular reduction
    _m("modular-ignores-denominator", "modular", _MOD, "res[nz] = [n * inverses[d] % self.p for n, d in parts]",
       "res[nz] = [n % self.p for n, d in parts]", "a rational's denominator is dropped when it is reduced mod p"),
    _m("modular-inverse-exponent", "modular", _MOD, "e = self.p - 2\n", "e = self.p - 3\n",
       "the inverse mod p uses the wrong Fermat exponent"),
    # -- the softmax axis and the layer (eq. 1)
    _m("softmax-column-axis", "layer", _GRAPH, 'den = b.op(f"{tag}.den", "sum", w, axis=-1)',
       'den = b.op(f"{tag}.den", "sum", w, axis=-2)', "normalization over the keys' axis is swapped"),
    _m("layer-no-transpose", "layer", _GRAPH,
       'return b.op(f"{tag}.S", "matmul", x, b.op(f"{tag}.AT", "transpose", a))',
       'return b.op(f"{tag}.S", "matmul", x, a)', "S = X A instead of X A^T"),
    _m("layer-score-transposed", "layer", _GRAPH,
       'z = scores or b.op(f"{tag}.Z", "matmul", b.op(f"{tag}.XTM", "matmul", xt, m), x)',
       'z = scores or b.op(f"{tag}.Z", "matmul", b.op(f"{tag}.XTM", "matmul", xt, b.op(f"{tag}.MT", "transpose", m)), x)',
       "the score uses M^T (queries and keys exchanged)"),
    # -- the reduction pi (eq. 3)
    _m("reduction-no-conjugation", "reduction", _PARAMS, "M.append(P.T.dot(q.dot(k.T)).dot(P))",
       "M.append(q.dot(k.T))", "pi forgets the prefix P_{i-1} (M_i = A_i)"),
    _m("reduction-order-swapped", "reduction", _PARAMS, "P = v.dot(P)\n", "P = P.dot(v)\n",
       "the value prefix is multiplied in the wrong order"),
    _m("reduction-graph-transpose", "reduction", _GRAPH,
       'pa = b.op(f"PT{i}A", "matmul", b.op(f"PT{i}", "transpose", P), a)',
       'pa = b.op(f"PT{i}A", "matmul", P, a)', "the reduction graph conjugates by P instead of P^T"),
    # -- gauges and interface directions
    _m("gauge-sign", "gauges", "symattn/model/parts/head.py", "yield times_unit(Q, a, b), times_unit(K, b, a, -1)",
       "yield times_unit(Q, a, b), times_unit(K, b, a)", "the factor gauge moves K_i the wrong way"),
    _m("interface-query-sign", "gauges", _GAUGE, "moved[qn] = _unit_times(b, a, theta[qn], -1)",
       "moved[qn] = _unit_times(b, a, theta[qn])", "the interface direction moves Q_{j+1} the wrong way"),
    # -- the bank
    _m("bank-consensus", "bank", _PARAMS,
       "return random_rational_matrix(random.Random(10_007 * seed + 1), (size, arch.widths[0], arch.tokens))",
       "return np.repeat(random_rational_matrix(random.Random(10_007 * seed + 1), (size, arch.widths[0], 1)), "
       "arch.tokens, axis=2)",
       "the input bank holds consensus inputs only (every token equal)"),
    # -- the Smith elimination
    _m("u-series-key-shift", "bank", _PATH, "odd[:, :, k] = G[1: odd.shape[0] + 1][:, :, k]",
       "odd[:, :, k] = G[: odd.shape[0]][:, :, k]",
       "key columns read G(t^2) t instead of G(t^2) / t when the u = t^2 Jacobian is mapped back"),
    _m("majorant-product-too-small", "bank", _CERT,
       "bound = [min(a, b, c) for a, b, c in zip(bound, _convolution(rx[ex], hy, N),",
       "bound = [min(a, b, c) // 8 for a, b, c in zip(bound, _convolution(rx[ex], hy, N),",
       "the majorant of a matrix product is 8 times too small (an unsound height bound: "
       "the column proof would use too few primes)"),
    _m("majorant-convolution-too-small", "bank", _CERT,
       "out = [-((-int(v)) >> HEIGHT_SHIFT) for v in c]",
       "out = [-((-int(v)) >> (HEIGHT_SHIFT + 3)) for v in c]",
       "every fast (fmpz_poly) convolution of majorant heights is 8 times too small: the new "
       "a-priori bound too small, so the column proof would use too few primes"),
    _m("majorant-denominator-short", "bank", _CERT,
       "    return np.maximum(out, 0)\n",
       "    return np.maximum(out - 1, 0)\n",
       "the max-plus convolution of the denominators' exponents drops one power of every prime "
       "(a denominator bound D with D c not integral)"),
    _m("polyseries-mul-drops-top", "bank", "symattn/core/algebras/polyseries.py",
       "self._mul = _ufunc(lambda a, b: a.mul_low(b, N), 2)",
       "self._mul = _ufunc(lambda a, b: a.mul_low(b, N - 1), 2)",
       "the nmod_poly series of the column proof drop the top coefficient of every product "
       "(a coefficient that should be checked is read as zero)"),
    _m("smith-no-elimination", "smith", _LIN,
       "J[np.ix_(range(N), rows, cols)] = algebra.sub(J[:, rows][:, :, cols], update)",
       "J[np.ix_(range(N), rows, cols)] = J[:, rows][:, :, cols]",
       "the Smith reduction pivots but never eliminates (the mutant of issue 13)"),
    _m("smith-divisibility-exponent", "smith", _FORM,
       "return [2 * phi.k - 1 + 2 * e_prev for phi, e_prev in zip(arch.normalizers, e)]",
       "return [2 * phi.k - 1 + e_prev for phi, e_prev in zip(arch.normalizers, e)]",
       "the proven divisibility exponents beta_i of App. D.2 are too small"),
    # -- ranks and the kernel
    _m("rank-mod-p-drops-row", "rank", _LIN, "        return self._flint().rank()\n",
       "        drop = isinstance(self.field, PrimeField) and self.shape[0] > 1\n"
       "        return Matrix(self.entries[:-1] if drop else self.entries, self.field)._flint().rank()\n",
       "the rank mod p ignores the last row"),
    _m("rank-exact-drops-row", "rank", _LIN, "        return self._flint().rank()\n",
       "        drop = isinstance(self.field, Rationals) and self.shape[0] > 1\n"
       "        return Matrix(self.entries[:-1] if drop else self.entries, self.field)._flint().rank()\n",
       "the exact rank ignores the last row"),
    _m("kernel-sign", "kernel", _LIN, "v[p] = self.field.reduce(np.asarray(-echelon.entries[i, free]))[()]",
       "v[p] = self.field.reduce(np.asarray(echelon.entries[i, free]))[()]",
       "the exact null-space basis has the wrong sign"),
    _m("kernel-count", "kernel", _GAUGE, "return len(self.directions), verified",
       "return len(self.directions) + 1, verified",
       "the exact kernel along the path is counted one too large"),
    # -- signatures and amplitudes (App. A)
    _m("amplitude-square", "signatures", _SIG, "out.append(out[-1] ** 3 * mu2 * Ki)",
       "out.append(out[-1] ** 2 * mu2 * Ki)", "the amplitude recursion a_i = a_{i-1}^3 mu2 K_i uses a square"),
    _m("signature-bilinear-swapped", "signatures", _SIG, "return g * v, g * w + dg * u * v",
       "return g * v, g * w + dg * v * v", "K_M uses (m^T M z)^2 instead of (z^T M m)(m^T M z)"),
    _m("sign-branches-absolute", "signatures", _SIG, "out.append(int(-b / a))", "out.append(abs(int(-b / a)))",
       "the sign branches of q_N^k = q_M^k lose the negative branch"),
    # -- jets and rays
    _m("jet-ray-curved", "jets", _JETS, "return algebra.series([np.zeros(Y.shape, dtype=int), Y])",
       "return algebra.series([np.zeros(Y.shape, dtype=int), Y, Y])",
       "the input 'ray' is the curve rho Y + rho^2 Y (jets of mixed degree)",
       "F((rho + rho^2) Y) = sum_j c_j (rho + rho^2)^j, so its coefficients through rho^N are a "
       "unitriangular transform of those of F(rho Y) through rho^N: every cumulative rank and every "
       "first-dependence degree computed from them (all that jets.py reads off the rays) is unchanged"),
    _m("jet-c1-recursion", "jets", _FORM, "alpha = 3 * alpha + 2 * phi.k - 2",
       "alpha = 3 * alpha + phi.k - 1", "the Prop. C.1 recursion for heterogeneous k"),
    _m("jet-even-degree", "jets", _FORM, "return next(j for j in range(2, len(h), 2) if h[j] != 0)",
       "return next(j for j in range(2, len(h), 2) if h[j] != 0) + 2",
       "the first nonzero even degree ell of h (Prop. C.3) is too large"),
    # -- the fiber evidence
    _m("fiber-sign-degree", "fibers", _FORM, "return 2 * alpha + 2 * odd - 1", "return 2 * alpha + 2 * odd - 3",
       "the witness search for a forbidden sign flip stops two degrees below what Prop. C.4 proves "
       "(no witness is found: the fiber is reported undecided instead of verified)"),
    _m("fiber-flip-evidence", "fibers", _FIB,
       'return Evidence(f"{theorem}: flipping M_{i} changes F", not ok and "witness" in detail, detail)',
       'return Evidence(f"{theorem}: flipping M_{i} changes F", True, detail)',
       "a forbidden sign flip is accepted without a witness"),
    # -- the numerical protocols
    _m("protocol-slope-offset", "numerics", _NUM, "a, b = flint.arb(a), flint.arb(b)",
       "a, b = flint.arb(a), flint.arb(b) * 2", "the final-pair slope estimator is biased"),
    _m("protocol-complement-drops", "numerics", _LIN, "basis, nullity = flint.fmpz_mat(rows).nullspace()",
       "basis, nullity = flint.fmpz_mat(rows[:-1]).nullspace()",
       "the complement of the gauges keeps one gauge direction"),
    # -- the proof registry
    _m("registry-strongest-kind", "registry", "symattn/theorems/registry.py",
       "return max((check.kind for check in derivation.checks), key=KINDS.index)",
       "return min((check.kind for check in derivation.checks), key=KINDS.index)",
       "a proof's kind is taken from its strongest check, so a certified or numerical proof is labelled exact"),
    # -- proof packages run isolated (issue 43): the children of symattn prove, tests kill them
    _t("isolation-bool-counts-as-cases", "registry", _ISO,
       "if not isinstance(value, kind) or isinstance(value, bool):", "if not isinstance(value, kind):",
       "a child's message with cases: true is accepted (the schema check lets a bool pass as an int)",
       "malformed", _ISO_TESTS),
    _t("isolation-dead-proof-dropped", "registry", _ISO,
       "            self._fail_proof(proofs[settled], why, _clock() - started)\n            return settled + 1",
       "            return settled + 1",
       "a proof whose process ended (os._exit, a crash, a signal) leaves no row: the table looks green",
       "fails_alone", _ISO_TESTS),
    _t("isolation-control-characters-shown", "registry", _ISO,
       "return \"\".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))",
       "return \"\".join(c if c.isprintable() or c in \"\\n\\x1b\" else repr(c)[1:-1] for c in str(text))",
       "a newline or an escape code of a STATEMENT reaches the table (a forged row, a cleared terminal)",
       "forge_rows or one_line", _ISO_TESTS),
    _t("isolation-group-not-killed", "registry", _ISO,
       "os.killpg(child.pid, signal.SIGKILL)", "os.kill(child.pid, signal.SIGKILL)",
       "on Ctrl-C the child is killed but what it started (a proof's subprocess) is left running",
       "ctrl_c", _ISO_TESTS),
    _t("registry-path-parent-on-sys-path", "registry", "symattn/theorems/registry.py",
       '    return Source(name, name, f"folder {folder}", (str(folder),))',
       '    sys.path.insert(0, str(folder.parent))\n    return Source(name, name, f"folder {folder}", (str(folder),))',
       "a --path folder's parent goes on sys.path: a networkx.py beside the package is imported",
       "beside_a_path_package", _ISO_TESTS),
    # -- proof names (issue 38 item 3): a proof is selected by its id, an alias or its name; tests kill them
    _t("registry-bad-name-accepted", "registry", "symattn/theorems/registry.py",
       "    if not _NAME.match(name):\n", "    if False:\n",
       "a script's NAME that is not a name (spaces, capitals) is accepted and cannot be typed on the command line",
       "bad_one_is_a_user_error", "tests/test_prove.py"),
    _t("registry-name-clash-ignored", "registry", "symattn/theorems/registry.py",
       "if name in named and (declared or named[name][1]):", "if name in named and declared and named[name][1]:",
       "a script declares the default name of another: one name selects two proofs without an error",
       "bad_one_is_a_user_error", "tests/test_prove.py"),
    _t("registry-bad-name-ends-the-run", "registry", "symattn/theorems/registry.py",
       "            if broken is None or source.name == PAPER_SOURCE:\n", "            if True:\n",
       "a proof package with a bad NAME stops every source's proofs instead of failing alone",
       "bad_name_is_that_package", "tests/test_prove.py"),
    _t("registry-name-underscores", "registry", "symattn/theorems/registry.py",
       'return bool(proof.name) and name.replace("_", "-") == proof.name',
       "return bool(proof.name) and name == proof.name",
       "a name typed with underscores (native_contact_spectrum) is an unknown proof",
       "declared_name_selects", "tests/test_prove.py"),
    # -- protective checks of files and input (issue 28): no proof reaches them, tests kill them
    _t("store-header-skipped", "store", _STORE, "        self._check_header()\n",
       "        pass  # self._check_header()\n",
       "a store is opened by SQLite before its header is checked (a foreign database's hot journal "
       "is rolled back: the user's data changes)", "hot_journal"),
    _t("store-ok-replaced", "store", _STORE, 'f"{_UPDATE} WHERE results.status != \'ok\'", values)',
       'f"{_UPDATE} WHERE 1", values)',
       "a stored result is replaced by a later timeout or failure of another sweep", "never_replaced"),
    _t("store-foreign-tables", "store", _STORE,
       "if not set(_TABLES) <= tables or (self._stamp and tables != set(_TABLES)):",
       "if not set(_TABLES) <= tables:",
       "a database without symattn's application id is taken for an old symattn store although it "
       "holds other tables (and is then stamped and written into)", "symattn_01_store"),
    _t("output-overwrites", "output", _OUT, "    if force or (ours or is_ours)(target):\n",
       "    if True:\n", "an existing file symattn did not write is overwritten without --force",
       "existing and (plot or latex)"),
    _t("csv-formula-unescaped", "output", _OUT, "        return \"'\" + text\n", "        return text\n",
       "a CSV cell from a store that starts with = + - @ is written as a spreadsheet formula", "escapes"),
    _t("markdown-raw-html", "output", _OUT, "    return _MD_SPECIAL.sub(r\"\\\\\\1\", text)\n",
       "    return text\n", "the atlas's Markdown copies raw HTML from a store", "escapes"),
    _t("sweep-memory-unchecked", "sweep", "symattn/sweep/spec.py", "    if memory > limit_gib * 2**30:\n",
       "    if False:\n", "a sweep's per-case memory limit is not held against --max-memory",
       "memory_limit_against"),
    _t("sweep-failures-exit-0", "sweep", "symattn/commands/sweep.py",
       "              \"and the atlas's failures; --retry-failed reruns them)\", file=sys.stderr)\n"
       "        return 1\n",
       "              \"and the atlas's failures; --retry-failed reruns them)\", file=sys.stderr)\n"
       "        return 0\n",
       "a sweep whose cases all failed exits 0", "failed and exits"),
    _t("cluster-start-ctrl-c", "sweep", _RUN,
       '        self.active = _main_thread() and hasattr(signal, "pthread_sigmask")\n',
       "        self.active = False\n",
       "Ctrl-C while the local cluster starts is not held until it has started (the cluster is "
       "left open)", "Ctrl"),
    _t("budget-swallowable", "limits", "symattn/core/limits.py", "        raise _Expired\n",
       "        raise SymattnError(f\"{what} took longer than {seconds:g} s\")\n",
       "the time budget's alarm raises an exception the timed code can catch and swallow (a slow "
       "symbolic step then runs to its end)", "swallowed"),
    _t("safetensors-overlap-unchecked", "audit readers", "symattn/audit/readers.py",
       "                if start < stop:\n", "                if False:\n",
       "overlapping .safetensors data offsets are accepted (one stored number read as several weights)",
       "overlapping"),
    # -- transformer-block parts (issue 24): elementwise functions, graph nodes, symmetries, tiers
    _m("blocks-rsqrt-binomial", "blocks", "symattn/core/algebras/functions.py",
       "binom = binom * (Fraction(-1, 2) - k) / (k + 1)", "binom = binom * (Fraction(1, 2) - k) / (k + 1)",
       "the Taylor coefficients of LayerNorm's 1/sqrt are those of sqrt"),
    _m("blocks-taylor-shift", "blocks", "symattn/core/algebras/functions.py",
       "field.convert(coeffs[m] * math.comb(m, k))", "field.convert(coeffs[m] * math.comb(m, k) * (1 + (k == 2)))",
       "a polynomial activation's quadratic Taylor coefficient at the constant term is doubled"),
    _m("blocks-series-fn-derivative", "blocks", _SER,
       "jets = [self.field.reduce(jets[k + derivative] * math.perm(k + derivative, derivative))",
       "jets = [self.field.reduce(jets[k + derivative] * math.perm(k + derivative, derivative) * (1 + derivative))",
       "the series derivative of an elementwise function is doubled (the tangent rule reads it)"),
    _m("blocks-tangent-fn", "blocks", _TAN,
       "return Dual(value, B.mul(x.tangent, B.fn(x.value, function, derivative + 1)), x.start)",
       "return Dual(value, B.mul(x.tangent, B.fn(x.value, function, derivative)), x.start)",
       "the tangent of an elementwise function uses f instead of f'"),
    _m("blocks-ln-mean-over-tokens", "blocks", _LN,
       'mean = b.op(f"{tag}.mean", "mul", b.op(f"{tag}.sum", "sum", y, axis=-2), inv_d)',
       'mean = b.op(f"{tag}.mean", "mul", b.op(f"{tag}.sum", "sum", y, axis=-1), inv_d)',
       "LayerNorm removes the mean over the tokens instead of the features"),
    _m("blocks-mlp-bias-sign", "blocks", "symattn/model/sublayers.py",
       'h = b.op(f"{tag}.h", "add", b.op(f"{tag}.Fay", "matmul", blocks["mlp.in"], y), blocks["mlp.in_bias"])',
       'h = b.op(f"{tag}.h", "sub", b.op(f"{tag}.Fay", "matmul", blocks["mlp.in"], y), blocks["mlp.in_bias"])',
       "the MLP's first bias enters with the wrong sign"),
    _m("blocks-key-bias-is-query-bias", "blocks", "symattn/model/parts/bias.py",
       'kx = side("K", k, bk)', 'kx = side("K", k, bq)',
       "the keys get the query bias"),
    _m("blocks-mlp-residual-dropped", "blocks", _GRAPH,
       'z = layer.skip_part.build(b, y, z, f"layer{i}.resF")',
       'z = b.op(f"layer{i}.resF", "sub", z, y) if layer.residual else z',
       "the residual connection around the MLP subtracts the stream"),
    _m("blocks-ln-shift-row", "blocks", "symattn/model/symmetry_kinds.py", "    e[:, k] = Fraction(1)\n", "    e[k % shape[0], :] = Fraction(1)\n",
       "the declared LayerNorm shift moves one row instead of adding 1 w^T"),
    _m("blocks-key-bias-symmetry-on-query", "blocks", "symattn/model/symmetry_kinds.py", 'bk = blocks["bK"]', 'bk = blocks["bQ"]',
       "the softmax key-bias symmetry is declared on the query bias"),
    _m("blocks-numerical-order-rounding", "blocks", "symattn/analyses/numerical_spectrum.py",
       "orders = [round(x) for x in slopes]", "orders = [round(x) + (x > 0.5) for x in slopes]",
       "the numerical tier rounds every positive order up by one"),
    _m("blocks-square-bank-delta", "blocks", "symattn/testing/banks.py",
       "delta = (layer.eps - k * k) / (2 * k)", "delta = (layer.eps + k * k) / (2 * k)",
       "the rational-square bank's LayerNorm constants are not squares"),
    _t("exact-prefix-shifted", "spectrum", _SPEC,
       "    return [sorted(v[j] for j in np.concatenate(s.block_idx[: k + 1])) for k in range(len(s.blocks))]\n",
       "    return [sorted(v[j] for j in np.concatenate(s.block_idx[: k + 2])) for k in range(len(s.blocks))]\n",
       "the exact route's block prefixes take one block too many (bands attributed to the wrong layer, "
       "certificate exact)", "modular_bands", "tests/test_polyseries_exact.py"),
    _t("fmpq-series-reciprocal-short", "algebras", "symattn/core/algebras/polyseries.py",
       'self._invert = _ufunc(lambda a: _fmpq_series(a, N, "inv"), 1)',
       'self._invert = _ufunc(lambda a: _fmpq_series(a, max(1, N - 1), "inv"), 1)',
       "the reciprocal over Q (FLINT's series inverse) one coefficient short (every exact softmax series wrong)",
       "agree_with_the_numpy_series or exact_series_one", "tests/test_polyseries.py"),
    # -- issue 26: the exponential by Newton's iteration, the column proof over Q
    _m("exp-newton-log-sign", "algebras", "symattn/core/algebras/polyseries.py",
       "        g = g + g.mul_low(f.truncate(k) - w.integral(), k)\n",
       "        g = g + g.mul_low(f.truncate(k) + w.integral(), k)\n",
       "the Newton step of the exponential series adds log g instead of subtracting it (every long "
       "softmax series wrong, mod p and over Q)"),
    _t("exp-newton-taken-for-cosh", "algebras", "symattn/core/algebras/polyseries.py",
       "            (k * scalars[k] - scalars[k - 1]) % p == 0 for k in range(1, len(scalars)))\n",
       "            (k * scalars[k] - scalars[k - 1]) % p == 0 or True for k in range(1, len(scalars)))\n",
       "the flint series mod p take every normalizer's Taylor data for c exp(s) (cosh computed as exp)",
       "agree_with_the_numpy_series", "tests/test_polyseries.py"),
    _t("column-proof-over-q-refutation-ignored", "certificate", "symattn/analyses/column_proof.py",
       "        if not vanishes:\n            return \"refuted\"\n", "        if False:\n            return \"refuted\"\n",
       "the column proof over Q ignores a nonzero coefficient (a claimed order too high is proved)",
       "over_q", "tests/test_spectrum.py"),
    # -- issue 26, stop 33: FLINT's series over Q, the long-truncation Smith form, the proof's one map,
    #    the apart checks of a growing bank
    _t("fmpq-series-precision-short", "algebras", "symattn/core/algebras/polyseries.py",
       "    saved, flint.ctx.cap = flint.ctx.cap, n ", "    saved, flint.ctx.cap = flint.ctx.cap, max(1, n - 1) ",
       "FLINT's series over Q (exponential, reciprocal) computed one coefficient short",
       "agree_with_the_numpy_series or exact_series_one", "tests/test_polyseries.py"),
    _t("polyseries-valuation-one-late", "algebras", "symattn/core/algebras/polyseries.py",
       "out[idx] = next((j for j in range(min(len(f), self.order)) if f[j] != 0), self.order)",
       "out[idx] = next((j + 1 for j in range(min(len(f), self.order)) if f[j] != 0), self.order)",
       "the flint series' valuation one too high (the normalizer's Taylor polynomial cut short)",
       "agree_with_the_numpy_series", "tests/test_polyseries.py"),
    _t("smith-newton-inverse-sign", "smith", "symattn/core/series_mod_p.py",
       "X = [[X[i][j] + XE[i][j] for j in range(r)] for i in range(r)]",
       "X = [[X[i][j] - XE[i][j] for j in range(r)] for i in range(r)]",
       "the Newton step of the long-truncation Smith form's block inverse subtracts the correction",
       "polynomial_schur_update", "tests/test_linalg.py"),
    _t("smith-prefix-always-contained", "smith", _LIN,
       "contained = all(sum(1 for w, _ in own if w <= v) == n for v, c in pivots if c >= n)",
       "contained = True",
       "every block prefix read from the elimination of all columns, even where a later column pivoted first",
       "prefix_smith_orders", "tests/test_linalg.py"),
    _m("smith-pivot-log-local-column", "smith", "symattn/core/series_mod_p.py",
       "pivots += [(v, int(where[c])) for c in cols]", "pivots += [(v, int(c)) for c in cols]",
       "the pivot log records the column of the reduced matrix, not of J (prefixes attributed wrongly)"),
    _t("column-proof-prime-skipped", "certificate", "symattn/analyses/column_proof.py",
       "tasks += [(p, b) for p in (primes[1:] if b in read else primes)]",
       "tasks += [(p, b) for p in (primes[2:] if b in read else primes[1:])]",
       "the column proof records a prime it never computed modulo (too few primes behind the bound)",
       "every_modulus", "tests/test_spectrum.py"),
    _m("majorant-input-denominator-max", "majorants", _CERT,
       "den[j] = math.lcm(*(int(q.q) for q in flat)) if flat else 1",
       "den[j] = max(int(q.q) for q in flat) if flat else 1",
       "the majorant of given rationals takes the largest denominator, not their lcm (D c not integral)"),
    _t("wide-prime-capacity-too-large", "certificate", _CERT,
       "    capacity = 2**7 - 1\n", "    capacity = 2**17 - 1\n",
       "the 28-bit prime field sums as many products as the 23-bit one before a reduction (int64 wraps: "
       "the headroom bound of the new primes too small)", "wide_prime_residues", "tests/test_certify.py"),
    _m("column-proof-wide-primes-short", "certificate", "symattn/analyses/column_proof.py",
       "    while not proved_vanishing(bound, primes):\n        count += 1\n        primes = ([DEFAULT_PRIME]",
       "    while not proved_vanishing(bound >> 28, primes):\n        count += 1\n        primes = ([DEFAULT_PRIME]",
       "the column proof takes one 28-bit prime fewer than its bound needs (the product of the primes "
       "below twice the bound)"),
    _t("column-proof-wide-for-any-contraction", "certificate", "symattn/analyses/column_proof.py",
       "    return max(lengths) <= WidePrimeField.capacity", "    return True",
       "28-bit primes also where a matrix product contracts more terms than int64 holds for them",
       "wide_primes_only_where", "tests/test_certify.py"),
    _t("map-forked-exception-swallowed", "certificate", "symattn/core/parallel.py",
       "            if failed:\n                raise value\n", "            if failed and False:\n                raise value\n",
       "an exception in a forked worker (a failed check, a refutation) is not raised in the caller",
       "exception_in_a_worker", "tests/test_parallel.py"),
    _t("map-forked-busy-worker-awaited", "certificate", "symattn/core/parallel.py",
       "                os.kill(pid, signal.SIGKILL)\n", "                pass\n",
       "stopping the forked map early waits for the busy workers (a proof's time budget not enforced)",
       "stopping_early", "tests/test_parallel.py"),
    _t("map-forked-forks-in-a-daemon", "certificate", "symattn/core/parallel.py",
       "    return mp is not None and bool(mp.current_process().daemon)", "    return False",
       "the forked map forks inside a daemonic process (a Dask worker)", "daemonic", "tests/test_parallel.py"),
    _t("map-forked-nested-forks", "certificate", "symattn/core/parallel.py",
       "        _WORKER[0] = True\n", "        _WORKER[0] = False\n",
       "a forked worker's own maps fork again (a process tree as deep as the bank's halvings)",
       "inside_a_worker", "tests/test_parallel.py"),
    _t("console-heap-not-frozen", "cli", "symattn/cli.py",
       "        gc.enable()\n    gc.freeze()\n    return status\n", "        gc.enable()\n    return status\n",
       "the program leaves the whole heap to the interpreter's last collections at exit (about 0.1 s "
       "of every command)", "frozen_heap", "tests/test_startup.py"),
    _t("console-collector-left-off", "cli", "symattn/cli.py",
       "        _PROGRAM[0] = False\n        gc.enable()\n", "        _PROGRAM[0] = False\n",
       "the program leaves the cyclic garbage collector off after a command that failed before it ran",
       "frozen_heap", "tests/test_startup.py"),
    _t("console-status-lost", "cli", "symattn/cli.py",
       "    gc.freeze()\n    return status\n", "    gc.freeze()\n    return 0\n",
       "the program exits 0 whatever main returned (a failed check or bad input reported as success)",
       "frozen_heap", "tests/test_startup.py"),
    _t("jacobian-apart-checks-skipped", "certificate", "symattn/analyses/contact.py",
       "    if apart:\n", "    if False:\n",
       "a growing bank's fast-series Jacobian is never checked (the parts computed without their check)",
       "growing_banks_fast_jacobian", "tests/test_spectrum.py"),
    _t("jacobian-apart-check-unverified", "certificate", "symattn/analyses/contact.py",
       "return bool((self.jacobian(X[i: i + 1], algebra, verify=1) == J[:, i * rows: (i + 1) * rows]).all())",
       "return bool((self.jacobian(X[i: i + 1], algebra, verify=0) == J[:, i * rows: (i + 1) * rows]).all())",
       "the apart check recomputes the rows without the second code path (the same code compared with itself)",
       "growing_banks_fast_jacobian or check_inputs", "tests/test_spectrum.py"),
    # -- issue 24: the numerical jet tier
    _t("numerical-jet-gap-never-unclear", "numerical", "symattn/analyses/numerical_jets.py",
       "    between = [r for r in ratios if zero <= r <= keep]", "    between = [r for r in ratios if zero <= r < zero]",
       "the numerical jet tier never sees a singular value in the gap (an unclear rank is decided)",
       "unclear_gap", "tests/test_numerical_jets.py"),
    _t("numerical-jet-blocks-normalized", "numerical", "symattn/analyses/numerical_jets.py",
       "    blocks = [J[n] * rho ** n for n in range(J.shape[0])]",
       "    blocks = [J[n] / tops[n] if tops[n] != 0 else J[n] for n in range(J.shape[0])]",
       "the numerical jet tier scales every degree block to norm 1 (rounding-only blocks become rank)",
       "zero_but_for_rounding", "tests/test_numerical_jets.py"),
    _t("numerical-jet-symmetry-tolerance-lost", "numerical", "symattn/analyses/numerical_jets.py",
       "            if worst > tol * sizes[j]:", "            if worst > sizes[j]:",
       "the numerical jet tier's kernel check of a declared symmetry accepts any vector",
       "wrong_declared_symmetry", "tests/test_numerical_jets.py"),
    _t("mpseries-taylor-without-factorial", "numerical", "symattn/core/algebras/mpseries.py",
       "                vals[idx] = self.ctx.mpf(f(v)) / math.factorial(k)",
       "                vals[idx] = self.ctx.mpf(f(v))",
       "the multiprecision series take f^(k)(c) for the Taylor coefficient f^(k)(c) / k!",
       "expanded_around_its_argument or agree_with_evaluation", "tests/test_numerical_jets.py"),
    # -- the Coq exporter (issue 25): these pass every Python proof; Coq must reject the certificate
    _m("coq-export-order-plus-one", "coq", _COQX,
       "    orders = [int(o) for o in orders]\n    if sorted(orders) != orders:",
       "    orders = [int(o) for o in orders]\n    orders[-1] += 1\n    if sorted(orders) != orders:",
       "a spectrum certificate claims a wrong last order"),
    _m("coq-export-kernel-drop", "coq", _COQX, "    for symmetry in gk.symmetries:",
       "    for symmetry in gk.symmetries[1:]:", "a spectrum certificate exports one kernel direction fewer"),
    _m("coq-export-interface-unscaled", "coq", _COQX,
       'coeffs = path_direction(arch, direction) if symmetry.kind == "interface" else np.stack(',
       "coeffs = np.stack([np.asarray(direction, dtype=object), np.zeros(P, dtype=object)]) "
       'if symmetry.kind == "interface" else np.stack(',
       "interface directions exported without the t of their query/key part"),
    _m("coq-export-bank-shifted", "coq", _COQX, "    return qmat(np.asarray(X, dtype=object).T)\n",
       "    return qmat(np.asarray(X, dtype=object).T + 1)\n",
       "the exported inputs differ from those the witnesses were computed on"),
    _m("coq-export-exp-as-cosh", "coq", _COQL, '        return f"exp_taylor {order}", "computed by Coq"',
       '        return f"cosh_taylor {order}", "computed by Coq"',
       "softmax exported as cosh: Coq's network is not symattn's"),
    _m("coq-export-jet-first-block", "coq", _COQX, "    last = list(range(P - eta.M[-1].size, P))",
       "    last = list(range(0, eta.M[-1].size))", "the jet certificate claims that L, not M_D, enters late"),
    _t("coq-folder-force-always", "coq", _COQX,
       '    root = check_folder(directory, "Coq folder")\n    _refuse_links(root)\n',
       '    root = check_folder(directory, "Coq folder")\n    _refuse_links(root)\n    force = True\n',
       "--coq DIR replaces a certificate file the user edited without --force", "keeps_a_file",
       "tests/test_coq.py"),
    _t("coq-theory-always-rewritten", "coq", _COQX,
       'if _plain_bytes(root / "theories" / name) != data}', "if True}",
       "every export rewrites the theory copy, so its compiled .vo files are stale and rebuilt each time",
       "theory_copy_is_kept", "tests/test_coq.py"),
    # -- issue 43 / 42: the Coq folder's checks, the point binding, and the theory's own bounds (.v mutants:
    #    compiling the theory kills them, tests/test_coq_folders.py -k trusted_theory_compiles)
    _t("coq-folder-links-followed", "coq", _COQX, "        if stat.S_ISLNK(info.st_mode):\n",
       "        if False:\n", "--coq DIR writes through a symbolic link on its path or at theories/ (into the target)",
       "links_on_the_path", "tests/test_coq_folders.py"),
    _t("coq-folder-foreign-sources-listed", "coq", _COQX, "    if not force:\n        for sub in SUBFOLDERS:",
       "    if False:\n        for sub in SUBFOLDERS:",
       "a .v file symattn did not write (a backtick or a space in its name) is accepted in the Coq folder",
       "backtick or space", "tests/test_coq_folders.py"),
    _t("coq-point-check-skipped", "coq", "symattn/coq/cli.py",
       "            if point_digest(cert.point) != point_digest(point):",
       "            if False:", "a certificate of another point than the printed result is written and reported",
       "another_point_is_refused", "tests/test_coq_folders.py"),
    _t("coq-make-hint-unquoted", "coq", "symattn/coq/cli.py", "(check with: make -C {shlex.quote(str(root))})",
       "(check with: make -C {root})", "the printed make command is not shell-quoted", "shell_quoted",
       "tests/test_coq_folders.py"),
    _t("coq-empty-folder-ignored", "coq", "symattn/coq/cli.py", '    if getattr(args, "coq", None) is None:\n',
       '    if not getattr(args, "coq", None):\n', "--coq '' is ignored (exit 0, no certificate)",
       "empty_coq_folder", "tests/test_coq_folders.py"),
    _t("coq-run-assumptions-unread", "coq", "symattn/coq/run.py",
       "    return [n for n in names if n not in ALLOWED_AXIOMS]", "    return []",
       "symattn prove --coq accepts a certificate whose proof was replaced by Admitted",
       "reads_the_assumptions", "tests/test_coq_folders.py"),
    _t("coq-prove-theory-failure-ignored", "coq", "symattn/coq/prove.py", "        if not theory.ok:\n",
       "        if False:\n", "symattn prove --coq builds every certificate after the theory failed to compile",
       "broken_theory", "tests/test_coq_folders.py"),
    _t("coq-printed-point-kernel-off", "coq", "symattn/coq/cases.py", '{"orders": orders, "kernel": int(s.kernel)}',
       '{"orders": orders, "kernel": int(s.kernel) + 1}',
       "the printed spectrum's point claims one more kernel direction: its true certificate is refused",
       "constants_method", "tests/test_coq_folders.py"),
    _t("coq-theory-modulus-bound-loosened", "coq", "coq/theories/Checker.v", "(to_Z p <? 2147483648)%Z.",
       "(to_Z p <? 4294967296)%Z.", "the checker accepts a modulus up to 2^32: residue products may wrap at 2^63",
       "trusted_theory_compiles", "tests/test_coq_folders.py"),
    _t("coq-theory-zero-bits-loose", "coq", "coq/theories/Bounds.v",
       "andb ((e + dexp bases g <? log2sum (map to_Z ps))%Z)", "andb ((e + dexp bases g <=? log2sum (map to_Z ps))%Z)",
       "a coefficient is declared zero when the moduli's product only reaches (not exceeds) its bound",
       "trusted_theory_compiles", "tests/test_coq_folders.py"),
    _t("coq-theory-product-unreduced", "coq", "coq/theories/Modp.v",
       "let (a, f) := x in let (b, g) := y in (((a * b) mod p)%uint63, andb f g).",
       "let (a, f) := x in let (b, g) := y in ((a * b)%uint63, andb f g).",
       "a product mod p is left unreduced (residues leave [0, p))", "trusted_theory_compiles",
       "tests/test_coq_folders.py"),
    _t("coq-theory-bound-lemma-loosened", "coq", "coq/theories/Checker.v", "  (0 <= to_Z a * to_Z b < 2 ^ 62)%Z.",
       "  (0 <= to_Z a * to_Z b < 2 ^ 63)%Z.", "the stated product bound is loosened (the docs' limit no longer holds)",
       "bound_lemmas", "tests/test_coq_folders.py"),
    # -- issue 42 item 1: the closed-form counts of the symmetry kinds and their check
    _t("counts-interface-off-by-one", "symmetries", "symattn/model/symmetry_counts.py",
       "    return _exact(sum(arch.widths[j] ** 2 for j in _interfaces(arch)))",
       "    return _exact(sum(arch.widths[j] ** 2 + 1 for j in _interfaces(arch)))",
       "the interface formula counts one direction too many per interface", "formulas_equal",
       "tests/test_symmetry_counts.py"),
    _t("counts-normal-dependency-lost", "symmetries", "symattn/model/symmetry_counts.py",
       "                total -= 1\n    return _generic(total)",
       "                pass\n    return _generic(total)",
       "the LayerNorm normal formula forgets the normal that the next layer's LayerNorm shifts span",
       "formulas_equal", "tests/test_symmetry_counts.py"),
    _t("counts-dimension-check-skipped", "symmetries", "symattn/analyses/dimension.py",
       "    check_counts(arch, kernel.kinds(), generic=point is None)  # every kind declares its formula's count",
       "    pass", "symattn dimension no longer compares the declared kinds with their formulas",
       "off_its_formula", "tests/test_symmetry_counts.py"),
    _t("rotation-last-plane-lost", "symmetries", "symattn/model/symmetry_kinds.py",
       "    for k, l in itertools.combinations(range(d), 2):", "    for k, l in itertools.combinations(range(d - 1), 2):",
       "the norm rotations miss the planes of the last feature (none at d = 2): a kernel direction unexplained",
       "rmsnorm_rotation", "tests/test_symmetry_counts.py"),
    _t("rotation-reader-sign", "symmetries", "symattn/model/symmetry_kinds.py",
       "                move[head[role].name] = -M.T.dot(", "                move[head[role].name] = M.T.dot(",
       "the norm rotation moves the next queries and keys by +M'^T Q: a declared direction that is no symmetry",
       "plain_forward", "tests/test_symmetry_counts.py"),
    # -- issue 23: the survivor classes of the audit (layer kinds, catalogue data, majorants,
    #    certificates, bank, dimension bounds, native jets, linear algebra, gauge kernel)
    _m("layer-folded-skip-lost", "layer kinds", _GRAPH, 'y = layer.skip_part.build(b, x, y, f"X{i}")',
       'y = layer.skip_part.build(b, x, y, f"X{i}") if layer.has_values else y',
       "a folded skip connection loses its identity term X + ..."),
    _m("layer-window-too-wide", "layer kinds", "symattn/model/layers.py",
       "return (abs(a[:, None] - a[None, :]) < w).astype(int)",
       "return (abs(a[:, None] - a[None, :]) <= w).astype(int)",
       "a sliding-window mask window:W lets one token more through on each side"),
    _m("layer-second-head-lost", "layer kinds", _GRAPH,
       '        y = b.op(f"layer{i}.heads{h}", "add", y, term)\n    y = layer.skip_part',
       '        y = b.op(f"layer{i}.heads{h}", "add", y, terms[0])\n    y = layer.skip_part',
       "summed heads repeat the first head's term"),
    _m("catalogue-builder-wrong", "catalogue", "symattn/model/catalogue.py",
       '"logistic": Entry("1 + tanh(s)/2", lambda s: 1 + s.tanh() / 2),',
       '"logistic": Entry("1 + tanh(s)/2", lambda s: 1 + s.sinh() / 2),',
       "a catalogue normalizer's python-flint builder is wrong from s^3 on (the expression shown is right)"),
    # -- issue 38/39: parts and derived normalizer properties
    _m("normalizer-exponential-by-name", "normalizer", _NORM,
       '        with time_budget(NORMALIZER_SECONDS, "deciding whether h = log phi is linear"):\n',
       '        if True:\n            return self.name == "exp"\n'
       '        with time_budget(NORMALIZER_SECONDS, "deciding whether h = log phi is linear"):\n',
       "a catalogue property looked up by name instead of derived (exp(2*s) loses its key-bias symmetry)"),
    _m("real-line-sine-range", "normalizer", "symattn/model/real_line.py",
       "            return _out(mpmath.mpf(-1), mpmath.mpf(1)), analytic\n",
       "            return _out(mpmath.mpf(0), mpmath.mpf(1)), analytic\n",
       "the derived range of sin and cos is [0, 1]: 1/2 + sin(s) is wrongly proved positive on R"),
    _m("rmsnorm-eps-dropped", "blocks", _RMS, 'values=np.array([[eps]], dtype=object)',
       'values=np.array([[Fraction(0)]], dtype=object)', "RMSNorm's graph drops its eps"),
    _m("rmsnorm-reference-gain-dropped", "reference", _RMS, "out[i][a] = R.mul(g[i][0], R.mul(Y[i][a], r))",
       "out[i][a] = R.mul(Y[i][a], r)", "RMSNorm's naive reference forgets the gain"),
    _m("rmsnorm-claims-mean-removal", "blocks", _RMS, "    removes_mean = False\n", "    removes_mean = True\n",
       "RMSNorm claims to remove the mean: LayerNorm's normals and mean interfaces are declared for it"),
    _m("norm-interface-off-diagonal", "gauges", "symattn/model/parts/norm.py",
       "        return [_unit(width, k, k) for k in range(width)]\n",
       "        return [_unit(width, k, (k + 1) % width) for k in range(width)]\n",
       "the diagonal gain interface of a norm part is declared off the diagonal"),
    _t("activation-gelu-claims-odd", "blocks", _ACT, '    spelling = "gelu"\n    is_entire = True\n',
       '    spelling = "gelu"\n    is_entire = True\n    is_odd = True\n',
       "GELU claims to be odd (its hidden units would get sign flips it does not have)",
       "activation_properties", _PARTS_TESTS),
    _t("activation-poly-odd-reads-odd-powers", "blocks", _ACT,
       "return all(c == 0 for k, c in enumerate(self.poly_coefficients) if k % 2 == 0)",
       "return all(c == 0 for k, c in enumerate(self.poly_coefficients) if k % 2 == 1)",
       "a polynomial activation is called odd when its odd powers vanish (it is then even)",
       "activation_properties or sign_flips", _PARTS_TESTS),
    _t("activation-tanh-reference-sinh", "reference", _ACT, "        return mp.tanh\n", "        return mp.sinh\n",
       "tanh's naive reference formula computes sinh", "builder_reference_and_torch", _PARTS_TESTS),
    # -- issue 38: skip, W_O, bias and head parts, killed by their contract tests in tests/test_parts.py
    _t("skip-reference-drops-input", "layer kinds", "symattn/model/parts/skip.py",
       "return plus(R, X, Y) if self.is_residual else Y", "return Y",
       "the naive formula of a residual forgets the input X (the graph keeps it)", "skip_builder", _PARTS_TESTS),
    _t("skip-build-subtracts-input", "layer kinds", "symattn/model/parts/skip.py",
       'return b.op(name, "add", x, y) if self.is_residual else y',
       'return b.op(name, "sub", y, x) if self.is_residual else y',
       "the residual node subtracts the input instead of adding it", "skip_builder", _PARTS_TESTS),
    _t("combine-reference-skips-projection", "layer kinds", "symattn/model/parts/output.py",
       "return product(R, O, Y) if self.has_output_projection else Y", "return Y",
       "the naive formula of concatenated heads forgets W_O", "combine_builder", _PARTS_TESTS),
    _t("combine-value-width-ignored", "layer kinds", "symattn/model/parts/output.py",
       "return (value_width if self.has_output_projection else width_out, width_in)", "return (width_out, width_in)",
       "concatenated heads get value maps of the output width instead of their d_v (the value gauges then count "
       "d_out^2 against the formula's d_v^2)", "combine_builder", _PARTS_TESTS),
    _t("bias-reference-value-bias-dropped", "layer kinds", "symattn/model/parts/bias.py",
       "return per_token(R, Y, bV) if self.present else Y", "return Y",
       "the naive formula of a biased head forgets the value bias", "bias_builder", _PARTS_TESTS),
    _t("bias-reference-key-gets-query-bias", "layer kinds", "symattn/model/parts/bias.py",
       "per_token(R, k, transpose(bK))", "per_token(R, k, transpose(bQ))",
       "the naive scores add the query bias to the keys", "bias_builder", _PARTS_TESTS),
    _t("bias-key-directions-without-softmax", "gauges", "symattn/model/parts/bias.py",
       "if not (self.present and exponential):", "if not self.present:",
       "softmax key bias directions declared for a normalizer that is not exponential (a row shift does not "
       "cancel there)", "bias_builder", _PARTS_TESTS),
    _t("head-score-transposed", "layer kinds", "symattn/model/parts/head.py",
       'return b.op(name, "matmul", q, b.op(key_name, "transpose", k))',
       'return b.op(name, "matmul", k, b.op(key_name, "transpose", q))',
       "the head's score node is K Q^T instead of Q K^T", "head_score", _PARTS_TESTS),
    _t("head-gauges-diagonal-only", "gauges", "symattn/model/parts/head.py",
       "return itertools.product(range(self.rank), range(self.rank))",
       "return ((a, a) for a in range(self.rank))",
       "a head declares only the diagonal factor gauges (r of the r^2 in gl(r))", "head_score", _PARTS_TESTS),
    _t("ring-transpose-is-identity", "reference", "symattn/model/parts/ring.py",
       "return [list(col) for col in zip(*A)]", "return [list(row) for row in A]",
       "the naive reference's transpose returns its argument", "head_score or bias_builder", _PARTS_TESTS),
    _t("sign-flip-input-row-only", "gauges", _GAUGE,
       '(("mlp.in", (j, slice(None))), ("mlp.in_bias", (j, slice(None))), ("mlp.out", (slice(None), j)))',
       '(("mlp.in", (j, slice(None))), ("mlp.in_bias", (j, slice(None))))',
       "a hidden-unit sign flip negates the unit's input row and bias but not its output column",
       "sign_flips", _PARTS_TESTS),
    _t("old-part-name-loses-its-layer", "layer kinds", _PARAMS, "new = OLD_PART_NAMES[stem] + name[len(stem):]",
       "new = OLD_PART_NAMES[stem]", "a point with the old block names (gA1, Fa2) is read without the layer index",
       "old_part_names", _PARTS_TESTS),
    _t("sign-flip-declared-without-identity", "gauges", _GAUGE,
       "              and layer.activation.odd_identity()]", "              ]",
       "hidden-unit sign flips declared on the activation's word alone (its formula's oddness not checked)",
       "identity_not_only", _PARTS_TESTS),
    _m("layer-norm-sites-attention-only", "layer kinds", "symattn/model/layers.py",
       '        return (NORM_SITES if self.mlp else NORM_SITES[:1]) if self.has_norm else ()\n',
       '        return NORM_SITES[:1] if self.has_norm else ()\n',
       "a layer with an MLP loses the norm after (post) or before (pre) its MLP sublayer"),
    _m("genericity-dominance-reversed", "genericity", "symattn/analyses/genericity.py",
       '    return "<" if below else ">" if above else None\n', '    return ">" if below else "<" if above else None\n',
       "the dominance comparison is reversed: the larger spectrum becomes the generic candidate"),
    _m("genericity-theorem-claim-unchecked", "genericity", "symattn/analyses/genericity.py",
       '        if dominance(first, theorem) == "=":\n', '        if True:\n',
       "a point above Theorem 4's orders is still labelled generic (certified) on the strength of one point"),
    _m("genericity-dimension-bounds-apart-certified", "genericity", "symattn/analyses/genericity.py",
       "    if lower == upper:\n        return GenericClaim(\"generic (certified)\"",
       "    if lower <= upper:\n        return GenericClaim(\"generic (certified)\"",
       "a dimension whose bounds are apart is labelled generic (certified)",
       tests=("tests/test_genericity.py", "-k", "dimension")),
    _m("genericity-degree-above-theorem-certified", "genericity", "symattn/analyses/genericity.py",
       "    if theorem_degree is not None and least == theorem_degree:\n",
       "    if theorem_degree is not None and least >= theorem_degree:\n",
       "a special point's degree above the statement's is labelled generic (certified)",
       tests=("tests/test_genericity.py", "-k", "degree_claims")),
    _m("genericity-degree-given-point-generic", "genericity", "symattn/analyses/jets.py",
       "    return result.label_generic(statements.THEOREM_3.closed_form(arch) if whole and not given else None, given)\n",
       "    return result.label_generic(statements.THEOREM_3.closed_form(arch) if whole else None, False)\n",
       "a degree computed at a given tuple is labelled a generic claim (the given point is about itself)"),
    _m("genericity-degree-special-seeds-dropped", "genericity", "symattn/analyses/genericity.py",
       "    special = [s for s, n in decided.items() if n > least]\n",
       "    special = []\n",
       "the seeds whose degree is above the least are not reported special",
       tests=("tests/test_genericity.py", "-k", "degree_claims")),
    _m("seed-generic-duplicates-allowed", "genericity", _PARAMS,
       "            if v != 0 and abs(v) <= 4 and abs(v) not in seen:\n", "            if v != 0 and abs(v) <= 4:\n",
       "the seed generator returns blocks with equal entries (equal LayerNorm shifts, as seed 0 of issue 39)"),
    _m("certificate-not-attempted-proved", "certificate", _SPEC,
       'certificate = "certified" if proof.status == "proved" else "none"',
       'certificate = "certified" if proof.status in ("proved", "too costly") else "none"',
       "a column proof that was not attempted (too many primes) is counted as proved"),
    _m("majorant-phi-horner-short", "majorants", _CERT,
       "top = (self.order - 1) // v + 1 if v < self.order else 1  # + 1: the delta part of x^k",
       "top = (self.order - 1) // v if v < self.order else 1  # + 1: the delta part of x^k",
       "the majorant of phi drops the last Horner term (its delta part reaches u^(N-1)): bounds too small"),
    _m("majorant-reciprocal-short", "majorants", _CERT, "js = [j for j in support if j <= k and height[k - j]]",
       "js = [j for j in support if j < k and height[k - j]]",
       "the majorant of a series reciprocal misses a term: bounds too small"),
    _m("bank-below-off-by-one", "bank", "symattn/analyses/bank.py",
       "if m is None or m - 1 < 1 or m - 1 < bound:", "if m is None or m - 1 < 1 or m - 1 <= bound:",
       "the bank's 'm - 1 proved insufficient' test is off by one (at the counting bound it is evidence only)"),
    _m("dimension-upper-bound-short", "dimension", "symattn/analyses/dimension.py",
       "return m - Matrix.rational(np.array(functionals, dtype=object)).rank()",
       "return m - Matrix.rational(np.array(functionals, dtype=object)).rank() - 1",
       "the rank-condition upper bound of the neuromanifold dimension is one too small"),
    _m("native-jet-wrong-point", "jets", _JETS, "best = min(decided, key=lambda k: (decided[k][0], k))",
       "best = min(decided)", "the native sharp degree is taken at the first seeded point, not the least one"),
    _m("rank-profile-no-carry", "rank", _LIN, "stack = np.concatenate([basis, J[j]]) if J.shape[1] else basis",
       "stack = J[j]", "the rank profile of a series matrix forgets the lower coefficients"),
    _m("gauge-interface-past-skip", "gauges", _GAUGE,
       'return (not before.residual and not after.residual and not before.has_norm\n',
       'return (not after.residual and not before.has_norm\n',
       "an interface gauge is declared at the output of a layer with a skip connection"),
    _m("reference-covers-nothing", "reference", "symattn/model/reference.py",
       "return all(not layer.mlp or layer.activation.is_analytic for layer in arch.layers)",
       "return False",
       "the graph builder never marks a stack for the naive reference (every non-paper Jacobian unchecked)"),
    _m("reference-causal-reversed", "reference", "symattn/model/reference.py",
       "return [[1 if b <= a else 0 for b in range(n)] for a in range(n)]",
       "return [[1 if b >= a else 0 for b in range(n)] for a in range(n)]",
       "the naive reference reads a causal mask the wrong way round"),
    _m("soundness-tolerance-doubled", "certificate", "symattn/core/soundness.py",
       "if abs(c) * scale > m.height[e][j]:", "if abs(c) * scale > 2 * m.height[e][j]:",
       "the majorant soundness check tolerates bounds twice too small"),
    _m("jacobian-seed-drops-last", "interpreter", "symattn/model/interpreter.py",
       "lo, hi = int(moves[0]), int(moves[-1]) + 1", "lo, hi = int(moves[0]), max(int(moves[-1]), int(moves[0]) + 1)",
       "forward mode seeds an input in all but its last moving direction"),
    _m("statement-label-always", "statements", "symattn/theorems/statements.py",
       "return statement.label if statement.covers(arch) else None", "return statement.label",
       "a statement's label is given to an architecture it does not cover"),
    _m("bands-attribution-unbounded", "spectrum", "symattn/analyses/contact.py",
       "now = max(seen[o], min(cur[o], final[o]))", "now = max(seen[o], cur[o])",
       "a band's multiplicity is taken from a block prefix without the final form's bound"),
    _m("conjecture-jet-max", "conjectures", "symattn/analyses/conjectures.py",
       "jet = min((j for j in by_seed if j is not None), default=None)",
       "jet = max((j for j in by_seed if j is not None), default=None)",
       "the conjecture table's jet degree is the largest over the seeds, not the least"),
    _m("chart-rank-readout", "geometry", "symattn/analyses/geometry.py",
       'total += Matrix.rational(reduction_jacobian(one, theta, ["V1"])).rank()',
       'total += Matrix.rational(reduction_jacobian(one, theta, ["V1"])).rank() - 1',
       "the normal-form chart's rank undercounts the readout"),
    _m("collapse-locus-swapped", "fibers", "symattn/analyses/fibers.py",
       'return "skew" if phi.h_odd else "zero"', 'return "zero" if phi.h_odd else "skew"',
       "the two-token collapse locus (skew or zero score) is swapped"),
    _m("expansion-tanh-as-sinh", "catalogue", "symattn/model/expansion.py",
       'return cosh if name == "cosh" else sinh if name == "sinh" else self.mul(sinh, self.inv(cosh))',
       'return cosh if name == "cosh" else sinh', "the independent expansion reads tanh as sinh"),
    # the minors at high precision are certified_rank's second stage: reached where binary64 falls short
    _t("ball-rank-overclaims", "dimension", "symattn/core/rank_certificate.py",
       "                return k, numerical", "                return k + 1, numerical",
       "the ball tier's certified rank counts one column more than its certified minor",
       "high_precision", "tests/test_linalg.py"),
    _t("ball-minor-sign", "dimension", "symattn/core/rank_certificate.py",
       "if len(rows) == k and not flint.arb_mat(", "if len(rows) == k and flint.arb_mat(",
       "the ball tier certifies a minor whose determinant ball contains 0 (and refuses one that excludes it)",
       "high_precision", "tests/test_linalg.py"),
    _t("ball-symmetry-check-off", "dimension", "symattn/analyses/dimension.py",
       "            if any(not v.contains(0) for v in products):", "            if False:",
       "the ball tier's check of each declared symmetry as a kernel vector is skipped",
       "wrong_symmetry", "tests/test_block_analyses.py"),
    _t("jets-nonzero-scores-accepted", "jets", _JETS,
       "        if why is not None:\n            raise Undecided(", "        if False:\n            raise Undecided(",
       "jets and dimension no longer refuse stacks whose scores are nonzero at X = 0 (bad input instead of "
       "undecided)", "nonzero_scores or cli_dimension", "tests/test_block_analyses.py"),
    _t("conjecture-fits-points", "conjectures", "symattn/analyses/conjectures.py",
       "        if isinstance(label, str) and label.startswith(tuple(accept)):", "        if True:",
       "the conjecture engine fits rows whose claim is at this point (or that have no claim) as generic values",
       "split_by_claim or at_this_point", "tests/test_conjectures.py"),
    _t("conjecture-special-point-fitted", "conjectures", "symattn/analyses/conjectures.py",
       '    if not row.get("special") or key == "jet_degree":', "    if True:",
       "at a special seed the conjecture engine fits the point's rank and orders, not the generic candidate's",
       "special_seed", "tests/test_conjectures.py"),
    _m("conjecture-block-kernel", "conjectures", "symattn/analyses/conjectures.py",
       '"kernel": n.declared, "rank": n.rank,', '"kernel": n.declared + n.unexplained, "rank": n.rank,',
       "the conjecture table counts the unexplained kernel of a block twice (as kernel and unexplained)"),
    _t("fiber-score-model-of-blocks", "fibers", "symattn/analyses/fibers.py",
       "    if blocks:\n        raise SymattnError(f\"layer {blocks[0]} has biases", "    if False:\n        raise "
       "SymattnError(f\"layer {blocks[0]} has biases",
       "a score tuple of a block stack is read as the bare attention model's", "fiber_of_a_block",
       "tests/test_block_analyses.py"),
    _t("sweep-family-dropped", "sweep", "symattn/sweep/analyses.py",
       "        out = out.with_layers(**FAMILY_KINDS[arch[\"family\"]])", "        out = out",
       "a sweep case of a block family computes the paper's stack", "sweep_grid",
       "tests/test_block_analyses.py"),
    _t("sensitivity-blocks-exact-label", "sensitivity", "symattn/analyses/sensitivity.py",
       '+ out["kind"].replace("bands and rank exact; ", ""))', '+ out["kind"])',
       "the sensitivity of a block calls its numerical bands exact", "sensitivity_of_a_layer_norm",
       "tests/test_block_analyses.py"),
    _m("gauge-unit-product-transposed", "gauges", "symattn/model/parts/head.py",
       "    out[..., b] = m[..., a] if sign > 0 else -m[..., a]",
       "    out[..., a] = m[..., b] if sign > 0 else -m[..., b]",
       "a factor gauge Q E_ab is computed as Q E_ba (the unit-matrix copy takes the wrong column)"),
    _m("rref-drops-last-echelon-row", "rank", _LIN,
       "flat = np.fromiter((int(m[i, j]) for i in range(rows) for j in range(ncols)), np.int64,\n"
       "                                   rows * ncols)",
       "flat = np.fromiter((int(m[i, j]) if i < rows - 1 else 0 for i in range(rows) for j in range(ncols)),\n"
       "                                   np.int64, rows * ncols)",
       "the echelon form read back from flint loses its last nonzero row (a tall frame's basis)"),
    _t("graph-memory-estimate-too-small", "limits", "symattn/core/limits.py",
       "_GRAPH_BYTES_PER_CELL = {False: 40.0, True: 185.0}", "_GRAPH_BYTES_PER_CELL = {False: 4.0, True: 185.0}",
       "the graph evaluation's memory estimate mod p is 10x short of the measured peak", "graph_evaluation",
       "tests/test_memory_estimates.py"),
    _t("bank-growth-ignores-memory", "spectrum", "symattn/analyses/contact.py",
       "        s.memory(len(X), N)\n        s.say(", "        s.say(",
       "the automatic bank grows past the memory limit (no estimate before each larger bank)",
       "automatic_bank", "tests/test_memory_estimates.py"),
    _t("cli-lazy-listing-imports-all", "cli", "symattn/cli.py",
       "            if command is None:\n                _register(subparsers, module_name)",
       "            if True:\n                _register(subparsers, module_name)",
       "symattn --help imports every command module again (start-up of the whole CLI)",
       "top_level", "tests/test_startup.py"),
    _m("audit-layers-sorted", "audit", "symattn/audit/conventions.py", "prefixes = list(groups)",
       "prefixes = sorted(groups)",
       "the audit reads a state dict's layers in sorted-key order (layers.10 before layers.2), not module order"),
    _m("audit-heads-config-ignored", "audit", "symattn/audit/conventions.py",
       'H, heads_from = config["heads"], "the checkpoint\'s config"',
       'H, heads_from = per_layer[i - 1] or 1, "the checkpoint\'s config"',
       "the checkpoint config's num_heads is misread (the default, one head, is used and credited to the config)"),
    _m("audit-symmetry-label-exact", "audit", "symattn/audit/modules.py",
       '"tier": "numerical float64: symmetries checked by', '"tier": "exact: symmetries checked by',
       "the float64 symmetry check of the tiers on PyTorch's modules is labelled exact"),
    _m("audit-budget-unenforced", "audit", "symattn/audit/budget.py", "            if used > seconds:\n",
       "            if False:\n", "a bounded step lets its child run past its CPU seconds (the budget is "
       "not enforced; only the wall-clock safety cap stops it)"),
    _m("audit-memory-wrong-tier", "audit", "symattn/audit/analysis.py",
       'cheapest = work["modules_bytes"] if work["modules_bytes"] is not None else work["matrix_free_bytes"]',
       'cheapest = work["matrix_free_bytes"]',
       "--max-memory is checked against the attention-only tier's estimate, not the block model's own"),
    # -- block layer kinds where the naive reference now looks (issue 23 item 1, issue 24 item 1)
    _m("blocks-ln-eps-dropped", "blocks", _LN,
       'values=np.array([[eps]], dtype=object)', 'values=np.array([[Fraction(0)]], dtype=object)',
       "LayerNorm drops its eps (1/sqrt(var) instead of 1/sqrt(var + eps))"),
    _m("blocks-ln-variance-unbiased", "blocks", _LN,
       'b.op(f"{tag}.c2", "mul", c, c), axis=-2), inv_d)',
       'b.op(f"{tag}.c2", "mul", c, c), axis=-2), b.op(f"{tag}.1/(d-1)", "const", '
       'values=np.array([[Fraction(1, width - 1)]], dtype=object)))',
       "LayerNorm divides the sum of squares by d - 1 (the unbiased variance, not PyTorch's)"),
    _m("blocks-value-bias-twice", "blocks", _GRAPH,
       'y = layer.bias_part.values(b, y, name.get("bV"), f"{tag}.VSb")',
       'y = layer.bias_part.values(b, layer.bias_part.values(b, y, name.get("bV"), f"{tag}.VSb0"), name.get("bV"), '
       'f"{tag}.VSb")',
       "the value bias is added twice"),
    _m("blocks-output-projection-transposed", "blocks", _GRAPH,
       'y = layer.combine_part.build(b, name.get("O"), y, f"{tag}.OVS")',
       'y = layer.combine_part.build(b, b.op(f"{tag}.OT", "transpose", name["O"]) if "O" in name else None, y, '
       'f"{tag}.OVS")',
       "the output projection W_O of concatenated heads is applied transposed (a weight-layout slip)"),
    _m("blocks-prenorm-mlp-unnormed", "blocks", _GRAPH,
       'z = mlp(b, norm(y, "mlp_norm") if pre else y, parts, layer.activation, f"layer{i}.MLP")',
       'z = mlp(b, y, parts, layer.activation, f"layer{i}.MLP")',
       "a pre-norm layer's MLP sublayer reads the stream without its LayerNorm"),
    _m("blocks-gelu-tanh-constant", "blocks", "symattn/core/algebras/functions.py",
       "sympy.Rational(44715, 10**6)", "sympy.Rational(4715, 10**6)",
       "GELU's tanh form has a wrong cubic constant (0.004715 for 0.044715)"),
    _m("blocks-gelu-erf-scale", "blocks", "symattn/core/algebras/functions.py",
       '"gelu": s * (1 + sympy.erf(s / sympy.sqrt(2))) / 2', '"gelu": s * (1 + sympy.erf(s / 2)) / 2',
       "GELU's erf form divides by 2 instead of sqrt(2)"),
    _m("blocks-silu-sign", "blocks", "symattn/core/algebras/functions.py",
       '"silu": s / (1 + sympy.exp(-s))', '"silu": s / (1 + sympy.exp(s))',
       "SiLU uses sigmoid(-x) (a sign slip in the exponent)"),
    _m("blocks-sigmoid-slope", "blocks", "symattn/core/algebras/functions.py",
       '"sigmoid": 1 / (1 + sympy.exp(-s))', '"sigmoid": 1 / (1 + sympy.exp(-2 * s))',
       "the sigmoid is sigmoid(2x) (confused with (1 + tanh x)/2)"),
    _m("reference-ln-eps-dropped", "reference", _LN,
       "r = R.fn(R.add(R.mul(var, inv_d), R.number(eps)), rsqrt())", "r = R.fn(R.mul(var, inv_d), rsqrt())",
       "the naive reference's LayerNorm drops eps"),
    _m("reference-gelu-tanh-constant", "reference", _ACT,
       "mp.mpf(44715) / 10**6", "mp.mpf(4715) / 10**6",
       "the naive reference's GELU tanh form has a wrong cubic constant"),
    _m("reference-value-bias-dropped", "reference", "symattn/model/reference.py",
       'block(f"bV{i}{sfx}") if biased else None)',
       'None)',
       "the naive reference forgets the value bias"),
    # -- coverage of issue 23 (branch mutants): analyses, certificate machinery, layer kinds
    _t("column-proof-first-prime-ignored", "certificate", "symattn/analyses/column_proof.py",
       "for n, result in enumerate(map_forked(residues, tasks), 1):",
       "for n, result in enumerate(list(map_forked(residues, tasks))[1:], 1):",
       "the column proof forgets the first computed prime's residues (a column nonzero mod that prime is "
       "proved zero)", "refutes_by_a_computed_prime", "tests/test_spectrum.py"),
    # -- issue 41, item 2: the paper's stack at depth (the attention lemma on token differences over Q)
    _t("column-proof-lemma-order-high", "certificate", "symattn/analyses/column_proof.py",
       "    return [4 * int(e) + 1 for e in differences]", "    return [4 * int(e) + 3 for e in differences]",
       "the attention lemma claims two orders more than the token differences give (a query/key column "
       "proved zero beyond its order)", "lemma_orders_hold or higher_claim", "tests/test_column_proof_depth.py"),
    _t("token-differences-of-a-token-with-itself", "certificate", "symattn/analyses/column_proof.py",
       "int(algebra.valuation(algebra.sub(x[..., 1:], x[..., :1])).min())",
       "int(algebra.valuation(algebra.sub(x[..., 1:], x[..., 1:])).min())",
       "the token differences of a layer's output are taken of each token with itself (zero: every "
       "order proved)", "higher_claim or agree_with", "tests/test_column_proof_depth.py"),
    _t("token-differences-best-input", "certificate", "symattn/analyses/column_proof.py",
       "        found = [min(a, b) for a, b in zip(found, vs)]", "        found = [max(a, b) for a, b in zip(found, vs)]",
       "the token differences' valuation of the bank is the best input's, not the worst's",
       "equal_tokens", "tests/test_column_proof_depth.py"),
    # -- issue 41: the collapse recursion (the lemma's token differences from the structure, checked mod p)
    _t("collapse-recursion-high", "certificate", "symattn/analyses/column_proof.py",
       "        found.append(3 * found[-1] + 1)\n", "        found.append(3 * found[-1] + 2)\n",
       "the collapse recursion claims one power of u more per layer than the structure gives (the "
       "user's spectrum at D = 4 fails its mod-p check, exit 1)",
       "collapse_recursion_is_a_lower_bound or spectrum_at_depth_four", "tests/test_column_proof_depth.py"),
    _t("collapse-check-disabled", "certificate", "symattn/analyses/column_proof.py",
       "for i, (r, b) in enumerate(zip(residues, bounds)) if r < min(b, order)]",
       "for i, (r, b) in enumerate(zip(residues, bounds)) if False]",
       "the collapse recursion's powers are not compared with the token differences modulo the prime "
       "(an over-claiming recursion passes)", "overclaiming_recursion", "tests/test_column_proof_depth.py"),
    # -- issue 41: the rank route first where the numerical guide's orders are all 0 and 1
    _t("rank-first-past-order-one", "path rank", "symattn/analyses/constant_spectrum.py",
       "    return bool(orders) and max(o for o, _ in orders) <= 1\n",
       "    return bool(orders) and max(o for o, _ in orders) <= 5\n",
       "the rank route is tried first on a guide with orders past 1 (ranks cannot decide them: time lost)",
       "reads_the_guide or past_order_one", "tests/test_rank_first.py"),
    _t("rank-first-for-method-constants", "path rank", "symattn/analyses/spectrum.py",
       "ranks_first=why is not None)", "ranks_first=True)",
       "method constants takes the rank route first too (it asks for the exact frames: proof n4 would compare "
       "the rank route with itself)", "method_constants_asks", "tests/test_rank_first.py"),
    _t("rank-first-declined-returned", "path rank", "symattn/analyses/constant_spectrum.py",
       "        if ranked is not None:\n            return ranked\n        say(\"the ranks of the truncations do not",
       "        return ranked\n        say(\"the ranks of the truncations do not",
       "a rank route that declines is returned as the run (no hand-over to the exact frames)",
       "declining_rank_route", "tests/test_rank_first.py"),
    _m("column-proof-bound-short", "certificate", "symattn/analyses/column_proof.py",
       "bound = max(bounds[: b // 2 + 1])", "bound = max(bounds[: max(1, b // 2)])",
       "the column proof's height bound of an order misses the last power of u it needs (too few primes)"),
    _m("columns-relation-sign", "certificate", "symattn/analyses/columns.py",
       "new += [(a, shift + vals[f] - vals[j], -q * x) for a, shift, x in terms[j]]",
       "new += [(a, shift + vals[f] - vals[j], q * x) for a, shift, x in terms[j]]",
       "the column reduction adds the pivot columns instead of subtracting them"),
    _m("columns-bound-no-denominator", "certificate", "symattn/analyses/columns.py",
       "for _, _, x in t) * D * H)", "for _, _, x in t) * H)",
       "the reduced columns' height bound forgets the common denominator D of the Jacobian's coefficients"),
    _m("certify-sum-one-entry", "certificate", _CERT,
       "height = [[n * h for h in part] for part in x.height]", "height = [[h for h in part] for part in x.height]",
       "the majorant of a sum of n entries is that of one entry (bounds too small)"),
    _m("certify-add-rows-max", "certificate", _CERT,
       "rows = [[a + b for a, b in zip(p, q)] for p, q in zip(self._rows(x), self._rows(y))]",
       "rows = [[max(a, b) for a, b in zip(p, q)] for p, q in zip(self._rows(x), self._rows(y))]",
       "the row-sum bound of a majorant sum is the larger one, not the sum (bounds too small)"),
    _m("certify-vanishing-half", "certificate", _CERT,
       "return math.prod(primes) > 2 * bound", "return math.prod(primes) > bound // 2",
       "vanishing modulo primes whose product is only half the height bound is taken as a proof"),
    _m("certify-settle-composite-moduli", "certificate", _CERT,
       "ok = all(ms and len(set(ms)) == len(ms) and all(flint.fmpz(q).is_prime() for q in ms)",
       "ok = all(ms and len(set(ms)) == len(ms)",
       "settle accepts a proof whose moduli are not primes"),
    _m("certify-height-round-down", "certificate", _CERT,
       "return -((-(denominator * height)) >> HEIGHT_SHIFT)", "return (denominator * height) >> HEIGHT_SHIFT",
       "the integer height bound rounds down instead of up"),
    _m("inverse-amplitude-power", "inverse", "symattn/analyses/inverse.py",
       "a *= (g[i - 1] * z.dot(m).dot(z)) ** (3 ** (j - 1 - i))", "a *= (g[i - 1] * z.dot(m).dot(z)) ** (3 ** (j - i))",
       "the local inverse's prefix amplitude a_{j-1} uses the wrong power of 3"),
    _m("inverse-contrast-odd", "inverse", "symattn/analyses/inverse.py",
       "    if n % 2:\n        c[-1] = Fraction(0)\n", "",
       "the probe contrast of an odd number of tokens does not have mean zero"),
    _m("taylor-cap-short", "normalizer", "symattn/model/taylor.py",
       "flint.ctx.cap = order + 1\n", "flint.ctx.cap = order\n",
       "the flint Taylor expansion stops one coefficient early (the top one padded as 0)"),
    _m("taylor-negative-power", "normalizer", "symattn/model/taylor.py",
       "base.inv() ** int(-exponent)", "base.inv() ** int(1 - exponent)",
       "a negative integer power of a series (the logistic's 1/(1 + e^-s)) is one power too high"),
    _m("architecture-readout-square", "layer", "symattn/model/architecture.py",
       'return [("L", (self.widths[-1], d0))]', 'return [("L", (d0, d0))]',
       "the effective readout L is declared d_0 x d_0 instead of d_D x d_0 (unequal widths)"),
    _m("architecture-effective-any", "layer", "symattn/model/architecture.py",
       "return all(layer.reduces for layer in self.layers)", "return any(layer.reduces for layer in self.layers)",
       "a stack with one layer that does not reduce (eq. 3) is said to have an effective map"),
    _m("protocol-f3-slope-one-token", "protocols", "symattn/analyses/protocols.py",
       "slope = (J[0, 0] + J[1, 0]) / 2", "slope = J[0, 0]",
       "App. F.3's slope f'(0) is the first output token's derivative, not the mean's"),
    _m("protocol-f3-bisection-swapped", "protocols", "symattn/analyses/protocols.py",
       "lo = np.where(below, mid, lo)\n                hi = np.where(below, hi, mid)",
       "lo = np.where(below, lo, mid)\n                hi = np.where(below, mid, hi)",
       "App. F.3's bisection keeps the wrong half"),
    _m("arrays-transpose-all-axes", "algebras", "symattn/core/algebras/arrays.py",
       "return np.swapaxes(x, -1, -2)", "return np.transpose(x)",
       "the array algebras' transpose reverses every axis (a batch of matrices is scrambled)"),
    _m("rational-matmul-untransposed", "algebras", "symattn/core/algebras/rational.py",
       "return np.swapaxes(out, -1, -2)", "return out.reshape(shape)",
       "the exact batched product (b^T a^T)^T forgets the final transpose"),
    _m("float64-phi-no-derivative", "algebras", "symattn/core/algebras/float64.py",
       "return normalizer.evaluate_float(np.asarray(x, dtype=np.float64), derivative)",
       "return normalizer.evaluate_float(np.asarray(x, dtype=np.float64), 0)",
       "float64 evaluates phi where a derivative phi^(j) is asked (the tangent rule's phi')"),
    _m("multiprecision-embed-float", "algebras", "symattn/core/algebras/multiprecision.py",
       "return self.ctx.mpf(q.numerator) / q.denominator", "return self.ctx.mpf(q.numerator / q.denominator)",
       "mpmath embeds a rational through a binary64 division (16 digits, not the working precision)"),
    _m("symbolic-phi-no-derivative", "algebras", "symattn/core/algebras/symbolic.py",
       "expr = sympy.diff(normalizer.expr, s, derivative)", "expr = normalizer.expr",
       "the symbolic algebra evaluates phi where a derivative phi^(j) is asked"),
    _m("balls-half-precision", "algebras", "symattn/core/algebras/balls.py",
       "return int(math.ceil(digits * math.log2(10))) + 8", "return int(math.ceil(digits * math.log2(10) / 2)) + 8",
       "ball arithmetic works at half the bits the digits need"),
    _m("base-neg-identity", "algebras", "symattn/core/algebras/base.py",
       "return self.sub(self.zeros(self.shape(x)), x)", "return self.sub(x, self.zeros(self.shape(x)))",
       "the default negation returns x (0 - x written x - 0)"),
    _m("parse-unary-minus", "parse", "symattn/core/parse.py",
       "        value = _build(node.operand, text, variables, calls)\n        return -value if isinstance(node.op, ast.USub) else value",
       "        value = _build(node.operand, text, variables, calls)\n        return value",
       "the whitelist parser drops a unary minus (exp(-s) read as exp(s))"),
    _t("validate-int-high-off-by-one", "validate", "symattn/core/validate.py",
       "(high is not None and value > high)", "(high is not None and value > high + 1)",
       "an integer one above its upper limit is accepted", "test_the_kit_names_the_expected_form",
       "tests/test_testing.py"),
    _t("spec-repeat-short", "spec", "symattn/model/spec.py",
       "layers += [layer] * repeat", "layers += [layer] * max(1, repeat - 1)",
       "a spec's repeat = k builds k - 1 layers", "test_spec_and_cli_options_accept_block_parts",
       "tests/test_blocks.py"),
    _m("sensitivity-coefficient-power", "sensitivity", "symattn/analyses/sensitivity.py",
       "coeffs = [midpoint(s) / t_ref ** order for s in sig[k: k + multiplicity]]",
       "coeffs = [midpoint(s) / t_ref ** (order + 1) for s in sig[k: k + multiplicity]]",
       "a band's leading coefficient c = sigma / t^beta divides by one power of t too many"),
    _m("sensitivity-loss-unscaled", "sensitivity", "symattn/analyses/sensitivity.py",
       "loss = [None if order == 0 else (eps * s1 / c) ** (1 / order) for c in coeffs]",
       "loss = [None if order == 0 else (eps / c) ** (1 / order) for c in coeffs]",
       "the float64 loss threshold c t^beta = eps sigma_1 forgets sigma_1"),
    _m("matrix-free-value-untransposed", "matrix-free", "symattn/analyses/matrix_free.py",
       "out = out + A @ x @ V.T", "out = out + A @ x @ V",
       "the PyTorch forward applies V instead of V^T to the token rows"),
    _m("layers-reduces-with-skip", "layer", "symattn/model/layers.py",
       'return (len(self.heads) == 1 and not self.combine_part.has_output_projection and not self.residual',
       'return (len(self.heads) == 1 and not self.combine_part.has_output_projection',
       "a layer with a skip connection is said to reduce to an effective score (eq. 3)"),
    _m("parallel-serial-drops-first", "parallel", "symattn/core/parallel.py",
       "yield from map(func, items)", "yield from map(func, items[1:])",
       "the serial path of map_forked skips the first item (a prime of the column proof never checked)"),
    _t("errors-unlucky-is-bad-input", "errors", "symattn/core/errors.py",
       "class UnluckyPrime(Undecided):", "class UnluckyPrime(Undecided, SymattnError):",
       "an unlucky prime is reported as bad input (exit 2) instead of undecided",
       "test_series_rejects_bad_order_and_prime", "tests/test_algebras.py"),
    _t("budget-rings-during-cleanup", "limits", "symattn/core/limits.py",
       "if fired and _expired_on_its_way_out() and now - rung < _GRACE_SECONDS:", "if False:",
       "a time budget's repeated alarm interrupts the cleanup on the way out of the first one (a lock left "
       "held: a hang)", "way_out"),
    # the certified tier of the audit on real models (issue 24): binary64 balls, the Weyl/Schur rank
    # certificate, ReLU where its signs are certified
    _t("f64balls-inflate-dropped", "balls", _BALLS, "INFLATE = 1.0 + 2.0 ** -48", "INFLATE = 1.0",
       "a binary64 ball's radius is not enlarged for its own roundings (it may round below the distance it covers)",
       "exact_distance", "tests/test_balls.py"),
    _t("f64balls-mul-propagation-dropped", "balls", _BALLS, "        r += np.abs(x[0]) * y[1]\n",
       "        pass\n", "a product of binary64 balls forgets the radius of the second factor times the first midpoint",
       "exact_distance", "tests/test_balls.py"),
    _t("f64balls-matmul-rounding-dropped", "balls", _BALLS, "        r = np.matmul(am, bm * g + y[1])",
       "        r = np.matmul(am, y[1])", "a matrix product of binary64 balls forgets the rounding of its BLAS product (gamma_n times the absolute values)",
       "exact_distance", "tests/test_balls.py"),
    _t("f64balls-underflow-unamplified", "balls", _BALLS,
       "absolute = max(_up(_up(4 * n * ETA) * _up(top + 1.0)), TINY)", "absolute = TINY",
       "a matrix product forgets that an underflow in its radius is amplified by the first factor", "underflow", "tests/test_balls.py"),
    _t("f64balls-relu-sign-unchecked", "balls", _BALLS, "        if not (v > 0 or v < 0):  # arb comparisons",
       "        if False:  # arb comparisons",
       "ReLU of a ball that contains 0 is taken as 0 (a non-differentiable point treated as a linear piece)",
       "relu", "tests/test_balls.py"),
    _t("ball-field-digits-as-bits", "linear algebra", "symattn/core/ball_field.py",
       "return cls(digits_to_bits(digits))", "return cls(digits)",
       "the ball field reads a number of decimal digits as bits (a third of the precision asked for)",
       "balls_eigenvalues_and_products", "tests/test_linalg.py"),
    _t("torch-missing-unsaid", "numerics", "symattn/core/optional.py",
       "        raise SymattnError(TORCH_HINT) from None\n", "        torch = None\n",
       "a missing PyTorch gives None instead of the install hint (a crash later, exit 70)",
       "reproduce_f2_without_torch", "tests/test_numerics.py"),
    _t("repr-not-cut", "numerics", "symattn/render/rich_result.py",
       "return f\"<{name}: {short(self._headline(), REPR_LIMIT - len(name) - 4)}>\"",
       "return f\"<{name}: {short(self._headline(), 10 ** 6)}>\"",
       "a result's repr is not cut to REPR_LIMIT characters (a log shows a dump)",
       "audit_repr_is_short", "tests/test_testing_displays.py"),
    _t("certified-rank-radius-dropped", "linear algebra", "symattn/core/rank_certificate.py",
       "        err = _up(_up(radius + _up(nX * _product_error(mid, Y))) + _product_error(X.T, P1))",
       "        err = _up(_up(0.0 + _up(nX * _product_error(mid, Y))) + _product_error(X.T, P1))",
       "Weyl's bound forgets the radii of the balls (a singular matrix inside them certified nonsingular)",
       "never_exceeds", "tests/test_linalg.py"),
    _t("certified-rank-schur-dropped", "linear algebra", "symattn/core/rank_certificate.py", "                schur = _up(_up(n21 * n12) / a)",
       "                schur = 0.0", "weak directions are certified on their own block, without the Schur term",
       "schur", "tests/test_linalg.py"),
    _t("certified-rank-weak-radius-dropped", "linear algebra", "symattn/core/rank_certificate.py",
       "        errW = _up(_up(nX * _fro_up(MW[1])) + _product_error(XW.T, MW[0]))",
       "        errW = _product_error(XW.T, MW[0])", "the weak directions' own enclosures are taken as exact",
       "weak_directions", "tests/test_linalg.py"),
    _m("audit-relu-rescaling-sign", "audit", _BLK,
       "move[Fa][j], move[fa][j], move[Fb][:, j] = point[Fa][j], point[fa][j], -point[Fb][:, j]",
       "move[Fa][j], move[fa][j], move[Fb][:, j] = point[Fa][j], point[fa][j], point[Fb][:, j]",
       "the ReLU rescaling moves the output column by +Fb[:, j] (not a kernel vector; the upper bound too low)"),
    _m("audit-certified-all-but-one", "audit", _BLK, '        "value": cert.rank, "inputs": inputs,',
       '        "value": cert.rank - 1, "inputs": inputs,', "the audit reports one less than the rank it certified"),
    _t("audit-relu-inputs-unchecked", "audit", _BLK, "    if relu:\n        keep = []\n",
       "    if False:\n        keep = []\n",
       "probe inputs with a ReLU pre-activation whose ball contains 0 are not left out (the tier stops instead)",
       "zero_pre_activation", "tests/test_audit_blocks.py"),
    _t("audit-enclosure-check-off", "audit", _BLK,
       "        if abs(float(ball.mid()) - mid[r, c]) > rad[r, c] + float(ball.rad()) + 4 * np.spacing(abs(mid[r, c])):",
       "        if False:", "the binary64 Jacobian is not checked against python-flint balls on a few entries",
       "disjoint", "tests/test_audit_blocks.py"),
    _m("layernorm-normal-bias-sign", "blocks", "symattn/model/symmetry_kinds.py",
       "move[bias.name].reshape(-1)[k] = -c", "move[bias.name].reshape(-1)[k] = c",
       "a LayerNorm normal moves the reader's bias by +c instead of -c (not a kernel vector)"),
    _m("layernorm-normal-gain-not-inverted", "blocks", _LN,
       "w = np.array([1 / v for v in gain], dtype=object)", "w = np.array(gain, dtype=object)",
       "a LayerNorm normal uses g instead of 1/g (w^T y is then not constant)"),
    _t("normals-dependent-kept", "blocks", "symattn/model/symmetries.py",
       "kept = {i for pos, i in enumerate(order) if not optional[i] or pos in pivots}",
       "kept = set(order)",
       "a LayerNorm normal in the span of the other declared directions is kept (a dependent kernel split)",
       "dependent_layer_norm_normals", "tests/test_blocks.py"),
    _m("ln-bias-transfer-residual-sign", "blocks", "symattn/model/symmetry_kinds.py",
       "move[residual.name].reshape(-1)[j] -= 1", "move[residual.name].reshape(-1)[j] += 1",
       "a LayerNorm bias transfer adds the shift to the residual's bias instead of taking it back"),
    _m("ln-bias-transfer-reader-sign", "blocks", "symattn/model/symmetry_kinds.py",
       "move[bias.name] = -np.array(col, dtype=object).reshape(arch.shape(bias))",
       "move[bias.name] = np.array(col, dtype=object).reshape(arch.shape(bias))",
       "a LayerNorm bias transfer moves the readers' biases by +W delta"),
    _m("ln-bias-transfer-residual-forgotten", "blocks", "symattn/model/symmetry_kinds.py",
       'carried = parts["mlp.out_bias"] if layer.post_norm and layer.residual else None', "carried = None",
       "a LayerNorm bias transfer into the MLP forgets the shift that the residual carries on"),
    _t("cli-message-not-one-line", "cli", "symattn/cli.py",
       '    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(exc))', "    return str(exc)",
       "an error message quoting a newline (a store row, a file name) is printed on two lines",
       "one_line_whatever_it_quotes"),
    # the numerical least-bank search (issue 24): n4 compares it with the exact one on the paper's stack
    _m("nbank-tier-certified", "bank", "symattn/analyses/bank.py",
       'tier = f"numerical at {digits} digits"', 'tier = "certified"',
       "the numerical least bank is labelled certified"),
    _m("nbank-below-proved", "bank", "symattn/analyses/bank.py",
       "{str(k): v for k, v in by_seed.items()}, defects, False,",
       "{str(k): v for k, v in by_seed.items()}, defects, True,",
       "the numerical least bank says the smaller banks are proved insufficient"),
    _m("nbank-prefix-rows-ignored", "bank", "symattn/analyses/numerical_spectrum.py",
       "rows = JQ[: m * self.rows, :] if m < self.size else JQ", "rows = JQ",
       "a sub-bank's numerical spectrum reads the rows of the whole bank"),
    _t("nbank-spectrum-rank-only", "bank", "symattn/analyses/bank.py",
       "return n.resolved and n.key() == ref.key()", "return n.rank == ref.rank",
       "a sub-bank reaches the reference when its rank does (orders and multiplicities ignored)",
       "agrees_with_the_square_bank", "tests/test_numerical_bank.py"),
    _t("nbank-reference-unresolved-ignored", "bank", "symattn/analyses/bank.py",
       "    if not ref.resolved:\n", "    if False:\n",
       "an unresolved numerical reference spectrum gives a number instead of undecided",
       "unresolved_slopes_are_undecided", "tests/test_numerical_bank.py"),
    _t("nbank-no-monotone-check", "bank", "symattn/analyses/bank.py",
       "for k in range(m or size, size):", "for k in range(size, size):",
       "a larger sub-bank leaving the reference spectrum is not noticed",
       "prefix_leaving_the_reference", "tests/test_numerical_bank.py"),
    _t("nbank-total-order-ignored", "bank", "symattn/analyses/bank.py",
       "abs(n.slope_sum - total) <= 0.5", "True",
       "an unresolved sub-bank whose total order differs is undecided instead of not reaching the reference",
       "unresolved_sub_bank", "tests/test_numerical_bank.py"),
    _t("nbank-unresolved-prefix-silent", "bank", "symattn/analyses/bank.py",
       "abs(n.slope_sum - total) <= 0.5", "False",
       "an unresolved sub-bank with the reference's total order counts as not reaching it (not undecided)",
       "unresolved_sub_bank", "tests/test_numerical_bank.py"),
    _t("nbank-memory-unchecked", "bank", "symattn/analyses/numerical_spectrum.py",
       "    require_memory(numerical_bytes(arch, inputs, digits), what, max_memory_gib)\n", "",
       "the numerical tier ignores --max-memory", "bad_input_exits_2", "tests/test_numerical_bank.py"),
    _t("nbank-exact-refusal-unnamed", "bank", "symattn/analyses/bank.py",
       "; for the least bank: symattn bank --method numerical", "",
       "the exact route's undecided answer does not name the numerical tier",
       "post_norm_stack_gets_a_numerical_answer", "tests/test_numerical_bank.py"),
    # the constants route (issue 24): Q adjoined the constants, the proved frame, the route
    _m("constants-rsqrt-binomial", "constants", _CONST,
       "                binom = binom * (Fraction(-1, 2) - k) / (k + 1)\n",
       "                binom = binom * (Fraction(1, 2) - k) / (k + 1)\n",
       "LayerNorm's 1/sqrt expanded with the binomial of +1/2 (the square root's) in Q[constants]"),
    _m("constants-relation-inverted", "constants", _CONST,
       '            return self._name("rsqrt", q, 1 / q)\n', '            return self._name("rsqrt", q, q)\n',
       "the relation of a LayerNorm root is w^2 = c instead of 1/c (every reduced element wrong)"),
    _m("constants-tanh-derivative-sign", "constants", _CONST,
       '    derivative = (1 - poly * poly) if name == "tanh" else poly * (1 - poly)\n',
       '    derivative = (1 + poly * poly) if name == "tanh" else poly * (1 - poly)\n',
       "tanh' taken as 1 + tanh^2 in the derivative chain of the free constant"),
    _m("constants-hermite-sign", "constants", _CONST,
       "            he.append(c * he[m] - m * he[m - 1])\n", "            he.append(c * he[m] + m * he[m - 1])\n",
       "GELU's Hermite recurrence with the wrong sign (Phi's derivatives of order 3 and up)"),
    _m("constants-phi-value", "constants", _CONST,
       "                values[const.index] = (-(c * c) / 2).exp() / (2 * flint.arb.pi()).sqrt()\n",
       "                values[const.index] = (-(c * c) / 2).exp() / (flint.arb.pi()).sqrt()\n",
       "the Gaussian density's ball value without the 2 in sqrt(2 pi) (every GELU value wrong)"),
    _t("constants-normal-form-skipped", "constants", _CONST,
       "                    if poly.degrees()[i] >= 2:\n                        poly = poly % rel\n",
       "                    if False:\n                        poly = poly % rel\n",
       "the tower's relations are never applied (elements never in normal form: zeros missed, inverses wrong)",
       "relations_and_invert", "tests/test_constant_spectrum.py"),
    _t("constants-export-drops-relation", "constants", _CONST,
       '            if rel is not None:\n                rhs = rel.poly if isinstance(rel, Element) else rel\n',
       '            if False:\n                rhs = rel.poly if isinstance(rel, Element) else rel\n',
       "a restored field forgets the relations of its square roots (the parent's zeros and balls wrong)",
       "export_restore", "tests/test_constant_spectrum.py"),
    _t("frame-hidden-zero-taken", "frame", _FRAME,
       "            if all(b.contains(0) for b in column):\n", "            if False:\n",
       "a leading coefficient that is nonzero in the field but zero in value is taken as leading",
       "hidden_zero", "tests/test_constant_spectrum.py"),
    _t("frame-operation-unchecked", "frame", _FRAME,
       "        if v <= vals[f]:\n", "        if False:\n",
       "a column operation that does not raise the exact valuation is kept (a wrong, too-low order)",
       "each_operation_exactly", "tests/test_constant_spectrum.py"),
    # the hybrid frame: exact mod t^1, certified ball series above (issue 24)
    _t("known-ball-near-zero-taken", "frame", _FRAME,
       "            return bool(self.exact != 0)\n        return True\n",
       "            return bool(self.exact != 0)\n        return not self.ball.contains(0)\n",
       "a ball-only coefficient whose ball contains 0 is taken as an exact zero (a false zero, a wrong order)",
       "known_zeros", "tests/test_constant_spectrum.py"),
    _t("hybrid-agreement-unchecked", "constants", "symattn/analyses/constant_spectrum.py",
       "                if not exact[idx].overlaps(B[(0,) + idx]):\n", "                if False:\n",
       "the hybrid frame's exact t^0 coefficients and its ball series are not compared",
       "two_code_paths", "tests/test_constant_spectrum.py"),
    _t("hybrid-kernel-balls-unchecked", "constants", "symattn/analyses/constant_spectrum.py",
       "                if not all(v.contains(0) for v in K.reshape(-1)):\n", "                if False:\n",
       "the declared symmetries' kernel products in balls above t^0 are not checked",
       "two_code_paths", "tests/test_constant_spectrum.py"),
    # the partial frame: exact to a lower truncation where the whole one and the hybrid do not fit
    _t("partial-frame-unlabelled", "constants", "symattn/analyses/constant_spectrum.py",
       '    partial["truncated"] = (', '    partial["truncated_"] = (',
       "a partial frame's spectrum is reported without saying it is truncated (orders past the cut unclaimed "
       "but unsaid)", "partial or truncated", "tests/test_constant_spectrum.py"),
    _t("partial-frame-note-not-shown", "constants", "symattn/analyses/spectrum.py",
       '    if run.get("truncated") or run.get("completed"):\n', '    if run.get("completed"):\n',
       "the spectrum drops the partial frame's truncation note", "truncated", "tests/test_constant_spectrum.py"),
    # the completed frame: exact to the guide's jump, the gap's columns alone to t^N (issue 41)
    _t("completed-frame-note-not-shown", "constants", "symattn/analyses/spectrum.py",
       '    if run.get("truncated") or run.get("completed"):\n', '    if run.get("truncated"):\n',
       "the spectrum drops the completed frame's note (how its orders were proved unsaid)",
       "names_the_completed_frame", "tests/test_completed_frame.py"),
    _t("completed-unknown-taken-as-zero", "constants", "symattn/analyses/constant_spectrum.py",
       "    def __ne__(self, other) -> bool:  # type: ignore[override]\n        return True\n",
       "    def __ne__(self, other) -> bool:  # type: ignore[override]\n        return False\n",
       "a coefficient the completed frame did not compute is taken for an exact zero (a false order)",
       "never_a_zero", "tests/test_completed_frame.py"),
    _t("completed-leading-unknown-unchecked", "constants", "symattn/analyses/constant_spectrum.py",
       "    return any(o is not None and any(isinstance(v, _Unknown) for v in _combine(J, terms)[o])\n",
       "    return False and any(o is not None and any(isinstance(v, _Unknown) for v in _combine(J, terms)[o])\n",
       "a completed frame column whose leading coefficient combines a coefficient not computed is kept",
       "on_a_coefficient_not_computed", "tests/test_completed_frame.py"),
    _t("completed-gap-columns-dropped", "constants", "symattn/analyses/constant_spectrum.py",
       "    gap = _gap_columns(s, partial[\"proofs\"])\n", "    gap = []\n",
       "the completed frame does not compute the partial frame's gap columns (its gap returned as if whole)",
       "proves_the_whole_spectrum", "tests/test_completed_frame.py"),
    _t("completed-agreement-unchecked", "constants", "symattn/analyses/constant_spectrum.py",
       "        if not np.all(y[:cut] == low[:, b * per: (b + 1) * per][:, :, gap]):\n", "        if False:\n",
       "the gap's columns computed alone are not compared with the rows of all the columns",
       "agree_with_all_the_columns", "tests/test_completed_frame.py"),
    _t("partial-cut-past-the-jump", "constants", "symattn/analyses/constant_spectrum.py",
       "    return low + 1 if high - low >= 2 else None", "    return high + 1 if high - low >= 2 else None",
       "the partial frame's truncation taken past the guide's largest jump (the costly orders it avoids)",
       "partial", "tests/test_constant_spectrum.py"),
    # the numerical tier's second method: a column-reduced frame of the ball series, two tolerances
    _t("numerical-frame-tolerances-unchecked", "numerical", "symattn/analyses/numerical_spectrum.py",
       "        if found[0] is not None and found[0] == found[1]:\n",
       "        if found[0] is not None:\n",
       "the numerical frame's two tolerances are not compared (a tolerance-dependent frame replaces the slopes)",
       "unsettled", "tests/test_numerical_frame.py"),
    _t("numerical-frame-keeps-the-slopes", "numerical", "symattn/analyses/numerical_spectrum.py",
       "    spectrum.bands, spectrum.rank, spectrum.unexplained = bands, len(orders), gap\n", "    pass\n",
       "a correcting frame's bands are announced but the slopes' are reported",
       "corrects", "tests/test_numerical_frame.py"),
    _t("numerical-frame-rank-not-corrected", "numerical", "symattn/analyses/numerical_spectrum.py",
       "    spectrum.bands, spectrum.rank, spectrum.unexplained = bands, len(orders), gap\n",
       "    spectrum.bands = bands\n",
       "a settled frame's rank and kernel are announced but the slopes' are reported",
       "floor", "tests/test_numerical_frame.py"),
    _t("numerical-frame-time-unbounded", "numerical", "symattn/analyses/numerical_spectrum.py",
       "        if 2 * digits > FRAME_MAX_DIGITS or (now - start) + 4 * (now - level) > FRAME_SECONDS:\n",
       "        if 2 * digits > FRAME_MAX_DIGITS:\n",
       "the numerical frame doubles its digits past its time (1200 digits whatever they cost)",
       "escalates", "tests/test_numerical_frame.py"),
    _t("numerical-frame-fixed-tolerance", "numerical", _FRAME,
       "    floor = flint.arb(scale) * flint.arb(10) ** (-tolerance)\n",
       "    floor = flint.arb(scale) * flint.arb(10) ** (-30)\n",
       "the numerical frame's zero test ignores its tolerance (both tolerances one test)",
       "tolerance_decides", "tests/test_numerical_frame.py"),
    # the rank of J at the path point t = 1: a certified lower bound on the path rank
    _m("path-rank-at-the-collapse", "path rank", "symattn/analyses/path_rank.py",
       "        rank, numerical, digits = _ball_rank(s.arch, s.point, s.kernel,",
       "        rank, numerical, digits = _ball_rank(s.arch, {n: v * 0 if s.arch.block(n).is_factor else v for n, v "
       "in s.point.items()}, s.kernel,",
       "the path rank evaluates J at the collapse point t = 0 (the rank of J_0: the orders above t^0 missed)"),
    _t("path-rank-analyticity-unchecked", "path rank", "symattn/analyses/path_rank.py",
       "    if why is not None:\n", "    if False:\n",
       "the path rank is claimed for networks not analytic on the path (the identity theorem does not apply)",
       "not_analytic", "tests/test_path_rank.py"),
    _t("audit-summary-hides-assumptions", "audit", "symattn/audit/verdict.py",
       '        return " (assumed)" if what in assumed else ""\n',
       '        return ""\n',
       "the audit's first line names an assumed activation and LayerNorm placement as if the file recorded "
       "them (a description of a model the file may not be)", "assumed_heads", "tests/test_audit_blocks.py"),
    # -- Hugging Face folders and the forward check (issue 40; issue 42 item 4): killed by the family
    # tests, whose `symattn audit FOLDER` exits 1 on the forward check (the user's own command)
    _t("hf-conv1d-c-proj-untransposed", "audit", "symattn/audit/hf.py",
       'out[a + "in_proj_weight"], out[a + "out_proj.weight"] = w_in, w("o")',
       'out[a + "in_proj_weight"], out[a + "out_proj.weight"] = w_in, np.asarray(state[got[("o", "weight")]])',
       "GPT-2's c_proj is read as stored (Conv1D's (in, out), untransposed): another output map",
       "each_family and gpt2", "tests/test_audit_hf.py"),
    _t("hf-gpt2-read-post-norm", "audit", "symattn/audit/hf.py",
       '        True, True, final_norm=("ln_f",), conv1d=True,',
       '        False, True, final_norm=("ln_f",), conv1d=True,',
       "GPT-2's layers are read as post-norm (the residual placement of BERT)",
       "each_family and gpt2", "tests/test_audit_hf.py"),
    _t("hf-gelu-new-as-erf-gelu", "audit", "symattn/audit/readers.py",
       '{"gelu_new": "gelu_tanh",', '{"gelu_new": "gelu",',
       "GPT-2's gelu_new (the tanh approximation) is read as the exact erf GELU",
       "each_family and gpt2", "tests/test_audit_hf.py"),
    _t("audit-w-o-rows-per-head", "audit", "symattn/audit/conventions.py",
       "w_in[2 * E:][rows].copy(), c, w_out[:, rows].copy()))",
       "w_in[2 * E:][rows].copy(), c, w_out[rows, :].T.copy()))",
       "each head's output map is read from rows instead of columns of W_o (the heads' figures mixed)",
       "each_family and bert", "tests/test_audit_hf.py"),
    _t("forward-head-check-off", "audit", "symattn/audit/forward.py",
       "                if not d <= t:\n                    raise CheckFailed(f\"forward check: {a.name} head",
       "                if False:\n                    raise CheckFailed(f\"forward check: {a.name} head",
       "the forward check compares the layers but not each head's reading with the file's own module",
       "rows_of_w_o or head_mismatch", "tests/test_audit_hf.py"),
    _t("safetensors-metadata-first-64", "audit readers", "symattn/audit/readers.py",
       "for k, v in meta.items()})", "for k, v in list(meta.items())[:64]})",
       "a safetensors __metadata__ is read only up to its 64th entry (nhead, norm_first past it ignored)",
       "header_fixes", "tests/test_audit_hf.py"),
    _t("json-duplicate-keys-accepted", "audit readers", "symattn/audit/readers.py",
       "        if key in out:\n            raise SymattnError(f\"the key", "        if False:\n            raise SymattnError(f\"the key",
       "a JSON object with a key twice (a tensor named twice) is accepted, the last one winning",
       "header_fixes or folder_refusals", "tests/test_audit_hf.py"),
    _t("audit-pass-with-assumptions", "audit", "symattn/audit/verdict.py",
       '"WARN" if counts["warn"] or m.assumptions or unproven else "PASS"',
       '"WARN" if counts["warn"] or unproven else "PASS"',
       "a model with an assumed norm placement, activation or norm kind gets PASS",
       "assumptions_make_a_warn or norm_without_bias", "tests/test_audit_hf.py"),
    # -- Llama, Mistral and Qwen2 (issue 40 items 1-3): the decoder parts and their reading, killed by the
    # user's `symattn audit FOLDER` (exit 1 on the forward check) or by the symmetry checks' tests
    _t("rotary-apply-sign", "decoder parts", "symattn/model/parts/rotary.py",
       "rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)",
       "rotated = torch.cat([x[..., half:], -x[..., :half]], dim=-1)",
       "the rebuilt model rotates queries and keys the other way round (a rotary sign)",
       "each_decoder_family and llama", "tests/test_audit_hf_decoder.py"),
    _t("rotary-reference-sign", "decoder parts", "symattn/model/parts/rotary.py",
       "out[..., a, i] = x[..., a, i] * c - x[..., a, k] * s",
       "out[..., a, i] = x[..., a, i] * c + x[..., a, k] * s",
       "the naive rotary formula (the reference without transformers) is not a rotation",
       "each_decoder_family and llama", "tests/test_audit_hf_decoder.py"),
    _t("rotary-frequencies-halved-exponent", "decoder parts", "symattn/model/parts/rotary.py",
       "self.base ** (-2.0 * j / self.dim)", "self.base ** (-1.0 * j / self.dim)",
       "the rotary frequencies base^(-j/e) instead of base^(-2j/e) (the reference and the rebuilt model agree; "
       "transformers' own tables do not)", "each_decoder_family and qwen2", "tests/test_audit_hf_decoder.py"),
    _t("gqa-kv-heads-interleaved", "decoder parts", "symattn/model/parts/gqa.py",
       "return h // (self.heads // self.kv_heads)", "return h % self.kv_heads",
       "query head h reads KV head h % G instead of h // (H/G): the KV heads repeated in the wrong order",
       "each_decoder_family and mistral", "tests/test_audit_hf_decoder.py"),
    _t("hf-decoder-rmsnorm-as-layernorm", "audit", "symattn/audit/hf.py",
       'norm_kind="rmsnorm", decoder=True)', 'norm_kind="layernorm", decoder=True)',
       "a Llama-style folder's RMSNorm read as LayerNorm", "each_decoder_family and llama",
       "tests/test_audit_hf_decoder.py"),
    _t("swiglu-gate-and-up-swapped", "decoder parts", "symattn/model/parts/swiglu.py",
       "F.linear(F.silu(F.linear(x, gate)) * F.linear(x, up), down)",
       "F.linear(F.silu(F.linear(x, up)) * F.linear(x, gate), down)",
       "the rebuilt SwiGLU applies silu to the up branch instead of the gate", "each_decoder_family and llama",
       "tests/test_audit_hf_decoder.py"),
    _t("swiglu-scaling-sign", "decoder parts", "symattn/model/parts/swiglu.py",
       "return c[:, None] * up, -down * c[None, :]", "return c[:, None] * up, down * c[None, :]",
       "the up/down scaling declared with the down projection scaled the same way (not a symmetry)",
       "declared_symmetries_of_the_shipped", "tests/test_audit_hf_decoder.py"),
    _t("decoder-rotary-gauge-untransposed", "audit decoder", "symattn/audit/decoder.py",
       "dk[rk] = -M.T @ wk[rk]", "dk[rk] = -M @ wk[rk]",
       "the rotary query/key gauge declared with M^-1 on the keys instead of M^-T",
       "declared_symmetries_of_the_shipped", "tests/test_audit_hf_decoder.py"),
    _t("decoder-gain-fold-sign", "audit decoder", "symattn/audit/decoder.py",
       "out[sl] = (-w * c[None, :]).reshape(-1)", "out[sl] = (w * c[None, :]).reshape(-1)",
       "an RMSNorm gain folded into the next linear maps with the maps scaled the same way",
       "declared_symmetries_of_the_shipped", "tests/test_audit_hf_decoder.py"),
    _t("decoder-value-gauge-one-head", "audit decoder", "symattn/audit/decoder.py",
       "            for h in gqa.members(g):\n                c = slice(h * e, (h + 1) * e)",
       "            for h in gqa.members(g)[:1]:\n                c = slice(h * e, (h + 1) * e)",
       "the value/output gauge of a KV group applied to the output columns of its first query head only",
       "declared_symmetries_of_the_shipped", "tests/test_audit_hf_decoder.py"),
    _t("decoder-discrete-always-pass", "audit decoder", "symattn/audit/decoder.py",
       '"verified": digits >= DISCRETE_DIGITS', '"verified": digits >= -100',
       "a permutation that changes the outputs is reported as a symmetry", "discrete_symmetries",
       "tests/test_audit_hf_decoder.py"),
    _t("forward-decoder-transformers-tolerance-loose", "audit", "symattn/audit/forward.py",
       "            tol = FLOAT32_INTERNALS_TOLERANCE\n", "            tol = 1.0\n",
       "the check against transformers' own decoder accepts any difference", "each_decoder_family and llama",
       "tests/test_audit_hf_decoder.py"),
    # -- the final norm part and the certified tier of GPT-2 and ViT (issue 40 item 6)
    _t("final-norm-not-applied", "layer parts", _GRAPH,
       '        x = arch.final_norm.build(b, x, params, arch.widths[-1], "final_norm")',
       '        arch.final_norm.build(b, x, params, arch.widths[-1], "final_norm")',
       "the graph builds the final norm's nodes but returns the stack's output without it",
       "graph_equals", "tests/test_final_norm.py"),
    _t("final-norm-reference-skipped", "layer parts", "symattn/model/reference.py",
       "        X = final.reference(R, X, {p: block(f\"{p}{arch.depth}\") for p in final.parameters})",
       "        final.reference(R, X, {p: block(f\"{p}{arch.depth}\") for p in final.parameters})",
       "the naive reference leaves the final norm out (it would agree with a graph that does the same)",
       "graph_equals", "tests/test_final_norm.py"),
    _t("final-norm-blocks-missing", "layer parts", "symattn/model/architecture.py",
       "        if final_norm is not None:  # the model-level part", "        if False:  # the model-level part",
       "the architecture holds a final norm but lists no blocks for it (its gain and shift are no parameters)",
       "blocks_and_description", "tests/test_final_norm.py"),
    _t("final-norm-shift-one-row", "layer parts", "symattn/model/parts/final_norm.py",
       "                move[:, k] = Fraction(1)", "                move[0, k] = Fraction(1)",
       "the LayerNorm shift through the final norm declared on one row, not along 1 (not a symmetry)",
       "shifts_through_the_final_norm", "tests/test_final_norm.py"),
    _t("final-norm-shifts-under-rmsnorm", "layer parts", "symattn/model/parts/final_norm.py",
       "    if final is None or not final.part.removes_mean or any(",
       "    if final is None or any(",
       "the shifts along 1 declared through a final RMSNorm, which keeps the mean (not a symmetry)",
       "shifts_through_the_final_norm", "tests/test_final_norm.py"),
    _t("final-norm-shifts-not-declared", "layer parts", "symattn/model/symmetry_kinds.py",
       '    out += [Symmetry("LayerNorm shift", i, head, flat_vector(arch, move)) for i, head, move in final_norm_shifts(arch)]',
       '    out += []',
       "the LayerNorm shifts through the final norm are not declared (GPT-2's and ViT's bounds do not meet)",
       "small_folder and gpt2", "tests/test_audit_certified_hf.py"),
    _t("audit-final-norm-gain-shift-swapped", "audit", _BLK,
       'point[f"final_norm.gain{D}"], point[f"final_norm.shift{D}"] = _column(n.gain), _column(n.bias)',
       'point[f"final_norm.gain{D}"], point[f"final_norm.shift{D}"] = _column(n.bias), _column(n.gain)',
       "the certified tier reads the final LayerNorm's gain as its shift and back",
       "layer_kinds", "tests/test_audit_certified_hf.py"),
    _t("audit-certified-unmasked", "audit", _BLK,
       '                          mask="causal" if causal else "none")', '                          mask="none")',
       "the certified tier of a causal model (GPT-2) is of the unmasked layer kinds",
       "layer_kinds and gpt2", "tests/test_audit_certified_hf.py"),
    _t("audit-certified-graph-check-unmasked", "audit", _BLK,
       '    stack = TorchStack(model, "float64", causal=causal)', '    stack = TorchStack(model, "float64")',
       "the certified tier's graph check runs PyTorch's modules unmasked for a causal model",
       "layer_kinds and gpt2", "tests/test_audit_certified_hf.py"),
    _m("score-lemma-order-overstated", "score orders", "symattn/analyses/score_orders.py",
       '("query/key", u, 1 + 2 * a)', '("query/key", u, 2 + 2 * a)',
       "the score lemma claims the query/key columns one order higher than it proves (1 + 2a)"),
    _m("score-differences-one-further", "score orders", "symattn/analyses/score_orders.py",
       "    return 2 * least\n", "    return 2 * least + 2\n",
       "the token differences are claimed to agree one order of u further than their exact zeros show"),
    _t("ball-dimension-bounds-from-one-point", "dimension", "symattn/analyses/dimension.py",
       "            if least is None or upper < least[0]:",
       "            if best[1] is values:",
       "the ball tier's upper bound comes from the point with the largest rank, not the smallest over the "
       "points (a point where fewer symmetries are declared leaves the dimension undecided)",
       "bounds_meet_across_points", "tests/test_block_analyses.py"),
    _t("ball-rank-time-unbounded", "dimension", "symattn/analyses/dimension.py",
       "        if not wide and (certified == upper or certified == numerical == last or top or late):\n",
       "        if not wide and (certified == upper or certified == numerical == last or top):\n",
       "the certified rank of a ball Jacobian doubles its digits past its time budget", "time_budget",
       "tests/test_path_rank.py"),
    _t("ball-rank-stops-at-the-first-agreement", "dimension", "symattn/analyses/dimension.py",
       "        if not wide and (certified == upper or certified == numerical == last or top or late):\n",
       "        if not wide and (certified == upper or certified == numerical or top or late):\n",
       "the certified rank stops where certified and numerical ranks first agree (graded scales: 60 digits "
       "miss singular values)", "time_budget", "tests/test_path_rank.py"),
    _t("mean-interface-not-before-an-mlp", "blocks", "symattn/model/symmetry_kinds.py",
       'elif layer.post_norm and i < arch.depth and arch.layers[i].post_norm and \\\n',
       'elif layer.post_norm and i < arch.depth and arch.layers[i].post_norm and not arch.layers[i].mlp and \\\n',
       "the LayerNorm interface I + 1 h^T is not declared before a post-norm layer with an MLP (an undeclared "
       "kernel direction left unexplained)", "mean_interface", "tests/test_constant_spectrum.py"),
    _m("rank-route-zero-columns-ignored", "path rank", "symattn/analyses/path_rank.py",
       "        upper = rank - len(orders) if k else min(rank, nonzero)\n",
       "        upper = rank - len(orders)\n",
       "the rank route's bound on the t^0 orders ignores the exactly zero columns (the orders 0 and 1 undecided)"),
    _m("rank-route-toeplitz-transposed", "path rank", "symattn/analyses/path_rank.py",
       "            T[i * m:(i + 1) * m, j * n:(j + 1) * n] = J[i - j]\n",
       "            T[i * m:(i + 1) * m, j * n:(j + 1) * n] = J[j]\n",
       "the truncations' block Toeplitz matrices are built from the wrong coefficients"),
    _t("rank-route-collapse-unchecked", "path rank", "symattn/analyses/path_rank.py",
       "            if not all(a.overlaps(b) for a, b in zip(J[0].reshape(-1), point.reshape(-1))):\n",
       "            if False:\n",
       "the rank route's ball series is not compared with the Jacobian at the collapse point",
       "collapse_point", "tests/test_path_rank.py"),
    _t("carried-shift-same-sign", "blocks", "symattn/model/symmetry_kinds.py",
       "    for h, sign in zip(heads, (1, -1)):\n", "    for h, sign in zip(heads, (1, 1)):\n",
       "the carried LayerNorm shift puts 1 back into the residual stream instead of taking it out",
       "carried_layer_norm_shift", "tests/test_constant_spectrum.py"),
    _t("normal-shift-queries-uncompensated", "blocks", "symattn/model/symmetry_kinds.py",
       "    return -np.outer(w, seen) / c if any(v != 0 for v in seen) else None\n", "    return None\n",
       "a LayerNorm shift the queries see is declared without the queries taking it back (normal and carried "
       "shifts)", "normal_shifts_with_query or carried_layer_norm_shift", "tests/test_constant_spectrum.py"),
    _t("finite-past-dropped", "path rank", _SPEC,
       "        head_permutations=head_permutation_check(arch, s.point, X[:2]), past=past,\n",
       "        head_permutations=head_permutation_check(arch, s.point, X[:2]), past=0,\n",
       "the constants route computes the finite orders past its truncation and reports none",
       "memory_says", "tests/test_constant_spectrum.py"),
    _t("numerical-rank-unchecked", "numerical", "symattn/analyses/numerical_spectrum.py",
       "    return rank_check(arch, frame_check(arch, spectrum, seed, progress), seed, progress)\n",
       "    return frame_check(arch, spectrum, seed, progress)\n",
       "the numerical tier reports no certified lower bound on its rank", "graded_slopes",
       "tests/test_numerical_frame.py"),
    _m("ball-series-jet-factorial", "balls", _SER,
       "backend, ctx)) / math.factorial(k) for k", "backend, ctx)) / math.factorial(k + 1) for k",
       "the numerical fields' Taylor coefficients (balls, mpmath) divided by (k+1)! instead of k! (every "
       "coefficient above t^0 wrong)"),
    _t("ball-series-zero-test-contains", "balls", "symattn/core/algebras/ballseries.py",
       "lambda v: bool(v.is_exact() and v == 0)", "lambda v: bool(v.contains(0))",
       "the ball series treats a ball that contains 0 as an exact zero (its support and valuations)",
       "ball_series or exact_zero", "tests/test_constant_spectrum.py"),
    _t("series-fn-offset-not-exact", "balls", _SER,
       "        y[0] = self.field.zeros(np.shape(c))  # exactly", "        pass  # exactly",
       "the series of f(c + y) takes y's constant term as c - c (a ball around 0, not the exact 0)",
       "ball_series", "tests/test_constant_spectrum.py"),
    _t("frame-minor-unchecked", "frame", _FRAME,
       "    if certified < len(finite):\n", "    if False:\n",
       "the leading matrix's minor is not certified in balls (its rank claimed from the numerical pivots)",
       "certified_leading_minor", "tests/test_constant_spectrum.py"),
    _t("frame-rational-tolerance-loose", "frame", _FRAME,
       "    if abs(value - q) > Fraction(1, 10 ** (digits // 2)) * max(1, abs(value)):\n",
       "    if abs(value - q) > Fraction(1, 10 ** 3) * max(1, abs(value)):\n",
       "relation coefficients accepted as rationals to 3 digits (an irrational relation taken as rational)",
       "irrational_relation", "tests/test_constant_spectrum.py"),
    _m("frame-gap-counted-finite", "frame", _FRAME,
       "    finite = [j for j in range(k) if vals[j] < N]\n", "    finite = [j for j in range(k) if vals[j] <= N]\n",
       "a column vanishing mod t^N counted among the finite orders (the gap and the rank wrong)"),
    _t("constants-kernel-unchecked", "constants", "symattn/analyses/constant_spectrum.py",
       '            if not result.value["kernel"]:\n', "            if False:\n",
       "the declared symmetries are not checked as exact kernel vectors in Q[constants]",
       "wrong_symmetry", "tests/test_constant_spectrum.py"),
    _t("constants-child-time-unlimited", "constants", "symattn/analyses/constant_spectrum.py",
       "timeout=left, memory=each)", "timeout=10**6, memory=each)",
       "the constants route's children run each input to its end (the budget only checked between inputs)",
       "budget_is_enforced", "tests/test_constant_spectrum.py"),
    # the block symmetries the certified gaps showed (issue 24)
    _m("mlp-scaling-shift-sign", "gauges", "symattn/model/symmetry_kinds.py",
       "theta[fa][j, :] - x0\n", "theta[fa][j, :] + x0\n",
       "the MLP scaling of a shifted monomial scales fa + x0 instead of fa - x0"),
    _m("mlp-scaling-output-bias-sign", "gauges", "symattn/model/symmetry_kinds.py",
       "                move[fb][:, 0] = degree * e * theta[Fb][:, j]\n",
       "                move[fb][:, 0] = -degree * e * theta[Fb][:, j]\n",
       "the MLP scaling's constant taken back in fb with the wrong sign"),
    _m("interface-shift-absorber-sign", "gauges", "symattn/model/symmetries.py",
       '            move[nxt["mlp.in_bias"].name] = -np.asarray(theta[nxt["mlp.in"].name], dtype=object).dot(shift).reshape(-1, 1)\n',
       '            move[nxt["mlp.in_bias"].name] = np.asarray(theta[nxt["mlp.in"].name], dtype=object).dot(shift).reshape(-1, 1)\n',
       "the interface shift after an MLP taken back in the next MLP's fa with the wrong sign"),
    _m("layernorm-gl2-gain-untwisted", "gauges", "symattn/model/symmetry_kinds.py",
       "    move[g] = D.dot(H).dot(D).dot(gain).reshape(np.shape(theta[g]))\n",
       "    move[g] = H.dot(gain).reshape(np.shape(theta[g]))\n",
       "the width-2 LayerNorm interface moves the gain as if its output were g * xhat without the sign of (1, -1)"),
    _m("layernorm-mean-interface-unit", "gauges", _LN,
       "            return [_unit(width, 0, k) + _unit(width, 1, k) for k in range(2)] if width == 2 else []\n",
       "            return [_unit(width, 0, k) for k in range(2)] if width == 2 else []\n",
       "the interface before a residual and a LayerNorm moves one feature instead of both (not a multiple of 1)"),
    _m("layernorm-normal-shift-residual-forgotten", "gauges", "symattn/model/symmetry_kinds.py",
       "                    delta if carried else np.zeros(len(delta), dtype=object))\n",
       "                    np.zeros(len(delta), dtype=object))\n",
       "the LayerNorm normal shift forgets the shift the residual carries on"),
    _t("numerical-bank-not-grown", "bank", "symattn/analyses/numerical_spectrum.py",
       "        spectrum = grown_numerical_bank(arch, seed, digits, ts, progress)\n",
       "        spectrum = PathJacobians(arch, random_bank(arch, default_bank_size(arch), seed), seed, digits, ts,"
       " progress).spectrum()\n",
       "the numerical tier's bank is not grown (1.5 P rows: the D = 2 post-norm orders come out too high)",
       "equals_the_numerical_tier", "tests/test_constant_spectrum.py"),
    _t("ball-function-pi-frozen", "balls", "symattn/core/algebras/balls.py",
       "namespace = _ArbNamespace(mpf=flint.arb, **_ARB_FUNCTIONS)",
       "namespace = types.SimpleNamespace(mpf=flint.arb, pi=flint.arb.pi(), **_ARB_FUNCTIONS)",
       "a lambdified ball function keeps the pi of its first call's precision (a 30-digit pi at 300 digits)",
       "keeps_pi", "tests/test_balls.py"),
    _t("confine-inherited-pages-counted", "limits", "symattn/core/confine.py",
       "peak = max(peak, proc.memory_info().rss - base_rss)", "peak = max(peak, proc.memory_info().rss)",
       "a confined child's memory counts the pages it inherits (a large parent kills every child at once)",
       "what_the_child_adds", "tests/test_sweep.py"),
    # -- issue 43 (bad input, limits, stores) and issue 42.4 (the store's version, output ownership)
    _t("store-key-without-version", "store", _STORE,
       '"AND seed = ? AND version = ?", (*key, self.version)).fetchone()', '"AND seed = ?", key).fetchone()',
       "a stored result of another symattn version counts as done (a sweep under a new version never "
       "recomputes it)", "another_version", "tests/test_untrusted_limits.py"),
    _t("output-folder-listed-taken-as-unchanged", "output", _OUT,
       "listed is not None and listed.get(target.name) == _digest(target) or is_ours(target)",
       "listed is not None and target.name in listed or is_ours(target)",
       "a file of an atlas folder that the user edited is taken as symattn's own (its name is in the "
       "manifest) and overwritten without --force", "user_edited", "tests/test_untrusted_limits.py"),
    _t("output-stamp-hash-unchecked", "output", _OUT,
       "    return hashlib.sha256(zeroed).hexdigest().encode() == digest\n", "    return bool(zeroed)\n",
       "a stamped file the user edited still counts as symattn's (the stamp's hash is not compared) and "
       "is overwritten without --force", "user_edited or edited_by_the_user", "tests/test_untrusted_limits.py"),
    _t("eps-range-unchecked-above", "parse", "symattn/core/parse.py",
       "if (low is not None and q < low) or (high is not None and q > high):",
       "if (low is not None and q < low) or (high is not None and q > high + 1):",
       "a LayerNorm eps above 1 (the documented range [0, 1]) is accepted", "bad_input_exits_2",
       "tests/test_untrusted_limits.py"),
    _t("eps-without-norm-accepted", "cli", "symattn/commands/layer_options.py",
       '    if eps is not None and norm in (None, "none"):', '    if eps is not None and norm == "none":',
       "--eps without --norm is silently ignored (the stack has no LayerNorm)", "bad_input_exits_2",
       "tests/test_untrusted_limits.py"),
    _t("ball-tier-memory-unchecked", "limits", "symattn/commands/dimension.py",
       "require_memory(ball_dimension_bytes(arch),", "require_memory(0,",
       "the ball tier of the dimension allocates without a memory estimate (--max-memory does not limit it)",
       "memory_estimate_before", "tests/test_untrusted_limits.py"),
    _t("store-leftover-of-a-living-creator-removed", "store", _STORE,
       "                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n", "                pass\n",
       "the temporary file of another sweep that is making the same store is removed as a leftover",
       "living_sweep", "tests/test_untrusted_limits.py"),
    _t("markdown-unicode-line-break", "output", _OUT,
       '_LINE_BREAK = re.compile("\\r\\n|[\\n\\r\\x85\\u2028\\u2029]")', '_LINE_BREAK = re.compile("\\r\\n|[\\n\\r]")',
       "a store row's text with a Unicode line separator starts a line (a heading) in the atlas Markdown",
       "never_starts_a_line", "tests/test_untrusted_limits.py"),
    _t("sweep-irrational-normalizer-runs", "sweep", "symattn/sweep/spec.py",
       "                        if analysis.rational(options[name]):\n", "                        if False:\n",
       "a sweep spec's normalizer with an irrational Taylor coefficient is not refused: its cases run and "
       "fail (exit 1 after the work, not 2 before)", "irrational_normalizer_before", "tests/test_untrusted_limits.py"),
    _t("kit-series-type-unchecked", "testing", "symattn/testing/assertions.py",
       "    if not isinstance(series, (sympy.Basic, Sequence, np.ndarray)) or isinstance(series, (str, bytes)):\n",
       "    if isinstance(series, (str, bytes)):\n",
       "the testing kit's series assertion given a number fails deep inside (a TypeError of list(), not "
       "bad input naming the argument)", "python_api_refuses", "tests/test_untrusted_limits.py"),
    _t("cpu-budget-on-the-wall-clock", "limits", "symattn/core/limits.py",
       "    timer, signum = (signal.ITIMER_PROF, signal.SIGPROF) if cpu else (signal.ITIMER_REAL, signal.SIGALRM)\n",
       "    timer, signum = (signal.ITIMER_REAL, signal.SIGALRM)\n",
       "a CPU-time budget counts the wall clock (a busy machine uses it up, the time spent waiting counts)",
       "cpu_budget_is_not_spent", "tests/test_untrusted_limits.py"),
    _t("ball-tier-budget-on-the-wall-clock", "dimension", "symattn/analyses/dimension.py",
       'with time_budget(budget, "the ball tier of the dimension", cpu=True):',
       'with time_budget(budget, "the ball tier of the dimension"):',
       "the ball tier's budget counts the wall clock, not its CPU time (it stops early on a busy machine)",
       "stops_at_its_cpu_budget", "tests/test_untrusted_limits.py"),
    _t("confine-cpu-limit-above-inherited", "limits", "symattn/core/confine.py",
       "        cpu = min(cpu, max(hard - 5, 1))\n", "        pass\n",
       "a confined child asks for more CPU time than an inherited hard limit (ulimit -t) allows: it exits "
       "without a result", "inherited_cpu", "tests/test_sweep.py"),
)

#: Mutant areas, in catalogue order.
def _blind() -> tuple[Mutant, ...]:
    """The blind mutants (issue 42): written from the modules' docstrings and source alone, without reading
    the tests or this catalogue (``benchmarks/blind_mutants.py``); area ``blind``, and the tests that
    kill the ones no proof reaches (chosen after they were written)."""
    import importlib.util

    out: list[Mutant] = []
    for file in ("blind_mutants.py", "blind_mutants_2.py", "blind_mutants_3.py"):
        spec = importlib.util.spec_from_file_location(file[:-3], Path(__file__).with_name(file))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        killers, equivalent = getattr(module, "KILLED_BY", {}), getattr(module, "EQUIVALENT", {})
        out += [Mutant(name, "blind", path, old, new, intent, equivalent.get(name, ""), killers.get(name, ()))
                for name, _, path, old, new, intent in module.BLIND]
    return tuple(out)


MUTANTS = MUTANTS + _blind()

AREAS = tuple(dict.fromkeys(m.area for m in MUTANTS))

_IGNORED = shutil.ignore_patterns(".git", ".venv", "__pycache__", "*.egg-info", "_build", "generated",
                                  "statements", "figures", ".pytest_cache")

# The child runs the copy's registry proof by proof, as ``symattn prove`` does,
# printing one JSON line per proof; SIGALRM bounds each proof.
_CHILD = r"""
import json, signal, sys
from symattn.theorems.registry import discover, run_proof
def _alarm(signum, frame):
    raise TimeoutError("time limit of the mutation run")
signal.signal(signal.SIGALRM, _alarm)
limit, first_kill, coq = int(sys.argv[1]), sys.argv[2] == "first-kill", sys.argv[3] == "coq"
chosen = [p for p in sys.argv[4].split(",") if p] if len(sys.argv) > 4 else []
ids = discover()
order = [i for c in chosen for i in ids if i == c or i.startswith(c + "_")] if chosen else ids
for proof_id in order:
    signal.alarm(limit)
    try:
        r = run_proof(proof_id)
    finally:
        signal.alarm(0)
    print(json.dumps({"id": r.id, "status": r.status, "seconds": round(r.seconds, 2),
                      "error": r.error.splitlines()[0][:300] if r.error else ""}), flush=True)
    if first_kill and r.status != "pass":
        break
if coq:  # the Coq certificates of every proof's quick cases (symattn prove --coq)
    import time
    from symattn.coq.prove import check_proofs
    start = time.perf_counter()
    try:
        cells, _ = check_proofs(discover(), say=lambda msg: None)
        bad = [pid + ": " + c.message for pid, c in cells.items() if c.failed]
        status = "fail" if bad else "pass"
        error = bad[0][:300] if bad else ""
    except Exception as exc:
        status, error = "fail", f"{type(exc).__name__}: {exc}"[:300]
    print(json.dumps({"id": "coq", "status": status, "seconds": round(time.perf_counter() - start, 2),
                      "error": error}), flush=True)
"""

# Prefixed to every child (the proofs' and the tests'): at exit, the child names every
# symattn module it imported from outside its working folder (the patched copy). The editable
# install maps ``symattn.proofs`` to the live tree's ``proofs/`` folder, so without the link
# that :func:`_prepare` makes, a mutant of a proof script never applied (issue 23 harness doubt).
_ORIGINS = r"""
import atexit, json, os, sys
_HERE = os.path.realpath(os.getcwd()) + os.sep
def _report_origins():
    here = _HERE
    outside = sorted(name for name, mod in list(sys.modules.items())
                     if (name == "symattn" or name.startswith("symattn."))
                     and getattr(mod, "__file__", None)
                     and not os.path.realpath(mod.__file__).startswith(here))
    print(json.dumps({"id": "(origins)", "outside": outside[:20],
                      "symattn": getattr(sys.modules.get("symattn"), "__file__", None),
                      "proofs": getattr(sys.modules.get("symattn.proofs"), "__file__", None)}), flush=True)
atexit.register(_report_origins)
"""


def _prepare(copy: Path) -> None:
    """Make the copy import its own proof scripts: ``symattn/proofs`` links to ``proofs/``.

    This is the layout of an installed wheel (``proofs/`` is installed as ``symattn.proofs``).
    Without it, an editable install's import hook resolves ``symattn.proofs`` to the live
    tree's folder, and a mutant of a proof script is never seen by the child.
    """
    link = copy / "symattn" / "proofs"
    if (copy / "proofs" / "__init__.py").is_file() and not link.exists():
        link.symlink_to(Path("..") / "proofs", target_is_directory=True)


def _origins(out: str, copy: Path, required: bool) -> None:
    """Check the child's origins line: every symattn module it imported came from ``copy``.

    Raises
    ------
    RuntimeError
        If a module came from elsewhere (the mutant may not have applied), or if ``required``
        and the child printed no origins line (nothing shows that it ran the copy).
    """
    rows = [json.loads(line) for line in out.splitlines() if line.startswith('{"id": "(origins)"')]
    if not rows:
        if required:
            raise RuntimeError(f"the child of the mutation run in {copy} printed no origins line; "
                               "cannot tell whether it imported the patched copy")
        return
    if rows[-1]["outside"]:
        raise RuntimeError(f"the child of the mutation run imported {', '.join(rows[-1]['outside'])} from outside "
                           f"the patched copy {copy} (symattn: {rows[-1]['symattn']}, proofs: "
                           f"{rows[-1]['proofs']}); the mutant would not apply")


def snapshot(dest: Path) -> Path:
    """Copy the repository's sources (no ``.git``, no virtual environment) into ``dest``."""
    shutil.copytree(ROOT, dest, ignore=_IGNORED)
    return dest


def apply(mutant: Mutant, root: Path) -> None:
    """Apply ``mutant`` to the copy at ``root``.

    Raises
    ------
    RuntimeError
        If the target text does not occur exactly once in the file.
    """
    path = root / mutant.path
    text = path.read_text()
    count = text.count(mutant.old)
    if count != 1:
        raise RuntimeError(f"mutant {mutant.name}: the target text occurs {count} times in {mutant.path} "
                           f"(expected once): {mutant.old!r}")
    path.write_text(text.replace(mutant.old, mutant.new))


def run_mutant(mutant: Mutant | None, base: Path, limit: int = PROOF_LIMIT, first_kill: bool = False,
               proofs: str = "") -> dict:
    """Run the quick proof list on a patched copy of ``base`` (``None``: unpatched).

    With ``first_kill`` the run stops at the first proof that kills the mutant
    (the later proofs are not run; the row records ``first_kill``). ``proofs``, a comma
    list of proof ids or id prefixes (``t9,t11``), runs those only, in that order (a kill
    by any proof is a kill by ``symattn prove``; the others are recorded as not run).

    Returns
    -------
    dict
        ``name``, ``proofs`` (id -> ``pass``/``fail``/``timeout``/``not run``),
        ``errors`` (id -> first line of the failure), ``killed_by``, ``status``
        (``killed``, ``survived`` or ``baseline``) and ``seconds``.
    """
    start = time.perf_counter()
    if mutant is not None and mutant.tests:
        return _run_tests(mutant, base, limit * 4, start)
    with tempfile.TemporaryDirectory(prefix="symattn-mutant-") as tmp:
        copy = Path(tmp) / "repo"
        shutil.copytree(base, copy)
        _prepare(copy)
        if mutant is not None:
            apply(mutant, copy)
        env = dict(os.environ, PYTHONPATH=str(copy), SYMATTN_MUTANT="1")
        coq = "coq" if mutant is not None and mutant.area == "coq" else "python"
        proc = subprocess.Popen([sys.executable, "-c", _ORIGINS + _CHILD, str(limit),
                                 "first-kill" if first_kill else "all", coq, proofs],
                                cwd=copy, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        timed_out = False
        try:
            out, err = proc.communicate(timeout=limit * 12)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            timed_out = True
        _origins(out, copy, required=not timed_out and proc.returncode == 0)
    proofs, errors = {}, {}
    for line in out.splitlines():
        if line.startswith("{") and not line.startswith('{"id": "(origins)"'):
            row = json.loads(line)
            proofs[row["id"]] = "timeout" if row["error"].startswith("TimeoutError") else row["status"]
            if row["error"]:
                errors[row["id"]] = row["error"]
    if proc.returncode not in (0, None) and not proofs:
        errors["(runner)"] = (err.strip().splitlines() or ["no output"])[-1][:300]
    killed_by = [pid for pid, status in proofs.items() if status != "pass"]
    crashed = proc.returncode != 0 and not killed_by
    if crashed:
        killed_by = ["(runner)"]
    status = "baseline" if mutant is None else ("killed" if killed_by else "survived")
    return {"name": mutant.name if mutant else "(none)", "proofs": proofs, "errors": errors,
            "killed_by": killed_by, "status": status, "seconds": round(time.perf_counter() - start, 1),
            "first_kill": bool((first_kill or proofs) and killed_by)}


def _run_tests(mutant: Mutant, base: Path, limit: int, start: float) -> dict:
    """Run the tests that should kill ``mutant`` on a patched copy of ``base`` (pytest in the copy)."""
    with tempfile.TemporaryDirectory(prefix="symattn-mutant-") as tmp:
        copy = Path(tmp) / "repo"
        shutil.copytree(base, copy)
        _prepare(copy)
        apply(mutant, copy)
        env = dict(os.environ, PYTHONPATH=str(copy), SYMATTN_MUTANT="1")
        argv = [sys.executable, "-c", _ORIGINS + "import pytest\nraise SystemExit(pytest.main(sys.argv[1:]))\n",
                "-q", "-x", "-p", "no:cacheprovider", "--no-header", "-o", "addopts=", *mutant.tests]
        try:
            proc = subprocess.run(argv, cwd=copy, env=env, capture_output=True, text=True, timeout=limit)
            code, out = proc.returncode, proc.stdout
        except subprocess.TimeoutExpired:
            code, out = -1, "timeout"
        _origins(out, copy, required=code == 0)
    summary = ([line for line in out.strip().splitlines() if not line.startswith('{"id": "(origins)"')]
               or ["no output"])[-1][:300]
    tests = " ".join(mutant.tests)
    # pytest: 1 = a test failed (killed); 0 = all passed (survived); 2-5 = the run itself failed (no tests
    # collected, a usage error): no kill, recorded as survived with the runner's message
    status = "killed" if code in (1, -1) else "survived"
    killed_by = [f"tests ({tests})"] if code in (1, -1) else []
    return {"name": mutant.name, "proofs": {}, "errors": {} if code == 0 else {"tests": summary},
            "killed_by": killed_by, "status": status, "seconds": round(time.perf_counter() - start, 1),
            "first_kill": False, "tests": tests}


def kill_matrix_rst(matrix: dict) -> str:
    """The reStructuredText page of the kill matrix ``matrix`` (as in the JSON file)."""
    ids = list(matrix["proofs"])
    if any("coq" in r["proofs"] for r in matrix["results"]):  # the Coq check of the exporter's mutants
        ids.append("coq")
    rows = {r["name"]: r for r in matrix["results"]}
    by_name = {m.name: m for m in MUTANTS}
    equivalent = [m for m in MUTANTS if m.equivalent]
    live = {m.name for m in MUTANTS if not m.equivalent}
    blind = {m.name for m in MUTANTS if m.area == "blind"}
    counts = {s: sum(1 for r in matrix["results"] if r["status"] == s and r["name"] in live)
              for s in ("killed", "survived")}
    short = {pid: pid.split("_")[0] for pid in ids}
    lines = [
        ".. Generated by benchmarks/mutants.py from benchmarks/mutants.json; do not edit.", "",
        "Mutation testing: the kill matrix", "=================================", "",
        "``benchmarks/mutants.py`` holds a catalogue of semantic mutants of the model and its "
        "arithmetic: each is one exact text replacement in one source file, with its intent. Each "
        "mutant is applied to a temporary copy of the repository and the quick list of every proof "
        "is run on that copy, as ``symattn prove`` does; the copy imports its own proof scripts "
        "(``symattn/proofs`` links to its ``proofs/``) and the run stops with an error if the child "
        "imported any symattn module from outside the copy (an editable install once resolved "
        "``symattn.proofs`` to the live tree, so mutants of proof scripts never applied). A proof *kills* a mutant when it fails "
        "(``x``: a failed check or an exception; ``T``: its time limit; ``-``: that proof did not "
        "exist when the mutant was run; ``.``: not run, because the run stopped at the first killing "
        "proof, option ``--first-kill``). Each row records the commit of the proofs it was run "
        "against. The mutants of the protective checks of files and input (a store's recognition, "
        "an overwrite refusal, an escape, a limit; issue 28) cannot be reached by a proof: the "
        "named tests kill them instead (result ``killed (tests)``; their proof columns are ``.``).", "",
        "Run it (a minute per mutant) from the repository root::", "",
        "    .venv/bin/python benchmarks/mutants.py", "",
        "or, faster (each mutant stops at its first killing proof; about 20 minutes on the loaded "
        "machine)::", "",
        "    .venv/bin/python benchmarks/mutants.py --first-kill", "",
        f":Mutants: {len(MUTANTS)} in the catalogue, {counts['killed']} killed, "
        f"{counts['survived']} survived, {len(equivalent)} equivalent (not counted), "
        f"{len(live - set(rows))} not run yet",
        *_rates(matrix, blind, live),
        f":Baseline: every proof passes on the unpatched copy: "
        f"{'yes' if matrix.get('baseline_ok') else 'no'}",
        f":Recorded: {matrix.get('recorded', '')}", "",
        ".. list-table::", "   :header-rows: 1", "",
        "   * - mutant", "     - area", *[f"     - {short[pid]}" for pid in ids], "     - result",
        "     - commit",
    ]
    for m in MUTANTS:
        if m.equivalent:
            continue
        r = rows.get(m.name)
        cells = []
        for pid in ids:
            status = r["proofs"].get(pid, "not run") if r else "not run"
            stopped = status == "not run" and r is not None and (r.get("first_kill") or m.tests)
            cells.append({"pass": "", "fail": "x", "timeout": "T"}.get(status, "." if stopped else "\\-"))
        result = r["status"] if r else "not run"
        if m.tests and r:
            result += " (tests)"
        lines += [f"   * - ``{m.name}``", f"     - {m.area}", *[f"     - {c}" for c in cells],
                  f"     - {result}", f"     - {r.get('commit', '') if r else ''}"]
    lines += coverage_rst(matrix)
    lines += blind_rst(matrix)
    lines += ["", "The catalogue", "-------------", ""]
    for m in MUTANTS:
        r = rows.get(m.name)
        lines += [f"``{m.name}``", f"   ({m.area}, ``{m.path}``) {m.intent}."]
        if m.equivalent:
            lines.append(f"   *Equivalent:* {m.equivalent}.")
        elif m.tests:
            lines.append(f"   A protective check no proof reaches: killed by ``pytest {' '.join(m.tests)}``"
                         + (" (*survived*)" if r and r["status"] == "survived" else "") + ".")
        elif r and r["status"] == "survived":
            lines.append("   *Survives* every proof.")
        lines.append("")
    if equivalent:
        lines += ["Equivalent mutants are listed with the reason and are not run.", ""]
    unknown = sorted(set(rows) - set(by_name))
    if unknown:
        lines += ["Results of mutants no longer in the catalogue: " + ", ".join(unknown) + ".", ""]
    return "\n".join(lines)


def select(names: list[str], area: str = "", changed: set[str] | None = None) -> list[Mutant]:
    """The mutants to run, in catalogue order: those named (all if ``names`` is empty), of ``area`` if given,
    whose file is in ``changed`` if given (``--since``); never an equivalent one."""
    return [m for m in MUTANTS if (not names or m.name in names) and not m.equivalent
            and (not area or m.area == area) and (changed is None or m.path in changed)]


def _rates(matrix: dict, blind: set[str], live: set[str]) -> list[str]:
    """The field lines of the blind and the self-written kill rates (equivalent mutants not counted)."""
    status = {r["name"]: r["status"] for r in matrix["results"]}
    out = []
    for label, group, how in (
            ("Blind mutants", blind, "written from the modules' docstrings and source, without their tests or the "
                                     "catalogue"),
            ("Self-written mutants", {m.name for m in MUTANTS} - blind, "written knowing the checks")):
        run = [n for n in group & live if n in status]
        killed = sum(1 for n in run if status[n] == "killed")
        rate = f"{100 * killed / len(run):.0f}%" if run else "none run"
        out.append(f":{label}: {len(group)} ({how}): {killed} killed of {len(run)} run ({rate}), "
                   f"{sum(1 for n in run if status[n] == 'survived')} survived, "
                   f"{len(group - live)} equivalent, {len(group & live) - len(run)} not run yet")
    return out


def blind_rst(matrix: dict) -> list[str]:
    """The section of the blind mutants per module (issue 42: at least three per module the issues added)."""
    status = {r["name"]: r["status"] for r in matrix["results"]}
    by_path: dict[str, list[Mutant]] = {}
    for m in MUTANTS:
        if m.area == "blind":  # the Coq theory's files are one module: the trusted checker
            by_path.setdefault("coq/theories/*.v" if m.path.startswith("coq/theories/") else m.path, []).append(m)
    lines = ["", "Blind mutants per module", "------------------------", "",
             "The mutants of area ``blind`` (``benchmarks/blind_mutants*.py``) were written from each module's "
             "docstrings and source alone, without reading its tests or the catalogue; the tests that kill the "
             "ones no proof reaches were chosen afterwards. A survivor is either argued equivalent (the reason "
             "is in the catalogue below) or a missing check, which was added. Select them with ``--area blind``, "
             "or the mutants of the files changed since a commit with ``--since REF``.", "",
             ".. list-table::", "   :header-rows: 1", "", "   * - module", "     - blind", "     - killed",
             "     - equivalent", "     - survived", "     - not run"]
    for path, group in sorted(by_path.items()):
        live = [m for m in group if not m.equivalent]
        lines += [f"   * - ``{path}``", f"     - {len(group)}",
                  f"     - {sum(1 for m in live if status.get(m.name) == 'killed')}",
                  f"     - {len(group) - len(live)}",
                  f"     - {sum(1 for m in live if status.get(m.name) == 'survived')}",
                  f"     - {sum(1 for m in live if m.name not in status)}"]
    return lines


def modules() -> list[str]:
    """Every module of the package (``__init__.py`` files excepted), as repository paths."""
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "symattn").rglob("*.py") if p.name != "__init__.py")


def coverage(matrix: dict) -> list[dict]:
    """Per module: the mutants placed in it (not equivalent) and how many are killed."""
    rows = {r["name"]: r for r in matrix["results"]}
    out = []
    for module in modules():
        placed = [m for m in MUTANTS if m.path == module and not m.equivalent]
        killed = sum(1 for m in placed if rows.get(m.name, {}).get("status") == "killed")
        out.append({"module": module, "placed": len(placed), "killed": killed,
                    "not_run": sum(1 for m in placed if m.name not in rows)})
    return out


def coverage_rst(matrix: dict) -> list[str]:
    """The coverage section of the page: per folder, mutants placed and killed per module."""
    table = coverage(matrix)
    uncovered = [row["module"] for row in table if not row["placed"]]
    lines = ["", "Coverage per module", "-------------------", "",
             f"{sum(r['placed'] for r in table)} mutants placed in {len(table) - len(uncovered)} of "
             f"{len(table)} modules; a module without a mutant is *uncovered*.", "",
             ".. list-table::", "   :header-rows: 1", "", "   * - module", "     - placed", "     - killed",
             "     - not run"]
    for row in table:
        if row["placed"]:
            lines += [f"   * - ``{row['module']}``", f"     - {row['placed']}", f"     - {row['killed']}",
                      f"     - {row['not_run']}"]
    lines += ["", "Uncovered modules (no mutant yet): " + (", ".join(f"``{m}``" for m in uncovered) or "none") + "."]
    return lines


def _commit() -> str:
    """The repository's commit, with ``+`` when the working tree differs from it."""
    def git(*a: str) -> str:
        return subprocess.run(["git", *a], cwd=ROOT, capture_output=True, text=True, check=False).stdout.strip()
    return git("rev-parse", "--short", "HEAD") + ("+" if git("status", "--porcelain", "--untracked-files=no") else "")


def _write(matrix: dict) -> None:
    JSON_PATH.write_text(json.dumps(matrix, indent=1) + "\n")
    RST_PATH.write_text(kill_matrix_rst(matrix) + "\n")


def _load() -> dict:
    if JSON_PATH.exists():
        return json.loads(JSON_PATH.read_text())
    return {"proofs": [], "results": [], "baseline_ok": False, "recorded": ""}


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point (see the module docstring)."""
    parser = argparse.ArgumentParser(description="Run the mutation catalogue against symattn prove.")
    parser.add_argument("names", nargs="*", help="mutants to run (default: all); results are merged")
    parser.add_argument("--list", action="store_true", help="print the catalogue")
    parser.add_argument("--check", action="store_true", help="check that every patch applies; run nothing")
    parser.add_argument("--limit", type=int, default=PROOF_LIMIT, help="seconds per proof of a mutant")
    parser.add_argument("--no-write", action="store_true", help="do not write the JSON and RST files")
    parser.add_argument("--render", action="store_true", help="rewrite docs/mutants.rst from the JSON; run nothing")
    parser.add_argument("--proofs", default="", metavar="ID,...",
                        help="run only these proofs (ids or prefixes, in this order), for the baseline and "
                             "every mutant; the other proofs are recorded as not run")
    parser.add_argument("--area", default="", metavar="AREA",
                        help="run only the mutants of this area (blind: the mutants written blind)")
    parser.add_argument("--since", default="", metavar="REF",
                        help="run only the mutants whose file changed since the git commit REF (a stop's "
                             "--first-kill run covers the mutants of every module it touched)")
    parser.add_argument("--first-kill", action="store_true",
                        help="stop each mutant's run at its first killing proof (saves time; the later "
                             "proofs of a killed mutant are shown as not run)")
    args = parser.parse_args(argv)
    names = [m.name for m in MUTANTS]
    if len(set(names)) != len(names):
        raise RuntimeError("duplicate mutant names")
    unknown = [n for n in args.names if n not in names]
    if unknown:
        parser.error(f"unknown mutants: {', '.join(unknown)}")
    if args.list:
        for m in MUTANTS:
            print(f"{m.name:36s} {m.area:11s} {m.path:30s} {m.intent}")
        return 0
    if args.render:
        RST_PATH.write_text(kill_matrix_rst(_load()) + "\n")
        return 0
    changed = None
    if args.since:
        diff = subprocess.run(["git", "diff", "--name-only", args.since, "--"], cwd=ROOT, capture_output=True,
                              text=True, check=False)
        if diff.returncode:
            parser.error(f"--since {args.since}: {(diff.stderr.strip().splitlines() or ['git failed'])[-1]}")
        changed = set(diff.stdout.split())
    if args.area and args.area not in AREAS:
        parser.error(f"unknown area {args.area!r} (areas: {', '.join(AREAS)})")
    chosen = select(args.names, args.area, changed)
    with tempfile.TemporaryDirectory(prefix="symattn-snapshot-") as tmp:
        base = snapshot(Path(tmp) / "repo")
        if args.check:
            for m in MUTANTS:
                with tempfile.TemporaryDirectory() as one:
                    copy = Path(one) / "repo"
                    (copy / Path(m.path).parent).mkdir(parents=True)
                    shutil.copy(base / m.path, copy / m.path)
                    apply(m, copy)
            print(f"{len(MUTANTS)} patches apply")
            return 0
        matrix = _load()
        print("baseline (unpatched copy) ...", file=sys.stderr, flush=True)
        baseline = run_mutant(None, base, args.limit, proofs=args.proofs)
        if not args.proofs:
            matrix["proofs"] = list(baseline["proofs"])
        else:  # the known proofs, and any new one in the subset
            known = list(dict.fromkeys(matrix["proofs"] + list(baseline["proofs"])))
            matrix["proofs"] = sorted(known, key=lambda p: ("tn".index(p[0]), int(p[1:].split("_")[0]), p))
        matrix["baseline_ok"] = bool(baseline["proofs"]) and not baseline["killed_by"]
        if not matrix["baseline_ok"]:
            print(f"the unpatched copy fails: {baseline['errors']}", file=sys.stderr)
            return 1
        results = {r["name"]: r for r in matrix["results"]}
        commit = _commit()
        for number, m in enumerate(chosen, 1):
            print(f"[{number}/{len(chosen)}] {m.name} ...", end="", file=sys.stderr, flush=True)
            r = run_mutant(m, base, args.limit, args.first_kill, args.proofs)
            r["commit"] = commit
            results[m.name] = r
            print(f" {r['status']} ({', '.join(r['killed_by']) or '-'}; {r['seconds']} s)", file=sys.stderr,
                  flush=True)
            matrix["results"] = [results[n] for n in names if n in results]
            matrix["recorded"] = time.strftime("%Y-%m-%d", time.gmtime())
            if not args.no_write:  # after every mutant, so an interrupted run keeps its results
                _write(matrix)
    survivors = [r["name"] for r in matrix["results"] if r["status"] == "survived"
                 and not next(m for m in MUTANTS if m.name == r["name"]).equivalent]
    print(f"{len(matrix['results'])} mutants run: {len(survivors)} survived"
          + (f" ({', '.join(survivors)})" if survivors else ""), file=sys.stderr)
    return 1 if survivors else 0


if __name__ == "__main__":
    raise SystemExit(main())
