"""Argument checking at the public API boundary (issue 28.4): every public entry point refuses a
wrong type or a value out of range with the package's bad-input error (a TypeError or ValueError
that is a :class:`~symattn.core.errors.SymattnError`, exit 2 on the command line) naming the
argument, before any work and never from deep inside with an unrelated error."""

from __future__ import annotations

import pytest

from symattn import Architecture, native_spectrum, neuromanifold_dimension, sharp_degree
from symattn.analyses.bank import least_bank
from symattn.analyses.jets import generic_effective
from symattn.analyses.fibers import effective_fiber, fiber
from symattn.analyses.sensitivity import sensitivity
from symattn.core.errors import SymattnError
from symattn.model.parameters import random_native
from symattn.testing import assert_contact_orders, assert_fiber, assert_sharp_degree

A = Architecture.uniform(1, 2, 1, 2, "exp")
L, M = [[1, 0]], [[[1, 2], [0, 1]]]

# (call, the exception type it must also be, a word the message must name)
CASES = [
    ("uniform str depth", lambda: Architecture.uniform("2", 2, 1, 2), TypeError, "depth"),
    ("uniform float width", lambda: Architecture.uniform(2, 2.5, 1, 2), TypeError, "width"),
    ("uniform zero width", lambda: Architecture.uniform(2, 0, 1, 2), ValueError, "width"),
    ("uniform bool tokens", lambda: Architecture.uniform(2, 2, 1, True), TypeError, "token"),
    ("uniform rank list of str", lambda: Architecture.uniform(2, 2, ["a", 1], 2), ValueError, "rank"),
    ("uniform rank zero", lambda: Architecture.uniform(2, 2, 0, 2), ValueError, "r_1"),
    ("uniform normalizer int", lambda: Architecture.uniform(1, 2, 1, 2, 3), TypeError, "normalizer"),
    ("Architecture str widths", lambda: Architecture("22", (1,), 2, ("exp",)), TypeError, "widths"),
    ("Architecture float tokens", lambda: Architecture((2, 2), (1,), 2.0, ("exp",)), TypeError, "token"),
    ("native_spectrum str", lambda: native_spectrum("x"), TypeError, "arch"),
    ("native_spectrum negative seed", lambda: native_spectrum(A, seed=-1), ValueError, "seed"),
    ("native_spectrum method", lambda: native_spectrum(A, method="fast"), ValueError, "method"),
    ("native_spectrum order", lambda: native_spectrum(A, order="5"), TypeError, "order"),
    ("dimension dict", lambda: neuromanifold_dimension({"depth": 1}), TypeError, "arch"),
    ("dimension seed", lambda: neuromanifold_dimension(A, seed=2**70), ValueError, "seed"),
    ("dimension rays", lambda: neuromanifold_dimension(A, rays=0), ValueError, "rays"),
    ("sharp_degree None", lambda: sharp_degree(None), TypeError, "arch"),
    ("sharp_degree max_degree", lambda: sharp_degree(A, max_degree=-3), ValueError, "max_degree"),
    ("sharp_degree method", lambda: sharp_degree(A, method=1), TypeError, "method"),
    ("fiber list arch", lambda: fiber([1], L, M), TypeError, "arch"),
    ("fiber seed", lambda: fiber(A, L, M, seed="0"), TypeError, "seed"),
    ("fiber rays", lambda: fiber(A, L, M, rays=0), ValueError, "rays"),
    ("fiber search_degree", lambda: fiber(A, L, M, search_degree=10**6), ValueError, "search_degree"),
    ("fiber M not a list", lambda: fiber(A, L, 5), TypeError, "M"),
    ("effective_fiber tokens", lambda: effective_fiber(L, M, "exp", "2"), TypeError, "token"),
    ("effective_fiber verify", lambda: effective_fiber(L, M, "exp", 2, verify="yes"), TypeError, "verify"),
    ("sensitivity str", lambda: sensitivity("arch"), TypeError, "arch"),
    ("sensitivity t_min", lambda: sensitivity(A, t_min=float("nan")), ValueError, "t_min"),
    ("sensitivity digits", lambda: sensitivity(A, digits="30"), TypeError, "digits"),
    ("least_bank family", lambda: least_bank(A, family="gaussian"), ValueError, "family"),
    ("least_bank trials", lambda: least_bank(A, trials=0), ValueError, "trials"),
    ("least_bank str", lambda: least_bank("A"), TypeError, "arch"),
    ("random_native str", lambda: random_native("x"), TypeError, "arch"),
    ("random_native seed", lambda: random_native(A, seed=-1), ValueError, "seed"),
    ("generic_effective str", lambda: generic_effective("x"), TypeError, "arch"),
    ("assert_contact_orders None", lambda: assert_contact_orders(None, {0: 4}), TypeError, "arch"),
    ("assert_sharp_degree float", lambda: assert_sharp_degree(A, 3.0), TypeError, "sharp degree"),
    ("assert_fiber kind", lambda: assert_fiber(A, L, M, 3), TypeError, "kind"),
]


@pytest.mark.parametrize("call, kind, word", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_wrong_arguments_are_bad_input_naming_the_argument(call, kind, word):
    with pytest.raises(SymattnError) as info:
        call()
    assert isinstance(info.value, kind), f"{type(info.value).__name__}: {info.value}"
    message = str(info.value)
    assert word in message and "\n" not in message, message


def test_the_cli_maps_the_same_errors_to_exit_2(capsys):
    from symattn.cli import main

    assert main(["fiber", "--normalizer", "exp", "--tokens", "2", "--L", "[[1,0]]", "--M", "[[1,2],[0,1]]",
                 "--search-degree", "0"]) == 2
    assert capsys.readouterr().err.startswith("symattn: error: ")
