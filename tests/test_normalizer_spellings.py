"""One normalizer, one answer (issue 39 item 3): ``exp``, ``exp(s)`` and ``exp(1*s)`` are the same
normalizer, so every analysis gives them the same result (the symmetries, tiers and numbers), not
merely equal :class:`~symattn.model.normalizer.Normalizer` objects.

Each command runs in-process with ``--json``; the comparison drops what is allowed to differ: the
timings and the echo of the user's own spelling of the normalizer.
"""

from __future__ import annotations

import json

import pytest

from symattn.cli import main

SPELLINGS = ("exp", "exp(s)", "exp(1*s)")

COMMANDS = {
    "spectrum": ["spectrum", "--depth", "1", "--width", "2", "--bias"],
    "dimension": ["dimension", "--depth", "1", "--widths", "2", "--ranks", "1"],
    "jet": ["jet", "--depth", "1", "--width", "2"],
    "fiber": ["fiber", "--native", "--depth", "1", "--width", "2", "--tokens", "3", "--bias"],
    "bank": ["bank", "--depth", "1", "--width", "2"],
}


def _comparable(value, spelling: str):
    """``value`` without timings and without the echo of ``spelling``."""
    if isinstance(value, dict):
        return {k: _comparable(v, spelling) for k, v in value.items()
                if "second" not in k and not (k == "normalizer" and v == spelling)}
    if isinstance(value, list):
        return [_comparable(v, spelling) for v in value]
    return value


def _answer(capsys, argv: list[str], spelling: str):
    status = main([*argv, "--normalizer", spelling, "--json"])
    out, err = capsys.readouterr()
    assert status == 0, err
    return _comparable(json.loads(out), spelling)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_spelling_of_exp_gets_the_same_answer(capsys, command):
    answers = [_answer(capsys, COMMANDS[command], spelling) for spelling in SPELLINGS]
    assert answers[0] == answers[1] == answers[2]


def test_the_comparison_sees_a_different_normalizer(capsys):
    # the check can fail: cosh is another normalizer and the spectrum's answer differs
    argv = COMMANDS["spectrum"]
    assert _answer(capsys, argv, "exp") != _answer(capsys, argv, "cosh")


def test_a_scaled_exponential_keeps_the_key_bias_symmetry(capsys):
    # exp(2*s) is another normalizer with h = log phi linear: the softmax key bias is still a
    # symmetry, declared because the property is derived from the expression, not the name
    argv = COMMANDS["spectrum"]
    exp, scaled = _answer(capsys, argv, "exp"), _answer(capsys, argv, "exp(2*s)")
    assert (scaled["kernel"], scaled["kernel_kinds"]) == (exp["kernel"], exp["kernel_kinds"])
    assert scaled["certified"] and not scaled["undecided"]
