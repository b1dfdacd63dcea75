"""Expert parallelism's rules and inputs: which layouts can split a mixture of experts, and what the formulas read.

The e devices of an expert-parallel group are data-parallel replicas that each hold E/e of the routed experts
(Lepikhin et al. 2020, GShard; Rajbhandari et al. 2022, DeepSpeed-MoE): e divides the experts and N_d. The
model covers expert parallelism across replicas whose layer is whole (t = 1) in full fine-tuning.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mlsysim_nb.errors import FieldError
from mlsysim_nb.kinds.parallel.table import expert_parameters
from mlsysim_nb.model.changes import changed_fields

__all__ = ["check_experts", "expert_inputs", "first_bad"]


def first_bad(values: Any, bad: Any) -> Any:
    """The first offending element of ``values`` where ``bad`` holds (both broadcast)."""
    values, bad = np.broadcast_arrays(np.asarray(values), np.asarray(bad))
    return values[bad].flat[0].item()


def check_experts(s: Any, o: str) -> None:
    """Refuse an ``expert_parallel`` the model cannot split, naming the field and the rule (element-wise)."""
    w, e, n_d = s.state.workload, np.asarray(s.expert_parallel), np.asarray(s.data_parallel)
    split = e > 1
    if not np.any(split):
        return
    got = first_bad(e, split)
    if not w.experts:
        raise FieldError(
            o, "expert_parallel", f"needs a mixture of experts to split; {w.name} has a dense MLP, got {got}"
        )
    if np.any(w.experts % e != 0):
        raise FieldError(
            o,
            "expert_parallel",
            f"must divide the {w.experts} experts of {w.name}, got {first_bad(e, w.experts % e != 0)}",
        )
    uneven = n_d % e != 0
    if np.any(uneven):
        rule = "the e devices of an expert-parallel group are data-parallel replicas, so e must divide N_d"
        bad_e, bad_n = first_bad(e, uneven), first_bad(n_d, uneven)
        if "data_parallel" in changed_fields() and "expert_parallel" not in changed_fields():
            raise FieldError(o, "data_parallel", f"{rule} (e = {bad_e}), got {bad_n}")
        raise FieldError(o, "expert_parallel", f"{rule} (N_d = {bad_n}), got {bad_e}")
    if np.any(split & (np.asarray(s.tensor_parallel) > 1)):
        msg = "with tensor_parallel > 1 is not modelled: expert parallelism here splits replicas whose layer is whole"
        raise FieldError(o, "expert_parallel", f"{msg} (t = 1), got e = {got}")
    if s.state.adapter_mode:
        msg = "needs full fine-tuning: how adapters split over the experts is not modelled"
        raise FieldError(o, "expert_parallel", f"{msg}, got e = {got}")


def expert_inputs(w: Any) -> dict[str, Any]:
    """What the expert formulas read of the workload: the experts' parameters, k, the active parameters."""
    return {
        "expert_parameters": expert_parameters(w),
        "experts_per_token": w.experts_per_token if w.experts else None,
        "active_parameters": float(w.active_parameters.magnitude),
    }
