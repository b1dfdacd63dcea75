"""A control offers exactly what its field's declaration accepts: the knob's range is the control's range."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlsysim_nb import Scenarios, kinds
from mlsysim_nb.model.controls import ControlSpec, changes_for
from mlsysim_nb.model.knob import knobs


def _field_controls() -> list[tuple[str, ControlSpec]]:
    """(case, control) for every control of every named case that sets one of the case's declared fields."""
    out = []
    for case in Scenarios:
        s = Scenarios[case]
        declared = knobs(s)
        out.extend((case, spec) for spec in s.controls() if spec.name in declared and spec.kind != "view")
    return out


CONTROLS = _field_controls()
SLIDERS = [(case, spec) for case, spec in CONTROLS if spec.kind in {"log", "int"}]


def test_every_kind_has_field_controls() -> None:
    """The cases of every kind the package has show at least one control built from a knob."""
    shown = {type(Scenarios[case]).__name__ for case, _ in CONTROLS}
    assert {kind.name for kind in kinds.all_kinds()} == shown


@pytest.mark.parametrize(("case", "spec"), SLIDERS, ids=[f"{c}.{s.name}" for c, s in SLIDERS])
def test_a_slider_spans_the_field_s_range(case: str, spec: ControlSpec) -> None:
    """A slider's top is accepted by the field's check and one past it refused by variant(); likewise its bottom.

    The bottom may stand for "none" one below the field (0 segments: no checkpointing). The expected range is
    what validation does, not the bounds the control is built from.
    """
    from mlsysim_nb import FieldError

    s = Scenarios[case]
    declared = knobs(s)[spec.name]
    owner = type(s).__name__
    declared.check(owner, spec.name, int(spec.high))
    with pytest.raises(FieldError) as refused:
        s.variant(**changes_for(spec, s, int(spec.high) + 1))
    assert refused.value.field == spec.name
    bottom = changes_for(spec, s, int(spec.low))[spec.name]
    if bottom is not None:
        declared.check(owner, spec.name, bottom)
    below = changes_for(spec, s, int(spec.low) - 1)[spec.name]
    if below is not None and bottom is not None:
        with pytest.raises(FieldError) as refused:
            s.variant(**{spec.name: below})
        assert refused.value.field == spec.name


def _value(spec: ControlSpec, data: Any) -> Any:
    if spec.kind in {"log", "int"}:
        return data.draw(st.integers(int(spec.low), int(spec.high)))
    if spec.kind == "toggle":
        return data.draw(st.booleans())
    return data.draw(st.sampled_from([v for _, v in spec.options]))


@given(data=st.data())
def test_every_value_a_control_offers_passes_the_field_s_check(data: Any) -> None:
    """Whatever a control can be set to, the field's own declaration accepts; one past the top it refuses."""
    case, spec = data.draw(st.sampled_from(CONTROLS))
    s = Scenarios[case]
    declared = knobs(s)
    owner = type(s).__name__
    for name, value in changes_for(spec, s, _value(spec, data)).items():
        if name in declared and not (value is None and declared[name].optional):
            declared[name].check(owner, name, value)  # raises FieldError if the control offered too much
    if spec.kind in {"log", "int"} and declared[spec.name].high is not None:
        from mlsysim_nb import FieldError

        with pytest.raises(FieldError):
            declared[spec.name].check(owner, spec.name, int(declared[spec.name].high) + 1)


FROM_KNOBS = [(c, s) for c, s in CONTROLS if s.kind != "toggle" or s.bind is None]  # a bound toggle is the view's own


@pytest.mark.parametrize(("case", "spec"), FROM_KNOBS, ids=[f"{c}.{s.name}" for c, s in FROM_KNOBS])
def test_a_control_reads_its_label_and_tooltip_from_the_knob(case: str, spec: ControlSpec) -> None:
    """The caption is the field's declared label and the tooltip its declared help: one declaration, two readers."""
    declared = knobs(Scenarios[case])[spec.name]
    assert (spec.label, spec.help) == (declared.label, declared.help)
