"""The numerical tier of the least-bank search (``least_bank(method="numerical")``,
``symattn bank --method numerical``): it agrees with the exact tier where both run, answers on a
stack the exact series refuse, labels its tier, and says undecided where the slopes are not resolved."""

from __future__ import annotations

import json

import pytest

from symattn.analyses.bank import family_bank, least_bank
from symattn.analyses.numerical_spectrum import PathJacobians
from symattn.testing.banks import square_bank
from symattn.analyses.spectrum import native_spectrum
from symattn.cli import main
from symattn.core.errors import Unresolved
from symattn.model.architecture import Architecture

STACK = ["--depth", "2", "--width", "2", "--rank", "1", "--tokens", "3", "--norm", "post"]


def _bands(s) -> list:
    return sorted((b.order, b.multiplicity) for b in s.bands)


def test_paper_stack_numerical_least_bank_is_the_exact_one():
    """(a) No blocks: the exact search (divided frame, proved mod p) and the numerical one give the
    same least size, and the numerical reference spectrum is the exact spectrum of that bank."""
    arch = Architecture.uniform(2, 2, 1, 2, "exp")
    exact = least_bank(arch, trials=1)
    num = least_bank(arch, trials=1, method="numerical", digits=120)
    assert exact.least_size == num.least_size == 6 and exact.tried == num.tried
    s = native_spectrum(arch, bank=family_bank(arch, exact.least_size, "random", 0))
    ref = num.reference
    assert [tuple(b) for b in ref["bands"]] == _bands(s)
    assert (ref["rank"], ref["declared"], ref["unexplained"]) == (s.rank, s.kernel, s.undecided)
    assert (num.tier, num.theorem, num.below_proved, exact.tier) == ("numerical at 120 digits", None, False, "exact")


@pytest.mark.parametrize("kind", [dict(norm="post"), dict(skip="value", norm="pre")])
def test_layer_norm_numerical_least_bank_agrees_with_the_square_bank(kind):
    """(b) One LayerNorm layer at d = 2: the exact least prefix of a rational-square bank
    (square_bank, spectrum over Q) and the numerical least bank agree, spectrum included."""
    arch = Architecture.uniform(1, 2, 1, 3, "exp", eps="1/10", **kind)
    bank = square_bank(arch, 8)
    full = native_spectrum(arch, bank=bank, method="exact")
    key = (_bands(full), full.rank, full.kernel)
    exact_least = next(m for m in range(1, 9)
                       if (lambda s: (_bands(s), s.rank, s.kernel))(native_spectrum(arch, bank=bank[:m],
                                                                                    method="exact")) == key)
    num = least_bank(arch, trials=1, method="numerical", digits=120)
    ref = num.reference
    assert num.least_size == exact_least
    assert ([tuple(b) for b in ref["bands"]], ref["rank"]) == key[:2]
    assert (ref["declared"], ref["unexplained"]) == (full.kernel, full.undecided)  # as in test_blocks


def test_post_norm_stack_gets_a_numerical_answer(capsys):
    """(c) D = 2 post-norm at d = 2 (the exact series refuse it): a least size, labelled numerical."""
    assert main(["bank", *STACK]) == 1  # the exact route refuses and names the numerical tier
    assert "symattn bank --method numerical" in capsys.readouterr().err
    argv = ["bank", *STACK, "--method", "numerical", "--trials", "1", "--digits", "120"]
    assert main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["least_size"], out["tier"], out["theorem"], out["below_proved"]) == (
        11, "numerical at 120 digits", None, False)
    assert out["reference"]["bands"] == [[0, 8], [1, 3], [5, 2]] and out["reference"]["rank"] == 13
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "least size m      11  (numerical at 120 digits" in text
    assert "no smaller bank reached the reference at these t and digits" in text
    assert not any(word in text for word in ("proved", "certified", "exact"))


def test_unresolved_slopes_are_undecided(capsys):
    """At t = 2^-16 the reference bank's slopes lie 0.36 from integers: undecided, one line, no number."""
    argv = ["bank", *STACK, "--method", "numerical", "--trials", "1", "--digits", "80", "--t-exponent", "16"]
    assert main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("symattn: undecided: the reference bank of 16 random inputs")
    assert "not resolved" in err[0]


def test_a_prefix_leaving_the_reference_is_undecided(monkeypatch):
    """Over Q more inputs only lower the orders: a prefix beyond m that leaves the reference spectrum
    makes the answer undecided (here one prefix's spectrum is replaced by a smaller bank's)."""
    arch = Architecture.uniform(1, 2, 1, 3, "exp", eps="1/10", norm="post")
    real = PathJacobians.spectrum
    monkeypatch.setattr(PathJacobians, "spectrum", lambda self, m=None: real(self, 3 if m == 6 else m))
    with pytest.raises(Unresolved, match="4 inputs reach the reference spectrum but 6 leave it"):
        least_bank(arch, trials=1, method="numerical", digits=60)


def test_an_unresolved_sub_bank_is_undecided_unless_its_total_order_differs(monkeypatch):
    """A sub-bank of the reference rank with unresolved slopes: not reached when its slopes sum
    farther than 1/2 from the reference's total order (3 inputs: total 5, reference 3), undecided
    when they sum to it (4 inputs); at the first seed the undecided one is the answer."""
    import dataclasses

    arch = Architecture.uniform(1, 2, 1, 3, "exp", eps="1/10", norm="post")
    real = PathJacobians.spectrum

    def blurred(self, m=None):
        n = real(self, m)
        return dataclasses.replace(n, max_slope_error=0.4) if m in (3, 4) else n

    monkeypatch.setattr(PathJacobians, "spectrum", blurred)
    with pytest.raises(Unresolved, match="4 inputs of seed 0 have the reference rank 9 and total order 3 .* "
                                         "not resolved"):
        least_bank(arch, trials=1, method="numerical", digits=60)


@pytest.mark.parametrize("extra, message", [
    (["--digits", "100"], "--digits and --t-exponent are for --method numerical"),
    (["--method", "numerical", "--width", "8", "--depth", "3", "--rank", "4"], "limited to 200 native parameters"),
    (["--method", "numerical", "--max-memory", "0.0001"], "above the limit"),
])
def test_bad_input_exits_2_with_one_line(capsys, extra, message):
    """(d) Bad input: exit 2, one line."""
    assert main(["bank", *STACK, *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("symattn: error: ") and message in err[0]
