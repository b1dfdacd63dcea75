"""The recorded measurements notebook 10 shows without PyTorch: still what a fresh measurement gives, and labelled.

The first tests need no PyTorch; those that measure take the ``torch`` fixture (skipped locally without the
``measure`` extra, failed in CI), so a recording that drifts from the code fails ``make test``.
"""

from __future__ import annotations

import ast
import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest

from mlsysim_nb.measure import measure_layer, measure_training_state
from mlsysim_nb.measure.recorded import (
    HF_LAYERS,
    LAYERS,
    RECORDED_LABEL,
    RECORDING,
    STATES,
    recorded_hf_layer,
    recorded_layer,
    recorded_training_state,
)

ROOT = Path(__file__).resolve().parents[2]
FIELDS = ("seq_len", "micro_batch", "hidden", "heads", "dtype", "attention", "dropout_mask")
CONFIGS = [dict(zip(FIELDS, values, strict=True)) for values in LAYERS]


def _name(config: dict[str, Any]) -> str:
    return "-".join(str(v) for v in config.values())


def test_the_recording_says_when_with_what_and_where() -> None:
    """The label names the date, the PyTorch version and the CPU; every recorded result carries it."""
    assert re.fullmatch(r"recorded on \d{4}-\d\d-\d\d with PyTorch \d+\.\d+\S* on a CPU", RECORDED_LABEL)
    assert RECORDING["device"] == "CPU"
    layer = recorded_layer(seq_len=256, micro_batch=2, hidden=512, heads=8)
    assert repr(layer).startswith(f"<LayerMeasurement: {layer.title}:")
    assert layer.title.endswith(RECORDED_LABEL)
    assert RECORDED_LABEL in layer._repr_html_()
    assert all(RECORDED_LABEL in repr(recorded_training_state(r)) for r in STATES)


def test_an_unrecorded_shape_says_which_are_recorded() -> None:
    """Asking for a shape that was not recorded names the recorded ones and says PyTorch would measure it."""
    with pytest.raises(KeyError, match=r"no recorded measurement for 1024/1/512/8.*Install PyTorch"):
        recorded_layer(seq_len=1024, micro_batch=1, hidden=512, heads=8)
    with pytest.raises(KeyError, match="no recorded training state"):
        recorded_training_state("fp8")


def test_every_shape_notebook_10_measures_is_recorded() -> None:
    """Each measure(...) / recorded_layer(...) call in notebook 10 asks for a recorded configuration."""
    cells = json.loads((ROOT / "notebooks" / "10_measuring_what_the_model_predicts.ipynb").read_text())["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    calls = re.findall(r"(?:measure|recorded_layer)\((seq_len=[^)]*)\)", code)
    assert len(calls) >= 6
    for call in calls:
        if "seq_len=s" in call:  # the loop over the three shapes
            continue
        kwargs = dict(part.strip().split("=") for part in call.split(","))
        names = [v for v in kwargs.values() if v.isidentifier()]  # a comprehension's variable: each value it takes
        loops = [ast.literal_eval(re.search(rf"for {n} in (\([^)]*\))", code).group(1)) for n in names]  # type: ignore[union-attr]
        for values in itertools.product(*loops):
            given = dict(zip(names, values, strict=True))
            recorded_layer(
                **{k: given.get(v, v.strip('"') if v.startswith('"') else v) for k, v in kwargs.items()}
                | {k: int(v) for k, v in kwargs.items() if v.isdigit()}
            )


@pytest.mark.measure
@pytest.mark.parametrize("config", CONFIGS, ids=_name)
def test_the_recorded_layer_is_a_fresh_measurement(torch: Any, config: dict[str, Any]) -> None:
    """Every saved tensor, line item and total of the recording equals what measure_layer measures now."""
    live, recorded = measure_layer(**config), recorded_layer(**config)
    assert recorded.tensors == live.tensors
    assert recorded.items == live.items
    assert (recorded.measured, recorded.predicted, recorded.unattributed) == (
        live.measured,
        live.predicted,
        live.unattributed,
    )
    assert recorded._repr_text_() == live._repr_text_().replace(live.title, recorded.title)


@pytest.mark.measure
@pytest.mark.parametrize("recipe", STATES)
def test_the_recorded_training_state_is_a_fresh_measurement(torch: Any, recipe: str) -> None:
    """Every row of the recorded AdamW step equals the one measured now."""
    live, recorded = measure_training_state(recipe), recorded_training_state(recipe)
    assert (recorded.parameters, recorded.parameter_tensors) == (live.parameters, live.parameter_tensors)
    assert recorded.rows == live.rows
    assert recorded._repr_text_() == live._repr_text_().replace(live.recipe, recorded.recipe)


def _saved_bytes(torch: Any, module: Any, x: Any) -> int:
    """Distinct storages autograd saves in one forward pass of ``module``, parameters excluded."""
    params = {int(p.untyped_storage().data_ptr()) for p in (*module.parameters(), *module.buffers())}
    seen: dict[int, int] = {}

    def pack(t: Any) -> Any:
        if int(t.untyped_storage().data_ptr()) not in params:
            seen[int(t.untyped_storage().data_ptr())] = int(t.untyped_storage().nbytes())
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        module(x)
    return sum(seen.values())


@pytest.mark.measure
def test_pytorchs_own_encoder_layer_keeps_what_notebook_10_says(torch: Any) -> None:
    """torch.nn.TransformerEncoderLayer at the three shapes keeps the range of ratios notebook 10 prints."""
    ratios = []
    for s, b, h, a in [(256, 2, 512, 8), (512, 1, 768, 12), (128, 4, 1024, 16)]:
        torch.manual_seed(0)
        layer = torch.nn.TransformerEncoderLayer(
            h, a, dim_feedforward=4 * h, dropout=0.1, activation="gelu", norm_first=True
        ).to(torch.bfloat16)
        x = torch.randn(s, b, h, dtype=torch.bfloat16, requires_grad=True)
        ratios.append(_saved_bytes(torch, layer, x) / (s * b * h * (34 + 5 * a * s / h)))
    stated = f"{min(ratios):.2f} to {max(ratios):.2f}"
    assert stated == "1.68 to 1.97"
    cells = json.loads((ROOT / "notebooks" / "10_measuring_what_the_model_predicts.ipynb").read_text())["cells"]
    text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    assert text.count(stated) == 2  # where the layer is named, and in the summary


@pytest.mark.measure
def test_a_frozen_mlp_drops_ten_sbh_as_notebook_4_says(torch: Any) -> None:
    """With the output projection and both MLP matrices frozen, a fused GPT layer keeps exactly 10 sbh less."""
    from mlsysim_nb.measure._layer import GPTLayer

    s, b, h, a = 256, 2, 512, 8

    def kept(frozen: tuple[str, ...]) -> float:
        torch.manual_seed(0)
        layer = GPTLayer(h, a, attention="fused", dropout_mask="bool").to(torch.bfloat16)
        for name, p in layer.named_parameters():
            p.requires_grad_(name.split(".")[0] not in frozen)
        x = torch.randn(s, b, h, dtype=torch.bfloat16, requires_grad=True)
        return _saved_bytes(torch, layer, x) / (s * b * h)

    assert kept(()) - kept(("proj", "fc1", "fc2")) == 10
    cells = json.loads((ROOT / "notebooks" / "04_adapters.ipynb").read_text())["cells"]
    assert any("exactly $10\\,sbh$ less" in "".join(c["source"]) for c in cells)


@pytest.mark.measure
def test_a_plain_llama_style_layer_keeps_the_tally_and_its_fp32_norms(torch: Any) -> None:
    """Grouped-query attention, a 3.5h gated MLP and F.rms_norm in bf16: 7 + 30 sbh as tallied, 53 sbh in all."""
    from torch import nn
    from torch.nn import functional

    s, b, h, a, kv = 256, 2, 512, 8, 2  # K and V at a quarter of the heads, as Llama 3.1 8B's 8 of 32
    f, d = int(3.5 * h), h // a

    class Layer(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w1, self.w2 = nn.Parameter(torch.ones(h)), nn.Parameter(torch.ones(h))
            self.q, self.k, self.v, self.o = (nn.Linear(h, n, bias=False) for n in (h, kv * d, kv * d, h))
            self.gate, self.up, self.down = nn.Linear(h, f, bias=False), nn.Linear(h, f, bias=False), nn.Linear(f, h)

        def heads(self, t: Any, n: int) -> Any:
            return t.view(s, b, n, d).permute(1, 2, 0, 3)

        def forward(self, x: Any) -> Any:
            y = functional.rms_norm(x, (h,), self.w1, 1e-5)
            q, k, v = self.heads(self.q(y), a), self.heads(self.k(y), kv), self.heads(self.v(y), kv)
            out = functional.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
            x = x + self.o(out.permute(2, 0, 1, 3).reshape(s, b, h))
            y = functional.rms_norm(x, (h,), self.w2, 1e-5)
            return x + self.down(functional.silu(self.gate(y)) * self.up(y))

    torch.manual_seed(0)
    layer = Layer().to(torch.bfloat16)
    x = torch.randn(s, b, h, dtype=torch.bfloat16, requires_grad=True)
    per_sbh = _saved_bytes(torch, layer, x) / (s * b * h)
    assert round(per_sbh) == 53
    fp32_norms = 2 * (4 + 4)  # each norm keeps its FP32 input and FP32 normalised tensor
    tally = 2 + 2 + 2 * 2 * kv / a + 2 + 2 + 4 * 2 * f / h  # attention 7, MLP 30
    assert abs(per_sbh - fp32_norms - tally) < 0.1  # the rest is statistics and the log-sum-exp


def test_the_recorded_hf_layers_are_labelled_and_agree_with_the_table() -> None:
    """Each recorded Hugging Face layer names when and with what it was recorded, and the table predicts it to 1 %."""
    for model_type, dtype, attention, dropout in HF_LAYERS:
        m = recorded_hf_layer(model_type, dtype=dtype, attention=attention, dropout=dropout)
        assert re.search(r"recorded on \d{4}-\d\d-\d\d with PyTorch \S+ and transformers \S+ on a CPU>$", repr(m))
        assert abs(m.ratio - 1) <= 0.01
        assert m.measured == sum(r.measured for r in m.rows) + m.unattributed
    with pytest.raises(KeyError, match=r"no recorded measurement for gpt2/.*Install the measure extra"):
        recorded_hf_layer("gpt2")


@pytest.mark.measure
@pytest.mark.parametrize("config", HF_LAYERS, ids=lambda c: "-".join(map(str, c)))
def test_the_recorded_hf_layer_is_a_fresh_measurement(transformers: Any, config: tuple[str, str, str, bool]) -> None:
    """Every row, total and prediction of a recorded Hugging Face layer equals what measure_hf_layer measures now."""
    from mlsysim_nb.measure import measure_hf_layer

    model_type, dtype, attention, dropout = config
    live = measure_hf_layer(model_type, dtype=dtype, attention=attention, dropout=dropout)
    recorded = recorded_hf_layer(model_type, dtype=dtype, attention=attention, dropout=dropout)
    assert recorded.rows == live.rows
    assert (recorded.measured, recorded.predicted, recorded.unattributed, recorded.paper) == (
        live.measured,
        live.predicted,
        live.unattributed,
        live.paper,
    )
    assert recorded.paper_rows == live.paper_rows
    assert repr(recorded).startswith(repr(live)[:-1])
