"""Round two of trust: the last gaps between the checkers and the places users type or read."""

from __future__ import annotations

import dataclasses

import pytest

from mlsysim_nb import FieldError, Scenarios, explore, sweep

FLASH = Scenarios.Gpt2MixedPrecisionFlashAttentionOnH100
SEGMENTS = Scenarios.Gpt2XlBatch32SegmentCheckpointed


def test_a_caveat_shows_in_every_repr() -> None:
    """Twenty-eight segments of 48 layers read low; the HTML, text and Markdown reprs say so, as the panel does."""
    s = SEGMENTS.variant(checkpoint_segments=28)
    assert any("28 segments do not divide the 48 layers" in c for c in s.caveats())
    assert "Caveat: 28 segments do not divide the 48 layers" in s.to_text()
    assert "**Caveat:** 28 segments do not divide the 48 layers" in s.to_markdown()
    assert '<div class="msn-warning">&#9888; 28 segments do not divide the 48 layers' in s.to_html(chart=False)
    assert "do not divide" not in SEGMENTS.to_text()  # k = 8 divides 48


def test_a_huge_typed_integer_is_refused_in_the_panel_with_a_short_message() -> None:
    """10**400 typed into the batch box: refused with the field's range, the number written 1e+400."""
    panel = explore(FLASH)
    before = panel.scenario
    panel.set("batch_size", 10**400)
    assert panel.error == (
        "batch size = 1e+400 was not applied: TrainingStateFitScenario.batch_size: must be from 1 to 1,048,576, "
        "got 1e+400"
    )
    assert panel.scenario is before


def test_control_range_messages_write_whole_numbers_with_separators() -> None:
    """A control refusing text says "from 1 to 1,048,576", not "1.04858e+06"."""
    from mlsysim_nb.model.controls import controls_for

    spec = next(c for c in controls_for(FLASH) if c.name == "batch_size")
    assert spec.accepts(float("nan")) == "must be a whole number from 1 to 1,048,576"
    assert spec.accepts(10**400) == ""  # a whole number: the field's own check gives the range


def test_names_cannot_forge_lines_or_reverse_text_in_html() -> None:
    """A NUL or a right-to-left override in a name is shown as an escape in the HTML repr too."""
    s = FLASH.variant(name="mine\u202e\x00")
    html = s.to_html(chart=False)
    assert "\u202e" not in html
    assert "\x00" not in html
    assert "\\u202e" in html


def test_the_short_repr_is_one_line_whatever_the_names() -> None:
    """A workload named with a line break cannot add a line to repr()."""
    workload = dataclasses.replace(FLASH.workload, name="GPT\nFAKE LINE: fits")
    s = FLASH.variant(workload=workload)
    assert "\n" not in repr(s)
    assert "GPT⏎FAKE LINE: fits" in repr(s)


def test_sweep_text_is_read_by_the_guarded_reader() -> None:
    """sweep(bytes_per_value=["1 B", "10**10**10 B"]) is refused at once, naming the axis, instead of hanging."""
    with pytest.raises(FieldError, match="bytes_per_value"):
        sweep(FLASH, bytes_per_value=["1 B", "10**10**10 B"])


def test_a_float_that_lost_an_integers_digits_is_not_written_out_in_full() -> None:
    """sweep(batch_size=[1, 2**70]) reads 2**70 as a float: the message says 1.18e+21, not 20 invented digits."""
    from mlsysim_nb.errors import show_number

    with pytest.raises(FieldError, match=r"got 1\.18e\+21$"):
        sweep(FLASH, batch_size=[1, 2**70])
    assert show_number(2**70) == "1,180,591,620,717,411,303,424"  # an int keeps every digit
    assert show_number(1e18) == "1,000,000,000,000,000,000"  # a float whose digits are all its own
