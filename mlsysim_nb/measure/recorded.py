"""Measurements recorded with PyTorch, so the measurement lab can be read without it.

``record()`` (needs PyTorch) runs every measurement notebook 10 shows and writes them to
``recorded.json`` beside this module, with the date, the PyTorch version and the device.
``recorded_layer(...)`` and ``recorded_training_state(recipe)`` rebuild them, without PyTorch, as
the same records ``measure_layer`` and ``measure_training_state`` return, titled with when and how
they were recorded. ``tests/measure/test_recorded.py`` measures again and compares, so the recording
cannot drift from what the code measures. Re-record with ``python -m mlsysim_nb.measure.recorded``.

>>> layer = recorded_layer(seq_len=256, micro_batch=2, hidden=512, heads=8, dropout_mask="bool")
>>> layer.title.endswith(RECORDED_LABEL)
True
>>> round(layer.ratio, 4)
1.0003
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
from mlsysim_nb.measure.items import item, predicted_items
from mlsysim_nb.measure.layer import layer_scenario
from mlsysim_nb.measure.results import ItemRow, LayerMeasurement, SavedTensor, StateRow, TrainingStateMeasurement
from mlsysim_nb.measure.training import RECIPES
from mlsysim_nb.records.workloads import Workload
from mlsysim_nb.units import Q_

__all__ = [
    "LAYERS",
    "RECORDED_LABEL",
    "RECORDING",
    "STATES",
    "RecordedLayerMeasurement",
    "record",
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
    states = {}
    for recipe in STATES:
        m = measure_training_state(recipe, **_STATE_SIZES)
        states[recipe] = {
            "parameters": m.parameters,
            "parameter_tensors": m.parameter_tensors,
            "rows": [[r.name, r.label, int(r.measured.m_as("byte"))] for r in m.rows],
        }
    meta = {
        "date": datetime.now(UTC).date().isoformat(),
        "torch": str(torch.__version__),
        "device": "CPU",
        "python": platform.python_version(),
    }
    data = {"recorded": meta, "layers": layers, "states": states}
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
        f' "states": {block(data["states"])}\n}}\n'
    )


if __name__ == "__main__":  # pragma: no cover - run by hand to re-record
    written = record()
    counts = f"{len(written['layers'])} layers, {len(written['states'])} states"
    print(f"wrote {PATH}: {counts}, {_label(written['recorded'])}")  # noqa: T201
