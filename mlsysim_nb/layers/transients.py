"""The tensors a training step holds only for a moment: rows of the layer table beside the saved ones.

A saved tensor (:class:`~mlsysim_nb.layers.rows.Saved`) lives from its forward op to its backward op; a
transient lives inside one phase of the step and is gone at its end. The peak of a step is the saved
tensors alive at some moment plus the transients of that moment, so each transient is a row here, with
the phase it lives in, its shape in the symbols of :mod:`mlsysim_nb.layers.rows`, its width and its source.
Read from PyTorch's and transformers' source (``torch/optim/adamw.py``, ``loss/loss_utils.py``,
``torch/csrc/autograd``) and measured with PyTorch's memory profiler (:func:`mlsysim_nb.measure.measure_step`).

Phases: ``"loss"`` (the end of the forward pass), ``"output backward"`` (the first op of the backward
pass), ``"layer backward"`` (while one decoder layer's backward runs). Two more transients are equations
here, as they depend on more than one shape:

* the gradient of a saved tensor, :func:`saved_gradient_bytes`: while the backward op of a saved tensor
  runs, the gradient of that tensor and the gradient the op passes on (each the tensor's size, at its
  width) are held beside it;
* the optimizer step's temporaries, :func:`optimizer_temporary_bytes`, by AdamW's implementation.

>>> from mlsysim_nb.layers import Architecture
>>> from mlsysim_nb.layers.transients import optimizer_temporary_bytes, transient_bytes
>>> arch = Architecture(hidden_dim=128, heads=4, vocab_size=1000)
>>> transient_bytes(arch.dims(64, 2), "output backward", dtype_bytes=2)  # 2 FP32 copies of b·s·v logits
1024000
>>> optimizer_temporary_bytes((10, 30, 20), "for-loop", 4)  # 10 + 2·30 values: the pair (10, 30)
280.0
>>> optimizer_temporary_bytes((10, 30, 20), "foreach", 4), optimizer_temporary_bytes((10, 30, 20), "fused", 4)
(240.0, 0.0)
"""

from __future__ import annotations

from dataclasses import dataclass

from mlsysim_nb.layers.rows import Dims, element_bytes

__all__ = [
    "OPTIMIZER_IMPLEMENTATIONS",
    "PHASES",
    "TRANSIENTS",
    "Transient",
    "optimizer_temporary_bytes",
    "saved_gradient_bytes",
    "transient_bytes",
]

PHASES = ("loss", "output backward", "layer backward")

#: AdamW's implementations in PyTorch, and what each keeps for a moment in its step (``torch/optim/adamw.py``).
OPTIMIZER_IMPLEMENTATIONS = {
    "for-loop": (
        "one parameter at a time: denom = exp_avg_sq.sqrt() / c + eps makes two temporaries of the parameter's "
        "size (the root, then the quotient) while the previous parameter's denom is still bound: the most is "
        "max over consecutive parameters of n(i-1) + 2·n(i) values. PyTorch's default for CPU tensors"
    ),
    "foreach": (
        "one group at a time: torch._foreach_sqrt(exp_avg_sqs) makes one temporary list the size of every "
        "parameter of the group (then divided in place): P values. PyTorch's default for CUDA tensors"
    ),
    "fused": "one fused kernel per group updates in place: no temporaries the size of a parameter",
}


@dataclass(frozen=True)
class Transient:
    """One tensor (or ``count`` equal ones) held for a moment in ``phase``; ``narrow_only``: only below FP32."""

    key: str
    label: str
    phase: str
    shape: tuple[str, ...]
    width: str
    source: str
    count: int = 1
    narrow_only: bool = False

    def bytes(self, dims: Dims, dtype_bytes: int) -> int:
        """Bytes of this row for ``dims`` with activations of ``dtype_bytes``."""
        if self.narrow_only and dtype_bytes >= 4:
            return 0
        return self.count * dims.size(self.shape) * element_bytes(self.width, dtype_bytes)


_SBV = ("s", "b", "v")
#: The transients of a step, by phase.
TRANSIENTS = (
    Transient("logits", "the output layer's logits, before the loss upcasts them", "loss", _SBV, "act",
              "the model's output; the loss reads it (transformers' ForCausalLMLoss: logits.float())"),
    Transient("logits_fp32", "the loss's FP32 copy of the logits", "loss", _SBV, "fp32",
              "logits.float() is a copy below FP32 (the same tensor in FP32); log_softmax reads it",
              narrow_only=True),
    Transient("loss_gradients", "the loss's gradient and the log-softmax's gradient (FP32)", "output backward",
              _SBV, "fp32", "cross_entropy's backward: the NLL loss's gradient of the log-softmax, then the "
              "log-softmax's gradient of the logits, both FP32 and alive together (measured)", count=2),
    Transient("residual_gradients", "the residual stream's gradient and the block output's", "layer backward",
              ("s", "b", "h"), "act", "the gradient flowing down the residual stream, and the one entering the "
              "block being differentiated (measured)", count=2),
)  # fmt: skip


def transient_bytes(dims: Dims, phase: str, *, dtype_bytes: int) -> int:
    """Bytes of the :data:`TRANSIENTS` rows of ``phase``."""
    if phase not in PHASES:
        raise ValueError(f"unknown phase {phase!r}; phases are {', '.join(PHASES)}")
    return sum(t.bytes(dims, dtype_bytes) for t in TRANSIENTS if t.phase == phase)


def saved_gradient_bytes(saved_bytes: float) -> float:
    """While a saved tensor's backward op runs: its gradient and the gradient the op passes on, each its size."""
    return 2 * saved_bytes


def optimizer_temporary_bytes(tensors: tuple[int, ...], implementation: str, width: float) -> float:
    """The most bytes AdamW's step holds in temporaries, for parameter tensors of ``tensors`` values (in order).

    ``width``: bytes per value of the parameters (the moments and their root follow the parameters' dtype).
    See :data:`OPTIMIZER_IMPLEMENTATIONS`.
    """
    if implementation not in OPTIMIZER_IMPLEMENTATIONS:
        raise ValueError(f"unknown implementation {implementation!r}; known: {', '.join(OPTIMIZER_IMPLEMENTATIONS)}")
    if implementation == "fused" or not tensors:
        return 0.0
    if implementation == "foreach":
        return float(sum(tensors)) * width
    pairs = [2 * n + (tensors[i - 1] if i else 0) for i, n in enumerate(tensors)]
    return float(max(pairs)) * width
