"""The public API's docstrings: numpydoc sections on a declared list of names, short module docstrings.

The sections a callable needs are computed from its signature and body
(``tests/docstring_sections.py``; ``python tests/docstring_sections.py --list`` prints the
coverage of every public name). :data:`DOCUMENTED` may only grow: add a name once its
docstring has its sections.
"""

from __future__ import annotations

import ast
import importlib

import pytest

from conftest import ROOT
from docstring_sections import needed, problems, public_callables, sections

#: Public names (``module.name`` as in ``docs/api.rst``'s modules) whose docstrings have every
#: numpydoc section they need: Parameters, Returns, Raises.
DOCUMENTED = [
    "symattn.Architecture",
    "symattn.analyses.bank.BankResult",
    "symattn.analyses.bank.family_bank",
    "symattn.analyses.bank.frame_rank",
    "symattn.analyses.collapse.bank_jacobian",
    "symattn.analyses.collapse.block_letters",
    "symattn.analyses.collapse.checked_path",
    "symattn.analyses.collapse.from_u_series",
    "symattn.analyses.collapse.jacobian_algebra",
    "symattn.analyses.collapse.kernel_product",
    "symattn.analyses.collapse.leading_coefficients",
    "symattn.analyses.collapse.path_parameters",
    "symattn.analyses.collapse.path_point_of",
    "symattn.analyses.collapse.split_path",
    "symattn.analyses.columns.column_operation",
    "symattn.analyses.columns.combine",
    "symattn.analyses.columns.prove_reduced_orders",
    "symattn.analyses.columns.rational_reconstruction",
    "symattn.analyses.columns.reduce_columns",
    "symattn.analyses.columns.reduced_height_bound",
    "symattn.analyses.contact.attribute_bands",
    "symattn.analyses.contact.compress_rows",
    "symattn.analyses.contact.divided_frame",
    "symattn.analyses.contact.framed_bank",
    "symattn.analyses.contact.grown_bank",
    "symattn.analyses.contact.setup",
    "symattn.analyses.contact.verify_kernel",
    "symattn.analyses.dimension.ball_dimension",
    "symattn.analyses.dimension.ball_dimension_bytes",
    "symattn.analyses.dimension.float32_rank_near_collapse",
    "symattn.analyses.dimension.gauge_bound",
    "symattn.analyses.dimension.generic_native",
    "symattn.analyses.dimension.rank_condition_bound",
    "symattn.analyses.fiber_checks.flip_search",
    "symattn.analyses.fiber_checks.head_evidence",
    "symattn.analyses.fiber_checks.proved_sign_degree",
    "symattn.analyses.fiber_checks.score_certificate",
    "symattn.analyses.fiber_checks.sign_evidence",
    "symattn.analyses.fiber_checks.suffix_evidence",
    "symattn.analyses.fiber_checks.verify_classification",
    "symattn.analyses.fibers.certificate_evidence",
    "symattn.analyses.fibers.collapse_locus",
    "symattn.analyses.fibers.compare_points",
    "symattn.analyses.fibers.consensus_certificate",
    "symattn.analyses.fibers.contrast_defect",
    "symattn.analyses.fibers.fiber",
    "symattn.analyses.fibers.flip_evidence",
    "symattn.analyses.fibers.generic_native_point",
    "symattn.analyses.fibers.layer_map",
    "symattn.analyses.fibers.local_certificate",
    "symattn.analyses.fibers.native_fiber",
    "symattn.analyses.fibers.point_fiber",
    "symattn.analyses.fibers.prop_c6_applies",
    "symattn.analyses.fibers.rational_taylor",
    "symattn.analyses.fibers.ray_series",
    "symattn.analyses.fibers.two_token_skew",
    "symattn.analyses.fibers.vanishes",
    "symattn.analyses.frame_proof.FrameProof",
    "symattn.analyses.frame_proof.Known",
    "symattn.analyses.frame_proof.numerical_frame",
    "symattn.analyses.frame_proof.prove_frame",
    "symattn.analyses.frame_proof.rationalize",
    "symattn.analyses.geometry.FirstZeroIdeal",
    "symattn.analyses.geometry.NormalFormChart",
    "symattn.analyses.geometry.chart_rank",
    "symattn.analyses.geometry.consensus_derivatives",
    "symattn.analyses.geometry.first_zero_ideal",
    "symattn.analyses.geometry.from_chart",
    "symattn.analyses.geometry.ideal_intersection",
    "symattn.analyses.geometry.loss_decay",
    "symattn.analyses.geometry.minimal_primes",
    "symattn.analyses.geometry.native_suffix_free",
    "symattn.analyses.geometry.newton_threshold",
    "symattn.analyses.geometry.reduction_jacobian",
    "symattn.analyses.geometry.residual_generators",
    "symattn.analyses.inverse.inverse_chart",
    "symattn.analyses.inverse.local_inverse",
    "symattn.analyses.inverse.taylor_observation",
    "symattn.analyses.jets.default_rays",
    "symattn.analyses.jets.first_dependence",
    "symattn.analyses.jets.full_rank_degree",
    "symattn.analyses.jets.generic_effective",
    "symattn.analyses.jets.jet_jacobian",
    "symattn.analyses.jets.native_sharp_degree",
    "symattn.analyses.jets.ray_jacobian",
    "symattn.analyses.jets.refuse_biased_jets",
    "symattn.analyses.matrix_free.StackLayout",
    "symattn.analyses.matrix_free.gaussian_bank",
    "symattn.analyses.matrix_free.ray_spectra",
    "symattn.analyses.matrix_free.stack_forward",
    "symattn.analyses.matrix_free.stack_layout",
    "symattn.analyses.matrix_free.top_singular_values",
    "symattn.analyses.numerical_jets.GapRank",
    "symattn.analyses.numerical_jets.gap_rank",
    "symattn.analyses.numerical_jets.numerical_rank_profile",
    "symattn.analyses.numerical_jets.numerical_sharp_degree",
    "symattn.analyses.numerical_jets.require_numerical_jet",
    "symattn.analyses.numerical_spectrum.NumericalSpectrum",
    "symattn.analyses.numerical_spectrum.PathJacobians",
    "symattn.analyses.numerical_spectrum.default_bank_size",
    "symattn.analyses.numerical_spectrum.frame_check",
    "symattn.analyses.numerical_spectrum.grown_bank_size",
    "symattn.analyses.numerical_spectrum.grown_numerical_bank",
    "symattn.analyses.numerical_spectrum.numerical_bytes",
    "symattn.analyses.numerical_spectrum.numerical_path_spectrum",
    "symattn.analyses.numerical_spectrum.require_numerical",
    "symattn.analyses.numerics.autodiff_jacobian",
    "symattn.analyses.numerics.check_digits",
    "symattn.analyses.numerics.digits_needed",
    "symattn.analyses.numerics.final_pair_slopes",
    "symattn.analyses.numerics.midpoint",
    "symattn.analyses.numerics.numerical_rank",
    "symattn.analyses.numerics.observation_jacobian",
    "symattn.analyses.numerics.positive_singular_values",
    "symattn.analyses.numerics.project_out",
    "symattn.analyses.numerics.subspace_sine",
    "symattn.analyses.path_rank.PathRank",
    "symattn.analyses.path_rank.analytic_on_path",
    "symattn.analyses.path_rank.path_rank",
    "symattn.analyses.path_rank.rank_route",
    "symattn.analyses.path_rank.truncation_orders",
    "symattn.analyses.protocols.F1",
    "symattn.analyses.protocols.F2",
    "symattn.analyses.protocols.F3",
    "symattn.analyses.protocols.f2_data",
    "symattn.analyses.protocols.f3_mean",
    "symattn.analyses.protocols.path_theta",
    "symattn.analyses.protocols.protocol_f1",
    "symattn.analyses.protocols.protocol_f2",
    "symattn.analyses.protocols.protocol_f3",
    "symattn.analyses.score_orders.covered",
    "symattn.analyses.score_orders.score_orders",
    "symattn.analyses.sensitivity.Sensitivity",
    "symattn.analyses.sensitivity.band_protocol",
    "symattn.analyses.signatures.ProbeAlgebra",
    "symattn.analyses.signatures.ProbeExpansion",
    "symattn.analyses.signatures.amplitudes",
    "symattn.analyses.signatures.lowest_homogeneous",
    "symattn.analyses.signatures.sign_branches",
    "symattn.analyses.signatures.signatures",
    "symattn.analyses.signatures.to_sympy",
    "symattn.analyses.spectrum.bank_orders",
    "symattn.analyses.spectrum.exact_column_orders",
    "symattn.audit",
    "symattn.core.limits.ball_evaluation_bytes",
    "symattn.core.limits.graph_evaluation_bytes",
    "symattn.core.limits.require_memory",
    "symattn.core.limits.require_order",
    "symattn.core.limits.spectrum_bytes",
    "symattn.core.limits.time_budget",
    "symattn.core.parse.parse_matrix",
    "symattn.core.validate.nesting_depth",
    "symattn.core.validate.read_text_file",
    "symattn.core.validate.require_choice",
    "symattn.core.validate.require_int",
    "symattn.core.validate.require_list",
    "symattn.core.validate.require_mapping",
    "symattn.core.validate.require_nesting",
    "symattn.core.validate.require_path",
    "symattn.core.validate.require_real",
    "symattn.core.validate.require_str",
    "symattn.core.validate.require_type",
    "symattn.core.validate.shown",
    "symattn.effective_network",
    "symattn.evaluate",
    "symattn.hmk_table",
    "symattn.least_bank",
    "symattn.line_probe",
    "symattn.load_model",
    "symattn.load_spec",
    "symattn.model.architecture.Architecture.uniform",
    "symattn.model.architecture.require_architecture",
    "symattn.model.catalogue.Entry",
    "symattn.model.catalogue.catalogue_key",
    "symattn.model.catalogue.catalogue_of",
    "symattn.model.catalogue.parse",
    "symattn.model.expansion.catalogue_check",
    "symattn.model.expansion.independent_taylor",
    "symattn.model.network.Builder",
    "symattn.model.network.add_layer",
    "symattn.model.network.jacobian",
    "symattn.model.network.layer",
    "symattn.model.network.masked_layer",
    "symattn.model.network.series_derivative_check",
    "symattn.model.parameters.check_generic",
    "symattn.model.parameters.exact_rationals",
    "symattn.model.parameters.flat_vector",
    "symattn.model.parameters.generic_matrix",
    "symattn.model.parameters.native_path_values",
    "symattn.model.parameters.path_point",
    "symattn.model.parameters.point_of",
    "symattn.model.parameters.random_point",
    "symattn.model.parameters.random_rational_matrix",
    "symattn.model.parts.activation.Activation",
    "symattn.model.parts.activation.Gelu",
    "symattn.model.parts.activation.GeluTanh",
    "symattn.model.parts.activation.Polynomial",
    "symattn.model.parts.activation.Relu",
    "symattn.model.parts.activation.Sigmoid",
    "symattn.model.parts.activation.Silu",
    "symattn.model.parts.activation.Tanh",
    "symattn.model.parts.activation_part",
    "symattn.model.parts.bias.Bias",
    "symattn.model.parts.bias.Biases",
    "symattn.model.parts.bias.NoBias",
    "symattn.model.parts.bias_part",
    "symattn.model.parts.combine_part",
    "symattn.model.parts.head.times_unit",
    "symattn.model.parts.head.unit_times",
    "symattn.model.parts.layernorm.LayerNorm",
    "symattn.model.parts.norm.Norm",
    "symattn.model.parts.norm_part",
    "symattn.model.parts.output.Combine",
    "symattn.model.parts.output.ConcatHeads",
    "symattn.model.parts.output.SumHeads",
    "symattn.model.parts.ring.per_token",
    "symattn.model.parts.ring.plus",
    "symattn.model.parts.ring.product",
    "symattn.model.parts.ring.transpose",
    "symattn.model.parts.rmsnorm.RMSNorm",
    "symattn.model.parts.skip.FoldedSkip",
    "symattn.model.parts.skip.NoSkip",
    "symattn.model.parts.skip.Skip",
    "symattn.model.parts.skip.ValueSkip",
    "symattn.model.parts.skip_part",
    "symattn.model.parts.swiglu.SwiGLU",
    "symattn.model.real_line.RealLine",
    "symattn.model.real_line.real_line",
    "symattn.model.reference.covers",
    "symattn.model.reference.numerical_check",
    "symattn.model.reference.numerical_outputs",
    "symattn.model.reference.reference_check",
    "symattn.model.reference.reference_outputs",
    "symattn.model.sublayers.mlp",
    "symattn.model.symmetries.GaugeKernel",
    "symattn.model.symmetries.Symmetry",
    "symattn.model.symmetries.declared_symmetries",
    "symattn.model.symmetries.gauge_directions",
    "symattn.model.symmetries.head_classes",
    "symattn.model.symmetries.head_permutation_check",
    "symattn.model.symmetries.hidden_sign_flip",
    "symattn.model.symmetries.hidden_sign_flip_check",
    "symattn.model.symmetries.path_direction",
    "symattn.model.symmetries.pi_derivative_vanishes",
    "symattn.model.symmetries.sign_flip_layers",
    "symattn.model.symmetries.visible_blocks",
    "symattn.model.symmetry_counts.Count",
    "symattn.model.symmetry_counts.check_counts",
    "symattn.model.symmetry_counts.kind_counts",
    "symattn.model.symmetry_kinds.block_symmetries",
    "symattn.model.taylor.NotRationalSeries",
    "symattn.model.taylor.exact",
    "symattn.model.taylor.flint_eval",
    "symattn.model.taylor.flint_taylor",
    "symattn.model.taylor.is_nonzero",
    "symattn.model.taylor.sympy_taylor",
    "symattn.model.taylor.taylor",
    "symattn.native_network",
    "symattn.native_spectrum",
    "symattn.neuromanifold_dimension",
    "symattn.normal_form_chart",
    "symattn.normalizers",
    "symattn.random_bank",
    "symattn.random_native",
    "symattn.rational_matrix",
    "symattn.reduction",
    "symattn.reduction_graph",
    "symattn.sensitivity",
    "symattn.sharp_degree",
    "symattn.theorems.registry.script_name",
]

#: The most lines of prose a module docstring may have (its ``Examples`` section not counted:
#: doctests are tests). Say what the module is and why; histories go to CHANGELOG.md,
#: measurements to docs/benchmarks.rst, reference material to the docs pages.
MODULE_DOCSTRING_LINES = 25

#: Modules whose docstrings are still longer, with their length: a length may only go down, and
#: a module leaves the list when it is within the limit.
LONG_MODULE_DOCSTRINGS: dict[str, int] = {
    "symattn/audit/analysis.py": 27,
    "symattn/audit/budget.py": 27,
    "symattn/audit/hf.py": 34,
    "symattn/audit/modules.py": 29,
    "symattn/commands/fiber.py": 37,
    "symattn/core/algebras/constants.py": 39,
    "symattn/core/algebras/functions.py": 28,
    "symattn/core/confine.py": 33,
    "symattn/core/limits.py": 30,
    "symattn/core/output.py": 27,
    "symattn/sweep/atlas.py": 37,
    "symattn/sweep/run.py": 28,
    "symattn/sweep/spec.py": 33,
    "symattn/sweep/store.py": 33,
    "symattn/testing/assertions.py": 41,
    "symattn/testing/plugin.py": 31,
}


def _resolve(name: str) -> object:
    public = public_callables()
    if name in public:
        return public[name]
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):  # the longest importable prefix, then attributes
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise LookupError(name)


def test_the_documented_list_is_sorted_and_names_public_callables() -> None:
    assert DOCUMENTED == sorted(set(DOCUMENTED))
    public = public_callables()
    for name in DOCUMENTED:
        assert name in public or _resolve(name.rpartition(".")[0]) in public.values(), name


@pytest.mark.parametrize("name", DOCUMENTED)
def test_documented_names_have_their_numpydoc_sections(name: str) -> None:
    assert problems(_resolve(name)) == [], name


def test_the_checker_finds_what_a_docstring_lacks() -> None:
    from symattn.core.errors import SymattnError

    def lacking(x: int, y: str = "") -> int:
        """Do it.

        Parameters
        ----------
        x : int
        """
        if x < 0:
            raise SymattnError("negative")
        return x

    def fine(x: int) -> None:
        """Do it.

        Parameters
        ----------
        x : int
            The thing.
        """

    assert set(needed(lacking)) == {"Parameters", "Returns", "Raises"}
    assert problems(lacking) == ["Parameters does not list y", "no Returns section", "no Raises section"]
    assert problems(fine) == []
    assert list(sections(lacking.__doc__)) == ["", "Parameters"]


def _prose_lines(doc: str) -> int:
    lines = doc.strip("\n").splitlines()
    for i, line in enumerate(lines[:-1]):
        if line.strip() == "Examples" and set(lines[i + 1].strip()) == {"-"}:
            lines = lines[:i]
            break
    while lines and not lines[-1].strip():
        lines.pop()
    return len(lines)


def _module_docstrings() -> dict[str, int]:
    out = {}
    for path in sorted((ROOT / "symattn").rglob("*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text()), clean=False)
        if doc:
            out[str(path.relative_to(ROOT))] = _prose_lines(doc)
    return out


def test_module_docstrings_say_what_and_why_briefly() -> None:
    lengths = _module_docstrings()
    too_long = {path: n for path, n in lengths.items()
                if n > LONG_MODULE_DOCSTRINGS.get(path, MODULE_DOCSTRING_LINES)}
    assert too_long == {}, f"module docstrings over {MODULE_DOCSTRING_LINES} lines: move the detail out"
    fixed = [path for path, n in LONG_MODULE_DOCSTRINGS.items() if lengths.get(path, 0) <= MODULE_DOCSTRING_LINES]
    assert fixed == [], "within the limit now: remove from LONG_MODULE_DOCSTRINGS"
    shrunk = {path: lengths[path] for path, n in LONG_MODULE_DOCSTRINGS.items()
              if path in lengths and lengths[path] < n}
    assert shrunk == {}, "shorter now: lower the recorded length"
