"""``TrainingStateFitScenario``: a model's training state against one accelerator's memory."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from mlsysim_nb.errors import FieldError, NotApplicableError
from mlsysim_nb.kinds.training.physics import ADAPTER_SHAPE, EQUATIONS
from mlsysim_nb.kinds.training.view import TrainingView
from mlsysim_nb.model.changes import Follows, changed_fields
from mlsysim_nb.model.equations import Equations, with_equations
from mlsysim_nb.model.fields import check_count, check_quantity
from mlsysim_nb.model.knob import AVERAGE_LEAST, VALUE_WIDTHS, knob, record
from mlsysim_nb.model.scenario import Scenario, derived, is_array
from mlsysim_nb.records.hardware import HardwareNode
from mlsysim_nb.records.workloads import Workload, check_workload

__all__ = ["TrainingStateFitScenario"]

_OPTIMIZERS = (("Adam/AdamW (8 B)", 8), ("SGD + momentum (4 B)", 4), ("8-bit Adam (2 B)", 2), ("plain SGD (0 B)", 0))

_NEEDS_HARDWARE = "hardware (this scenario has hardware=None)"
_NEEDS_ACTIVATIONS = "activations (the saved activations at batch_size; this scenario has none)"
_NEEDS_BATCH = "batch_size (the batch at which the activations are stated; this scenario has none)"
_SHAPE_RULE = "adapter parameters = layers · adapted_matrices · adapter_rank · (adapter_in_dim + adapter_out_dim)"
_NEEDS_ADAPTERS = "adapters (adapter_parameters, or adapter_rank and its shape)"


#: The saved activations are stated at batch_size: a new batch moves them linearly (``activations_at``),
#: in variant(), the live panel and sweep() alike; stating ``activations=`` too keeps them.
_FOLLOW_BATCH = Follows("activations", "batch_size", "activations_at", "at_batch_size")


def _show_counts(value: Any) -> str:
    return f"{float(np.max(value)):,.0f}"


def _blamed(given: list[str]) -> str:
    """The shape field a too-large adapter is blamed on: the one this ``variant()`` changed, else the rank."""
    changed = [name for name in given if name in changed_fields()]
    return changed[0] if changed else "adapter_rank"


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class TrainingStateFitScenario(TrainingView, Scenario):
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

    workload: Workload = record(label="model")
    hardware: HardwareNode | None = record(None, label="the accelerator")
    bytes_per_value: Any = knob(
        kind="bytes", symbol="b_val", label="bytes per weight or gradient value", high=8, control="dropdown",
        choices=VALUE_WIDTHS, help="bytes per weight and gradient value",
    )  # fmt: skip
    optimizer_bytes_per_parameter: Any = knob(
        kind="bytes", symbol="b_opt", label="optimizer bytes per parameter", positive=False, high=32,
        control="dropdown", choices=_OPTIMIZERS, help="optimizer state bytes per trained parameter",
        least=AVERAGE_LEAST,
    )  # fmt: skip
    batch_size: int | None = knob(
        None, kind="count", symbol="B", label="batch size", high=2**20, optional=True, control="log",
        help="sequences per step; the activations are stated at this batch",
    )  # fmt: skip
    activations: Any = knob(
        None, kind="bytes", symbol="M_act", label="saved activations", positive=False, high=1e18, optional=True, least=0
    )
    master_bytes_per_parameter: Any = knob(
        None, kind="bytes", symbol="b_master", label="master-copy bytes per parameter", high=8, optional=True
    )
    adapter_parameters: int | None = knob(
        None, kind="count", symbol="N_stated", label="stated adapter parameters", low=0, high=10**15, optional=True
    )
    adapter_rank: int | None = knob(
        None, kind="count", symbol="r", label="adapter rank", high=65536, optional=True, control="log"
    )
    adapted_matrices: int | None = knob(
        None, kind="count", symbol="n_mat", label="adapted matrices per layer", high=64, optional=True, control="int"
    )
    adapter_in_dim: int | None = knob(
        None, kind="count", symbol="d_in", label="adapter input width", high=2**20, optional=True
    )
    adapter_out_dim: int | None = knob(
        None, kind="count", symbol="d_out", label="adapter output width", high=2**20, optional=True
    )
    name: str = dataclasses.field(default="", compare=False)
    description: str = dataclasses.field(default="", compare=False)

    EQUATIONS: ClassVar[Equations] = EQUATIONS
    COUPLINGS: ClassVar[tuple[Follows, ...]] = (_FOLLOW_BATCH,)

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
        shape = {k: env[k] for k in ADAPTER_SHAPE}
        given = [k for k, v in shape.items() if v is not None]
        if given and shape["adapter_rank"] is None:
            raise FieldError(o, "adapter_rank", f"is required when {', '.join(given)} is given")
        if shape["adapter_rank"] is not None:
            for name in ADAPTER_SHAPE[1:]:
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
        if count is not None and (count > params if type(count) is int else np.any(np.asarray(count) > params)):
            field = "adapter_parameters" if stated is not None else _blamed(given)
            msg = f"gives {_show_counts(np.max(count))} adapter parameters, more than the model's {params:,.0f}"
            if stated is None:
                msg += f" ({_SHAPE_RULE})"
            raise FieldError(o, field, msg)

    def _shape_count(self, shape: dict[str, Any]) -> Any:
        # the adapter_count formula itself (its "from the shape" case), not a second copy of it
        return EQUATIONS.evaluate("adapter_count", {**shape, "layers": self.workload.layers, "adapter_stated": False})

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
        return self.wrapper("activations_at")(_FOLLOW_BATCH.magnitude_at(self, at))

    @with_equations("checkpoint_write_time")
    def checkpoint_write_time(self, bandwidth: Any) -> Any:
        """Seconds to write ``checkpoint`` at ``bandwidth`` (a quantity such as ``Q_(2, "GB/s")``)."""
        o = f"{type(self).__name__}.checkpoint_write_time"
        _, rate = check_quantity(o, "bandwidth", bandwidth, "byte/second", allow_plain=False)
        env = self._env.with_inputs({"write_bandwidth": rate})
        return self.wrapper("checkpoint_write_time")(env.get("checkpoint_write_time"))
