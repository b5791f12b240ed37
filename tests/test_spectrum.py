"""Exact native contact spectra (Theorem 4, Prop. D.1) and the spectrum CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from symattn.core.algebras import exact_series, modular_series
from symattn.cli import main
from symattn.core.errors import SymattnError
from symattn.model.architecture import Architecture
from symattn.model.parameters import NativeParams, random_bank
from symattn.model.symmetries import gauge_directions
from symattn.theorems.formulas import divisibility_orders
from symattn.model.symmetries import GaugeKernel, pi_derivative_vanishes
from symattn.core.linalg import SeriesMatrix
from symattn.analyses.spectrum import native_spectrum, path_parameters


def _bands(s):
    return [(b.layer, b.order, b.multiplicity) for b in s.bands]


@pytest.mark.parametrize("make", [exact_series, modular_series])
def test_smith_orders_of_a_known_matrix(make):
    # diag(1, t^2, t^5) hidden by unimodular row/column mixing: [[1, 1, 0], [t^2, 1 + t^2, t^5], [0, 0, t^5]]
    A = make(8)
    coeffs = [np.zeros((3, 3), dtype=int) for _ in range(8)]
    coeffs[0][0, 0] = coeffs[0][0, 1] = coeffs[0][1, 1] = 1
    coeffs[2][1, 0] = coeffs[2][1, 1] = 1
    coeffs[5][1, 2] = coeffs[5][2, 2] = 1
    orders, undecided = SeriesMatrix(A, A.series(coeffs)).smith_orders()
    assert (orders, undecided) == ([0, 0, 5], 0)  # det = t^5: the t^2 is not a Smith factor


def test_smith_orders_reports_undecided_columns():
    A = exact_series(3)
    coeffs = [np.zeros((2, 2), dtype=int) for _ in range(3)]
    coeffs[1][0, 0] = 1
    assert SeriesMatrix(A, A.series(coeffs)).smith_orders() == ([1], 1)


def test_divisibility_orders_follow_prop_d1():
    arch = Architecture.uniform(3, 2, 1, 2, "exp,cosh,exp(s^3)")
    assert divisibility_orders(arch) == [1, 7, 25]  # e = 2, 10; beta_3 = 2*3 - 1 + 2*10


@pytest.mark.parametrize("method", ["modular", "exact"])
def test_depth_two_softmax_spectrum(method):
    s = native_spectrum(Architecture.uniform(2, 2, 1, 2, "exp"), bank="auto", method=method)
    assert _bands(s) == [(0, 0, 4), (1, 1, 3), (2, 5, 3)]
    assert (s.kernel, s.rank, s.parameters) == (6, 10, 16)
    assert s.bank_separating and s.certified and s.method == method


def test_cosh_has_odd_orders_of_k2():
    s = native_spectrum(Architecture.uniform(2, 2, 1, 2, "cosh"), bank="auto")
    assert _bands(s) == [(0, 0, 4), (1, 3, 3), (2, 11, 3)]


def test_small_bank_is_reported_as_not_separating():
    s = native_spectrum(Architecture.uniform(2, 2, 1, 2, "exp"), bank=2)
    assert not s.bank_separating and not s.certified
    assert any("does not separate" in n for n in s.notes)


def test_gauges_vanish_exactly_and_other_directions_do_not():
    arch = Architecture.uniform(3, 2, [1, 2, 1], 2, "exp")
    U, W, V = path_parameters(arch, seed=3, values="random")
    theta = NativeParams(tuple(U), tuple(W), tuple(V))
    dirs = gauge_directions(arch, theta)
    assert all(pi_derivative_vanishes(arch, U, W, V, dirs))
    bump = dirs[0].copy()
    bump[0] += 1
    assert pi_derivative_vanishes(arch, U, W, V, [bump]) == [False]
    assert GaugeKernel(arch, theta).path_split() == (1 + 4 + 1 + 2 * 4, True)


@pytest.mark.parametrize("kwargs, message", [
    ({"depth": 2, "width": 2, "rank": 3, "tokens": 2}, "exceeds the width"),
    ({"depth": 0, "width": 2, "rank": 1, "tokens": 2}, "depth"),
    ({"depth": 2, "width": 2, "rank": 1, "tokens": 1}, "token count"),
    ({"depth": 2, "width": 2, "rank": "1,1,1", "tokens": 2}, "rank list"),
    ({"depth": 2, "width": 2, "rank": 1, "tokens": 2, "normalizer": "exp,exp,exp"}, "1 or D"),
    ({"depth": 1, "width": 2, "rank": 1, "tokens": 2, "normalizer": "exp(sqrt(2)*s)"}, "irrational"),
])
def test_bad_input(kwargs, message):
    with pytest.raises(SymattnError, match=message):
        arch = Architecture.uniform(**kwargs)
        native_spectrum(arch, bank=3)


def test_truncation_too_short_names_the_order():
    with pytest.raises(SymattnError, match="too short to decide the order 5"):
        native_spectrum(Architecture.uniform(2, 2, 1, 2, "exp"), bank=6, order=4)


def test_cli_json(capsys):
    code = main(["spectrum", "--depth", "2", "--width", "2", "--rank", "1", "--tokens", "2", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert {"units", "bands", "kernel", "rank", "parameters", "bank_size", "bank_separating",
            "method", "seconds"} <= set(out)
    assert [(b["layer"], b["order"], b["multiplicity"]) for b in out["bands"]] == [(0, 0, 4), (1, 1, 3), (2, 5, 3)]


def test_cli_table_and_plot(tmp_path, capsys):
    png = tmp_path / "s.png"
    assert main(["spectrum", "--depth", "2", "--width", "2", "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "certificate: certified" in out and "layer 2 query/key" in out
    assert png.stat().st_size > 1000


@pytest.mark.parametrize("argv", [
    ["spectrum", "--depth", "2", "--width", "2", "--rank", "3"],
    ["spectrum", "--depth", "2", "--width", "2", "--bank", "many"],
    ["spectrum", "--depth", "2", "--width", "2", "--normalizer", "abs(s)"],
])
def test_cli_bad_input_exits_2(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("symattn: error:") and "Traceback" not in err


# -- certificates and bands (issue 13) ------------------------------------------
def test_certificate_kinds():
    arch = Architecture.uniform(2, 2, 1, 2, "exp")
    assert native_spectrum(arch, bank="auto").certificate == "certified"
    exact = native_spectrum(arch, bank="auto", method="exact")
    assert exact.certificate == "exact" and exact.to_json()["certificate"] == "exact"
    assert native_spectrum(arch, bank=1).certificate == "none"


def test_column_order_proof_can_fail():
    from symattn.model.symmetries import visible_blocks
    from symattn.analyses.spectrum import prove_column_orders

    arch = Architecture.uniform(2, 2, 1, 2, "exp")
    U, W, V = path_parameters(arch)
    X = random_bank(arch, 6)
    layer2 = visible_blocks(arch, U)[2][2]
    assert prove_column_orders(arch, X, U, W, V, layer2, [5] * len(layer2))[0] == "proved"
    # one order too many: the t^5 coefficient is not zero, mod the first prime already
    assert prove_column_orders(arch, X, U, W, V, layer2, [6] * len(layer2))[0] == "refuted"
    assert prove_column_orders(arch, X, U, W, V, layer2, [5] * len(layer2), max_primes=1)[0] == "too costly"
    assert prove_column_orders(arch, X, U, W, V, layer2, [5] * len(layer2), seconds=0)[0] == "too costly"


def test_column_order_proof_over_q_can_fail():
    """Orders from EXACT_FROM_ORDER on are proved over Q itself: a claimed order one too high is
    refuted there (no default-prime shortcut without ``known``), and a zero budget stops it."""
    from symattn.model.symmetries import visible_blocks
    from symattn.analyses.spectrum import EXACT_FROM_ORDER, prove_column_orders

    arch = Architecture.uniform(4, 2, 1, 2, "exp")
    U, W, V = path_parameters(arch)
    X = random_bank(arch, 8)
    layer4 = visible_blocks(arch, U)[4][2]
    assert 53 >= EXACT_FROM_ORDER
    proof = prove_column_orders(arch, X, U, W, V, layer4, [53] * len(layer4), lemma=False)  # the lemma: its own test
    assert proof.status == "proved" and proof.exact == (53,) and proof.moduli == ()
    assert prove_column_orders(arch, X, U, W, V, layer4, [54] * len(layer4), lemma=False)[0] == "refuted"
    assert prove_column_orders(arch, X, U, W, V, layer4, [53] * len(layer4), seconds=0, lemma=False)[0] == "too costly"


def test_costly_lower_bound_falls_back_to_the_papers_and_says_so():
    s = native_spectrum(Architecture.uniform(3, 2, 1, 2, "exp"), bank="auto")
    assert s.certificate == "certified"
    import symattn.analyses.column_proof as column_proof

    original = column_proof.PROOF_SECONDS
    try:
        column_proof.PROOF_SECONDS = 0
        s = native_spectrum(Architecture.uniform(3, 2, 1, 2, "exp"), bank="auto")
    finally:
        column_proof.PROOF_SECONDS = original
    assert s.certificate == "conditional" and any("App. D.2" in n for n in s.notes)



@pytest.mark.slow
def test_depth_five_is_certified_without_app_d2():
    """Orders up to 161: t^53 and t^161 over Q itself, the shorter ones by primes."""
    s = native_spectrum(Architecture.uniform(5, 2, 1, 2, "exp"), bank="auto")
    assert [b.order for b in s.bands] == [0, 1, 5, 17, 53, 161]
    assert s.certificate == "certified" and not any("App. D.2 (proved" in n for n in s.notes)


@pytest.mark.slow
def test_depth_six_is_certified_without_app_d2():
    """Orders up to 485: t^53 and up over Q itself (under a minute on two cores)."""
    s = native_spectrum(Architecture.uniform(6, 2, 1, 2, "exp"), bank="auto")
    assert [b.order for b in s.bands] == [0, 1, 5, 17, 53, 161, 485] and s.kernel == 26
    assert s.certificate == "certified" and not any("App. D.2 (proved" in n for n in s.notes)


CASES = [
    (2, 2, 1, "cosh,exp", 3, 1), (2, 2, 1, "exp", 2, 1), (2, 2, 1, "exp", 2, 2),
    (1, 2, 1, "exp", 2, 1), (2, 2, 2, "exp,cosh", 2, 1), (2, 1, 1, "exp", 3, 1),
    (1, 3, 2, "cosh", 3, 1), (2, 2, 1, "logistic,exp", 2, 2), (3, 1, 1, "exp", 2, 1),
    (2, 2, 1, "cosh,cosh", 3, 2),
]


@pytest.mark.parametrize("depth,width,rank,phi,tokens,bank", CASES)
def test_bands_sum_to_the_rank(depth, width, rank, phi, tokens, bank):
    s = native_spectrum(Architecture.uniform(depth, width, rank, tokens, phi), bank=bank)
    assert sum(b.multiplicity for b in s.bands) == s.rank
    orders = sorted(o for b in s.bands for o in [b.order] * b.multiplicity)
    assert len(orders) == s.rank


def test_issue13_cosh_exp_band_list(capsys):
    # Regression: nested prefix forms subtracted as multisets listed 8 factors at rank 6.
    assert main(["spectrum", "--depth", "2", "--width", "2", "--rank", "1", "--normalizer", "cosh,exp",
                 "--tokens", "3", "--bank", "1", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert sum(b["multiplicity"] for b in d["bands"]) == d["rank"] == 6
    assert d["certificate"] in ("exact", "certified", "conditional", "none")


def test_column_proof_reads_the_default_prime_from_a_known_jacobian():
    from symattn.core.algebras import DEFAULT_PRIME, SeriesAlgebra, PrimeField
    from symattn.model.symmetries import visible_blocks
    from symattn.analyses.spectrum import bank_jacobian, prove_column_orders

    arch = Architecture.uniform(2, 2, 1, 2, "exp")
    U, W, V = path_parameters(arch)
    X = random_bank(arch, 6)
    layer2 = visible_blocks(arch, U)[2][2]
    known = bank_jacobian(arch, X, U, W, V, SeriesAlgebra(PrimeField(DEFAULT_PRIME), 7), layer2)
    assert prove_column_orders(arch, X, U, W, V, layer2, [5] * len(layer2), known=known)[0] == "proved"
    corrupt = known.copy()
    corrupt[4, 0, 0] = 1  # a coefficient below t^5 made nonzero mod p: the proof must see it
    assert prove_column_orders(arch, X, U, W, V, layer2, [5] * len(layer2), known=corrupt)[0] == "refuted"


def test_spectrum_command_loads_neither_sympy_nor_mpmath():
    # start-up time (issue 17): a catalogue spectrum needs rational Taylor data only
    import subprocess
    import sys

    code = ("import sys, contextlib, io\n"
            "from symattn.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
            "    assert main(['spectrum', '--depth', '2', '--width', '2', '--rank', '1', '--json']) == 0\n"
            "loaded = sorted({'sympy', 'mpmath', 'numpy.ma'} & set(sys.modules))\n"
            "assert not loaded, loaded\n")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.slow
def test_depth_seven_is_certified_without_app_d2():
    """Orders up to 1457: the long orders by the attention lemma on token differences over Q."""
    s = native_spectrum(Architecture.uniform(7, 2, 1, 2, "exp"), bank="auto")
    assert [b.order for b in s.bands] == [0, 1, 5, 17, 53, 161, 485, 1457] and s.kernel == 31
    assert s.certificate == "certified" and not any("App. D.2 (proved" in n for n in s.notes)
    assert any("t^1457" in n and "attention lemma" in n for n in s.notes)


def test_a_growing_banks_fast_jacobian_is_checked_on_the_first_input_of_each_part(monkeypatch):
    """From the fast series on, every new part of a growing bank is checked after the bank has grown, on
    its first input, side by side (Setup.check_inputs); a failing check stops the spectrum."""
    from symattn.analyses import contact
    from symattn.core.errors import CheckFailed

    arch = Architecture.uniform(5, 2, 1, 2, "exp")  # order 163: the fast (nmod_poly) series
    s = contact.setup(arch, 0, "identity", "modular", None, lambda msg: None)
    seen = []
    monkeypatch.setattr(contact.Setup, "check_inputs", lambda self, X, J, algebra, inputs: seen.append(list(inputs)))
    run = contact.framed_bank(s, "auto", None)
    assert seen == [[0, 5, 7, 10]] and len(run["X"]) == 15
    monkeypatch.undo()

    def refuse(*args, **kwargs):
        raise CheckFailed("the forward-mode Jacobian disagrees (a broken tangent rule)")

    monkeypatch.setattr(contact, "bank_jacobian", _verified_by(contact.bank_jacobian, refuse))
    with pytest.raises(CheckFailed):
        s.check_inputs(run["X"], run["J"], run["algebra"], [5])


def _verified_by(bank_jacobian, check):
    """``bank_jacobian`` whose check (``verify``) is ``check``."""
    def wrapped(*args, verify=1, **kwargs):
        if verify:
            check()
        return bank_jacobian(*args, verify=verify, **kwargs)
    return wrapped


def test_check_inputs_refuses_rows_that_differ():
    from symattn.analyses import contact
    from symattn.core.errors import CheckFailed

    arch = Architecture.uniform(2, 2, 1, 2, "exp")
    s = contact.setup(arch, 0, "identity", "modular", None, lambda msg: None)
    X, A = random_bank(arch, 3), modular_series(7)
    J = s.jacobian(X, A, verify=0)
    s.check_inputs(X, J, A, [0, 2])
    J[3, 4, 0] = (J[3, 4, 0] + 1) % A.field.p  # a coefficient of input 1 (rows 4 to 7)
    s.check_inputs(X, J, A, [0, 2])
    with pytest.raises(CheckFailed, match="input 1"):
        s.check_inputs(X, J, A, [1])


def test_column_proof_computes_every_modulus_it_records(monkeypatch):
    """Each (prime, order) of the record is computed once, or read from the known Jacobian (the
    default prime): none skipped, none twice."""
    from symattn.analyses import column_proof
    from symattn.core.algebras import DEFAULT_PRIME, PrimeField, SeriesAlgebra
    from symattn.model.symmetries import visible_blocks

    arch = Architecture.uniform(2, 2, 1, 2, "exp")
    U, W, V = path_parameters(arch)
    X = random_bank(arch, 6)
    blocks = visible_blocks(arch, U)
    columns, orders = blocks[1][2] + blocks[2][2], [1] * len(blocks[1][2]) + [5] * len(blocks[2][2])
    known = column_proof.bank_jacobian(arch, X, U, W, V, SeriesAlgebra(PrimeField(DEFAULT_PRIME), 7), columns)
    computed = []
    inner = column_proof.bank_jacobian
    monkeypatch.setattr(column_proof, "bank_jacobian", lambda *a, **k: computed.append((a[5].field.p, a[5].order))
                        or inner(*a, **k))
    monkeypatch.setattr(column_proof, "map_forked", lambda f, items, workers=None: map(f, items))
    proof = column_proof.prove_column_orders(arch, X, U, W, V, columns, orders, known=known)
    assert proof.status == "proved" and proof.orders == (1, 5)
    recorded = sorted((p, b) for b, moduli in zip(proof.orders, proof.moduli) for p in moduli if p != DEFAULT_PRIME)
    assert sorted(computed) == recorded and all(ms[0] == DEFAULT_PRIME for ms in proof.moduli)


def test_column_proof_refutes_by_a_computed_prime_what_the_known_prime_missed():
    """A coefficient that the known Jacobian (the default prime) shows as zero but that is not zero
    over Q is refuted by the primes computed after it: every computed residue is read."""
    from symattn.analyses import column_proof
    from symattn.core.algebras import DEFAULT_PRIME, PrimeField, SeriesAlgebra
    from symattn.model.symmetries import visible_blocks

    arch = Architecture.uniform(2, 2, 1, 2, "exp")
    U, W, V = path_parameters(arch)
    X = random_bank(arch, 6)
    values = visible_blocks(arch, U)[0][2]  # the readout's columns: order 0 (units)
    known = column_proof.bank_jacobian(arch, X, U, W, V, SeriesAlgebra(PrimeField(DEFAULT_PRIME), 3), values)
    known[0] = 0  # as if their t^0 coefficients vanished mod the default prime
    proof = column_proof.prove_column_orders(arch, X, U, W, V, values, [1] * len(values), known=known)
    assert proof.status == "refuted"
