"""A kit for symbolic unit tests about attention: assertions, a pytest plugin, strategies.

The assertions (:mod:`~symattn.testing.assertions`) are importable from here:
``from symattn.testing import assert_contact_orders``. The pytest plugin is
:mod:`~symattn.testing.plugin` (loaded automatically once symattn is installed);
hypothesis strategies are in :mod:`~symattn.testing.strategies`.
"""

import importlib

__all__ = ["as_architecture", "assert_contact_orders", "assert_fiber", "assert_identity", "assert_series_equal",
           "assert_sharp_degree"]


def __getattr__(name: str):
    """The assertions, from :mod:`symattn.testing.assertions` on first use (PEP 562): loading
    the pytest plugin does not import the analyses."""
    if name in __all__:
        return getattr(importlib.import_module("symattn.testing.assertions"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
