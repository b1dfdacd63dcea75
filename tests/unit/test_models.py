"""The shipped configurations (records/models.py): every file names its hub address; pending ones are refused by key."""

from __future__ import annotations

import re

import pytest

from mlsysim_nb.errors import FieldError
from mlsysim_nb.records.models import configuration_keys, pending_keys, read_configuration
from mlsysim_nb.records.workload_catalog import Workloads

_HUB = re.compile(r"https://huggingface\.co/[\w.-]+/[\w.-]+/blob/main/config\.json")


@pytest.mark.parametrize("key", configuration_keys() + pending_keys())
def test_every_shipped_configuration_names_its_config_json(key: str) -> None:
    """Each file holds a name, a source beginning with its config.json address on the hub, and the config."""
    data = read_configuration(key)
    assert set(data) == {"name", "source", "config"}
    assert _HUB.match(data["source"]), data["source"]
    assert data["config"]["model_type"]


def test_the_2025_models_are_shipped() -> None:
    """DeepSeek-V3, Qwen3 8B and 30B-A3B, Gemma 3 27B, gpt-oss 20B and 120B and the two hybrids are every kind's."""
    assert pending_keys() == ()
    assert {"deepseek-v3", "gemma-3-27b", "gpt-oss-120b", "gpt-oss-20b", "qwen3-30b-a3b", "qwen3-8b", "bamba-9b",
            "nemotron-h-8b"} <= set(configuration_keys())  # fmt: skip
    assert not set(pending_keys()) & set(configuration_keys())


def test_the_published_shapes_are_the_papers() -> None:
    """A few numbers of each config.json, as the model's report states them."""
    ds = read_configuration("deepseek-v3")["config"]
    assert (ds["num_hidden_layers"], ds["hidden_size"], ds["kv_lora_rank"], ds["qk_rope_head_dim"]) == (
        61,
        7168,
        512,
        64,
    )
    assert (ds["n_routed_experts"], ds["num_experts_per_tok"], ds["first_k_dense_replace"]) == (256, 8, 3)
    oss = read_configuration("gpt-oss-120b")["config"]
    assert oss["layer_types"][:2] == ["sliding_attention", "full_attention"] and oss["sliding_window"] == 128
    assert len(oss["layer_types"]) == oss["num_hidden_layers"] == 36
    assert read_configuration("bamba-9b")["config"]["attn_layer_indices"] == [9, 18, 27]


def test_the_pending_configurations_are_read_with_their_exact_counts() -> None:
    """Workloads.configuration reads them; the counts are transformers' meta-device counts (tests/measure)."""
    assert int(Workloads.configuration("deepseek-v3").parameters.magnitude) == 671_026_404_352
    assert int(Workloads.configuration("deepseek-v3").active_parameters.magnitude) == 37_552_282_624
    assert int(Workloads.configuration("gpt-oss-120b").parameters.magnitude) == 116_829_156_672
    assert not set(pending_keys()) & set(Workloads.configurations())
    assert {"bamba-9b", "nemotron-h-8b"} <= set(Workloads.configurations())
    with pytest.raises(FieldError, match=r"configuration\.key: must be one of .*bamba-9b"):
        read_configuration("llama-5")
