"""The equations of the training-state kind, once, as data: weights, gradients, optimizer state and their traffic.

Each formula's quantity has a row in :data:`NOTATION` (its symbol, the base unit of its magnitude and a
label), beside the rows of the flags the scenario sets and of its methods' arguments; :data:`EQUATIONS`
joins them into the value :class:`~mlsysim_nb.kinds.training.model.TrainingStateFitScenario` reads. The
fields' own symbols are in their ``knob()`` declarations. Magnitudes are in base units: bytes, seconds,
bytes per second and plain counts.

Sources
-------
* Hu et al. (2021), "LoRA", Sec. 4.1: a rank-``r`` update of a
  ``d_in × d_out`` matrix trains ``r·(d_in + d_out)`` parameters.
"""

from __future__ import annotations

from mlsysim_nb.formula import Case, Formula
from mlsysim_nb.model.equations import Equations
from mlsysim_nb.model.notation import Quantity, quantity

__all__ = ["ADAPTER_SHAPE", "DEFAULT_ADAPTER_RANK", "EQUATIONS", "NOTATION"]

#: The fields that give an adapter's shape, in the order the low-rank formula reads them.
ADAPTER_SHAPE = ("adapter_rank", "adapted_matrices", "adapter_in_dim", "adapter_out_dim")
#: The rank a live panel starts adapters at (a common LoRA rank; Hu et al. 2021 try 1 to 64).
DEFAULT_ADAPTER_RANK = 16

_F = Formula

_TRAINING = [
    _F("weights", "parameters * bytes_per_value", "Base-model weight storage.", "byte"),
    _F(
        "gradients",
        "parameters * bytes_per_value",
        "Full-model gradient storage.",
        "byte",
        note="Full-model even in adapter mode, as the model defines it; `total` then uses the adapters' own gradients.",
    ),
    _F(
        "optimizer_state",
        "parameters * optimizer_bytes_per_parameter",
        "Full-model optimizer storage.",
        "byte",
        note="Full-model even in adapter mode, as the model defines it.",
    ),
    _F(
        "optimizer_values_per_parameter",
        "optimizer_bytes_per_parameter / bytes_per_value",
        "Optimizer bytes per parameter in units of the weight-value width.",
    ),
    _F(
        "master_weights",
        "parameters * master_bytes_per_parameter",
        "Full-model master-weight storage; zero when no master copy is configured.",
        "byte",
    ),
    _F(
        "bytes_per_trained_parameter",
        "2 * bytes_per_value + master_bytes_per_parameter + optimizer_bytes_per_parameter",
        "Weights, gradients, master copy and optimizer state for one trained parameter.",
        "byte",
    ),
    _F(
        "adapter_count",
        doc="Trainable adapter parameters, stated or from the adapter shape.",
        cases=(
            Case("stated", "adapter_parameters", when="adapter_stated"),
            Case("from the shape", "layers * adapted_matrices * low_rank_update_params"),
        ),
    ),
    _F(
        "low_rank_update_params",
        "adapter_rank * (adapter_in_dim + adapter_out_dim)",
        "Parameters of one rank-r update of a d_in x d_out matrix.",
    ),
    _F("adapter_state", "adapter_count * bytes_per_trained_parameter", "Everything the adapters hold.", "byte"),
    _F("adapter_weights", "adapter_count * bytes_per_value", "Adapter weight storage.", "byte"),
    _F("adapter_gradients", "adapter_count * bytes_per_value", "Adapter gradient storage.", "byte"),
    _F("adapter_master", "adapter_count * master_bytes_per_parameter", "Adapter master-copy storage.", "byte"),
    _F(
        "adapter_optimizer_state",
        "adapter_count * optimizer_bytes_per_parameter",
        "Adapter optimizer-state storage.",
        "byte",
    ),
    _F("adapter_fraction", "adapter_count / parameters", "Adapter parameters relative to all base parameters."),
    _F(
        "full_state",
        "weights + gradients + optimizer_state + master_weights",
        "State if every parameter trained: the same recipe with no adapters.",
        "byte",
    ),
    _F(
        "total",
        doc="Parameter state: frozen base weights plus adapter state, or the full training state.",
        unit="byte",
        cases=(
            Case("adapter mode", "weights + adapter_state", when="adapter_mode"),
            Case("full tuning", "weights + gradients + optimizer_state + master_weights"),
        ),
    ),
    _F("adapter_saved", "full_state - total", "State avoided by the adapters relative to full tuning.", "byte"),
    _F("adapter_reduction", "full_state / total", "Full-tuning state over this run's state."),
    _F("adapter_kept_share", "total / full_state", "Fraction of the full-tuning state this run keeps."),
    _F("frozen_share", "weights / total", "The base weights' share of the state."),
    _F(
        "adapter_reduction_ceiling",
        "bytes_per_trained_parameter / bytes_per_value",
        "The reduction as adapters shrink to nothing: bytes per trained over per frozen parameter.",
    ),
    _F("copies", "total / weights", "Total state in units of the weights."),
    _F("training_total", "total + activations", "State plus saved activations.", "byte"),
    _F("training_copies", "training_total / weights", "Training total in units of the weights."),
    _F(
        "fits",
        "total <= capacity",
        "Whether the parameter state alone fits the device; false without hardware.",
    ),
    _F(
        "training_fits",
        doc="Whether the whole run fits the device: the state plus the saved activations, when they are given.",
        cases=(
            Case("with activations", "training_total <= capacity", when="has_activations"),
            Case("state only", "total <= capacity"),
        ),
    ),
    _F("capacity_share", "total / capacity", "State before activations as a share of device memory."),
    _F(
        "training_capacity_multiple",
        "training_total / capacity",
        "State and saved activations in units of device memory.",
    ),
    _F(
        "resident_batch_limit",
        "(capacity - total) / (activations / batch_size)",
        "Sequences whose activations fit beside the state in device memory.",
        note="Negative when the state alone already exceeds the device: the equation is not clamped.",
    ),
    _F(
        "max_resident_batch",
        "floor(resident_batch_limit)",
        "Integer floor of the resident batch limit, not clamped at zero.",
        note="Not clamped: a negative value says by how many sequences the state alone overflows.",
    ),
    _F(
        "checkpoint",
        "weights + master_weights + optimizer_state",
        "A resumable checkpoint: weights, master copy and optimizer state; gradients are recomputed.",
        "byte",
        note="Full-model optimizer state even in adapter mode, as the model defines it; see adapter_checkpoint.",
    ),
    _F(
        "updated_bytes_per_parameter",
        doc="Bytes of the weight copy the optimizer updates: the master copy if there is one.",
        unit="byte",
        cases=(
            Case("master copy", "master_bytes_per_parameter", when="has_master"),
            Case("no master copy", "bytes_per_value"),
        ),
    ),
    _F(
        "update_bytes_per_parameter",
        "bytes_per_value + 2 * updated_bytes_per_parameter + 2 * optimizer_bytes_per_parameter",
        "Bytes one optimizer update moves per parameter: read the gradient, read and write "
        "the updated weights and the optimizer state.",
        "byte",
    ),
    _F(
        "update_traffic",
        "update_bytes_per_parameter * parameters",
        "Full-model optimizer-update traffic.",
        "GB",
    ),
    _F(
        "update_time",
        "update_traffic / bandwidth",
        "The optimizer update at the device's memory bandwidth (elementwise, bandwidth-bound).",
        "ms",
    ),
    _F(
        "adapter_checkpoint",
        "adapter_count * (bytes_per_value + master_bytes_per_parameter + optimizer_bytes_per_parameter)",
        "What an adapter run must save to resume: the adapters' weights, master copy and optimizer state "
        "(the frozen base is already on disk).",
        "GB",
    ),
    _F(
        "adapter_update_traffic",
        "update_bytes_per_parameter * adapter_count",
        "Optimizer-update traffic of an adapter run: only the adapters are updated.",
        "GB",
    ),
    _F(
        "adapter_update_time",
        "adapter_update_traffic / bandwidth",
        "The adapters' optimizer update at the device's memory bandwidth.",
        "ms",
    ),
    _F(
        "activations_at",
        "activations * at_batch_size / batch_size",
        "Saved activations at another batch size, scaled linearly.",
        "byte",
    ),
    _F("checkpoint_write_time", "checkpoint / write_bandwidth", "Seconds to write the checkpoint.", "second"),
]

#: The notation of what these equations define: each formula's quantity, the flags, the methods' arguments.
NOTATION: dict[str, Quantity] = {
    # -- flags the scenario sets from its fields
    "has_activations": quantity("has_act", "", "activations given"),
    "has_master": quantity("has_master", "", "a master copy is kept"),
    "adapter_mode": quantity("adapter_mode", "", "adapters are configured"),
    "adapter_stated": quantity("adapter_stated", "", "the adapter count is stated"),
    # -- arguments of the methods
    "at_batch_size": quantity("B′", "", "another batch size"),
    "write_bandwidth": quantity("BW_write", "byte/second", "checkpoint write bandwidth"),
    # -- results
    "weights": quantity("M_w", "byte", "weights"),
    "gradients": quantity("M_g", "byte", "gradients"),
    "optimizer_state": quantity("M_opt", "byte", "optimizer state"),
    "master_weights": quantity("M_master", "byte", "master weights"),
    "optimizer_values_per_parameter": quantity("n_opt", "", "optimizer values per parameter"),
    "bytes_per_trained_parameter": quantity("b_train", "byte", "bytes per trained parameter"),
    "adapter_count": quantity("N_ad", "", "adapter parameters"),
    "adapter_state": quantity("M_ad", "byte", "adapter state"),
    "adapter_weights": quantity("M_ad,w", "byte", "adapter weights"),
    "adapter_gradients": quantity("M_ad,g", "byte", "adapter gradients"),
    "adapter_master": quantity("M_ad,master", "byte", "adapter master copy"),
    "adapter_optimizer_state": quantity("M_ad,opt", "byte", "adapter optimizer state"),
    "adapter_fraction": quantity("f_ad", "", "adapter fraction of parameters"),
    "full_state": quantity("M_full", "byte", "full-tuning state"),
    "total": quantity("M_state", "byte", "parameter state"),
    "adapter_saved": quantity("M_saved", "byte", "state saved by adapters"),
    "adapter_reduction": quantity("R_ad", "", "adapter reduction"),
    "adapter_kept_share": quantity("k_ad", "", "share of full state kept"),
    "frozen_share": quantity("φ_frozen", "", "the weights' share of the state (frozen with adapters)"),
    "adapter_reduction_ceiling": quantity("R_max", "", "reduction ceiling"),
    "copies": quantity("c", "", "state in weight copies"),
    "training_total": quantity("M_train", "byte", "state plus activations"),
    "training_copies": quantity("c_train", "", "training total in weight copies"),
    "fits": quantity("fits", "", "state fits the device"),
    "training_fits": quantity("fits_train", "", "state and activations fit the device"),
    "adapter_checkpoint": quantity("M_ad,ckpt", "byte", "adapter checkpoint"),
    "adapter_update_traffic": quantity("T_ad,upd", "byte", "adapter-update traffic"),
    "adapter_update_time": quantity("t_ad,upd", "second", "adapter-update time"),
    "capacity_share": quantity("u_state", "", "share of device memory"),
    "training_capacity_multiple": quantity("u_train", "", "training total in device memories"),
    "resident_batch_limit": quantity("B_lim", "", "resident batch limit"),
    "max_resident_batch": quantity("B_res", "", "largest resident batch"),
    "checkpoint": quantity("M_ckpt", "byte", "checkpoint"),
    "updated_bytes_per_parameter": quantity("b_upd", "byte", "bytes of the updated weight copy"),
    "update_bytes_per_parameter": quantity("b_step", "byte", "update traffic per parameter"),
    "update_traffic": quantity("T_upd", "byte", "optimizer-update traffic"),
    "update_time": quantity("t_upd", "second", "optimizer-update time"),
    "activations_at": quantity("M_act,B′", "byte", "activations at another batch"),
    "checkpoint_write_time": quantity("t_ckpt", "second", "checkpoint write time"),
    "low_rank_update_params": quantity("n_LR", "", "low-rank update parameters"),
}

#: The training-state equations, in reading order.
EQUATIONS = Equations("the training-state equations", _TRAINING, NOTATION)
