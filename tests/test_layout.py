"""The package layout: floors as folders, old module names still importable (deprecated)."""

import importlib
import warnings

import pytest

import symattn


@pytest.mark.parametrize("old", sorted(symattn._MOVED))
def test_old_module_names_still_import_the_same_module_with_a_warning(old):
    new = importlib.import_module(f"symattn.{symattn._MOVED[old]}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = importlib.import_module(f"symattn.{old}")
    assert got is new
    assert any(issubclass(w.category, DeprecationWarning) and "moved to" in str(w.message) for w in caught)


def test_old_submodule_names_resolve_to_the_moved_package():
    from symattn.core.algebras.modular import PrimeField

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from symattn.algebras.modular import PrimeField as old
    assert old is PrimeField


def test_former_module_names_of_new_packages_keep_their_public_names():
    from symattn.model import Architecture, random_native
    from symattn.sweep import run_sweep
    from symattn.testing import assert_contact_orders

    assert Architecture.__module__ == "symattn.model.architecture"
    assert callable(random_native) and callable(run_sweep) and callable(assert_contact_orders)
