"""The checks every Hugging Face measurement passes (shared by the two test files, one per pytest worker)."""

from __future__ import annotations

from typing import Any


def check_measurement(m: Any) -> None:
    """Within 1 % of the transformers accounting; every byte attributed to a named row, row by row exactly."""
    assert abs(m.measured - m.predicted) <= 0.01 * m.measured, m
    assert m.unattributed == 0, m
    assert sum(r.measured for r in m.rows) == m.measured
    wrong = {r.row.key: (r.predicted, r.measured) for r in m.rows if r.measured != r.predicted}
    assert wrong == {}
    assert all(r.row.label for r in m.rows)


def check_effects(m: Any) -> None:
    """The device effects named are those the run had: CPU dropout masks, SDPA's CPU math path under dropout."""
    expected = set()
    if m.dropout and any(r.row.width == "mask" for r in m.rows):
        expected.add("cpu dropout mask")
    if m.dropout and m.attention == "sdpa":
        expected.add("cpu sdpa math path")
    if m.attention == "sdpa" and m.module == "DeepseekV3DecoderLayer":  # its d_qk differs from its d_v
        expected.add("cpu sdpa unequal head dims")
    assert set(m.effects) == expected
