"""Activations on real architectures: one question, one answer, whatever the attention, accounting or width."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from mlsysim_nb import layers, sweep
from mlsysim_nb.render.numbers import format_bytes
from tests.strategies import architecture_activation_scenarios

_STRATEGIES = ("none", "selective", "full")


@settings(max_examples=40, deadline=None)
@given(architecture_activation_scenarios())
def test_the_scenario_is_the_layer_table(s: Any) -> None:
    """Each strategy's layer figure is the table's; L layers make activations(); the output layer adds the rest."""
    w = s.workload
    for strategy in _STRATEGIES:
        expected = layers.layer_saved_bytes(w.architecture(), seq_len=s.sequence, micro_batch=s.micro_batch,
                                            dtype_bytes=s.precision_bytes, strategy=strategy, attention=s.attention,
                                            implementation=s.implementation)  # fmt: skip
        one = s.layer_activations(strategy).m_as("byte")
        assert one == pytest.approx(expected, rel=1e-12)
        assert s.activations(strategy).m_as("byte") == pytest.approx(w.layers * one, rel=1e-12)
        whole = layers.model_saved_bytes(w.architecture(), layers=w.layers, seq_len=s.sequence,
                                         micro_batch=s.micro_batch, dtype_bytes=s.precision_bytes, strategy=strategy,
                                         attention=s.attention, implementation=s.implementation)  # fmt: skip
        assert s.model_activations(strategy).m_as("byte") == pytest.approx(whole, rel=1e-12)
    if s.attention == "fused" and s.implementation == "megatron":
        assert s.activations("none") == s.activations("selective")  # no scores kept, none to recompute


@settings(max_examples=25, deadline=None)
@given(
    architecture_activation_scenarios(),
    st.lists(st.sampled_from(["eager", "fused"]), min_size=1, max_size=2, unique=True),
    st.lists(st.sampled_from(["megatron", "transformers"]), min_size=1, max_size=2, unique=True),
    st.lists(st.sampled_from([2, 4]), min_size=1, max_size=2, unique=True),
)
def test_sweep_variant_and_repr_agree(
    s: Any, attentions: list[str], implementations: list[str], widths: list[int]
) -> None:
    """sweep() over attention, implementation and precision is, element by element, variant()'s number and repr's."""
    # transformers runs gpt-oss's sinks eagerly only: its fused accounting is refused by name (tests/unit)
    assume(not (s.workload.attention_sinks and "fused" in attentions and "transformers" in implementations))
    if any(layer.mixer != "attention" for layer in s.workload.pattern):  # a hybrid: the paper's accounting only
        implementations = ["megatron"]
    grid = sweep(s, attention=attentions, implementation=implementations, precision_bytes=widths)
    none, out = grid.magnitude("activations_none"), grid.magnitude("output_activations")
    for i, attention in enumerate(attentions):
        for j, implementation in enumerate(implementations):
            for k, width in enumerate(widths):
                one = s.variant(attention=attention, implementation=implementation, precision_bytes=width)
                assert none[i, j, k] == pytest.approx(one.activations("none").m_as("byte"), rel=1e-12)
                assert out[i, j, k] == pytest.approx(one.output_activations.m_as("byte"), rel=1e-12)
                assert f"none {format_bytes(one.activations('none').m_as('byte'))}" in repr(one)


@settings(max_examples=20, deadline=None)
@given(architecture_activation_scenarios(), st.lists(st.integers(1, 2**14), min_size=1, max_size=4, unique=True))
def test_a_sequence_sweep_moves_the_output_layer_too(s: Any, lengths: list[int]) -> None:
    """The output layer, the loss and the shared rows follow seq_len in a sweep as in variant()."""
    lengths = list(dict.fromkeys(min(n, s.workload.context_length) for n in lengths))  # within the context window
    grid = sweep(s, seq_len=lengths)
    out, full = grid.magnitude("output_activations"), grid.magnitude("model_activations_full")
    for i, n in enumerate(lengths):
        one = s.variant(seq_len=n)
        assert out[i] == pytest.approx(one.output_activations.m_as("byte"), rel=1e-12)
        assert full[i] == pytest.approx(one.model_activations("full").m_as("byte"), rel=1e-12)
