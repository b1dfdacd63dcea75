"""Measurements recorded with PyTorch, so the measurement lab can be read without it.

``record()`` (needs PyTorch) runs every measurement notebook 10 shows and writes them to
``recorded.json`` beside this module, with the date, the PyTorch version and the device.
``recorded_layer(...)``, ``recorded_training_state(recipe)`` and ``recorded_hf_layer(model_type, ...)``
rebuild them, without PyTorch or transformers, as the same records ``measure_layer``,
``measure_training_state`` and ``measure_hf_layer`` return, titled with when and how they were recorded
(the Hugging Face layers also name the transformers version). ``tests/measure/test_recorded.py``
measures again and compares, so the recording cannot drift from what the code measures.
Re-record with ``python -m mlsysim_nb.measure.recorded``.

>>> layer = recorded_layer(seq_len=256, micro_batch=2, hidden=512, heads=8, dropout_mask="bool")
>>> layer.title.endswith(RECORDED_LABEL)
True
>>> round(layer.ratio, 4)
1.0003
>>> llama = recorded_hf_layer("llama", attention="sdpa")
>>> llama.measured == llama.predicted
True
"""

from __future__ import annotations

import json
import platform
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from mlsysim_nb.kinds.training.model import TrainingStateFitScenario
from mlsysim_nb.layers import layer_rows, lines
from mlsysim_nb.measure.hf import ATTENTION_KINDS, CLASSES, DTYPE_BYTES, measurement_result
from mlsysim_nb.measure.hf_results import HFMeasurement
from mlsysim_nb.measure.items import item, predicted_items
from mlsysim_nb.measure.layer import layer_scenario
from mlsysim_nb.measure.results import ItemRow, LayerMeasurement, SavedTensor, StateRow, TrainingStateMeasurement
from mlsysim_nb.measure.training import RECIPES
from mlsysim_nb.records.workloads import Workload
from mlsysim_nb.units import Q_

__all__ = [
    "HF_LAYERS",
    "HF_RECORDED_LABEL",
    "LAYERS",
    "RECORDED_LABEL",
    "RECORDING",
    "STATES",
    "RecordedHFMeasurement",
    "RecordedLayerMeasurement",
    "record",
    "recorded_hf_layer",
    "recorded_layer",
    "recorded_training_state",
]

PATH = Path(__file__).with_name("recorded.json")

#: The layer measurements notebook 10 shows: (seq_len, micro_batch, hidden, heads, dtype, attention, dropout_mask).
LAYERS: tuple[tuple[int, int, int, int, str, str, str], ...] = (
    (256, 2, 512, 8, "bfloat16", "explicit", "scaled"),
    (256, 2, 512, 8, "bfloat16", "explicit", "bool"),
    (256, 2, 512, 8, "bfloat16", "fused", "scaled"),
    (512, 1, 768, 12, "bfloat16", "explicit", "scaled"),
    (512, 1, 768, 12, "bfloat16", "fused", "scaled"),
    (128, 4, 1024, 16, "bfloat16", "explicit", "scaled"),
    (128, 4, 1024, 16, "bfloat16", "fused", "scaled"),
    (256, 1, 768, 12, "bfloat16", "fused", "scaled"),
)
#: The Hugging Face decoder layers notebook 10 shows, at ``measure_hf_layer``'s small default configuration:
#: (model_type, dtype, attention, dropout).
HF_LAYERS: tuple[tuple[str, str, str, bool], ...] = (
    ("llama", "bfloat16", "eager", False),
    ("llama", "bfloat16", "sdpa", False),
)
#: The training-state recipes recorded, at ``measure_training_state``'s default sizes.
STATES: tuple[str, ...] = tuple(RECIPES)
_STATE_SIZES = {"hidden": 64, "layers": 2}
_FIELDS = ("seq_len", "micro_batch", "hidden", "heads", "dtype", "attention", "dropout_mask")


@cache
def _data() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(PATH.read_text(encoding="utf-8"))
    return loaded


def _label(meta: dict[str, Any]) -> str:
    return f"recorded on {meta['date']} with PyTorch {meta['torch']} on a {meta['device']}"


#: When, with which PyTorch and on which device the recording was taken.
RECORDING: dict[str, str] = dict(_data()["recorded"])
#: How a recorded result is titled: "recorded on <date> with PyTorch <version> on a CPU".
RECORDED_LABEL = _label(RECORDING)


@dataclass(frozen=True, repr=False)
class RecordedLayerMeasurement(LayerMeasurement):
    """A :class:`LayerMeasurement` read from the recording: the same record, titled as recorded."""

    recorded: str

    @property
    def title(self) -> str:
        """The configuration, then when and how it was recorded."""
        return f"{super().title}, {self.recorded}"


def _key(config: dict[str, Any]) -> str:
    return "/".join(str(config[f]) for f in _FIELDS)


def recorded_layer(
    *,
    seq_len: int,
    micro_batch: int,
    hidden: int,
    heads: int,
    dtype: str = "bfloat16",
    attention: str = "explicit",
    dropout_mask: str = "scaled",
) -> RecordedLayerMeasurement:
    """The recorded ``measure_layer`` result for this configuration (no PyTorch needed).

    Raises
    ------
    KeyError
        For a configuration that was not recorded, listing those that were.
    """
    config = dict(zip(_FIELDS, (seq_len, micro_batch, hidden, heads, dtype, attention, dropout_mask), strict=True))
    layers = _data()["layers"]
    if _key(config) not in layers:
        known = "; ".join(", ".join(f"{f}={v}" for f, v in zip(_FIELDS, c, strict=True)) for c in LAYERS)
        msg = f"no recorded measurement for {_key(config)}; recorded: {known}. Install PyTorch to measure it."
        raise KeyError(msg)
    entry = layers[_key(config)]
    scenario = layer_scenario(seq_len, micro_batch, hidden, heads, dtype)
    predicted = predicted_items(scenario)
    tensors = tuple(
        SavedTensor(t["step"], t["op"], t["slot"], tuple(t["shape"]), t["dtype"], t["bytes"], t["storage_bytes"],
                    item(t["item"]) if t["item"] else None, t["attributed"])
        for t in entry["tensors"]
    )  # fmt: skip
    items = tuple(
        ItemRow(item(key), Q_(predicted[key], "byte"), Q_(measured, "byte")) for key, measured in entry["items"]
    )
    return RecordedLayerMeasurement(
        seq_len=seq_len,
        micro_batch=micro_batch,
        hidden=hidden,
        heads=heads,
        dtype=dtype,
        attention=attention,
        dropout_mask=dropout_mask,
        scenario=scenario,
        tensors=tensors,
        items=items,
        measured=Q_(entry["measured"], "byte"),
        predicted=scenario.activations("none"),
        unattributed=Q_(entry["unattributed"], "byte"),
        recorded=RECORDED_LABEL,
    )


@dataclass(frozen=True, repr=False)
class RecordedHFMeasurement(HFMeasurement):
    """An :class:`~mlsysim_nb.measure.hf_results.HFMeasurement` read from the recording, labelled as recorded."""

    recorded: str

    def __repr__(self) -> str:
        return f"{super().__repr__()[:-1]}, {self.recorded}>"


def _hf_key(model_type: str, dtype: str, attention: str, dropout: bool) -> str:
    return f"{model_type}/{dtype}/{attention}/dropout {'on' if dropout else 'off'}"


def _hf_label(meta: dict[str, Any]) -> str:
    versions = f"PyTorch {meta['torch']} and transformers {meta['transformers']}"
    return f"recorded on {meta['date']} with {versions} on a {meta['device']}"


#: How a recorded Hugging Face layer is labelled: "recorded on <date> with PyTorch <v> and transformers <v> on a CPU".
HF_RECORDED_LABEL = _hf_label(RECORDING)


def recorded_hf_layer(
    model_type: str, *, dtype: str = "bfloat16", attention: str = "sdpa", dropout: bool = False
) -> RecordedHFMeasurement:
    """The recorded ``measure_hf_layer`` result (no PyTorch or transformers needed), its repr saying so.

    The measured bytes of each row come from the recording; the predictions are the layer table's, computed
    now from the recorded configuration, so a change to the table shows against the recorded measurement.

    Raises
    ------
    KeyError
        For a layer that was not recorded, listing those that were.
    """
    data = _data()
    key = _hf_key(model_type, dtype, attention, dropout)
    if key not in data.get("hf_layers", {}):
        known = "; ".join(_hf_key(*c) for c in HF_LAYERS)
        msg = f"no recorded measurement for {key}; recorded: {known}. Install the measure extra to measure it."
        raise KeyError(msg)
    entry = data["hf_layers"][key]
    workload = Workload.from_hf_config(entry["config"], name=f"small random {model_type}")
    arch = workload.architecture()
    dims, width = arch.dims(entry["seq_len"], entry["micro_batch"]), DTYPE_BYTES[dtype]
    rows = layer_rows(arch, "transformers", ATTENTION_KINDS[attention], "cpu")
    predicted = lines(rows, dims, dtype_bytes=width, device="cpu")
    paper = lines(layer_rows(arch, "megatron", ATTENTION_KINDS[attention]), dims, dtype_bytes=width)
    info = {"dtype": dtype, "attention": attention, "dropout": dropout, "seq_len": entry["seq_len"],
            "micro_batch": entry["micro_batch"], "layers": 1}  # fmt: skip
    measured = dict(entry["rows"]) | {"(unattributed)": entry["unattributed"]}
    live = measurement_result(CLASSES[model_type], workload, info, predicted=predicted, paper=paper, measured=measured,
                   total=entry["measured"])  # fmt: skip
    fields = {f: getattr(live, f) for f in live.__dataclass_fields__}
    return RecordedHFMeasurement(**fields, recorded=HF_RECORDED_LABEL)


def recorded_training_state(recipe: str = "fp32") -> TrainingStateMeasurement:
    """The recorded ``measure_training_state(recipe)`` result (no PyTorch needed), its label saying so."""
    states = _data()["states"]
    if recipe not in states:
        msg = f"no recorded training state for {recipe!r}; recorded: {', '.join(map(repr, states))}"
        raise KeyError(msg)
    entry = states[recipe]
    r = RECIPES[recipe]
    workload = Workload(
        name=f"{_STATE_SIZES['layers']} GPT layers (h={_STATE_SIZES['hidden']})",
        parameters=entry["parameters"],
        layers=_STATE_SIZES["layers"],
    )
    scenario = TrainingStateFitScenario(workload=workload, **r.scenario_inputs())
    model = {
        "weights": scenario.weights,
        "gradients": scenario.gradients,
        "master_weights": scenario.master_weights,
        "optimizer_state": scenario.optimizer_state,
    }
    rows = tuple(
        StateRow(name, label, model.get(name), Q_(measured, "byte")) for name, label, measured in entry["rows"]
    )
    return TrainingStateMeasurement(
        f"{r.label}, {RECORDED_LABEL}", entry["parameters"], entry["parameter_tensors"], scenario, rows
    )


def _layer_entry(m: LayerMeasurement) -> dict[str, Any]:
    return {
        "tensors": [
            {
                "step": t.step,
                "op": t.op,
                "slot": t.slot,
                "shape": list(t.shape),
                "dtype": t.dtype,
                "bytes": t.bytes,
                "storage_bytes": t.storage_bytes,
                "item": t.item.key if t.item else None,
                "attributed": t.attributed,
            }
            for t in m.tensors
        ],
        "items": [[row.item.key, int(row.measured.m_as("byte"))] for row in m.items],
        "measured": int(m.measured.m_as("byte")),
        "unattributed": int(m.unattributed.m_as("byte")),
    }


def _hf_entry(model_type: str, dtype: str, attention: str, dropout: bool) -> dict[str, Any]:
    from mlsysim_nb.measure.hf import SIZES, measure_hf_layer, small_config

    m = measure_hf_layer(model_type, dtype=dtype, attention=attention, dropout=dropout)
    config = small_config(model_type, dropout=dropout, layers=1, seq_len=m.seq_len).to_dict()
    return {
        "config": json.loads(json.dumps(config, default=str)),
        "seq_len": m.seq_len,
        "micro_batch": m.micro_batch,
        "sizes": SIZES,
        "rows": [[r.row.key, r.measured] for r in m.rows],
        "measured": m.measured,
        "unattributed": m.unattributed,
    }


def record(path: Path = PATH) -> dict[str, Any]:
    """Measure every configuration in :data:`LAYERS` and :data:`STATES` (needs PyTorch) and write them to ``path``."""
    import torch

    from mlsysim_nb.measure.layer import measure_layer
    from mlsysim_nb.measure.training import measure_training_state

    layers = {}
    for s, b, h, a, dtype, attention, mask in LAYERS:
        config = {"seq_len": s, "micro_batch": b, "hidden": h, "heads": a, "dtype": dtype, "attention": attention,
                  "dropout_mask": mask}  # fmt: skip
        measured = measure_layer(
            seq_len=s, micro_batch=b, hidden=h, heads=a, dtype=dtype, attention=attention, dropout_mask=mask
        )
        layers[_key(config)] = _layer_entry(measured)
    hf_layers = {}
    for model_type, dtype, attention, dropout in HF_LAYERS:
        hf_layers[_hf_key(model_type, dtype, attention, dropout)] = _hf_entry(model_type, dtype, attention, dropout)
    states = {}
    for recipe in STATES:
        m = measure_training_state(recipe, **_STATE_SIZES)
        states[recipe] = {
            "parameters": m.parameters,
            "parameter_tensors": m.parameter_tensors,
            "rows": [[r.name, r.label, int(r.measured.m_as("byte"))] for r in m.rows],
        }
    import transformers

    meta = {
        "date": datetime.now(UTC).date().isoformat(),
        "torch": str(torch.__version__),
        "transformers": str(transformers.__version__),
        "device": "CPU",
        "python": platform.python_version(),
    }
    data = {"recorded": meta, "layers": layers, "states": states, "hf_layers": hf_layers}
    path.write_text(_dump(data), encoding="utf-8")
    return data


def _dump(data: dict[str, Any]) -> str:
    """JSON with one saved tensor, line item or state row per line: short, and readable in a diff."""

    def block(entries: dict[str, Any]) -> str:
        parts = []
        for name, entry in entries.items():
            fields = []
            for field, value in entry.items():
                if isinstance(value, list) and value and isinstance(value[0], dict | list):
                    rows = ",\n".join(f"    {json.dumps(v)}" for v in value)
                    fields.append(f"   {json.dumps(field)}: [\n{rows}\n   ]")
                else:
                    fields.append(f"   {json.dumps(field)}: {json.dumps(value)}")
            parts.append(f"  {json.dumps(name)}: {{\n" + ",\n".join(fields) + "\n  }")
        return "{\n" + ",\n".join(parts) + "\n }"

    return (
        f'{{\n "recorded": {json.dumps(data["recorded"])},\n "layers": {block(data["layers"])},\n'
        f' "states": {block(data["states"])},\n "hf_layers": {block(data["hf_layers"])}\n}}\n'
    )


if __name__ == "__main__":  # pragma: no cover - run by hand to re-record
    written = record()
    counts = f"{len(written['layers'])} layers, {len(written['states'])} states, {len(written['hf_layers'])} HF layers"
    print(f"wrote {PATH}: {counts}, {_label(written['recorded'])}")  # noqa: T201
