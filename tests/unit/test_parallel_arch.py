"""Many devices on real architectures: the layer table's splits, the named cases, expert parallelism.

Hand-worked numbers: Llama 3.1 70B (h = 8192, a = 64, kv = 8, f = 28672, L = 80) and Mixtral 8x7B
(E = 8, k = 2, h = 4096, f = 14336, L = 32), both at 16 bits by the paper's (Megatron) accounting.
"""

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
    TrainingStateFitScenario,
    Workload,
    Workloads,
    layers,
)
from mlsysim_nb.kinds.parallel.cases import CASES

MIXED_ADAM = {"bytes_per_value": 2, "optimizer_bytes_per_parameter": 8, "master_bytes_per_parameter": 4}
LLAMA_70B = Workloads.configuration("llama-3.1-70b")
MIXTRAL = Workloads.configuration("mixtral-8x7b")
#: Mixtral's routed experts: 32 layers × 8 experts × 3·h·f (gate, up, down projections)
MIXTRAL_EXPERT_PARAMETERS = 32 * 8 * 3 * 4096 * 14336
MIXTRAL_PARAMETERS = 46_702_792_704


def _b(q: Any) -> float:
    return float(q.m_as("byte"))


def _parallel(workload: Workload, seq_len: int, **layout: Any) -> ParallelTrainingScenario:
    state = TrainingStateFitScenario(workload=workload, hardware=Hardware["H100"], **MIXED_ADAM)
    acts = ActivationMemoryScenario(workload=workload, micro_batch=1, seq_len=seq_len)
    return ParallelTrainingScenario(state=state, activations=acts, **layout)


# -- the layer table's splits: Llama 3.1 70B by hand -----------------------------------------------------


def test_llama_70b_coefficients_by_hand() -> None:
    """κ_rep = 8 (two norm inputs, QKV and MLP inputs; no masks), κ_tp = 25.5, 2 B per score.

    κ_tp: Q 2 + K and V 2·2·kv/a = 0.5 + output projection input 2 + three f-wide tensors 3·2·f/h = 21.
    """
    s = _parallel(LLAMA_70B, 8192, tensor_parallel=8, recompute="none")
    assert _b(s.replicated_bytes_coefficient) == 8
    assert _b(s.sharded_bytes_coefficient) == 2 + 2 * 2 * 8 / 64 + 2 + 3 * 2 * 28672 / 8192 == 25.5
    assert _b(s.layer_score_coefficient) == 2 * 64 * 8192 / 8192  # the softmax output: no dropout, no mask


@pytest.mark.parametrize(
    ("sequence_parallel", "recompute", "per_token_hidden"),
    [
        (False, "selective", 8 + 25.5 / 8),
        (True, "selective", 8 / 8 + 25.5 / 8),
        (False, "none", 8 + (25.5 + 128) / 8),
        (True, "none", 8 / 8 + (25.5 + 128) / 8),
        (False, "full", 2),
        (True, "full", 2 / 8),
    ],
)
def test_llama_70b_layer_on_eight_devices(sequence_parallel: bool, recompute: str, per_token_hidden: float) -> None:
    """One layer on one of t = 8 devices at s = 8192, b = 1: s·b·h times the hand-worked bytes, as the table says."""
    s = _parallel(LLAMA_70B, 8192, tensor_parallel=8, sequence_parallel=sequence_parallel, recompute=recompute)
    expected = 8192 * 8192 * per_token_hidden
    assert _b(s.layer_activations) == expected
    table = layers.layer_saved_bytes(
        LLAMA_70B.architecture(), seq_len=8192, micro_batch=1, dtype_bytes=2, strategy=recompute,
        tensor_parallel=8, sequence_parallel=sequence_parallel,
    )  # fmt: skip
    assert table == expected
    assert _b(s.first_stage_layer_activations) == 80 * expected
    # p = 1: the device also holds the output layer and loss: the FP32 logits split by t (vocabulary-parallel),
    # the final norm's and the output layer's inputs split only by sequence parallelism
    inputs = 2 * 2 * 8192 * 8192 / (8 if sequence_parallel else 1)
    assert _b(s.activations_per_device) == 80 * expected + inputs + 4 * 8192 * 128_256 / 8


def test_selective_no_sp_llama_70b_in_bytes() -> None:
    """750,780,416 B per layer without SP and 281,018,368 B with it (s = 8192, t = 8, selective)."""
    off = _parallel(LLAMA_70B, 8192, tensor_parallel=8)
    on = off.variant(sequence_parallel=True)
    assert (_b(off.layer_activations), _b(on.layer_activations)) == (750_780_416, 281_018_368)


_LAYOUTS = [(key, t, sp) for key in ("llama-3.1-8b", "mistral-7b", "qwen2.5-7b", "mixtral-8x7b")
            for t, sp in ((1, False), (2, False), (4, True))]  # fmt: skip
_LAYOUTS += [("gpt2-xl", 1, False), ("gpt2-xl", 5, False)]  # 25 heads: t = 5 divides them


@pytest.mark.parametrize(("key", "t", "sp"), _LAYOUTS)
@pytest.mark.parametrize("recompute", ["none", "selective", "full"])
def test_every_shipped_architecture_follows_the_table(key: str, t: int, sp: bool, recompute: str) -> None:
    """Per device, the chain gives layers.layer_saved_bytes(arch, ..., tensor_parallel=t, sequence_parallel=sp)."""
    w = Workloads.configuration(key)
    s = _parallel(w, 1024, tensor_parallel=t, sequence_parallel=sp, recompute=recompute)
    table = layers.layer_saved_bytes(
        w.architecture(), seq_len=1024, micro_batch=1, dtype_bytes=2, strategy=recompute, tensor_parallel=t,
        sequence_parallel=sp,
    )  # fmt: skip
    assert _b(s.layer_activations) == pytest.approx(table, rel=1e-12)


def test_a_swept_activation_width_reads_the_table_element_by_element() -> None:
    """Activations swept over 2 and 4 bytes give each width's own table figure (a 16-bit mask stays 1 byte)."""
    state = TrainingStateFitScenario(workload=LLAMA_70B, hardware=Hardware["H100"], **MIXED_ADAM)
    swept = ActivationMemoryScenario(workload=LLAMA_70B, micro_batch=1, seq_len=8192, precision_bytes=np.array([2, 4]))
    s = ParallelTrainingScenario(state=state, activations=swept, tensor_parallel=8, sequence_parallel=True)
    for i, width in enumerate((2, 4)):
        table = layers.layer_saved_bytes(LLAMA_70B.architecture(), seq_len=8192, micro_batch=1, dtype_bytes=width,
                                         strategy="selective", tensor_parallel=8, sequence_parallel=True)  # fmt: skip
        assert s.magnitude("layer_activations")[i] == table
    assert s.magnitude("layer_activations")[1] == 2 * s.magnitude("layer_activations")[0]  # no masks, no FP32 rows


def test_reference_workloads_keep_the_gpt_constants() -> None:
    """A reference-style workload keeps Korthikanti's 10, 24 and 5 (and the README's 13.26 and 57.01 GB)."""
    s = CASES["Gpt3_175BKorthikantiTable3OnA100"](None)
    assert (_b(s.replicated_bytes_coefficient), _b(s.sharded_bytes_coefficient)) == (10, 24)
    assert _b(s.variant(recompute="none").layer_score_coefficient) == 5 * 96 * 2048 / 12288
    assert round(s.activations_per_device.m_as("GB"), 2) == 13.26
    assert round(s.total_per_device.m_as("GB"), 2) == 57.01


# -- named cases on real architectures ------------------------------------------------------------------


def test_llama_70b_zero3_on_8_h100_does_not_fit() -> None:
    """70,553,706,496 parameters × 16 B / 8 = 141.1 GB of state per device: neither fits."""
    s = CASES["Llama3_1_70BZero3On8H100"](None)
    assert s.workload.parameters.magnitude == 70_553_706_496
    assert _b(s.state_per_device) == 70_553_706_496 * 16 / 8
    assert _b(s.first_stage_layer_activations) == 80 * 8192 * 8192 * 2  # full recomputation: the layer inputs
    # the output layer and loss: two s·h inputs at 2 B, FP32 logits of the 128,256-word vocabulary
    assert _b(s.activations_per_device) == 80 * 8192 * 8192 * 2 + 2 * 2 * 8192 * 8192 + 4 * 8192 * 128_256
    assert (s.fits, s.training_fits) == (False, False)


def test_llama_70b_zero3_on_64_h100_fits() -> None:
    """State 17.64 GB, layer inputs 10.74 GB and the output layer 4.47 GB per device: the state and the run fit."""
    s = CASES["Llama3_1_70BZero3On64H100"](None)
    assert _b(s.state_per_device) == 70_553_706_496 * 16 / 64
    output = 2 * 2 * 8192 * 8192 + 4 * 8192 * 128_256
    assert output == 4_471_128_064
    assert _b(s.total_per_device) == 70_553_706_496 * 16 / 64 + 80 * 8192 * 8192 * 2 + output
    assert (s.fits, s.training_fits) == (True, True)


def test_mixtral_case_by_hand() -> None:
    """N_d = 32, e = 8, ZeRO 2: the experts' weights split 8 ways, their gradients 8 × 4, optimizer 32 ways."""
    s = CASES["Mixtral8x7BExpertParallel8On32H100"](None)
    rest = MIXTRAL_PARAMETERS - MIXTRAL_EXPERT_PARAMETERS
    assert _b(s.weights_per_device) == pytest.approx(2 * rest + 2 * MIXTRAL_EXPERT_PARAMETERS / 8, rel=1e-12)
    assert _b(s.gradients_per_device) == pytest.approx(2 * rest / 32 + 2 * MIXTRAL_EXPERT_PARAMETERS / 32, rel=1e-12)
    assert _b(s.optimizer_state_per_device) == pytest.approx(8 * MIXTRAL_PARAMETERS / 32, rel=1e-12)
    assert _b(s.master_weights_per_device) == pytest.approx(4 * MIXTRAL_PARAMETERS / 32, rel=1e-12)
    assert (s.fits, s.training_fits) == (True, True)
    assert s.expert_data_parallel == 4


# -- expert parallelism: Mixtral 8x7B by hand -------------------------------------------------------------


def test_mixtral_expert_share() -> None:
    """45,097,156,608 of 46,702,792,704 parameters are the experts' (3·h·f per expert and layer)."""
    s = _parallel(MIXTRAL, 4096, data_parallel=8, expert_parallel=8)
    assert s.magnitude("expert_parameters") == MIXTRAL_EXPERT_PARAMETERS == 45_097_156_608
    assert s.expert_share == pytest.approx(MIXTRAL_EXPERT_PARAMETERS / MIXTRAL_PARAMETERS, rel=1e-15)


@pytest.mark.parametrize(
    ("zero_stage", "weights", "gradients", "optimizer"),
    [
        (0, 1 / 8, 1 / 8, 1 / 8),  # only the experts split, e ways
        (1, 1 / 8, 1 / 8, None),  # the optimizer state sharded N_d = 8 ways, experts included
        (3, None, None, None),  # everything sharded 8 ways
    ],
)
def test_mixtral_state_on_eight_devices(zero_stage: int, weights: Any, gradients: Any, optimizer: Any) -> None:
    """With e = N_d = 8, a part the stage leaves replicated splits only its experts (1/8), a sharded part all of it."""
    s = _parallel(MIXTRAL, 4096, data_parallel=8, expert_parallel=8, zero_stage=zero_stage)
    rest, experts = MIXTRAL_PARAMETERS - MIXTRAL_EXPERT_PARAMETERS, MIXTRAL_EXPERT_PARAMETERS

    def part(width: int, split: Any) -> float:
        return width * (rest + experts * split) if split is not None else width * MIXTRAL_PARAMETERS / 8

    assert _b(s.weights_per_device) == pytest.approx(part(2, weights), rel=1e-12)
    assert _b(s.gradients_per_device) == pytest.approx(part(2, gradients), rel=1e-12)
    assert _b(s.optimizer_state_per_device) == pytest.approx(part(8, optimizer), rel=1e-12)
    assert _b(s.master_weights_per_device) == pytest.approx(part(4, optimizer), rel=1e-12)


def test_mixtral_weights_with_expert_parallelism_in_gigabytes() -> None:
    """ZeRO 1, e = 8: weights 2 · (1,605,636,096 + 45,097,156,608 / 8) = 14.49 GB per device."""
    s = _parallel(MIXTRAL, 4096, data_parallel=8, expert_parallel=8, zero_stage=1)
    assert _b(s.weights_per_device) == pytest.approx(14_485_561_344, rel=1e-12)


def test_mixtral_all_to_all_by_hand() -> None:
    """Four all-to-alls per layer and micro-batch of s·b·k·h values, (e − 1)/e of them leaving the device."""
    s = _parallel(MIXTRAL, 4096, data_parallel=8, expert_parallel=8)
    assert s.routed_tokens_per_device == 4096 * 1 * 2
    assert _b(s.expert_all_to_all_traffic_per_layer) == 4 * 7 / 8 * 4096 * 2 * 4096 * 2 == 234_881_024
    assert _b(s.variant(expert_parallel=1).expert_all_to_all_traffic_per_layer) == 0


def test_mixtral_flops_count_the_active_parameters() -> None:
    """Training FLOPs per token are 6 × the 12,879,925,248 active parameters, not the 46.7 billion stored."""
    s = _parallel(MIXTRAL, 4096, data_parallel=8, expert_parallel=8)
    assert s.training_flops_per_token == 6 * 12_879_925_248


def test_mixtral_routed_activations_do_not_change_with_e() -> None:
    """With balanced routing each device's experts see s·b·k token copies whatever e: activations unchanged."""
    one = _parallel(MIXTRAL, 4096, data_parallel=8)
    eight = one.variant(expert_parallel=8)
    assert eight.activations_per_device == one.activations_per_device
    table = layers.layer_saved_bytes(MIXTRAL.architecture(), seq_len=4096, micro_batch=1, dtype_bytes=2,
                                     strategy="selective")  # fmt: skip
    assert _b(eight.first_stage_layer_activations) == pytest.approx(32 * table, rel=1e-12)


def test_expert_parallel_one_is_todays_scenario() -> None:
    """Expert parallelism of 1 gives the same state as the layout without expert parallelism, for every ZeRO stage."""
    for stage in range(4):
        s = _parallel(MIXTRAL, 4096, data_parallel=8, zero_stage=stage)
        total = MIXTRAL_PARAMETERS * (2 / (8 if stage == 3 else 1) + 2 / (8 if stage >= 2 else 1) + 12 / 8)
        expected = total if stage >= 1 else MIXTRAL_PARAMETERS * 16
        assert _b(s.state_per_device) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("workload", "layout", "field", "words"),
    [
        (MIXTRAL, {"data_parallel": 6, "expert_parallel": 3}, "expert_parallel", "must divide the 8 experts"),
        (MIXTRAL, {"data_parallel": 4, "expert_parallel": 8}, "expert_parallel", "e must divide N_d"),
        (LLAMA_70B, {"data_parallel": 8, "expert_parallel": 2}, "expert_parallel", "dense MLP"),
        (MIXTRAL, {"data_parallel": 8, "expert_parallel": 2, "tensor_parallel": 2}, "expert_parallel", "t = 1"),
    ],
)
def test_bad_expert_layouts_name_the_field_and_the_rule(
    workload: Workload, layout: dict[str, Any], field: str, words: str
) -> None:
    """Each refused layout names expert_parallel and its rule."""
    with pytest.raises(FieldError, match=words) as info:
        _parallel(workload, 4096, **layout)
    assert info.value.field == field


def test_changing_the_replicas_under_expert_parallelism_blames_data_parallel() -> None:
    """variant(data_parallel=4) under e = 8 names data_parallel: the field that changed."""
    s = _parallel(MIXTRAL, 4096, data_parallel=8, expert_parallel=8)
    with pytest.raises(FieldError, match="e must divide N_d") as info:
        s.variant(data_parallel=4)
    assert info.value.field == "data_parallel"


def test_expert_parallelism_refuses_adapters() -> None:
    """Adapter runs with e > 1 are refused by name: how adapters split over experts is not modelled."""
    state = TrainingStateFitScenario(workload=MIXTRAL, hardware=Hardware["H100"], adapter_parameters=10**8,
                                     **MIXED_ADAM)  # fmt: skip
    with pytest.raises(FieldError, match="full fine-tuning") as info:
        ParallelTrainingScenario(state=state, data_parallel=8, expert_parallel=8)
    assert info.value.field == "expert_parallel"


def test_all_to_all_of_a_dense_model_is_not_applicable() -> None:
    """A dense model routes nothing: the all-to-all names the missing mixture of experts."""
    s = _parallel(LLAMA_70B, 8192, data_parallel=8)
    with pytest.raises(NotApplicableError, match="mixture of experts"):
        _ = s.expert_all_to_all_traffic_per_layer


def test_the_derivation_shows_the_expert_split_and_both_parameter_counts() -> None:
    """The Mixtral case's derivation has the experts' section, total and active parameters, and the rule."""
    s = CASES["Mixtral8x7BExpertParallel8On32H100"](None)
    text = s.to_text()
    assert "experts split over e devices" in text
    assert "φ_exp = P_exp / P" in text
    assert "F_tok = 6 · P_active" in text
    assert "workload.active_parameters" in text and "12879925248" in text
    assert "the state counts every expert (total parameters)" in text.lower()


def test_expert_gradients_are_reduced_over_the_replicas_that_hold_them() -> None:
    """T_DP = 2·P·b_g·((1 − φ)·31/32 + φ/8 · 3/4) at N_d = 32, e = 8: 23.13 GB, not the dense 181 GB."""
    s = CASES["Mixtral8x7BExpertParallel8On32H100"](None)
    share = MIXTRAL_EXPERT_PARAMETERS / MIXTRAL_PARAMETERS
    expected = 2 * MIXTRAL_PARAMETERS * 2 * ((1 - share) * 31 / 32 + share / 8 * 3 / 4)
    assert _b(s.gradient_allreduce_traffic) == pytest.approx(expected, rel=1e-12)
    dense = s.variant(expert_parallel=1)
    assert _b(dense.gradient_allreduce_traffic) == pytest.approx(2 * 31 / 32 * MIXTRAL_PARAMETERS * 2, rel=1e-12)


def test_the_expert_control_stops_at_the_experts() -> None:
    """The expert_parallel control's range is 1 to E (8 for Mixtral, 1 for a dense model); dense models get none."""
    m = CASES["Mixtral8x7BExpertParallel8On32H100"](None)
    assert m.field_bounds("expert_parallel") == (1, 8)
    assert "expert_parallel" in [c.name for c in m.controls()]
    dense = CASES["Llama3_1_70BZero3On64H100"](None)
    assert dense.field_bounds("expert_parallel") == (1, 1)
    assert "expert_parallel" not in [c.name for c in dense.controls()]


def _refused(workload: Any, attention: str, implementation: str) -> bool:
    """The transformers accounting under SDPA: refused for gpt-oss, and by the chain for a sliding layer's mask.

    transformers runs gpt-oss's sinks eagerly only; a sliding layer under SDPA keeps a b·s² mask whole on every
    device, which the many-device chain does not split.
    """
    from mlsysim_nb.kinds.parallel.table import layer_coefficients

    if (attention, implementation) != ("fused", "transformers"):
        return False
    if workload.attention_sinks:
        with pytest.raises(ValueError, match="never with PyTorch's SDPA"):
            layers.layer_rows(workload.architecture(), implementation, attention)
        return True
    if any(layer.window for layer, _ in workload.architecture().layer_counts()):
        with pytest.raises(FieldError, match=r"ParallelTrainingScenario\.activations: keeps a sliding-window mask"):
            layer_coefficients(workload, 2, 4, attention, implementation)
        return True
    return False


#: The hybrids whose transformers accounting is refused by name: Bamba's attention layers have no transformers rows
#: yet; Nemotron-H's Mamba-2 path pads its convolution and its scan's chunks (not per token).
_NOT_PER_TOKEN = {
    "bamba-9b": "attention layers have no transformers",
    "nemotron-h-8b": "does not fit the many-device chain",
}


@pytest.mark.parametrize("key", sorted(Workloads.configurations()))
@pytest.mark.parametrize("implementation", ["megatron", "transformers"])
@pytest.mark.parametrize("attention", ["eager", "fused"])
def test_the_coefficients_rebuild_the_table_for_both_accountings(key: str, implementation: str, attention: str) -> None:
    """For each shipped model, accounting and attention, s·b·h·(Σ_SP/t_SP + Σ_TP/t + Σ_score·a·s/(h·t)) is the table's.

    The activation scenario's ``attention`` and ``implementation`` reach the many-device chain through these.
    """
    from mlsysim_nb.kinds.parallel.table import layer_coefficients

    w = Workloads.configuration(key)
    arch = w.architecture()
    if _refused(w, attention, implementation):
        return
    if implementation == "transformers" and key in _NOT_PER_TOKEN:
        with pytest.raises(ValueError, match=_NOT_PER_TOKEN[key]):
            layer_coefficients(w, 2, 4, attention, implementation)
        return
    c = layer_coefficients(w, 2, 4, attention, implementation)
    s, b, h, a = 512, 2, arch.hidden_dim, arch.heads
    for t, sp in [(1, False), (2, False), (arch.kv, True)]:
        if a % t or arch.kv % t:
            continue
        t_sp = t if sp else 1
        for strategy in ("none", "selective"):
            scores = c["score_row_bytes"] * a * s / h if strategy == "none" else 0
            mine = s * b * h * (c["sp_row_bytes"] / t_sp + (c["tp_row_bytes"] + scores) / t)
            table = layers.layer_saved_bytes(
                arch, seq_len=s, micro_batch=b, dtype_bytes=2, strategy=strategy, attention=attention,
                implementation=implementation, tensor_parallel=t, sequence_parallel=sp,
            )  # fmt: skip
            assert mine == pytest.approx(table, rel=1e-12)


@pytest.mark.parametrize("key", sorted(Workloads.configurations()))
@pytest.mark.parametrize("implementation", ["megatron", "transformers"])
@pytest.mark.parametrize("attention", ["eager", "fused"])
def test_one_device_is_the_activation_scenario_on_every_architecture(
    key: str, implementation: str, attention: str
) -> None:
    """N_d = t = p = 1: the layers are activations(recompute), the device model_activations(recompute) (with the output layer)."""
    w = Workloads.configuration(key)
    if _refused(w, attention, implementation):
        return
    state = TrainingStateFitScenario(workload=w, hardware=Hardware["H100"], **MIXED_ADAM)
    if implementation == "transformers" and key in _NOT_PER_TOKEN:
        with pytest.raises(FieldError, match=r"ActivationMemoryScenario\.implementation: 'transformers' "):
            ActivationMemoryScenario(workload=w, micro_batch=2, seq_len=1024, attention=attention,
                                     implementation=implementation).activations("none")  # fmt: skip
        return
    for width in (2, 4):
        acts = ActivationMemoryScenario(workload=w, micro_batch=2, seq_len=1024, attention=attention,
                                        implementation=implementation, precision_bytes=width)  # fmt: skip
        for recompute in ("none", "selective", "full"):
            s = ParallelTrainingScenario(state=state, activations=acts, recompute=recompute)
            layers_only, whole = _b(acts.activations(recompute)), _b(acts.model_activations(recompute))
            assert _b(s.first_stage_layer_activations) == pytest.approx(layers_only, rel=1e-12)
            assert _b(s.activations_per_device) == pytest.approx(whole, rel=1e-12)


def test_latent_attention_splits_by_its_heads_under_megatron() -> None:
    """DeepSeek-V3 (128 heads of latent attention) trains at t = 8; t = 3 is refused naming Megatron-LM's rule.

    Per layer at s = 4096, BF16, fused, the attention block's rows t splits
    (Q and K of 128·192, V and the projection's input of 128·128, the FP32 log-sum-exp) are 1/8 on each device.
    """
    w = Workloads.configuration("deepseek-v3")
    state = TrainingStateFitScenario(workload=w, hardware=Hardware["H200"], **MIXED_ADAM)
    acts = ActivationMemoryScenario(workload=w, seq_len=4096, micro_batch=1, attention="fused")
    assert ParallelTrainingScenario(state=state, activations=acts, tensor_parallel=8).tensor_parallel == 8
    with pytest.raises(FieldError, match=r"tensor_parallel: must divide the 128 attention heads.*Megatron-LM"):
        ParallelTrainingScenario(state=state, activations=acts, tensor_parallel=3)
    arch = w.architecture()
    split = {"q", "k", "v", "lse", "projection_input"}
    rows = tuple(r for r in layers.layer_rows(arch, "megatron", "fused") if r.key in split)
    whole = sum(line.bytes for line in layers.lines(rows, arch.dims(4096, 1), dtype_bytes=2))
    eighth = sum(line.bytes for line in layers.lines(rows, arch.dims(4096, 1), dtype_bytes=2, tensor_parallel=8))
    per_token = 2 * (2 * 128 * 192 + 2 * 128 * 128) + 4 * 128
    assert whole == pytest.approx(4096 * per_token, rel=1e-12)
    assert eighth == pytest.approx(whole / 8, rel=1e-12)
