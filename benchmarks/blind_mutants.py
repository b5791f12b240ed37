"""Blind mutants (issue 42): written from the modules' docstrings and source alone, without reading the tests or the catalogue."""
from __future__ import annotations

BLIND = [
    # (name, area, path, old, new, intent)
    ('blind-norm-homogeneous-inverted', 'blind', 'symattn/model/parts/norm.py', 'return 0 if eps == 0 else None', 'return 0 if eps != 0 else None', 'homogeneous_degree inverted: claims scale invariance (degree 0) exactly when eps != 0, None at eps = 0'),
    ('blind-norm-diagonal-off-by-one', 'blind', 'symattn/model/parts/norm.py', 'return [_unit(width, k, k) for k in range(width)]', 'return [_unit(width, k, k) for k in range(width - 1)]', 'the base interface directions miss the last diagonal E_kk (off-by-one): one gain-scaling symmetry lost'),
    ('blind-norm-parameters-phantom-shift', 'blind', 'symattn/model/parts/norm.py', 'return ("gain", "shift") if self.has_shift else ("gain",)', 'return ("gain", "shift")', 'every norm lists a shift block: RMSNorm gets phantom parameters that no node reads (a zero Jacobian column each)'),
    ('blind-norm-eq-any-norm', 'blind', 'symattn/model/parts/kind.py', 'return type(self) is type(other)', 'return isinstance(other, PartKind)', 'a part kind (Norm.__eq__ through PartKind) compares equal to any kind: LayerNorm == RMSNorm, so two architectures differing only in the norm compare equal'),
    ('blind-layernorm-centre-swapped', 'blind', 'symattn/model/parts/layernorm.py', 'c = b.op(f"{tag}.c", "sub", y, mean)', 'c = b.op(f"{tag}.c", "sub", mean, y)', "the graph centres as mean - y instead of y - mean (swapped arguments): the normalized part's sign flips"),
    ('blind-layernorm-reference-sum-not-mean', 'blind', 'symattn/model/parts/layernorm.py', 'r = R.fn(R.add(R.mul(var, inv_d), R.number(eps)), rsqrt())', 'r = R.fn(R.add(var, R.number(eps)), rsqrt())', 'the naive reference drops the 1/d of the variance (sum of squares, not their mean)'),
    ('blind-layernorm-mean-interface-transposed', 'blind', 'symattn/model/parts/layernorm.py', 'return [_unit(width, 0, k) + _unit(width, 1, k) for k in range(2)] if width == 2 else []', 'return [_unit(width, k, 0) + _unit(width, k, 1) for k in range(2)] if width == 2 else []', 'the width-2 mean-moving interfaces are e_k 1^T (transposed) instead of 1 e_k^T: they do not move outputs along 1'),
    ('blind-rmsnorm-sum-over-tokens', 'blind', 'symattn/model/parts/rmsnorm.py', 'b.op(f"{tag}.y2", "mul", y, y), axis=-2)', 'b.op(f"{tag}.y2", "mul", y, y), axis=-1)', "the graph's mean square sums over the tokens (axis -1) instead of the features (axis -2)"),
    ('blind-rmsnorm-den-not-rsqrt', 'blind', 'symattn/model/parts/rmsnorm.py', 'b.op(f"{tag}.n", "mul", y, r)', 'b.op(f"{tag}.n", "mul", y, den)', 'the graph multiplies by mean(y^2) + eps instead of its 1/sqrt (the rsqrt node is bypassed)'),
    ('blind-rmsnorm-reference-eps-inside-mean', 'blind', 'symattn/model/parts/rmsnorm.py', 'r = R.fn(R.add(R.mul(ms, inv_d), R.number(eps)), rsqrt())', 'r = R.fn(R.mul(R.add(ms, R.number(eps)), inv_d), rsqrt())', 'the naive reference divides eps by d too: 1/sqrt((sum y^2 + eps)/d) instead of 1/sqrt(mean y^2 + eps)'),
    ('blind-real-line-positive-nonstrict', 'blind', 'symattn/model/real_line.py', 'positive = bool(lo > 0)', 'positive = bool(lo >= 0)', 'positivity from the enclosure with >= 0: a normalizer whose infimum is 0 (s^2) is declared positive'),
    ('blind-real-line-s-nonnegative', 'blind', 'symattn/model/real_line.py', 'return _WHOLE, True', 'return (mpmath.mpf(0), _INF), True', 'the symbol s ranges over [0, inf) instead of all of R: 1 + s is declared positive, 1/(1 + s) analytic'),
    ('blind-real-line-power-base-zero', 'blind', 'symattn/model/real_line.py', 'if x[0] <= 0:\n                return _WHOLE, False\n            p = mpmath.mpf', 'if x[0] < 0:\n                return _WHOLE, False\n            p = mpmath.mpf', 'a rational power of a base whose interval touches 0 is accepted as analytic (sqrt(s^2), (s^2)^(1/3))'),
    ('blind-catalogue-logistic-series', 'blind', 'symattn/model/catalogue.py', 'lambda s: 1 + s.tanh() / 2', 'lambda s: (1 + s.tanh()) / 2', "the logistic entry's power series is (1 + tanh s)/2 instead of 1 + tanh(s)/2 (a precedence slip in the table)"),
    ('blind-catalogue-of-taylor-only', 'blind', 'symattn/model/catalogue.py', 'if taylor(e, 6) == mine and sympy.simplify(e - expr) == 0:', 'if taylor(e, 6) == mine:', "catalogue_of accepts a candidate whose Taylor coefficients agree through order 6, without the simplify proof (exp(s) + s^7 is 'exp')"),
    ('blind-catalogue-of-taylor-swapped', 'blind', 'symattn/model/catalogue.py', 'mine = taylor(expr, 6)', 'mine = taylor(e, 6)', "catalogue_of takes the Taylor data of the first catalogue entry instead of the expression's: (exp(s)+exp(-s))/2 is not recognised as cosh"),
    ('blind-genericity-elementwise-dominance', 'blind', 'symattn/analyses/genericity.py', 'sa, sb = sa + x, sb + y', 'sa, sb = x, y', 'dominance compares the orders elementwise instead of their running sums: [0, 2] vs [1, 1] becomes incomparable'),
    ('blind-genericity-theorem-multiplicity', 'blind', 'symattn/analyses/genericity.py', 'out += [beta] * (r * (2 * d - r))', 'out += [beta] * (r * (d - r))', "Theorem 4's multiplicity of beta_i is r_i (d - r_i) instead of r_i (2 d - r_i)"),
    ('blind-genericity-uncertified-theorem', 'blind', 'symattn/analyses/genericity.py', 'if theorem is not None and certified[0]:', 'if theorem is not None:', "an uncertified point is labelled 'generic (certified)' when Theorem 4 covers the stack"),
    ('blind-mlp-derivative-off-by-one', 'blind', 'symattn/model/symmetry_kinds.py', 'coeffs = [k * c[k] for k in range(1, len(c))] if deriv else list(c)', 'coeffs = [k * c[k] for k in range(0, len(c))] if deriv else list(c)', "the activation's derivative starts at k = 0: its coefficients are shifted, so f'(u) is computed as u f'(u)"),
    ('blind-mlp-plane-wrong-norm', 'blind', 'symattn/model/symmetry_kinds.py', 'which = "attn_norm" if layer.post_norm else "mlp_norm"', 'which = "mlp_norm" if layer.post_norm else "attn_norm"', "the MLP's input plane is taken from the wrong norm (LN_F post-norm, LN_A pre-norm) instead of the one the MLP reads"),
    ('blind-mlp-modulo-ones-ungated', 'blind', 'symattn/model/symmetry_kinds.py', 'if layer.post_norm and layer.norm_part.removes_mean:\n        # LN_F(y + p(y)) removes the per-token mean', 'if layer.post_norm:\n        # LN_F(y + p(y)) removes the per-token mean', 'the MLP polynomial is taken modulo 1 q(y) after any post-norm, RMSNorm included (which keeps the mean): false redundancies'),
    ('blind-isolation-pass-with-error', 'blind', 'symattn/theorems/isolation.py', 'if status not in ("pass", "fail") or (status == "pass") != (error == ""):', 'if status not in ("pass", "fail"):', 'parse accepts a result whose status disagrees with its error (a pass carrying an error, a fail without one)'),
    ('blind-isolation-result-any-script', 'blind', 'symattn/theorems/isolation.py', 'elif (event in ("result", "listed") and started is not None and message["script"] == expected', 'elif (event in ("result", "listed") and started is not None', "a result for another script than the one started is accepted and recorded as the running proof's"),
    ('blind-isolation-listed-status-inverted', 'blind', 'symattn/theorems/isolation.py', 'status, cases = ("fail" if error else "pass"), 0', 'status, cases = ("pass" if error else "fail"), 0', 'in list mode a script that did not import is recorded as pass, one that imported as fail'),
    ('blind-export-claim-normalizers-unchecked', 'blind', 'symattn/coq/export.py', 'for k in (*_DATA[kind], *(("normalizers",) if kind != "identity" else ())):', 'for k in _DATA[kind]:', "the claim file no longer checks that the certificate's normalizers are the printed ones (a certificate about another phi passes)"),
    ('blind-export-theory-unchanged-written', 'blind', 'symattn/coq/export.py', 'if _plain_bytes(root / "theories" / name) != data}', 'if _plain_bytes(root / "theories" / name) == data}', 'write_project writes only the theory files that are already equal, and never the missing or changed ones'),
    ('blind-export-claim-order-off-by-one', 'blind', 'symattn/coq/export.py', 'M = max(c["orders"]) + 1', 'M = max(c["orders"])', "the spectrum claim's truncation is max(orders) instead of max(orders) + 1 (the printed claim is not what the certificate proves)"),
]


#: The tests that kill the blind mutants no proof reaches (chosen after the mutants were written;
#: the last two tests were added because these mutants survived the suite).
KILLED_BY = {
    "blind-isolation-pass-with-error": ("tests/test_prove_isolation.py", "-k", "malformed_messages"),
    "blind-isolation-result-any-script": ("tests/test_prove_isolation.py", "-k", "another_script"),
    "blind-export-theory-unchanged-written": ("tests/test_coq_folders.py", "-k", "another_point"),
    "blind-export-claim-order-off-by-one": ("tests/test_coq.py", "-k", "quick_certificates"),
    "blind-norm-homogeneous-inverted": ("tests/test_parts.py", "-k", "homogeneous"),
    "blind-norm-eq-any-norm": ("tests/test_parts.py", "-k", "equal_by_kind"),
    "blind-norm-parameters-phantom-shift": ("tests/test_rmsnorm.py", "-k", "no_gap"),
    # added at stop 39: the count of every symmetry kind (issue 42) and a catalogue_of doctest
    "blind-norm-diagonal-off-by-one": ("tests/test_symmetry_counts.py", "-k", "formulas_equal"),
    "blind-catalogue-of-taylor-only": ("symattn/model/catalogue.py", "--doctest-modules", "-k", "catalogue_of"),
}

#: Proof-form survivors (stop 40): blind-mlp-plane-wrong-norm and blind-mlp-modulo-ones-ungated survived t9, n6 and n4
#: (no proof had a norm before a polynomial MLP); the user's spectrum stops on both (a declared direction is not a
#: kernel vector), and n6 now covers a post-norm LayerNorm and a post-norm RMSNorm before a polynomial MLP.
#: Blind mutants argued equivalent (docs/mutants.rst lists the reason).
EQUIVALENT = {
    "blind-isolation-listed-status-inverted":
        "the status of a result recorded in list mode is never read: list mode is reached only through "
        "list_proofs, which keeps each result's id, source, kind, statement and error (a Listing has no status), "
        "and symattn prove --list fails on the error alone; the same ProofResult in run mode takes its status "
        "from the child's message, not this line (it survived tests/test_prove_isolation.py -k only_the_script, "
        "and no other reader of the status exists)",
    "blind-real-line-positive-nonstrict":
        "every lower end of an enclosure is moved outward by at least 10^-40 (_out), so it is never exactly 0: "
        "lo > 0 and lo >= 0 decide alike",
    "blind-real-line-power-base-zero":
        "the base's lower end is moved outward by at least 10^-40 (_out), so a base touching 0 has a negative "
        "lower end: x[0] <= 0 and x[0] < 0 decide alike",
    "blind-export-claim-normalizers-unchecked":
        "the claim file also compares the certificate's data with the printed point's, and those data are the "
        "jets computed from the normalizer's series to the certificate's order; tried with exp and "
        "exp(s + s^12) (equal data, different normalizers): Coq accepts the certificate either way, and the "
        "claim it proves is then true of the printed point",
}
