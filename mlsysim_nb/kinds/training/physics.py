"""The equations of the training-state kind, once, as data: weights, gradients, optimizer state and their traffic.

Each formula is written with the symbol, label and base unit of the quantity it computes
(:func:`~mlsysim_nb.model.equations.defined`); :data:`NOTATION` writes the other names these equations
define, the flags the scenario sets and its methods' arguments; :data:`EQUATIONS` is the value
:class:`~mlsysim_nb.kinds.training.model.TrainingStateFitScenario` reads. The fields' own symbols are in
their ``knob()`` declarations. Magnitudes are in base units: bytes, seconds,
bytes per second and plain counts.

Sources
-------
* Hu et al. (2021), "LoRA", Sec. 4.1: a rank-``r`` update of a
  ``d_in × d_out`` matrix trains ``r·(d_in + d_out)`` parameters.
"""

from __future__ import annotations

from mlsysim_nb.formula import Case
from mlsysim_nb.model.equations import Equations, defined
from mlsysim_nb.model.notation import Quantity, quantity

__all__ = ["ADAPTER_SHAPE", "DEFAULT_ADAPTER_RANK", "EQUATIONS", "NOTATION"]

#: The fields that give an adapter's shape, in the order the low-rank formula reads them.
ADAPTER_SHAPE = ("adapter_rank", "adapted_matrices", "adapter_in_dim", "adapter_out_dim")
#: The rank a live panel starts adapters at (a common LoRA rank; Hu et al. 2021 try 1 to 64).
DEFAULT_ADAPTER_RANK = 16

_D = defined

_TRAINING = [
    _D(
        "weights",
        "parameters * bytes_per_value",
        "Base-model weight storage.",
        "byte",
        symbol="M_w",
        label="weights",
        base="byte",
    ),
    _D(
        "gradients",
        "parameters * bytes_per_value",
        "Full-model gradient storage.",
        "byte",
        note="Full-model even in adapter mode, as the model defines it; `total` then uses the adapters' own gradients.",
        symbol="M_g",
        label="gradients",
        base="byte",
    ),
    _D(
        "optimizer_state",
        "parameters * optimizer_bytes_per_parameter",
        "Full-model optimizer storage.",
        "byte",
        note="Full-model even in adapter mode, as the model defines it.",
        symbol="M_opt",
        label="optimizer state",
        base="byte",
    ),
    _D(
        "optimizer_values_per_parameter",
        "optimizer_bytes_per_parameter / bytes_per_value",
        "Optimizer bytes per parameter in units of the weight-value width.",
        symbol="n_opt",
        label="optimizer values per parameter",
    ),
    _D(
        "master_weights",
        "parameters * master_bytes_per_parameter",
        "Full-model master-weight storage; zero when no master copy is configured.",
        "byte",
        symbol="M_master",
        label="master weights",
        base="byte",
    ),
    _D(
        "bytes_per_trained_parameter",
        "2 * bytes_per_value + master_bytes_per_parameter + optimizer_bytes_per_parameter",
        "Weights, gradients, master copy and optimizer state for one trained parameter.",
        "byte",
        symbol="b_train",
        label="bytes per trained parameter",
        base="byte",
    ),
    _D(
        "adapter_count",
        doc="Trainable adapter parameters, stated or from the adapter shape.",
        cases=(
            Case("stated", "adapter_parameters", when="adapter_stated"),
            Case("from the shape", "layers * adapted_matrices * low_rank_update_params"),
        ),
        symbol="N_ad",
        label="adapter parameters",
    ),
    _D(
        "low_rank_update_params",
        "adapter_rank * (adapter_in_dim + adapter_out_dim)",
        "Parameters of one rank-r update of a d_in x d_out matrix.",
        symbol="n_LR",
        label="low-rank update parameters",
    ),
    _D(
        "adapter_state",
        "adapter_count * bytes_per_trained_parameter",
        "Everything the adapters hold.",
        "byte",
        symbol="M_ad",
        label="adapter state",
        base="byte",
    ),
    _D(
        "adapter_weights",
        "adapter_count * bytes_per_value",
        "Adapter weight storage.",
        "byte",
        symbol="M_ad,w",
        label="adapter weights",
        base="byte",
    ),
    _D(
        "adapter_gradients",
        "adapter_count * bytes_per_value",
        "Adapter gradient storage.",
        "byte",
        symbol="M_ad,g",
        label="adapter gradients",
        base="byte",
    ),
    _D(
        "adapter_master",
        "adapter_count * master_bytes_per_parameter",
        "Adapter master-copy storage.",
        "byte",
        symbol="M_ad,master",
        label="adapter master copy",
        base="byte",
    ),
    _D(
        "adapter_optimizer_state",
        "adapter_count * optimizer_bytes_per_parameter",
        "Adapter optimizer-state storage.",
        "byte",
        symbol="M_ad,opt",
        label="adapter optimizer state",
        base="byte",
    ),
    _D(
        "adapter_fraction",
        "adapter_count / parameters",
        "Adapter parameters relative to all base parameters.",
        symbol="f_ad",
        label="adapter fraction of parameters",
    ),
    _D(
        "full_state",
        "weights + gradients + optimizer_state + master_weights",
        "State if every parameter trained: the same recipe with no adapters.",
        "byte",
        symbol="M_full",
        label="full-tuning state",
        base="byte",
    ),
    _D(
        "total",
        doc="Parameter state: frozen base weights plus adapter state, or the full training state.",
        unit="byte",
        cases=(
            Case("adapter mode", "weights + adapter_state", when="adapter_mode"),
            Case("full tuning", "weights + gradients + optimizer_state + master_weights"),
        ),
        symbol="M_state",
        label="parameter state",
        base="byte",
    ),
    _D(
        "adapter_saved",
        "full_state - total",
        "State avoided by the adapters relative to full tuning.",
        "byte",
        symbol="M_saved",
        label="state saved by adapters",
        base="byte",
    ),
    _D(
        "adapter_reduction",
        "full_state / total",
        "Full-tuning state over this run's state.",
        symbol="R_ad",
        label="adapter reduction",
    ),
    _D(
        "adapter_kept_share",
        "total / full_state",
        "Fraction of the full-tuning state this run keeps.",
        symbol="k_ad",
        label="share of full state kept",
    ),
    _D(
        "frozen_share",
        "weights / total",
        "The base weights' share of the state.",
        symbol="φ_frozen",
        label="the weights' share of the state (frozen with adapters)",
    ),
    _D(
        "adapter_reduction_ceiling",
        "bytes_per_trained_parameter / bytes_per_value",
        "The reduction as adapters shrink to nothing: bytes per trained over per frozen parameter.",
        symbol="R_max",
        label="reduction ceiling",
    ),
    _D("copies", "total / weights", "Total state in units of the weights.", symbol="c", label="state in weight copies"),
    _D(
        "training_total",
        "total + activations",
        "State plus saved activations.",
        "byte",
        note="The activations as stated: an ActivationMemoryScenario's model_activations(strategy) counts the whole"
        " model, its output layer and loss included; activations(strategy) and per_token_activations count the"
        " layers alone, as the reference's cases state them.",
        symbol="M_train",
        label="state plus activations",
        base="byte",
    ),
    _D(
        "training_copies",
        "training_total / weights",
        "Training total in units of the weights.",
        symbol="c_train",
        label="training total in weight copies",
    ),
    _D(
        "fits",
        "total <= capacity",
        "Whether the parameter state alone fits the device; false without hardware.",
        symbol="fits",
        label="state fits the device",
    ),
    _D(
        "training_fits",
        doc="Whether the whole run fits the device: the state plus the saved activations, when they are given.",
        cases=(
            Case("with activations", "training_total <= capacity", when="has_activations"),
            Case("state only", "total <= capacity"),
        ),
        symbol="fits_train",
        label="state and activations fit the device",
    ),
    _D(
        "capacity_share",
        "total / capacity",
        "State before activations as a share of device memory.",
        symbol="u_state",
        label="share of device memory",
    ),
    _D(
        "training_capacity_multiple",
        "training_total / capacity",
        "State and saved activations in units of device memory.",
        symbol="u_train",
        label="training total in device memories",
    ),
    _D(
        "resident_batch_limit",
        "(capacity - total) / (activations / batch_size)",
        "Sequences whose activations fit beside the state in device memory.",
        note="Negative when the state alone already exceeds the device: the equation is not clamped.",
        symbol="B_lim",
        label="resident batch limit",
    ),
    _D(
        "max_resident_batch",
        "floor(resident_batch_limit)",
        "Integer floor of the resident batch limit, not clamped at zero.",
        note="Not clamped: a negative value says by how many sequences the state alone overflows.",
        symbol="B_res",
        label="largest resident batch",
    ),
    _D(
        "checkpoint",
        "weights + master_weights + optimizer_state",
        "A resumable checkpoint: weights, master copy and optimizer state; gradients are recomputed.",
        "byte",
        note="Full-model optimizer state even in adapter mode, as the model defines it; see adapter_checkpoint.",
        symbol="M_ckpt",
        label="checkpoint",
        base="byte",
    ),
    _D(
        "updated_bytes_per_parameter",
        doc="Bytes of the weight copy the optimizer updates: the master copy if there is one.",
        unit="byte",
        cases=(
            Case("master copy", "master_bytes_per_parameter", when="has_master"),
            Case("no master copy", "bytes_per_value"),
        ),
        symbol="b_upd",
        label="bytes of the updated weight copy",
        base="byte",
    ),
    _D(
        "update_bytes_per_parameter",
        "bytes_per_value + 2 * updated_bytes_per_parameter + 2 * optimizer_bytes_per_parameter",
        "Bytes one optimizer update moves per parameter: read the gradient, read and write "
        "the updated weights and the optimizer state.",
        "byte",
        symbol="b_step",
        label="update traffic per parameter",
        base="byte",
    ),
    _D(
        "update_traffic",
        "update_bytes_per_parameter * parameters",
        "Full-model optimizer-update traffic.",
        "GB",
        symbol="T_upd",
        label="optimizer-update traffic",
        base="byte",
    ),
    _D(
        "update_time",
        "update_traffic / bandwidth",
        "The optimizer update at the device's memory bandwidth (elementwise, bandwidth-bound).",
        "ms",
        symbol="t_upd",
        label="optimizer-update time",
        base="second",
    ),
    _D(
        "adapter_checkpoint",
        "adapter_count * (bytes_per_value + master_bytes_per_parameter + optimizer_bytes_per_parameter)",
        "What an adapter run must save to resume: the adapters' weights, master copy and optimizer state "
        "(the frozen base is already on disk).",
        "GB",
        symbol="M_ad,ckpt",
        label="adapter checkpoint",
        base="byte",
    ),
    _D(
        "adapter_update_traffic",
        "update_bytes_per_parameter * adapter_count",
        "Optimizer-update traffic of an adapter run: only the adapters are updated.",
        "GB",
        symbol="T_ad,upd",
        label="adapter-update traffic",
        base="byte",
    ),
    _D(
        "adapter_update_time",
        "adapter_update_traffic / bandwidth",
        "The adapters' optimizer update at the device's memory bandwidth.",
        "ms",
        symbol="t_ad,upd",
        label="adapter-update time",
        base="second",
    ),
    _D(
        "activations_at",
        "activations * at_batch_size / batch_size",
        "Saved activations at another batch size, scaled linearly.",
        "byte",
        symbol="M_act,B′",
        label="activations at another batch",
        base="byte",
    ),
    _D(
        "checkpoint_write_time",
        "checkpoint / write_bandwidth",
        "Seconds to write the checkpoint.",
        "second",
        symbol="t_ckpt",
        label="checkpoint write time",
        base="second",
    ),
]

#: The notation of the other names these equations define: the flags the scenario sets, the methods' arguments.
NOTATION: dict[str, Quantity] = {
    # -- flags the scenario sets from its fields
    "has_activations": quantity("has_act", "", "activations given"),
    "has_master": quantity("has_master", "", "a master copy is kept"),
    "adapter_mode": quantity("adapter_mode", "", "adapters are configured"),
    "adapter_stated": quantity("adapter_stated", "", "the adapter count is stated"),
    # -- arguments of the methods
    "at_batch_size": quantity("B′", "", "another batch size"),
    "write_bandwidth": quantity("BW_write", "byte/second", "checkpoint write bandwidth"),
}

#: The training-state equations, in reading order.
EQUATIONS = Equations("the training-state equations", _TRAINING, NOTATION)
