"""The Mamba-2 mixer (layers/mixers/mamba2.py): its saved rows in training, both accountings, hand-worked."""

from __future__ import annotations

import dataclasses

import pytest

from mlsysim_nb import ActivationMemoryScenario
from mlsysim_nb.errors import FieldError
from mlsysim_nb.layers import Layer, lines
from mlsysim_nb.layers.megatron import megatron_layer
from mlsysim_nb.layers.transformers import transformers_layer
from mlsysim_nb.records.workload_catalog import Workloads

_MAMBA = Layer("mamba2")


def _bamba():  # type: ignore[no-untyped-def]
    return Workloads.configuration("bamba-9b").architecture()


def test_the_fused_kernel_keeps_the_projection_the_scan_output_and_the_norm_s_rstd() -> None:
    """Bamba 9B, s 4,096, b 1, BF16: in_proj input 4,096·4,096, zxbcdt 4,096·16,768, y 4,096·8,192 (2 B), rstd 4 B.

    p_ssm = z 8,192 + x B C (8,192 + 2·1·128) + dt 128 = 16,768; with the layer's norms and gated MLP (f 14,336):
    4,096 · 2 · (4 · 4,096 + 16,768 + 8,192 + 3 · 14,336) + 4,096 · 4 = 691,027,968 B.
    """
    arch = _bamba()
    rows = megatron_layer(arch, "fused", _MAMBA)
    mixer = [r.key for r in rows if r.block == "state space"]
    assert mixer == ["ssm_input", "ssm_zxbcdt", "ssm_scan_output", "ssm_norm_rstd"]
    found = lines(rows, arch.dims(4096, 1), dtype_bytes=2)
    assert sum(line.bytes for line in found if line.row.block == "state space") == 4096 * (
        2 * (4096 + 16768 + 8192) + 4
    )
    assert sum(line.bytes for line in found) == 691_027_968


def test_transformers_torch_path_keeps_the_scan_in_fp32_over_padded_chunks() -> None:
    """Bamba 9B at s 4,096 (16 chunks of 256), BF16: the chunk-local scores alone are 2 · 16 · 256² · 128 · 4 B.

    The scores C·Bᵀ and M = 1 GiB; the decays L half that; B and C repeated to 128 heads, five copies of
    4,096 · 128 · 128 · 4 B = 1.25 GiB; the whole layer 5,456,121,410 B, 7.9 times the fused kernel's.
    """
    arch = _bamba()
    found = {line.row.key: line.bytes for line in lines(transformers_layer(arch, "fused", "gpu", _MAMBA),
                                                        arch.dims(4096, 1), dtype_bytes=2)}  # fmt: skip
    assert found["ssm_scores"] == 2 * 16 * 256 * 256 * 128 * 4 == 2**30
    assert found["ssm_decay"] == 2**29
    assert found["ssm_BC"] == 5 * 4096 * 128 * 128 * 4
    assert found["ssm_conv_output"] == (8192 + 256) * (4096 + 3) * 2
    assert found["ssm_chunk_masks"] == 2 * 17 * 17
    assert found["ssm_silu_output"] == 0  # FP32 runs only
    assert sum(found.values()) == 5_456_121_410


def test_the_chunk_count_rounds_the_sequence_up() -> None:
    """A run of 4,097 tokens in chunks of 256: 17 chunks, 4,352 padded tokens, 18 chunk states; the convolution s + 3."""
    extra = dict(_bamba().dims(4097, 2).extra)
    assert (extra["n_chunk"], extra["s_pad"], extra["n_chunk1"], extra["s_conv"]) == (17, 4352, 18, 4100)


def test_the_torch_path_needs_the_chunk_size() -> None:
    """Without Q_ssm the transformers rows are refused naming Architecture.mixer_shapes; the fused rows need none."""
    arch = _bamba()
    shapes = tuple((k, v) for k, v in arch.mixer_shapes if k != "Q_ssm")
    bare = dataclasses.replace(arch, mixer_shapes=shapes)
    assert megatron_layer(bare, "fused", _MAMBA)
    with pytest.raises(FieldError, match=r"Architecture\.mixer_shapes: must give Q_ssm"):
        transformers_layer(bare, "fused", "gpu", _MAMBA)


def test_the_activation_kind_takes_a_hybrid_in_the_paper_s_accounting() -> None:
    """Bamba 9B (fused, BF16, s 4,096, nothing recomputed): 29 Mamba-2 layers of 691,027,968 B, 3 attention layers.

    An attention layer: 6 · 4,096² · 2 (norm inputs, QKV input, Q, output, MLP input) + 2 · 4,096 · 1,024 · 2 (K, V)
    + 4 · 32 · 4,096 (log-sum-exp) + 3 · 4,096 · 14,336 · 2 = 570,949,632 B; 21,752,659,968 B in all, beside the output layer's. The
    'transformers' accounting is not per token (padded chunks): refused naming the field.
    """
    workload = Workloads.configuration("bamba-9b")
    scenario = ActivationMemoryScenario(workload=workload, micro_batch=1, seq_len=4096, attention="fused")
    attention = 6 * 4096**2 * 2 + 2 * 4096 * 1024 * 2 + 4 * 32 * 4096 + 3 * 4096 * 14336 * 2
    assert attention == 570_949_632
    output = 2 * 4096 * 4096 * 2 + 4096 * 128_256 * 4  # final norm and output layer inputs, FP32 logits
    layers = scenario.model_activations("none").m_as("B") - output
    assert layers == 29 * 691_027_968 + 3 * attention == 21_752_659_968
    with pytest.raises(FieldError, match=r"ActivationMemoryScenario\.implementation: 'transformers' cannot"):
        ActivationMemoryScenario(workload=workload, micro_batch=1, seq_len=4096, attention="fused",
                                 implementation="transformers").model_activations("none")  # fmt: skip
    mamba_only = workload.variant(pattern=(Layer("mamba2"),))
    with pytest.raises(FieldError, match=r"ActivationMemoryScenario\.implementation: 'transformers' keeps"):
        ActivationMemoryScenario(workload=mamba_only, micro_batch=1, seq_len=4096, attention="fused",
                                 implementation="transformers").model_activations("none")  # fmt: skip


@pytest.mark.parametrize(
    ("key", "t", "engine", "rule"),
    [
        ("bamba-9b", 2, "megatron", "must divide the Mamba-2 layers' 1 group"),
        ("bamba-9b", 2, "vllm", "must be 1 for Mamba-2 layers with one group"),
        ("nemotron-h-8b", 16, "megatron", "must divide the Mamba-2 layers' 8 group"),
        ("nemotron-h-8b", 16, "vllm", "must divide the Mamba-2 layers' 8 group"),
        ("nemotron-h-8b", 3, "vllm", "must divide the Mamba-2 layers' 128 heads"),
        ("nemotron-h-8b", 8, "megatron", None),
        ("nemotron-h-8b", 8, "vllm", None),
    ],
)
def test_each_engine_s_rule_for_splitting_a_mamba_layer(key: str, t: int, engine: str, rule: str | None) -> None:
    """Megatron-LM: t divides the heads and the groups; vLLM also, or one group copied to every device (refused)."""
    from mlsysim_nb.layers import tensor_parallel_refusal

    found = tensor_parallel_refusal(Workloads.configuration(key).architecture(), t, engine)
    if rule is None:
        assert found is None
    else:
        assert found is not None
        assert found[0].startswith(rule)


def test_nemotron_h_served_on_8_devices_splits_heads_groups_and_states() -> None:
    """Nemotron-H 8B on 8 H100 (vLLM), 4 sequences of 8,192 tokens, 16-bit: weights, K and V, states per device.

    Weights: the 53 norms of 4,096 whole, the rest over 8: (8,100,852,736 - 217,088)/8 + 217,088 parameters × 2 B.
    Cache: 4 attention layers × K and V × 1 head × 128 × 8,192 × 4 × 2 B, and 24 Mamba-2 layers' states of 16 heads
    and 1 group: (1,024 + 2 × 128) × 4 + 16 × 64 × 128 = 136,192 values a sequence each, an eighth of t = 1's.
    """
    from mlsysim_nb import Scenarios

    served = Scenarios.Bamba9BAt128KOnH100.variant(workload=Workloads.configuration("nemotron-h-8b"),
                                                   tensor_parallel=8, batch_size=4, context_length=8192)  # fmt: skip
    assert served.weights.m_as("B") == ((8_100_852_736 - 217_088) // 8 + 217_088) * 2 == 2_025_593_088
    attention = 4 * 2 * 128 * 8192 * 4 * 2
    states = 24 * ((1024 + 2 * 128) * 4 + 16 * 64 * 128) * 4 * 2
    assert served.kv_cache.m_as("B") == attention + states == 93_257_728
    whole = served.variant(tensor_parallel=1)
    assert whole.kv_cache.m_as("B") == 8 * attention + 8 * states


def test_nemotron_h_trained_over_8_devices_splits_its_mamba_rows() -> None:
    """Megatron-LM's layout t = 8 with SP: a Mamba-2 layer's rows over 8 (fused kernel), Nemotron-H 8B at 4,096 tokens.

    One Mamba-2 layer, BF16: its norm's and projection's inputs 2 · 4,096 · 4,096, zxbcdt 4,096 · 18,560, y 4,096 ·
    8,192 (2 B each) and 1/rms 4,096 · 8 groups · 4 B; all over 8 (the inputs under SP).
    """
    from mlsysim_nb.layers import Layer, layer_saved_bytes

    arch = Workloads.configuration("nemotron-h-8b").architecture()
    mamba = dataclasses.replace(arch, pattern=(Layer("mamba2", mlp=False),), layers=1)
    one = layer_saved_bytes(mamba, seq_len=4096, micro_batch=1, dtype_bytes=2, attention="fused")
    assert one == (4096 * 4096 + 4096 * 18560 + 4096 * 8192) * 2 + 4096 * 8 * 4 + 4096 * 4096 * 2
    split = layer_saved_bytes(mamba, seq_len=4096, micro_batch=1, dtype_bytes=2, attention="fused",
                              tensor_parallel=8, sequence_parallel=True)  # fmt: skip
    assert split == one / 8


def test_bamba_s_attention_layers_have_no_transformers_rows_yet() -> None:
    """Measured, Bamba's attention layer is not Llama's (partial rotary, a second output-projection input): refused."""
    with pytest.raises(ValueError, match=r"Bamba's attention layers have no transformers accounting yet"):
        transformers_layer(_bamba(), "fused", "gpu", Layer("attention"))
    assert transformers_layer(_bamba(), "fused", "gpu", _MAMBA)  # its Mamba-2 layers have theirs
