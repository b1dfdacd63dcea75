"""Invariants of the step's timeline (kinds/parallel/step.py) over small models, layouts of one device."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlsysim_nb.errors import FieldError
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


@st.composite
def _shipped_layouts(draw: Any) -> Any:
    """A shipped configuration (it gives the vocabulary) under one device or a layout of t, SP, N_d and ZeRO."""
    from mlsysim_nb import ActivationMemoryScenario, ParallelTrainingScenario, TrainingStateFitScenario, Workloads

    w = Workloads.configuration(draw(st.sampled_from(["gpt2-xl", "llama-3.1-8b", "mistral-7b", "qwen2.5-7b"])))
    width = draw(st.sampled_from([2, 4]))
    master = draw(st.sampled_from([None, 4])) if width == 2 else None
    state = TrainingStateFitScenario(workload=w, bytes_per_value=width, optimizer_bytes_per_parameter=2 * (master or
                                     width), master_bytes_per_parameter=master)  # fmt: skip
    t = draw(st.sampled_from([d for d in (1, 2, 4) if w.heads % d == 0 and (w.kv_heads or w.heads) % d == 0]))
    attention = draw(st.sampled_from(["eager", "fused"]))
    implementation = draw(st.sampled_from(["megatron", "transformers"]))
    windowed = w.attention_sinks or any(layer.window for layer, _ in w.architecture().layer_counts())
    if windowed and (attention, implementation) == ("fused", "transformers"):  # refused by name (tests/unit)
        attention = "eager"
    acts = ActivationMemoryScenario(workload=w, micro_batch=draw(st.integers(1, 8)),
                                    seq_len=t * draw(st.integers(1, 256)), precision_bytes=width,
                                    attention=attention, implementation=implementation)  # fmt: skip
    return ParallelTrainingScenario(
        state=state, activations=acts, recompute=draw(st.sampled_from(["none", "selective", "full"])),
        data_parallel=draw(st.sampled_from([1, 8])), zero_stage=draw(st.integers(0, 3)), tensor_parallel=t,
        sequence_parallel=t > 1 and draw(st.booleans()),
        optimizer_implementation=draw(st.sampled_from(["for-loop", "foreach", "fused"])),
    )  # fmt: skip


@given(_shipped_layouts())
def test_layouts_of_shipped_models(s: Any) -> None:
    """Any layout of one pipeline stage: the peak bounds hold, and the step starts from the state at rest."""
    tl = s.step_timeline()
    assert all(tl.peak >= p.total for p in tl.points)
    assert tl.peak <= sum(tl.largest().values()) * (1 + 1e-12)
    at_rest = s.magnitude("weights_per_device") + s.magnitude("master_weights_per_device")
    assert tl.points[0].total == pytest.approx(float(at_rest + s.magnitude("optimizer_state_per_device")), rel=1e-9)


def test_pipelines_are_refused() -> None:
    """A layout of pipeline stages is refused, naming pipeline_parallel."""
    from mlsysim_nb import Scenarios

    with pytest.raises(FieldError, match="pipeline_parallel"):
        Scenarios.Gpt3_175BKorthikantiTable3OnA100.step_timeline()
