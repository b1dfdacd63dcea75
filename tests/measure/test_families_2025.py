"""The oracle for the 2025 families, measured: transformers' own parameter counts and the caches generate() keeps.

The shipped configurations (records/data/models/pending/) are built on the meta device and their counts set
against the published figures; small random models of each family generate on the CPU, and every byte of their
cache (dynamic, sliding-window, latent and hybrid caches) is set against a hand-worked count.
"""

from __future__ import annotations

from typing import Any

import pytest

from mlsysim_nb.records.models import configuration_keys, pending_keys, read_configuration

pytestmark = pytest.mark.measure

#: The meta device's exact count of each shipped configuration, and the figure its report publishes.
_COUNTS = {
    "deepseek-v3": (671_026_404_352, "671B total (DeepSeek-V3 Technical Report, Sec. 1)", 1e9, 671),
    "qwen3-8b": (8_190_735_360, "8.2B (Qwen3 Technical Report, Table 1)", 1e8, 82),
    "qwen3-30b-a3b": (30_532_122_624, "30.5B (Qwen3 Technical Report, Table 2)", 1e8, 305),
    "gpt-oss-20b": (20_914_757_184, "20.91B (gpt-oss model card, Table 1)", 1e7, 2091),
    "gpt-oss-120b": (116_829_156_672, "116.83B (gpt-oss model card, Table 1)", 1e7, 11683),
    "bamba-9b": (9_780_235_392, "9.78B (Bamba 9B's model card)", 1e7, 978),
    "nemotron-h-8b": (8_100_852_736, "8B (Nemotron-H-8B, arXiv:2504.03624)", 1e9, 8),
    # Gemma 3 Technical Report, Table 1: 25,600M non-embedding parameters (the 262,208 x 5,376 embeddings apart)
    "gemma-3-27b": (27_009_346_304, "25,600M non-embedding (Gemma 3 Technical Report, Table 1)", 1e6, 25_600),
}
_GEMMA_EMBEDDINGS = 262_208 * 5_376

_SMALL = {"vocab_size": 97, "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 4,
          "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 256, "bos_token_id": 0,
          "eos_token_id": None, "pad_token_id": 0}  # fmt: skip


def test_every_pending_configuration_is_counted() -> None:
    """The table below covers every shipped configuration of the 2025 families (none waits in pending/ now)."""
    assert set(pending_keys()) <= set(_COUNTS) <= set(pending_keys()) | set(configuration_keys())
    assert set(_COUNTS) == {"deepseek-v3", "qwen3-8b", "qwen3-30b-a3b", "gpt-oss-20b", "gpt-oss-120b", "bamba-9b",
                            "nemotron-h-8b", "gemma-3-27b"}  # fmt: skip


@pytest.mark.parametrize("key", sorted(_COUNTS))
def test_shipped_configurations_count_as_published(key: str, transformers: Any) -> None:
    """The model class transformers builds on the meta device from the shipped config.json: the report's figure."""
    from mlsysim_nb.measure.hf_oracle import meta_parameter_count

    exact, _published, unit, figure = _COUNTS[key]
    count = meta_parameter_count(read_configuration(key)["config"])
    assert count == exact
    shown = count - _GEMMA_EMBEDDINGS if key == "gemma-3-27b" else count
    assert round(shown / unit) == figure


def _cache(family: dict[str, Any], **options: Any) -> Any:
    from mlsysim_nb.measure.hf_oracle import generated_cache

    return generated_cache({**_SMALL, **family}, **{"batch": 2, "prompt": 9, "new_tokens": 5, **options})


def test_qwen3_keeps_keys_and_values_of_its_explicit_head_dimension(transformers: Any) -> None:
    """Qwen3, head_dim 24 (not h/a = 16): 4 layers × K and V × b 2 × 13 tokens × 2 KV heads × 24 × 4 B."""
    family = {"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"], "head_dim": 24}
    cache = _cache(family)
    assert cache.cache_class == "DynamicCache"
    assert cache.tokens == 9 + 5 - 1
    assert cache.total == 4 * 2 * 2 * 13 * 2 * 24 * 4 == 39_936


def test_a_sliding_layer_holds_its_window(transformers: Any) -> None:
    """Gemma 3, five local layers to one global, window 6: a local layer's storage holds 6 tokens, the global all 13.

    transformers shows the last W - 1 = 5 tokens (the new token's key and value join them in the step), as a view
    into a storage of the W tokens it concatenated: the memory held is the window.
    """
    layer_types = ["sliding_attention"] * 5 + ["full_attention"]
    family = {"model_type": "gemma3_text", "architectures": ["Gemma3ForCausalLM"], "head_dim": 24,
              "sliding_window": 6, "num_hidden_layers": 6, "layer_types": layer_types}  # fmt: skip
    cache = _cache(family)
    per_token = 2 * 2 * 24 * 4  # b 2, 2 KV heads, d 24, 4 B: keys (or values) of one token
    assert [cache.layer(i)[0].shape[2] for i in range(6)] == [5, 5, 5, 5, 5, 13]
    assert [cache.layer(i)[0].nbytes // per_token for i in range(6)] == [6, 6, 6, 6, 6, 13]
    assert cache.total == 2 * (5 * 6 + 13) * per_token == 33_024


def test_gpt_oss_alternates_sliding_and_full_caches(transformers: Any) -> None:
    """gpt-oss's alternation, window 6: layers 0 and 2 hold 6 tokens, layers 1 and 3 all 13; sinks hold no cache."""
    family = {"model_type": "gpt_oss", "architectures": ["GptOssForCausalLM"], "head_dim": 24, "sliding_window": 6,
              "num_local_experts": 4, "num_experts_per_tok": 2,
              "layer_types": ["sliding_attention", "full_attention"] * 2}  # fmt: skip
    cache = _cache(family)
    assert cache.total == (6 + 13 + 6 + 13) * 2 * 2 * 2 * 24 * 4 == 29_184


def _latent(**shape: int) -> dict[str, Any]:
    return {"model_type": "deepseek_v3", "architectures": ["DeepseekV3ForCausalLM"], "num_key_value_heads": 4,
            "q_lora_rank": 32, "qk_nope_head_dim": 8, "v_head_dim": 12, "n_routed_experts": 4,
            "num_experts_per_tok": 2, "n_shared_experts": 1, "moe_intermediate_size": 32, "first_k_dense_replace": 1,
            "n_group": 1, "topk_group": 1, "num_hidden_layers": 2, **shape}  # fmt: skip


def test_latent_attention_caches_the_latent_and_the_rotary_key(transformers: Any) -> None:
    """DeepSeek-V3's attention keeps (kv_lora_rank + qk_rope_head_dim) values per token and layer, one head."""
    cache = _cache(_latent(kv_lora_rank=16, qk_rope_head_dim=4), dtype="bfloat16")
    assert [t.shape for t in cache.layer(0)] == [(2, 1, 13, 16), (2, 1, 13, 4)]
    assert cache.total == 2 * 2 * 13 * (16 + 4) * 2 == 2_080


def test_the_published_cache_per_token_figures(transformers: Any) -> None:
    """One layer measured in BF16, times the layers: DeepSeek-V3 70,272 B; Qwen2.5-72B 327,680 B; Llama 3.1 405B 516,096 B.

    DeepSeek's ISCA '25 paper (Table 1) gives the three figures; a cache of decompressed keys and values would
    hold 128 heads × (192 + 128) values per layer instead of 576: 4,997,120 B per token, 71 times as much.
    """
    latent = _cache(_latent(kv_lora_rank=512, qk_rope_head_dim=64, num_hidden_layers=1), batch=1, dtype="bfloat16")
    per_layer = latent.total // latent.tokens
    ds = read_configuration("deepseek-v3")["config"]
    assert per_layer == (ds["kv_lora_rank"] + ds["qk_rope_head_dim"]) * 2 == 1_152
    assert ds["num_hidden_layers"] * per_layer == 70_272
    gqa = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "num_attention_heads": 8,
           "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 1}  # fmt: skip
    grouped = _cache(gqa, batch=1, dtype="bfloat16")
    per_layer = grouped.total // grouped.tokens
    assert per_layer == 2 * 8 * 128 * 2 == 4_096
    assert 80 * per_layer == 327_680  # Qwen2.5-72B: 80 layers of 8 KV heads of 128 (Qwen2.5 Technical Report, Table 1)
    assert read_configuration("llama-3.1-405b")["config"]["num_hidden_layers"] * per_layer == 516_096
    assert 61 * 128 * (192 + 128) * 2 == 4_997_120
    assert 4_997_120 // 70_272 == 71


def _bamba() -> dict[str, Any]:
    return {"model_type": "bamba", "architectures": ["BambaForCausalLM"], "attn_layer_indices": [1],
            "mamba_n_heads": 8, "mamba_d_head": 16, "mamba_d_state": 8, "mamba_n_groups": 1, "mamba_chunk_size": 16,
            "mamba_d_conv": 4, "mamba_expand": 2}  # fmt: skip


def test_nemotron_h_s_one_part_layers_cache_only_in_mamba_and_attention(transformers: Any) -> None:
    """Nemotron-H 'M-*-M': the Mamba-2 layers keep a state, the attention layer K and V, the MLP layers nothing.

    Two states of b × (160 × 4 + 8 × 16 × 8) values, K and V of 13 tokens: 2 × 2 × 1,664 × 4 + 2 × 2 × 13 × 2 × 16 × 4
    = 33,280 B; conv channels: heads × head 128 + 2 × groups 2 × N 8 = 160 (n_groups, not expand, sizes B and C).
    """
    family = {"model_type": "nemotron_h", "architectures": ["NemotronHForCausalLM"], "head_dim": 16,
              "hybrid_override_pattern": "M-*-M", "mamba_num_heads": 8, "mamba_head_dim": 16, "ssm_state_size": 8,
              "n_groups": 2, "conv_kernel": 4, "chunk_size": 16, "num_hidden_layers": 5}  # fmt: skip
    cache = _cache(family)
    assert sorted({t.path.split(".")[0] for t in cache.tensors}) == ["layers[0]", "layers[2]", "layers[4]"]
    assert sorted({t.shape for t in cache.tensors}) == [(2, 2, 13, 16), (2, 8, 16, 8), (2, 160, 4)]
    assert cache.total == 2 * 2 * (160 * 4 + 8 * 16 * 8) * 4 + 2 * 2 * 13 * 2 * 16 * 4 == 33_280


def test_a_hybrid_s_state_space_layers_keep_a_state_constant_in_the_context(transformers: Any) -> None:
    """Bamba: each Mamba-2 layer keeps b × conv_dim × d_conv and b × heads × d_head × N, at any context length.

    conv_dim = expand·h + 2·groups·N = 128 + 16 = 144; the SSM state 8 heads × 16 × 8. Only the attention layer grows.
    """
    short, long = _cache(_bamba(), new_tokens=3), _cache(_bamba(), new_tokens=9)
    mamba = [t for t in short.tensors if "states" in t.path]
    assert sorted({t.shape for t in mamba}) == [(2, 8, 16, 8), (2, 144, 4)]
    state = 3 * 2 * (144 * 4 + 8 * 16 * 8) * 4  # three Mamba layers, b 2, 4 B
    assert sum(t.nbytes for t in mamba) == state == 38_400
    assert [t for t in long.tensors if "states" in t.path] == mamba
    for cache in (short, long):
        assert cache.total - state == 2 * 2 * cache.tokens * 2 * 16 * 4  # the one attention layer's K and V


# -- the layer table against the oracle: from_hf_config's counts, the cache rows' bytes ---------------------------


@pytest.mark.parametrize("key", sorted(_COUNTS))
def test_from_hf_config_counts_what_transformers_builds(key: str, transformers: Any) -> None:
    """The workload read from each shipped config.json has transformers' exact count; to_dict() reads the same."""
    from mlsysim_nb.records.workloads import Workload

    raw = read_configuration(key)["config"]
    workload = Workload.from_hf_config(raw)
    assert int(workload.parameters.magnitude) == _COUNTS[key][0]
    assert Workload.from_hf_config(transformers.AutoConfig.for_model(**raw).to_dict()) == workload


def _random_family(model_type: str, n: int, seed: int) -> dict[str, Any]:
    """A small random configuration of ``model_type`` (n: 1 to 3, seed: its other sizes)."""
    import random

    g = random.Random(seed)  # noqa: S311 - sizes of a test model, not a secret
    kv = g.choice([1, 2])
    base = {"vocab_size": g.randint(50, 120), "hidden_size": 32 * n, "intermediate_size": g.randint(8, 80),
            "num_hidden_layers": g.randint(2, 5), "num_attention_heads": 2 * kv, "num_key_value_heads": kv,
            "max_position_embeddings": 128, "bos_token_id": 0, "eos_token_id": 0, "pad_token_id": 0,
            "model_type": model_type, "architectures": [_CLASSES[model_type]]}  # fmt: skip
    layers = base["num_hidden_layers"]
    extra: dict[str, Any] = {
        "qwen3": {"head_dim": 2 * g.randint(2, 8)},
        "qwen3_moe": {"head_dim": 2 * g.randint(2, 8), "num_experts": 4, "num_experts_per_tok": 2,
                      "moe_intermediate_size": g.randint(4, 40)},
        "gemma2": {"head_dim": 2 * g.randint(2, 8), "sliding_window": 8},
        "gemma3_text": {"head_dim": 2 * g.randint(2, 8), "sliding_window": 8, "sliding_window_pattern": g.randint(2, 4)},
        "gpt_oss": {"head_dim": 2 * g.randint(2, 8), "sliding_window": 8, "num_local_experts": 4,
                    "num_experts_per_tok": 2, "layer_types": [g.choice(["sliding_attention", "full_attention"])
                                                              for _ in range(layers)]},
        "deepseek_v3": {"q_lora_rank": g.choice([None, 24]), "kv_lora_rank": g.randint(4, 32),
                        "qk_rope_head_dim": 2 * g.randint(1, 4), "qk_nope_head_dim": g.randint(2, 16),
                        "v_head_dim": g.randint(2, 16), "n_routed_experts": 4, "num_experts_per_tok": 2,
                        "n_shared_experts": g.randint(0, 2), "moe_intermediate_size": g.randint(4, 40),
                        "first_k_dense_replace": g.randint(0, layers), "n_group": 1, "topk_group": 1,
                        "num_key_value_heads": 2 * kv},
        "bamba": {"attn_layer_indices": sorted(g.sample(range(layers), g.randint(0, 2))), "mamba_n_heads": 4,
                  "mamba_d_head": 16 * n, "mamba_d_state": g.randint(2, 16), "mamba_n_groups": g.choice([1, 2]),
                  "mamba_d_conv": g.randint(2, 4), "mamba_chunk_size": 16},
        "nemotron_h": {"hybrid_override_pattern": "".join(g.choice("M*-") for _ in range(layers)),
                       "mamba_num_heads": 4, "mamba_head_dim": 16 * n, "ssm_state_size": g.randint(2, 16),
                       "n_groups": g.choice([1, 2]), "conv_kernel": g.randint(2, 4), "chunk_size": 16,
                       "head_dim": 2 * g.randint(2, 8)},
    }[model_type]  # fmt: skip
    return base | extra


_CLASSES = {"qwen3": "Qwen3ForCausalLM", "qwen3_moe": "Qwen3MoeForCausalLM", "gemma2": "Gemma2ForCausalLM",
            "gemma3_text": "Gemma3ForCausalLM", "gpt_oss": "GptOssForCausalLM",
            "deepseek_v3": "DeepseekV3ForCausalLM", "bamba": "BambaForCausalLM",
            "nemotron_h": "NemotronHForCausalLM"}  # fmt: skip


def test_random_configurations_count_what_transformers_builds(transformers: Any) -> None:
    """For random small configurations of every 2025 family, from_hf_config's count is the meta device's."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from mlsysim_nb.measure.hf_oracle import meta_parameter_count
    from mlsysim_nb.records.workloads import Workload

    @settings(max_examples=14, deadline=None)
    @given(model_type=st.sampled_from(sorted(_CLASSES)), n=st.integers(1, 3), seed=st.integers(0, 2**16))
    def check(model_type: str, n: int, seed: int) -> None:
        raw = _random_family(model_type, n, seed)
        workload = Workload.from_hf_config(raw)
        assert int(workload.parameters.magnitude) == meta_parameter_count(raw), raw

    check()


@pytest.mark.parametrize("model_type", ["gemma3_text", "gpt_oss", "deepseek_v3", "bamba", "qwen3", "nemotron_h"])
def test_the_layer_table_s_cache_rows_are_generate_s_cache(model_type: str, transformers: Any) -> None:
    """The cache rows summed over the pattern (windows capped, states once) equal generate()'s bytes, FP32."""
    from mlsysim_nb.layers import cache_bytes
    from mlsysim_nb.measure.hf_oracle import generated_cache
    from mlsysim_nb.records.workloads import Workload

    raw = _random_family(model_type, 2, seed=7) | {"num_hidden_layers": 4, "intermediate_size": 32}
    raw |= {"moe_intermediate_size": 32} if "moe_intermediate_size" in raw else {}
    if model_type == "gpt_oss":
        raw["layer_types"] = ["sliding_attention", "full_attention"] * 2
    if model_type == "bamba":
        raw["attn_layer_indices"] = [1]
    if model_type == "nemotron_h":
        raw["hybrid_override_pattern"] = "M-*M"
    measured = generated_cache(raw, batch=2, prompt=11, new_tokens=4)
    arch = Workload.from_hf_config(raw).architecture()
    assert cache_bytes(arch, context=measured.tokens, batch=2, bytes_per_value=4) == measured.total
