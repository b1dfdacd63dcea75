"""Notebook 14 (today's models): its published figures are cited where they are printed, and what it computes is right."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

from mlsysim_nb import Scenarios, Workloads
from mlsysim_nb.layers import cache_bytes, layer_weights
from mlsysim_nb.live.explorer import SLIDER_MAX
from mlsysim_nb.records.formats import weight_format

PATH = Path(__file__).resolve().parents[2] / "notebooks" / "14_todays_models.ipynb"


def _cells() -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in json.loads(PATH.read_text(encoding="utf-8"))["cells"]}


def _text(cell: dict[str, Any]) -> str:
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else src


def _prose() -> str:
    return "\n".join(_text(c) for c in _cells().values() if c["cell_type"] == "markdown")


def _run(*cell_ids: str) -> str:
    """Run these code cells in order, in one namespace (IPython magics dropped); return what they print."""
    cells = _cells()
    namespace: dict[str, Any] = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for cell_id in cell_ids:
            code = "\n".join(line for line in _text(cells[cell_id]).splitlines() if not line.startswith("%"))
            exec(compile(code, cell_id, "exec"), namespace)  # noqa: S102 - the notebook's own cells
    return out.getvalue()


def _leaves_out() -> str:
    """What the 'leaves out' cell prints: the prediction module, its cache and the redundant experts."""
    return _run("e1a40002", "e1a40006", "e1a40008", "e1a40010", "e1a40035")


def test_the_redundant_experts_are_counted_in_every_moe_layer() -> None:
    """32 redundant experts in each of DeepSeek-V3's 58 MoE layers (V3 report, Sec. 3.4.1), not 32 in all."""
    by_hand = 32 * (61 - 3) * 3 * 7168 * 2048  # 32 experts, 58 MoE layers, gate/up/down of 7168 x 2048
    assert by_hand == 81_738_596_352
    shown = _leaves_out()
    assert "32 redundant experts in each of the 58 MoE layers: 81.7 billion parameters" in shown
    assert "2.55 GB on each GPU" in shown  # 81.74 GB in FP8 (8.002 bits) over the 32-GPU prefill unit
    assert "32 redundant experts in each MoE layer" in _prose()


def test_the_prediction_module_is_counted_as_deepseeks_weight_documentation_splits_it() -> None:
    """The MoE layer is 11.51 billion, the module 11.61 (with the 2h-to-h projection and three norms), as the text says."""
    attention = (
        7168 * 1536 + 1536 + 1536 * 128 * 192  # query latent, its norm, queries from the latent
        + 7168 * 576 + 512 + 512 * 128 * 256  # key/value latent and rotary key, its norm, keys and values
        + 128 * 128 * 7168  # output projection
    )  # fmt: skip
    moe = 257 * 3 * 7168 * 2048 + 256 * 7168 + 256  # 256 routed and 1 shared expert, the router and its bias
    layer = attention + moe + 2 * 7168  # and the layer's two norms
    module = layer + 2 * 7168 * 7168 + 3 * 7168
    assert (layer, module) == (11_507_286_272, 11_610_068_224)
    assert "the prediction module: 11.61 billion parameters (11.51 in its MoE layer)" in _leaves_out()
    assert "the count below is 11.61 billion, 11.51 of them in its MoE layer" in _prose()


def test_the_cache_figures_are_table_1_of_deepseeks_isca_paper() -> None:
    """70,272 B and 516,096 B per token are the package's and Table 1's; Qwen2.5 72B's 327,680 B by hand."""
    per_token = {
        key: cache_bytes(Workloads.configuration(key).architecture(), context=1, bytes_per_value=2)
        for key in ("deepseek-v3", "llama-3.1-405b")
    }
    assert per_token == {"deepseek-v3": 61 * (512 + 64) * 2, "llama-3.1-405b": 2 * 126 * 8 * 128 * 2}
    assert (61 * (512 + 64) * 2, 2 * 126 * 8 * 128 * 2, 2 * 80 * 8 * 128 * 2) == (70_272, 516_096, 327_680)
    prose = _prose()
    for figure in ("70.272 KB", "516.096 KB", "327.680 KB", "Table 1", "7.34"):
        assert figure in prose


def test_gpt_oss_120b_weighs_what_its_model_card_says() -> None:
    """gpt-oss 120B with MXFP4 experts weighs 60.8 GiB, the checkpoint size of the model card's Table 1."""
    oss = Scenarios.GptOss120BServeOnH100
    assert round(oss.weights.m_as("GiB"), 1) == 60.8
    assert "60.8 GiB of the checkpoint" in _prose()
    assert "(60.8 GiB) of weights" in _run("e1a40002", "e1a40018")


def test_the_panel_task_tells_the_student_to_type_contexts_the_slider_cannot_reach() -> None:
    """The task's 131,072, 65,536 and 32,768 tokens lie past the slider's 4,096: the task says to type them."""
    bamba = Scenarios.Bamba9BAt128KOnH100
    state = 29 * ((128 * 64 + 2 * 128) * 4 + 128 * 64 * 128) * 2  # 29 Mamba-2 layers: 62,777,344 B
    free = 0.9 * 80 * 2**30 - bamba.weights.m_as("B")  # the H100's budget after the reserve and the weights
    largest = [int(free // (3 * 2 * 8 * 128 * 2 * tokens + state)) for tokens in (131_072, 65_536, 32_768)]
    assert (
        largest == [bamba.variant(context_length=n).max_batch_size for n in (131_072, 65_536, 32_768)] == [34, 66, 124]
    )
    (context,) = [c for c in bamba.controls() if c.name == "context_length"]
    assert context.high >= 131_072 > SLIDER_MAX
    task = _text(_cells()["e1a40025"])
    assert "type 65536, then 32768, in the box beside the\nsequence-length slider" in task


def test_the_formats_bits_are_their_sources_and_the_text_says_where_to_read_them() -> None:
    """Element bits plus the block's scale (and zero point): 8.25, 4.25, 4.5, 4.15625, 4.125 bits, each with a source."""
    expected = {
        "mxfp8": (8 + 8 / 32, "OCP Microscaling Formats (MX) v1.0"),
        "mxfp4_experts": (4 + 8 / 32, "gpt-oss-120b & gpt-oss-20b Model Card"),
        "nvfp4": (4 + 8 / 16, "NVFP4"),
        "int4_awq_g128": (4 + (16 + 4) / 128, "AWQ"),
        "int4_g128_sym": (4 + 16 / 128, "GPTQ"),
        "fp8_e4m3_block128": (8 + 32 / (128 * 128), "DeepSeek-V3 Technical Report"),
    }
    for key, (bits, source) in expected.items():
        fmt = weight_format(key)
        assert (fmt.bits_per_value, source in fmt.source) == (bits, True), key
    assert "`weight_format(key).source`" in _prose()


def test_the_model_answer_prices_data_parallel_attention_from_the_layer_table() -> None:
    """DeepSeek-V3's attention weights, whole on each device: 61 x 187,107,328 = 11.4 billion, 10 GB more in FP8."""
    deepseek = Workloads.configuration("deepseek-v3")
    arch = deepseek.architecture()
    per_layer = {
        sum(row.parameters(arch.dims(1, 1)) for row in layer_weights(arch, layer) if row.block == "attention")
        for layer, _ in arch.layer_counts()
    }
    assert per_layer == {187_107_328}  # the attention hand-counted above, in the dense and the MoE layers alike
    whole = 61 * 187_107_328
    fp8 = weight_format("fp8_e4m3_block128").bytes_per_value
    assert (round(whole / 1e9, 1), round(whole * fp8 * 7 / 8 / 1e9)) == (11.4, 10)
    answer = _text(_cells()["e1a40032"])
    assert "61 layers of 187.1 million, 11.4 billion parameters: about 10 GB more per device in FP8" in answer
