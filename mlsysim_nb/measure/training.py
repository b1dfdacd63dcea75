"""``measure_training_state``: one AdamW step on a small real model, its state measured from the tensors.

Three recipes, each as PyTorch does it:

* ``"fp32"``: FP32 parameters and gradients; AdamW keeps two FP32 moments.
* ``"bf16"``: BF16 parameters and gradients; AdamW's moments follow the
  parameters' dtype, so they are BF16 too (2 + 2 bytes, not Adam's usual 8).
* ``"bf16 + fp32 master"``: a BF16 model, an FP32 master copy that AdamW
  updates (FP32 moments); the BF16 gradients are copied into the master's FP32
  gradients for the step, which are then freed, and the result copied back.

The model's inputs follow from the recipe: ``bytes_per_value`` is the model's
dtype width, the optimizer keeps two moments of the updated copy's width, and
the master copy (if any) is FP32.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mlsysim_nb.errors import FieldError
from mlsysim_nb.kinds.training.model import TrainingStateFitScenario
from mlsysim_nb.measure.arguments import named_arguments
from mlsysim_nb.measure.guard import DEFAULT_MEMORY_LIMIT, MAX_SIZES, check_memory_limit, refuse_above_limit
from mlsysim_nb.measure.results import StateRow, TrainingStateMeasurement
from mlsysim_nb.measure.torch_extra import require_torch
from mlsysim_nb.model.fields import check_count
from mlsysim_nb.records.workloads import Workload
from mlsysim_nb.units import Q_

__all__ = ["RECIPES", "Recipe", "measure_training_state"]

_OWNER = "measure_training_state"
_WIDTH = {"float32": 4, "bfloat16": 2}
ADAM_MOMENTS = 2  # AdamW keeps exp_avg and exp_avg_sq per parameter


@dataclass(frozen=True)
class Recipe:
    """How the weights are kept: the model's dtype, and the dtype of the copy AdamW updates."""

    label: str
    model_dtype: str
    updated_dtype: str
    master: bool

    def scenario_inputs(self) -> dict[str, Any]:
        """The model's inputs for this recipe: value width, optimizer bytes, master copy."""
        return {
            "bytes_per_value": _WIDTH[self.model_dtype],
            "optimizer_bytes_per_parameter": ADAM_MOMENTS * _WIDTH[self.updated_dtype],
            "master_bytes_per_parameter": _WIDTH[self.updated_dtype] if self.master else None,
        }


RECIPES = {
    "fp32": Recipe("FP32 weights, FP32 AdamW", "float32", "float32", master=False),
    "bf16": Recipe("BF16 weights, AdamW in the weights' BF16", "bfloat16", "bfloat16", master=False),
    "bf16 + fp32 master": Recipe("BF16 model, FP32 master copy and FP32 AdamW", "bfloat16", "float32", master=True),
}


def _nbytes(tensors: Any) -> int:
    """Bytes of the distinct storages among ``tensors``."""
    storages = {int(t.untyped_storage().data_ptr()): int(t.untyped_storage().nbytes()) for t in tensors}
    return sum(storages.values())


@named_arguments(1)
def measure_training_state(
    recipe: str = "fp32",
    *,
    hidden: int = 64,
    heads: int = 4,
    layers: int = 2,
    seq_len: int = 16,
    micro_batch: int = 2,
    memory_limit: Any = DEFAULT_MEMORY_LIMIT,
) -> TrainingStateMeasurement:
    """Take one AdamW step on a stack of ``layers`` GPT layers and measure its state from the tensors.

    Parameters
    ----------
    recipe
        One of :data:`RECIPES`: ``"fp32"``, ``"bf16"``, ``"bf16 + fp32 master"``.
    hidden, heads, layers, seq_len, micro_batch
        The small model and the batch of its one step.
    memory_limit
        The most memory the step may take by the model's prediction (the training state and the
        saved activations), checked before anything is allocated: ``"4 GiB"`` unless raised.

    Raises
    ------
    FieldError
        For an unknown recipe or a bad size, naming the field.
    MemoryLimitError
        When the model predicts more memory than ``memory_limit``, naming both.
    ImportError
        Without PyTorch, saying how to install the ``measure`` extra.
    """
    if not isinstance(recipe, str) or recipe not in RECIPES:
        shown = repr(recipe) if len(repr(recipe)) <= 60 else f"a {type(recipe).__name__}"
        raise FieldError(_OWNER, "recipe", f"must be one of {', '.join(map(repr, RECIPES))}, got {shown}")
    shape = {
        k: check_count(_OWNER, k, v, maximum=MAX_SIZES[k])
        for k, v in [("hidden", hidden), ("heads", heads), ("layers", layers), ("seq_len", seq_len)]
    }
    micro_batch = check_count(_OWNER, "micro_batch", micro_batch, maximum=MAX_SIZES["micro_batch"])
    if shape["hidden"] % shape["heads"]:
        raise FieldError(_OWNER, "heads", f"must divide hidden ({hidden}), got {heads}")
    r = RECIPES[recipe]
    limit = check_memory_limit(_OWNER, memory_limit)
    refuse_above_limit(_OWNER, _predicted_step_bytes(r, shape, micro_batch), limit, memory_limit)
    require_torch()
    measured, counts = _step(r, shape, micro_batch)
    workload = Workload(name=f"{layers} GPT layers (h={hidden})", parameters=counts[0], layers=layers)
    scenario = TrainingStateFitScenario(workload=workload, **r.scenario_inputs())
    rows = [
        StateRow("weights", "weights", scenario.weights, measured["weights"]),
        StateRow("gradients", "gradients", scenario.gradients, measured["gradients"]),
    ]
    if r.master:
        rows.append(StateRow("master_weights", "FP32 master copy", scenario.master_weights, measured["master"]))
    rows += [
        StateRow(
            "optimizer_state", "AdamW moments (exp_avg, exp_avg_sq)", scenario.optimizer_state, measured["moments"]
        ),
        StateRow("step_counters", "AdamW step counters (one per tensor)", None, measured["steps"]),
    ]
    if r.master:
        rows.append(
            StateRow("master_gradients", "FP32 master gradients (freed after the step)", None, measured["master_grads"])
        )
    return TrainingStateMeasurement(r.label, counts[0], counts[1], scenario, tuple(rows))


def _predicted_step_bytes(r: Recipe, shape: dict[str, int], micro_batch: int) -> dict[str, float]:
    """What one step holds by the model: the training state, and the saved activations of every layer."""
    from mlsysim_nb.measure.layer import layer_scenario

    one = layer_scenario(shape["seq_len"], micro_batch, shape["hidden"], shape["heads"], r.model_dtype)
    parameters = int(one.workload.parameters.magnitude) * shape["layers"]
    # the model's bytes per trained parameter, times a count that may exceed any workload's range
    per_parameter = TrainingStateFitScenario(workload=Workload(name="one", parameters=1), **r.scenario_inputs())
    state = float(per_parameter.total.m_as("byte")) * parameters
    activations = float(one.activations("none").m_as("byte")) * shape["layers"]
    return {"training state": state, "saved activations": activations}


def _step(r: Recipe, shape: dict[str, int], micro_batch: int) -> tuple[dict[str, Any], tuple[int, int]]:
    import torch
    from torch import nn

    from mlsysim_nb.measure._layer import GPTLayer

    torch.manual_seed(0)
    kind = getattr(torch, r.model_dtype)
    model = nn.Sequential(
        *(
            GPTLayer(shape["hidden"], shape["heads"], attention="explicit", dropout_mask="scaled")
            for _ in range(shape["layers"])
        )
    ).to(kind)
    params = list(model.parameters())
    updated = [p.detach().float().requires_grad_() for p in params] if r.master else params
    optimizer = torch.optim.AdamW(updated, lr=1e-3)
    x = torch.randn(shape["seq_len"], micro_batch, shape["hidden"], dtype=kind)
    model(x).float().square().mean().backward()
    master_grads = 0
    if r.master:
        for p, m in zip(params, updated, strict=True):
            m.grad = p.grad.float() if p.grad is not None else None
        master_grads = _nbytes(m.grad for m in updated if m.grad is not None)
    optimizer.step()
    if r.master:
        with torch.no_grad():
            for p, m in zip(params, updated, strict=True):
                p.copy_(m)
                m.grad = None  # the FP32 gradients are scratch: freed once the step is taken
    state = [optimizer.state[p] for p in updated]
    measured = {
        "weights": _nbytes(params),
        "gradients": _nbytes(p.grad for p in params if p.grad is not None),
        "master": _nbytes(updated) if r.master else 0,
        "moments": _nbytes(t for s in state for t in (s["exp_avg"], s["exp_avg_sq"])),
        "steps": _nbytes(s["step"] for s in state),
        "master_grads": master_grads,
    }
    counts = (sum(p.numel() for p in params), len(params))
    return {k: Q_(v, "byte") for k, v in measured.items()}, counts
