"""The serving kind's KV cache against the cache Hugging Face transformers fills while generating, to the byte.

Small random models are built from config objects (no weights downloaded) and generate on the CPU; the bytes of
the cache's key and value tensors are compared with ``InferenceMemoryScenario.kv_cache`` for the same batch and
number of cached tokens, and its weights with the model's parameters.
"""

from __future__ import annotations

from typing import Any

import pytest

from mlsysim_nb import Hardware, InferenceMemoryScenario
from mlsysim_nb.records.workloads import Workload

pytestmark = pytest.mark.measure

_SMALL = {"hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 2,
          "intermediate_size": 128, "vocab_size": 100, "max_position_embeddings": 256}  # fmt: skip


def _generate(torch: Any, transformers: Any, cfg: Any, dtype: Any, *, batch: int, prompt: int, new: int,
              **options: Any) -> tuple[Any, Any]:  # fmt: skip
    """The model and the cache after generating ``new`` tokens greedily for ``batch`` prompts of ``prompt`` tokens."""
    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(cfg).to(dtype).eval()
    ids = torch.randint(1, cfg.vocab_size, (batch, prompt))
    out = model.generate(ids, max_new_tokens=new, min_new_tokens=new, do_sample=False, return_dict_in_generate=True,
                         use_cache=True, pad_token_id=0, **options)  # fmt: skip
    return model, out.cache


def _cache_bytes(cache: Any) -> int:
    return sum(layer.keys.nbytes + layer.values.nbytes for layer in cache.layers)


def _scenario(cfg: Any, **fields: Any) -> Any:
    workload = Workload.from_hf_config(cfg.to_dict(), name="small random model")
    return InferenceMemoryScenario(workload=workload, hardware=Hardware.H100, block_size=1, **fields)


@pytest.mark.parametrize(("dtype_name", "width"), [("float32", 4), ("bfloat16", 2)])
def test_the_dynamic_cache_of_a_grouped_query_llama_is_kv_cache(
    dtype_name: str, width: int, torch: Any, transformers: Any
) -> None:
    """4 heads sharing 2 KV heads, 2 layers: after 4 new tokens from 5, the cache holds 8 tokens = b·8·m_kv."""
    cfg = transformers.LlamaConfig(**_SMALL)
    model, cache = _generate(torch, transformers, cfg, getattr(torch, dtype_name), batch=3, prompt=5, new=4)
    assert type(cache).__name__ == "DynamicCache"
    assert tuple(cache.layers[0].keys.shape) == (3, 2, 5 + 4 - 1, 16)  # (b, kv_heads, tokens, head_dim)
    s = _scenario(cfg, batch_size=3, context_length=5 + 4 - 1, kv_bytes_per_value=width,
                  weight_bytes_per_parameter=width)  # fmt: skip
    assert s.kv_cache_per_token.m_as("B") == 2 * 2 * 2 * 16 * width
    assert _cache_bytes(cache) == s.kv_cache.m_as("B")
    assert sum(p.nbytes for p in model.parameters()) == s.weights.m_as("B")


def test_a_static_cache_reserves_the_whole_context(torch: Any, transformers: Any) -> None:
    """A StaticCache of max_cache_len 64 holds 64 token slots per sequence from the start: kv_cache at s = 64."""
    cfg = transformers.LlamaConfig(**_SMALL)
    cache = transformers.StaticCache(config=cfg, max_cache_len=64)
    _, cache = _generate(torch, transformers, cfg, torch.float32, batch=2, prompt=5, new=3, cache=cache)
    assert type(cache).__name__ == "StaticCache"
    assert _cache_bytes(cache) == _scenario(cfg, batch_size=2, context_length=64, kv_bytes_per_value=4).kv_cache.m_as(
        "B"
    )


def test_generate_s_static_cache_is_kv_cache(torch: Any, transformers: Any) -> None:
    """cache_implementation="static": generate sizes it to the tokens it will cache, and it matches kv_cache."""
    cfg = transformers.LlamaConfig(**_SMALL)
    _, cache = _generate(torch, transformers, cfg, torch.float32, batch=2, prompt=6, new=5,
                         cache_implementation="static")  # fmt: skip
    assert type(cache).__name__ == "StaticCache"
    tokens = cache.layers[0].keys.shape[2]
    assert tokens >= 6 + 5 - 1
    assert _cache_bytes(cache) == _scenario(
        cfg, batch_size=2, context_length=tokens, kv_bytes_per_value=4
    ).kv_cache.m_as("B")


def test_a_mixture_of_experts_caches_as_its_attention_does(torch: Any, transformers: Any) -> None:
    """Mixtral (4 experts, top 2): the experts change the weights, not the cache; weights are every expert's."""
    cfg = transformers.MixtralConfig(**_SMALL, num_local_experts=4, num_experts_per_tok=2)
    model, cache = _generate(torch, transformers, cfg, torch.bfloat16, batch=2, prompt=7, new=3)
    s = _scenario(cfg, batch_size=2, context_length=7 + 3 - 1)
    assert _cache_bytes(cache) == s.kv_cache.m_as("B")
    assert sum(p.nbytes for p in model.parameters()) == s.weights.m_as("B")
    assert s.variant(batch_size=1).experts_touched == pytest.approx(2)


def test_a_sliding_window_cache_keeps_one_token_less_than_the_window(torch: Any, transformers: Any) -> None:
    """Mistral with a 4-token window: between steps transformers keeps W − 1 = 3 tokens per layer.

    The scenario costs a decode step, during which the step's own token is in the cache too: min(s, W) = 4
    tokens. Measured after generation (10 tokens seen), the cache holds 3: the scenario's figure less one token
    per sequence, the one the next step appends.
    """
    cfg = transformers.MistralConfig(**_SMALL, sliding_window=4)
    _, cache = _generate(torch, transformers, cfg, torch.float32, batch=3, prompt=5, new=6)
    assert {type(layer).__name__ for layer in cache.layers} == {"DynamicSlidingWindowLayer"}
    s = _scenario(cfg, batch_size=3, context_length=5 + 6 - 1, kv_bytes_per_value=4)
    assert s.kv_tokens == 4
    assert cache.layers[0].keys.shape[2] == 4 - 1
    assert _cache_bytes(cache) == (s.kv_cache - 3 * s.kv_cache_per_token).m_as("B")
