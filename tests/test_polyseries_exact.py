"""The exact route of native_spectrum (orders mod p, proved over Q column group by column group,
RationalPolySeries from RATIONAL_POLY_FROM_ORDER on) gives the modular route's bands and kernel,
with certificate exact; without column reduction it eliminates over Q[[t]] itself."""

import pytest

from symattn.analyses.spectrum import native_spectrum
from symattn.model.architecture import Architecture


def _bands(s):
    return [(b.layer, b.order, b.multiplicity, b.block) for b in s.bands]


@pytest.mark.parametrize("arch, values", [
    (Architecture.uniform(2, 2, 1, 2, "exp"), "identity"),
    (Architecture.uniform(3, 2, 1, 2, "exp"), "identity"),   # orders 0, 1, 5, 17: RationalPolySeries
    (Architecture.uniform(2, 4, 2, 4, "exp"), "random"),
    (Architecture.uniform(2, 2, 1, 3, "exp", skip="value"), "identity"),  # not column-reduced
], ids=["D2", "D3", "D2-d4-random-values", "skip-value"])
def test_exact_route_has_the_modular_bands(arch, values):
    modular = native_spectrum(arch, values=values)
    exact = native_spectrum(arch, values=values, method="exact")
    assert _bands(exact) == _bands(modular) and exact.kernel == modular.kernel and exact.rank == modular.rank
    assert exact.certificate == "exact" and exact.method == "exact"
    assert any("certificate exact" in n for n in exact.notes)


def test_exact_route_proves_over_q_column_by_column():
    s = native_spectrum(Architecture.uniform(3, 2, 1, 2, "exp"), method="exact")
    assert any("diag(t^v)" in n for n in s.notes)  # the column-reduced proof, not the elimination
