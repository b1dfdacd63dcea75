"""The many-device equations of what moves between devices, and of the work per token.

Sources
-------
* Rajbhandari et al. (2020), ZeRO, Sec. 7: stages 1 and 2 move the same ``2Ψ`` per step as plain data
  parallelism (a reduce-scatter and an all-gather), stage 3 moves ``3Ψ`` (1.5×).
* Korthikanti et al. (2022), Sec. 4.2.2: tensor parallelism moves four all-reduces of ``s·b·h`` per layer
  (two forward, two backward); sequence parallelism the same volume as all-gathers and reduce-scatters.
* Lepikhin et al. (2020), GShard, Sec. 2.2 and 3.2, and Fedus et al. (2021), Switch Transformer, Sec. 2.2:
  an expert layer dispatches each token to its k experts with an all-to-all and combines their outputs
  with a second; the backward pass runs both again on the gradients. Each moves ``s·b·k·h`` values of a
  device's micro-batch, of which the ``(e − 1)/e`` bound for the other devices' experts leave the device
  (balanced routing). Rajbhandari et al. (2022), DeepSpeed-MoE, Sec. 5: the state counts every expert,
  while a token's arithmetic is that of the k experts it uses: ``6·P_active`` FLOPs per token trained
  (Kaplan et al. 2020, Sec. 2.1, with the active parameters).
"""

from __future__ import annotations

from mlsysim_nb.formula import Case
from mlsysim_nb.model.equations import Defined, defined

__all__ = ["ALL_TO_ALLS", "TRAFFIC"]

#: All-to-alls per expert layer and micro-batch: dispatch and combine, in the forward and the backward pass.
ALL_TO_ALLS = 4

_D = defined

TRAFFIC: list[Defined] = [
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
        doc="Bytes one device sends per step in plain data parallelism: a ring all-reduce of its gradients.",
        unit="GB",
        cases=(
            Case(
                "experts split over e devices: their gradients are reduced over the N_d/e replicas that hold them",
                "2 * trained_parameters / model_parallel * gradient_width * ((1 - expert_share)"
                " * (data_parallel - 1) / data_parallel"
                " + expert_share / expert_parallel * (expert_data_parallel - 1) / expert_data_parallel)",
                when="splits_experts",
            ),
            Case(
                "no expert parallelism",
                "2 * (data_parallel - 1) / data_parallel * trained_parameters / model_parallel * gradient_width",
            ),
        ),
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
    _D(
        "routed_tokens_per_device",
        "sequence * micro_batch * experts_per_token",
        "Token copies the experts on one device process per micro-batch and layer: with balanced routing, the e"
        " replicas' s·b·k copies spread evenly over their e devices, s·b·k on each whatever e is.",
        symbol="n_routed",
        label="routed tokens per device",
    ),
    _D(
        "expert_all_to_all_traffic_per_layer",
        "all_to_alls * (expert_parallel - 1) / expert_parallel * routed_tokens_per_device * hidden_dim"
        " * precision_bytes",
        "Bytes one device sends per expert layer and micro-batch: dispatch and combine forward, and both again in"
        " backward, each s·b·k·h values of which the (e − 1)/e for other devices' experts leave the device.",
        "MB",
        symbol="T_EP",
        label="expert all-to-all traffic per layer",
        base="byte",
    ),
    _D(
        "training_flops_per_token",
        "6 * active_parameters",
        "Training FLOPs per token: 2 forward and 4 backward per parameter a token uses (k of the E experts).",
        note="The state per device counts every expert (the total parameters); the arithmetic counts only the"
        " active ones.",
        symbol="F_tok",
        label="training FLOPs per token",
    ),
]
