"""A workload's architecture: GPT-style defaults, each field's check, from_hf_config and the shipped configurations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mlsysim_nb.errors import FieldError
from mlsysim_nb.records.workloads import Workload, Workloads

_LLAMA = {
    "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
    "num_key_value_heads": 8, "num_hidden_layers": 32, "vocab_size": 128256, "max_position_embeddings": 131072,
    "tie_word_embeddings": False,
}  # fmt: skip

# Exact counts of the released checkpoints (their safetensors indexes' totals).
PUBLISHED = {
    "gpt2-xl": 1_557_611_200,
    "llama-2-7b": 6_738_415_616,
    "llama-3.1-8b": 8_030_261_248,
    "llama-3.1-70b": 70_553_706_496,
    "llama-3.1-405b": 405_853_388_800,
    "mistral-7b": 7_241_732_096,
    "mixtral-8x7b": 46_702_792_704,
    "qwen2.5-7b": 7_615_616_512,
}


def test_a_workload_without_architecture_is_gpt_style() -> None:
    """The reference's workloads keep Korthikanti's layer: 4h GeLU MLP, LayerNorm, dropout 0.1, and their repr."""
    arch = Workloads.GPT2_XL.architecture()
    assert (arch.f, arch.mlp, arch.norm, arch.attention_dropout, arch.hidden_dropout) == (6400, "plain", "layernorm",
                                                                                         0.1, 0.1)  # fmt: skip
    assert repr(Workloads.GPT2_XL) == (
        "Workload('GPT-2 XL (1.5B)', parameters=1.5e+09, layers=48, hidden_dim=1600, heads=25, context_length=1024)"
    )
    assert Workloads.GPT2_XL.active_parameters == Workloads.GPT2_XL.parameters


@pytest.mark.parametrize(
    ("changes", "field", "rule"),
    [
        ({"kv_heads": 5}, "kv_heads", "must divide heads"),
        ({"mlp": "swiglu"}, "mlp", "must be one of 'plain', 'gated'"),
        ({"norm": "batchnorm"}, "norm", "must be one of"),
        ({"activation": "relu"}, "activation", "must be one of"),
        ({"attention_dropout": 1.0}, "attention_dropout", "probability from 0 up to"),
        ({"hidden_dropout": -0.1}, "hidden_dropout", "probability"),
        ({"ffn_dim": 0}, "ffn_dim", "at least 1"),
        ({"vocab_size": 2.5}, "vocab_size", "whole"),
        ({"tied_embeddings": "yes"}, "tied_embeddings", "True or False"),
        ({"experts_per_token": 2}, "experts_per_token", "needs experts"),
        ({"experts": 8, "experts_per_token": 9}, "experts_per_token", "at most experts"),
        ({"shared_experts": 1}, "shared_experts", "needs experts"),
        ({"bias": "some"}, "bias", "must be one of"),
        ({"positions": "alibi"}, "positions", "must be one of"),
        ({"model_type": "falcon"}, "model_type", "must be one of"),
        ({"active_parameters": 2 * 10**9}, "active_parameters", "at most parameters"),
    ],
)
def test_each_architecture_field_is_checked(changes: dict[str, object], field: str, rule: str) -> None:
    """A bad architecture field is refused with the field's name and the rule."""
    base = {"name": "m", "parameters": 10**9, "layers": 2, "hidden_dim": 64, "heads": 8}
    with pytest.raises(FieldError, match=rf"Workload\.{field}: .*{rule}"):
        Workload(**(base | changes))  # type: ignore[arg-type]


def test_head_dim_lets_heads_not_divide_the_width() -> None:
    """With head_dim given, a·d need not equal h; without heads it is refused."""
    w = Workload(name="m", parameters=1, hidden_dim=100, heads=8, head_dim=16)
    assert w.architecture().d == 16
    with pytest.raises(FieldError, match="head_dim: needs heads"):
        Workload(name="m", parameters=1, hidden_dim=100, head_dim=16)


def test_from_hf_config_reads_a_dict_and_a_path(tmp_path: Path) -> None:
    """Llama 3.1 8B's config.json: 8,030,261,248 parameters, grouped-query attention, a 14336-wide SwiGLU MLP."""
    w = Workload.from_hf_config(_LLAMA, name="Llama 3.1 8B")
    assert int(w.parameters.magnitude) == 8_030_261_248
    assert (w.kv_heads, w.ffn_dim, w.mlp, w.norm, w.hidden_dropout) == (8, 14336, "gated", "rmsnorm", 0.0)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(_LLAMA))
    assert Workload.from_hf_config(path, name="Llama 3.1 8B") == w


def test_mixtral_total_and_active_parameters() -> None:
    """Mixtral 8x7B: 46,702,792,704 in all; a token uses 2 of 8 experts: 12,879,925,248 (by hand below)."""
    w = Workloads.configuration("mixtral-8x7b")
    h, f, n, v, kv_d = 4096, 14336, 32, 32000, 8 * 128
    shared = n * (2 * h * h + 2 * h * kv_d + 2 * h + 8 * h) + 2 * v * h + h  # attention, norms, router; embeddings
    assert int(w.parameters.magnitude) == shared + n * 8 * 3 * h * f == 46_702_792_704
    assert int(w.active_parameters.magnitude) == shared + n * 2 * 3 * h * f == 12_879_925_248


@pytest.mark.parametrize(("key", "count"), sorted(PUBLISHED.items()))
def test_shipped_configurations_have_the_published_counts(key: str, count: int) -> None:
    """Each shipped config.json gives its checkpoint's exact parameter count, and names its source."""
    w = Workloads.configuration(key)
    assert int(w.parameters.magnitude) == count
    assert "huggingface.co" in w.source


def test_every_shipped_configuration_is_tested() -> None:
    """No configuration ships without its published count in this test."""
    assert set(Workloads.configurations()) == set(PUBLISHED)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"model_type": "falcon"}, "model_type"),
        ({"attention_bias": True}, "attention_bias"),
        ({"hidden_act": "gelu"}, "hidden_act"),
        ({"pretraining_tp": 2}, "pretraining_tp"),
        ({"quantization_config": {"bits": 4}}, "quantization_config"),
        ({"model_type": "mixtral", "router_jitter_noise": 0.1}, "router_jitter_noise"),
        ({"model_type": "qwen2", "use_sliding_window": True}, "use_sliding_window"),
        ({"hidden_size": None}, "hidden_size"),
        ({"model_type": "gpt2", "embd_pdrop": 0.0}, "embd_pdrop"),
        ({"model_type": "gpt2", "reorder_and_upcast_attn": True}, "reorder_and_upcast_attn"),
        ({"model_type": "gpt2", "activation_function": "relu"}, "activation_function"),
    ],
)
def test_from_hf_config_refuses_by_name(changes: dict[str, object], field: str) -> None:
    """Another family, or an option the layer table does not describe, is refused naming the key."""
    with pytest.raises(FieldError, match=rf"Workload\.from_hf_config\.{field}: "):
        Workload.from_hf_config(_LLAMA | changes)


@pytest.mark.parametrize(
    ("changes", "key", "field"),
    [
        ({"num_key_value_heads": 0}, "num_key_value_heads", "kv_heads"),
        ({"num_hidden_layers": 2.5}, "num_hidden_layers", "layers"),
        ({"model_type": "gpt2", "n_embd": -3}, "n_embd", "hidden_dim"),
        ({"model_type": "gpt2", "n_head": True}, "n_head", "heads"),
    ],
)
def test_from_hf_config_names_the_key_in_the_file(changes: dict[str, object], key: str, field: str) -> None:
    """A shape the workload cannot hold is refused under the config.json key, with the field it becomes.

    ``num_key_value_heads = 0`` used to be read as "absent" and silently became the head count.
    """
    with pytest.raises(FieldError, match=rf"Workload\.from_hf_config\.{key} \(the workload's {field}\): "):
        Workload.from_hf_config(_LLAMA | changes)


def test_from_hf_config_refuses_what_is_not_a_config(tmp_path: Path) -> None:
    """A missing file, a file that is not JSON, and a list are refused as the config argument."""
    with pytest.raises(FieldError, match="config: no such file"):
        Workload.from_hf_config(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(FieldError, match=r"config: .* is not JSON"):
        Workload.from_hf_config(tmp_path / "bad.json")
    with pytest.raises(FieldError, match="config: must be a path"):
        Workload.from_hf_config([1, 2])
    with pytest.raises(FieldError, match="key: must be one of"):
        Workloads.configuration("llama-9")


@pytest.mark.parametrize(
    ("key", "value", "field", "rule"),
    [
        ("hidden_size", 10**400, "hidden_dim", "must be at most 1,048,576, got 1e+400"),
        ("vocab_size", 2**30, "vocab_size", "must be at most 16,777,216, got 1,073,741,824"),
        ("num_hidden_layers", 10**6, "layers", "must be at most 100,000, got 1,000,000"),
    ],
)
def test_a_config_beyond_the_workloads_bounds_is_refused_before_counting(key, value, field, rule) -> None:
    """A shape a workload would refuse is refused by name while reading, not as an absurd parameter count."""
    data = json.loads(_config_file("llama-3.1-8b").read_text(encoding="utf-8"))["config"]
    with pytest.raises(FieldError) as caught:
        Workload.from_hf_config({**data, key: value})
    where = key if key == field else f"{key} (the workload's {field})"
    assert f"Workload.from_hf_config.{where}: {rule}" == str(caught.value)


def _config_file(key: str) -> Path:
    """The shipped configuration file of ``key``."""
    return Path(__file__).resolve().parents[2] / "mlsysim_nb" / "records" / "data" / "models" / f"{key}.json"


def test_sliding_window_is_read_for_mistral_and_mixtral_and_not_for_qwen2() -> None:
    """Mistral 7B's config.json gives a 4096-token window; Mixtral's is null; Qwen2.5's use_sliding_window is false."""
    assert Workloads.configuration("mistral-7b").sliding_window == 4096
    assert Workloads.configuration("mixtral-8x7b").sliding_window is None
    assert Workloads.configuration("qwen2.5-7b").sliding_window is None  # its file says 131072, unused
    assert Workloads.configuration("llama-3.1-8b").sliding_window is None
    # MistralConfig's own default, where a file leaves the key out, is 4096
    assert Workload.from_hf_config({**_LLAMA, "model_type": "mistral"}).sliding_window == 4096
    assert Workload.from_hf_config({**_LLAMA, "model_type": "mistral", "sliding_window": 512}).sliding_window == 512
    assert "sliding_window=4096" in repr(Workloads.configuration("mistral-7b"))


@pytest.mark.parametrize("window", [0, -4, 2.5, 2**25])
def test_a_bad_sliding_window_is_refused_by_name(window: object) -> None:
    """sliding_window is a whole number of tokens from 1 to the longest context a workload accepts."""
    with pytest.raises(FieldError, match="sliding_window"):
        Workload(name="w", parameters=10, sliding_window=window)


@pytest.mark.parametrize("model_type", ["deepseek_v2", "deepseek_v3", "llama"])
def test_latent_attention_is_refused_as_not_modelled(model_type: str) -> None:
    """A config with DeepSeek-V2/V3's kv_lora_rank is refused, naming multi-head latent attention."""
    config = {**_LLAMA, "model_type": model_type, "kv_lora_rank": 512, "q_lora_rank": 1536}
    with pytest.raises(FieldError, match=r"kv_lora_rank.*multi-head latent attention.*not modelled"):
        Workload.from_hf_config(config)
