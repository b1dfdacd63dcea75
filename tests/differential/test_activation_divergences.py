"""The activation kind's deliberate difference from the reference on fused attention (README, D19), both sides."""

from __future__ import annotations

import pytest

from mlsysim_nb import Scenarios
from tests.reference import ref

pytestmark = pytest.mark.reference

REF = ref.Scenarios


def test_d19_fused_attention_keeps_its_log_sum_exp() -> None:
    """D19: fused attention is the reference's per-token figure plus the FP32 log-sum-exp, L·4·a·s·b.

    The reference's FlashAttention figure is the per-token activations (85.56 GB for GPT-2 XL at batch 32);
    ours with attention="fused" adds one FP32 log-sum-exp per row and head: 0.157 GB more.
    """
    name = "Gpt2XlBatch32Activations"  # GPT-2 XL: L = 48, s = 1024, b = 32, h = 1600, a = 25
    theirs, ours = getattr(REF, name), Scenarios[name]
    lse = 48 * 4 * 25 * 1024 * 32
    assert theirs.per_token_activations.m_as("byte") == pytest.approx(85_563_801_600, rel=1e-12)
    assert REF.Gpt2MixedPrecisionFlashAttentionOnH100.activations.m_as("byte") == pytest.approx(85_563_801_600)
    fused = ours.variant(attention="fused")
    assert fused.activations("none").m_as("byte") == 85_563_801_600 + lse == 85_721_088_000
    assert fused.activations("none") == fused.activations("selective")  # no scores: nothing left to recompute
    # the default attention is the reference's: every tensor, scores included, and the same per-token figure
    assert ours.attention == "eager"
    assert ours.per_token_activations.m_as("byte") == pytest.approx(theirs.per_token_activations.m_as("byte"))
