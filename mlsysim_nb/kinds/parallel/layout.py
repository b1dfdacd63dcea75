"""The layouts a ParallelTrainingScenario refuses: tensor and sequence parallelism, pipeline stages.

Each check reads the scenario's fields element-wise, so that a sweep names its first bad value, and blames
the field the current ``variant()`` changed when a rule joins two fields.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mlsysim_nb.errors import FieldError
from mlsysim_nb.kinds.parallel.experts import first_bad
from mlsysim_nb.layers import tensor_parallel_refusal
from mlsysim_nb.model.changes import changed_fields

__all__ = ["check_pipeline", "check_tensor_parallel"]


def check_tensor_parallel(self: Any, o: str) -> None:
    """Tensor parallelism splits heads, key/value heads and hidden width (so the f·h MLP); SP needs t > 1, t | s.

    The rules are checked in that order; a rule between two fields blames the one this ``variant()`` changed.
    """
    w, t = self.state.workload, np.asarray(self.tensor_parallel)
    changed = changed_fields()
    arch = w.architecture() if w.heads is not None and w.hidden_dim is not None else None
    for value in np.unique(t):
        # the attention's split, as Megatron-LM makes it (the mixer's rule), then the width every layer splits
        refused = None if arch is None else tensor_parallel_refusal(arch, int(value), "megatron")
        if refused is None and w.hidden_dim is not None and w.hidden_dim % value:
            refused = f"must divide the {w.hidden_dim} hidden width", ""
        if refused is None:
            continue
        rule, reason = refused
        if "state" in changed and "tensor_parallel" not in changed:  # a new model under the same layout
            what = rule.removeprefix("must divide the ")
            msg = f"models {w.name}, whose {what} tensor_parallel = {value} does not divide" + (
                f" ({reason})" if reason else "")  # fmt: skip
            raise FieldError(o, "state", msg)
        msg = f"{rule} of {w.name}, got {value}" + (f" ({reason})" if reason else "")
        raise FieldError(o, "tensor_parallel", msg)
    sp = np.asarray(self.sequence_parallel)
    blame_t = "tensor_parallel" in changed and "sequence_parallel" not in changed
    alone = sp & (t == 1)
    if np.any(alone):
        if blame_t:
            msg = "with sequence parallelism on, t must be at least 2 (SP splits the sequence over the t devices)"
            raise FieldError(o, "tensor_parallel", f"{msg}, got 1")
        msg = "needs tensor_parallel > 1: it splits the layer norms and dropouts over the t devices, and t is 1"
        raise FieldError(o, "sequence_parallel", msg)
    if self.activations is None:
        return
    sequence = np.asarray(self.activations.magnitude("sequence"))
    split = sp & (sequence % t != 0)
    if np.any(split):
        tokens, bad_t = first_bad(sequence, split), first_bad(t, split)
        rule = f"with sequence parallelism on, t must divide the {tokens} tokens"
        if "activations" in changed and not changed & {"tensor_parallel", "sequence_parallel"}:
            raise FieldError(o, "activations", f"{rule} (t = {bad_t}): give a sequence that t divides")
        field = "sequence_parallel" if "sequence_parallel" in changed and not blame_t else "tensor_parallel"
        raise FieldError(o, field, f"{rule}, got t = {bad_t}")


def check_pipeline(self: Any, o: str) -> None:
    """Pipeline stages divide the layers (and need them); interleaving needs p > 1 and divides L/p."""
    w, p, m = self.state.workload, np.asarray(self.pipeline_parallel), np.asarray(self.interleave)
    if w.layers is None:
        if np.any(p > 1):
            raise FieldError(o, "pipeline_parallel", f"needs workload.layers to split, which {w.name} does not give")
    elif np.any(w.layers % p != 0):
        msg = f"must divide the {w.layers} layers of {w.name}, got {first_bad(p, w.layers % p != 0)}"
        raise FieldError(o, "pipeline_parallel", msg)
    solo = (m > 1) & (p == 1)
    if np.any(solo):
        msg = f"needs pipeline_parallel > 1 (interleaving splits pipeline stages), got {first_bad(m, solo)}"
        raise FieldError(o, "interleave", msg)
    if w.layers is not None:
        uneven = (w.layers // p) % m != 0
        if np.any(uneven):
            raise FieldError(o, "interleave", f"must divide the layers per stage L/p, got {first_bad(m, uneven)}")
