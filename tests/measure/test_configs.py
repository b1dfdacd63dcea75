"""Every shipped configuration's parameter count equals the real model's, built on PyTorch's meta device."""

from __future__ import annotations

from typing import Any

import pytest

from mlsysim_nb.errors import FieldError
from mlsysim_nb.records.hf_config import CAUSAL_LM
from mlsysim_nb.records.models import configuration_keys
from mlsysim_nb.records.workload_catalog import Workloads

pytestmark = pytest.mark.measure


@pytest.mark.parametrize("key", configuration_keys())
def test_from_hf_config_counts_what_transformers_builds(key: str, torch: Any, transformers: Any) -> None:
    """AutoModelForCausalLM.from_config on the meta device (no memory, no weights): the same exact count."""
    import json
    from importlib import resources

    text = resources.files("mlsysim_nb.records").joinpath("data", "models", f"{key}.json").read_text("utf-8")
    raw = json.loads(text)["config"]
    cfg = transformers.AutoConfig.for_model(**raw)
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(cfg)
    built = sum(p.numel() for p in model.parameters())
    workload = Workloads.configuration(key)
    assert int(workload.parameters.magnitude) == built
    assert Workloads.configuration(key) == type(workload).from_hf_config(cfg.to_dict(), name=workload.name,
                                                                         source=workload.source)  # fmt: skip


_FAMILIES = {
    "gpt2": lambda d, h, a, kv, f, v, tied: {"n_embd": h, "n_head": a, "n_layer": 2, "n_positions": 64,
                                             "vocab_size": v, "n_inner": f, "tie_word_embeddings": tied},
    "llama": lambda d, h, a, kv, f, v, tied: {"hidden_size": h, "num_attention_heads": a, "num_key_value_heads": kv,
                                              "head_dim": d, "intermediate_size": f, "num_hidden_layers": 2,
                                              "vocab_size": v, "tie_word_embeddings": tied},
}  # fmt: skip


def test_random_shapes_count_what_transformers_builds(torch: Any, transformers: Any) -> None:
    """For random small shapes of every family (GQA, head_dim apart from h/a, tied or not, experts), the same count."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=20, deadline=None)
    @given(
        model_type=st.sampled_from(["gpt2", "llama", "mistral", "qwen2", "mixtral"]),
        shape=st.tuples(st.sampled_from([1, 2, 4]), st.integers(1, 4), st.integers(1, 8), st.integers(1, 200)),
        vocab=st.integers(2, 300),
        flags=st.tuples(st.booleans(), st.booleans()),
        experts=st.tuples(st.integers(1, 4), st.integers(1, 4)),
    )
    def check(
        model_type: str,
        shape: tuple[int, int, int, int],
        vocab: int,
        flags: tuple[bool, bool],
        experts: tuple[int, int],
    ) -> None:
        tied, free_head_dim = flags
        kv, group, half, f = shape
        a, d = kv * group, 2 * half  # transformers wants an even rotary dimension, and h a multiple of a
        h = a * d if model_type == "gpt2" or not free_head_dim else a * (d + 2)
        raw = _FAMILIES["gpt2" if model_type == "gpt2" else "llama"](d, h, a, kv, f, vocab, tied)
        raw |= {"bos_token_id": 0, "eos_token_id": 0, "pad_token_id": None, "architectures": [CAUSAL_LM[model_type]]}
        if model_type == "mixtral":
            raw |= {"num_local_experts": max(experts), "num_experts_per_tok": min(experts)}
        cfg = transformers.AutoConfig.for_model(model_type, **raw)
        with torch.device("meta"):
            model = getattr(transformers, CAUSAL_LM[model_type])(cfg)  # the class architectures names
        built = sum(p.numel() for p in model.parameters())
        assert int(Workloads.GPT2_XL.from_hf_config(cfg.to_dict()).parameters.magnitude) == built

    check()


def test_a_classification_head_is_not_the_output_layer(torch: Any, transformers: Any) -> None:
    """LlamaForSequenceClassification holds num_labels × h in its head, not v × h: its config is refused, not miscounted."""
    raw = {"hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4, "num_hidden_layers": 2,
           "vocab_size": 100, "num_labels": 3, "architectures": ["LlamaForSequenceClassification"]}  # fmt: skip
    cfg = transformers.AutoConfig.for_model("llama", **raw)
    with torch.device("meta"):
        classifier = transformers.LlamaForSequenceClassification(cfg)
        causal = transformers.LlamaForCausalLM(cfg)
    count = sum(p.numel() for p in classifier.parameters())
    # the causal LM's 2·(2·64 + 4·64² + 3·64·128) + 2·100·64 + 64 less its 100 × 64 output layer, plus 3 × 64
    assert count == sum(p.numel() for p in causal.parameters()) - 100 * 64 + 3 * 64 == 88_832
    with pytest.raises(FieldError, match=r"from_hf_config\.architectures: .*only 'LlamaForCausalLM'"):
        Workloads.GPT2_XL.from_hf_config(cfg.to_dict())
