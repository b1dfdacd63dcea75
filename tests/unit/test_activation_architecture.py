"""ActivationMemoryScenario on real architectures: the coefficients from the layer table, worked by hand.

Llama 3.1 8B (its config.json): L = 32, h = 4096, a = 32, kv = 8, d = 128, a 14,336-wide SwiGLU MLP, RMSNorm,
no dropout, v = 128,256. Per token and hidden unit at 16 bits, the paper's accounting keeps 2 (norm 1 input)
+ 2 (QKV input) + 2 (Q) + 2·(2·kv·d/h = 0.5) (K, V) + 2 (output projection input) + 2 (norm 2 input) + 2 (MLP
input) + 2·3·f/h = 21 (gate, up, product) = 34 bytes; fused attention adds its FP32 log-sum-exp, 4 bytes per
row and head: 4·a·s·b, which is 4a/h = 1/32 per s·b·h.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from mlsysim_nb import ActivationMemoryScenario, FieldError, NotApplicableError, Scenarios, Workload, Workloads, sweep
from mlsysim_nb import layers as table
from mlsysim_nb.render.numbers import format_bytes

S, H, A, V, L = 8192, 4096, 32, 128_256, 32
MIB = 2**20


def _llama(**fields: Any) -> ActivationMemoryScenario:
    base = {"workload": Workloads.configuration("llama-3.1-8b"), "micro_batch": 1, "seq_len": S, "attention": "fused"}
    return ActivationMemoryScenario(**{**base, **fields})


def test_llama_fused_megatron_coefficient_by_hand() -> None:
    """κ_tok = 17 elements x 2 B + 4a/h FP32 bytes = 34.03125; no scores: κ_score = 0; 1089 MiB per layer."""
    s = _llama()
    assert s.magnitude("token_units") == 17
    assert s.magnitude("token_fixed_bytes") == 4 * A / H
    assert s.per_token_bytes_coefficient == 34 + 4 * A / H == 34.03125
    assert s.score_bytes_coefficient == 0
    assert s.layer_activations("none").m_as("byte") == S * H * 34 + 4 * A * S == 1089 * MIB
    assert s.activations("none") == s.activations("selective")  # fused attention keeps no scores to recompute


def test_llama_eager_megatron_keeps_the_softmax_output_only() -> None:
    """No dropout: the scores keep the softmax output alone, 2 B each: κ_score = 2·a·s/h = 128 at s = 8192."""
    s = _llama(attention="eager")
    assert s.per_token_bytes_coefficient == 34
    assert s.score_bytes_coefficient == 2 * A * S / H == 128
    assert s.activations("none").m_as("byte") == L * S * H * (34 + 128)


@pytest.mark.parametrize("attention", ["eager", "fused"])
@pytest.mark.parametrize("implementation", ["megatron", "transformers"])
@pytest.mark.parametrize("strategy", ["none", "selective", "full"])
@pytest.mark.parametrize("precision", [2, 4])
def test_layer_activations_are_the_tables_and_one_layers_share(
    attention: str, implementation: str, strategy: str, precision: int
) -> None:
    """layer_activations(strategy) is layers.layer_saved_bytes(...) and activations(strategy) / L."""
    s = _llama(seq_len=1024, micro_batch=2, attention=attention, implementation=implementation,
               precision_bytes=precision)  # fmt: skip
    arch = s.workload.architecture()
    expected = table.layer_saved_bytes(arch, seq_len=1024, micro_batch=2, dtype_bytes=precision, strategy=strategy,
                                       attention=attention, implementation=implementation)  # fmt: skip
    one = s.layer_activations(strategy).m_as("byte")
    assert one == pytest.approx(expected, rel=1e-12)
    assert s.activations(strategy).m_as("byte") == pytest.approx(L * one, rel=1e-12)


@pytest.mark.parametrize("key", ["llama-3.1-8b", "mixtral-8x7b", "qwen2.5-7b", "gpt2-xl", "mistral-7b"])
@pytest.mark.parametrize("implementation", ["megatron", "transformers"])
def test_the_whole_model_is_the_tables(key: str, implementation: str) -> None:
    """model_activations(strategy) is layers.model_saved_bytes(...): the layers, shared rows once, the output."""
    w = Workloads.configuration(key)
    seq = min(2048, w.context_length or 2048)  # a sequence is at most the model's context (GPT-2 XL's 1,024)
    s = ActivationMemoryScenario(workload=w, micro_batch=1, seq_len=seq, attention="fused",
                                 implementation=implementation)  # fmt: skip
    for strategy in ("none", "selective", "full"):
        expected = table.model_saved_bytes(w.architecture(), layers=w.layers, seq_len=seq, micro_batch=1,
                                           dtype_bytes=2, strategy=strategy, attention="fused",
                                           implementation=implementation)  # fmt: skip
        assert s.model_activations(strategy).m_as("byte") == pytest.approx(expected, rel=1e-12), strategy


def test_the_logits_outweigh_the_checkpointed_layers_not_the_whole_layers() -> None:
    """At s = 8192 the FP32 logits 4sbv = 4.20 GB against 32 x 2sbh = 2.15 GB (full) and 36.5 GB (no recomputation)."""
    s = _llama()
    logits = 4 * S * V
    assert s.output_activations.m_as("byte") == S * (2 * H + 2 * H) + logits  # final norm, output input, logits
    assert logits == pytest.approx(4.2027e9, rel=1e-4)
    assert s.activations("full").m_as("byte") == L * 2 * S * H < logits  # the claim holds here only
    assert s.activations("none").m_as("GB") == pytest.approx(36.540776448, rel=1e-12)
    assert s.activations("none").m_as("byte") > 8 * logits  # without recomputation the layers dwarf the logits
    assert s.model_activations("full").m_as("byte") == pytest.approx(6.0390625 * 2**30, rel=1e-12)


def test_transformers_accounting_against_the_measured_llama_layer() -> None:
    """The Hugging Face accounting of a small LlamaDecoderLayer is what the layer was measured to keep.

    s=12, b=3, h=64, a=4, kv=2, f=96, 16-bit, no dropout: 94,368 B (eager) and 79,968 B (SDPA) saved
    (tests/unit/test_layers.py); the rotary cos and sin (2 x 2sd = 768 B) are the once-per-model part,
    counted in output_activations.
    """
    w = Workload(name="small Llama", parameters=10**6, layers=2, hidden_dim=64, heads=4, kv_heads=2, ffn_dim=96,
                 mlp="gated", activation="silu", norm="rmsnorm", attention_dropout=0, hidden_dropout=0,
                 positions="rotary", bias="none", model_type="llama", vocab_size=100)  # fmt: skip
    rotary = 2 * 12 * 16 * 2
    for attention, measured in (("eager", 94_368), ("fused", 79_968)):
        s = ActivationMemoryScenario(workload=w, micro_batch=3, seq_len=12, attention=attention,
                                     implementation="transformers")  # fmt: skip
        assert s.layer_activations("none").m_as("byte") + rotary == measured


def test_mixtral_coefficient_by_hand() -> None:
    """Mixtral, k = 2 of E = 8 experts, f = 14336: 31.5 elements + FP32 lse 4a/h, router 4E/h, weights 4k/h."""
    s = Scenarios.Mixtral8x7BActivations
    dense = 1 + 1 + 1 + 0.25 + 0.25 + 1 + 1 + 1  # norms, QKV input, Q, K, V, projection input, MLP input
    experts = 2 + 2 * 3 * 14336 / 4096 + 2  # dispatched tokens, three wide tensors, outputs, each for k tokens
    assert s.magnitude("token_units") == dense + experts == 31.5
    assert s.magnitude("token_fixed_bytes") == (4 * 32 + 4 * 8 + 4 * 2) / 4096
    assert s.workload.experts_per_token == 2


def test_reference_style_workloads_keep_the_papers_coefficients() -> None:
    """GPT-style workloads in the paper's accounting: n_tok = (18 + 4f)/2, n_score = 5/2, nothing fixed."""
    s = Scenarios.Gpt2XlBatch32Activations
    assert [s.magnitude(n) for n in ("token_units", "token_fixed_bytes", "score_units", "score_fixed_bytes")] == [
        17,
        0,
        2.5,
        0,
    ]
    assert s.variant(ffn_multiple=8).magnitude("token_units") == 25
    with pytest.raises(NotApplicableError, match="vocab_size"):
        _ = s.output_activations


def test_bad_choices_and_impossible_layers_are_refused_by_field() -> None:
    """A misspelt attention lists the choices; an accounting the table has no rows for names implementation."""
    s = _llama()
    with pytest.raises(FieldError, match=r"attention: must be one of 'eager', 'fused', got 'flash'"):
        s.variant(attention="flash")
    with pytest.raises(FieldError, match=r"implementation: must be one of 'megatron', 'transformers'"):
        s.variant(implementation="hf")
    odd = Workload(name="odd", parameters=10**6, layers=2, hidden_dim=64, heads=4, norm="rmsnorm")
    with pytest.raises(FieldError, match=r"implementation: 'transformers' cannot describe this layer.*no transformers"):
        ActivationMemoryScenario(workload=odd, micro_batch=1, seq_len=8, implementation="transformers")
    with pytest.raises(FieldError, match=r"ffn_multiple: .*ffn_dim = 14,336"):
        s.variant(ffn_multiple=8)
    headless = Workloads.HYPOTHETICAL_8B
    with pytest.raises(FieldError, match=r"workload: the layer table needs the workload's heads"):
        ActivationMemoryScenario(workload=headless, micro_batch=1, seq_len=8, attention="fused")


@pytest.mark.parametrize("name", ["Llama3_1_8BActivations8kMegatron", "Llama3_1_8BActivations8kTransformers"])
def test_the_derivation_shows_every_new_quantity(name: str) -> None:
    """The derivation renders the coefficients' rows, each layer figure, the output layer and the whole model."""
    html = Scenarios[name].to_html(chart=False)
    for label in ("per-token coefficient", "one layer, no recomputation", "one layer, selective recomputation",
                  "one layer, full recomputation", "output layer and loss", "whole model, no recomputation",
                  "whole model, full recomputation", "attention kernel", "accounting"):  # fmt: skip
        assert label in html, label
    assert re.search(r"34\.03|49\.03", html)


def test_variant_sweep_and_repr_agree_on_the_new_fields() -> None:
    """One question, one answer: a sweep over attention and implementation is each variant's number, shown so."""
    s = _llama(attention="eager", seq_len=4096)
    grid = sweep(s, attention=["eager", "fused"], implementation=["megatron", "transformers"])
    values = grid.magnitude("activations_none")
    for i, attention in enumerate(("eager", "fused")):
        for j, implementation in enumerate(("megatron", "transformers")):
            one = s.variant(attention=attention, implementation=implementation)
            assert values[i, j] == pytest.approx(one.activations("none").m_as("byte"), rel=1e-12)
            assert f"none {format_bytes(one.activations('none').m_as('byte'))}" in repr(one)
    out = grid.magnitude("output_activations")
    assert np.all(out[:, 1] > out[:, 0])  # transformers' RMSNorm keeps FP32 copies in the output layer too


@pytest.mark.parametrize("name", ["Llama3_1_8BActivations8kTransformers", "Mixtral8x7BActivations",
                                  "Gpt2XlBatch32Activations"])  # fmt: skip
@pytest.mark.parametrize("strategy", ["none", "selective", "full"])
def test_layer_lines_are_the_tables_rows_and_sum_to_the_layer(name: str, strategy: str) -> None:
    """layer_lines(strategy): one entry per kept row, labelled as the table labels it, summing to the layer."""
    s = Scenarios[name]
    found = s.layer_lines(strategy)
    assert sum(v.m_as("byte") for v in found.values()) == pytest.approx(s.layer_activations(strategy).m_as("byte"))
    if strategy == "full":
        assert list(found) == ["layer input"]
    assert all(v.units == "megabyte" for v in found.values())


def test_layer_lines_name_the_rows_by_label() -> None:
    """Llama 3.1 8B as transformers keeps it: RMSNorm's FP32 input is 4sbh = 128 MiB at s = 8192."""
    found = Scenarios.Llama3_1_8BActivations8kTransformers.layer_lines()
    assert found["RMSNorm 1 input (FP32)"].m_as("byte") == 4 * S * H == 128 * MIB
    assert found["log-sum-exp per row (FP32)"].m_as("byte") == 4 * A * S
    with pytest.raises(ValueError, match="valid strategies"):
        Scenarios.Llama3_1_8BActivations8kTransformers.layer_lines("some")


def test_the_lora_case_reads_its_architecture_and_activations() -> None:
    """LoRA on Llama 3.1 8B from config.json: exact parameters, q and v adapters at rank 16, full recomputation.

    32 layers x 16 x ((4096 + 4096) + (4096 + 8 x 128)) = 6,815,744 adapter parameters; the activations are the
    activation case's whole model under full recomputation: 32 x 2sbh + the output layer (6.039 GiB).
    """
    t = Scenarios.Llama3_1_8BConfigLoraOnH100
    assert t.workload.parameters.m_as("count") == 8_030_261_248
    assert t.adapter_parameters == 32 * 16 * ((4096 + 4096) + (4096 + 8 * 128)) == 6_815_744
    acts = Scenarios.Llama3_1_8BActivations8kMegatron.model_activations("full")
    assert t.activations.m_as("byte") == pytest.approx(acts.m_as("byte"), rel=1e-12)
    assert t.activations.m_as("byte") == pytest.approx(6.0390625 * 2**30, rel=1e-12)
    assert "config.json" in t.description
    assert t.training_fits
