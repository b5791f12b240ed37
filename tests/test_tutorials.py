"""The tutorials' Python examples run as doctests (they must stay true)."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

TUTORIALS = sorted((Path(__file__).resolve().parents[1] / "docs" / "tutorials").glob("*.rst"))


@pytest.mark.parametrize("path", TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_tutorial_examples(path):
    result = doctest.testfile(str(path), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
