"""The many-device kind's named cases: two published layouts, mixed-precision Adam.

Each factory takes the catalog (or ``None``: it reads no other case) and loads the model, with its
equations, when it is called.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["CASES"]

Factory = Callable[[Any], Any]


def _mixed_precision_adam(workload: str, hardware: str, seq_len: int, **layout: Any) -> Factory:
    """A named case: 16-bit values, an FP32 master copy and Adam, micro-batch 1, selective recomputation."""

    def build(_catalog: Any) -> Any:
        from mlsysim_nb.kinds.activation.model import ActivationMemoryScenario
        from mlsysim_nb.kinds.parallel.model import ParallelTrainingScenario
        from mlsysim_nb.kinds.training.model import TrainingStateFitScenario
        from mlsysim_nb.records.hardware import Hardware
        from mlsysim_nb.records.workloads import Workloads

        model = getattr(Workloads, workload)
        state = TrainingStateFitScenario(
            workload=model,
            hardware=Hardware[hardware],
            bytes_per_value=2,
            optimizer_bytes_per_parameter=8,
            master_bytes_per_parameter=4,
        )
        acts = ActivationMemoryScenario(workload=model, micro_batch=1, seq_len=seq_len)
        return ParallelTrainingScenario(state=state, activations=acts, recompute="selective", **layout)

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
        "LLAMA3_8B", "H100", 8192, data_parallel=8, zero_stage=3,
        name="Llama 3.1 8B full fine-tune, ZeRO-3 on 8 H100",
        description="Mixed-precision Adam, one 8-GPU node of data parallelism with ZeRO stage 3, "
        "micro-batch 1 of 8192 tokens, selective recomputation.",
    ),
}  # fmt: skip
