"""The training-time kind's named cases: published layouts with their global batch.

Each factory takes the catalog (or ``None``) and loads the model when it is called.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["CASES"]

Factory = Callable[[Any], Any]


def _korthikanti_175b(recompute: str, sequence_parallel: bool) -> Factory:
    """GPT-3 175B on 64 A100 80GB as Korthikanti et al. (2022) Table 3 lays it out, v = 51,200, B = 64."""

    def build(_catalog: Any) -> Any:
        from mlsysim_nb.kinds.activation.model import ActivationMemoryScenario
        from mlsysim_nb.kinds.parallel.model import ParallelTrainingScenario
        from mlsysim_nb.kinds.time.model import TrainingTimeScenario
        from mlsysim_nb.kinds.training.model import TrainingStateFitScenario
        from mlsysim_nb.records.hardware import Hardware
        from mlsysim_nb.records.workload_catalog import Workloads

        model = Workloads.GPT3_175B.variant(vocab_size=51200)
        state = TrainingStateFitScenario(
            workload=model, hardware=Hardware["A100_80GB"], bytes_per_value=2,
            optimizer_bytes_per_parameter=8, master_bytes_per_parameter=4,
        )  # fmt: skip
        acts = ActivationMemoryScenario(workload=model, micro_batch=1, seq_len=2048)
        layout = ParallelTrainingScenario(
            state=state, activations=acts, recompute=recompute, tensor_parallel=8,
            sequence_parallel=sequence_parallel, pipeline_parallel=8, interleave=3,
        )  # fmt: skip
        name = "selective recomputation and SP" if recompute == "selective" else "full recomputation"
        return TrainingTimeScenario(
            layout=layout, global_batch_size=64,
            name=f"GPT-3 175B on 64 A100, {name}",
            description="Korthikanti et al. (2022) Table 3's layout (t = 8, p = 8 with m = 3 virtual stages, "
            "micro-batch 1 of 2048 tokens, a 51,200-word vocabulary) and global batch 64; Table 5 reports "
            f"{'13.75' if recompute == 'selective' else '18.13'} s per iteration.",
        )  # fmt: skip

    return build


#: Named training-time cases, as factories taking the catalog.
CASES: dict[str, Factory] = {
    "Gpt3_175BKorthikantiTable5OnA100": _korthikanti_175b("selective", sequence_parallel=True),
    "Gpt3_175BFullRecomputeOnA100": _korthikanti_175b("full", sequence_parallel=False),
}
