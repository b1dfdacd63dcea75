"""One line that answers a scenario's question, for ``repr`` and the top of the HTML."""

from __future__ import annotations

from typing import Any

from mlsysim_nb.errors import NotApplicableError

__all__ = ["format_bytes", "recipe", "summary_line"]

_WIDTH_NAMES = {4: "FP32", 2: "16-bit", 1: "FP8"}
_OPTIMIZER_NAMES = {8: "Adam", 4: "SGD + momentum", 2: "8-bit Adam", 0: "plain SGD"}


def format_bytes(n: float, unit: str = "GB") -> str:
    """``24000000000`` -> ``"24.0 GB"`` (three significant digits, fixed unit)."""
    scale = {"GB": 1e9, "GiB": 2**30, "MB": 1e6, "MiB": 2**20, "TB": 1e12, "B": 1}[unit]
    value = n / scale
    if value != 0 and abs(value) < 0.1:
        return f"{value:.3g} {unit}"
    return f"{value:,.1f} {unit}"


def recipe(s: Any) -> str:
    """``"FP32 + Adam"``, ``"16-bit + FP32 master + Adam"``, with ``+ LoRA`` in adapter mode."""
    value = s.magnitude("bytes_per_value")
    parts = [_WIDTH_NAMES.get(value, f"{value:g} B")]
    if s.master_bytes_per_parameter is not None:
        master = s.magnitude("master_bytes_per_parameter")
        parts.append(f"{_WIDTH_NAMES.get(master, f'{master:g} B')} master")
    opt = s.magnitude("optimizer_bytes_per_parameter")
    parts.append(_OPTIMIZER_NAMES.get(opt, f"{opt:g} B optimizer"))
    if s.adapter_mode:
        parts.append("adapters")
    return " + ".join(parts)


def _training(s: Any) -> str:
    head = f"{s.workload.name}, {recipe(s)}"
    total = s.magnitude("total")
    if s.hardware is None:
        return f"{head}: {format_bytes(total)} of parameter state (no hardware to fit against)"
    cap, share = s.magnitude("capacity"), s.magnitude("capacity_share")
    verdict = "fits" if s.fits else "does not fit"
    line = f"{head} on {s.hardware.name}: {format_bytes(total)} of {format_bytes(cap)} ({100 * share:.1f} %), {verdict}"
    if s.activations is not None:
        train = s.magnitude("training_total")
        multiple = s.magnitude("training_capacity_multiple")
        line += f"; with activations {format_bytes(train)} ({100 * multiple:.1f} %)"
    return line


def _activation(s: Any) -> str:
    parts = []
    for strategy in ("none", "selective", "full"):
        try:
            parts.append(f"{strategy} {format_bytes(s.magnitude('activations_' + strategy))}")
        except NotApplicableError:
            parts.append(f"{strategy} n/a")
    if s.checkpoint_segments is not None:
        parts.append(f"{s.checkpoint_segments} segments {format_bytes(s.magnitude('checkpointed_activations'))}")
    head = f"{s.workload.name}, micro-batch {s.micro_batch} × {s.magnitude('sequence')} tokens"
    return f"{head}: " + ", ".join(parts)


def _sweep(s: Any) -> str:
    from mlsysim_nb.formatting import format_magnitude

    swept = [name for name, value in s.inputs().items() if hasattr(getattr(value, "magnitude", value), "shape")]
    name = "training_total" if getattr(s, "activations", None) is not None else "total"
    if not hasattr(s, "bytes_per_value"):
        name = "activations_selective"
    try:
        value = format_magnitude("byte", s.magnitude(name))
    except Exception:  # noqa: BLE001 - a summary must never raise
        value = "n/a"
    return f"{s.workload.name}, a sweep over {', '.join(swept)}: {name} {value}"


def summary_line(s: Any) -> str:
    """The scenario's answer in one line."""
    from mlsysim_nb.scenarios import TrainingStateFitScenario

    if s.is_sweep:
        return _sweep(s)
    if isinstance(s, TrainingStateFitScenario):
        return _training(s)
    return _activation(s)
