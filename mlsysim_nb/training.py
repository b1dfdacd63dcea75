"""``TrainingStateFitScenario``: a model's training state against one accelerator's memory."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from mlsysim_nb.base import Scenario, changed_fields, derived, is_array
from mlsysim_nb.errors import FieldError, NotApplicableError
from mlsysim_nb.fields import VALUE_WIDTHS, check_count, check_quantity, knob
from mlsysim_nb.formatting import capacity_text, format_bytes, format_share
from mlsysim_nb.hardware import HardwareNode
from mlsysim_nb.physics import TRAINING_NAMES, evaluate, with_equations
from mlsysim_nb.presentation import Headline, MemoryChart, SectionSpec, Verdict
from mlsysim_nb.units import Q_
from mlsysim_nb.workloads import Workload, check_workload, workload_rows

__all__ = ["TrainingStateFitScenario"]

_OPTIMIZERS = (("Adam/AdamW (8 B)", 8), ("SGD + momentum (4 B)", 4), ("8-bit Adam (2 B)", 2), ("plain SGD (0 B)", 0))

_NEEDS_HARDWARE = "hardware (this scenario has hardware=None)"
_NEEDS_ACTIVATIONS = "activations (the saved activations at batch_size; this scenario has none)"
_NEEDS_BATCH = "batch_size (the batch at which the activations are stated; this scenario has none)"
_SHAPE = ("adapter_rank", "adapted_matrices", "adapter_in_dim", "adapter_out_dim")
_SHAPE_RULE = "adapter parameters = layers · adapted_matrices · adapter_rank · (adapter_in_dim + adapter_out_dim)"
_NEEDS_ADAPTERS = "adapters (adapter_parameters, or adapter_rank and its shape)"


#: Example storage bandwidth for the checkpoint-write step (a datacentre NVMe drive).
EXAMPLE_WRITE_BANDWIDTH = Q_(5, "GB/s")

_WIDTH_NAMES = {4: "FP32", 2: "16-bit", 1: "FP8"}
_OPTIMIZER_NAMES = {8: "Adam", 4: "SGD + momentum", 2: "8-bit Adam", 0: "plain SGD"}

_S = SectionSpec
_SECTIONS = (
    _S(
        "Parameter state",
        (
            ("weights", "weights"),
            ("gradients", "gradients"),
            ("optimizer_state", "optimizer_state"),
            ("optimizer_values_per_parameter", "optimizer_values_per_parameter"),
            ("master_weights", "master_weights"),
            ("bytes_per_trained_parameter", "bytes_per_trained_parameter"),
            ("total", "total"),
            ("copies", "copies"),
            ("frozen_share", "frozen_share"),
        ),
        "total",
    ),
    _S(
        "Adapters",
        (
            ("adapter_count", "adapter_count"),
            ("adapter_weights", "adapter_weights"),
            ("adapter_gradients", "adapter_gradients"),
            ("adapter_master", "adapter_master"),
            ("adapter_optimizer_state", "adapter_optimizer_state"),
            ("adapter_state", "adapter_state"),
            ("adapter_fraction", "adapter_fraction"),
            ("full_state", "full_state"),
            ("adapter_saved", "adapter_saved"),
            ("adapter_reduction", "adapter_reduction"),
            ("adapter_kept_share", "adapter_kept_share"),
            ("adapter_reduction_ceiling", "adapter_reduction_ceiling"),
        ),
        "adapter_state",
        when="adapter_mode",
    ),
    _S("Fit against the device", (("fits", "fits"), ("capacity_share", "capacity_share")), "capacity_share"),
    _S(
        "Activations and batch",
        (
            ("training_total", "training_total"),
            ("training_fits", "training_fits"),
            ("training_copies", "training_copies"),
            ("training_capacity_multiple", "training_capacity_multiple"),
            ("resident_batch_limit", "resident_batch_limit"),
            ("max_resident_batch", "max_resident_batch"),
            ("activations_at(2 × batch_size)", "activations_at"),
        ),
        "training_total",
        when="has_activations",
    ),
    _S(
        "Checkpoint and optimizer update",
        (
            ("checkpoint", "checkpoint"),
            ("checkpoint_write_time(5 GB/s)", "checkpoint_write_time"),
            ("updated_bytes_per_parameter", "updated_bytes_per_parameter"),
            ("update_bytes_per_parameter", "update_bytes_per_parameter"),
            ("update_traffic", "update_traffic"),
            ("update_time", "update_time"),
        ),
        "update_time",
    ),
    _S(
        "What an adapter run saves and moves",
        (
            ("adapter_checkpoint", "adapter_checkpoint"),
            ("adapter_update_traffic", "adapter_update_traffic"),
            ("adapter_update_time", "adapter_update_time"),
        ),
        "adapter_update_time",
        when="adapter_mode",
    ),
)
_NOTES = (
    (
        "Equation",
        (
            "Parameter state sums weights, gradients, optimizer state and an optional master copy; "
            "in adapter mode the base weights stay frozen and only the adapters carry training state."
        ),
    ),
    (
        "Assumptions",
        (
            "Bytes per value and per state, and the activation budget, are supplied; "
            "activation storage scales linearly with batch."
        ),
    ),
    (
        "Excludes",
        "Runtime workspaces, allocator reserve, optimizer-specific extra temporaries, and capacity safety margins.",
    ),
    (
        "How the model counts",
        (
            "gradients, optimizer_state, checkpoint, update_traffic and update_time are full-model figures even in "
            "adapter mode (an adapter run's own are the adapter_* rows); the update traffic counts the gradient read "
            "and the updated copy's read and write, not the 16-bit working copy a mixed-precision step also writes; "
            "the resident batch limit is negative, not clamped, when the state alone overflows."
        ),
    ),
)
_COMPARISON_ROWS = (
    "bytes_per_trained_parameter",
    "weights",
    "total",
    "training_total",
    "capacity_share",
    "fits",
    "training_fits",
    "max_resident_batch",
    "checkpoint",
    "update_traffic",
    "update_time",
    "adapter_checkpoint",
    "adapter_update_traffic",
)


def _show_counts(value: Any) -> str:
    return f"{float(np.max(value)):,.0f}"


def _blamed(given: list[str]) -> str:
    """The shape field a too-large adapter is blamed on: the one this ``variant()`` changed, else the rank."""
    changed = [name for name in given if name in changed_fields()]
    return changed[0] if changed else "adapter_rank"


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class TrainingStateFitScenario(Scenario):
    """Weights, gradients and optimizer state of ``workload`` at one precision, against ``hardware``'s memory.

    ``bytes_per_value`` stores each weight and gradient; the optimizer keeps
    ``optimizer_bytes_per_parameter`` (two FP32 values for Adam, one for SGD
    with momentum). An optional master copy adds ``master_bytes_per_parameter``.
    In adapter mode (``adapter_parameters``, or ``adapter_rank`` with the
    adapter shape) the base weights stay frozen and only the adapters carry
    gradients, master copy and optimizer state. Saved activations are an input
    (``activations`` at ``batch_size``), so parameter-state fit (``fits``) and
    total training fit (``training_capacity_multiple``) are different questions.

    Assumptions: bytes per value and state and the activation budget are
    supplied; activation storage scales linearly with batch.
    Excludes: runtime workspaces, allocator reserve, optimizer-specific extra
    temporaries, and capacity safety margins.

    Examples
    --------
    >>> from mlsysim_nb import Scenarios
    >>> s = Scenarios.Gpt2Fp32AdamOnH100
    >>> s.weights.to("byte").magnitude > 0
    True
    >>> s.total.to("GB"), round(s.capacity_share, 3), s.fits
    (<Quantity(24.0, 'gigabyte')>, 0.279, True)
    """

    workload: Workload
    hardware: HardwareNode | None = None
    bytes_per_value: Any = knob(
        kind="bytes", label="value width", high=8, control="dropdown", choices=VALUE_WIDTHS,
        help="bytes per weight and gradient value",
    )  # fmt: skip
    optimizer_bytes_per_parameter: Any = knob(
        kind="bytes", label="optimizer state per parameter", positive=False, high=32, control="dropdown",
        choices=_OPTIMIZERS, help="optimizer state bytes per trained parameter",
    )  # fmt: skip
    batch_size: int | None = knob(
        None, kind="count", label="batch size", high=2**20, optional=True, control="log",
        help="sequences per step; the activations are stated at this batch",
    )  # fmt: skip
    activations: Any = knob(
        None, kind="bytes", label="saved activations at batch_size", positive=False, high=1e18, optional=True
    )
    master_bytes_per_parameter: Any = knob(None, kind="bytes", label="master copy per parameter", high=8, optional=True)
    adapter_parameters: int | None = knob(
        None, kind="count", label="adapter parameters", low=0, high=10**15, optional=True
    )
    adapter_rank: int | None = knob(None, kind="count", label="adapter rank", high=65536, optional=True, control="log")
    adapted_matrices: int | None = knob(
        None, kind="count", label="adapted matrices per layer", high=64, optional=True, control="int"
    )
    adapter_in_dim: int | None = knob(None, kind="count", label="adapter input width", high=2**20, optional=True)
    adapter_out_dim: int | None = knob(None, kind="count", label="adapter output width", high=2**20, optional=True)
    name: str = dataclasses.field(default="", compare=False)
    description: str = dataclasses.field(default="", compare=False)

    FORMULA_NAMES: ClassVar[tuple[str, ...]] = TRAINING_NAMES

    def __post_init__(self) -> None:
        o = type(self).__name__
        workload = check_workload(o, self.workload)
        if self.hardware is not None and not isinstance(self.hardware, HardwareNode):
            raise FieldError(o, "hardware", f"must be a HardwareNode or None, got {type(self.hardware).__name__}")
        env = self._check_fields()
        params = float(workload.parameters.magnitude)
        env["parameters"] = params
        env["layers"] = workload.layers
        env["has_master"] = self.master_bytes_per_parameter is not None
        env["has_activations"] = self.activations is not None
        if env["master_bytes_per_parameter"] is None:
            env["master_bytes_per_parameter"] = 0
        self._check_adapters(o, env, params)
        if self.hardware is None:
            env["capacity"] = env["bandwidth"] = None
        else:
            env["capacity"] = self.hardware.memory._capacity_bytes  # noqa: SLF001 - converted once in Memory
            env["bandwidth"] = self.hardware.memory._bandwidth_bytes_per_second  # noqa: SLF001
        needs = {
            "capacity": _NEEDS_HARDWARE,
            "bandwidth": _NEEDS_HARDWARE,
            "activations": _NEEDS_ACTIVATIONS,
            "batch_size": _NEEDS_BATCH,
            "adapter_count": _NEEDS_ADAPTERS,
            "layers": f"workload.layers ({workload.name} has none)",
        }
        self._set_env(env, needs)

    def _check_adapters(self, o: str, env: dict[str, Any], params: float) -> None:
        stated = env["adapter_parameters"]
        shape = {k: env[k] for k in _SHAPE}
        given = [k for k, v in shape.items() if v is not None]
        if given and shape["adapter_rank"] is None:
            raise FieldError(o, "adapter_rank", f"is required when {', '.join(given)} is given")
        if shape["adapter_rank"] is not None:
            for name in _SHAPE[1:]:
                if shape[name] is None:
                    raise FieldError(o, name, "is required with adapter_rank (the adapter shape is given as a whole)")
            if self.workload.layers is None:
                raise FieldError(o, "adapter_rank", f"needs workload.layers, which {self.workload.name} does not give")
        from_shape = self._shape_count(shape) if shape["adapter_rank"] is not None else None
        if stated is not None and from_shape is not None and np.any(np.asarray(stated) != from_shape):
            msg = (
                f"{_show_counts(stated)} disagrees with the adapter shape, which gives "
                f"{_show_counts(from_shape)} (L·n·r·(d_in + d_out)); give one of them, or make them agree"
            )
            raise FieldError(o, "adapter_parameters", msg)
        env["adapter_stated"] = stated is not None
        env["adapter_mode"] = stated is not None or from_shape is not None
        if not env["adapter_mode"]:
            env["adapter_count"] = None
            return
        count = stated if stated is not None else from_shape
        if count is not None and np.any(np.asarray(count) > params):
            field = "adapter_parameters" if stated is not None else _blamed(given)
            msg = f"gives {_show_counts(np.max(count))} adapter parameters, more than the model's {params:,.0f}"
            if stated is None:
                msg += f" ({_SHAPE_RULE})"
            raise FieldError(o, field, msg)

    def _shape_count(self, shape: dict[str, Any]) -> Any:
        # the adapter_count formula itself (its "from the shape" case), not a second copy of it
        return evaluate("adapter_count", {**shape, "layers": self.workload.layers, "adapter_stated": False})

    # -- the model's quantities, each from its formula ----------------------------------
    weights = derived("weights")
    gradients = derived("gradients")
    optimizer_state = derived("optimizer_state")
    optimizer_values_per_parameter = derived("optimizer_values_per_parameter")
    master_weights = derived("master_weights")
    bytes_per_trained_parameter = derived("bytes_per_trained_parameter")
    adapter_state = derived("adapter_state")
    adapter_weights = derived("adapter_weights")
    adapter_gradients = derived("adapter_gradients")
    adapter_master = derived("adapter_master")
    adapter_optimizer_state = derived("adapter_optimizer_state")
    adapter_fraction = derived("adapter_fraction")
    full_state = derived("full_state")
    adapter_saved = derived("adapter_saved")
    adapter_reduction = derived("adapter_reduction")
    adapter_kept_share = derived("adapter_kept_share")
    frozen_share = derived("frozen_share")
    adapter_reduction_ceiling = derived("adapter_reduction_ceiling")
    total = derived("total")
    copies = derived("copies")
    training_total = derived("training_total")
    training_copies = derived("training_copies")
    capacity_share = derived("capacity_share")
    training_capacity_multiple = derived("training_capacity_multiple")
    resident_batch_limit = derived("resident_batch_limit")
    max_resident_batch = derived("max_resident_batch", post=lambda v: v.astype(np.int64) if is_array(v) else v)
    checkpoint = derived("checkpoint")
    adapter_checkpoint = derived("adapter_checkpoint")
    adapter_update_traffic = derived("adapter_update_traffic")
    adapter_update_time = derived("adapter_update_time")
    updated_bytes_per_parameter = derived("updated_bytes_per_parameter")
    update_bytes_per_parameter = derived("update_bytes_per_parameter")
    update_traffic = derived("update_traffic")
    update_time = derived("update_time")

    @property
    def adapter_mode(self) -> bool:
        """True when adapters are configured (the base weights are then frozen)."""
        return bool(self._env.values["adapter_mode"])

    @property
    @with_equations("adapter_count", "low_rank_update_params")
    def adapter_count(self) -> Any:
        """Trainable adapter parameters, stated or from the adapter shape; ``None`` without adapters."""
        if not self.adapter_mode:
            return None
        value = self._env.get("adapter_count")
        return value if is_array(value) else int(value)

    @property
    @with_equations("fits")
    def fits(self) -> Any:
        """Whether the parameter state alone fits the device; ``False`` when no hardware is supplied."""
        if self.hardware is None:
            return False
        value = self._env.get("fits")
        return value if is_array(value) else bool(value)

    def sweep_quantity(self) -> str:
        """What a sweep of this scenario plots and fits by default: the run's memory."""
        return "training_total" if self.activations is not None else "total"

    def rebind(self, **changes: Any) -> Any:
        """``variant(**changes)``, with the activations rescaled when only ``batch_size`` changes.

        The activations are stated at ``batch_size``; a live control or a sweep that moves the
        batch means "the same model at another batch", so they follow it (``activations_at``).
        ``variant()`` itself changes only what it is given.
        """
        if "batch_size" in changes and "activations" not in changes and self.activations is not None:
            batch = check_count(type(self).__name__, "batch_size", changes["batch_size"])
            if self.batch_size is not None:
                changes["activations"] = self.activations_at(batch)
        return self.variant(**changes)

    @property
    @with_equations("training_fits")
    def training_fits(self) -> Any:
        """Whether the whole run fits: state plus saved activations (just the state without activations).

        ``fits`` answers the narrower question "does the parameter state alone fit"; a run whose
        state fits can still overflow once its activations are counted. ``False`` without hardware.
        """
        if self.hardware is None:
            return False
        value = self._env.get("training_fits")
        return value if is_array(value) else bool(value)

    @with_equations("activations_at")
    def activations_at(self, batch_size: int) -> Any:
        """Saved activations at another batch size ``B′``, scaled linearly from ``activations``."""
        o = f"{type(self).__name__}.activations_at"
        at = check_count(o, "batch_size", batch_size)
        if self.activations is None:
            raise NotApplicableError("activations_at", _NEEDS_ACTIVATIONS)
        if self.batch_size is None:
            raise NotApplicableError("activations_at", _NEEDS_BATCH)
        from mlsysim_nb.base import _wrap

        return _wrap("activations_at", self._env.with_inputs({"at_batch_size": at}).get("activations_at"))

    @with_equations("checkpoint_write_time")
    def checkpoint_write_time(self, bandwidth: Any) -> Any:
        """Seconds to write ``checkpoint`` at ``bandwidth`` (a quantity such as ``Q_(2, "GB/s")``)."""
        o = f"{type(self).__name__}.checkpoint_write_time"
        _, rate = check_quantity(o, "bandwidth", bandwidth, "byte/second", allow_plain=False)
        from mlsysim_nb.base import _wrap

        env = self._env.with_inputs({"write_bandwidth": rate})
        return _wrap("checkpoint_write_time", env.get("checkpoint_write_time"))

    # -- presentation: what the derivation, chart, comparison and controls show ----------------
    SECTIONS: ClassVar[tuple[SectionSpec, ...]] = _SECTIONS
    NOTES: ClassVar[tuple[tuple[str, str], ...]] = _NOTES
    COMPARISON_ROWS: ClassVar[tuple[str, ...]] = _COMPARISON_ROWS

    def default_title(self) -> str:
        """``"GPT-2 XL, 16-bit + FP32 master + Adam on NVIDIA H100"``: the recipe, named from the fields."""
        device = "" if self.hardware is None else f" on {self.hardware.name}"
        return f"{self.workload.name}, {recipe(self)}{device}"

    def headline(self) -> Headline:
        """State (plus activations, when given) against the device, and whether the whole run fits."""
        m = self.magnitude
        head = f"{self.workload.name}, {recipe(self)}"
        if self.is_sweep:
            return Headline(f"{head}, a sweep over {', '.join(self.swept_fields())}")
        state = format_bytes(m("total"))
        if self.hardware is None:
            return Headline(f"{head}: {state} of parameter state", Verdict("no device to fit against"))
        cap = format_bytes(m("capacity"), binary=True)
        line = f"{head} on {self.hardware.name}: state {state}"
        if self.activations is None:
            ok = bool(self.fits)
            line += f", {format_share(m('capacity_share'))} of {cap}"
            return Headline(line, Verdict("fits" if ok else "does not fit", ok))
        at = "" if self.batch_size is None else f" at batch {self.batch_size}"
        line += (
            f" + activations {format_bytes(m('activations'))}{at} = {format_bytes(m('training_total'))}"
            f", {format_share(m('training_capacity_multiple'))} of {cap}"
        )
        if self.training_fits:
            return Headline(line, Verdict("the run fits", ok=True))
        if self.fits:
            return Headline(line, Verdict("the state fits; the run does not", ok=False))
        return Headline(line, Verdict("does not fit: the state alone overflows", ok=False))

    def memory_chart(self) -> MemoryChart:
        """One bar for this run (and one for full tuning in adapter mode) against the device's capacity."""
        m = self.magnitude
        acts = {"activations": m("activations")} if self.activations is not None else {}
        full = {
            "weights": m("weights"),
            "gradients": m("gradients"),
            "optimizer state": m("optimizer_state"),
            "master copy": m("master_weights"),
        }
        bars: tuple[tuple[str, dict[str, Any]], ...]
        if self.adapter_mode:
            bars = (
                ("this run (adapters)", {"weights": m("weights"), "adapter state": m("adapter_state"), **acts}),
                ("full tuning", {**full, **acts}),
            )
        else:
            bars = (("this run", {**full, **acts}),)
        verdict = self.headline().verdict
        caption = verdict.text if verdict is not None else ""
        if self.hardware is None:
            return MemoryChart(bars, caption=caption)
        label = f"{self.hardware.name}: {capacity_text(self.hardware.memory.capacity)}"
        return MemoryChart(bars, m("capacity"), label, caption=caption)

    def method_inputs(self) -> dict[str, Any]:
        """Example arguments of the methods the derivation shows (another batch, a disk's bandwidth)."""
        extra: dict[str, Any] = {"write_bandwidth": EXAMPLE_WRITE_BANDWIDTH.m_as("byte/second")}
        if self.batch_size is not None and not is_array(self.batch_size):
            extra["at_batch_size"] = 2 * self.batch_size
        return extra

    def input_rows(self) -> list[tuple[str, str, str]]:
        """The inputs that come from the workload and the device, as (name, meaning, value) rows."""
        rows = workload_rows(self.workload)
        if self.hardware is not None:
            mem = self.hardware.memory
            rows.append(("hardware.memory.capacity", "device memory capacity", capacity_text(mem.capacity)))
            rows.append(("hardware.memory.bandwidth", "device memory bandwidth", f"{mem.bandwidth:~P}"))
        return rows

    def input_label(self, name: str) -> str:
        """How the inputs table names a field; the activations say at which batch they were stated."""
        if name == "activations" and self.batch_size is not None and not is_array(self.batch_size):
            return f"saved activations, stated at batch_size = {self.batch_size}"
        return super().input_label(name)

    def controls(self) -> list[Any]:
        """Device, model, precision, optimizer, master copy, batch and adapters."""
        from mlsysim_nb import controls as c

        specs = [
            c.catalog_control(self, "hardware"),
            c.catalog_control(self, "workload"),
            c.field_control(self, "bytes_per_value"),
            c.field_control(self, "optimizer_bytes_per_parameter"),
            c.toggle_control(
                "master_bytes_per_parameter", "FP32 master copy", self.master_bytes_per_parameter is not None,
                lambda s, on: {"master_bytes_per_parameter": 4 if on else None},
                "keep a 4-byte master copy of every trained weight",
            ),
        ]  # fmt: skip
        if self.batch_size is not None:
            specs.append(c.field_control(self, "batch_size"))
        specs.append(
            c.toggle_control(
                "adapter_mode", "adapters (LoRA)", self.adapter_mode, _adapter_bind,
                "freeze the base; train low-rank adapters",
            )
        )  # fmt: skip
        shape_on = self.adapter_mode and self.adapter_rank is not None
        for name, default in (("adapter_rank", 16), ("adapted_matrices", 2)):
            spec = c.field_control(self, name, value=getattr(self, name) or default, bind=_shape_bind(name))
            specs.append(dataclasses.replace(spec, disabled=not shape_on))
        return specs

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.headline()}>"


def recipe(s: TrainingStateFitScenario) -> str:
    """``"FP32 + Adam"``, ``"16-bit + FP32 master + Adam"``, with ``+ adapters`` in adapter mode."""
    if s.is_sweep:
        return "a sweep"
    value = s.magnitude("bytes_per_value")
    parts = [_WIDTH_NAMES.get(value, f"{value:g} B values")]
    if s.master_bytes_per_parameter is not None:
        master = s.magnitude("master_bytes_per_parameter")
        parts.append(f"{_WIDTH_NAMES.get(master, f'{master:g} B')} master")
    opt = s.magnitude("optimizer_bytes_per_parameter")
    parts.append(_OPTIMIZER_NAMES.get(opt, f"{opt:g} B optimizer"))
    if s.adapter_mode:
        parts.append("adapters")
    return " + ".join(parts)


def _shape_bind(name: str) -> Any:
    """Setting one number of the adapter shape: the rest of the shape follows (a stated count is dropped)."""

    def bind(s: TrainingStateFitScenario, value: Any) -> dict[str, Any]:
        return {**_shape_defaults(s), name: value}  # the model refuses a fraction

    return bind


def _adapter_bind(s: TrainingStateFitScenario, on: Any) -> dict[str, Any]:
    if not on:
        return dict.fromkeys(("adapter_parameters", *_SHAPE))
    return _shape_defaults(s)


def _shape_defaults(s: TrainingStateFitScenario) -> dict[str, Any]:
    """Switching to a rank-based adapter shape: fill the rest of the shape and drop a stated count."""
    width = s.workload.hidden_dim or 4096
    return {
        "adapter_parameters": None,
        "adapter_rank": s.adapter_rank or 16,
        "adapted_matrices": s.adapted_matrices or 2,
        "adapter_in_dim": s.adapter_in_dim or width,
        "adapter_out_dim": s.adapter_out_dim or width,
    }
