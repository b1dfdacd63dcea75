"""ParallelTrainingScenario: one device reproduces the single-device scenarios; ZeRO and Korthikanti's figures."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mlsysim_nb import (
    ActivationMemoryScenario,
    FieldError,
    Hardware,
    NotApplicableError,
    ParallelTrainingScenario,
    Scenarios,
    TrainingStateFitScenario,
    Workload,
    Workloads,
    sweep,
)
from mlsysim_nb.helpers import calc_activation_memory
from mlsysim_nb.kinds.parallel.cases import CASES as PARALLEL_CASES
from mlsysim_nb.kinds.parallel.physics import EQUATIONS
from mlsysim_nb.physics import KORTHIKANTI_PER_TOKEN_BYTES

MIXED_ADAM = {"bytes_per_value": 2, "optimizer_bytes_per_parameter": 8, "master_bytes_per_parameter": 4}


def _bytes(q: Any) -> float:
    return float(q.m_as("byte"))


def _state(workload: Workload, hardware: str | None = "A100_80GB", **kw: Any) -> TrainingStateFitScenario:
    return TrainingStateFitScenario(
        workload=workload, hardware=None if hardware is None else Hardware[hardware], **{**MIXED_ADAM, **kw}
    )


def _parallel(workload: Workload, micro_batch: int = 1, **layout: Any) -> ParallelTrainingScenario:
    acts = ActivationMemoryScenario(workload=workload, micro_batch=micro_batch, seq_len=2048)
    return ParallelTrainingScenario(state=_state(workload), activations=acts, **layout)


# -- one device, no parallelism: the single-device scenarios exactly ----------------------


@pytest.mark.parametrize("name", ["Gpt2Fp32AdamOnH100", "Gpt2MixedPrecisionAdamOnH100", "Llama3_8BLoraOnH100"])
def test_one_device_state_is_the_state_total(name: str) -> None:
    """With no parallelism the state per device is the single-device total, to the byte."""
    state = getattr(Scenarios, name)
    s = ParallelTrainingScenario(state=state)
    assert _bytes(s.state_per_device) == _bytes(state.total)
    assert _bytes(s.total_per_device) == _bytes(state.total)
    assert s.devices == 1


@pytest.mark.parametrize("recompute", ["none", "selective", "full"])
def test_one_device_activations_are_the_activation_scenario(recompute: str) -> None:
    """With no parallelism the activations per device are activations(recompute), to the byte."""
    acts = Scenarios.Gpt3ActivationsMicrobatch4
    s = ParallelTrainingScenario(state=_state(Workloads.GPT3_175B), activations=acts, recompute=recompute)
    assert _bytes(s.activations_per_device) == _bytes(acts.activations(recompute))


def test_micro_batch_is_the_states_batch_when_both_are_stated() -> None:
    """The micro-batch is activations.micro_batch; stated at the state's batch, the totals agree."""
    acts = ActivationMemoryScenario(workload=Workloads.GPT2_XL, micro_batch=8, seq_len=1024)
    state = TrainingStateFitScenario(
        workload=Workloads.GPT2_XL,
        hardware=Hardware["H100"],
        batch_size=8,
        activations=acts.activations("selective"),
        **MIXED_ADAM,
    )
    s = ParallelTrainingScenario(state=state, activations=acts)
    assert _bytes(s.total_per_device) == _bytes(state.training_total)
    assert s.fits == (state.training_capacity_multiple <= 1)


def test_the_states_stated_activations_are_not_read() -> None:
    """A stated single-device budget (state.activations) is ignored: only the activations scenario counts."""
    base = _state(Workloads.GPT2_XL, hardware="H100", batch_size=4, activations=10**12)
    s = ParallelTrainingScenario(state=base)
    assert _bytes(s.total_per_device) == _bytes(base.total)


def test_without_activations_they_are_not_applicable() -> None:
    """activations=None: the activations per device name what they need; the total is the state."""
    s = ParallelTrainingScenario(state=Scenarios.Gpt2Fp32AdamOnH100, tensor_parallel=5)
    with pytest.raises(NotApplicableError, match="ActivationMemoryScenario"):
        s.activations_per_device
    assert _bytes(s.total_per_device) == 24e9 / 5


# -- ZeRO: Rajbhandari et al. (2020), Figure 1 and Sec. 7 --------------------------------

ZERO_7_5B = Workload(name="ZeRO Figure 1 model", parameters=7_500_000_000)


@pytest.mark.parametrize(
    ("stage", "paper_gb", "exact_bytes"),
    [
        (0, 120, (2 + 2 + 12) * 7.5e9),  # (2 + 2 + K) Ψ
        (1, 31.4, (2 + 2) * 7.5e9 + 12 * 7.5e9 / 64),  # 2Ψ + 2Ψ + KΨ/N_d
        (2, 16.6, 2 * 7.5e9 + (2 + 12) * 7.5e9 / 64),  # 2Ψ + (2 + K)Ψ/N_d
        (3, 1.9, (2 + 2 + 12) * 7.5e9 / 64),  # (2 + 2 + K)Ψ/N_d
    ],
)
def test_zero_figure_1(stage: int, paper_gb: float, exact_bytes: float) -> None:
    """ZeRO Fig. 1: 7.5B parameters, N_d = 64, K = 12 (Adam 8 B + FP32 master 4 B): 120, 31.4, 16.6, 1.9 GB."""
    s = ParallelTrainingScenario(state=_state(ZERO_7_5B), data_parallel=64, zero_stage=stage)
    assert _bytes(s.state_per_device) == exact_bytes
    assert round(_bytes(s.state_per_device) / 1e9, 1) == paper_gb


def test_zero_one_trillion_parameters_on_1024_devices() -> None:
    """ZeRO Sec. 1: 1T parameters at stage 3 over 1024 devices is about 16 GB each (16 B x 1e12 / 1024)."""
    model = Workload(name="1T", parameters=10**12)
    s = ParallelTrainingScenario(state=_state(model), data_parallel=1024, zero_stage=3)
    assert _bytes(s.state_per_device) == 15.625e9
    assert round(_bytes(s.state_per_device) / 1e9) == 16


def test_zero_communication_is_one_and_a_half_times_at_stage_3() -> None:
    """ZeRO Sec. 7: stages 0-2 move an all-reduce's 2Ψ per step, stage 3 moves 3Ψ (ring: (N_d - 1)/N_d of it)."""
    volumes = []
    for stage in range(4):
        s = ParallelTrainingScenario(state=_state(ZERO_7_5B), data_parallel=64, zero_stage=stage)
        volumes.append(_bytes(s.data_parallel_traffic))
    all_reduce = 2 * 63 / 64 * 7.5e9 * 2  # 2Ψ elements of 2 bytes
    assert volumes == [all_reduce, all_reduce, all_reduce, 1.5 * all_reduce]


def test_one_replica_moves_nothing() -> None:
    """With N_d = 1 there is nothing to reduce."""
    s = ParallelTrainingScenario(state=_state(ZERO_7_5B), zero_stage=3)
    assert _bytes(s.data_parallel_traffic) == 0


# -- adapter runs: ZeRO shards only what the adapters train, and stage 3 the weights ------


def _lora_8b() -> TrainingStateFitScenario:
    shape = {"adapter_rank": 16, "adapted_matrices": 2, "adapter_in_dim": 4096, "adapter_out_dim": 4096}
    return TrainingStateFitScenario(workload=Workloads.HYPOTHETICAL_8B, **MIXED_ADAM, **shape)


@pytest.mark.parametrize(
    ("stage", "expected"),
    [
        # adapters: 32 layers x 2 matrices x 16 x (4096 + 4096) = 8,388,608 parameters
        # weights 16e9 + 2 x 8,388,608; gradients 2 x, optimizer 8 x, master 4 x 8,388,608
        (0, 16_016_777_216 + 16_777_216 + 67_108_864 + 33_554_432),
        (1, 16_016_777_216 + 16_777_216 + 67_108_864 // 8 + 33_554_432 // 8),
        (2, 16_016_777_216 + 16_777_216 // 8 + 67_108_864 // 8 + 33_554_432 // 8),
        (3, 16_016_777_216 // 8 + 16_777_216 // 8 + 67_108_864 // 8 + 33_554_432 // 8),
    ],
)
def test_lora_zero_accounting(stage: int, expected: int) -> None:
    """LoRA: stages 1-2 shard only the adapters' state; stage 3 also the weights, frozen base included."""
    s = ParallelTrainingScenario(state=_lora_8b(), data_parallel=8, zero_stage=stage)
    assert _bytes(s.state_per_device) == expected


def test_lora_replica_parts_add_up_to_the_state_total() -> None:
    """In adapter mode the replica's four parts are the frozen weights plus the adapters' state."""
    s = ParallelTrainingScenario(state=_lora_8b())
    assert _bytes(s.replica_gradients) == 16_777_216
    assert _bytes(s.replica_weights) == 16e9 + 16_777_216
    assert _bytes(s.state_per_device) == _bytes(s.state.total)


def test_lora_zero_3_gathers_the_frozen_base() -> None:
    """LoRA at stage 3 moves the whole base twice a step: hundreds of times plain data parallelism."""
    s = ParallelTrainingScenario(state=_lora_8b(), data_parallel=8, zero_stage=3)
    adapters, stored = 8_388_608, 8_000_000_000 + 8_388_608
    assert s.zero_traffic_multiple == (adapters + 2 * stored) / (2 * adapters)
    assert _bytes(s.gradient_allreduce_traffic) == 2 * 7 / 8 * adapters * 2


# -- Korthikanti et al. (2022), arXiv:2205.05198 ------------------------------------------
# Table 3 configurations (workload with heads, hidden, layers; t, p, micro-batch); all at s = 2048, as printed in
# arXiv:2205.05198. The 530B row matches Megatron-LM's own 530B launch script (t 8, p 35, 105 layers, hidden 20480,
# 128 heads, micro-batch 1); the 175B row is GPT-3's shape (Workloads.GPT3_175B, Brown et al. Table 2.1).
TABLE3 = {
    "22B": (Workload(name="22B", parameters=22 * 10**9, layers=48, hidden_dim=6144, heads=64), 8, 1, 4),
    "175B": (Workloads.GPT3_175B, 8, 8, 1),
    "530B": (Workload(name="530B", parameters=530 * 10**9, layers=105, hidden_dim=20480, heads=128), 8, 35, 1),
    "1T": (Workload(name="1T", parameters=10**12, layers=128, hidden_dim=25600, heads=160), 8, 64, 1),
}

# Table 2, per layer, in units of s·b·h bytes (16-bit), written out from the paper for each configuration.
TABLE2_COLUMNS = {
    "no parallelism": ({"tensor_parallel": 1, "recompute": "none"}, lambda t, r: 34 + 5 * r),
    "tensor parallel": ({"recompute": "none"}, lambda t, r: 10 + 24 / t + 5 * r / t),
    "tensor + sequence parallel": ({"recompute": "none", "sequence_parallel": True}, lambda t, r: 34 / t + 5 * r / t),
    "tensor parallel + selective": ({"recompute": "selective"}, lambda t, r: 10 + 24 / t),
    "tensor + sequence parallel + selective": (
        {"recompute": "selective", "sequence_parallel": True},
        lambda t, r: 34 / t,
    ),
    "full recomputation": ({"recompute": "full"}, lambda t, r: 2),
}


@pytest.mark.parametrize("model", sorted(TABLE3))
@pytest.mark.parametrize("column", list(TABLE2_COLUMNS))
def test_korthikanti_table_2(model: str, column: str) -> None:
    """Every column of Korthikanti Table 2 for every Table 3 model at its t and micro-batch."""
    workload, t, p, b = TABLE3[model]
    layout, coefficient = TABLE2_COLUMNS[column]
    s = _parallel(workload, micro_batch=b, **{"tensor_parallel": t, "pipeline_parallel": p, **layout})
    a, h, sequence = workload.heads, workload.hidden_dim, 2048
    assert a is not None and h is not None
    ratio = a * sequence / h  # a·s/h
    expected = sequence * b * h * coefficient(s.tensor_parallel, ratio)
    assert _bytes(s.layer_activations) == pytest.approx(expected, rel=1e-12)


def test_table_2_by_hand_for_gpt3() -> None:
    """GPT-3 175B, t = 8, b = 1: s·b·h = 25,165,824 and 5as/h = 80, so the columns are 114, 23, 14.25, 13, 4.25, 2."""
    workload = Workloads.GPT3_175B
    sbh = 2048 * 1 * 12288
    cases = [
        ({"recompute": "none"}, 114 * sbh, 1),
        ({"recompute": "none"}, 23 * sbh, 8),
        ({"recompute": "none", "sequence_parallel": True}, 14.25 * sbh, 8),
        ({"recompute": "selective"}, 13 * sbh, 8),
        ({"recompute": "selective", "sequence_parallel": True}, 4.25 * sbh, 8),
        ({"recompute": "full"}, 2 * sbh, 8),
    ]
    for layout, expected, t in cases:
        assert _bytes(_parallel(workload, tensor_parallel=t, **layout).layer_activations) == expected


def test_table_3_gpt3_first_stage() -> None:
    """GPT-3 at the paper's layout (Sec. 6: interleaved, m = 3): 4.25 sbh x 12 layers x 8 (1 + 7/24) in flight.

    13.26 GB of activations and 43.75 GB of state: 57.01 GB per device.
    """
    s = PARALLEL_CASES["Gpt3_175BKorthikantiTable3OnA100"](None)
    assert s.interleave == 3
    assert s.stage_layers == 12
    assert s.interleave_factor == pytest.approx(31 / 24)
    assert s.micro_batches_in_flight == pytest.approx(8 * 31 / 24)
    assert _bytes(s.activations_per_device) == pytest.approx(4.25 * 2048 * 12288 * 96 * 31 / 24)
    assert round(s.activations_per_device.m_as("GB"), 2) == 13.26
    assert _bytes(s.state_per_device) == 175e9 * 16 / 64
    assert round(s.total_per_device.m_as("GB"), 1) == 57.0
    assert s.fits


def test_table_3_layout_without_interleaving() -> None:
    """With plain 1F1B (m = 1) the first stage holds exactly p = 8 micro-batches: 10.27 GB, 54.02 GB per device."""
    s = PARALLEL_CASES["Gpt3_175BKorthikantiTable3OnA100"](None).variant(interleave=1)
    assert s.micro_batches_in_flight == 8
    assert _bytes(s.activations_per_device) == 4.25 * 2048 * 12288 * 96


def test_interleaving_factor() -> None:
    """Sec. 4.2.3: m = 2 virtual stages with p = 8 multiply the first stage's memory by 1 + 7/16."""
    s = _parallel(Workloads.GPT3_175B, tensor_parallel=8, pipeline_parallel=8, interleave=2)
    base = _parallel(Workloads.GPT3_175B, tensor_parallel=8, pipeline_parallel=8)
    assert s.interleave_factor == 1 + 7 / 16
    assert _bytes(s.activations_per_device) == _bytes(base.activations_per_device) * (1 + 7 / 16)


@pytest.mark.parametrize(("model", "saving"), [("175B", 70), ("530B", 65)])
def test_korthikanti_selective_saving(model: str, saving: int) -> None:
    """Sec. 5: selective recomputation saves 70 % of the activations for GPT-3 and 65 % for MT-NLG 530B."""
    workload = TABLE3[model][0]
    for layout in ({}, {"tensor_parallel": 8, "sequence_parallel": True}):
        none = _bytes(_parallel(workload, recompute="none", **layout).layer_activations)
        selective = _bytes(_parallel(workload, recompute="selective", **layout).layer_activations)
        assert round(100 * (1 - selective / none)) == saving


@pytest.mark.parametrize("model", sorted(TABLE3))
def test_korthikanti_section_6_1(model: str) -> None:
    """Sec. 6.1: against tensor parallelism, SP and selective each roughly halve (0.45-0.70); together about 5x (4.5-6.5)."""
    workload, t, _, b = TABLE3[model]

    def per_layer(**layout: Any) -> float:
        return _bytes(_parallel(workload, micro_batch=b, tensor_parallel=t, **layout).layer_activations)

    baseline = per_layer(recompute="none")
    sp = per_layer(recompute="none", sequence_parallel=True) / baseline
    selective = per_layer(recompute="selective") / baseline
    both = baseline / per_layer(recompute="selective", sequence_parallel=True)
    assert 0.45 <= sp <= 0.70 and 0.45 <= selective <= 0.70
    assert 4.5 <= both <= 6.5


def test_replicated_bytes_build_on_the_34() -> None:
    """10 of Korthikanti's 34 bytes stay whole under tensor parallelism; the other 24 are split by t."""
    s = _parallel(Workloads.GPT3_175B, tensor_parallel=8)
    assert _bytes(s.replicated_bytes_coefficient) == 10
    assert (
        KORTHIKANTI_PER_TOKEN_BYTES - _bytes(s.replicated_bytes_coefficient)
        == 24
        == _bytes(s.sharded_bytes_coefficient)
    )


def test_tensor_parallel_traffic_is_the_same_with_sequence_parallelism() -> None:
    """Sec. 4.2.2: four all-reduces of s·b·h per layer; SP moves the same volume."""
    s = _parallel(Workloads.GPT3_175B, tensor_parallel=8)
    expected = 8 * 7 / 8 * 2048 * 12288 * 2
    assert _bytes(s.tensor_parallel_traffic_per_layer) == expected
    assert s.variant(sequence_parallel=True).tensor_parallel_traffic_per_layer == s.tensor_parallel_traffic_per_layer


# -- bad input: each refused, naming the field -------------------------------------------

GPT3 = _parallel(Workloads.GPT3_175B)


@pytest.mark.parametrize(
    ("changes", "field", "reason"),
    [
        ({"tensor_parallel": 5}, "tensor_parallel", "must divide the 96 attention heads"),
        ({"tensor_parallel": np.array([1, 2, 5])}, "tensor_parallel", "got 5"),
        ({"pipeline_parallel": 5}, "pipeline_parallel", "must divide the 96 layers"),
        ({"zero_stage": 4}, "zero_stage", "at most 3"),
        ({"zero_stage": -1}, "zero_stage", "at least 0"),
        ({"interleave": 2}, "interleave", "needs pipeline_parallel > 1"),
        ({"pipeline_parallel": 8, "interleave": 5}, "interleave", "layers per stage"),
        ({"data_parallel": 0}, "data_parallel", "at least 1"),
        ({"data_parallel": 2.5}, "data_parallel", "whole number"),
        ({"sequence_parallel": 1}, "sequence_parallel", "one of False, True"),
        (
            {
                "activations": Scenarios.Gpt3ActivationsMicrobatch4.variant(seq_len=2000),
                "tensor_parallel": 32,
                "sequence_parallel": True,
            },
            "sequence_parallel",
            "t must divide the 2000 tokens, got t = 32",
        ),
        ({"data_parallel": True}, "data_parallel", "whole number"),
        ({"sequence_parallel": "yes"}, "sequence_parallel", "one of False, True"),
        ({"recompute": "partial"}, "recompute", "must be one of"),
        ({"recompute": 1}, "recompute", "must be one of"),
        ({"recompute": np.array(["none", "most"])}, "recompute", "'most'"),
        ({"state": Scenarios.Gpt3ActivationsMicrobatch4}, "state", "must be a TrainingStateFitScenario"),
        ({"activations": Scenarios.Gpt2XlBatch32Activations}, "activations", "same workload"),
        ({"activations": 3}, "activations", "ActivationMemoryScenario or None"),
        ({"name": 3}, "name", "must be a string"),
    ],
)
def test_bad_input_names_the_field(changes: dict[str, Any], field: str, reason: str) -> None:
    """Every invalid value or combination is a FieldError naming the field and the reason."""
    with pytest.raises(FieldError, match=reason) as info:
        GPT3.variant(**changes)
    assert info.value.field == field


def test_kv_heads_must_divide_too() -> None:
    """Grouped-query attention: t must divide the key/value heads as well (Llama 3.1 8B has 8)."""
    s = ParallelTrainingScenario(state=_state(Workloads.LLAMA3_8B))
    with pytest.raises(FieldError, match="key/value heads") as info:
        s.variant(tensor_parallel=16)
    assert info.value.field == "tensor_parallel"


def test_pipeline_needs_layers() -> None:
    """A model without layers cannot be split into stages."""
    s = ParallelTrainingScenario(state=_state(ZERO_7_5B))
    with pytest.raises(FieldError, match=r"needs workload\.layers") as info:
        s.variant(pipeline_parallel=2)
    assert info.value.field == "pipeline_parallel"


def test_variant_rejects_unknown_fields_and_leaves_the_original() -> None:
    """variant() names unknown fields; the original scenario does not change."""
    with pytest.raises(TypeError, match="unknown field"):
        GPT3.variant(tensor=8)
    changed = GPT3.variant(tensor_parallel=8)
    assert (GPT3.tensor_parallel, changed.tensor_parallel) == (1, 8)


# -- sweeps: every layout field takes an array ----------------------------------------------


def test_sweep_over_every_layout_field() -> None:
    """sweep() evaluates all of N_d, ZeRO stage, t, SP, p, m and recompute at once, element by element."""
    base = PARALLEL_CASES["Gpt3_175BKorthikantiTable3OnA100"](None)
    grid = sweep(
        base,
        data_parallel=[1, 4],
        zero_stage=[0, 3],
        tensor_parallel=[4, 8],
        sequence_parallel=[False, True],
        pipeline_parallel=[4, 8],
        interleave=[1, 2],
        recompute=["none", "selective", "full"],
    )
    totals = grid.magnitude("total_per_device")
    assert totals.shape == (2, 2, 2, 2, 2, 2, 3)
    for index in [(0, 0, 1, 1, 1, 0, 1), (1, 1, 0, 0, 0, 1, 0), (1, 0, 1, 0, 1, 1, 2)]:
        values = {axis: grid.axes[axis][i].item() for axis, i in zip(grid.axes, index, strict=True)}
        one = base.variant(**values)
        assert totals[index] == pytest.approx(_bytes(one.total_per_device), rel=1e-12)


def test_sweep_fits_against_the_device() -> None:
    """Sweep.fits on total_per_device uses the state's device."""
    base = PARALLEL_CASES["Gpt3_175BKorthikantiTable3OnA100"](None).variant(interleave=1)
    fits = sweep(base, pipeline_parallel=[1, 2, 4, 8]).fits("total_per_device").tolist()
    assert fits == [False, False, False, True]


# -- the record ------------------------------------------------------------------------------


def test_branching_formulas_are_listed() -> None:
    """These many-device formulas choose a case; each case is a restricted expression."""
    branching = sorted(n for n in EQUATIONS.names if EQUATIONS.formula(n).is_branching)
    assert branching == [
        "activations_per_device",
        "expert_gradient_shards",
        "expert_optimizer_shards",
        "expert_weight_shards",
        "gradient_allreduce_traffic",
        "gradient_shards",
        "gradient_width",
        "gradients_per_device",
        "interleave_factor",
        "last_stage_micro_batches",
        "layer_activations",
        "master_weights_per_device",
        "optimizer_shards",
        "optimizer_state_per_device",
        "replica_master_weights",
        "replica_optimizer_state",
        "replica_weights",
        "sequence_shards",
        "stored_parameters",
        "total_per_device",
        "trained_parameters",
        "weight_shards",
        "weights_per_device",
        "zero_traffic_multiple",
    ]


def test_repr_states_the_layout_and_the_verdict() -> None:
    """The one-line repr gives devices, layout, memory per device against the device, and the verdict."""
    s = PARALLEL_CASES["Gpt3_175BKorthikantiTable3OnA100"](None)
    r = repr(s)
    assert r.startswith("<ParallelTrainingScenario: GPT-3 (175B), 16-bit + FP32 master + Adam on 64 × NVIDIA A100")
    assert "N_d=1 (ZeRO 0) × t=8 + SP × p=8 (m=3), selective recomputation: 57.01 GB per device" in r
    assert r.endswith(": the run fits: every device holds its share>")
    bundle = s._repr_mimebundle_()
    assert "layer_activations" in bundle["text/html"]
    assert "layer_activations" in bundle["text/markdown"]


def test_repr_of_a_sweep_names_the_swept_fields() -> None:
    """A scenario holding arrays, here or in its state, says it is a sweep instead of printing arrays."""
    s = PARALLEL_CASES["Llama3_8BZero3On8H100"](None)
    assert repr(s.variant(zero_stage=[0, 3])).endswith("a sweep over zero_stage>")
    state = s.state.variant(bytes_per_value=np.array([2, 4]))
    assert repr(s.variant(state=state)).endswith("a sweep over the state's fields>")


def test_named_cases_build() -> None:
    """Each named case builds and answers."""
    for factory in PARALLEL_CASES.values():
        s = factory(None)
        assert s.name and s.description and s.total_per_device.m_as("byte") > 0


def test_no_hardware_does_not_fit() -> None:
    """Without a device the fit is False and the share is not applicable."""
    s = ParallelTrainingScenario(state=_state(ZERO_7_5B, hardware=None))
    assert s.fits is False
    with pytest.raises(NotApplicableError, match=r"the state has hardware=None"):
        s.device_memory_share


def test_llama3_8b_zero3_by_hand() -> None:
    """Llama 3.1 8B (config.json), ZeRO-3 on 8 H100: P x 16 B / 8 of state; the layers and the output layer."""
    s = PARALLEL_CASES["Llama3_8BZero3On8H100"](None)
    assert _bytes(s.state_per_device) == 8_030_261_248 * 16 / 8 == 16_060_522_496
    # fused attention: 34 + 4a/h = 34.03125 bytes per token and hidden unit, 32 layers of 8192 x 4096
    assert _bytes(s.first_stage_layer_activations) == 32 * 8192 * 4096 * 34.03125 == 36_540_776_448
    # the output layer and loss: the final norm's and the output layer's inputs (2 sbh each), FP32 logits 4 s v
    output = 2 * 2 * 8192 * 4096 + 4 * 8192 * 128_256
    assert output == 4_336_910_336
    assert _bytes(s.activations_per_device) == 36_540_776_448 + output == 40_877_686_784
    assert _bytes(s.total_per_device) == 16_060_522_496 + 40_877_686_784
    assert s.fits
    # stage 0 needs 128.5 GB of state alone: a full fine-tune does not fit one H100 without sharding
    assert not s.variant(zero_stage=0).fits


def test_bamba_9b_full_fine_tune_by_hand() -> None:
    """Bamba 9B on one H100: 9,780,235,392 x 16 B of state; 29 Mamba-2 layers, 3 attention layers, the output layer.

    A Mamba-2 layer (fused kernel, BF16, 4,096 tokens): 4,096 x 2 x (4 x 4,096 + 16,768 + 8,192 + 3 x 14,336) +
    4,096 x 4 = 691,027,968 B; an attention layer 570,949,632 B (tests/unit/test_mamba2.py); the output layer and loss
    2 x 2 x 4,096 x 4,096 + 4 x 4,096 x 128,256. 180.4 GB: no fit. ZeRO-3 on 8 shards the state: 43.5 GB, a fit.
    """
    s = PARALLEL_CASES["Bamba9BFullFineTuneOnH100"](None)
    assert _bytes(s.state_per_device) == 9_780_235_392 * 16 == 156_483_766_272
    mamba = 4096 * 2 * (4 * 4096 + 16768 + 8192 + 3 * 14336) + 4096 * 4
    assert mamba == 691_027_968
    layers = 29 * mamba + 3 * 570_949_632
    assert _bytes(s.first_stage_layer_activations) == layers == 21_752_659_968
    output = 2 * 2 * 4096 * 4096 + 4 * 4096 * 128_256
    assert _bytes(s.total_per_device) == 156_483_766_272 + layers + output == 180_404_881_408
    assert not s.fits
    sharded = PARALLEL_CASES["Bamba9BZero3On8H100"](None)
    assert _bytes(sharded.total_per_device) == 156_483_766_272 / 8 + layers + output == 43_481_585_920
    assert sharded.fits


# -- the output layer: the first and the last pipeline stage ------------------------------------------------------

_LLAMA_8B_OUTPUT = 2 * 2 * 8192 * 4096 + 4 * 8192 * 128_256  # final norm and output layer inputs, FP32 logits


def _llama_8b(recompute: str = "selective", **layout: Any) -> ParallelTrainingScenario:
    return PARALLEL_CASES["Llama3_8BZero3On8H100"](None).variant(recompute=recompute, **layout)


def test_output_layer_counts_on_every_device_without_a_pipeline() -> None:
    """With p = 1 each device holds its layers and the output layer and loss, the activation scenario's whole model."""
    s = _llama_8b()
    assert _bytes(s.activations_per_device) == _bytes(s.first_stage_layer_activations) + _LLAMA_8B_OUTPUT
    assert _bytes(s.activations_per_device) == _bytes(s.activations.model_activations("selective"))
    assert s.last_stage_activations == s.activations_per_device  # one stage is the first and the last


def test_first_stage_binds_with_selective_recomputation() -> None:
    """With p = 8 of 32 layers the first stage holds 8 micro-batches of 4 layers, the last 1 and the logits."""
    s = _llama_8b(pipeline_parallel=8)
    layer = 8192 * 4096 * 34.03125  # fused attention: 34 + 4a/h bytes per token and hidden unit
    assert _bytes(s.first_stage_layer_activations) == 4 * 8 * layer == 36_540_776_448
    assert _bytes(s.first_stage_activations) == 4 * 8 * layer  # Llama's embedding keeps no dropout mask
    assert s.last_stage_micro_batches == 1
    assert _bytes(s.last_stage_activations) == 4 * layer + _LLAMA_8B_OUTPUT
    assert s.activations_per_device == s.first_stage_activations


def test_last_stage_binds_with_full_recomputation() -> None:
    """Full recomputation: 32 layer inputs on the first stage (2.15 GB), 4 plus the logits on the last (4.61 GB)."""
    s = _llama_8b("full", pipeline_parallel=8)
    layer_input = 8192 * 4096 * 2
    assert _bytes(s.first_stage_activations) == 4 * 8 * layer_input == 2_147_483_648
    assert _bytes(s.last_stage_activations) == 4 * layer_input + _LLAMA_8B_OUTPUT == 4_605_345_792
    assert _bytes(s.activations_per_device) == 4_605_345_792
    assert _bytes(s.total_per_device) == _bytes(s.state_per_device) + 4_605_345_792


def test_interleaved_last_stage_holds_m_minus_one_rounds_of_chunks() -> None:
    """With m = 2 and p = 8 the last rank warms up with (m − 1)·p = 8 chunks of 2 layers, then 1 more: 4.5 stages' worth."""
    s = _llama_8b("full", pipeline_parallel=8, interleave=2)
    assert s.last_stage_micro_batches == (1 * 8 + 1) / 2 == 4.5
    assert s.micro_batches_in_flight == 8 * (1 + 7 / 16)  # Korthikanti Sec. 4.2.3 for the first rank
    layer_input = 8192 * 4096 * 2
    assert _bytes(s.last_stage_activations) == 4 * 4.5 * layer_input + _LLAMA_8B_OUTPUT


def test_output_layer_splits_like_the_table_under_tensor_parallelism() -> None:
    """With t = 8 and SP the logits split by t (vocabulary-parallel), the two inputs by SP; as layers.output_saved_bytes."""
    from mlsysim_nb import layers

    s = _llama_8b(tensor_parallel=8, sequence_parallel=True)
    arch = Workloads.configuration("llama-3.1-8b").architecture()
    table = layers.output_saved_bytes(arch, seq_len=8192, micro_batch=1, dtype_bytes=2, tensor_parallel=8,
                                      sequence_parallel=True)  # fmt: skip
    assert table == _LLAMA_8B_OUTPUT / 8
    assert _bytes(s.activations_per_device) == _bytes(s.first_stage_layer_activations) + table


def test_reference_style_workload_leaves_the_output_layer_out_and_says_so() -> None:
    """GPT-3 175B gives no vocabulary: the per-device figure is Table 2's first stage, and the derivation says why."""
    g = PARALLEL_CASES["Gpt3_175BKorthikantiTable3OnA100"](None)
    assert g.activations_per_device == g.first_stage_layer_activations
    with pytest.raises(NotApplicableError, match="vocab_size"):
        _ = g.last_stage_activations
    assert "are not counted, as the workload gives no vocabulary" in g._repr_mimebundle_()["text/markdown"]
    assert "last_stage_activations" not in g._repr_mimebundle_()["text/markdown"]


def test_pipeline_sweep_with_and_without_a_vocabulary() -> None:
    """A sweep over p takes each element's case: the larger stage where p > 1, the whole model where p = 1."""
    s = _llama_8b("full", pipeline_parallel=np.array([1, 8]))
    one, eight = (_bytes(_llama_8b("full", pipeline_parallel=p).activations_per_device) for p in (1, 8))
    assert s.activations_per_device.m_as("byte").tolist() == [one, eight]
    g = PARALLEL_CASES["Gpt3_175BKorthikantiTable3OnA100"](None).variant(pipeline_parallel=np.array([8, 16]),
                                                                          interleave=1)  # fmt: skip
    assert (g.activations_per_device == g.first_stage_layer_activations).all()


# -- changing the model of the run: variant(workload=...) ----------------------------------------------------------


def test_variant_workload_rebuilds_the_state_and_the_activations() -> None:
    """variant(workload=w) is the run built afresh with w: the same numbers, the state and activations of w."""
    s = _llama_8b()
    w = Workloads.configuration("mistral-7b")
    changed = s.variant(workload=w)
    fresh = ParallelTrainingScenario(state=s.state.variant(workload=w), activations=s.activations.variant(workload=w),
                                     recompute="selective", data_parallel=8, zero_stage=3)  # fmt: skip
    assert changed.workload is w and changed.state.workload is w and changed.activations.workload is w
    for name in ("state_per_device", "activations_per_device", "total_per_device", "data_parallel_traffic"):
        assert getattr(changed, name) == getattr(fresh, name), name
    assert _bytes(changed.state_per_device) == w.parameters.m * 16 / 8
    assert changed.variant(workload=Workloads.configuration("llama-3.1-8b")).total_per_device == s.total_per_device


def test_variant_workload_refusals_name_the_workload() -> None:
    """Not a Workload, a state of another model given with it, a layout the new model cannot split: each names it."""
    s = _llama_8b()
    with pytest.raises(FieldError, match=r"ParallelTrainingScenario\.workload: must be a Workload, got str"):
        s.variant(workload="llama")
    with pytest.raises(FieldError, match=r"\.workload: is GPT-2 XL .*the state given with it models Llama 3\.1 8B"):
        s.variant(workload=Workloads.GPT2_XL, state=s.state)
    longer = Workloads.GPT2_XL.variant(context_length=8192)  # the run's 8,192 tokens fit; only the heads do not split
    with pytest.raises(FieldError, match=r"\.workload: .*25 attention heads") as info:
        s.variant(tensor_parallel=2).variant(workload=longer)
    assert info.value.field == "workload"
    with pytest.raises(TypeError, match="unknown field"):
        s.variant(workload=longer, microbatch=2)


def test_the_chart_names_the_device_it_draws() -> None:
    """The memory chart's bar is the binding device: one device at p = 1, else the first or the last stage."""
    assert _llama_8b().memory_chart().bars[0][0] == "one device"
    assert _llama_8b(pipeline_parallel=8).memory_chart().bars[0][0] == "first stage"
    assert _llama_8b("full", pipeline_parallel=8).memory_chart().bars[0][0] == "last stage"
    gpt3 = PARALLEL_CASES["Gpt3_175BKorthikantiTable3OnA100"](None)
    assert gpt3.binding_device() == "first stage"  # Table 2's first stage; no vocabulary for the last


G = Scenarios.Gpt3_175BKorthikantiTable3OnA100  # t = 8 + SP, p = 8, b = 1, s = 2048, h = 12288, a = 96, L = 96


T = Scenarios.Gpt2Fp32AdamOnH100


SBH = 2048 * 1 * 12288  # s·b·h of G: 25,165,824


def _b(q: Any) -> float:
    return float(q.m_as("byte"))


def _ffn(s: ParallelTrainingScenario, f: int, **layout: Any) -> ParallelTrainingScenario:
    assert s.activations is not None
    return s.variant(activations=s.activations.variant(ffn_multiple=f), **layout)


@pytest.mark.parametrize(("f", "coefficient"), [(4, 34), (8, 50), (1, 22), (2, 26)])
def test_single_device_per_token_coefficient_is_18_plus_4f(f: int, coefficient: int) -> None:
    """One device: the per-token bytes are 11 (attention) + 3 + 4f (MLP) + 4 (norms): 34 at f = 4, 50 at f = 8."""
    a = Scenarios.Gpt2XlBatch32Activations.variant(ffn_multiple=f)
    assert a.per_token_bytes_coefficient == coefficient


def test_single_device_activations_at_ffn_8_by_hand() -> None:
    """GPT-2 XL, batch 32 × 1024, f = 8, selective: 48 · 1024 · 32 · 1600 · 50 B = 125.82912 GB."""
    a = Scenarios.Gpt2XlBatch32Activations.variant(ffn_multiple=8)
    assert _b(a.activations("selective")) == 48 * 1024 * 32 * 1600 * 50 == 125_829_120_000
    assert _b(a.activations("full")) == 48 * 1024 * 32 * 1600 * 2  # the layer input does not depend on f


def test_helper_keeps_the_4h_mlp() -> None:
    """calc_activation_memory has no FFN width: it is Korthikanti's 4h MLP, 34 bytes per token."""
    assert _b(calc_activation_memory(1, 1024, 1, 1600, 25, 2, "selective")) == 1024 * 1600 * 34


@pytest.mark.parametrize(
    ("f", "sp", "recompute", "coefficient"),
    [
        (4, True, "selective", 34 / 8),  # sbh·34/t
        (8, True, "selective", 50 / 8),  # sbh·(18 + 4f)/t
        (4, False, "selective", 10 + 24 / 8),  # the 10 replicated, the 24 split
        (8, False, "selective", 10 + 40 / 8),  # the 10 replicated, 8 + 4f split
        (4, False, "none", 10 + 24 / 8 + 80 / 8),  # + 5as/(ht) = 5 · 96 · 2048 / 12288 / 8 = 10
        (8, False, "none", 10 + 40 / 8 + 80 / 8),
        (8, True, "full", 2 / 8),  # full recomputation keeps the layer input, whatever f
    ],
)
def test_parallel_layer_activations_follow_the_ffn_multiple(
    f: int, sp: bool, recompute: str, coefficient: float
) -> None:
    """At t = 8 the MLP's wide tensors are split by t, the 10 replicated bytes (norms, dropout masks, inputs) are not."""
    s = _ffn(G, f, sequence_parallel=sp, recompute=recompute)
    assert _b(s.layer_activations) == pytest.approx(SBH * coefficient, rel=1e-15)


def test_parallel_coefficients_at_ffn_8() -> None:
    """At f = 8, 10 bytes stay replicated, 40 = 8 + 4 · 8 are split by t; at f = 4 the 24 of Table 2."""
    four, eight = _ffn(G, 4), _ffn(G, 8)
    assert (_b(four.replicated_bytes_coefficient), _b(four.sharded_bytes_coefficient)) == (10, 24)
    assert (_b(eight.replicated_bytes_coefficient), _b(eight.sharded_bytes_coefficient)) == (10, 40)
    assert _b(eight.layer_activations) == 157_286_400  # 25,165,824 · 50 / 8


@pytest.mark.parametrize("recompute", ["none", "selective", "full"])
def test_one_device_at_ffn_8_is_the_activation_scenario(recompute: str) -> None:
    """At t = p = 1 and f = 8, the activation scenario's figure for the strategy, to the byte."""
    acts = Scenarios.Gpt3ActivationsMicrobatch4.variant(ffn_multiple=8)
    state = TrainingStateFitScenario(workload=acts.workload, bytes_per_value=2, optimizer_bytes_per_parameter=8)
    one = ParallelTrainingScenario(state=state, activations=acts, recompute=recompute)
    assert _b(one.activations_per_device) == _b(acts.activations(recompute))


def test_tensor_parallel_3_blames_tensor_parallel() -> None:
    """G.variant(tensor_parallel=3): 3 divides the 96 heads and 12288, not the 2048 tokens SP splits."""
    with pytest.raises(
        FieldError, match=r"with sequence parallelism on, t must divide the 2048 tokens, got t = 3"
    ) as e:
        G.variant(tensor_parallel=3)
    assert e.value.field == "tensor_parallel"


def test_heads_rule_comes_before_the_sequence_rule() -> None:
    """A t of 5 divides neither the 96 heads nor the 2048 tokens: the heads rule is the one stated."""
    with pytest.raises(FieldError, match=r"must divide the 96 attention heads of GPT-3 \(175B\), got 5") as e:
        G.variant(tensor_parallel=5)
    assert e.value.field == "tensor_parallel"


def test_tensor_parallel_3_on_32_heads() -> None:
    """Llama 3 8B (32 heads, hidden 4096): t = 3 is refused by the heads rule."""
    state = TrainingStateFitScenario(workload=Workloads.LLAMA3_8B, bytes_per_value=2, optimizer_bytes_per_parameter=8)
    with pytest.raises(FieldError, match=r"tensor_parallel: must divide the 32 attention heads"):
        ParallelTrainingScenario(state=state, tensor_parallel=3)


def test_tensor_parallel_must_divide_the_hidden_width() -> None:
    """A model without a head count: t = 3 cannot split a hidden width of 4096 (nor its f·h MLP)."""
    w = Workload(name="headless", parameters=10**9, layers=8, hidden_dim=4096)
    state = TrainingStateFitScenario(workload=w, bytes_per_value=2, optimizer_bytes_per_parameter=8)
    with pytest.raises(FieldError, match=r"tensor_parallel: must divide the 4096 hidden width of headless, got 3"):
        ParallelTrainingScenario(state=state, tensor_parallel=3)
    assert ParallelTrainingScenario(state=state, tensor_parallel=4).model_parallel == 4


def test_sequence_parallel_needs_t_above_1() -> None:
    """SP with t = 1 is refused: blaming t when t was moved, SP when SP was switched on or given."""
    with pytest.raises(FieldError, match=r"with sequence parallelism on, t must be at least 2") as e:
        G.variant(tensor_parallel=1)
    assert e.value.field == "tensor_parallel"
    plain = G.variant(tensor_parallel=1, sequence_parallel=False)
    with pytest.raises(FieldError, match=r"needs tensor_parallel > 1") as e:
        plain.variant(sequence_parallel=True)
    assert e.value.field == "sequence_parallel"
    with pytest.raises(FieldError, match=r"needs tensor_parallel > 1") as e:
        ParallelTrainingScenario(state=G.state, activations=G.activations, sequence_parallel=True)
    assert e.value.field == "sequence_parallel"


def test_switching_sp_on_blames_sequence_parallel() -> None:
    """A t of 3 without SP is a valid layout; switching SP on is what breaks the sequence rule."""
    three = G.variant(tensor_parallel=3, sequence_parallel=False)
    with pytest.raises(FieldError, match=r"t must divide the 2048 tokens, got t = 3") as e:
        three.variant(sequence_parallel=True)
    assert e.value.field == "sequence_parallel"


def test_a_new_sequence_blames_activations() -> None:
    """A sequence of 2044 tokens cannot be split over t = 8 (2044 / 8 = 255.5): the new activations are blamed."""
    assert G.activations is not None
    with pytest.raises(FieldError, match=r"t must divide the 2044 tokens") as e:
        G.variant(activations=G.activations.variant(seq_len=2044))
    assert e.value.field == "activations"


def test_sweep_names_the_bad_tensor_parallel_element() -> None:
    """A sweep over t refuses the first element SP cannot split the sequence by."""
    with pytest.raises(FieldError, match=r"tensor_parallel: with sequence parallelism on, .* got t = 3"):
        sweep(G, tensor_parallel=[8, 3])


def test_fp32_gradients_give_18_bytes_per_parameter() -> None:
    """GPT-3 175B on t = 8, p = 8 with 4-byte gradients: 2 + 4 + 4 + 8 = 18 B per parameter, 49.21875 GB a device."""
    g4 = G.variant(gradient_bytes_per_value=4)
    assert _b(g4.gradient_width) == 4
    assert _b(g4.state_per_device) == 175e9 * 18 / 64 == 49_218_750_000
    assert _b(g4.state_per_device) * 64 / 175e9 == 18
    assert _b(G.state_per_device) * 64 / 175e9 == 16  # the default: the weights' width


def test_gradient_width_sets_the_traffic() -> None:
    """N_d = 4: the all-reduce moves 2 · 3/4 · 175e9/64 · 4 B = 16.40625 GB; stage 3 then costs 1.0×, not 1.5×."""
    g4 = G.variant(gradient_bytes_per_value=4, data_parallel=4)
    assert _b(g4.gradient_allreduce_traffic) == pytest.approx(16.40625e9, rel=1e-15)
    assert _b(G.variant(data_parallel=4).gradient_allreduce_traffic) == pytest.approx(8.203125e9, rel=1e-15)
    # reduce-scatter 4 B + two all-gathers of 2 B weights = 8 B per parameter, as an all-reduce of 4 B gradients
    assert g4.variant(zero_stage=3).zero_traffic_multiple == 1.0
    assert G.variant(data_parallel=4, zero_stage=3).zero_traffic_multiple == 1.5


def test_gradient_width_in_the_derivation_and_notes() -> None:
    """The derivation shows b_g, stated or the state's, and the notes state the 16-byte convention."""
    assert "b_g = b_val   (the state's value width)" in G.to_text()
    text = G.variant(gradient_bytes_per_value=4).to_text()
    assert "b_g = b_g,given   (stated)" in text
    assert "M_g,rep = N_train · b_g" in text
    notes = dict(G.NOTES)["Assumptions"]
    assert "16 bytes per parameter" in notes and "18 bytes per parameter" in notes
    assert "gradient_bytes_per_value=4" in (ParallelTrainingScenario.__doc__ or "")


@pytest.mark.parametrize(("value", "reason"), [(0, "must be positive"), (-4, "must be positive"), (16, "at most 8")])
def test_bad_gradient_width_names_the_field(value: int, reason: str) -> None:
    """A gradient width that is not a size of one value is refused, naming the field."""
    with pytest.raises(FieldError, match=reason) as e:
        G.variant(gradient_bytes_per_value=value)
    assert e.value.field == "gradient_bytes_per_value"


def test_lora_gradients_at_the_stated_width() -> None:
    """An adapter run: only the adapters carry gradients, at the stated width."""
    lora = Scenarios.Llama3_8BLoraOnH100
    s = ParallelTrainingScenario(state=lora, gradient_bytes_per_value=4)
    assert _b(s.replica_gradients) == lora.adapter_count * 4


@pytest.mark.parametrize("render", ["to_text", "to_markdown", "to_html"])
def test_parallel_without_activations_renders(render: str) -> None:
    """Without activations every rendering works and says what is missing (it raised KeyError: 'seq_given')."""
    s = G.variant(activations=None)
    out = getattr(s, render)().replace("\\_", "_")
    assert "KeyError" not in out and "seq_given" not in out
    assert "needs activations" in out
    steps = {step.formula: step for section in s.explain().sections for step in section.steps}
    assert steps["tensor_parallel_traffic_per_layer"].not_applicable.startswith("not applicable: needs activations")
    assert _b(s.total_per_device) == _b(s.state_per_device) == 43.75e9


@pytest.mark.parametrize("render", ["to_text", "to_markdown", "to_html"])
def test_activations_without_batch_size_render(render: str) -> None:
    """D9: activations without batch_size; the batch-dependent steps say they need batch_size (was KeyError)."""
    s = T.variant(activations="10 GB")
    out = getattr(s, render)().replace("\\_", "_")  # Markdown escapes the underscores
    assert "KeyError" not in out and "at_batch_size" not in out
    assert "needs batch_size" in out
    steps = {step.formula: step for section in s.explain().sections for step in section.steps}
    for name in ("activations_at", "resident_batch_limit"):
        assert "needs batch_size" in steps[name].not_applicable
    assert steps["training_total"].result == 24e9 + 10e9  # magnitudes, in bytes


def test_input_and_output_layers_are_section_4_3() -> None:
    """The input- and output-layer activations are Korthikanti Sec. 4.3 (there is no Sec. 4.4 for them)."""
    texts = [ParallelTrainingScenario.__doc__ or "", *(text for _, text in ParallelTrainingScenario.NOTES)]
    assert not any("Sec. 4.4" in t for t in texts)
    assert any("input- and output-layer activations (Korthikanti Sec. 4.3)" in t for t in texts)


def test_a_new_model_under_the_same_layout_blames_state() -> None:
    """A new model under an unchanged t = 8 layout: its 6 heads cannot be split by 8, and the new state is blamed."""
    six = Workload(name="six heads", parameters=10**9, layers=8, hidden_dim=6 * 64, heads=6)
    state = TrainingStateFitScenario(workload=six, bytes_per_value=2, optimizer_bytes_per_parameter=8)
    eight = G.variant(activations=None, sequence_parallel=False)
    with pytest.raises(
        FieldError, match=r"models six heads, whose 6 attention heads tensor_parallel = 8 does not"
    ) as e:
        eight.variant(state=state)
    assert e.value.field == "state"


def test_inputs_show_the_ffn_multiple() -> None:
    """The FFN multiple now sizes the activations per device, so the inputs table shows it."""
    assert "activations.ffn_multiple     8" in _ffn(G, 8).to_text()
