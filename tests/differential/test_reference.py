"""Differential tests: every property and method agrees with mlsysim==0.3.0 (rel 1e-9).

Where the reference raises (a TypeError or AttributeError from a None input),
ours raises a NotApplicableError naming what is missing: the test checks that
too, so a silent number never stands in for the reference's failure.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given

from mlsysim_nb import Q_, ActivationMemoryScenario, NotApplicableError, Scenarios, TrainingStateFitScenario
from tests.reference import ACTIVATION_PROPERTIES, RQ, TRAINING_PROPERTIES, outcome, ref, ref_scenario, same
from tests.strategies import activation_scenarios, training_scenarios

pytestmark = pytest.mark.reference

_REF_CATALOG = ref.Scenarios
#: the reference's 22 named cases (the catalog adds two many-device cases the reference does not have)
#: (cases on real architectures, read from their config.json, are the catalog's own: the reference has none)
REFERENCE_CASES = [
    name
    for name in Scenarios.names(TrainingStateFitScenario) + Scenarios.names(ActivationMemoryScenario)
    if hasattr(_REF_CATALOG, name)
]
assert len(REFERENCE_CASES) == 22, REFERENCE_CASES  # the reference's count, never fewer


def _compare(ours: Any, theirs: Any, names: list[str], calls: list[tuple[str, tuple, tuple]]) -> None:
    for name in names:
        _check_one(ours, theirs, name, (), ())
    for name, our_args, ref_args in calls:
        _check_one(ours, theirs, name, our_args, ref_args)


def _call(obj: Any, name: str, args: tuple) -> Any:
    value = getattr(obj, name)
    return value(*args) if args else value


def _check_one(ours: Any, theirs: Any, name: str, our_args: tuple, ref_args: tuple) -> None:
    ref_kind, ref_value = outcome(theirs, name, *ref_args)
    if ref_kind == "raises":
        kind, _ = outcome(ours, name, *our_args)
        assert kind == "raises", f"{name}: the reference raises, ours gives a number"
        with pytest.raises((NotApplicableError, ValueError)):
            _call(ours, name, our_args)
        return
    our_kind, our_value = outcome(ours, name, *our_args)
    if not _finite(ref_value):
        # a deliberate difference (README, "Differences from mlsysim 0.3.0"): infinity and NaN are never results
        assert our_kind == "raises", f"{name}: the reference gives {ref_value!r}, ours must refuse it"
        with pytest.raises(NotApplicableError, match=r"finite|non-zero"):
            _call(ours, name, our_args)
        return
    assert our_kind == "ok", f"{name}: reference gives {ref_value!r}, ours raises {our_value}"
    assert same(our_value, ref_value), f"{name}: ours {our_value!r} != reference {ref_value!r}"


def _finite(value: Any) -> bool:
    magnitude = getattr(value, "magnitude", value)
    if isinstance(magnitude, (bool, int, str)) or magnitude is None:
        return True
    try:
        return math.isfinite(float(magnitude))
    except (TypeError, ValueError):
        return True


def _training_calls() -> list[tuple[str, tuple, tuple]]:
    return [
        ("activations_at", (8,), (8,)),
        ("activations_at", (1000,), (1000,)),
        ("checkpoint_write_time", (Q_(2.5, "GB/s"),), (RQ(2.5, "GB/s"),)),
    ]


def _activation_calls(layers: int) -> list[tuple[str, tuple, tuple]]:
    calls = [("activations", (s,), (s,)) for s in ("none", "selective", "full")]
    calls.extend(("checkpoint_memory_units", (k,), (k,)) for k in sorted({1, max(1, layers // 2), layers}))
    return calls


#: what the reference computes as if every layer reran its forward pass, whatever checkpoint_segments (D20)
_SEGMENT_RERUN = ["recompute_overhead", "recompute_forward_equivalents"]


def _compare_activations(ours: Any, theirs: Any, names: list[str], calls: list[tuple[str, tuple, tuple]]) -> None:
    """Compare an activation scenario; with k segments the rerun-dependent figures are compared without them (D20)."""
    if ours.checkpoint_segments is None:
        _compare(ours, theirs, names, calls)
        return
    _compare(ours, theirs, [n for n in names if n not in _SEGMENT_RERUN], calls)
    _compare(ours.variant(checkpoint_segments=None), theirs, [n for n in names if n in _SEGMENT_RERUN], [])


@pytest.mark.parametrize("name", REFERENCE_CASES)
def test_named_scenario_matches_reference(name: str) -> None:
    """Each of the reference's 22 named cases agrees with the reference's case of the same name, property by property."""
    ours = Scenarios[name]
    theirs = getattr(_REF_CATALOG, name)
    if hasattr(ours, "bytes_per_value"):
        _compare(ours, theirs, TRAINING_PROPERTIES, _training_calls())
    else:
        _compare_activations(ours, theirs, ACTIVATION_PROPERTIES, _activation_calls(ours.workload.layers))


@pytest.mark.parametrize("name", REFERENCE_CASES)
def test_named_scenario_inputs_match_reference(name: str) -> None:
    """The named cases are built from the same inputs as the reference's."""
    ours, theirs = Scenarios[name], getattr(_REF_CATALOG, name)
    assert float(theirs.workload.parameters.magnitude) == float(ours.workload.parameters.magnitude)
    assert theirs.workload.layers == ours.workload.layers
    if hasattr(ours, "bytes_per_value"):
        for field in ("bytes_per_value", "optimizer_bytes_per_parameter", "master_bytes_per_parameter", "activations"):
            a, b = getattr(ours, field), getattr(theirs, field)
            assert (a is None) == (b is None), field
            if a is not None:
                assert same(Q_(a.m_as("byte"), "byte"), RQ(b.m_as("byte"), "byte")), field
        for field in ("batch_size", "adapter_parameters", "adapter_rank", "adapted_matrices"):
            assert getattr(theirs, field) == getattr(ours, field), field
        assert (ours.hardware is None) == (theirs.hardware is None)
    else:
        for field in ("micro_batch", "seq_len", "precision_bytes", "ffn_multiple", "checkpoint_segments"):
            assert getattr(theirs, field) == getattr(ours, field), field


@given(training_scenarios())
def test_random_training_scenarios_match_reference(s: Any) -> None:
    """Hypothesis-generated training scenarios agree with the reference on every property and method."""
    _compare(s, ref_scenario(s), TRAINING_PROPERTIES, _training_calls())


#: the line items the reference sizes with ffn_multiple; its aggregate 34 ignores it (ours is 18 + 4f)
_FFN_LINE_ITEMS = ["ffn_activations_per_layer", "line_items_per_layer", "line_items_total"]


@given(activation_scenarios())
def test_random_activation_scenarios_match_reference(s: Any) -> None:
    """Hypothesis-generated activation scenarios agree with the reference on every property and method.

    The reference's per-token coefficient is 34 whatever ``ffn_multiple``; ours is 18 + 4f, the same at
    f = 4. So the aggregate is compared at f = 4 and the line items, which both size with f, at the drawn f.
    """
    theirs = ref_scenario(s)
    aggregate = [p for p in ACTIVATION_PROPERTIES if p not in _FFN_LINE_ITEMS]
    _compare_activations(s.variant(ffn_multiple=4), theirs, aggregate, _activation_calls(s.workload.layers))
    _compare(s, theirs, _FFN_LINE_ITEMS, [])


def test_reference_reads_plain_bytes_as_bits() -> None:
    """Documents why ours differs on plain numbers: the reference takes bytes_per_value=2 as 2 bits."""
    from mlsysim_nb import Workloads
    from tests.reference import ref_workload

    theirs = ref_scenario(Scenarios.Gpt2Fp32AdamOnH100)
    plain = type(theirs)(
        name="plain",
        description="plain",
        workload=ref_workload(Workloads.GPT2_XL),
        bytes_per_value=2,
        optimizer_bytes_per_parameter=8,
    )
    ours = Scenarios.Gpt2Fp32AdamOnH100.variant(bytes_per_value=2, optimizer_bytes_per_parameter=8)
    assert ours.weights.m_as("byte") == 3e9
    assert pytest.approx(plain.weights.m_as("byte")) == 3e9 / 8
