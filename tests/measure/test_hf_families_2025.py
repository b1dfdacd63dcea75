"""The 2025 families' decoder layers measured on the CPU (FP32 and BF16, eager and SDPA).

Qwen3, Qwen3-MoE, Gemma 3, gpt-oss (eager: transformers runs its sinks only so) and DeepSeek-V3 (latent attention,
a mixture with a shared expert). Each layer is measured once per session; every saved byte lands on a row of the transformers accounting.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from tests.measure._hf_checks import check_effects, check_measurement

pytestmark = pytest.mark.measure

FAMILIES = ("qwen3", "qwen3_moe", "gemma3_text", "gpt_oss", "deepseek_v3")
SETTINGS = [
    (family, dtype, attention)
    for family, dtype, attention in itertools.product(FAMILIES, ("bfloat16", "float32"), ("eager", "sdpa"))
    if not (family == "gpt_oss" and attention == "sdpa")
]
S, B, A, KV, D, H, F = 12, 3, 4, 2, 20, 64, 96  # the lab's small sizes (measure.hf.SIZES); head_dim 20


@pytest.fixture(scope="session")
def measured(transformers: Any) -> dict[tuple[str, str, str], Any]:
    """Every setting measured once per session."""
    from mlsysim_nb.measure import measure_hf_layer

    return {(f, d, a): measure_hf_layer(f, dtype=d, attention=a) for f, d, a in SETTINGS}


@pytest.mark.parametrize("setting", SETTINGS, ids="-".join)
def test_prediction_and_attribution(measured: dict[tuple[str, str, str], Any], setting: tuple[str, str, str]) -> None:
    """The transformers accounting predicts each layer's bytes exactly; every byte belongs to a named row."""
    check_measurement(measured[setting])
    check_effects(measured[setting])


def test_qwen3_keeps_its_qk_norms_work(measured: dict[tuple[str, str, str], Any]) -> None:
    """Qwen3, BF16: each head's Q norm keeps an FP32 input (4·sbad), 1/rms (4·sba) and the BF16 result (2·sbad)."""
    by = {r.row.key: r.measured for r in measured["qwen3", "bfloat16", "sdpa"].rows}
    sbad, sbkd, sb = S * B * A * D, S * B * KV * D, S * B
    assert (by["q_norm_input"], by["q_norm_rsqrt"], by["q_norm_normalized"]) == (4 * sbad, 4 * sb * A, 2 * sbad)
    assert (by["k_norm_input"], by["k_norm_rsqrt"], by["k_norm_normalized"]) == (4 * sbkd, 4 * sb * KV, 2 * sbkd)


def test_gemma3_norms_keep_fp32_results_and_their_scale(measured: dict[tuple[str, str, str], Any]) -> None:
    """Gemma 3, BF16: four norms a layer, each two FP32 sbh tensors, FP32 1/rms and 1 + w (4h bytes)."""
    by = {r.row.key: r.measured for r in measured["gemma3_text", "bfloat16", "eager"].rows}
    for key in ("ln1", "ln_post_attention", "ln2", "ln_post_mlp"):
        assert (by[f"{key}_input"], by[f"{key}_rsqrt"], by[f"{key}_scale"]) == (2 * 4 * S * B * H, 4 * S * B, 4 * H)


def test_eager_attention_keeps_the_masked_scores_of_a_window(measured: dict[tuple[str, str, str], Any]) -> None:
    """Gemma 3's sliding layer at window 6 < s = 12, eager: the FP32 softmax keeps all b·a·s² scores, masked or not."""
    m = measured["gemma3_text", "bfloat16", "eager"]
    by = {r.row.key: r.measured for r in m.rows}
    assert by["softmax_output"] == 4 * B * A * S * S == 6912
    assert by["softmax_cast"] == 2 * B * A * S * S


def test_sdpa_keeps_a_windows_mask_and_repeats_k_and_v(measured: dict[tuple[str, str, str], Any]) -> None:
    """Gemma 3's sliding layer under SDPA: K and V for every head (not kv) and the b·s² mask in the activation dtype.

    No s² score is kept: the kernel keeps its FP32 log-sum-exp per row and head, as without a window.
    """
    m = measured["gemma3_text", "bfloat16", "sdpa"]
    by = {r.row.key: r.measured for r in m.rows}
    assert (by["k"], by["v"]) == (2 * S * B * A * D, 2 * S * B * A * D)
    assert by["window_mask"] == 2 * B * S * S == 864
    assert by["lse"] == 4 * B * A * S
    assert "softmax_output" not in by


def test_gpt_oss_sinks_join_the_scores(measured: dict[tuple[str, str, str], Any]) -> None:
    """gpt-oss, BF16: the softmax over s + 1 columns (2·ba·s·(s+1) bytes) and the int64 index of each row's max."""
    by = {r.row.key: r.measured for r in measured["gpt_oss", "bfloat16", "eager"].rows}
    assert by["softmax_output"] + by["sink_probs"] == 2 * B * A * S * (S + 1) == 3744
    assert by["sink_max_index"] == 8 * B * A * S


def test_gpt_oss_sdpa_is_refused_by_name() -> None:
    """The lab refuses SDPA for gpt-oss: transformers never runs gpt-oss's sinks with SDPA, and a layer without them is not gpt-oss."""
    from mlsysim_nb.errors import FieldError
    from mlsysim_nb.measure import measure_hf_layer

    with pytest.raises(FieldError, match=r"measure_hf_layer\.attention: must be 'eager' for gpt-oss"):
        measure_hf_layer("gpt_oss", attention="sdpa")


def test_latent_attention_keeps_its_latents_and_the_decompressed_heads(
    measured: dict[tuple[str, str, str], Any],
) -> None:
    """DeepSeek-V3, BF16, eager: latents r_q 22 and r_kv 28 with their norms, Q and K of d_qk 18, V of d_v 14."""
    by = {r.row.key: r.measured for r in measured["deepseek_v3", "bfloat16", "eager"].rows}
    sb = S * B
    assert (by["q_latent_norm_input"], by["q_latent"]) == (4 * sb * 22, 2 * sb * 22)
    assert (by["kv_latent_norm_input"], by["kv_latent"], by["kv_latent_norm_input_rest"]) == (4 * sb * 28,
                                                                                               2 * sb * 28, 0)  # fmt: skip
    assert (by["q"], by["k"], by["v"], by["projection_input"]) == (2 * sb * A * 18, 2 * sb * A * 18, 2 * sb * A * 14,
                                                                   2 * sb * A * 14)  # fmt: skip
    fp32 = {r.row.key: r.measured for r in measured["deepseek_v3", "float32", "eager"].rows}
    assert fp32["kv_latent_norm_input_rest"] == 4 * sb * 8  # the rotary key shares the latent's storage in FP32
