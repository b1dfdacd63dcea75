"""One source of truth: every seed attribute has its equation record and notation."""

from __future__ import annotations

import pytest

from mlsysim_nb import ActivationMemoryScenario, ParallelTrainingScenario, TrainingStateFitScenario, kinds
from mlsysim_nb.units import Q_, ureg

#: every kind's class; the many-device kind's equations include the single-device ones
CLASSES = [kind.load() for kind in kinds.all_kinds()]
#: every formula, with the notation of the kind that reads it all
FORMULAS = ParallelTrainingScenario.EQUATIONS.formulas
QUANTITIES = ParallelTrainingScenario.notation()

# The seed pages' attribute lists (properties and methods), as given.
SEED_TRAINING = [
    "adapter_count",
    "adapter_fraction",
    "adapter_gradients",
    "adapter_kept_share",
    "adapter_master",
    "adapter_optimizer_state",
    "adapter_reduction",
    "adapter_reduction_ceiling",
    "adapter_saved",
    "adapter_state",
    "adapter_weights",
    "bytes_per_trained_parameter",
    "capacity_share",
    "checkpoint",
    "copies",
    "fits",
    "frozen_share",
    "full_state",
    "gradients",
    "master_weights",
    "max_resident_batch",
    "optimizer_state",
    "optimizer_values_per_parameter",
    "resident_batch_limit",
    "total",
    "training_capacity_multiple",
    "training_copies",
    "training_total",
    "update_bytes_per_parameter",
    "update_time",
    "update_traffic",
    "weights",
    "activations_at",
    "checkpoint_write_time",
]
SEED_TRAINING_FIELDS = [
    "workload",
    "hardware",
    "bytes_per_value",
    "optimizer_bytes_per_parameter",
    "batch_size",
    "activations",
    "master_bytes_per_parameter",
    "adapter_parameters",
    "adapter_rank",
    "adapted_matrices",
    "adapter_in_dim",
    "adapter_out_dim",
]
SEED_ACTIVATION = [
    "checkpointed_activations",
    "ffn_activations_per_layer",
    "forward_equivalents",
    "line_items_per_layer",
    "line_items_total",
    "live_segment",
    "per_sequence_activations",
    "per_token_activations",
    "per_token_bytes_coefficient",
    "projection_activations_per_layer",
    "recompute_forward_equivalents",
    "recompute_overhead",
    "score_activations",
    "score_activations_per_layer",
    "score_bytes_coefficient",
    "score_share",
    "segment_input",
    "segment_inputs",
    "segment_layers",
    "sequence",
    "checkpoint_memory_units",
]
SEED_ACTIVATION_FIELDS = [
    "workload",
    "micro_batch",
    "seq_len",
    "precision_bytes",
    "normalization_per_layer",
    "ffn_multiple",
    "checkpoint_segments",
]


def test_every_seed_attribute_has_an_equation() -> None:
    """Each seed property and method is computed by a Formula record of its kind."""
    missing = sorted(set(SEED_TRAINING) - set(TrainingStateFitScenario.EQUATIONS.formulas))
    missing += sorted(
        {*SEED_ACTIVATION, "activations_none", "activations_selective", "activations_full"}
        - set(ActivationMemoryScenario.EQUATIONS.formulas)
    )
    assert not missing, f"no equation for {missing}"


def test_every_seed_name_exists_on_the_classes() -> None:
    """Every field, property and method of the seeds exists under its name."""
    for name in SEED_TRAINING + SEED_TRAINING_FIELDS:
        assert hasattr(TrainingStateFitScenario, name) or name in TrainingStateFitScenario.field_names(), name
    for name in SEED_ACTIVATION + SEED_ACTIVATION_FIELDS + ["activations"]:
        assert hasattr(ActivationMemoryScenario, name) or name in ActivationMemoryScenario.field_names(), name


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_every_name_has_notation(cls: type) -> None:
    """Every formula of a kind and every name it reads has a row in the kind's notation."""
    notation = cls.notation()
    read = {n for f in cls.EQUATIONS.formulas.values() for n in (f.name, *f.inputs)}
    assert set() == read - notation.keys()


def test_a_field_is_written_only_by_its_knob() -> None:
    """No kind's equations table writes a row for a field of the kind or of its parts: the knob is its one row.

    The records' rows may name a field too (the serving kind's ``context_length``); the notation then shows
    the field's knob, not the record's row.
    """
    from mlsysim_nb.model.knob import knobs
    from mlsysim_nb.model.notation import RECORD_QUANTITIES

    for cls in CLASSES:
        fields = {name: declared for klass in (*cls.PARTS, cls) for name, declared in knobs(klass).items()}
        assert set(cls.EQUATIONS.notation) & set(fields) == set(), cls.__name__
        for name in set(RECORD_QUANTITIES) & set(fields):
            assert cls.notation()[name] == fields[name].quantity(name) != RECORD_QUANTITIES[name], (cls.__name__, name)


def test_equation_exceptions_are_few_and_listed() -> None:
    """Only these formulas branch; each case is itself a restricted expression."""
    single = {**TrainingStateFitScenario.EQUATIONS.formulas, **ActivationMemoryScenario.EQUATIONS.formulas}
    branching = sorted(n for n, f in single.items() if f.is_branching)  # the many-device ones: test_parallel
    assert branching == [
        "adapter_count",
        "rerun_fraction",
        "sequence",
        "total",
        "training_fits",
        "updated_bytes_per_parameter",
    ]


@pytest.mark.parametrize("name", sorted(FORMULAS))
def test_formula_dimensions_are_consistent(name: str) -> None:
    """Evaluating each formula on pint quantities of the declared base units gives its declared unit."""
    formula = FORMULAS[name]
    flags = {"adapter_mode": True, "adapter_stated": False, "has_master": True, "seq_given": True,
             "has_activations": True, "segments_given": True}  # fmt: skip

    def get(key: str):  # type: ignore[no-untyped-def]
        if key in flags:
            return flags[key]
        if key in FORMULAS and key != name:
            return FORMULAS[key].evaluate(get)
        base = QUANTITIES[key].base
        return Q_(3.0, base) if base else 3.0

    assert formula.cases, name
    declared = QUANTITIES[name].base
    want = ureg.Unit(declared).dimensionality if declared else ureg.dimensionless.dimensionality
    for case in formula.cases:
        value = case.compiled(get)  # a comparison of unlike dimensions raises here
        if name in BOOLEAN:
            assert isinstance(value, bool), f"{name} ({case.label}): {value!r} is not a truth value"
            continue
        assert not isinstance(value, bool), f"{name} ({case.label}) is a truth value but not listed in BOOLEAN"
        got = value.dimensionality if hasattr(value, "dimensionality") else ureg.dimensionless.dimensionality
        assert want == got, f"{name} ({case.label}): {got} != {want}"


#: the formulas whose result is a truth value rather than a quantity
BOOLEAN = {"fits", "training_fits", "fits_per_device", "training_fits_per_device"}


def test_fits_compares_like_dimensions() -> None:
    """Fits compares the state with the capacity: bytes with bytes gives a truth value, bytes with seconds raises."""
    from pint import DimensionalityError

    case = FORMULAS["fits"].cases[0]
    sizes = {"total": Q_(3.0, "byte"), "capacity": Q_(2.0, "byte")}
    assert case.compiled(sizes.__getitem__) is False
    assert case.compiled({**sizes, "capacity": Q_(4.0, "byte")}.__getitem__) is True
    with pytest.raises(DimensionalityError):
        case.compiled({**sizes, "capacity": Q_(4.0, "second")}.__getitem__)
