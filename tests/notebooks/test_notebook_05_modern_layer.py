"""Notebook 05's modern-layer section: every claim its prose makes about Llama 3.1 8B holds in the layer table."""

from __future__ import annotations

import json
from pathlib import Path

from mlsysim_nb import Workload, Workloads
from mlsysim_nb.layers import Architecture, layer_saved_bytes, output_saved_bytes
from mlsysim_nb.records.models import read_configuration

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "05_activations.ipynb"
S, B = 8192, 1


def _prose() -> str:
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def _layer(arch: Architecture, strategy: str, attention: str = "eager") -> float:
    return layer_saved_bytes(arch, seq_len=S, micro_batch=B, dtype_bytes=2, strategy=strategy, attention=attention)


def test_llama_and_the_gpt_style_layer_of_its_width() -> None:
    """Same 34 sbh with the scores not stored, under half with nothing recomputed, 2 sbh under full recomputation."""
    llama = Workloads.configuration("llama-3.1-8b").architecture()
    gpt = Architecture(hidden_dim=llama.hidden_dim, heads=llama.heads)
    sbh = S * B * llama.hidden_dim
    assert _layer(llama, "selective") == _layer(gpt, "selective") == 34 * sbh
    assert _layer(llama, "none") < 0.5 * _layer(gpt, "none")
    assert _layer(llama, "full") == _layer(gpt, "full") == 2 * sbh
    # the softmax output alone (2 as²b) against softmax, mask and dropout output (5 as²b)
    scores = 2 * llama.heads * S * S * B
    assert _layer(llama, "none") - _layer(llama, "selective") == scores
    assert _layer(gpt, "none") - _layer(gpt, "selective") == 2.5 * scores
    prose = _prose()
    assert "**exactly the same linear term**, $34\\,sbh$" in prose
    assert "less than half" in prose


def test_the_output_layer_against_the_layers() -> None:
    """FP32 logits and loss: about twice the layers' inputs under full recomputation, an eighth without it."""
    workload = Workloads.configuration("llama-3.1-8b")
    llama = workload.architecture()
    output = output_saved_bytes(llama, seq_len=S, micro_batch=B, dtype_bytes=2)
    full = workload.layers * _layer(llama, "full")
    fused = workload.layers * _layer(llama, "none", "fused")
    assert round(output / full, 1) == 2.0
    assert round(fused / output) == 8
    assert output > full and output < fused
    prose = _prose()
    assert "about twice what all 32 layers keep **under full\nrecomputation**" in prose
    assert "it is about an eighth" in prose


def test_exercise_5_6_grades_against_the_downloaded_config() -> None:
    """The Qwen2.5 7B layer of exercise 5.6: its published keys give 44.3 sbh, and the model answer agrees."""
    config = read_configuration("qwen2.5-7b")["config"]
    qwen = Workload.from_hf_config(config).architecture()
    h, a, kv, f = (
        config[k] for k in ("hidden_size", "num_attention_heads", "num_key_value_heads", "intermediate_size")
    )
    by_hand = (2 + 2 + 2 + 2 + 2 * 2 * kv / a + 2 + 2 + 3 * 2 * f / h) * 4096 * h
    table = layer_saved_bytes(qwen, seq_len=4096, micro_batch=1, dtype_bytes=2, strategy="selective")
    assert abs(by_hand / table - 1) < 1e-12
    assert round(table / (4096 * h), 1) == 44.3
