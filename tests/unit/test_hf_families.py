"""Reading the 2025 families' config.json (records/hf_families.py): Nemotron-H's layers of one part each."""

from __future__ import annotations

from typing import Any

import pytest

from mlsysim_nb.errors import FieldError
from mlsysim_nb.layers import Layer, cache_bytes, layer_weights, parameter_count
from mlsysim_nb.records.models import read_configuration
from mlsysim_nb.records.workloads import Workload

_SMALL = {"model_type": "nemotron_h", "architectures": ["NemotronHForCausalLM"], "vocab_size": 100,
          "hidden_size": 64, "intermediate_size": 96, "num_attention_heads": 4, "num_key_value_heads": 2,
          "head_dim": 16, "mamba_num_heads": 8, "mamba_head_dim": 16, "ssm_state_size": 8, "n_groups": 2,
          "conv_kernel": 4, "hybrid_override_pattern": "M-*-M"}  # fmt: skip


def _read(**changes: Any) -> Workload:
    return Workload.from_hf_config({**_SMALL, **changes})


def test_nemotron_h_8b_counts_each_layer_s_one_part() -> None:
    """Nemotron-H 8B: 24 Mamba-2 layers, 4 attention layers, 24 MLP layers, each with one norm; 8,100,852,736.

    By hand: embeddings and output 2 × 131,072 × 4,096; a Mamba-2 layer 4,096 (norm) + 4,096 × 18,560 (in_proj:
    z 8,192, x B C 10,240, dt 128) + 10,240 × 5 (conv, bias) + 3 × 128 + 8,192 (gated norm) + 8,192 × 4,096;
    attention 4,096 + 2 × 4,096² + 2 × 4,096 × 1,024; an MLP 4,096 + 2 × 4,096 × 21,504 (up, down; squared ReLU).
    """
    workload = Workload.from_hf_config(read_configuration("nemotron-h-8b")["config"])
    assert workload.layers == 52
    mamba = 4096 + 4096 * 18560 + 10240 * 5 + 3 * 128 + 8192 + 8192 * 4096
    attention = 4096 + 2 * 4096 * 4096 + 2 * 4096 * 1024
    mlp = 4096 + 2 * 4096 * 21504
    expected = 2 * 131072 * 4096 + 4096 + 24 * mamba + 4 * attention + 24 * mlp
    assert int(workload.parameters.magnitude) == expected == 8_100_852_736
    counts = dict(workload.architecture().layer_counts())
    assert counts == {Layer("mamba2", mlp=False): 24, Layer("none"): 24, Layer("attention", mlp=False): 4}


def test_nemotron_h_reads_the_pattern_or_the_layer_list_alike() -> None:
    """``hybrid_override_pattern`` 'M-*-M' and transformers' ``layers_block_type`` list give one workload."""
    listed = ["linear_attention", "mlp", "full_attention", "mlp", "linear_attention"]
    by_letters = _read()
    assert _read(hybrid_override_pattern=None, layers_block_type=listed) == by_letters
    assert by_letters.layers == 5
    assert by_letters.positions is None and by_letters.activation == "relu2"


def test_nemotron_h_keeps_a_state_per_mamba_layer_and_keys_in_its_attention_layer() -> None:
    """'M-*-M' at b 2, 13 tokens, FP32: 2 states of (160 × 4 + 8 × 16 × 8) and 13 × 2 × 2 × 16 K and V values.

    conv channels 128 + 2 × 2 groups × 8 = 160: 2 × 2 × (640 + 1,024) × 4 B + 2 × 13 × 64 × 4 B = 33,280 B, as
    generate() keeps (tests/measure/test_families_2025.py).
    """
    arch = _read().architecture()
    assert cache_bytes(arch, context=13, batch=2, bytes_per_value=4) == 2 * 2 * (640 + 1024) * 4 + 2 * 13 * 64 * 4
    assert cache_bytes(arch, context=13, batch=2, bytes_per_value=4) == 33_280


def test_a_layer_without_a_mixer_holds_its_norm_and_mlp_only() -> None:
    """An MLP layer: one norm and the MLP's two matrices; a Mamba-2 layer alone: its norm and its mixer."""
    arch = _read().architecture()
    assert [w.key for w in layer_weights(arch, Layer("none"))] == ["norm2", "MLP_in", "MLP_out"]
    assert next(w.key for w in layer_weights(arch, Layer("mamba2", mlp=False))) == "norm1"
    assert "MLP_in" not in [w.key for w in layer_weights(arch, Layer("mamba2", mlp=False))]
    assert parameter_count(arch, 5) == 100 * 64 * 2 + 64 + 2 * (64 + 64 * (128 + 160 + 8) + 160 * 5 + 24 + 128
                                                                + 128 * 64) + 2 * (64 + 2 * 64 * 96) + (
        64 + 2 * 64 * 64 + 2 * 64 * 32)  # fmt: skip


@pytest.mark.parametrize(
    ("change", "key"),
    [
        ({"hybrid_override_pattern": "M-E*"}, "hybrid_override_pattern"),
        ({"hybrid_override_pattern": None, "layers_block_type": ["linear_attention", "moe"]}, "layers_block_type"),
        ({"mlp_hidden_act": "silu"}, "mlp_hidden_act"),
        ({"use_bias": True}, "use_bias"),
        ({"use_conv_bias": False}, "use_conv_bias"),
        ({"sliding_window": 64}, "sliding_window"),
        ({"n_groups": 3}, "n_groups"),
        ({"hybrid_override_pattern": 5}, "hybrid_override_pattern"),
    ],
)
def test_nemotron_h_refuses_what_the_table_does_not_describe_by_its_key(change: dict[str, Any], key: str) -> None:
    """A mixture-of-experts layer, another activation, biases, a window, groups that do not divide: by the key."""
    with pytest.raises(FieldError, match=rf"Workload\.from_hf_config\.{key}"):
        _read(**change)


def test_a_layer_holds_a_mixer_or_an_mlp() -> None:
    """Layer('none', mlp=False) would be nothing: refused naming Layer.mlp; mlp must be True or False."""
    with pytest.raises(FieldError, match=r"Layer\.mlp: must be True for a layer with no mixer"):
        Layer("none", mlp=False)
    with pytest.raises(FieldError, match=r"Layer\.mlp: must be True or False"):
        Layer("attention", mlp=1)  # type: ignore[arg-type]


def test_nemotron_h_s_layers_save_one_part_each_in_the_paper_s_accounting() -> None:
    """An MLP layer: its norm's and the MLP's inputs (h) and squared ReLU's input and output (f); attention alone: no MLP.

    'M-*-M' at h 64, f 96: an MLP layer saves s·b·(2·64 + 2·96) values; the activation kind's 5-layer mean follows.
    """
    from mlsysim_nb.layers import lines
    from mlsysim_nb.layers.megatron import megatron_layer

    arch = _read().architecture()
    mlp = megatron_layer(arch, "fused", Layer("none"))
    assert [r.key for r in mlp] == ["ln2_input", "mlp_input", "relu2_input", "relu2_output"]
    assert sum(line.bytes for line in lines(mlp, arch.dims(10, 1), dtype_bytes=2)) == 10 * (2 * 64 + 2 * 96) * 2
    attention = [r.key for r in megatron_layer(arch, "fused", Layer("attention", mlp=False))]
    assert attention == ["ln1_input", "qkv_input", "q", "k", "v", "lse", "projection_input"]


def test_nemotron_h_s_blocks_in_transformers_accounting() -> None:
    """NemotronHBlock: one RMSNorm (FP32 normalized input, an FP32 copy of its scale when narrower), then one part.

    The MLP block at s 20, b 3, BF16: 60 × 64 × (4 + 4 + 2) + 60 × 4 + 64 × 4 + 2 × 60 × 96 × 2 = 61,936 B (measured
    in tests/measure/test_mamba2_training.py); its attention keeps no rotary tables (no position encoding).
    """
    from mlsysim_nb.layers import lines
    from mlsysim_nb.layers.transformers import transformers_layer

    arch = _read().architecture()
    mlp = transformers_layer(arch, "fused", "cpu", Layer("none"))
    assert sum(line.bytes for line in lines(mlp, arch.dims(20, 3), dtype_bytes=2, device="cpu")) == 61_936
    attention = [r.key for r in transformers_layer(arch, "fused", "gpu", Layer("attention", mlp=False))]
    assert "rotary" not in attention
    assert attention[-1] == "projection_input"
