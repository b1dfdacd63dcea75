"""The many-device equations of the parameter state: split by t·p, sharded by ZeRO, experts split over e.

A replica's state is split by t·p and sharded by ZeRO; for a mixture of experts, the experts' share is
split over the e devices of an expert-parallel group.

Sources: Rajbhandari et al. (2020), ZeRO, Sec. 5 (stage 1 partitions the optimizer state and master copy,
stage 2 also the gradients, stage 3 also the weights); Rajbhandari et al. (2022), DeepSpeed-MoE, Sec. 5
and Lepikhin et al. (2020), GShard, Sec. 2: each of the e devices of an expert-parallel group holds E/e
of the experts, every other parameter as without experts; the N_d/e replicas that hold the same experts
shard them under ZeRO (DeepSpeed's expert-data-parallel group), so at stage 3 every parameter is sharded
N_d ways either way.
"""

from __future__ import annotations

from mlsysim_nb.formula import Case
from mlsysim_nb.model.equations import Defined, defined

__all__ = ["STATE"]

_D = defined

STATE: list[Defined] = [
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
        "expert_share",
        "expert_parameters / parameters",
        "Share of the parameters in the routed experts' MLPs (0 for a dense model): what expert parallelism splits.",
        note="The state counts every expert (total parameters); the arithmetic per token counts the k experts it"
        " is routed to (active parameters).",
        symbol="φ_exp",
        label="experts' share of the parameters",
    ),
    _D(
        "expert_data_parallel",
        "data_parallel // expert_parallel",
        "Replicas that hold the same experts: N_d/e (e divides N_d).",
        symbol="N_ed",
        label="replicas per expert",
    ),
]


def _expert_shards(name: str, what: str, flag: str, stage: str, symbol: str) -> Defined:
    return _D(
        f"expert_{name}_shards",
        doc=f"Replicas that share the experts' {what}: the N_d/e that hold the same experts ({stage}).",
        cases=(Case(stage, "expert_data_parallel", when=flag), Case("replicated", "1")),
        symbol=symbol,
        label=f"experts' {what} shards",
    )


def _per_device(name: str, replica: str, shards: str, *, doc: str, symbol: str, label: str) -> Defined:
    """One part of the state per device: dense, or the experts' share split over e and the rest as dense."""
    dense = f"{replica} / (model_parallel * {shards})"
    split = (
        f"{replica} / model_parallel * ((1 - expert_share) / {shards}"
        f" + expert_share / (expert_parallel * expert_{shards}))"
    )
    cases = (Case("experts split over e devices", split, when="splits_experts"), Case("no expert parallelism", dense))
    return _D(name, doc=doc, unit="byte", cases=cases, symbol=symbol, label=label, base="byte")


STATE += [
    _expert_shards(
        "optimizer", "optimizer state and master copy", "shards_optimizer", "ZeRO stage 1 or more", "N_opt,exp"
    ),
    _expert_shards("gradient", "gradients", "shards_gradients", "ZeRO stage 2 or more", "N_g,exp"),
    _expert_shards("weight", "weights", "shards_weights", "ZeRO stage 3", "N_w,exp"),
    _per_device(
        "weights_per_device",
        "replica_weights",
        "weight_shards",
        doc="Weights on one device: split by t·p, then sharded by ZeRO stage 3.",
        symbol="M_w,dev",
        label="weights",
    ),
    _per_device(
        "gradients_per_device",
        "replica_gradients",
        "gradient_shards",
        doc="Gradients on one device: split by t·p, then sharded by ZeRO stage 2 and up.",
        symbol="M_g,dev",
        label="gradients",
    ),
    _per_device(
        "optimizer_state_per_device",
        "replica_optimizer_state",
        "optimizer_shards",
        doc="Optimizer state on one device: split by t·p, then sharded by ZeRO stage 1 and up.",
        symbol="M_opt,dev",
        label="optimizer state",
    ),
    _per_device(
        "master_weights_per_device",
        "replica_master_weights",
        "optimizer_shards",
        doc="Master copy on one device: sharded with the optimizer state (ZeRO counts it there).",
        symbol="M_master,dev",
        label="master weights",
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
