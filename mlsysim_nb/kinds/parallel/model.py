"""Training on many devices: the single-device recipe, sharded and split, per device.

:class:`ParallelTrainingScenario` composes the two single-device scenarios
without changing them: a :class:`~mlsysim_nb.kinds.training.model.TrainingStateFitScenario`
(the recipe and the device) and, optionally, an
:class:`~mlsysim_nb.kinds.activation.model.ActivationMemoryScenario` (the geometry and the
micro-batch). It adds the layout: data parallelism with a ZeRO stage, tensor
parallelism with or without sequence parallelism, and pipeline parallelism
with or without interleaving. Its equations live in
:mod:`mlsysim_nb.kinds.parallel.physics`; its named cases in :mod:`mlsysim_nb.kinds.parallel.cases`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from mlsysim_nb.errors import FieldError
from mlsysim_nb.kinds.activation.model import ActivationMemoryScenario
from mlsysim_nb.kinds.parallel.experts import check_experts, expert_inputs
from mlsysim_nb.kinds.parallel.layout import check_pipeline, check_tensor_parallel
from mlsysim_nb.kinds.parallel.physics import EQUATIONS
from mlsysim_nb.kinds.parallel.step import StepTimeline, step_timeline
from mlsysim_nb.kinds.parallel.table import around_stack_bytes, layer_coefficients
from mlsysim_nb.kinds.parallel.view import ParallelView
from mlsysim_nb.kinds.training.model import TrainingStateFitScenario
from mlsysim_nb.layers.transients import OPTIMIZER_IMPLEMENTATIONS
from mlsysim_nb.model.equations import Equations, with_equations
from mlsysim_nb.model.knob import knob, record
from mlsysim_nb.model.scenario import Scenario, derived, is_array
from mlsysim_nb.physics import STRATEGIES
from mlsysim_nb.records.hardware import HardwareNode
from mlsysim_nb.records.workloads import check_workload
from mlsysim_nb.units import Q_

__all__ = ["ParallelTrainingScenario"]

_RECOMPUTE = tuple((name, name) for name in STRATEGIES)
_OPTIMIZER = tuple((name, name) for name in OPTIMIZER_IMPLEMENTATIONS)
_ZERO = (("0: replicated", 0), ("1: optimizer", 1), ("2: + gradients", 2), ("3: + weights", 3))
_NEEDS_ACTIVATIONS = "activations (an ActivationMemoryScenario; this scenario has activations=None)"
#: what the activation scenario gives the formulas: absent, each is not applicable, naming ``activations``
_ACTIVATION_INPUTS = (
    "sequence", "micro_batch", "precision_bytes", "per_token_bytes_coefficient", "score_bytes_coefficient",
    "layer_activations", "activations_per_device", "sp_row_bytes", "tp_row_bytes", "score_row_bytes",
)  # fmt: skip

#: one micro-batch's rows around the stack on one device: the first stage's, the last stage's
_AROUND_STACK = ("input_layer_bytes", "output_layer_bytes")


def _needs_vocabulary(workload: Any) -> str:
    return f"workload.vocab_size to size the layers around the stack ({workload.name} gives none)"


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class ParallelTrainingScenario(ParallelView, Scenario):
    """One training recipe spread over ``N_d · t · p`` devices: memory per device, and what it costs to move.

    ``state`` is the single-device recipe (its ``hardware`` is the device);
    ``activations``, when given, is the per-replica geometry and micro-batch.
    Weights, gradients, optimizer state and master copy are split by ``t·p``
    (tensor and pipeline parallelism), then sharded across the ``N_d``
    data-parallel replicas by the ZeRO stage: stage 1 shards the optimizer
    state and master copy, stage 2 also the gradients, stage 3 also the
    weights. Activations are those of the device that holds the most
    (``activations_per_device``). The first pipeline stage's layers
    (``first_stage_layer_activations``, the paper's figure) are Korthikanti
    et al. (2022) Table 2, times ``L/p`` layers, times the ``p``
    micro-batches it holds (times ``1 + (p − 1)/(p·m)`` when interleaved);
    the last stage holds fewer micro-batches but the output layer and the
    loss's FP32 logits (Sec. 4.3), for one micro-batch; with ``p = 1`` one
    device holds both. Where the workload gives no vocabulary (a
    reference-style workload) the layers around the stack are not sized and
    the figure is the first stage's layers, as in Table 2. The coefficients
    are read off the workload's own layer in the layer table
    (:mod:`mlsysim_nb.kinds.parallel.table`): what tensor parallelism splits,
    what only sequence parallelism splits, the attention scores. For a
    reference-style workload that is Korthikanti's GPT layer with an MLP
    ``activations.ffn_multiple`` times the hidden width (Table 2's ``34`` is
    ``18 + 4f`` at ``f = 4``); a workload with an architecture (grouped-query
    attention, a gated MLP of its own width, no dropout) gives its own rows.

    A mixture of experts can split its routed experts over ``expert_parallel``
    (e) data-parallel replicas, each holding E/e experts of every layer (and
    their gradients and optimizer state); the N_d/e replicas that hold the
    same experts shard them under ZeRO, the rest of the model follows ZeRO over
    N_d. The state counts every expert; the arithmetic per token
    (``training_flops_per_token``) only the active ones.

    The micro-batch is ``activations.micro_batch``: the sequences each
    data-parallel replica's pipeline processes at once (Korthikanti's ``b``).
    The global batch is ``b · N_d`` times the number of micro-batches per
    step, which the model assumes is at least ``p``. The state's own
    ``activations`` and ``batch_size`` (a stated single-device budget) are not
    read. With one device and no parallelism, ``state_per_device`` is
    ``state.total`` and ``activations_per_device`` is
    ``activations.model_activations(recompute)`` (``activations(recompute)``
    where the vocabulary is unknown).

    Adapter runs: the base weights are frozen, so only the adapters have
    gradients, optimizer state and a master copy, and ZeRO stages 1 and 2
    shard only those; stage 3 shards the weights, frozen base included
    (as DeepSpeed's stage 3 partitions every parameter).

    Gradients are kept at ``gradient_bytes_per_value``, by default the state's
    ``bytes_per_value``: 16 bytes per parameter for mixed-precision Adam, the
    convention of ZeRO's paper. Megatron-LM's distributed optimizer and
    DeepSpeed keep FP32 gradients (18 bytes per parameter): set
    ``gradient_bytes_per_value=4`` to reproduce their figures.

    Assumptions: parameters split evenly over ``t·p`` (embeddings and norms
    included); at least ``p`` micro-batches per step; gradients at the weights'
    width unless ``gradient_bytes_per_value`` says otherwise.
    Excludes: the input- and output-layer activations (Korthikanti Sec. 4.3)
    where the workload gives no vocabulary, communication buffers, pipeline bubbles, allocator reserve and
    fragmentation.

    Examples
    --------
    >>> from mlsysim_nb.kinds.parallel.cases import CASES
    >>> s = CASES["Gpt3_175BKorthikantiTable3OnA100"](None)
    >>> s.devices, s.fits
    (64, True)
    """

    state: TrainingStateFitScenario = record(label="single-device recipe and device")
    activations: ActivationMemoryScenario | None = record(None, label="saved activations")
    recompute: Any = knob(
        "selective", kind="choice", label="recomputation", control="dropdown", choices=_RECOMPUTE,
        help="which activations are kept for the backward pass (Korthikanti et al. 2022)",
    )  # fmt: skip
    data_parallel: Any = knob(1, kind="count", symbol="N_d", label="data-parallel replicas", high=2**20, control="log")
    zero_stage: Any = knob(
        0, kind="count", symbol="z", label="ZeRO stage", low=0, high=3, control="dropdown", choices=_ZERO,
        help="what the N_d replicas shard: optimizer state, then gradients, then weights",
    )  # fmt: skip
    tensor_parallel: Any = knob(1, kind="count", symbol="t", label="tensor-parallel devices", high=1024, control="log")
    sequence_parallel: Any = knob(
        default=False, kind="choice", symbol="SP", label="sequence parallelism on",
        choices=(("off", False), ("on", True)), control="toggle",
        help="split the layer norms and dropouts along the sequence too (needs t > 1)",
    )  # fmt: skip
    expert_parallel: Any = knob(
        1, kind="count", symbol="e", label="expert-parallel devices", high=1024, control="log",
        help="devices that split the routed experts, E/e each; e divides the experts and N_d",
    )  # fmt: skip
    pipeline_parallel: Any = knob(1, kind="count", symbol="p", label="pipeline stages", high=4096, control="log")
    interleave: Any = knob(1, kind="count", symbol="m", label="virtual stages per device", high=64, control="int")
    gradient_bytes_per_value: Any = knob(
        None, kind="bytes", symbol="b_g,given", label="stated bytes per gradient value", high=8, optional=True,
        help="None: the state's bytes_per_value; 4 for FP32 gradients (Megatron-LM's distributed optimizer, DeepSpeed)",
    )  # fmt: skip
    optimizer_implementation: Any = knob(
        "foreach", kind="choice", label="AdamW implementation", choices=_OPTIMIZER,
        help="for-loop: one parameter at a time (PyTorch's default for CPU tensors); foreach: one list per group "
        "(its default for CUDA tensors); fused: one kernel, no temporaries",
    )  # fmt: skip
    name: str = dataclasses.field(default="", compare=False)
    description: str = dataclasses.field(default="", compare=False)

    EQUATIONS: ClassVar[Equations] = EQUATIONS
    #: the single-device scenarios it composes: its equations read their fields
    PARTS: ClassVar[tuple[type[Scenario], ...]] = (TrainingStateFitScenario, ActivationMemoryScenario)

    def __post_init__(self) -> None:
        o = type(self).__name__
        if not isinstance(self.state, TrainingStateFitScenario):
            raise FieldError(o, "state", f"must be a TrainingStateFitScenario, got {type(self.state).__name__}")
        self._check_activations(o)
        self._check_fields()
        self._check_grid({"state.": self.state, "activations.": self.activations})
        self._check_layout(o)
        self._set_env(*self._environment())

    def variant(self, **changes: Any) -> Any:
        """A new, fully validated scenario with ``changes`` applied; this one is untouched.

        ``workload=`` changes the model of the whole run in one step: the state and the activations are
        rebuilt for it (``state.variant(workload=...)``, ``activations.variant(workload=...)``), as building
        the scenario afresh from them would. A state or activations given with it must model the same workload.

        Raises
        ------
        TypeError
            For a name that is not a field (or ``workload``), listing the valid fields.
        FieldError
            Naming ``workload`` when the new model does not suit the recipe, the activations or the layout.
        """
        if "workload" not in changes:
            return super().variant(**changes)
        o = type(self).__name__
        changes = dict(changes)
        w = check_workload(o, changes.pop("workload"))
        for part in ("state", "activations"):
            given = changes.get(part, getattr(self, part))
            if given is None:
                continue
            if part in changes:
                if isinstance(given, Scenario) and given.workload != w:  # type: ignore[attr-defined]
                    msg = f"is {w.name}, but the {part} given with it models {given.workload.name}; give one of them"  # type: ignore[attr-defined]
                    raise FieldError(o, "workload", msg)
                continue
            try:
                changes[part] = given.variant(workload=w)
            except FieldError as err:
                raise FieldError(o, "workload", f"{w.name} does not suit the {part}: {err}") from None
        try:
            return super().variant(**changes)
        except FieldError as err:
            if err.owner != o or err.field not in ("state", "activations"):
                raise
            raise FieldError(o, "workload", err.reason) from None

    def field_bounds(self, name: str) -> tuple[float, float | None]:
        """A field's accepted range here: ``expert_parallel`` is at most the workload's experts (1 when dense)."""
        low, high = super().field_bounds(name)
        if name == "expert_parallel":
            return low, self.workload.experts or 1
        return low, high

    def _check_activations(self, o: str) -> None:
        acts = self.activations
        if acts is None:
            return
        if not isinstance(acts, ActivationMemoryScenario):
            raise FieldError(
                o, "activations", f"must be an ActivationMemoryScenario or None, got {type(acts).__name__}"
            )
        if acts.workload != self.state.workload:
            msg = (
                f"models {acts.workload.name}, but the state models {self.state.workload.name}; give the same workload"
            )
            raise FieldError(o, "activations", msg)

    def _check_layout(self, o: str) -> None:
        """Refuse layouts the model cannot split: element-wise, so a sweep names the first bad value."""
        check_tensor_parallel(self, o)
        check_pipeline(self, o)
        check_experts(self, o)

    def _environment(self) -> tuple[dict[str, Any], dict[str, str]]:
        state_env = self.state._env  # noqa: SLF001 - composing: the state's magnitudes, converted once
        env: dict[str, Any] = dict(state_env.values)
        needs: dict[str, str] = dict(state_env.needs)
        needs["capacity"] = needs["bandwidth"] = "hardware (the state has hardware=None)"
        if self.activations is not None:
            acts_env = self.activations._env  # noqa: SLF001
            env.update(acts_env.values)
            needs.update(acts_env.needs)
            env.update(self._table_coefficients())
            env.update(self._around_stack(bool(acts_env.values["has_output"])))
            needs.update(dict.fromkeys(_AROUND_STACK, _needs_vocabulary(self.workload)))
        else:
            for name in (*_ACTIVATION_INPUTS, *_AROUND_STACK):
                env[name] = None
                needs[name] = _NEEDS_ACTIVATIONS
            env["has_output"] = False
        stage = np.asarray(self.zero_stage)
        recompute = np.asarray(self.recompute)
        flags = {
            "shards_optimizer": stage >= 1,
            "shards_gradients": stage >= 2,
            "shards_weights": stage >= 3,
            "keeps_scores": recompute == "none",
            "keeps_layer_tensors": recompute != "full",
            "interleaved": np.asarray(self.interleave) > 1,
            "splits_experts": np.asarray(self.expert_parallel) > 1,
        }
        env.update({k: (v if v.ndim > 0 else bool(v)) for k, v in flags.items()})
        # a scalar False without the vocabulary, so that no sweep evaluates the output layer's case
        pipelined = np.asarray(self.pipeline_parallel) > 1
        pipelined_flag = pipelined if pipelined.ndim else bool(pipelined)
        env["pipelined_with_output"] = pipelined_flag if env["has_output"] else False
        env["output_unsized"] = self.activations is not None and not env["has_output"]
        env.update(
            data_parallel=self.data_parallel,
            zero_stage=self.zero_stage,
            tensor_parallel=self.tensor_parallel,
            sequence_parallel=self.sequence_parallel,
            pipeline_parallel=self.pipeline_parallel,
            interleave=self.interleave,
            expert_parallel=self.expert_parallel,
            **expert_inputs(self.workload),
            gradient_bytes_per_value=self._checked["gradient_bytes_per_value"],
            gradient_width_given=self.gradient_bytes_per_value is not None,
            has_activations=self.activations is not None,
            has_experts=bool(self.workload.experts),
            has_expert_traffic=bool(self.workload.experts) and self.activations is not None,
        )
        if not self.workload.experts:
            needs["experts_per_token"] = f"a mixture of experts ({self.workload.name} has a dense MLP)"
        return env, needs

    def _table_coefficients(self) -> dict[str, Any]:
        """The layer table's bytes per token and hidden unit by split, for the activation scenario's layer."""
        acts = self.activations
        assert acts is not None  # noqa: S101 - called only with activations
        width, ffn = acts.magnitude("precision_bytes"), acts.magnitude("ffn_multiple")
        return layer_coefficients(self.workload, width, ffn, acts.attention, acts.implementation)

    def _around_stack(self, sized: bool) -> dict[str, Any]:
        """One micro-batch's rows around the stack on one device (the first and the last stage's), if sized."""
        if not sized:
            return dict.fromkeys(_AROUND_STACK)
        acts = self.activations
        assert acts is not None  # noqa: S101 - called only with activations
        inputs = {name: acts.magnitude(name) for name in ("sequence", "micro_batch", "precision_bytes", "ffn_multiple")}
        inputs.update(attention=acts.attention, implementation=acts.implementation,
                      tensor_parallel=self.tensor_parallel, sequence_parallel=self.sequence_parallel)  # fmt: skip
        return around_stack_bytes(self.workload, inputs)

    # -- the layout and the state per device -------------------------------------------
    gradient_width = derived("gradient_width")
    model_parallel = derived("model_parallel")
    devices = derived("devices")
    replica_weights = derived("replica_weights")
    replica_gradients = derived("replica_gradients")
    replica_optimizer_state = derived("replica_optimizer_state")
    replica_master_weights = derived("replica_master_weights")
    expert_share = derived("expert_share")
    expert_data_parallel = derived("expert_data_parallel")
    expert_optimizer_shards = derived("expert_optimizer_shards")
    expert_gradient_shards = derived("expert_gradient_shards")
    expert_weight_shards = derived("expert_weight_shards")
    optimizer_shards = derived("optimizer_shards")
    gradient_shards = derived("gradient_shards")
    weight_shards = derived("weight_shards")
    weights_per_device = derived("weights_per_device")
    gradients_per_device = derived("gradients_per_device")
    optimizer_state_per_device = derived("optimizer_state_per_device")
    master_weights_per_device = derived("master_weights_per_device")
    state_per_device = derived("state_per_device")
    # -- activations per device
    replicated_bytes_coefficient = derived("replicated_bytes_coefficient")
    sharded_bytes_coefficient = derived("sharded_bytes_coefficient")
    layer_score_coefficient = derived("layer_score_coefficient")
    sequence_shards = derived("sequence_shards")
    layer_activations = derived("layer_activations")
    stage_layers = derived("stage_layers")
    interleave_factor = derived("interleave_factor")
    micro_batches_in_flight = derived("micro_batches_in_flight")
    first_stage_layer_activations = derived("first_stage_layer_activations")
    first_stage_activations = derived("first_stage_activations")
    last_stage_micro_batches = derived("last_stage_micro_batches")
    last_stage_activations = derived("last_stage_activations")
    activations_per_device = derived("activations_per_device")
    total_per_device = derived("total_per_device")
    device_memory_share = derived("device_memory_share")
    # -- communication
    trained_parameters = derived("trained_parameters")
    stored_parameters = derived("stored_parameters")
    gradient_allreduce_traffic = derived("gradient_allreduce_traffic")
    zero_traffic_multiple = derived("zero_traffic_multiple")
    data_parallel_traffic = derived("data_parallel_traffic")
    tensor_parallel_traffic_per_layer = derived("tensor_parallel_traffic_per_layer")
    routed_tokens_per_device = derived("routed_tokens_per_device")
    expert_all_to_all_traffic_per_layer = derived("expert_all_to_all_traffic_per_layer")
    training_flops_per_token = derived("training_flops_per_token")

    @property
    def hardware(self) -> HardwareNode | None:
        """The device: ``state.hardware``."""
        return self.state.hardware

    @property
    def workload(self) -> Any:
        """The network being trained: ``state.workload``."""
        return self.state.workload

    @property
    @with_equations("fits_per_device")
    def fits(self) -> Any:
        """Whether one device holds its share of the parameter state, as ``fits`` means on one device.

        The whole run, state and activations per device, is :attr:`training_fits`. ``False`` when the
        state has no hardware.
        """
        if self.hardware is None:
            return False
        value = self._env.get("fits_per_device")
        return value if is_array(value) else bool(value)

    @property
    @with_equations("training_fits_per_device")
    def training_fits(self) -> Any:
        """Whether one device holds its share of the whole run: state and activations (the state alone without them).

        ``False`` when the state has no hardware.
        """
        if self.hardware is None:
            return False
        value = self._env.get("training_fits_per_device")
        return value if is_array(value) else bool(value)

    def step_timeline(self, micro_batches: int = 1) -> StepTimeline:
        """One step's memory on the most loaded device, phase by phase (:mod:`mlsysim_nb.kinds.parallel.step`).

        ``micro_batches`` > 1: gradient accumulation, every gradient alive from the second micro-batch on; at
        most :data:`~mlsysim_nb.kinds.parallel.step.MOST_POINTS` phases in all (beyond, refused by name).
        """
        return step_timeline(self, micro_batches)

    @property
    def peak_per_device(self) -> Any:
        """The most memory one device holds at any moment of one step (one micro-batch), not the sum of its parts.

        Its phase is ``peak_phase``; the timeline is :meth:`step_timeline`.
        """
        return Q_(self.step_timeline().peak, "byte")

    @property
    def peak_phase(self) -> str:
        """The phase of the step in which ``peak_per_device`` falls."""
        return self.step_timeline().peak_phase

    @property
    def is_sweep(self) -> bool:
        """True when a field, or a field of the state or activations, holds a NumPy array."""
        parts = (super().is_sweep, self.state.is_sweep, self.activations is not None and self.activations.is_sweep)
        return any(parts)
