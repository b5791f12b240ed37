"""The symattn pytest plugin: fixtures for symbolic unit tests about attention.

Registered through the ``pytest11`` entry point, so every pytest run in an
environment where symattn is installed has these fixtures (disable with
``pytest -p no:symattn``). Use them with the assertions of
:mod:`symattn.testing.assertions`:

* ``symattn_architecture``: a factory ``make(depth=2, width=2, rank=1,
  tokens=2, phi="exp")`` of uniform :class:`~symattn.model.architecture.Architecture`\\ s;
* ``symattn_softmax``: the small softmax stack ``D = 2, d = 2, r = 1, n = 2``;
* ``symattn_normalizer``: parametrized over the catalogue
  (:data:`symattn.model.normalizer.CATALOGUE`), one test per normalizer;
* ``symattn_generic_tuple``: a factory ``make(arch, seed=0)`` of seeded
  generic effective tuples (``L != 0``, ``sym M_i != 0``, rational).

Example test module::

    from symattn.testing.assertions import assert_sharp_degree

    def test_softmax_depth_two(symattn_softmax):
        assert_sharp_degree(symattn_softmax, 7)

    def test_every_catalogue_normalizer_has_k(symattn_normalizer):
        assert symattn_normalizer.k >= 1
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from symattn.analyses.jets import generic_effective
from symattn.model.architecture import Architecture
from symattn.model.parameters import EffectiveParams
from symattn.model.normalizer import CATALOGUE, Normalizer

__all__ = ["symattn_architecture", "symattn_generic_tuple", "symattn_normalizer", "symattn_softmax"]


@pytest.fixture
def symattn_architecture() -> Callable[..., Architecture]:
    """Factory of uniform architectures: ``make(depth=2, width=2, rank=1, tokens=2, phi="exp")``."""

    def make(depth: int = 2, width: int = 2, rank: int = 1, tokens: int = 2, phi: object = "exp") -> Architecture:
        return Architecture.uniform(depth, width, rank, tokens, phi)

    return make


@pytest.fixture
def symattn_softmax() -> Architecture:
    """Softmax, ``D = 2``, ``d = 2``, ``r = 1``, ``n = 2``: Theorem 3 degree 7, Theorem 4 orders 0, 1, 5."""
    return Architecture.uniform(2, 2, 1, 2, "exp")


@pytest.fixture(params=sorted(CATALOGUE))
def symattn_normalizer(request: pytest.FixtureRequest) -> Normalizer:
    """Each catalogue normalizer in turn (exp, cosh, gauss, 1+s^2, ...)."""
    return Normalizer(request.param)


@pytest.fixture
def symattn_generic_tuple() -> Callable[..., EffectiveParams]:
    """Factory ``make(arch, seed=0)`` of seeded generic rational effective tuples."""

    def make(arch: Architecture, seed: int = 0) -> EffectiveParams:
        return generic_effective(arch, seed)

    return make
