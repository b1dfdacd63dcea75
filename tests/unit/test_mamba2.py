"""The Mamba-2 mixer (layers/mixers/mamba2.py): its saved rows in training, both accountings, hand-worked."""

from __future__ import annotations

import dataclasses

import pytest

from mlsysim_nb import ActivationMemoryScenario
from mlsysim_nb.errors import FieldError
from mlsysim_nb.layers import Layer, lines
from mlsysim_nb.layers.megatron import megatron_layer
from mlsysim_nb.layers.transformers import transformers_layer
from mlsysim_nb.records.workloads import Workloads

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
    with pytest.raises(FieldError, match=r"ActivationMemoryScenario\.implementation: 'transformers' keeps"):
        ActivationMemoryScenario(workload=workload, micro_batch=1, seq_len=4096, attention="fused",
                                 implementation="transformers").model_activations("none")  # fmt: skip
