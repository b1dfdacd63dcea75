"""Training time: how long one iteration of a many-device layout takes, where the time goes, and days to train.

:class:`TrainingTimeScenario` reads a :class:`~mlsysim_nb.kinds.parallel.model.ParallelTrainingScenario` (the
layout, its micro-batch and sequence, its device) through its public values, and adds the global batch and the
achieved shares of the device's peak, memory bandwidth and links. Its equations live in
:mod:`mlsysim_nb.kinds.time.physics`; what it reads off the layer table in :mod:`mlsysim_nb.kinds.time.table`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from mlsysim_nb.errors import FieldError
from mlsysim_nb.kinds.activation.model import ActivationMemoryScenario
from mlsysim_nb.kinds.parallel.model import ParallelTrainingScenario
from mlsysim_nb.kinds.time.efficiency import SHARE_CURVES, class_shares
from mlsysim_nb.kinds.time.physics import EQUATIONS
from mlsysim_nb.kinds.time.table import attended_keys, layer_time_inputs, projection_operations
from mlsysim_nb.kinds.time.view import TimeView
from mlsysim_nb.kinds.training.model import TrainingStateFitScenario
from mlsysim_nb.model.equations import Equations, with_equations
from mlsysim_nb.model.fields import check_count
from mlsysim_nb.model.knob import knob, record
from mlsysim_nb.model.scenario import Scenario, derived
from mlsysim_nb.records.hardware import HardwareNode

__all__ = ["ACHIEVED_SHARES_SOURCE", "TrainingTimeScenario"]

#: Where the achieved shares' defaults come from, said once (the derivation's notes repeat it).
ACHIEVED_SHARES_SOURCE = (
    "Calculon's published description of an A100 80GB system (Isaev et al. 2023, SC'23; "
    "github.com/calculon-ai/calculon, systems/a100_80g.json): matrix units at 90 % of peak on operations of "
    "16 to 128 GFLOP (95 % above), memory at 90 % of its bandwidth on transfers of 100 MB and more, NVLink "
    "at 65 % of 300 GB/s with reduce-scatters and all-gathers costing 1.5 times their ring volume, InfiniBand "
    "at 90 % of 25 GB/s, and each operation's arithmetic and memory traffic run back to back. Stated once, for "
    "every layout and device; not fitted to the figures the tests compare against."
)
#: The smallest achieved share accepted: 1 % (below it no run is being described, and times grow without bound).
_LEAST_SHARE = 0.01
_OVERLAP = (("exposed", False), ("overlapped with the backward pass", True))


def _first(values: Any, bad: Any) -> Any:
    values, bad = np.broadcast_arrays(np.asarray(values), np.asarray(bad))
    return values[bad].flat[0].item()


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class TrainingTimeScenario(TimeView, Scenario):
    """How long one training iteration of ``layout`` takes on its devices, and where the time goes.

    ``layout`` is a :class:`ParallelTrainingScenario` with activations (its micro-batch ``b`` and sequence ``s``)
    and a device; ``global_batch_size`` is the ``B`` sequences one iteration trains on, so each pipeline runs
    ``n_micro = B/(b·N_d)`` micro-batches (at least ``p``). Model FLOPs count the model's arithmetic once
    (Korthikanti et al. 2022, Appendix A: ``72·B·s·L·h²·(1 + s/(6·h) + v/(12·h·L))`` for their GPT layer,
    read here off the workload's own layer: grouped-query attention, gated MLPs, the k experts a token uses);
    hardware FLOPs add recomputation's rerun. The time is the sum of its causes on one device, nothing
    overlapped unless ``data_parallel_overlap`` says so: matrix work at ``matmul_share`` of the peak, the
    matrix products' own operand traffic and the element-wise work at ``memory_share`` of the bandwidth,
    tensor-parallel collectives (sequence parallelism's at ``gather_scatter_cost`` times their ring volume) and
    pipeline transfers over the node's links (``link_share``) or the network (``network_share``), the pipeline bubble
    ``(p − 1)/(m·n_micro)`` of the ideal time, the data-parallel reduction and the experts' all-to-alls, the
    optimizer step.

    Assumptions: the work spread evenly over the devices and the stages (the output layer, on the last stage in
    Megatron-LM, is counted as an even share); the ranks laid out tensor-parallel first, then data-parallel,
    then pipeline (Megatron-LM's order), so a group shares a node when its devices fit in one; a causal mask's
    scores computed whole. ``share_curves="calculon-a100"`` gives each class of work (projections, score products,
    output layer, norms and adds, activation, softmax) the share Calculon's A100 tables give an operation of its
    size (:mod:`~mlsysim_nb.kinds.time.efficiency`). Excludes: kernel launch gaps, the collectives' own memory
    traffic, the loss and embedding lookups' memory traffic, and overlap of tensor-parallel communication with
    computation.

    Examples
    --------
    >>> from mlsysim_nb.kinds.time.cases import CASES
    >>> s = CASES["Gpt3_175BKorthikantiTable5OnA100"](None)
    >>> s.micro_batches, round(s.bubble_fraction, 4)
    (64.0, 0.0365)
    """

    layout: ParallelTrainingScenario = record(label="the layout: recipe, device, parallelism, micro-batch")
    global_batch_size: Any = knob(
        kind="count", symbol="B_glob", label="sequences per iteration", high=2**24, control="log",
        help="the global batch: sequences one iteration trains on, b·N_d times the micro-batches",
    )  # fmt: skip
    share_curves: Any = knob(
        "flat", kind="choice", symbol="[curves]", label="achieved shares", choices=SHARE_CURVES,
        control="dropdown", help="every operation at the flat shares below, or each operation class at the share of "
        "its size in Calculon's A100 tables (kinds/time/efficiency.py)",
    )  # fmt: skip
    matmul_share: Any = knob(
        0.9, kind="share", symbol="η_mm", label="achieved share of peak (matrix work)", high=1,
        help="the share of the device's peak FLOPS every matrix multiplication reaches when the shares are flat "
        "(Calculon's A100: 90 % on operations of 16 to 128 GFLOP)",
    )  # fmt: skip
    memory_share: Any = knob(
        0.9, kind="share", symbol="η_mem", label="achieved share of memory bandwidth", high=1,
        help="the share of the memory bandwidth the matrix operands and the optimizer reach, and the element-wise "
        "work when the shares are flat (Calculon's A100: 90 % on transfers of 100 MB and more)",
    )  # fmt: skip
    link_share: Any = knob(
        0.65, kind="share", symbol="η_link", label="achieved share of link bandwidth", high=1,
        help="the share of the node's link bandwidth collectives reach (Calculon's NVLink: 65 %)",
    )  # fmt: skip
    gather_scatter_cost: Any = knob(
        1.5, kind="number", symbol="κ", label="reduce-scatter and all-gather cost multiple", high=4,
        help="what sequence parallelism's reduce-scatters and all-gathers cost against their ring volume, an "
        "all-reduce costing 1 (Calculon's NVLink: 1.5)",
    )  # fmt: skip
    network_share: Any = knob(
        0.9, kind="share", symbol="η_net", label="achieved share of network bandwidth", high=1,
        help="the share of the network bandwidth between nodes transfers reach (Calculon's InfiniBand: 90 %)",
    )  # fmt: skip
    data_parallel_overlap: Any = knob(
        default=False, kind="choice", symbol="[overlap]", label="data-parallel reduction", choices=_OVERLAP,
        control="dropdown", help="exposed after the backward pass, or overlapped with it (hidden as far as it lasts)",
    )  # fmt: skip
    name: str = dataclasses.field(default="", compare=False)
    description: str = dataclasses.field(default="", compare=False)

    EQUATIONS: ClassVar[Equations] = EQUATIONS
    PARTS: ClassVar[tuple[type[Scenario], ...]] = (
        ParallelTrainingScenario,
        TrainingStateFitScenario,
        ActivationMemoryScenario,
    )

    def __post_init__(self) -> None:
        o = type(self).__name__
        layout = self.layout
        if not isinstance(layout, ParallelTrainingScenario):
            raise FieldError(o, "layout", f"must be a ParallelTrainingScenario, got {type(layout).__name__}")
        if layout.activations is None:
            msg = "needs activations (an ActivationMemoryScenario): the micro-batch and sequence the time reads"
            raise FieldError(o, "layout", msg)
        if layout.hardware is None:
            raise FieldError(o, "layout", "needs a device (its state's hardware) to time the iteration on")
        env = self._check_fields()
        self._check_grid({"layout.": layout, "layout.state.": layout.state, "layout.activations.": layout.activations})
        for share in ("matmul_share", "memory_share", "link_share", "network_share", "gather_scatter_cost"):
            small = np.asarray(env[share]) < _LEAST_SHARE
            if np.any(small):
                what = (
                    "a cost multiple" if share == "gather_scatter_cost" else "an achieved share of a device that runs"
                )
                msg = f"must be at least 1 % ({what}), got {_first(env[share], small)!r}"
                raise FieldError(o, share, msg)
        self._check_batch(o, env)
        self._set_env(*self._environment(env))

    def _check_batch(self, o: str, env: dict[str, Any]) -> None:
        """B must be a whole number of micro-batches per replica, at least p of them."""
        layout = self.layout
        acts = layout.activations
        assert acts is not None  # noqa: S101 - checked in __post_init__
        per_step = np.asarray(acts.micro_batch) * np.asarray(layout.data_parallel)
        batch = np.asarray(env["global_batch_size"])
        uneven = batch % per_step != 0
        if np.any(uneven):
            msg = (
                f"must be a multiple of b·N_d = {_first(per_step, uneven)} (micro-batch times data-parallel "
                f"replicas), got {_first(batch, uneven)}"
            )
            raise FieldError(o, "global_batch_size", msg)
        short = batch // per_step < np.asarray(layout.pipeline_parallel)
        if np.any(short):
            msg = (
                f"must give each pipeline at least p = {_first(layout.pipeline_parallel, short)} micro-batches "
                f"(B ≥ p·b·N_d = {_first(np.asarray(layout.pipeline_parallel) * per_step, short)}), "
                f"got {_first(batch, short)}"
            )
            raise FieldError(o, "global_batch_size", msg)

    def _environment(self, env: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
        layout = self.layout
        node = layout.hardware
        acts = layout.activations
        assert node is not None  # noqa: S101 - checked in __post_init__
        assert acts is not None  # noqa: S101
        w = layout.workload
        layout_env = layout._env  # noqa: SLF001 - composing: the layout's magnitudes, converted once
        values: dict[str, Any] = dict(layout_env.values)
        needs: dict[str, str] = dict(layout_env.needs)
        values.update(env)
        values.update(
            layer_time_inputs(w, acts.magnitude("ffn_multiple"), acts.magnitude("precision_bytes"), acts.attention)
        )
        values["vocabulary"] = w.vocab_size
        values["windowed_keys"], windows = attended_keys(w, values["sequence"], acts.attention)
        values["windows_cut_scores"] = windows
        projections, activation_values = projection_operations(w, acts.magnitude("ffn_multiple"))
        sequence_split = np.asarray(layout.sequence_parallel, dtype=bool) & (np.asarray(layout.tensor_parallel) > 1)
        shares = class_shares(
                curves=values["share_curves"], matmul_share=values["matmul_share"],
                memory_share=values["memory_share"], projections=projections, micro_batch=values["micro_batch"],
                sequence=values["sequence"], tensor_parallel=values["tensor_parallel"],
                sequence_shards=np.where(sequence_split, layout.tensor_parallel, 1), hidden=float(w.hidden_dim),
                activation_values=activation_values, heads=float(w.heads), attention_width=values["attention_width"],
                vocabulary=float(w.vocab_size or 0), width=float(acts.magnitude("precision_bytes")),
                eager=acts.attention == "eager",
        )  # fmt: skip
        values.update({k: (v if np.ndim(v) > 0 else float(v)) for k, v in shares.items()})
        needs["vocabulary"] = f"workload.vocab_size to count the output layer's FLOPs ({w.name} gives none)"
        values["peak_flops"] = None if node.peak_flops is None else float(node.peak_flops.m_as("FLOP/second"))
        needs["peak_flops"] = f"hardware.peak_flops ({node.name} gives none)"
        for name in ("link_bandwidth", "network_bandwidth"):
            figure = getattr(node, name)
            values[name] = None if figure is None else float(figure.m_as("byte/second"))
            needs[name] = f"hardware.{name} ({node.name} gives none)"
        t, p = np.asarray(layout.tensor_parallel), np.asarray(layout.pipeline_parallel)
        n_d, e = np.asarray(layout.data_parallel), np.asarray(layout.expert_parallel)
        n_node = node.node_devices or 1  # a device without a node's links talks over the network
        recompute = np.asarray(layout.recompute)
        flags = {
            "recomputes_layers": recompute == "full",
            "recomputes_layers_split": (recompute == "full") & (t > 1),
            "recomputes_scores": recompute == "selective",
            "tensor_split": t > 1,
            "sequence_split": np.asarray(layout.sequence_parallel, dtype=bool) & (t > 1),
            "pipelined": p > 1,
            "data_split": n_d > 1,
            "experts_split": (e > 1) & bool(w.experts),
            "tensor_in_node": t <= n_node,
            "pipeline_in_node": t * n_d * p <= n_node,
            "data_in_node": t * n_d <= n_node,
            "experts_in_node": t * e <= n_node,
        }
        values.update({k: (v if v.ndim > 0 else bool(v)) for k, v in flags.items()})
        return values, needs

    # -- arithmetic
    attended_keys = derived("attended_keys")
    micro_batches = derived("micro_batches")
    tokens_per_iteration = derived("tokens_per_iteration")
    layer_forward_flops_per_token = derived("layer_forward_flops_per_token")
    output_forward_flops_per_token = derived("output_forward_flops_per_token")
    model_flops_per_token = derived("model_flops_per_token")
    model_flops_per_iteration = derived("model_flops_per_iteration")
    recompute_flops_per_token = derived("recompute_flops_per_token")
    hardware_flops_per_iteration = derived("hardware_flops_per_iteration")
    # -- where the time goes
    compute_time = derived("compute_time")
    recompute_time = derived("recompute_time")
    layer_elementwise_bytes = derived("layer_elementwise_bytes")
    elementwise_traffic = derived("elementwise_traffic")
    layer_elementwise_weighted_bytes = derived("layer_elementwise_weighted_bytes")
    elementwise_time = derived("elementwise_time")
    layer_operand_bytes = derived("layer_operand_bytes")
    output_operand_bytes = derived("output_operand_bytes")
    matrix_traffic = derived("matrix_traffic")
    matrix_operand_time = derived("matrix_operand_time")
    output_layer_time = derived("output_layer_time")
    collective_cost = derived("collective_cost")
    tensor_bandwidth = derived("tensor_bandwidth")
    tensor_parallel_time = derived("tensor_parallel_time")
    pipeline_bandwidth = derived("pipeline_bandwidth")
    pipeline_transfer_time = derived("pipeline_transfer_time")
    expert_bandwidth = derived("expert_bandwidth")
    expert_time = derived("expert_time")
    pipeline_work_time = derived("pipeline_work_time")
    bubble_fraction = derived("bubble_fraction")
    bubble_time = derived("bubble_time")
    data_bandwidth = derived("data_bandwidth")
    data_parallel_time = derived("data_parallel_time")
    exposed_data_parallel_time = derived("exposed_data_parallel_time")
    optimizer_step_time = derived("optimizer_step_time")
    communication_time = derived("communication_time")
    iteration_time = derived("iteration_time")
    model_flops_utilization = derived("model_flops_utilization")
    hardware_flops_utilization = derived("hardware_flops_utilization")
    tokens_per_second = derived("tokens_per_second")

    @property
    def hardware(self) -> HardwareNode | None:
        """The device: ``layout.hardware``."""
        return self.layout.hardware

    @property
    def workload(self) -> Any:
        """The network being trained: ``layout.workload``."""
        return self.layout.workload

    @property
    def devices(self) -> Any:
        """Devices in the run: ``layout.devices``."""
        return self.layout.devices

    @with_equations("time_to_train")
    def time_to_train(self, tokens: Any) -> Any:
        """Days to train on ``tokens`` tokens (a count, e.g. ``300e9``) at this iteration time."""
        o = f"{type(self).__name__}.time_to_train"
        count = check_count(o, "tokens", tokens) if isinstance(tokens, int) else _positive(o, tokens)
        env = self._env.with_inputs({"train_tokens": count})
        return self.wrapper("time_to_train")(env.get("time_to_train"))

    @property
    def is_sweep(self) -> bool:
        """True when a field, or a field of the layout, holds a NumPy array."""
        return super().is_sweep or self.layout.is_sweep


def _positive(owner: str, value: Any) -> float:
    """A finite number of tokens, at least one as a whole count is (``300e9`` reads as a float)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise FieldError(owner, "tokens", f"must be a positive number of tokens, got {value!r}")
    number = float(value)
    if not np.isfinite(number) or number <= 0:
        raise FieldError(owner, "tokens", f"must be a positive number of tokens, got {value!r}")
    if number < 1:
        raise FieldError(owner, "tokens", f"must be at least 1 token, got {value!r}")
    return number
