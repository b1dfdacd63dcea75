"""The physics of training on many devices: sharded state, parallel activations and communication.

The equations of :class:`~mlsysim_nb.kinds.parallel.model.ParallelTrainingScenario`, once,
each formula written with its quantity's symbol, label and base unit. :data:`EQUATIONS` includes
the training-state and activation equations, which these read (a replica's weights, the per-token
coefficient), so the one value holds every formula the scenario evaluates.

Sources
-------
* Rajbhandari et al. (2020), "ZeRO: Memory Optimizations Toward Training
  Trillion Parameter Models", arXiv:1910.02054, Sec. 5 and Figure 1: stage 1
  partitions the optimizer states (for mixed-precision Adam they include the
  FP32 master copy, ``K = 12`` bytes per parameter), stage 2 also the
  gradients, stage 3 also the 16-bit parameters; Sec. 7: stages 1 and 2 move
  the same ``2Ψ`` per step as plain data parallelism (a reduce-scatter and an
  all-gather), stage 3 moves ``3Ψ`` (1.5×).
* Korthikanti et al. (2022), "Reducing Activation Recomputation in Large
  Transformer Models", arXiv:2205.05198, Table 2 (activations per layer
  under tensor parallelism ``t``, sequence parallelism and selective
  recomputation), Sec. 4.2.2 (tensor parallelism moves four all-reduces per
  layer, sequence parallelism the same volume as four all-gathers and four
  reduce-scatters), Sec. 4.2.3 (the first pipeline stage holds ``p``
  micro-batches; interleaving with ``m`` stages per device multiplies that by
  ``1 + (p − 1)/(p·m)``).
"""

from __future__ import annotations

from mlsysim_nb import layers
from mlsysim_nb.formula import Case, Symbol
from mlsysim_nb.kinds.activation.physics import EQUATIONS as ACTIVATION_EQUATIONS
from mlsysim_nb.kinds.training.physics import EQUATIONS as TRAINING_EQUATIONS
from mlsysim_nb.model.equations import Equations, defined
from mlsysim_nb.model.notation import Quantity, quantity

__all__ = ["EQUATIONS", "KORTHIKANTI_REPLICATED_BYTES", "NOTATION"]

#: Bytes per hidden element per layer (16-bit) that tensor parallelism leaves whole on every device
#: (Korthikanti et al. 2022, Sec. 4.2.1): the inputs of the two layer norms (2 + 2), of the QKV and the
#: first MLP projection (2 + 2), and the dropout masks after attention and after the MLP (1 + 1).
#: None of them depends on the feed-forward width. The rest of the 18 + 4f bytes (24 of Korthikanti's 34, at
#: f = 4: attention 8, the MLP's two f·h-wide tensors 4f) is split across the t devices; sequence parallelism
#: splits these 10 as well.
KORTHIKANTI_REPLICATED_BYTES = layers.replicated_bytes()

_D = defined

_LAYOUT = [
    _D(
        "model_parallel",
        "tensor_parallel * pipeline_parallel",
        "Devices one model replica is split across: t·p.",
        symbol="N_mp",
        label="devices per replica",
    ),
    _D(
        "devices",
        "data_parallel * model_parallel",
        "Devices in the whole run: N_d replicas of t·p devices.",
        symbol="N_dev",
        label="devices in the run",
    ),
]

_STATE = [
    _D(
        "replica_weights",
        doc="Weights one replica holds: the base weights, plus the adapters' in adapter mode.",
        unit="byte",
        cases=(
            Case("adapter mode", "weights + adapter_weights", when="adapter_mode"),
            Case("full tuning", "weights"),
        ),
        symbol="M_w,rep",
        label="weights per replica",
        base="byte",
    ),
    _D(
        "gradient_width",
        doc="Bytes per gradient value: the state's value width unless stated (4 for FP32 gradients).",
        unit="byte",
        cases=(
            Case("stated", "gradient_bytes_per_value", when="gradient_width_given"),
            Case("the state's value width", "bytes_per_value"),
        ),
        note="Megatron-LM's distributed optimizer and DeepSpeed keep FP32 gradients (18 bytes per parameter"
        " for mixed-precision Adam, not 16).",
        symbol="b_g",
        label="bytes per gradient value",
        base="byte",
    ),
    _D(
        "replica_gradients",
        "trained_parameters * gradient_width",
        "Gradients one replica holds: only the adapters' in adapter mode (the base is frozen).",
        "byte",
        symbol="M_g,rep",
        label="gradients per replica",
        base="byte",
    ),
    _D(
        "replica_optimizer_state",
        doc="Optimizer state one replica holds: only the adapters' in adapter mode.",
        unit="byte",
        cases=(
            Case("adapter mode", "adapter_optimizer_state", when="adapter_mode"),
            Case("full tuning", "optimizer_state"),
        ),
        symbol="M_opt,rep",
        label="optimizer state per replica",
        base="byte",
    ),
    _D(
        "replica_master_weights",
        doc="Master copy one replica holds: only the adapters' in adapter mode.",
        unit="byte",
        cases=(Case("adapter mode", "adapter_master", when="adapter_mode"), Case("full tuning", "master_weights")),
        symbol="M_master,rep",
        label="master copy per replica",
        base="byte",
    ),
    _D(
        "optimizer_shards",
        doc="Data-parallel devices that share the optimizer state and master copy (ZeRO stage 1 and up).",
        cases=(Case("ZeRO stage 1 or more", "data_parallel", when="shards_optimizer"), Case("replicated", "1")),
        symbol="N_opt",
        label="optimizer-state shards",
    ),
    _D(
        "gradient_shards",
        doc="Data-parallel devices that share the gradients (ZeRO stage 2 and up).",
        cases=(Case("ZeRO stage 2 or more", "data_parallel", when="shards_gradients"), Case("replicated", "1")),
        symbol="N_g",
        label="gradient shards",
    ),
    _D(
        "weight_shards",
        doc="Data-parallel devices that share the weights (ZeRO stage 3).",
        cases=(Case("ZeRO stage 3", "data_parallel", when="shards_weights"), Case("replicated", "1")),
        symbol="N_w",
        label="weight shards",
    ),
    _D(
        "weights_per_device",
        "replica_weights / (model_parallel * weight_shards)",
        "Weights on one device: split by t·p, then sharded by ZeRO stage 3.",
        "byte",
        symbol="M_w,dev",
        label="weights",
        base="byte",
    ),
    _D(
        "gradients_per_device",
        "replica_gradients / (model_parallel * gradient_shards)",
        "Gradients on one device: split by t·p, then sharded by ZeRO stage 2 and up.",
        "byte",
        symbol="M_g,dev",
        label="gradients",
        base="byte",
    ),
    _D(
        "optimizer_state_per_device",
        "replica_optimizer_state / (model_parallel * optimizer_shards)",
        "Optimizer state on one device: split by t·p, then sharded by ZeRO stage 1 and up.",
        "byte",
        symbol="M_opt,dev",
        label="optimizer state",
        base="byte",
    ),
    _D(
        "master_weights_per_device",
        "replica_master_weights / (model_parallel * optimizer_shards)",
        "Master copy on one device: sharded with the optimizer state (ZeRO counts it there).",
        "byte",
        symbol="M_master,dev",
        label="master weights",
        base="byte",
    ),
    _D(
        "state_per_device",
        "weights_per_device + gradients_per_device + optimizer_state_per_device + master_weights_per_device",
        "Model state on one device.",
        "byte",
        symbol="M_state,dev",
        label="model state per device",
        base="byte",
    ),
]

_ACTIVATIONS = [
    _D(
        "replicated_bytes_coefficient",
        "replicated_constant * precision_bytes / 2",
        "Activation bytes per hidden element per layer that tensor parallelism leaves whole on each device.",
        "byte",
        symbol="κ_rep",
        label="replicated coefficient",
        base="byte",
    ),
    _D(
        "sharded_bytes_coefficient",
        "per_token_bytes_coefficient - replicated_bytes_coefficient",
        "Activation bytes per hidden element per layer inside the tensor-parallel regions (split by t).",
        "byte",
        symbol="κ_tp",
        label="tensor-parallel coefficient",
        base="byte",
    ),
    _D(
        "sequence_shards",
        doc="Devices that split the replicated regions along the sequence: t with sequence parallelism.",
        cases=(Case("sequence parallel", "tensor_parallel", when="sequence_parallel"), Case("no SP", "1")),
        symbol="t_SP",
        label="sequence shards",
    ),
    _D(
        "layer_activations",
        doc="Saved activations of one layer for one micro-batch on one device (Korthikanti et al. 2022, Table 2).",
        unit="byte",
        cases=(
            Case(
                "no recomputation",
                "sequence * micro_batch * hidden_dim * (replicated_bytes_coefficient / sequence_shards"
                " + (sharded_bytes_coefficient + score_bytes_coefficient) / tensor_parallel)",
                when="keeps_scores",
            ),
            Case(
                "selective recomputation",
                "sequence * micro_batch * hidden_dim * (replicated_bytes_coefficient / sequence_shards"
                " + sharded_bytes_coefficient / tensor_parallel)",
                when="keeps_layer_tensors",
            ),
            Case("full recomputation", "sequence * micro_batch * hidden_dim * precision_bytes / sequence_shards"),
        ),
        note="Full recomputation keeps only each layer's input: 2sbh, as Table 2 gives it; with sequence"
        " parallelism that input is itself split along the sequence (2sbh/t), as Megatron-LM keeps it.",
        symbol="m_layer",
        label="activations per layer and micro-batch",
        base="byte",
    ),
    _D(
        "stage_layers",
        "layers // pipeline_parallel",
        "Layers on one pipeline stage: L/p (p divides L).",
        symbol="L_stage",
        label="layers per pipeline stage",
    ),
    _D(
        "interleave_factor",
        doc="Extra micro-batches the first stage holds under the interleaved schedule.",
        cases=(
            Case(
                "interleaved, m > 1",
                "1 + (pipeline_parallel - 1) / (pipeline_parallel * interleave)",
                when="interleaved",
            ),
            Case("1F1B, m = 1", "1"),
        ),
        symbol="f_int",
        label="interleaving factor",
    ),
    _D(
        "micro_batches_in_flight",
        "pipeline_parallel * interleave_factor",
        "Micro-batches whose activations the first pipeline stage holds at its peak.",
        symbol="n_mb",
        label="micro-batches in flight",
    ),
    _D(
        "activations_per_device",
        "layer_activations * stage_layers * micro_batches_in_flight",
        "Saved activations of the first pipeline stage, the device that holds the most.",
        "byte",
        symbol="M_act,dev",
        label="activations",
        base="byte",
    ),
]

_TOTALS = [
    _D(
        "total_per_device",
        doc="Model state plus saved activations on one device.",
        unit="byte",
        cases=(
            Case("with activations", "state_per_device + activations_per_device", when="has_activations"),
            Case("state only", "state_per_device"),
        ),
        symbol="M_dev",
        label="memory per device",
        base="byte",
    ),
    _D(
        "fits_per_device",
        "state_per_device <= capacity",
        "Whether one device holds its share of the parameter state (its activations not counted), as `fits` means "
        "on one device.",
        symbol="fits_dev",
        label="the state fits one device",
    ),
    _D(
        "training_fits_per_device",
        "total_per_device <= capacity",
        "Whether one device holds its share of the whole run: state and activations.",
        symbol="fits_run,dev",
        label="the run fits one device",
    ),
    _D(
        "device_memory_share",
        "total_per_device / capacity",
        "Memory in use on one device as a share of its capacity.",
        symbol="u_dev",
        label="share of device memory",
    ),
]

_TRAFFIC = [
    _D(
        "trained_parameters",
        doc="Parameters that receive gradients: the adapters in adapter mode, else all.",
        cases=(Case("adapter mode", "adapter_count", when="adapter_mode"), Case("full tuning", "parameters")),
        symbol="N_train",
        label="trained parameters",
    ),
    _D(
        "stored_parameters",
        doc="Parameters whose weights the model holds: the base, plus the adapters in adapter mode.",
        cases=(
            Case("adapter mode", "parameters + adapter_count", when="adapter_mode"),
            Case("full tuning", "parameters"),
        ),
        symbol="N_stored",
        label="stored parameters",
    ),
    _D(
        "gradient_allreduce_traffic",
        "2 * (data_parallel - 1) / data_parallel * trained_parameters / model_parallel * gradient_width",
        "Bytes one device sends per step in plain data parallelism: a ring all-reduce of its gradients.",
        "GB",
        symbol="T_DP",
        label="gradient all-reduce traffic",
        base="byte",
    ),
    _D(
        "zero_traffic_multiple",
        doc="Data-parallel traffic relative to plain data parallelism (ZeRO, Sec. 7).",
        cases=(
            Case(
                "ZeRO stage 3: reduce-scatter the gradients, gather the weights for forward and backward",
                "(trained_parameters * gradient_width + 2 * stored_parameters * bytes_per_value)"
                " / (2 * trained_parameters * gradient_width)",
                when="shards_weights",
            ),
            Case("stages 0 to 2: reduce-scatter and all-gather, as an all-reduce", "1"),
        ),
        symbol="ρ_ZeRO",
        label="ZeRO traffic multiple",
    ),
    _D(
        "data_parallel_traffic",
        "zero_traffic_multiple * gradient_allreduce_traffic",
        "Bytes one device sends per step for data parallelism under its ZeRO stage.",
        "GB",
        symbol="T_ZeRO",
        label="data-parallel traffic",
        base="byte",
    ),
    _D(
        "tensor_parallel_traffic_per_layer",
        "8 * (tensor_parallel - 1) / tensor_parallel * sequence * micro_batch * hidden_dim * precision_bytes",
        "Bytes one device sends per layer and micro-batch for tensor parallelism: four ring all-reduces of s·b·h"
        " (with sequence parallelism the same volume, as four all-gathers and four reduce-scatters).",
        "MB",
        symbol="T_TP",
        label="tensor-parallel traffic per layer",
        base="byte",
    ),
]

#: The notation of the other names these equations define: the flags the fields set, the constant.
NOTATION: dict[str, Quantity] = {
    # -- what the fields give the formulas, and the layer table's constant
    "replicated_constant": Quantity(Symbol(str(KORTHIKANTI_REPLICATED_BYTES)), "", "Korthikanti replicated bytes"),
    "gradient_width_given": Quantity(Symbol("[b_g given]"), "", "gradient width stated"),
    # -- flags the fields set
    "shards_optimizer": quantity("[z ≥ 1]", "", "ZeRO shards the optimizer state"),
    "shards_gradients": quantity("[z ≥ 2]", "", "ZeRO shards the gradients"),
    "shards_weights": quantity("[z = 3]", "", "ZeRO shards the weights"),
    "keeps_scores": quantity("[none]", "", "no recomputation"),
    "keeps_layer_tensors": quantity("[selective]", "", "selective recomputation"),
    "interleaved": quantity("[m > 1]", "", "interleaved schedule"),
}

#: The many-device equations, with the single-device ones they read.
EQUATIONS = Equations(
    "the many-device equations",
    (*_LAYOUT, *_STATE, *_ACTIVATIONS, *_TOTALS, *_TRAFFIC),
    NOTATION,
    constants={"replicated_constant": KORTHIKANTI_REPLICATED_BYTES},
    includes=(TRAINING_EQUATIONS, ACTIVATION_EQUATIONS),
)
