"""One training step on one device, phase by phase: the bytes of each category over time, and the peak.

A step never holds the sum of its state and its saved activations. With ``zero_grad(set_to_none=True)``
(PyTorch's default) there are no gradients during the forward pass of the first micro-batch; the backward
pass frees each layer's saved tensors as that layer's gradients appear, and it makes transients of its own;
the optimizer step makes temporaries. The timeline, with the layer table's rows (saved:
:mod:`mlsysim_nb.layers`; transients: :mod:`mlsysim_nb.layers.transients`):

* **state at rest**: weights, master copy, optimizer state (the device's shares, as ``state_per_device``).
* **forward, layer i**: the per-model rows (rotary tables) and the kept rows of layers 1..i.
* **output layer and loss**: every saved row, the output layer's (the loss's FP32 log-softmax among them),
  and the logits before the loss upcasts them (``loss`` transients).
* **backward, output layer**: every saved row and the loss's two FP32 gradients (``output backward``).
* **backward, layer i** (L down to 1): the output rows are freed but the token ids; layers 1..i-1 keep their
  kept rows; layer i holds every row it saves (rebuilt first when recomputed) up to the row being
  differentiated, that row's gradient and the gradient its op passes on (2 × the row), and the residual
  stream's two gradients (``layer backward``); the gradients of the output layer and of layers i+1..L exist.
* **ZeRO stage 3**: while a layer's forward or backward runs, its weights are gathered whole (split by t
  only): one layer's at a time (frameworks that prefetch the next layer's hold two).
* **optimizer step**: the state and every gradient, and AdamW's temporaries
  (:data:`~mlsysim_nb.layers.transients.OPTIMIZER_IMPLEMENTATIONS`).

With ``micro_batches`` > 1 (gradient accumulation) every gradient exists from the second micro-batch's
forward pass on. Under ZeRO stages 2 and 3 the gradients a layer's backward makes are counted at the device's
share, as if reduced and scattered at once (the buckets awaiting reduction are left out). The peak is the
largest point; its phase is named. Gradients appear in the order of the weights: the output layer's and the
final norm's first, then layer by layer (within a layer, a block's once its backward is over; the output
projection's with its op), the embeddings last. Tied embeddings: the output layer's part of their gradient
waits in autograd's buffer (a backward transient) until the lookup's part is added to it.

Measured with PyTorch's profiler (``tests/measure/test_step.py``), the peak is within 1 % for six steps
across the three regimes and each category within 5 % at it. Where two moments of one layer's backward pass
come close, the rule "two gradients of the row's size" can pick the wrong one: in a gated MLP's backward
pass, SiLU's gradient is computed while the product's two gradients are alive (three f-wide gradients),
and PyTorch's CPU kernel for it makes two f-wide temporaries of its own (a library's choice, not a row
here): five f-wide tensors where the rule counts two (a Llama step at s = 192, b = 2 in BF16 with eager
attention: 3.4 % low); under per-layer recomputation the profiler files part of the rebuilt layer as inputs,
not as the backward's own (the peak within 2 %, the categories not); with gradient accumulation each
parameter's new gradient exists beside the accumulated one until it is added in place (one parameter's
size at a time), which is not counted (the peak within 0.3 %).

What a CPU measurement checks this against, and what it leaves out, is in :mod:`mlsysim_nb.measure.step`:
on a GPU the caching allocator's reserve and fragmentation, the CUDA context and communication buffers come
on top.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mlsysim_nb.errors import FieldError, show_number
from mlsysim_nb.layers import LAYER_INPUT, layer_rows, layer_weights, lines, model_weights, output_rows
from mlsysim_nb.layers.transients import optimizer_temporary_bytes, saved_gradient_bytes, transient_bytes

__all__ = ["CATEGORIES", "MOST_POINTS", "StepPoint", "StepTimeline", "step_timeline"]

#: The most points a timeline lists (each a phase's bytes by category): 262,144, a few tenths of a GB and a second or
#: two to build; a longer accumulation is refused by name rather than filling the memory.
MOST_POINTS = 2**18

#: The timeline's categories, in the order a chart stacks them.
CATEGORIES = (
    "weights",
    "master copy",
    "optimizer state",
    "gradients",
    "saved activations",
    "rebuilt activations",
    "backward transients",
    "forward transients",
    "gathered weights",
    "optimizer temporaries",
)


@dataclass(frozen=True)
class StepPoint:
    """The most a phase holds, by category (bytes)."""

    phase: str
    bytes: dict[str, float]

    @property
    def total(self) -> float:
        """Bytes in use at this point."""
        return sum(self.bytes.values())


@dataclass(frozen=True)
class StepTimeline:
    """The points of one training step in order; the peak, its phase, and the sum a capacity check compares."""

    points: tuple[StepPoint, ...]
    sum_of_parts: float

    @property
    def peak_point(self) -> StepPoint:
        """The first point at which the step holds the most memory."""
        return max(self.points, key=lambda p: p.total)

    @property
    def peak(self) -> float:
        """The most bytes in use at any point of the step."""
        return self.peak_point.total

    @property
    def peak_phase(self) -> str:
        """The phase in which the peak falls."""
        return self.peak_point.phase

    def largest(self) -> dict[str, float]:
        """Each category's largest value over the step."""
        return {c: max(p.bytes.get(c, 0.0) for p in self.points) for c in CATEGORIES}


@dataclass(frozen=True)
class _Sizes:
    """What one device holds, in bytes, and the layer's rows: everything the points are built from."""

    rest: dict[str, float]
    grads: float
    full: tuple[Any, ...]  # one layer's rows, nothing recomputed (Line: row and bytes)
    kept: float  # one layer's kept rows under the recomputation strategy
    per_model: float
    outputs: float
    ids: float
    loss: float
    output_backward: float
    residual: float
    gathered: float
    shares: tuple[float, float, float]  # the output layer's, one layer's and tied embeddings' share of the weights
    anchors: tuple[tuple[float, int], ...]  # a layer's weight shares, and the row whose backward makes each
    temporaries: float
    strategy: str
    layers: int


def _check(scenario: Any, micro_batches: Any) -> None:
    owner = type(scenario).__name__
    if scenario.is_sweep:
        raise FieldError(owner, "peak_per_device", "the step's timeline is drawn for one scenario, not a sweep")
    if scenario.activations is None:
        raise FieldError(owner, "activations", "the step's timeline needs the activations (this scenario has None)")
    if int(scenario.pipeline_parallel) > 1:
        raise FieldError(owner, "pipeline_parallel", "the step's timeline is modelled without pipeline stages (p = 1)")
    if int(scenario.expert_parallel) > 1 or scenario.workload.experts:
        raise FieldError(owner, "state", "the step's timeline is modelled for dense models (no experts)")
    if scenario.state.adapter_mode:
        raise FieldError(owner, "state", "the step's timeline is modelled for full training, not adapters")
    if not isinstance(micro_batches, int) or isinstance(micro_batches, bool) or micro_batches < 1:
        raise FieldError(owner, "micro_batches", f"must be a whole number of at least 1, got {micro_batches!r}")
    w = scenario.workload
    per_micro_batch = 2 * int(w.layers) + 2  # each layer forward and backward, the output layer's two
    most = max(1, (MOST_POINTS - 2) // per_micro_batch)
    if micro_batches > most:
        msg = (
            f"must be at most {most:,} for {int(w.layers):,} layers: the timeline lists 2·L + 2 = "
            f"{per_micro_batch:,} phases per micro-batch, {MOST_POINTS:,} points in all (from the second "
            "micro-batch on the phases repeat, so the peak of 2 is the peak of any more), got "
            f"{show_number(micro_batches)}"
        )
        raise FieldError(owner, "micro_batches", msg)
    if w.architecture(reference=w.reference_style).vocab_size is None:
        raise FieldError(owner, "state", f"the step's timeline needs the vocabulary of {w.name} (vocab_size)")


def _weights(arch: Any, layers: int, full: tuple[Any, ...]) -> tuple[tuple[int, ...], tuple[float, float, float],
                                                                    tuple[tuple[float, int], ...]]:  # fmt: skip
    """Parameter tensors in order (values); the shares of the output layer, one layer and tied embeddings."""
    one = arch.dims(1, 1)

    def expand(rows: Any) -> list[int]:
        return [w.parameters(one) // w.count for w in rows for _ in range(w.count)]

    outside = model_weights(arch)
    head = [w for w in outside if w.block == "embeddings"]
    tail = [w for w in outside if w.block != "embeddings"]
    layer = expand(layer_weights(arch))
    tensors = (*expand(head), *(layer * layers), *expand(tail))
    total = float(sum(tensors))
    tied = sum(expand(head[:1])) / total if arch.tied_embeddings else 0.0
    anchors = tuple((w.parameters(one) / total, _anchor(full, w)) for w in layer_weights(arch))
    return tensors, (sum(expand(tail)) / total, sum(layer) / total, tied), anchors


def _sizes(scenario: Any) -> _Sizes:
    acts, w = scenario.activations, scenario.workload
    arch = w.architecture(reference=w.reference_style)
    width = int(acts.magnitude("precision_bytes"))
    dims = arch.dims(int(acts.magnitude("sequence")), int(acts.micro_batch))
    t = int(scenario.tensor_parallel)
    options: dict[str, Any] = {"dtype_bytes": width, "tensor_parallel": t,
                               "sequence_parallel": bool(scenario.sequence_parallel)}  # fmt: skip
    rows = layer_rows(arch, acts.implementation, "fused" if acts.attention == "fused" else "eager")
    strategy = str(scenario.recompute)
    full = lines(rows, dims, **options, per_model=False)
    kept_rows = lines((LAYER_INPUT,), dims, **options) if strategy == "full" else \
        lines(rows, dims, **options, strategy=strategy, per_model=False)  # fmt: skip
    out = lines(output_rows(arch, acts.implementation), dims, **options)
    names = ("weights_per_device", "master_weights_per_device", "optimizer_state_per_device", "gradients_per_device")
    state = {k: float(scenario.magnitude(k)) for k in names}
    layers = int(w.layers)
    tensors, shares, anchors = _weights(arch, layers, full)
    updated = optimizer_temporary_bytes(tensors, scenario.optimizer_implementation, _updated_width(scenario))
    gathered = state["weights_per_device"] * float(scenario.magnitude("weight_shards")) * shares[1]
    # the rows kept once per model, and the weight-sized copies of every layer (Gemma's FP32 1 + w) beside them
    apart = sum(ln.bytes * (1 if ln.row.per_model else layers) for ln in lines(rows, dims, **options)
                if ln.row.per_model or ln.row.weight_sized)  # fmt: skip
    return _Sizes(
        rest={"weights": state["weights_per_device"], "master copy": state["master_weights_per_device"],
              "optimizer state": state["optimizer_state_per_device"]},
        grads=state["gradients_per_device"], full=full, kept=sum(ln.bytes for ln in kept_rows),
        per_model=apart,
        outputs=sum(ln.bytes for ln in out), ids=sum(ln.bytes for ln in out if ln.row.key == "token_ids"),
        loss=transient_bytes(dims, "loss", dtype_bytes=width) / t,
        output_backward=transient_bytes(dims, "output backward", dtype_bytes=width) / t,
        residual=transient_bytes(dims, "layer backward", dtype_bytes=width),
        gathered=gathered if int(scenario.zero_stage) >= 3 else 0.0, shares=shares, anchors=anchors,
        temporaries=updated / (t * float(scenario.magnitude("optimizer_shards"))), strategy=strategy, layers=layers,
    )  # fmt: skip


def _row_moments(z: _Sizes) -> tuple[tuple[float, float, float, float], ...]:
    """Per row ``j`` of a layer (its op being differentiated), what every layer's backward shares.

    The layer's weight shares whose gradients exist, the bytes of rows 1..j alive, of those rebuilt, and the
    row's two gradients: computed once per step, not once per layer (100,000 layers took tens of seconds).
    """
    return tuple(
        (sum(share for share, anchor in z.anchors if anchor > j), sum(ln.bytes for ln in z.full[: j + 1]),
         _rebuilt(z.full[: j + 1], z.strategy), _row_gradient(z.full[j]))
        for j in range(len(z.full))
    )  # fmt: skip


def _layer_backward(z: _Sizes, rows: tuple[tuple[float, float, float, float], ...], i: int,
                    held: float | None) -> dict[str, float]:  # fmt: skip
    """The largest moment of layer ``i``'s backward pass; ``held``: the gradients, when all exist already."""
    out_share, layer_share, tied_share = z.shares
    below = z.per_model + z.ids + (i - 1) * z.kept
    input_kept = z.kept if z.strategy == "full" else 0.0  # the layer's input, from which it is rebuilt
    tied = z.grads * tied_share if held is None else 0.0
    moments = []
    for in_layer, alive, rebuilt, row_gradient in rows:  # row j's op being differentiated
        made = z.grads * (out_share + (z.layers - i) * layer_share + in_layer)
        moments.append({
            "gradients": made if held is None else held,
            "saved activations": below + input_kept + alive - rebuilt,
            "rebuilt activations": rebuilt,
            "backward transients": row_gradient + z.residual + tied,
            "gathered weights": z.gathered,
        })  # fmt: skip
    return max(moments, key=lambda parts: sum(parts.values()))


def step_timeline(scenario: Any, micro_batches: int = 1) -> StepTimeline:
    """The timeline of one step of ``scenario`` (a ``ParallelTrainingScenario``) on its most loaded device."""
    _check(scenario, micro_batches)
    z = _sizes(scenario)
    points = [StepPoint("state at rest", dict(z.rest))]

    def point(phase: str, parts: dict[str, float]) -> None:
        points.append(StepPoint(phase, {**z.rest, **parts}))

    everything = z.per_model + z.layers * z.kept + z.outputs
    rows = _row_moments(z)
    for m in range(micro_batches):
        tag = f" (micro-batch {m + 1})" if micro_batches > 1 else ""
        held = z.grads if m else 0.0
        for i in range(1, z.layers + 1):
            point(f"forward, layer {i}{tag}", {"gradients": held, "saved activations": z.per_model + i * z.kept,
                                               "gathered weights": z.gathered})  # fmt: skip
        point(f"output layer and loss{tag}", {"gradients": held, "saved activations": everything,
                                              "forward transients": z.loss})  # fmt: skip
        point(f"backward, output layer{tag}", {"gradients": held, "saved activations": everything,
                                               "backward transients": z.output_backward})  # fmt: skip
        if m < 2:  # from the second micro-batch on, each layer's backward is the second's again
            backward = {i: _layer_backward(z, rows, i, held if m else None) for i in range(1, z.layers + 1)}
        for i in range(z.layers, 0, -1):
            point(f"backward, layer {i}{tag}", backward[i])
    point("optimizer step", {"gradients": z.grads, "optimizer temporaries": z.temporaries})
    return StepTimeline(tuple(points), sum(z.rest.values()) + z.grads + everything)


def _updated_width(scenario: Any) -> float:
    """Bytes per value of the copy AdamW updates: the master copy's when there is one, else the weights'."""
    master = scenario.state.master_bytes_per_parameter
    key = "master_bytes_per_parameter" if master else "bytes_per_value"
    return float(scenario.state.magnitude(key))


def _row_gradient(line: Any) -> float:
    """The two gradients held while one saved tensor's op is differentiated (one of a row's ``count`` tensors)."""
    return saved_gradient_bytes(line.bytes / line.row.count)


def _rebuilt(alive: tuple[Any, ...], strategy: str) -> float:
    """Of the rows alive, those the backward pass rebuilt: all (full), the attention scores' (selective), none."""
    if strategy == "full":
        return float(sum(ln.bytes for ln in alive))
    if strategy == "selective":
        return float(sum(ln.bytes for ln in alive if ln.row.recompute == "selective"))
    return 0.0


#: A weight whose gradient comes before the rest of its block's: the saved row its op reads.
_ANCHORS = {"wo": "projection_input", "bo": "projection_input"}


def _anchor(full: tuple[Any, ...], weight: Any) -> int:
    """The row whose op's backward makes ``weight``'s gradient: its anchor, else its block's first row.

    A weight's gradient exists while row ``j``'s op is differentiated when this row comes after ``j``
    (a block whose rows come after ``j`` is done). The layer norms' scales (their block spans the layer) are
    counted at the layer's first row.
    """
    keys = [line.row.key for line in full]
    if weight.key in _ANCHORS and _ANCHORS[weight.key] in keys:
        return keys.index(_ANCHORS[weight.key])
    blocks = [line.row.block for line in full]
    return blocks.index(weight.block) if weight.block in blocks else 0
