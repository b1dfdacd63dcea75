"""Invariants of the step's timeline (kinds/parallel/step.py) over small models, layouts of one device."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from mlsysim_nb.measure.step_scenario import measured_step_scenario


@st.composite
def _configs(draw: Any) -> dict[str, Any]:
    model_type = draw(st.sampled_from(["llama", "gpt2"]))
    heads = draw(st.sampled_from([2, 4]))
    hidden = heads * draw(st.sampled_from([16, 32]))
    return {
        "model_type": model_type, "hidden": hidden, "heads": heads, "kv_heads": heads // 2 if model_type == "llama"
        else heads, "ffn": draw(st.sampled_from([2, 4])) * hidden if model_type == "llama" else 4 * hidden,
        "layers": draw(st.integers(1, 4)), "vocab": draw(st.integers(8, 20_000)),
        "seq_len": draw(st.integers(2, 1024)), "micro_batch": draw(st.integers(1, 8)),
        "dtype": draw(st.sampled_from(["float32", "bfloat16"])), "attention": draw(st.sampled_from(["eager", "sdpa"])),
        "recompute": draw(st.booleans()),
        "optimizer_implementation": draw(st.sampled_from(["for-loop", "foreach", "fused"])),
    }  # fmt: skip


def _saved_peak(s: Any) -> float:
    return max(p.bytes.get("saved activations", 0.0) + p.bytes.get("rebuilt activations", 0.0)
               for p in s.step_timeline().points)  # fmt: skip


@given(_configs(), st.integers(1, 3))
def test_peak_bounds(config: dict[str, Any], micro_batches: int) -> None:
    """The peak is at least every point's total and at most the sum of every category's largest value."""
    tl = measured_step_scenario(config).step_timeline(micro_batches)
    assert all(tl.peak >= p.total for p in tl.points)
    assert tl.peak <= sum(tl.largest().values()) * (1 + 1e-12)
    assert tl.peak_phase in [p.phase for p in tl.points]


@given(_configs())
def test_recomputation_never_raises_the_saved_peak(config: dict[str, Any]) -> None:
    """Recomputing each layer never raises the most saved (and rebuilt) activations the step holds."""
    kept = measured_step_scenario({**config, "recompute": False})
    recomputed = measured_step_scenario({**config, "recompute": True})
    assert _saved_peak(recomputed) <= _saved_peak(kept) * (1 + 1e-12)


@given(_configs(), st.integers(2, 4))
def test_accumulation_never_lowers_the_peak(config: dict[str, Any], micro_batches: int) -> None:
    """More micro-batches per step never lower the peak: the gradients are alive from the second one on."""
    s = measured_step_scenario(config)
    assert s.step_timeline(micro_batches).peak >= s.step_timeline(1).peak
