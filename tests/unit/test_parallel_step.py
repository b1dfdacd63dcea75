"""The step's timeline (kinds/parallel/step.py): hand-worked points of one small Llama step, and bad inputs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mlsysim_nb import FieldError, ParallelTrainingScenario
from mlsysim_nb.kinds.parallel.cases import CASES
from mlsysim_nb.kinds.parallel.step import MOST_POINTS
from mlsysim_nb.layers import model_saved_bytes
from mlsysim_nb.measure.step_scenario import measured_step_scenario

# h 128, a 4, kv 2, f 256, L 2, v 1000, untied: P = 2·128·1000 + 128 + 2·(16384 + 2·8192 + 16384 + 3·32768 + 256)
SMALL = {"model_type": "llama", "hidden": 128, "heads": 4, "kv_heads": 2, "ffn": 256, "layers": 2, "vocab": 1000,
         "seq_len": 64, "micro_batch": 2, "dtype": "float32", "attention": "sdpa", "recompute": False,
         "optimizer_implementation": "for-loop"}  # fmt: skip
P = 551_552


def _scenario(**changes: Any) -> ParallelTrainingScenario:
    return measured_step_scenario({**SMALL, **changes})


def _saved(s: ParallelTrainingScenario) -> float:
    arch = s.workload.architecture()
    return model_saved_bytes(arch, layers=2, seq_len=64, micro_batch=2, dtype_bytes=4, attention="fused",
                             implementation="transformers")  # fmt: skip


def test_small_llama_parameters() -> None:
    """The measured model's workload counts 551,552 parameters, by hand."""
    assert P == 2 * 128 * 1000 + 128 + 2 * (16384 + 2 * 8192 + 16384 + 3 * 32768 + 256)
    assert _scenario().workload.parameters.magnitude == P


def test_peak_is_the_output_layers_backward() -> None:
    """FP32: weights 4P, moments 8P, every saved tensor and the loss's two FP32 b·s·v gradients (2·2·64·1000·4 B)."""
    s = _scenario()
    assert s.peak_phase == "backward, output layer"
    assert s.peak_per_device.m_as("byte") == pytest.approx(12 * P + _saved(s) + 1_024_000, rel=1e-12)


def test_sum_of_parts_is_not_the_peak() -> None:
    """The sum of state (16P) and saved activations is 1.18 MB more than this peak: no gradients then."""
    tl = _scenario().step_timeline()
    assert tl.sum_of_parts == pytest.approx(16 * P + _saved(_scenario()), rel=1e-12)
    assert tl.sum_of_parts - tl.peak == pytest.approx(4 * P - 1_024_000, rel=1e-12)


def test_optimizer_step_for_loop() -> None:
    """For-loop AdamW: the output layer (128,000 values) after the final norm (128): 128 + 2·128,000 values of 4 B."""
    point = _scenario().step_timeline().points[-1]
    assert point.phase == "optimizer step"
    assert point.bytes["optimizer temporaries"] == 4 * (128 + 2 * 128_000)
    assert point.total == pytest.approx(16 * P + 4 * (128 + 2 * 128_000), rel=1e-12)


@pytest.mark.parametrize(("implementation", "expected"), [("foreach", 4 * P), ("fused", 0)])
def test_optimizer_step_foreach_and_fused(implementation: str, expected: int) -> None:
    """foreach: one temporary list of every parameter (4P bytes); fused: none."""
    point = _scenario(optimizer_implementation=implementation).step_timeline().points[-1]
    assert point.bytes["optimizer temporaries"] == expected


def test_gradient_accumulation_adds_every_gradient() -> None:
    """With two micro-batches, the second's backward holds every gradient (4P) on top of the first's peak."""
    s = _scenario()
    two = s.step_timeline(2)
    assert two.peak_phase == "backward, output layer (micro-batch 2)"
    assert two.peak == pytest.approx(s.step_timeline().peak + 4 * P, rel=1e-12)


def test_loss_point_holds_the_logits() -> None:
    """At the loss: the b·s·v FP32 logits (512,000 B); in BF16 also their FP32 copy (2 + 4 bytes a value)."""
    point = next(p for p in _scenario().step_timeline().points if p.phase == "output layer and loss")
    assert point.bytes["forward transients"] == 512_000
    bf16 = next(p for p in _scenario(dtype="bfloat16").step_timeline().points if p.phase == "output layer and loss")
    assert bf16.bytes["forward transients"] == 2 * 64 * 1000 * (2 + 4)


def test_recomputation_lowers_the_saved_activations() -> None:
    """Per-layer recomputation at s 512: the forward keeps each layer's input (s·b·h·4 B), not its rows."""
    none, full = _scenario(seq_len=512, attention="eager"), _scenario(seq_len=512, attention="eager", recompute=True)
    forward = next(p for p in full.step_timeline().points if p.phase == "forward, layer 2")
    first = next(p for p in full.step_timeline().points if p.phase == "forward, layer 1")
    assert forward.bytes["saved activations"] - first.bytes["saved activations"] == 512 * 2 * 128 * 4
    assert full.peak_per_device < none.peak_per_device


def test_timeline_refusals() -> None:
    """A pipeline, a sweep, no activations and a bad micro-batch count are refused, naming the field."""
    pipelined = CASES["Gpt3_175BKorthikantiTable3OnA100"](None)
    with pytest.raises(FieldError, match="pipeline_parallel"):
        _ = pipelined.peak_per_device
    with pytest.raises(FieldError, match="activations"):
        _ = _scenario().variant(activations=None).peak_per_device
    with pytest.raises(FieldError, match="not a sweep"):
        _ = _scenario().variant(data_parallel=np.array([1, 2])).peak_per_device
    with pytest.raises(FieldError, match="micro_batches"):
        _scenario().step_timeline(0)


def test_optimizer_implementation_field() -> None:
    """The field defaults to foreach (PyTorch's default for CUDA tensors) and refuses another name."""
    s = _scenario()
    assert s.variant(optimizer_implementation="foreach").optimizer_implementation == "foreach"
    with pytest.raises(FieldError, match="optimizer_implementation"):
        s.variant(optimizer_implementation="sgd")
    assert CASES["Llama3_8BZero3On8H100"](None).optimizer_implementation == "foreach"


def test_a_long_accumulation_is_refused_before_it_is_built() -> None:
    """2 layers: 2·2 + 2 = 6 phases a micro-batch, so at most (262,144 − 2) // 6 = 43,690 micro-batches are listed."""
    s = _scenario()
    assert MOST_POINTS == 262_144
    with pytest.raises(FieldError, match=r"micro_batches: must be at most 43,690 for 2 layers.*got 1,000,000,000"):
        s.step_timeline(10**9)  # 6 billion phases: refused at once, nothing allocated
    with pytest.raises(FieldError, match=r"micro_batches: must be at most 43,690"):
        s.step_timeline(43_691)
    longest = s.step_timeline(43_690)
    assert len(longest.points) == 2 + 6 * 43_690
    assert longest.peak == s.step_timeline(2).peak  # from the second micro-batch on the phases repeat
    assert longest.points[-2].phase == "backward, layer 1 (micro-batch 43690)"


def test_each_rows_sums_are_made_once_per_step_not_once_per_layer(monkeypatch: pytest.MonkeyPatch) -> None:
    """What every layer's backward shares is summed once: as many rebuilt-row sums for 2 layers as for 8.

    Per layer these sums made a 100,000-layer step take 24 s (now about 6 s); the timeline is unchanged.
    """
    from mlsysim_nb.kinds.parallel import step

    calls: list[int] = []
    real = step._rebuilt

    def counted(alive: Any, strategy: str) -> float:
        calls.append(1)
        return real(alive, strategy)

    monkeypatch.setattr(step, "_rebuilt", counted)
    counts = []
    for layer_count in (2, 8):
        calls.clear()
        _scenario(layers=layer_count).step_timeline(3)
        counts.append(len(calls))
    assert counts[0] == counts[1] == len(step._sizes(_scenario()).full)
