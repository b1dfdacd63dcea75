"""The seeds' helper functions and constants, against hand-worked numbers and the paper."""

from __future__ import annotations

import pytest

from mlsysim_nb import (
    KORTHIKANTI_PER_TOKEN_BYTES,
    KORTHIKANTI_SCORE_BYTES,
    FieldError,
    calc_activation_memory,
    calc_checkpoint_memory_units,
    calc_low_rank_update_params,
    calc_transformer_decode_flops,
    calc_transformer_training_flops,
)


def test_korthikanti_constants() -> None:
    """34 = 11 + 19 + 4 and 5 = 2 + 1 + 2 (Korthikanti et al. 2022, Table 2)."""
    assert KORTHIKANTI_PER_TOKEN_BYTES == 34
    assert KORTHIKANTI_SCORE_BYTES == 5


def test_activation_memory_gpt3_layer_by_hand() -> None:
    """GPT-3, one layer, s=2048, b=1, h=12288, a=96: sbh(34 + 5as/h) bytes (paper's per-layer formula)."""
    s, b, h, a = 2048, 1, 12288, 96
    by_hand = s * b * h * (34 + 5 * a * s / h)
    assert by_hand == calc_activation_memory(1, s, b, h, a, 2, "none").m_as("byte")
    assert s * b * h * 34 == calc_activation_memory(1, s, b, h, a, 2, "selective").m_as("byte")
    assert 2 * s * b * h == calc_activation_memory(1, s, b, h, a, 2, "full").m_as("byte")


def test_activation_memory_scales_with_precision() -> None:
    """FP32 doubles every strategy's footprint."""
    for strategy in ("none", "selective", "full"):
        two = calc_activation_memory(4, 512, 2, 1024, 16, 2, strategy)
        four = calc_activation_memory(4, 512, 2, 1024, 16, 4, strategy)
        assert 2 * two == four


def test_unknown_strategy_lists_valid_ones() -> None:
    """An unknown strategy is a ValueError naming the three valid ones."""
    with pytest.raises(ValueError, match="'none', 'selective', 'full'"):
        calc_activation_memory(4, 512, 2, 1024, 16, 2, "bogus")


def test_none_strategy_needs_heads() -> None:
    """Storing scores needs the head count."""
    with pytest.raises(ValueError, match="n_heads"):
        calc_activation_memory(4, 512, 2, 1024, None, 2, "none")


@pytest.mark.parametrize("bad", [0, -1, 1.5e-9 * 0])
def test_activation_memory_refuses_non_positive(bad: int) -> None:
    """Sizes must be positive."""
    with pytest.raises(FieldError, match="seq_len: must be positive"):
        calc_activation_memory(4, bad, 2, 1024, 16)


def test_checkpoint_memory_units_minimum_near_sqrt_l() -> None:
    """K + L/k; for L=48 the minimum over integers is at k=7 (sqrt(48) = 6.93)."""
    assert calc_checkpoint_memory_units(48, 4) == 16.0
    best = min(range(1, 49), key=lambda k: calc_checkpoint_memory_units(48, k))
    assert best == 7


def test_training_and_decode_flops() -> None:
    """6PD, 8PD with recomputation, 2PD forward."""
    assert calc_transformer_training_flops(1.5e9, 1000).m_as("FLOP") == 6 * 1.5e9 * 1000
    assert calc_transformer_training_flops(1.5e9, 1000, True).m_as("FLOP") == 8 * 1.5e9 * 1000
    assert calc_transformer_decode_flops(1.5e9).m_as("FLOP") == 2 * 1.5e9


def test_low_rank_update_params() -> None:
    """r(d_in + d_out); LoRA on a 4096x4096 query at rank 16."""
    assert calc_low_rank_update_params(4096, 4096, 16) == 16 * 8192
    with pytest.raises(FieldError, match="rank: must be at least 1"):
        calc_low_rank_update_params(4096, 4096, 0)
