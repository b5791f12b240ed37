"""The package layout: floors as folders, each package importing its public names on first use."""


def test_former_module_names_of_new_packages_keep_their_public_names():
    from symattn.model import Architecture, random_native
    from symattn.sweep import run_sweep
    from symattn.testing import assert_contact_orders

    assert Architecture.__module__ == "symattn.model.architecture"
    assert callable(random_native) and callable(run_sweep) and callable(assert_contact_orders)
