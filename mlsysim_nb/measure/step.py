"""``measure_step``: one training step of a small Hugging Face model on the CPU, its memory over time.

The model is built from a configuration with random weights (nothing is downloaded): ``LlamaForCausalLM`` or
``GPT2LMHeadModel``, dropout 0, in FP32 or BF16, with transformers' ``"eager"`` or ``"sdpa"`` attention. One
AdamW step is taken first, outside the measurement, so that the optimizer's moments exist; then one step is
measured under ``torch.profiler`` (``profile_memory=True``, ``record_shapes=True``, ``with_stack=True``): the
forward and backward pass of each of ``accumulation`` micro-batches (the loss divided by their number), the
optimizer step and ``zero_grad(set_to_none=True)``. PyTorch's memory profiler names each allocation's
category (parameters, optimizer state, inputs, temporaries, activations, gradients, autograd detail; the
same categories as ``export_memory_timeline``), event by event.

What is measured is PyTorch's own tensors on the CPU: not the caching allocator's reserve, nor a GPU's
context or communication buffers (``scripts/measure_step_gpu.py`` measures those on a CUDA device).
"""

from __future__ import annotations

import os
import time
from typing import Any

from mlsysim_nb.errors import FieldError
from mlsysim_nb.measure.arguments import check_random_state, named_arguments
from mlsysim_nb.measure.guard import DEFAULT_MEMORY_LIMIT, check_memory_limit, refuse_above_limit
from mlsysim_nb.measure.step_results import CATEGORIES, StepMeasurement
from mlsysim_nb.measure.torch_extra import require_transformers
from mlsysim_nb.model.fields import check_count

__all__ = [
    "MODEL_TYPES",
    "OPTIMIZER_IMPLEMENTATIONS",
    "build_step",
    "check_step",
    "measure_step",
    "step_config",
    "step_scenario",
]

_OWNER = "measure_step"
#: The model class measured for each model type.
MODEL_TYPES = {"llama": "LlamaForCausalLM", "gpt2": "GPT2LMHeadModel"}
#: AdamW's implementations, and the ``torch.optim.AdamW`` keywords that choose each.
OPTIMIZER_IMPLEMENTATIONS = {
    "for-loop": {"foreach": False, "fused": False},
    "foreach": {"foreach": True, "fused": False},
    "fused": {"foreach": False, "fused": True},
}
_DTYPES = {"float32": 4, "bfloat16": 2}
_ATTENTIONS = ("eager", "sdpa")
#: The largest size of each argument: a small model, measured in seconds.
_LIMITS = {"hidden": 4096, "heads": 64, "kv_heads": 64, "ffn": 16384, "layers": 16, "vocab": 2**18,
           "seq_len": 4096, "micro_batch": 64, "accumulation": 16}  # fmt: skip


def step_config(model_type: str, *, hidden: int, heads: int, kv_heads: int, ffn: int, layers: int, vocab: int,
                seq_len: int) -> Any:  # fmt: skip
    """The transformers configuration ``measure_step`` builds (dropout 0, as the model's rows assume)."""
    import transformers

    if model_type == "gpt2":
        return transformers.GPT2Config(n_embd=hidden, n_head=heads, n_layer=layers, n_positions=seq_len,
                                       vocab_size=vocab, resid_pdrop=0.0, attn_pdrop=0.0, embd_pdrop=0.0,
                                       bos_token_id=0, eos_token_id=0)  # fmt: skip
    return transformers.LlamaConfig(hidden_size=hidden, intermediate_size=ffn, num_attention_heads=heads,
                                    num_key_value_heads=kv_heads, num_hidden_layers=layers, vocab_size=vocab,
                                    max_position_embeddings=max(seq_len, 64))  # fmt: skip


def step_scenario(config: dict[str, Any]) -> Any:
    """The model's :class:`~mlsysim_nb.ParallelTrainingScenario` of the measured step (one device, CPU rows).

    ``config`` is :attr:`StepMeasurement.config` (or the same keys): the workload is read from the
    transformers configuration by ``Workload.from_hf_config``, so the scenario and the measurement share
    every size.
    """
    from mlsysim_nb.measure.step_scenario import measured_step_scenario

    return measured_step_scenario(config)


def check_step(owner: str, **args: Any) -> tuple[dict[str, Any], int]:
    """``measure_step``'s arguments checked, then the model's predicted peak against ``memory_limit``.

    Each bad argument is a :class:`FieldError` naming it, labelled ``owner``; a predicted peak above the
    limit a :class:`MemoryLimitError`. Gives the configuration (GPT-2's ``kv_heads`` and ``ffn`` set to its
    own) and the random state.
    """

    def choice(field: str, valid: tuple[str, ...]) -> str:
        value = args[field]
        if not isinstance(value, str) or value not in valid:
            raise FieldError(owner, field, f"must be one of {', '.join(map(repr, valid))}, got {value!r}")
        return value

    config: dict[str, Any] = {"model_type": choice("model_type", tuple(MODEL_TYPES)),
                              "dtype": choice("dtype", tuple(_DTYPES)), "attention": choice("attention", _ATTENTIONS),
                              "optimizer_implementation": choice("optimizer_implementation",
                                                                 tuple(OPTIMIZER_IMPLEMENTATIONS))}  # fmt: skip
    for name, high in _LIMITS.items():
        config[name] = check_count(owner, name, args[name], maximum=high)
    if config["hidden"] % config["heads"]:
        raise FieldError(owner, "heads", f"must divide hidden ({config['hidden']}), got {config['heads']}")
    if config["model_type"] == "gpt2":
        config["kv_heads"], config["ffn"] = config["heads"], 4 * config["hidden"]
    elif config["heads"] % config["kv_heads"]:
        raise FieldError(owner, "kv_heads", f"must divide heads ({config['heads']}), got {config['kv_heads']}")
    if not isinstance(args["recompute"], bool):
        raise FieldError(owner, "recompute", f"must be True or False, got {args['recompute']!r}")
    config["recompute"] = args["recompute"]
    random_state = check_random_state(owner, args["random_state"])
    limit = check_memory_limit(owner, args["memory_limit"])
    peak = float(step_scenario(config).peak_per_device.m_as("byte"))
    refuse_above_limit(owner, {"predicted peak of the step": peak}, limit, args["memory_limit"],
                       basis="by the model's predicted peak")  # fmt: skip
    return config, random_state


@named_arguments(1)
def measure_step(
    model_type: str = "llama",
    *,
    dtype: str = "float32",
    attention: str = "sdpa",
    hidden: int = 128,
    heads: int = 4,
    kv_heads: int = 2,
    ffn: int = 256,
    layers: int = 2,
    vocab: int = 1000,
    seq_len: int = 64,
    micro_batch: int = 2,
    accumulation: int = 1,
    recompute: bool = False,
    optimizer_implementation: str = "for-loop",
    memory_limit: Any = DEFAULT_MEMORY_LIMIT,
    random_state: int = 0,
) -> StepMeasurement:
    """Measure the memory of one AdamW training step of a small random ``model_type`` on the CPU, by category.

    Parameters
    ----------
    model_type
        ``"llama"`` (``LlamaForCausalLM``) or ``"gpt2"`` (``GPT2LMHeadModel``; its MLP is 4·hidden wide, it
        has no key/value heads of its own: ``ffn`` and ``kv_heads`` are not read).
    dtype, attention
        ``"float32"`` or ``"bfloat16"`` (the parameters, and AdamW's moments, which follow them);
        transformers' ``"eager"`` or ``"sdpa"`` attention.
    hidden, heads, kv_heads, ffn, layers, vocab, seq_len, micro_batch
        The model and one micro-batch.
    accumulation
        Micro-batches per step: gradients accumulate over them before the optimizer step.
    recompute
        Recompute each layer in the backward pass (transformers' ``activation_checkpointing_enable``, PyTorch's
        non-reentrant checkpoint): a layer keeps only its input.
    optimizer_implementation
        ``"for-loop"`` (PyTorch's default for CPU tensors), ``"foreach"`` or ``"fused"``.
    memory_limit
        The most memory the step may take by the model's predicted peak, checked before anything is allocated.

    Raises
    ------
    FieldError
        For a bad argument, naming it.
    MemoryLimitError
        When the model's predicted peak is above ``memory_limit``.
    ImportError
        Without PyTorch and transformers, saying how to install the ``measure`` extra.
    """
    config, random_state = check_step(_OWNER, model_type=model_type, dtype=dtype, attention=attention, hidden=hidden,
                              heads=heads, kv_heads=kv_heads, ffn=ffn, layers=layers, vocab=vocab, seq_len=seq_len,
                              micro_batch=micro_batch, accumulation=accumulation, recompute=recompute,
                              optimizer_implementation=optimizer_implementation, memory_limit=memory_limit,
                              random_state=random_state)  # fmt: skip
    require_transformers()
    times, sizes_by_category, phases = _run(config, random_state)
    return StepMeasurement(config["model_type"], config, times, sizes_by_category, phases)


def build_step(config: dict[str, Any], random_state: int, device: str = "cpu") -> tuple[Any, list[tuple[str, int]]]:
    """The model, optimizer and batches of ``config`` on ``device``; a ``step(mark)`` function and its marks.

    ``step(True)`` appends ``(phase, time.time_ns())`` to the marks as each phase starts (and ``("end", ...)``).
    """
    import torch
    import transformers

    torch.manual_seed(random_state)
    cfg = step_config(config["model_type"], **{k: config[k] for k in
                      ("hidden", "heads", "kv_heads", "ffn", "layers", "vocab", "seq_len")})  # fmt: skip
    cfg._attn_implementation = config["attention"]  # noqa: SLF001 - transformers' documented switch
    model = getattr(transformers, MODEL_TYPES[config["model_type"]])(cfg)
    model = model.to(device=device, dtype=getattr(torch, config["dtype"])).train()
    if config["recompute"]:
        kwargs = {"use_reentrant": False}  # PyTorch's non-reentrant checkpoint, one segment per layer
        if hasattr(model, "activation_checkpointing_enable"):  # transformers 5's name
            model.activation_checkpointing_enable(activation_checkpointing_kwargs=kwargs)
        else:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kwargs)
    flags = OPTIMIZER_IMPLEMENTATIONS[config["optimizer_implementation"]]
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=flags["foreach"], fused=flags["fused"])
    k = config["accumulation"]
    shape = (config["micro_batch"], config["seq_len"])
    batches = [torch.randint(0, config["vocab"], shape, device=device) for _ in range(k)]
    marks: list[tuple[str, int]] = []

    def note(label: str, mark: bool) -> None:
        if mark:
            marks.append((label, time.time_ns()))

    def step(mark: bool) -> None:
        for i, ids in enumerate(batches):
            suffix = f" {i + 1}" if k > 1 else ""
            note(f"forward{suffix}", mark)
            loss = model(input_ids=ids, labels=ids, use_cache=False).loss / k
            note(f"backward{suffix}", mark)
            loss.backward()
            del loss
        note("optimizer step", mark)
        optimizer.step()
        note("zero_grad", mark)
        optimizer.zero_grad(set_to_none=True)
        note("end", mark)

    return step, marks


def _run(config: dict[str, Any], random_state: int) -> tuple[Any, Any, Any]:
    # Kineto, the profiler's library, prints a time-stamped line as it starts and stops unless its log level
    # is above its highest (6), read when the profiler first starts in the process; a level given is kept
    os.environ.setdefault("KINETO_LOG_LEVEL", "6")
    from torch.profiler import ProfilerActivity, profile

    step, marks = build_step(config, random_state)
    step(mark=False)  # AdamW's moments exist from here on, as in every step but the first
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True, record_shapes=True, with_stack=True) as prof:
        step(mark=True)
    return _timeline(prof, marks)


def _timeline(prof: Any, marks: list[tuple[str, int]]) -> tuple[Any, Any, Any]:
    """PyTorch's memory timeline on the CPU, by category, in microseconds from the first mark."""
    from torch.profiler._memory_profiler import MemoryProfileTimeline

    timeline = MemoryProfileTimeline(prof._memory_profile())  # noqa: SLF001 - what export_memory_timeline writes
    raw_times, rows = timeline._coalesce_timeline("cpu")  # type: ignore[no-untyped-call]  # noqa: SLF001
    start = marks[0][1] / 1000
    # the first row holds what existed before the step (time -1 or the first event): place it at the start
    times = tuple(max(float(t) - start, 0.0) if t > 0 else 0.0 for t in raw_times)
    by_category = {name: tuple(float(row[i + 1]) for row in rows) for i, name in enumerate(CATEGORIES)}
    phases = tuple((label, at / 1000 - start, marks[j + 1][1] / 1000 - start)
                   for j, (label, at) in enumerate(marks[:-1]))  # fmt: skip
    return times, by_category, phases
