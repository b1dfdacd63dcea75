"""Mistral's, Qwen2's, Mixtral's decoder layers; two-layer LlamaForCausalLM and GPT2LMHeadModel with the loss (CPU)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from tests.measure._hf_checks import check_effects, check_measurement

pytestmark = pytest.mark.measure

LAYERS = [
    *itertools.product(("mistral", "qwen2"), ("bfloat16", "float32"), ("eager", "sdpa"), (False, True)),
    *itertools.product(("mixtral",), ("bfloat16", "float32"), ("eager", "sdpa"), (False, True)),
]
MODELS = list(itertools.product(("llama", "gpt2"), ("bfloat16", "float32"), ("eager", "sdpa"), (False, True)))


@pytest.fixture(scope="module", params=LAYERS, ids=lambda p: "-".join(map(str, p)))
def layer(request: pytest.FixtureRequest, transformers: Any) -> Any:
    """Each layer configuration measured once."""
    from mlsysim_nb.measure import measure_hf_layer

    model_type, dtype, attention, dropout = request.param
    return measure_hf_layer(model_type, dtype=dtype, attention=attention, dropout=dropout)


@pytest.fixture(scope="module", params=MODELS, ids=lambda p: "-".join(map(str, p)))
def model(request: pytest.FixtureRequest, transformers: Any) -> Any:
    """Each whole-model configuration measured once."""
    from mlsysim_nb.measure import measure_hf_causal_lm

    model_type, dtype, attention, dropout = request.param
    return measure_hf_causal_lm(model_type, dtype=dtype, attention=attention, dropout=dropout)


def test_layer_prediction_and_attribution(layer: Any) -> None:
    """The transformers accounting predicts each layer's bytes; every byte belongs to a named row."""
    check_measurement(layer)
    check_effects(layer)


def test_model_prediction_and_attribution(model: Any) -> None:
    """Two layers, the embeddings, the output layer and the loss: predicted within 1 %, every byte attributed."""
    check_measurement(model)
    check_effects(model)


def test_mixtral_experts_take_tokens_times_k(transformers: Any) -> None:
    """The routed rows hold s·b·k = 72 token slots, however the router spreads them over the 4 experts."""
    from mlsysim_nb.measure import measure_hf_layer

    m = measure_hf_layer("mixtral", dtype="bfloat16", attention="sdpa", random_state=3)
    by = {r.row.key: r.measured for r in m.rows}
    slots, h, f = 12 * 3 * 2, 64, 96
    assert (by["expert_input"], by["experts_gate_up"], by["experts_product"]) == (2 * slots * h, 2 * 2 * slots * f,
                                                                                  2 * slots * f)  # fmt: skip
    assert by["token_index"] == 2 * 8 * slots


def test_the_loss_keeps_fp32_log_probabilities(transformers: Any) -> None:
    """LlamaForCausalLM in BF16: the loss keeps the log-softmax of the logits in FP32, 4sbv (v = 100)."""
    from mlsysim_nb.measure import measure_hf_causal_lm

    m = measure_hf_causal_lm(dtype="bfloat16", attention="sdpa")
    by = {r.row.key: r.measured for r in m.rows}
    assert by["logits"] == 4 * 12 * 3 * 100
    assert by["rotary"] == 2 * 2 * 12 * 16  # one pair of tables for both layers


def test_bad_arguments_are_refused_by_name() -> None:
    """A family, dtype, attention or size outside the lab's range is refused before anything runs."""
    from mlsysim_nb.errors import FieldError
    from mlsysim_nb.measure import measure_hf_layer

    for kwargs, field in [({"model_type": "falcon"}, "model_type"), ({"dtype": "float16"}, "dtype"),
                          ({"attention": "flash"}, "attention"), ({"seq_len": 16}, "seq_len"),
                          ({"dropout": 0.1}, "dropout")]:  # fmt: skip
        with pytest.raises(FieldError, match=rf"measure_hf_layer\.{field}: "):
            measure_hf_layer(**({"model_type": "llama"} | kwargs))  # type: ignore[arg-type]


def test_a_window_below_the_sequence_keeps_every_score_eagerly_and_a_mask_under_sdpa(transformers: Any) -> None:
    """Mistral and Qwen2 at window 6 < s = 12, BF16: eager keeps every score, SDPA a mask and no score.

    Eager: all b·a·s² FP32 scores, the masked ones too. SDPA: the b·s² mask in BF16 and K and V for every head
    (a = 4, not kv = 2).
    """
    from mlsysim_nb.measure import measure_hf_layer

    s, b, a, d = 12, 3, 4, 16
    eager = {r.row.key: r.measured for r in measure_hf_layer("mistral", dtype="bfloat16", attention="eager").rows}
    assert eager["softmax_output"] == 4 * b * a * s * s
    sdpa = measure_hf_layer("qwen2", dtype="bfloat16", attention="sdpa")
    by = {r.row.key: r.measured for r in sdpa.rows}
    assert (by["window_mask"], by["k"], by["v"]) == (2 * b * s * s, 2 * s * b * a * d, 2 * s * b * a * d)
    assert not any(r.row.recompute == "selective" and r.row.key != "window_mask" for r in sdpa.rows)
