"""Many-device model, round 2: the FFN width, layouts that cannot exist, the gradient width, derivations without inputs."""

from __future__ import annotations

from typing import Any

import pytest

from mlsysim_nb import (
    FieldError,
    ParallelTrainingScenario,
    Scenarios,
    TrainingStateFitScenario,
    Workload,
    Workloads,
    sweep,
)
from mlsysim_nb.helpers import calc_activation_memory

G = Scenarios.Gpt3_175BKorthikantiTable3OnA100  # t = 8 + SP, p = 8, b = 1, s = 2048, h = 12288, a = 96, L = 96
T = Scenarios.Gpt2Fp32AdamOnH100
SBH = 2048 * 1 * 12288  # s·b·h of G: 25,165,824


def _b(q: Any) -> float:
    return float(q.m_as("byte"))


def _ffn(s: ParallelTrainingScenario, f: int, **layout: Any) -> ParallelTrainingScenario:
    assert s.activations is not None
    return s.variant(activations=s.activations.variant(ffn_multiple=f), **layout)


# -- 1. the feed-forward multiple: 18 + 4f per token -----------------------------------------


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


# -- 2. layouts that cannot exist ---------------------------------------------------------------


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


# -- 3. the gradient width ------------------------------------------------------------------------


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


# -- 4. derivations with an optional input missing ---------------------------------------------------


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


# -- 8. references -----------------------------------------------------------------------------------------


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
