"""A workload's architecture: GPT-style defaults, each field's check, from_hf_config and the shipped configurations."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from mlsysim_nb.errors import FieldError
from mlsysim_nb.records.workload_catalog import Workloads
from mlsysim_nb.records.workloads import Workload

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
    # the 2025 families: transformers' meta-device counts (tests/measure/test_families_2025.py)
    "deepseek-v3": 671_026_404_352,
    "qwen3-8b": 8_190_735_360,
    "qwen3-30b-a3b": 30_532_122_624,
    "gemma-3-27b": 27_009_346_304,
    "gpt-oss-20b": 20_914_757_184,
    "gpt-oss-120b": 116_829_156_672,
    # the hybrids: transformers' meta-device counts (tests/measure/test_families_2025.py), the model cards' 9.78B and 8B
    "bamba-9b": 9_780_235_392,
    "nemotron-h-8b": 8_100_852_736,
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
        ({"model_type": "qwen2", "use_sliding_window": True, "sliding_window": None}, "sliding_window"),
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
    with pytest.raises(FieldError, match=r"config: .* cannot be read \(No such file"):
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


@pytest.mark.parametrize("model_type", ["deepseek_v2", "deepseek_v3"])
def test_latent_attention_is_read_into_its_mixer(model_type: str) -> None:
    """A config with DeepSeek-V2/V3's kv_lora_rank is read as latent attention layers, its sizes as the mixer's."""
    config = {**_LLAMA, "model_type": model_type, "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64,
              "qk_nope_head_dim": 128, "v_head_dim": 128, "n_routed_experts": 8, "num_experts_per_tok": 2,
              "n_shared_experts": 1, "moe_intermediate_size": 256, "first_k_dense_replace": 1}  # fmt: skip
    workload = Workload.from_hf_config(config)
    assert {layer.mixer for layer in workload.pattern} == {"latent_attention"}
    assert workload.pattern[0].dense
    assert dict(workload.mixer_shapes) == {"r_q": 1536, "r_kv": 512, "d_rope": 64, "d_nope": 128, "d_v": 128}


# -- a derived default is derived again (active_parameters from parameters) --------------------------------------


def test_replace_derives_active_parameters_again() -> None:
    """dataclasses.replace of a dense model's parameters moves its active parameters (it kept GPT-2 XL's 1.5 B)."""
    import dataclasses

    from mlsysim_nb.units import Q_

    w = Workloads.GPT2_XL
    assert dataclasses.replace(w, parameters=Q_(3, "Gparam")).active_parameters.magnitude == 3_000_000_000
    # 1 B < 1.5 B used to be refused as "active_parameters must be at most parameters", a field never given
    assert dataclasses.replace(w, parameters=Q_(1, "Gparam")).active_parameters.magnitude == 1_000_000_000
    moe = Workloads.configuration("mixtral-8x7b")
    assert dataclasses.replace(moe, name="m").active_parameters == moe.active_parameters  # a given value stays


def test_variant_validates_and_derives_again() -> None:
    """variant() checks the changes, derives active_parameters again, and keeps a stated one; a typo is a TypeError."""
    w = Workloads.GPT2_XL.variant(parameters=10**9)
    assert w.active_parameters.magnitude == 10**9
    assert Workloads.GPT2_XL.parameters.magnitude == 1_500_000_000  # untouched
    moe = Workloads.configuration("mixtral-8x7b")
    assert moe.variant(name="m").active_parameters.magnitude == 12_879_925_248
    dense = Workloads.configuration("llama-3.1-8b")  # from a config.json: its active count is derived, not stated
    assert dense.variant(parameters=8 * 10**9).active_parameters.magnitude == 8 * 10**9
    with pytest.raises(FieldError, match=r"Workload\.parameters: must be at least 1"):
        Workloads.GPT2_XL.variant(parameters=0)
    with pytest.raises(FieldError, match=r"Workload\.active_parameters: must be at most parameters"):
        moe.variant(parameters=10**9)
    with pytest.raises(TypeError, match="no field 'layer'"):
        Workloads.GPT2_XL.variant(layer=4)


def test_variant_equals_a_fresh_workload_of_the_merged_given_fields() -> None:
    """For any valid workload and change, w.variant(**c) is Workload(**given, **c): no stale derived field."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    def workloads(draw: st.DrawFn) -> dict[str, object]:
        if draw(st.booleans()):  # a real model's fields, as its config.json gives them
            return Workloads.configuration(draw(st.sampled_from(sorted(Workloads.configurations())))).given_fields()
        a = draw(st.sampled_from([1, 2, 4, 8]))
        fields: dict[str, object] = {
            "name": "w", "parameters": draw(st.integers(10**6, 10**10)), "layers": draw(st.integers(1, 96)),
            "hidden_dim": a * draw(st.integers(1, 64)), "heads": a,
            "kv_heads": draw(st.sampled_from([None, 1, a])), "ffn_dim": draw(st.sampled_from([None, 256])),
            "positions": draw(st.sampled_from([None, "learned", "rotary"])),
        }  # fmt: skip
        if draw(st.booleans()):
            fields |= {"experts": 8, "experts_per_token": 2, "active_parameters": draw(st.integers(1, 10**6))}
        return fields

    changes = st.fixed_dictionaries(
        {},
        optional={
            "parameters": st.integers(10**6, 10**10), "layers": st.integers(1, 96),
            "positions": st.sampled_from([None, "learned", "rotary"]), "ffn_dim": st.sampled_from([None, 512]),
            "kv_heads": st.sampled_from([None, 1]), "name": st.just("v"),
        },
    )  # fmt: skip

    @settings(max_examples=60, deadline=None)
    @given(st.composite(workloads)(), changes)
    def check(fields: dict[str, object], change: dict[str, object]) -> None:
        w = Workload(**fields)  # type: ignore[arg-type]
        assert Workload(**w.given_fields()) == w

        def outcome(make: Callable[[], Workload]) -> object:
            """The workload, or the refusal's message: a change both refuse is refused alike."""
            try:
                return make()
            except FieldError as err:
                return str(err)

        assert outcome(lambda: w.variant(**change)) == outcome(lambda: Workload(**(fields | change)))  # type: ignore[arg-type]

    check()


# -- every field holds one value --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("head_dim", [64, 128]), ("ffn_dim", (256, 512)), ("vocab_size", [100]), ("shared_experts", [1, 2]),
        ("experts_per_token", [1, 2]), ("sliding_window", [4096, 4096]), ("attention_dropout", [0.1, 0.0]),
        ("mlp", ["plain"]), ("tied_embeddings", [True]), ("active_parameters", [1, 2]), ("hidden_dim", [[64], [64, 1]]),
    ],
)  # fmt: skip
def test_an_array_in_any_field_is_refused_by_its_name(field: str, value: object) -> None:
    """An array or list in a Workload field is refused naming that field (it used to reach repr or the serving kind)."""
    import numpy as np

    fields: dict[str, object] = {"name": "w", "parameters": 10**9, "layers": 2, "hidden_dim": 64, "heads": 4}
    if field in ("shared_experts", "experts_per_token"):
        fields |= {"experts": 4, "experts_per_token": 1}
    for given in (value, np.asarray(value, dtype=object) if field == "hidden_dim" else np.asarray(value)):
        with pytest.raises(FieldError, match=rf"^Workload\.{field}: must be a single number or choice"):
            Workload(**(fields | {field: given}))  # type: ignore[arg-type]


# -- from_hf_config reads only what it understands -------------------------------------------------------------

_TINY_LLAMA = {
    "model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4,
    "num_hidden_layers": 2, "vocab_size": 100,
}  # fmt: skip
_TINY_GPT2 = {"model_type": "gpt2", "n_layer": 2, "n_embd": 64, "n_head": 4, "vocab_size": 100, "n_positions": 32}


def test_a_classification_model_is_refused_by_architectures() -> None:
    """LlamaForSequenceClassification has no output layer over the vocabulary: refused naming architectures."""
    with pytest.raises(FieldError, match=r"from_hf_config\.architectures: .*only 'LlamaForCausalLM'"):
        Workload.from_hf_config(_TINY_LLAMA | {"architectures": ["LlamaForSequenceClassification"]})
    with pytest.raises(FieldError, match=r"from_hf_config\.architectures: "):
        Workload.from_hf_config(_TINY_GPT2 | {"architectures": "GPT2LMHeadModel"})  # not a list
    # 2 layers of (2·64 + 4·64² + 3·64·128) + 2·100·64 + 64 = 95,040 parameters, the causal LM's count
    assert Workload.from_hf_config(_TINY_LLAMA | {"architectures": ["LlamaForCausalLM"]}).parameters.magnitude == (
        2 * (2 * 64 + 4 * 64 * 64 + 3 * 64 * 128) + 2 * 100 * 64 + 64
    )


@pytest.mark.parametrize(
    ("config", "where", "rule"),
    [
        (_TINY_GPT2 | {"vocab_size": None}, "vocab_size", "must be given a value, not null"),
        (_TINY_GPT2 | {"n_positions": None}, "n_positions (the workload's context_length)", "must be given a value"),
        (_TINY_GPT2 | {"tie_word_embeddings": None}, "tie_word_embeddings (the workload's tied_embeddings)",
         "must be given a value"),
        (_TINY_GPT2 | {"n_positions": 0}, "n_positions (the workload's context_length)", "must be a whole number of at"),
        (_TINY_GPT2 | {"n_head": 5}, "n_head (the workload's heads)", "must divide"),
        (_TINY_GPT2 | {"attn_pdrop": "0.1"}, "attn_pdrop (the workload's attention_dropout)", "must be a probability"),
        (_TINY_LLAMA | {"model_type": "mistral", "sliding_window": "4096"}, "sliding_window",
         "must be a whole number (a JSON integer), got the text '4096'"),
        (_TINY_LLAMA | {"model_type": "mistral", "sliding_window": 32.0}, "sliding_window", "got 32.0, a number written with a decimal point"),
        (_TINY_LLAMA | {"model_type": "mistral", "sliding_window": [4096, 4096]}, "sliding_window", "got a JSON list"),
        (_TINY_LLAMA | {"num_key_value_heads": 3}, "num_key_value_heads (the workload's kv_heads)", "must divide"),
        (_TINY_LLAMA | {"max_position_embeddings": 2.0}, "max_position_embeddings (the workload's context_length)",
         "a JSON integer"),
        (_TINY_LLAMA | {"model_type": "mixtral", "num_experts_per_tok": 9}, ("num_experts_per_tok (the workload's "
         "experts_per_token)"), "must be at most experts"),
        (_TINY_LLAMA | {"tie_word_embeddings": "false"}, "tie_word_embeddings (the workload's tied_embeddings)",
         "must be true or false"),
        (_TINY_LLAMA | {"router_jitter_noise": "0"}, None, None),  # llama does not read it
    ],
)  # fmt: skip
def test_every_refusal_names_the_config_key(config: dict[str, object], where: str | None, rule: str | None) -> None:
    """Null, text, fractions and lists in a key read are refused under the config.json key, never a field inside."""
    if where is None:
        assert Workload.from_hf_config(config).layers == 2
        return
    with pytest.raises(FieldError) as caught:
        Workload.from_hf_config(config)
    assert str(caught.value).startswith(f"Workload.from_hf_config.{where}: ")
    assert rule in str(caught.value)


def test_random_junk_in_any_key_is_refused_under_a_key_of_the_file() -> None:
    """Any junk value in any key read is accepted or refused by that key's name (never Architecture.max_positions)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    junk = st.one_of(
        st.none(), st.booleans(), st.integers(-3, 2**31), st.floats(allow_nan=True), st.text(max_size=5),
        st.lists(st.integers(0, 9), max_size=2), st.dictionaries(st.text(max_size=2), st.integers(), max_size=1),
    )  # fmt: skip
    llama_keys = [*_TINY_LLAMA, "num_key_value_heads", "head_dim", "max_position_embeddings", "tie_word_embeddings",
                  "attention_dropout", "hidden_act", "sliding_window", "num_local_experts", "num_experts_per_tok",
                  "architectures", "quantization_config"]  # fmt: skip
    gpt2_keys = [*_TINY_GPT2, "n_inner", "attn_pdrop", "resid_pdrop", "embd_pdrop", "activation_function",
                 "tie_word_embeddings", "architectures"]  # fmt: skip

    @settings(max_examples=300, deadline=None)
    @given(st.sampled_from(["gpt2", "llama", "mistral", "mixtral", "qwen2"]), st.data(), junk)
    def check(model_type: str, data: st.DataObject, value: object) -> None:
        base = _TINY_GPT2 if model_type == "gpt2" else _TINY_LLAMA | {"model_type": model_type}
        key = data.draw(st.sampled_from(gpt2_keys if model_type == "gpt2" else llama_keys))
        refused = None
        try:
            Workload.from_hf_config(base | {key: value})
        except FieldError as err:
            refused = err
        if refused is not None:
            assert refused.owner == "Workload.from_hf_config"
            named = refused.field.split(" ")[0]
            assert named in base or named == key or named in ("resid_pdrop", "embd_pdrop"), str(refused)

    check()


def test_hostile_files_and_mappings_are_refused_by_rule(tmp_path: Path) -> None:
    """A FIFO, /dev/zero, a huge, non-UTF-8 or deeply nested file, a mapping whose get raises: named errors, no hang."""
    import os

    from mlsysim_nb.records.hf_config import MAX_CONFIG_BYTES

    class Hostile(dict):  # type: ignore[type-arg]
        def get(self, *args: object) -> object:
            raise RuntimeError("get")

        def __getitem__(self, key: object) -> object:
            raise RuntimeError("getitem")

    assert Workload.from_hf_config(Hostile(_TINY_GPT2)).layers == 2  # copied through dict's own methods
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    (tmp_path / "latin.json").write_bytes(b'{"model_type": "gpt2", "n_embd": "\xff"}')
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "huge.json").write_text(" " * MAX_CONFIG_BYTES + "{}")
    (tmp_path / "digits.json").write_text('{"n_layer": ' + "9" * 5000 + "}")
    for path, rule in [
        (fifo, "is a named pipe"), (Path("/dev/zero"), "is a character device"),
        (tmp_path, "is a directory"), (tmp_path / "latin.json", "is not UTF-8 text"),
        (tmp_path / "deep.json", "nested too deeply"), (tmp_path / "huge.json", "may hold at most 1,048,576"),
        (tmp_path / "digits.json", "is not a config.json"),
    ]:  # fmt: skip
        with pytest.raises(FieldError, match=rf"^Workload\.from_hf_config\.config: .*{rule}"):
            Workload.from_hf_config(path)
    with pytest.raises(FieldError, match=r"from_hf_config\.n_layer \(the workload's layers\): must be a JSON value"):
        Workload.from_hf_config(_TINY_GPT2 | {"n_layer": type("Int", (int,), {})(2)})


def test_a_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    """A config.json saved with a UTF-8 byte-order mark reads as without one (the hardware reader accepts one too)."""
    path = tmp_path / "config.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(_TINY_GPT2).encode())
    assert Workload.from_hf_config(path) == Workload.from_hf_config(_TINY_GPT2)


def test_every_workload_field_is_declared_by_one_knob() -> None:
    """Each number and choice of a workload is a knob; name, source, pattern and mixer_shapes (records) are not."""
    import dataclasses

    from mlsysim_nb.model.knob import knobs

    fields = {f.name for f in dataclasses.fields(Workload) if f.init}
    assert set(knobs(Workload)) == fields - {"name", "source", "pattern", "mixer_shapes"}
    assert knobs(Workload)["kv_heads"].high == 2**16
    assert [v for _, v in knobs(Workload)["mlp"].choices] == ["plain", "gated"]


def test_a_knob_s_bound_is_the_workload_s_and_the_config_reader_s() -> None:
    """Layers' knob says 100,000: a workload of 100,001 layers and a config.json of as many are refused, each by it."""
    from mlsysim_nb.model.knob import knobs

    assert knobs(Workload)["layers"].high == 100_000
    with pytest.raises(FieldError, match=r"Workload\.layers: must be at most 100,000"):
        Workload(name="deep", parameters=1, layers=100_001)
    with pytest.raises(FieldError, match=r"num_hidden_layers.*must be at most 100,000, got 100,001"):
        Workload.from_hf_config(_LLAMA | {"num_hidden_layers": 100_001})


def test_the_inputs_table_reads_each_label_from_the_knob() -> None:
    """workload_rows labels each field as its knob does (the shape as the notation writes it, the rest too)."""
    from mlsysim_nb.model.knob import knobs
    from mlsysim_nb.model.notation import RECORD_QUANTITIES
    from mlsysim_nb.records.workloads import workload_rows

    rows = {name: label for name, label, _ in workload_rows(Workloads.configuration("mixtral-8x7b"))}
    assert rows["workload.kv_heads"] == "key/value heads"
    label = knobs(Workload)["experts_per_token"].label
    assert rows["workload.experts_per_token"] == label
    assert label == "experts per token"
    for name in ("layers", "hidden_dim", "heads", "kv_heads", "context_length"):  # the notation's rows agree
        assert RECORD_QUANTITIES[name] == knobs(Workload)[name].quantity(name)


def test_variant_checks_a_change_by_its_knob() -> None:
    """Workload.variant refuses a value outside the knob's range by the field's name, as a scenario's does."""
    with pytest.raises(FieldError, match=r"Workload\.hidden_dim: must be at most 1,048,576"):
        Workloads.LLAMA3_8B.variant(hidden_dim=2**20 + 1)
    with pytest.raises(FieldError, match=r"Workload\.norm: must be one of 'layernorm', 'rmsnorm', got 'batchnorm'"):
        Workloads.LLAMA3_8B.variant(norm="batchnorm")


def test_architecture_takes_the_workload_s_names() -> None:
    """Workload.architecture() is the workload's own fields under their names (no hidden/ffn/vocab/tied renaming)."""
    import dataclasses

    arch = Workloads.configuration("llama-3.1-8b").architecture()
    shared = {f.name for f in dataclasses.fields(arch)} & {f.name for f in dataclasses.fields(Workload)}
    assert {"hidden_dim", "ffn_dim", "vocab_size", "tied_embeddings", "context_length", "kv_heads"} <= shared
    assert (arch.hidden_dim, arch.ffn_dim, arch.vocab_size, arch.tied_embeddings) == (4096, 14336, 128256, False)
    assert arch.kv == 8 and Workloads.LLAMA2_7B.architecture().kv == 32  # kv_heads not stated: the heads


@pytest.mark.parametrize(
    ("shape", "field", "rule"),
    [
        ({"hidden_dim": 4096, "heads": 32, "kv_heads": 5}, "kv_heads", "must divide heads (32) evenly"),
        ({"hidden_dim": 4096, "heads": 32, "kv_heads": 64}, "kv_heads", "must be at most 32"),
        ({"hidden_dim": 1000, "heads": 16}, "heads", "must divide hidden_dim (1,000) evenly"),
    ],
)
def test_impossible_attention_layouts_are_refused(shape: dict[str, int], field: str, rule: str) -> None:
    """kv_heads must divide heads (and not exceed it); heads must divide hidden_dim: each refusal names the field."""
    with pytest.raises(FieldError, match=re.escape(rule)) as caught:
        Workload(name="w", parameters=10**9, layers=4, **shape)
    assert caught.value.field == field


def test_a_workload_holds_one_model() -> None:
    """Workload(parameters=[...]) is refused: sweep the scenario instead."""
    with pytest.raises(FieldError, match=r"Workload\.parameters: must be a single number"):
        Workload(name="two", parameters=[1e6, 2e6])


def test_a_pattern_longer_than_the_layers_is_refused_before_it_is_read() -> None:
    """A pattern repeats over the layers: 33 entries for 32 layers dropped one unsaid; 10**6 took seconds to read."""
    llama = Workloads.configuration("llama-3.1-8b")
    with pytest.raises(FieldError, match=r"Workload\.pattern: must list at most 32 layers, the model's.*got 33"):
        llama.variant(pattern=("attention",) * 33)
    with pytest.raises(FieldError, match=r"Workload\.pattern: must list at most 32 layers.*got 1,000,000"):
        llama.variant(pattern=["attention"] * 10**6)
    with pytest.raises(FieldError, match=r"must list at most 100,000 layers, the layers' bound.*got 100,001"):
        Workload(name="x", parameters=10**6, pattern=("attention",) * 100_001)
    assert len(llama.variant(pattern=("attention",) * 32).pattern) == 32  # one entry per layer is the longest
