"""The many-device kind's named cases: published layouts and real architectures, mixed-precision Adam.

Each factory takes the catalog (or ``None``: it reads no other case) and loads the model, with its
equations, when it is called.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["CASES"]

Factory = Callable[[Any], Any]


def _mixed_precision_adam(
    workload: str, hardware: str, seq_len: int, recompute: str = "selective", attention: str = "eager", **layout: Any
) -> Factory:
    """A named case: 16-bit values, an FP32 master copy and Adam, micro-batch 1 (selective recomputation).

    ``workload`` is a catalog attribute (``"GPT3_175B"``) or a shipped configuration's key (``"llama-3.1-70b"``).
    """

    def build(_catalog: Any) -> Any:
        from mlsysim_nb.kinds.activation.model import ActivationMemoryScenario
        from mlsysim_nb.kinds.parallel.model import ParallelTrainingScenario
        from mlsysim_nb.kinds.training.model import TrainingStateFitScenario
        from mlsysim_nb.records.hardware import Hardware
        from mlsysim_nb.records.workload_catalog import Workloads

        model = getattr(Workloads, workload) if workload.isupper() else Workloads.configuration(workload)
        state = TrainingStateFitScenario(
            workload=model,
            hardware=Hardware[hardware],
            bytes_per_value=2,
            optimizer_bytes_per_parameter=8,
            master_bytes_per_parameter=4,
        )
        acts = ActivationMemoryScenario(workload=model, micro_batch=1, seq_len=seq_len, attention=attention)
        return ParallelTrainingScenario(state=state, activations=acts, recompute=recompute, **layout)

    return build


#: Named many-device cases, as factories taking the catalog (the shape of every kind's factories).
CASES: dict[str, Factory] = {
    "Gpt3_175BKorthikantiTable3OnA100": _mixed_precision_adam(
        "GPT3_175B", "A100_80GB", 2048, tensor_parallel=8, sequence_parallel=True, pipeline_parallel=8,
        interleave=3,
        name="GPT-3 175B, Korthikanti Table 3 layout",
        description="Mixed-precision Adam on 64 A100 80GB: t = 8 with sequence parallelism, p = 8 with the "
        "interleaved schedule (m = 3 virtual stages per device), micro-batch 1 of 2048 tokens, selective "
        "recomputation (Korthikanti et al. 2022, Table 3 and Sec. 6).",
    ),
    "Llama3_8BZero3On8H100": _mixed_precision_adam(
        "llama-3.1-8b", "H100", 8192, attention="fused", data_parallel=8, zero_stage=3,
        name="Llama 3.1 8B full fine-tune, ZeRO-3 on 8 H100",
        description="Mixed-precision Adam on Llama 3.1 8B from its config.json, one 8-GPU node of data "
        "parallelism with ZeRO stage 3, micro-batch 1 of 8192 tokens, fused attention (FlashAttention), "
        "selective recomputation: the layers keep 36.54 GB, the output layer and loss 4.34 GB (the FP32 logits "
        "of a 128,256-word vocabulary), on every device.",
    ),
    "Bamba9BFullFineTuneOnH100": _mixed_precision_adam(
        "bamba-9b", "H100", 4096, attention="fused",
        name="Bamba 9B full fine-tune on one H100",
        description="Mixed-precision Adam on the Mamba-2 hybrid from its config.json, micro-batch 1 of 4096 "
        "tokens, fused kernels (FlashAttention; mamba_ssm's fused Mamba-2 scan), selective recomputation: "
        "9.78 billion parameters x 16 B is 156.5 GB of state; the 29 Mamba-2 layers keep 0.69 GB each (the "
        "projection's input and output, the scan's output, FP32 1/rms), the 3 attention layers 0.57 GB each, "
        "21.75 GB in all, and the output layer and loss 2.17 GB: 180.4 GB, 2.1 times the H100's 80 GiB. It does "
        "not fit; without the fused kernels (transformers' PyTorch path) a Mamba-2 layer would keep 5.46 GB.",
    ),
    "Bamba9BZero3On8H100": _mixed_precision_adam(
        "bamba-9b", "H100", 4096, attention="fused", data_parallel=8, zero_stage=3,
        name="Bamba 9B full fine-tune, ZeRO-3 on 8 H100",
        description="As on one H100, on one 8-GPU node of data parallelism with ZeRO stage 3: the 156.5 GB of "
        "state sharded 8 ways (19.56 GB per device) beside the 23.92 GB of activations every device keeps for "
        "its own micro-batch: 43.5 GB per device, the run fits.",
    ),
    "Llama3_1_70BZero3On8H100": _mixed_precision_adam(
        "llama-3.1-70b", "H100", 8192, "full", data_parallel=8, zero_stage=3,
        name="Llama 3.1 70B full fine-tune, ZeRO-3 on 8 H100",
        description="Mixed-precision Adam (16 B per parameter) on one 8-GPU node, data parallelism with ZeRO "
        "stage 3, micro-batch 1 of 8192 tokens (the sequences of Llama 3's pre-training, Llama Team 2024, "
        "Sec. 3.4.1), full recomputation: at t = 1 one layer would keep s·b·h·33.5 B with selective "
        "recomputation (2.25 GB, 180 GB for 80 layers), so only each layer's input is kept (10.7 GB). "
        "The output layer and loss add 4.47 GB (the FP32 logits of a 128,256-word vocabulary). The state alone, "
        "70.55 billion parameters × 16 B / 8, is 141 GB per device: it does not fit, whatever the activations.",
    ),
    "Llama3_1_70BZero3On64H100": _mixed_precision_adam(
        "llama-3.1-70b", "H100", 8192, "full", data_parallel=64, zero_stage=3,
        name="Llama 3.1 70B full fine-tune, ZeRO-3 on 64 H100",
        description="As on 8 H100, on eight nodes: ZeRO stage 3 shards the 1.13 TB of state 64 ways (17.6 GB "
        "per device), beside the 10.7 GB of layer inputs full recomputation keeps at 8192 tokens and the 4.47 GB "
        "of the output layer and loss: the run fits.",
    ),
    "Mixtral8x7BExpertParallel8On32H100": _mixed_precision_adam(
        "mixtral-8x7b", "H100", 4096, data_parallel=32, zero_stage=2, expert_parallel=8,
        name="Mixtral 8x7B full fine-tune, expert parallelism 8 on 32 H100",
        description="Mixed-precision Adam on 32 H100, ZeRO stage 2 with expert parallelism e = 8: each device "
        "of a group of eight holds one of the 8 experts of every layer (46.7 billion parameters in total, "
        "45.1 billion of them in the experts; 12.9 billion active per token), the four groups sharding it. "
        "Micro-batch 1 of 4096 tokens, a stated fine-tuning length (the activations grow with it), selective "
        "recomputation; routing assumed balanced. The output layer and loss add 0.59 GB (the FP32 logits of a "
        "32,000-word vocabulary) on every device.",
    ),
}  # fmt: skip
