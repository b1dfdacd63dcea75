"""Hypothesis strategies for valid scenarios; extend them with every new field (attrs' habit)."""

from __future__ import annotations

from typing import Any

from hypothesis import assume
from hypothesis import strategies as st

from mlsysim_nb import (
    Q_,
    ActivationMemoryScenario,
    Hardware,
    ParallelTrainingScenario,
    TrainingStateFitScenario,
    TrainingTimeScenario,
    Workload,
)

counts = st.integers(min_value=1, max_value=10**6)


@st.composite
def transformers(draw: Any) -> Workload:
    """A transformer workload with consistent geometry."""
    heads = draw(st.integers(1, 128))
    head_dim = draw(st.sampled_from([32, 64, 80, 128]))
    return Workload(
        name="hypothesis transformer",
        parameters=draw(st.integers(10**6, 10**12)),
        layers=draw(st.integers(1, 128)),
        hidden_dim=heads * head_dim,
        heads=heads,
        context_length=draw(st.integers(1, 2**17)),
    )


@st.composite
def training_scenarios(draw: Any, adapters: bool | None = None) -> TrainingStateFitScenario:
    """A valid TrainingStateFitScenario, with or without hardware, activations and adapters."""
    workload = draw(transformers())
    params = int(workload.parameters.magnitude)
    kw: dict[str, Any] = {
        "workload": workload,
        "hardware": draw(st.one_of(st.none(), st.sampled_from([Hardware[k] for k in Hardware]))),
        "bytes_per_value": draw(st.sampled_from([1, 2, 4])),
        "optimizer_bytes_per_parameter": draw(st.sampled_from([0, 2, 4, 8, 12])),
        "master_bytes_per_parameter": draw(st.sampled_from([None, 2, 4])),
    }
    if draw(st.booleans()):
        kw["batch_size"] = draw(st.integers(1, 4096))
        kw["activations"] = Q_(draw(st.floats(0, 1e13, allow_nan=False)), "byte")
    use_adapters = draw(st.booleans()) if adapters is None else adapters
    if use_adapters:
        if draw(st.booleans()):
            kw["adapter_parameters"] = draw(st.integers(0, params))
        else:
            rank = draw(st.integers(1, 64))
            matrices = draw(st.integers(1, 4))
            d = workload.hidden_dim
            assert d is not None and workload.layers is not None
            budget = params // (workload.layers * matrices * rank)
            if budget < 2:
                kw["adapter_parameters"] = draw(st.integers(0, params))
            else:
                d_in = draw(st.integers(1, max(1, min(d, budget - 1))))
                d_out = draw(st.integers(1, max(1, min(d, budget - d_in))))
                kw.update(adapter_rank=rank, adapted_matrices=matrices, adapter_in_dim=d_in, adapter_out_dim=d_out)
    return TrainingStateFitScenario(**kw)


@st.composite
def activation_scenarios(draw: Any) -> ActivationMemoryScenario:
    """A valid ActivationMemoryScenario."""
    workload = draw(transformers())
    assert workload.layers is not None and workload.context_length is not None
    return ActivationMemoryScenario(
        workload=workload,
        micro_batch=draw(st.integers(1, 512)),
        seq_len=draw(st.one_of(st.none(), st.integers(1, workload.context_length))),  # at most the context window
        precision_bytes=draw(st.sampled_from([1, 2, 4])),
        normalization_per_layer=draw(st.one_of(st.none(), st.builds(lambda x: Q_(x, "MB"), st.integers(0, 100)))),
        ffn_multiple=draw(st.integers(1, 8)),
        checkpoint_segments=draw(st.one_of(st.none(), st.integers(1, workload.layers))),
    )


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


@st.composite
def parallel_scenarios(draw: Any, activations: bool | None = None) -> ParallelTrainingScenario:
    """A valid ParallelTrainingScenario: t divides the heads, p the layers, m the layers per stage."""
    state = draw(training_scenarios())
    workload = state.workload
    assert workload.heads is not None and workload.layers is not None
    with_acts = draw(st.booleans()) if activations is None else activations
    window = min(2**15, workload.context_length or 2**15)  # a sequence is at most the context window
    t = draw(st.sampled_from([d for d in _divisors(workload.heads) if d <= window]))
    sequence_parallel = t > 1 and draw(st.booleans())  # sequence parallelism needs t > 1
    acts = None
    if with_acts:
        acts = ActivationMemoryScenario(
            workload=workload,
            micro_batch=draw(st.integers(1, 64)),
            seq_len=t * draw(st.integers(1, window // t)),  # sequence parallelism needs t to divide s
            precision_bytes=draw(st.sampled_from([1, 2, 4])),
        )
    p = draw(st.sampled_from(_divisors(workload.layers)))
    m = draw(st.sampled_from(_divisors(workload.layers // p))) if p > 1 else 1
    return ParallelTrainingScenario(
        state=state,
        activations=acts,
        recompute=draw(st.sampled_from(["none", "selective", "full"])),
        data_parallel=draw(st.integers(1, 1024)),
        zero_stage=draw(st.integers(0, 3)),
        tensor_parallel=t,
        sequence_parallel=sequence_parallel,
        pipeline_parallel=p,
        interleave=m,
    )


@st.composite
def time_scenarios(draw: Any) -> TrainingTimeScenario:
    """A valid TrainingTimeScenario: a layout with activations, a vocabulary, a device with links, B = k·p·b·N_d."""
    layout = draw(parallel_scenarios(activations=True))
    workload = layout.workload.variant(vocab_size=draw(st.integers(1000, 256000)))
    device = Hardware[draw(st.sampled_from(["A100_80GB", "H100", "H200", "B200"]))]
    layout = layout.variant(workload=workload)
    layout = layout.variant(state=layout.state.variant(hardware=device))
    assert layout.activations is not None
    per_step = layout.activations.micro_batch * layout.data_parallel
    batch = per_step * layout.pipeline_parallel * draw(st.integers(1, 8))
    assume(batch <= 2**24)  # global_batch_size's bound
    return TrainingTimeScenario(
        layout=layout,
        global_batch_size=batch,
        data_parallel_overlap=draw(st.booleans()),
        matmul_share=draw(st.floats(0.05, 1)),
        link_share=draw(st.floats(0.05, 1)),
    )


# -- formula expressions (the formula engine's grammar) ------------------------------------------------------------
formula_names = st.sampled_from(["a", "b", "c", "batch_size", "hidden_dim", "x_1"])
# constants format_number writes exactly (whole numbers below a million, short decimals), so a rendering reads back
formula_constants = st.one_of(st.integers(0, 999_999), st.sampled_from([0.5, 0.25, 1.5, 2.5, 0.125, 12.75]))
_BINARY_OPERATORS = ["+", "-", "*", "/", "//"]


@st.composite
def formula_expressions(draw: Any, *, comparisons: bool = True, depth: int = 4) -> str:
    """An expression of the formula grammar: names, constants, ``+ - * / // **``, unary minus, the four calls, ``<=``.

    Every sub-expression is bracketed, so the string says exactly which tree is meant. Powers have a small
    whole exponent (as every shipped formula's do). With ``comparisons=False`` no ``<=`` appears, so the
    value is a number everywhere. ``depth`` bounds the nesting.
    """
    steps = ["leaf", "binary", "power", "minus", "round", "extreme"] + (["compare"] if comparisons else [])
    step = "leaf" if depth == 0 else draw(st.sampled_from(steps))
    if step == "leaf":
        return str(draw(st.one_of(formula_names, formula_constants)))

    def sub() -> str:
        return str(draw(formula_expressions(comparisons=comparisons, depth=depth - 1)))

    if step == "binary":
        return f"({sub()}) {draw(st.sampled_from(_BINARY_OPERATORS))} ({sub()})"
    if step == "power":
        return f"({sub()}) ** {draw(st.sampled_from([2, 3]))}"
    if step == "minus":
        return f"-({sub()})"
    if step == "round":
        return f"{draw(st.sampled_from(['floor', 'ceil']))}({sub()})"
    if step == "extreme":
        return f"{draw(st.sampled_from(['min', 'max']))}({sub()}, {sub()})"
    return f"({sub()}) <= ({sub()})"


# -- many devices on the shipped architectures, expert parallelism included ------------------------------------------
#: Shipped configurations the many-device strategies draw from: dense GQA models and a mixture of experts.
ARCHITECTURE_KEYS = ("llama-3.1-8b", "llama-3.1-70b", "mistral-7b", "qwen2.5-7b", "mixtral-8x7b")


@st.composite
def architecture_parallel_scenarios(draw: Any, *, interleave: bool = True) -> ParallelTrainingScenario:
    """A valid ParallelTrainingScenario on a shipped architecture, with activations; e > 1 only for an MoE.

    t divides the heads, key/value heads and width (and s, under SP); e divides the experts and N_d, with t = 1.
    """
    from mlsysim_nb import Workloads

    workload = Workloads.configuration(draw(st.sampled_from(ARCHITECTURE_KEYS)))
    assert workload.heads is not None and workload.layers is not None and workload.hidden_dim is not None
    kv = workload.kv_heads or workload.heads
    e = draw(st.sampled_from(_divisors(workload.experts))) if workload.experts else 1
    t = 1 if e > 1 else draw(st.sampled_from([d for d in _divisors(kv) if workload.hidden_dim % d == 0]))
    sequence_parallel = t > 1 and draw(st.booleans())
    state = TrainingStateFitScenario(
        workload=workload,
        hardware=Hardware["H100"],
        bytes_per_value=2,
        optimizer_bytes_per_parameter=draw(st.sampled_from([0, 4, 8])),
        master_bytes_per_parameter=draw(st.sampled_from([None, 4])),
    )
    acts = ActivationMemoryScenario(
        workload=workload,
        micro_batch=draw(st.integers(1, 8)),
        seq_len=t * draw(st.integers(1, 2**14 // t)),
        precision_bytes=draw(st.sampled_from([2, 4])),
    )
    p = draw(st.sampled_from(_divisors(workload.layers)))
    m = draw(st.sampled_from(_divisors(workload.layers // p))) if p > 1 and interleave else 1
    return ParallelTrainingScenario(
        state=state,
        activations=acts,
        recompute=draw(st.sampled_from(["none", "selective", "full"])),
        data_parallel=e * draw(st.integers(1, 64)),
        zero_stage=draw(st.integers(0, 3)),
        tensor_parallel=t,
        sequence_parallel=sequence_parallel,
        expert_parallel=e,
        pipeline_parallel=p,
        interleave=m,
    )


@st.composite
def architecture_activation_scenarios(draw: Any) -> ActivationMemoryScenario:
    """An ActivationMemoryScenario on a shipped real architecture, in either attention and either accounting."""
    from mlsysim_nb import Workloads

    key = draw(st.sampled_from(sorted(Workloads.configurations())))
    workload = Workloads.configuration(key)
    assert workload.layers is not None
    # a Mamba-2 hybrid: the paper's accounting only (the kind refuses transformers' padded rows by name)
    accountings = ["megatron"] if any(layer.mixer != "attention" for layer in workload.pattern) else [
        "megatron", "transformers"]  # fmt: skip
    return ActivationMemoryScenario(
        workload=workload,
        micro_batch=draw(st.integers(1, 16)),
        seq_len=draw(st.integers(1, min(2**15, workload.context_length or 2**15))),  # at most the context window
        precision_bytes=draw(st.sampled_from([2, 4])),
        # transformers runs gpt-oss's sinks eagerly only (its accounting refuses fused attention by name)
        **draw(
            st.sampled_from(
                [
                    {"attention": a, "implementation": i}
                    for a in ("eager", "fused")
                    for i in accountings
                    if not (workload.attention_sinks and (a, i) == ("fused", "transformers"))
                ]
            )
        ),
        checkpoint_segments=draw(st.one_of(st.none(), st.integers(1, workload.layers))),
    )


@st.composite
def inference_scenarios(draw: Any) -> Any:
    """A valid InferenceMemoryScenario on a shipped architecture.

    t divides the heads and divides or is a multiple of the key/value heads; the context is within the model's
    window, the prompt within the context.
    """
    from mlsysim_nb import InferenceMemoryScenario, Workloads

    workload = Workloads.configuration(draw(st.sampled_from(ARCHITECTURE_KEYS)))
    assert workload.heads is not None and workload.context_length is not None
    kv = workload.kv_heads or workload.heads
    t = draw(st.sampled_from([d for d in _divisors(workload.heads) if kv % d == 0 or d % kv == 0]))
    context = draw(st.integers(1, min(workload.context_length, 2**15)))
    return InferenceMemoryScenario(
        workload=workload,
        hardware=Hardware[draw(st.sampled_from(["H100", "L4", "A100_40GB", "B200"]))],
        weight_bytes_per_parameter=draw(st.sampled_from([2, 1, 0.515625])),
        kv_bytes_per_value=draw(st.sampled_from([2, 1])),
        batch_size=draw(st.integers(1, 512)),
        context_length=context,
        prompt_length=draw(st.one_of(st.none(), st.integers(1, context))),
        block_size=draw(st.sampled_from([1, 8, 16, 32])),
        tensor_parallel=t,
        runtime_reserve=draw(st.sampled_from([0.0, 0.05, 0.1, 0.2])),
    )


#: The random scenarios of each kind by its class's name; a kind without one here is drawn from its named cases.
KIND_STRATEGIES: dict[str, Any] = {
    "TrainingStateFitScenario": training_scenarios,
    "ActivationMemoryScenario": activation_scenarios,
    "ParallelTrainingScenario": parallel_scenarios,
    "InferenceMemoryScenario": inference_scenarios,
}


def scenarios_of(kind: Any) -> Any:
    """Valid scenarios of one kind the registry finds: its strategy above, or else its catalog's named cases."""
    strategy = KIND_STRATEGIES.get(kind.name)
    if strategy is not None:
        return strategy()
    from mlsysim_nb import Scenarios

    names = list(kind.cases())
    assert names, f"{kind.name} has neither a strategy in tests/strategies.py nor a named case to draw"
    return st.sampled_from(names).map(lambda name: Scenarios[name])


def every_kind_scenarios() -> Any:
    """Valid scenarios of every kind the registry finds (a new kind is drawn without editing a test)."""
    from mlsysim_nb import kinds

    return st.one_of(*(scenarios_of(kind) for kind in kinds.all_kinds()))
