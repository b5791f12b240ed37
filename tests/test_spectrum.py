"""Exact native contact spectra (Theorem 4, Prop. D.1) and the spectrum CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from symattn.algebras import exact_series, modular_series
from symattn.cli import main
from symattn.errors import SymattnError
from symattn.model import Architecture, NativeParams, gauge_directions
from symattn.spectrum import (
    divisibility_orders,
    exact_kernel,
    native_spectrum,
    path_parameters,
    pi_derivative_vanishes,
    smith_orders,
)


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
    orders, undecided = smith_orders(A, A.series(coeffs))
    assert (orders, undecided) == ([0, 0, 5], 0)  # det = t^5: the t^2 is not a Smith factor


def test_smith_orders_reports_undecided_columns():
    A = exact_series(3)
    coeffs = [np.zeros((2, 2), dtype=int) for _ in range(3)]
    coeffs[1][0, 0] = 1
    assert smith_orders(A, A.series(coeffs)) == ([1], 1)


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
    assert exact_kernel(arch, U, W, V) == (1 + 4 + 1 + 2 * 4, True)


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
    assert "certified exact" in out and "layer 2 query/key" in out
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
