"""GPT2Block and LlamaDecoderLayer of transformers, measured on the CPU: FP32 and BF16, eager and SDPA, dropout on/off."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from tests.measure._hf_checks import check_effects, check_measurement

pytestmark = pytest.mark.measure

SETTINGS = list(itertools.product(("gpt2", "llama"), ("bfloat16", "float32"), ("eager", "sdpa"), (False, True)))


@pytest.fixture(scope="module", params=SETTINGS, ids=lambda p: "-".join(map(str, p)))
def measured(request: pytest.FixtureRequest, transformers: Any) -> Any:
    """Each configuration measured once."""
    from mlsysim_nb.measure import measure_hf_layer

    model_type, dtype, attention, dropout = request.param
    return measure_hf_layer(model_type, dtype=dtype, attention=attention, dropout=dropout)


def test_prediction_and_attribution(measured: Any) -> None:
    """The transformers accounting predicts the measured bytes; every byte belongs to a named row."""
    check_measurement(measured)


def test_device_effects_are_named(measured: Any) -> None:
    """A CPU-only effect on the bytes is named, never silent."""
    check_effects(measured)


def test_gpt2_block_by_hand(transformers: Any) -> None:
    """GPT2Block, BF16, eager, dropout 0.1, s=12 b=3 h=64 a=4: sbh = 2304, as²b = 1728.

    transformers keeps (2 bytes each, masks too on the CPU): LayerNorm inputs and stats 2(sbh + 2sb), QKV and
    MLP inputs 2sbh, Q, K, V and projection input 4sbh, softmax, mask, dropout output 3as²b, two residual
    masks 2sbh, GeLU's four terms and its output 5·4sbh: 148,896 bytes; the paper counts 34sbh + 5as²b.
    """
    from mlsysim_nb.measure import measure_hf_layer

    sbh, sb, as2b = 2304, 36, 1728
    m = measure_hf_layer("gpt2", dtype="bfloat16", attention="eager", dropout=True)
    assert m.measured == 2 * (2 * (sbh + 2 * sb) + 2 * sbh + 4 * sbh + 3 * as2b + 2 * sbh + 5 * 4 * sbh) == 148_896
    assert m.paper == 34 * sbh + 5 * as2b


def test_llama_layer_beside_the_paper(transformers: Any) -> None:
    """LlamaDecoderLayer, BF16, SDPA: the rows the paper lacks or keeps narrower are RMSNorm's FP32 work and SiLU's output."""
    from mlsysim_nb.measure import measure_hf_layer

    m = measure_hf_layer("llama", dtype="bfloat16", attention="sdpa")
    extra = {r.row.key: r.measured for r in m.rows if r.row.note}
    sbh, sb, sbf = 2304, 36, 3456
    assert extra == {
        "ln1_input": 4 * sbh, "ln1_rsqrt": 4 * sb, "ln1_normalized": 2 * sbh, "rotary": 2 * 2 * 12 * 16,
        "lse": 4 * 3 * 4 * 12, "ln2_input": 4 * sbh, "ln2_rsqrt": 4 * sb, "ln2_normalized": 2 * sbh,
        "silu_output": 2 * sbf,
    }  # fmt: skip
    paper_keys = {line.row.key for line in m.paper_rows}
    assert {r.row.key for r in m.rows if not r.row.note} <= paper_keys


def test_beside_the_paper_row_by_row(transformers: Any) -> None:
    """Each measured row names the paper's row it stands for, or says why the paper has none."""
    from mlsysim_nb.measure import measure_hf_layer

    m = measure_hf_layer("llama", dtype="bfloat16", attention="eager")
    rows = m.beside_paper()
    assert len(rows) == len(m.rows)
    for label, measured, paper_key, paper_bytes, why in rows:
        assert measured > 0, label
        assert (paper_key != "-" and paper_bytes > 0) or why, label
    by = {r[0]: r for r in rows}
    assert by["softmax output (FP32)"][1] == 2 * by["softmax output (FP32)"][3]  # FP32 against the paper's 16 bits
