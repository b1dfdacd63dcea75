"""A Mamba-2 decoder layer in training, measured: transformers' PyTorch path (measure/hf_mamba.py) against the table."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.measure


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize(("seq_len", "micro_batch"), [(20, 3), (16, 2), (37, 1)])
def test_every_saved_byte_of_bamba_s_mamba_layer_is_a_row(dtype: str, seq_len: int, micro_batch: int,
                                                          transformers: Any) -> None:  # fmt: skip
    """BambaDecoderLayer's Mamba-2 layer keeps exactly the rows' bytes, row by row, whole chunks or not."""
    from mlsysim_nb.measure.hf_mamba import measure_hf_mamba_layer

    m = measure_hf_mamba_layer(dtype=dtype, seq_len=seq_len, micro_batch=micro_batch)
    assert m.unattributed == 0
    assert [(r.row.key, r.measured) for r in m.rows] == [(r.row.key, int(r.predicted)) for r in m.rows]
    assert m.measured == m.predicted


def test_the_hand_worked_mamba_layer_at_20_tokens(transformers: Any) -> None:
    """At b 3, s 20 in chunks of 8 (3 chunks, 24 padded), 8 heads of 16, N 12, 2 groups, K 4, h 64, f 96, FP32: 992,864 B.

    The norms and the gated MLP: 2 × (2 × 3,840 + 60) + 3,840 + 4 × 5,760 elements; the mixer's own rows follow.
    """
    from mlsysim_nb.measure.hf_mamba import measure_hf_mamba_layer

    b, s, q, n, pad, heads, p, state, g, k, h = 3, 20, 8, 3, 24, 8, 16, 12, 2, 4, 64
    t, padded, d, conv = s * b, pad * b, heads * p, heads * p + 2 * g * state
    act = t * h + t * (d + conv + heads) + b * conv * (s + k - 1) + 2 * t * heads + t * d  # in, zxbcdt, conv, dt, out
    fp32 = (t * heads + 2 * heads + padded * d + b * heads * n * q * q + 2 * b * n * q * q * heads
            + 5 * padded * heads * state + 2 * padded * d + 2 * b * heads * pad + b * heads * (n + 1) ** 2
            + b * (n + 1) * d * state + b * n * d * state + padded * d + padded * d + 3 * t * d + t * g
            + t * conv)  # fmt: skip
    masks = 2 * q * q + 2 * (n + 1) ** 2
    norms_mlp = 2 * (2 * t * h + t) + t * h + 4 * t * 96
    expected = 4 * (act + fp32 + norms_mlp) + masks
    m = measure_hf_mamba_layer(dtype="float32", seq_len=s, micro_batch=b)
    assert m.measured == expected == 992_864


def test_the_fused_kernel_keeps_a_ninth_in_bf16(transformers: Any) -> None:
    """The paper-style rows (mamba_ssm's fused kernel) beside the PyTorch path at the same size: 118,560 B vs 858,176.

    Fused: the norms and MLP's 53,760 + 2 × 3,840 (norm inputs) + the projection's input 7,680 and output 37,440,
    the scan output 15,360 and 1/rms 480 (FP32).
    """
    from mlsysim_nb.measure.hf_mamba import measure_hf_mamba_layer

    m = measure_hf_mamba_layer(dtype="bfloat16")
    assert m.measured == 858_176
    assert m.paper == 60 * 64 * 2 * 3 + 60 * 96 * 2 * 3 + 60 * 64 * 2 + 60 * 312 * 2 + 60 * 128 * 2 + 60 * 2 * 4
    assert m.paper == 118_560


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize(("block", "attention"), [("mamba", "sdpa"), ("attention", "eager"), ("attention", "sdpa"),
                                                  ("mlp", "sdpa")])  # fmt: skip
def test_every_saved_byte_of_a_nemotron_h_block_is_a_row(block: str, attention: str, dtype: str,
                                                         transformers: Any) -> None:  # fmt: skip
    """NemotronHBlock of each kind (one norm, then a Mamba-2 mixer, attention or an MLP): the rows, byte for byte."""
    from mlsysim_nb.measure.hf_mamba import measure_hf_nemotron_block

    m = measure_hf_nemotron_block(block, dtype=dtype, attention=attention)
    assert m.unattributed == 0
    assert [(r.row.key, r.measured) for r in m.rows] == [(r.row.key, int(r.predicted)) for r in m.rows]


def test_nemotron_h_s_mlp_block_by_hand(transformers: Any) -> None:
    """BF16, b 3, s 20, h 64, f 96: the norm's FP32 input, 1/rms, FP32 normalized input and scale; the MLP's rows.

    60 × 64 × 4 + 60 × 4 + 60 × 64 × 4 + 64 × 4 + 60 × 64 × 2 + 2 × 60 × 96 × 2 = 61,936 B.
    """
    from mlsysim_nb.measure.hf_mamba import measure_hf_nemotron_block

    expected = 60 * 64 * 4 + 60 * 4 + 60 * 64 * 4 + 64 * 4 + 60 * 64 * 2 + 2 * 60 * 96 * 2
    assert measure_hf_nemotron_block("mlp", dtype="bfloat16").measured == expected == 61_936
