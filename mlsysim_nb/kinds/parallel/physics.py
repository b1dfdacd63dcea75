"""The physics of training on many devices: sharded state, parallel activations and communication.

The formulas live by concern: :mod:`~mlsysim_nb.kinds.parallel.state` (the parameter state, ZeRO and expert
parallelism), :mod:`~mlsysim_nb.kinds.parallel.activations` (one layer on one device, from the layer table)
and :mod:`~mlsysim_nb.kinds.parallel.traffic` (communication, the work per token); this module adds the
layout and the fit and assembles them.

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
* Rajbhandari et al. (2022), DeepSpeed-MoE; Lepikhin et al. (2020), GShard; Fedus et al. (2021), Switch
  Transformer: expert parallelism and its all-to-all (see :mod:`~mlsysim_nb.kinds.parallel.traffic`).
"""

from __future__ import annotations

from mlsysim_nb.formula import Case, Symbol
from mlsysim_nb.kinds.activation.physics import EQUATIONS as ACTIVATION_EQUATIONS
from mlsysim_nb.kinds.parallel.activations import ACTIVATIONS
from mlsysim_nb.kinds.parallel.state import STATE
from mlsysim_nb.kinds.parallel.traffic import ALL_TO_ALLS, TRAFFIC
from mlsysim_nb.kinds.training.physics import EQUATIONS as TRAINING_EQUATIONS
from mlsysim_nb.model.equations import Equations, defined
from mlsysim_nb.model.notation import Quantity, quantity

__all__ = ["EQUATIONS", "NOTATION"]

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

#: The notation of the other names these equations define: what the fields and the layer table give them.
NOTATION: dict[str, Quantity] = {
    # -- a count the formulas read by name
    "all_to_alls": Quantity(
        Symbol(str(ALL_TO_ALLS)), "", "all-to-alls per expert layer and micro-batch (dispatch, combine; ×2 backward)"
    ),
    # -- what the fields give the formulas
    "gradient_width_given": Quantity(Symbol("[b_g given]"), "", "gradient width stated"),
    "experts_per_token": quantity("k_exp", "", "experts per token"),
    "active_parameters": quantity("P_active", "", "active parameters"),
    # -- what the layer table gives them (kinds/parallel/table.py)
    "sp_row_bytes": quantity("Σ_SP", "byte", "bytes per token and hidden unit of the rows only SP splits"),
    "tp_row_bytes": quantity("Σ_TP", "byte", "bytes per token and hidden unit of the rows t splits, scores aside"),
    "score_row_bytes": quantity(
        "Σ_score", "byte", "bytes per attention score of the rows selective recomputation drops"
    ),
    "expert_parameters": quantity("P_exp", "", "parameters of the routed experts"),
    "input_layer_bytes": quantity(
        "m_in", "byte", "one micro-batch's embedding rows and rows kept once per model, on one device"
    ),
    "output_layer_bytes": quantity(
        "m_out", "byte", "one micro-batch's final norm, output layer and loss (FP32 logits), on one device"
    ),
    # -- flags the fields set
    "shards_optimizer": quantity("[z ≥ 1]", "", "ZeRO shards the optimizer state"),
    "shards_gradients": quantity("[z ≥ 2]", "", "ZeRO shards the gradients"),
    "shards_weights": quantity("[z = 3]", "", "ZeRO shards the weights"),
    "splits_experts": quantity("[e > 1]", "", "expert parallelism on"),
    "keeps_scores": quantity("[none]", "", "no recomputation"),
    "keeps_layer_tensors": quantity("[selective]", "", "selective recomputation"),
    "interleaved": quantity("[m > 1]", "", "interleaved schedule"),
    "pipelined_with_output": quantity("[p > 1, v]", "", "a pipeline, and the vocabulary sizes its output layer"),
    "output_unsized": quantity("[no v]", "", "activations given, but no vocabulary to size the output layer"),
    "has_experts": quantity("[E > 0]", "", "a mixture of experts"),
    "has_expert_traffic": quantity("[E > 0, activations]", "", "a mixture of experts, activations given"),
}

#: The many-device equations, with the single-device ones they read.
EQUATIONS = Equations(
    "the many-device equations",
    (*_LAYOUT, *STATE, *ACTIVATIONS, *_TOTALS, *TRAFFIC),
    NOTATION,
    constants={"all_to_alls": ALL_TO_ALLS},
    includes=(TRAINING_EQUATIONS, ACTIVATION_EQUATIONS),
)
