"""Tests of :mod:`symattn.analyses.dimension` and ``symattn dimension``."""

from __future__ import annotations

import json

import pytest

from symattn.cli import main
from symattn.analyses.dimension import (
    float32_rank_near_collapse,
    gauge_bound,
    generic_native,
    hmk_table,
    neuromanifold_dimension,
    rank_condition_bound,
)
from symattn.theorems.formulas import hmk_formula
from symattn.model.architecture import Architecture
from symattn.model.normalizer import normalizers


def _arch(widths, ranks, tokens=3, phi="exp") -> Architecture:
    return Architecture(tuple(widths), tuple(ranks), tokens, normalizers(phi, len(ranks)))


@pytest.mark.parametrize("d, r, D", [(3, 2, 2), (4, 1, 2), (3, 3, 2), (2, 1, 3)])
def test_equal_widths_match_eq_40(d: int, r: int, D: int) -> None:
    res = neuromanifold_dimension(Architecture.uniform(D, d, r, 3, "exp"))
    assert res.certified and res.method == "certified"
    assert res.dimension == hmk_formula(d, D, r) == d * d + D * r * (2 * d - r)


@pytest.mark.parametrize("widths, ranks, expected, naive", [
    ((5, 4, 1), (1, 1), 23, 24),        # free interface flag: gauges undercount the kernel
    ((2, 4, 2), (2, 2), 12, 16),        # wide middle layer
    ((2, 3, 4, 2), (1, 2, 1), 14, 19),
    ((2, 2, 2), (3, 3), 12, 12),        # head width above the width: dependent gauges
    ((3, 1, 3), (1, 1), 11, 11),        # width-one bottleneck
    ((1, 3, 1), (2, 2), 3, 6),
])
def test_bottlenecks_certified(widths, ranks, expected: int, naive: int) -> None:
    arch = _arch(widths, ranks)
    res = neuromanifold_dimension(arch)
    assert (res.dimension, res.lower_bound, res.upper_bound, res.certified) == (expected, expected, expected, True)
    theta = generic_native(arch)
    assert gauge_bound(arch, theta) == naive
    assert rank_condition_bound(arch, theta) == expected


def test_exact_method_agrees() -> None:
    res = neuromanifold_dimension(_arch((3, 2, 3), (1, 1)), method="exact")
    assert (res.dimension, res.method) == (16, "certified")


def test_too_low_degree_leaves_bounds_apart() -> None:
    res = neuromanifold_dimension(Architecture.uniform(2, 2, 1, 2, "exp"), degree=3)
    assert not res.certified and res.dimension is None
    assert res.lower_bound < res.upper_bound == hmk_formula(2, 2, 1)


def test_hmk_table_small() -> None:
    rows = hmk_table([3, 4, 5])
    assert [r["dimension"] for r in rows] == [r["formula"] for r in rows] == [25, 40, 57]
    assert [r["parameters"] for r in rows] == [42, 64, 90]
    assert all(r["method"] == "certified" for r in rows)


def test_float32_rank_drops_near_collapse() -> None:
    rows = float32_rank_near_collapse(Architecture.uniform(2, 3, 2, 3, "exp"), ["1", "1/100"], bank=40)
    assert [r["exact_rank"] for r in rows] == [25, 25]       # regular points: the certified dimension
    assert rows[0]["numerical_rank"] == 25 and rows[1]["numerical_rank"] < 25
    assert rows[1]["sigma_at_exact_rank"] < rows[1]["threshold"] < rows[0]["sigma_at_exact_rank"]


def test_cli_dimension_json(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["dimension", "--depth", "2", "--widths", "5,4,1", "--ranks", "1,1", "--tokens", "3", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert {k: out[k] for k in ("dimension", "parameters", "lower_bound", "upper_bound", "method")} == {
        "dimension": 23, "parameters": 42, "lower_bound": 23, "upper_bound": 23, "method": "certified"}


def test_cli_dimension_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dimension", "--depth", "2", "--widths", "3", "--ranks", "2"]) == 0
    out = capsys.readouterr().out
    assert "certified (bounds meet)" in out and " 25 " in out


@pytest.mark.parametrize("argv, message", [
    (["--widths", "3", "--ranks", "2"], "--depth"),
    (["--depth", "2", "--widths", "3,2", "--ranks", "2"], "needs 3 values"),
    (["--depth", "2", "--widths", "3,x,3", "--ranks", "2"], "comma-separated"),
    (["--depth", "2", "--widths", "3,0,3", "--ranks", "2"], "positive"),
    (["--depth", "2", "--widths", "3", "--ranks", "0"], "at least 1"),
    (["--depth", "2", "--widths", "3"], "--ranks"),
])
def test_cli_dimension_bad_input(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    assert main(["dimension", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1


@pytest.mark.slow
def test_hmk_table_full() -> None:
    rows = hmk_table()
    assert [r["dimension"] for r in rows] == [hmk_formula(d, 2, 2) for d in range(3, 11)]
