"""How an ``InferenceMemoryScenario`` presents itself: its sections, headline, chart and controls, as data.

The scenario class (:mod:`mlsysim_nb.kinds.inference.model`) holds the model; this mixin holds what the display,
comparison, control and sweep modules read from it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from mlsysim_nb.errors import NotApplicableError
from mlsysim_nb.kinds.inference.physics import EQUATIONS
from mlsysim_nb.model.notation import RECORD_QUANTITIES
from mlsysim_nb.model.presentation import Headline, MemoryChart, SectionSpec, Verdict
from mlsysim_nb.model.protocol import ScenarioLike
from mlsysim_nb.render.numbers import capacity_text, format_bytes

if TYPE_CHECKING:
    from mlsysim_nb.records.hardware import HardwareNode
    from mlsysim_nb.records.workloads import Workload

__all__ = ["InferenceLike", "InferenceView", "notes"]


def _steps(*names: str) -> tuple[tuple[str, str], ...]:
    return tuple((n, n) for n in names)


_S = SectionSpec
_SECTIONS = (
    _S(
        "Weights per device, split over the t devices",
        _steps("split_parameters", "kv_heads_per_device", "kv_head_replicas", "weights"),
        "weights",
    ),
    _S(
        "Weight format: the tensors it keeps in 16 bits",
        _steps("kept_weights"),
        "kept_weights",
        when="has_weight_format",
    ),
    _S(
        "KV cache per device, in blocks",
        _steps("kv_cache_per_token", "kv_tokens", "kv_cache", "blocks_per_sequence", "block_waste"),
        "kv_cache",
    ),
    _S("Fit on one device", _steps("reserve", "total", "free_memory", "fits"), "total"),
    _S(
        "How many sequences, how long",
        _steps("kv_budget", "sequence_memory", "max_batch_size", "fit_blocks", "max_context_length"),
        "max_batch_size",
    ),
    _S(
        "vLLM's start-up log: the blocks it reserves per request",
        _steps("chunk_tokens", "vllm_cache_blocks", "vllm_blocks_per_request", "vllm_max_concurrency"),
        "vllm_max_concurrency",
        when="has_sliding_window",
    ),
    _S(
        "Experts a decode step reads",
        _steps("experts_touched", "expert_weights"),
        "experts_touched",
        when="has_experts",
    ),
    _S(
        "Decode: one token for every sequence per step",
        _steps(
            "lookup_weights",
            "weights_read_per_step",
            "bytes_read_per_step",
            "decode_memory_time",
            "multiplied_parameters",
            "decode_flops_per_step",
            "decode_compute_time",
            "decode_time_per_token",
            "memory_bound",
            "tokens_per_second",
            "aggregate_tokens_per_second",
        ),
        "decode_time_per_token",
    ),
    _S(
        "Prefill: the prompts, at peak arithmetic",
        _steps("prompt_tokens", "prefill_flops", "prefill_time"),
        "prefill_time",
    ),
    _S(
        "Tensor parallelism's all-reduces: two per layer",
        _steps("serving_link_bandwidth", "decode_allreduce_traffic", "decode_allreduce_time", "prefill_allreduce_time"),
        "decode_allreduce_time",
        when="tensor_split",
    ),
    _S(
        "Serving time: first token and each token after",
        _steps("time_to_first_token", "time_per_output_token"),
        "time_per_output_token",
    ),
)


def _formula(symbols: Mapping[str, Any], name: str) -> str:
    """``m_kv = n_kv · b_kv``: an equation as the derivation writes it, from the kind's table."""
    formula = EQUATIONS.formula(name)
    return f"{symbols[name].text()} = {formula.render(symbols, 'text', case=formula.cases[-1])}"


def notes(symbols: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The derivation's notes, their equations written from the kind's table (never typed twice)."""
    equation = (
        f"The KV cache of one token on one device is {_formula(symbols, 'kv_cache_per_token')}, n_kv the values "
        "the layer table's cache rows hold: an attention layer's key and value, a_kv,dev · d each, for the "
        "key/value heads the device holds (2 · L · a_kv,dev · d for L such layers; Kwon et al. 2023), a_kv/a of "
        "multi-head attention's under grouped-query attention (Ainslie et al. 2023). Each sequence takes whole "
        "blocks of s_blk tokens, so its last block's empty slots are the block waste. Tensor parallelism splits the "
        "heads, the MLP width and the vocabulary over t devices (Shoeybi et al. 2019); with fewer key/value heads "
        "than devices each is replicated, as vLLM does. A decode step reads "
        f"{_formula(symbols, 'weights_read_per_step')} of weights (dense: all but the lookup tables) beside the "
        f"cache, does {_formula(symbols, 'decode_flops_per_step')}, and takes the larger of its bytes over the "
        "memory bandwidth and its FLOPs over the peak FLOPS."
    )
    assumptions = (
        "Every weight at the stated width (a 4-bit format's group scales counted in the width: 4 bits plus "
        "a 16-bit scale per 128 weights is 4.125 bits); the step costed is the last, each sequence holding "
        "its whole context; every weight a step uses is read once per step, a lookup table (token "
        "embeddings untied from the output layer, learned positions) only in its tokens' rows, counted as "
        "nothing, and none assumed where the workload does not state its vocabulary or position "
        "encoding; a mixture of experts' tokens pick their experts uniformly at random, so B tokens touch "
        f"{_formula(symbols, 'experts_touched')} distinct experts per layer (k_exp at B = 1); peak bandwidth and "
        "peak FLOPS are reached. The reserve default, 10 % of each device, is what vLLM's default "
        "gpu_memory_utilization of 0.9 leaves outside the engine's budget (0.92 in its current "
        "releases); the activations vLLM profiles inside that budget are not counted, so the largest batch is "
        "an upper bound."
    )
    excludes = (
        "Communication between the t devices, activations and workspaces beyond the reserve, the "
        "scheduler's preemption and swapping, prefix sharing between sequences, speculative decoding, and "
        "the time to first token beyond prefill's arithmetic."
    )
    return (("Equation", equation), ("Assumptions", assumptions), ("Excludes", excludes))


_COMPARISON_ROWS = (
    "weights", "kv_cache_per_token", "kv_cache", "block_waste", "reserve", "total", "fits", "max_batch_size",
    "max_context_length", "bytes_read_per_step", "decode_time_per_token", "tokens_per_second",
    "aggregate_tokens_per_second", "prefill_time",
)  # fmt: skip
_WIDTH_NAMES = {2: "16-bit", 1: "8-bit", 0.515625: "4-bit"}


def _width(value: Any) -> str:
    """``16-bit``, ``8-bit``, ``4-bit`` or the bytes, for a width in bytes (``several widths`` in a sweep)."""
    if getattr(value, "ndim", 0):
        return "several widths"
    return _WIDTH_NAMES.get(float(value), f"{float(value):g} B")


def _weights(key: str | None, value: Any) -> str:
    """The weights in words: ``16-bit weights``, or a format's summary and its bytes per quantised weight.

    ``"FP8 E4M3 weights in 128×128 blocks (1.00024 B per quantised weight)"``: the format's data
    (``records/data/formats.toml``) names it; its 16-bit tensors are in the derivation.
    """
    if key is None:
        return f"{_width(value)} weights"
    from mlsysim_nb.records.formats import weight_format

    fmt = weight_format(key)
    return f"{fmt.summary} ({fmt.bytes_per_value:g} B per quantised weight)"


class InferenceLike(ScenarioLike, Protocol):
    """What the serving view reads of its scenario, beyond every scenario's face."""

    @property
    def workload(self) -> Workload:
        """The ``workload`` field."""
        ...

    @property
    def hardware(self) -> HardwareNode:
        """The ``hardware`` field."""
        ...

    @property
    def weight_bytes_per_parameter(self) -> Any:
        """The ``weight_bytes_per_parameter`` field."""
        ...

    @property
    def kv_bytes_per_value(self) -> Any:
        """The ``kv_bytes_per_value`` field."""
        ...

    @property
    def batch_size(self) -> Any:
        """The ``batch_size`` field."""
        ...

    @property
    def context_length(self) -> Any:
        """The ``context_length`` field."""
        ...

    @property
    def tensor_parallel(self) -> Any:
        """The ``tensor_parallel`` field."""
        ...

    @property
    def weight_format(self) -> str | None:
        """The ``weight_format`` field."""
        ...

    def speed(self) -> str:
        """The decode speed in words."""
        ...

    def unstated_lookups(self) -> tuple[str, ...]:
        """What the workload leaves unsaid about its lookup tables."""
        ...

    def startup_concurrency(self) -> str:
        """The start-up figure vLLM logs, beside the steady state, in words."""
        ...


class InferenceView:
    """The presentation of a serving scenario (a mixin of :class:`InferenceMemoryScenario`)."""

    SECTIONS: ClassVar[tuple[SectionSpec, ...]] = _SECTIONS
    #: the derivation's notes, written by :func:`notes` once the class's notation exists (``model.py``)
    NOTES: ClassVar[tuple[tuple[str, str], ...]] = ()
    COMPARISON_ROWS: ClassVar[tuple[str, ...]] = _COMPARISON_ROWS

    def default_title(self: InferenceLike) -> str:
        """``"Llama 3.1 8B served in 16-bit on 1 × NVIDIA H100"``, or with a weight format's summary."""
        on = f"on {self.tensor_parallel} × {self.hardware.name}"
        if self.weight_format is not None:
            from mlsysim_nb.records.formats import weight_format

            return f"{self.workload.name} served with {weight_format(self.weight_format).summary} {on}"
        width = _width(self.magnitude("weight_bytes_per_parameter"))
        return f"{self.workload.name} served in {width} {on}"

    def speed(self: InferenceLike) -> str:
        """The decode speed in words: time per token, tokens per second per sequence, and which bound sets it."""
        try:
            per_token = float(self.magnitude("decode_time_per_token")) * 1e3
        except NotApplicableError:
            return "speed not known (the device gives no peak FLOPS)"
        bound = "memory-bound" if self.magnitude("memory_bound") else "compute-bound"
        rate = float(self.magnitude("tokens_per_second"))
        return f"{per_token:.3g} ms per token ({rate:,.0f} tokens/s per sequence, {bound})"

    def headline(self: InferenceLike) -> Headline:
        """Memory per device against the device, how many sequences fit, and how fast each decodes."""
        if self.is_sweep:
            return Headline(f"{self.workload.name} served, a sweep over {', '.join(self.swept_fields())}")
        used = format_bytes(self.magnitude("total"))
        cap = format_bytes(self.magnitude("capacity"), binary=True)
        t = self.tensor_parallel
        weights = _weights(self.weight_format, self.magnitude("weight_bytes_per_parameter"))
        head = f"{self.workload.name}, {weights}, on {t} × {self.hardware.name}"
        line = f"{head}: {used} of {cap} per device"
        most = int(self.magnitude("max_batch_size"))
        b = int(self.batch_size)
        of = f"{'sequence' if b == 1 else 'sequences'} of {int(self.context_length):,} tokens"
        if self.magnitude("fits"):
            text = f"fits {b:,} {of} (at most {most:,}); {self.speed()}"
            return Headline(line, Verdict(text, ok=True))
        if most == 0:
            one = f"one sequence of {int(self.context_length):,} tokens"
            return Headline(line, Verdict(f"does not fit: not even {one} beside the weights and reserve", ok=False))
        text = f"does not fit {b:,} {of}: at most {most:,}"
        return Headline(line, Verdict(text, ok=False))

    def caveats(self: InferenceLike) -> tuple[str, ...]:
        """What a reader must see beside the numbers: replicated key/value heads, the routing and the window."""
        if self.is_sweep:
            return ()
        out = []
        replicas = float(self.magnitude("kv_head_replicas"))
        if replicas > 1:
            kv, t = int(self.magnitude("kv_heads")), int(self.tensor_parallel)
            out.append(
                f"{t} devices share {kv} key/value heads: each head, its K and V projections and its cache are "
                f"replicated on {replicas:g} devices, so the cache per device stops shrinking at one head."
            )
        unstated = self.unstated_lookups()
        if unstated:
            out.append(
                f"{self.workload.name} does not state {' or '.join(unstated)}: no lookup table is assumed for "
                "what it leaves unsaid, so "
                "a decode step is counted as reading every weight (untied token embeddings or learned positions "
                "would be read only in the batch's rows)."
            )
        if self.flag("has_experts"):
            out.append(
                "The experts a decode step reads assume uniform top-k routing; a skewed router touches fewer "
                "distinct experts, so the step reads less."
            )
        if self.flag("has_sliding_window"):
            window = int(self.magnitude("sliding_window"))
            out.append(
                f"Sliding-window attention: each layer keeps at most the last {window:,} tokens, the step's own "
                "included (between steps transformers' cache holds one fewer)."
            )
            startup = self.startup_concurrency()
            if startup:
                out.append(startup)
        return tuple(out)

    def startup_concurrency(self: InferenceLike) -> str:
        """The start-up figure vLLM logs, beside the steady state, in words ("" where it does not apply)."""
        try:
            figure = float(self.magnitude("vllm_max_concurrency"))
        except NotApplicableError:  # layers of several kinds, or a device whose default chunk is not the GPUs'
            return ""
        return (
            f"vLLM logs a maximum concurrency of {figure:.2f} for {int(self.context_length):,} tokens per request at "
            f"start-up: it reserves {int(self.magnitude('vllm_blocks_per_request')):,} blocks per request (a "
            f"prefill chunk of {int(self.magnitude('chunk_tokens')):,} tokens after the window's earlier ones, at most "
            "the request's, and one block more) where a decoding sequence holds "
            f"{int(self.magnitude('blocks_per_sequence')):,}; the largest batch here, "
            f"{int(self.magnitude('max_batch_size')):,}, is the steady state's."
        )

    def unstated_lookups(self: InferenceLike) -> tuple[str, ...]:
        """What the workload leaves unsaid about its lookup tables (its vocabulary, its position encoding)."""
        w = self.workload
        out = []
        if w.vocab_size is None:
            out.append("its vocabulary (vocab_size)")
        if w.positions is None:
            out.append("its position encoding (positions)")
        return tuple(out)

    def memory_chart(self: InferenceLike) -> MemoryChart:
        """One device's memory: weights, KV cache, block waste, reserve and what is free, against its capacity."""
        m = self.magnitude
        parts = {
            "weights": m("weights"),
            "KV cache": m("kv_cache"),
            "block waste": m("block_waste"),
            "reserve": m("reserve"),
        }
        free = m("free_memory")
        parts["free"] = free if free > 0 else 0.0
        return MemoryChart.against((("one device", parts),), self.hardware, self.headline())

    def sweep_quantity(self: InferenceLike) -> str:
        """What a sweep plots and fits by default: memory per device."""
        return "total"

    def fit_questions(self: InferenceLike) -> dict[str, tuple[str, str]]:
        """The verdict, the quantity it holds against the device, and what it is about (for a sweep's words)."""
        return {"fits": ("total", "the serving memory per device")}

    def input_rows(self: InferenceLike) -> list[tuple[str, str, str]]:
        """The workload's shape and the device's capacity, bandwidth and peak FLOPS."""
        from mlsysim_nb.records.workloads import workload_rows

        rows = workload_rows(self.workload)
        node = self.hardware
        rows.append(
            ("hardware.memory.capacity", RECORD_QUANTITIES["capacity"].label, capacity_text(node.memory.capacity))
        )
        rows.append(("hardware.memory.bandwidth", RECORD_QUANTITIES["bandwidth"].label, f"{node.memory.bandwidth:~P}"))
        if node.peak_flops is not None:
            rows.append(("hardware.peak_flops", RECORD_QUANTITIES["peak_flops"].label, f"{node.peak_flops:~P}"))
        return rows

    def controls(self: InferenceLike) -> list[Any]:
        """Device, model, the widths, the batch and context, the block, t and the reserve."""
        from mlsysim_nb.model import controls as c

        fields = ("weight_bytes_per_parameter", "kv_bytes_per_value", "batch_size", "context_length",
                  "block_size", "tensor_parallel")  # fmt: skip
        return [
            c.catalog_control(self, "hardware"),
            c.catalog_control(self, "workload"),
            *(c.field_control(self, name) for name in fields),
        ]
