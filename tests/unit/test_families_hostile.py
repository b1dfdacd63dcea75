"""Hostile config.json dicts for the 2025 families (records/hf_families.py): a named refusal each time, no hang."""

from __future__ import annotations

import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlsysim_nb.errors import FieldError
from mlsysim_nb.layers.architecture import Layer
from mlsysim_nb.records.hf_families import _period
from mlsysim_nb.records.workloads import Workload

# Small models of each family: every other key at transformers' default.
_DEEPSEEK = {
    "model_type": "deepseek_v3",
    "hidden_size": 64,
    "intermediate_size": 128,
    "moe_intermediate_size": 32,
    "num_attention_heads": 4,
    "num_hidden_layers": 8,
    "vocab_size": 1000,
    "max_position_embeddings": 4096,
    "q_lora_rank": 32,
    "kv_lora_rank": 16,
    "qk_rope_head_dim": 8,
    "qk_nope_head_dim": 16,
    "v_head_dim": 16,
    "n_routed_experts": 8,
    "num_experts_per_tok": 2,
    "n_shared_experts": 1,
    "first_k_dense_replace": 3,
}
_BAMBA = {
    "model_type": "bamba",
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "num_hidden_layers": 8,
    "vocab_size": 1000,
    "mamba_n_heads": 8,
    "mamba_d_state": 16,
    "attn_layer_indices": [3],
}
_GEMMA3 = {
    "model_type": "gemma3_text",
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "num_hidden_layers": 12,
    "vocab_size": 1000,
    "sliding_window": 512,
    "sliding_window_pattern": 6,
}
_QWEN3_MOE = {
    "model_type": "qwen3_moe",
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "num_hidden_layers": 4,
    "vocab_size": 1000,
    "num_experts": 8,
    "num_experts_per_tok": 2,
    "moe_intermediate_size": 32,
}
_GPT_OSS = {
    "model_type": "gpt_oss",
    "hidden_size": 64,
    "intermediate_size": 64,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "num_hidden_layers": 4,
    "vocab_size": 1000,
    "num_local_experts": 8,
    "num_experts_per_tok": 2,
}


class _Counted:
    """A layer stand-in that counts the comparisons made of it."""

    comparisons = 0

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __eq__(self, other: object) -> bool:
        _Counted.comparisons += 1
        return isinstance(other, _Counted) and self.kind == other.kind

    __hash__ = None  # type: ignore[assignment]


def test_the_pattern_is_found_in_a_number_of_comparisons_linear_in_the_layers() -> None:
    """DeepSeek's 3 dense layers then mixtures has no shorter period: found in at most 3·n comparisons (was n²/2)."""
    a, b = Layer("attention", 4), Layer("attention")
    assert _period([]) == ()
    assert _period([a, b, a, b, a]) == (a, b)  # a truncated last round
    assert _period([a, a, b]) == (a, a, b)
    assert _period([a, b, b, a, b, b, a]) == (a, b, b)
    layers = [_Counted("dense")] * 3 + [_Counted("moe")] * 1997
    _Counted.comparisons = 0
    assert len(_period(layers)) == 2000  # type: ignore[arg-type]
    assert _Counted.comparisons <= 3 * 2000


def test_a_hundred_thousand_layers_are_read_at_once() -> None:
    """100,000 layers (the bound): DeepSeek's pattern is every layer; Bamba's with attention at 3 and 17 is 99,997.

    Bamba: the longest prefix that also ends the layers is the three Mamba-2 layers before the first attention
    (after layer 17 come 99,982 Mamba-2 layers), so the period is 100,000 − 3 = 99,997.
    """
    deepseek = Workload.from_hf_config({**_DEEPSEEK, "num_hidden_layers": 100_000})
    assert len(deepseek.pattern) == 100_000
    assert sum(layer.dense for layer in deepseek.pattern) == 3
    bamba = Workload.from_hf_config({**_BAMBA, "num_hidden_layers": 100_000, "attn_layer_indices": [3, 17]})
    assert len(bamba.pattern) == 99_997
    assert dict(bamba.architecture().layer_counts())[Layer("attention")] == 2


@pytest.mark.parametrize(
    ("config", "key", "value", "field", "rule"),
    [
        (_GEMMA3, "sliding_window", 0, "sliding_window", "at least 1"),
        (_GEMMA3, "sliding_window", -4096, "sliding_window", "at least 1"),
        (_GEMMA3, "sliding_window", 4096.5, "sliding_window", "a JSON integer"),
        (_GEMMA3, "sliding_window", True, "sliding_window", "a JSON integer"),
        (_GEMMA3, "sliding_window", float("nan"), "sliding_window", "a JSON integer"),
        (_GEMMA3, "layer_types", ["full_attention"] * 11, "layer_types", "must list 12 entries"),
        (_GEMMA3, "layer_types", ["chunked_attention"] * 12, "layer_types", "must list 12 entries"),
        (_GEMMA3, "layer_types", ["sliding_attention"] * 10**6, "layer_types", "must list 12 entries"),
        (_GEMMA3, "head_dim", 0, "head_dim", "at least 1"),
        (_GEMMA3, "num_hidden_layers", 4096.5, "num_hidden_layers", "a JSON integer"),
        (_DEEPSEEK, "first_k_dense_replace", 9, "first_k_dense_replace", r"at most num_hidden_layers \(8\)"),
        (_DEEPSEEK, "first_k_dense_replace", -1, "first_k_dense_replace", "at least 0"),
        (_DEEPSEEK, "kv_lora_rank", 0, "kv_lora_rank", "at least 1"),
        (_DEEPSEEK, "kv_lora_rank", 10**12, "kv_lora_rank", "at most 16,777,216"),
        (_DEEPSEEK, "n_shared_experts", -1, "n_shared_experts", "at least 0"),
        (_DEEPSEEK, "num_experts_per_tok", 9, "num_experts_per_tok", r"at most experts \(8\)"),
        (_QWEN3_MOE, "num_experts_per_tok", 9, "num_experts_per_tok", r"at most experts \(8\)"),
        (_GPT_OSS, "num_experts_per_tok", True, "num_experts_per_tok", "a JSON integer"),
        (_BAMBA, "attn_layer_indices", [8], "attn_layer_indices", "from 0 to 7"),
        (_BAMBA, "mamba_n_heads", 3, "mamba_d_head", "mamba_expand x hidden_size"),
    ],
)  # fmt: skip
def test_a_hostile_key_is_refused_by_its_name(config: dict[str, Any], key: str, value: Any, field: str,
                                              rule: str) -> None:  # fmt: skip
    """Zero, negative, fractional, boolean, NaN, too long or too large: the refusal names the config.json key."""
    Workload.from_hf_config(config)  # the unchanged config reads
    with pytest.raises(FieldError, match=rf"Workload\.from_hf_config\.{field}\b.*{rule}"):
        Workload.from_hf_config({**config, key: value})


def test_attention_indices_are_looked_up_once_per_layer() -> None:
    """Every layer attention, listed backwards (100,000 indices): a pattern of one, read at once (a list took minutes).

    The indices' membership was a list scan per layer: n² = 10^10 comparisons at n = 100,000.
    """
    every = list(range(99_999, -1, -1))
    start = time.perf_counter()
    bamba = Workload.from_hf_config({**_BAMBA, "num_hidden_layers": 100_000, "attn_layer_indices": every})
    assert time.perf_counter() - start < 20  # about 0.5 s; the list scan took over a minute
    assert bamba.pattern == (Layer("attention"),)


_BASES = (_DEEPSEEK, {**_DEEPSEEK, "model_type": "deepseek_v2"}, _BAMBA, _GEMMA3, {**_GEMMA3, "model_type": "gemma2"},
          _QWEN3_MOE, {**_QWEN3_MOE, "model_type": "qwen3"}, _GPT_OSS)  # fmt: skip
_KEYS = sorted({key for base in _BASES for key in base} - {"model_type"} | {
    "layer_types", "use_sliding_window", "max_window_layers", "mamba_d_head", "mamba_expand", "mamba_d_conv",
    "mamba_n_groups", "moe_layer_freq", "mlp_only_layers", "decoder_sparse_step", "tie_word_embeddings",
    "attention_bias", "hidden_act", "hidden_activation", "mamba_conv_bias", "mamba_proj_bias", "rope_scaling"})  # fmt: skip
_JSON_SCALAR = st.one_of(
    st.none(), st.booleans(), st.integers(-10, 300), st.integers(-(2**70), 2**70), st.floats(), st.text(max_size=4),
    st.sampled_from(["sliding_attention", "full_attention", "auto", "silu", "gelu_pytorch_tanh"]),
)  # fmt: skip
_JSON = st.recursive(_JSON_SCALAR, lambda inner: st.lists(inner, max_size=6) | st.dictionaries(
    st.text(max_size=4), inner, max_size=3), max_leaves=8)  # fmt: skip


@given(st.sampled_from(_BASES), st.dictionaries(st.sampled_from(_KEYS), _JSON, max_size=3))
def test_any_json_in_a_families_keys_reads_or_is_refused_by_name(base: dict[str, Any], changes: dict[str, Any]) -> None:
    """Up to three keys set to any JSON (NaN, 2**70, text, lists, objects): a workload, or a FieldError, never else."""
    try:
        workload = Workload.from_hf_config({**base, **changes})
    except FieldError as err:
        refusal = str(err)
    else:
        assert workload.parameters.magnitude > 0
        assert workload.architecture().layers == workload.layers
        return
    assert refusal.startswith("Workload.from_hf_config.")
