"""Serving a trained model: its weights and key/value cache per device, whether they fit, and how fast it decodes.

:class:`InferenceMemoryScenario` holds one serving configuration: the model, the device, the weights' and the
cache's widths, the batch of concurrent sequences and their context, the paged cache's block size, tensor
parallelism and the engine's reserve. Its equations live in :mod:`mlsysim_nb.kinds.inference.physics`, what it
reads of the layer table in :mod:`mlsysim_nb.kinds.inference.table`, its named cases in
:mod:`mlsysim_nb.kinds.inference.cases`.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from mlsysim_nb.errors import FieldError
from mlsysim_nb.kinds.inference.fit import default_chunk
from mlsysim_nb.kinds.inference.physics import EQUATIONS
from mlsysim_nb.kinds.inference.table import kept_groups, parameter_groups
from mlsysim_nb.kinds.inference.timing import serving_links
from mlsysim_nb.kinds.inference.view import InferenceView, notes
from mlsysim_nb.layers import Architecture, CacheValues, cache_values, mixers, tensor_parallel_refusal
from mlsysim_nb.model.changes import changed_fields
from mlsysim_nb.model.equations import Equations
from mlsysim_nb.model.knob import CONTEXT_WINDOW, declared_knobs, knob, record
from mlsysim_nb.model.notation import RECORD_QUANTITIES, Quantity, merge
from mlsysim_nb.model.scenario import Scenario, derived, is_array
from mlsysim_nb.records.formats import KEPT_BYTES, weight_format, weight_format_keys
from mlsysim_nb.records.hardware import HardwareNode
from mlsysim_nb.records.workloads import Workload, check_workload

__all__ = ["KV_WIDTHS", "WEIGHT_FORMATS", "WEIGHT_WIDTHS", "InferenceMemoryScenario"]

#: 4-bit weights with one 16-bit scale per group of 128: (4·128 + 16)/128 = 4.125 bits = 0.515625 B.
INT4_GROUP_128 = (4 * 128 + 16) / 128 / 8
#: The weight widths a control offers (label, bytes per parameter).
WEIGHT_WIDTHS = (
    ("16-bit (2 B)", 2),
    ("8-bit (1 B)", 1),
    ("4-bit, a 16-bit scale per 128 (0.515625 B)", INT4_GROUP_128),
)
#: The weight formats a control offers (their data: ``records/data/formats.toml``).
WEIGHT_FORMATS = tuple((weight_format(key).name, key) for key in weight_format_keys())
#: The key/value widths a control offers.
KV_WIDTHS = (("16-bit (2 B)", 2), ("8-bit (1 B)", 1))
#: The narrowest widths accepted: 1 bit per weight, 2 bits per cached value.
_LOWEST = {"weight_bytes_per_parameter": 0.125, "kv_bytes_per_value": 0.25}
_RESERVE_HELP = (
    "share of each device's memory the engine keeps out of weights and cache (activations, workspaces, CUDA "
    "context); 0.1 is what vLLM's default gpu_memory_utilization = 0.9 leaves"
)


@functools.lru_cache(maxsize=256)
def _cache_values(arch: Architecture, tensor_parallel: int) -> CacheValues:
    """The layer table's cache values under vLLM's split, once per architecture and t (a sweep's t: each call)."""
    return cache_values(arch, tensor_parallel=tensor_parallel, engine="vllm")


def _first(values: Any, bad: Any) -> Any:
    values, bad = np.broadcast_arrays(np.asarray(values), np.asarray(bad))
    return values[bad].flat[0].item()


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class InferenceMemoryScenario(InferenceView, Scenario):
    """Serving ``workload`` on ``tensor_parallel`` devices like ``hardware``: memory per device, the fit, the speed.

    Each device holds its share of the weights (the parameters tensor parallelism splits, 1/t each; the K
    and V projections of the key/value heads it holds; the norms and router whole) at
    ``weight_bytes_per_parameter``, and the keys and values of every cached token of the ``batch_size``
    sequences at ``kv_bytes_per_value``, in blocks of ``block_size`` tokens (vLLM's paged cache, Kwon et
    al. 2023), beside a ``runtime_reserve`` share of its memory. With fewer key/value heads than devices,
    each head is replicated (one per device). Under sliding-window attention a layer keeps at most the
    window's tokens.

    A decode step gives every sequence one token: it reads the weights it uses (all but the lookup tables)
    and the whole cache, and does 2 FLOPs per active parameter that multiplies (the lookup tables left out)
    plus attention per sequence; its time is the larger of the bandwidth bound
    and the arithmetic bound. A mixture of experts holds every expert but reads, per layer, the distinct
    experts the batch's tokens are routed to (uniform routing assumed). Prefill processes each prompt at
    peak arithmetic.

    Assumptions: every weight at one width (embeddings and norms too); a step at the end of the context,
    every sequence holding its whole context (the costliest step); a lookup table (token embeddings untied
    from the output layer, learned position embeddings) read only in the batch's rows, counted as nothing,
    and none assumed where the workload states neither its vocabulary nor its position encoding (tied
    embeddings are the output layer, read whole); peak bandwidth and peak FLOPS reached.
    Excludes: activations and workspaces beyond the reserve, communication between the t devices, the
    scheduler's preemption and swapping, prefix sharing between sequences, speculative decoding.

    Examples
    --------
    >>> from mlsysim_nb import Scenarios
    >>> s = Scenarios.Llama3_1_8BServeOnH100
    >>> s.kv_cache_per_token.to("KiB"), s.fits
    (<Quantity(128.0, 'kibibyte')>, True)
    """

    workload: Workload = record(label="model")
    hardware: HardwareNode = record(label="the accelerator (one of the t devices)")
    weight_bytes_per_parameter: Any = knob(
        2, kind="bytes", symbol="b_w", label="bytes per weight", high=4, control="dropdown", choices=WEIGHT_WIDTHS,
        help=f"bytes per stored weight, at least {_LOWEST['weight_bytes_per_parameter']:g} (1 bit): 2 for 16-bit, 1 "
        "for 8-bit, 0.515625 for 4-bit with a 16-bit scale per 128",
    )  # fmt: skip
    weight_format: str | None = knob(
        None, kind="choice", label="weight format", optional=True, control="dropdown", choices=WEIGHT_FORMATS,
        help="a numeric format of records/data/formats.toml (FP8, MXFP8, NVFP4, MXFP4, INT4, INT8): its quantised "
        "weights at b_w (which must be the format's width) and the tensors its usual layout keeps in 16 bits at 2 B; "
        "None: every weight at b_w",
    )  # fmt: skip
    kv_bytes_per_value: Any = knob(
        2, kind="bytes", symbol="b_kv", label="bytes per cached key or value", high=4, control="dropdown",
        choices=KV_WIDTHS,
        help=f"bytes per element of the key/value cache, at least {_LOWEST['kv_bytes_per_value']:g} (2 bits): 2 for "
        "16-bit, 1 for an 8-bit cache",
    )  # fmt: skip
    batch_size: Any = knob(
        1, kind="count", symbol="B", label="concurrent sequences", high=2**16, control="log",
        help="sequences decoded together, each with its own cache",
    )  # fmt: skip
    context_length: Any = knob(
        4096, kind="count", symbol="s", label="sequence length", high=2**24, control="log",
        help="tokens each sequence holds at the step costed, its context: its prompt plus the tokens generated",
        within=CONTEXT_WINDOW,
    )  # fmt: skip
    prompt_length: Any = knob(
        None, kind="count", symbol="s_p,given", label="stated prompt tokens", high=2**24, optional=True,
        control="log", help="tokens of each prompt, at most the context; None: half the context",
    )  # fmt: skip
    block_size: Any = knob(
        16, kind="count", symbol="s_blk", label="cache block (tokens)", high=4096, control="log",
        help="tokens per block of the paged KV cache (16 by default in vLLM)",
    )  # fmt: skip
    chunk_length: Any = knob(
        None, kind="count", symbol="C_given", label="stated prefill chunk (tokens)", high=2**24, optional=True,
        control="log", help="tokens vLLM's scheduler takes per step (its max_num_batched_tokens), which its "
        "start-up concurrency reserves beside a sliding window; None: vllm serve's default, 8192 on a device of at "
        "least 70 GiB that is not an A100, else 2048",
    )  # fmt: skip
    tensor_parallel: Any = knob(
        1, kind="count", symbol="t", label="tensor-parallel devices", high=1024, control="log",
        help="devices the model is split over; t must divide the heads, and divide or be a multiple of the KV heads "
        "(vLLM's rule)",
    )  # fmt: skip
    runtime_reserve: Any = knob(
        0.1, kind="share", symbol="u_rt", label="runtime reserve (share of device memory)", positive=False, high=0.9,
        help=_RESERVE_HELP,
    )  # fmt: skip
    # -- achieved shares (kinds/inference/timing.py): 1 is the device's peak, the bound the decode and prefill give
    matmul_share: Any = knob(
        1, kind="share", symbol="η_mm", label="achieved share of peak (matrix work)", high=1,
        help="the share of the device's peak FLOPS its matrix multiplications reach; 1: the peak",
    )  # fmt: skip
    memory_share: Any = knob(
        1, kind="share", symbol="η_mem", label="achieved share of memory bandwidth", high=1,
        help="the share of the memory bandwidth a decode step's reads reach; 1: the peak",
    )  # fmt: skip
    link_share: Any = knob(
        1, kind="share", symbol="η_link", label="achieved share of link bandwidth", high=1,
        help="the share of the link (or network) bandwidth the tensor-parallel all-reduces reach; 1: the peak",
    )  # fmt: skip
    name: str = dataclasses.field(default="", compare=False)
    description: str = dataclasses.field(default="", compare=False)

    EQUATIONS: ClassVar[Equations] = EQUATIONS

    @classmethod
    def notation(cls) -> Mapping[str, Quantity]:
        """The records' rows but ``context_length``: here it is a field; the workload's is ``context_window``."""
        from mlsysim_nb.model import scenario

        table = scenario._NOTATION.get(cls)  # noqa: SLF001 - the base's cache, one table per class
        if table is None:
            records = {k: v for k, v in RECORD_QUANTITIES.items() if k != "context_length"}
            own = {name: k.quantity(name) for name, k in declared_knobs(cls).items()}
            sources = [("the records", records), (f"the fields of {cls.__name__}", own)]
            table = scenario._NOTATION[cls] = merge([*sources, (cls.EQUATIONS.name, cls.EQUATIONS.notation)])  # noqa: SLF001
        return table

    def __post_init__(self) -> None:
        o = type(self).__name__
        w = check_workload(o, self.workload)
        if not isinstance(self.hardware, HardwareNode):
            raise FieldError(o, "hardware", f"must be a HardwareNode, got {type(self.hardware).__name__}")
        if w.heads is None or w.hidden_dim is None or w.layers is None:
            msg = (
                f"needs the attention shape to size the KV cache: layers, hidden_dim and heads (and kv_heads, head_dim "
                f"where they differ from heads and h/a); {w.name} gives "
                + ", ".join(f"{k}={getattr(w, k)}" for k in ("layers", "hidden_dim", "heads", "kv_heads", "head_dim"))
            )
            raise FieldError(o, "workload", msg)
        env = self._check_fields()
        for name, lowest in _LOWEST.items():
            if np.any(np.asarray(env[name]) < lowest):
                got = _first(env[name], np.asarray(env[name]) < lowest)
                msg = f"must be at least {lowest:g} B (a {lowest * 8:g}-bit width) and at most 4 B, got {got:g} B"
                raise FieldError(o, name, msg)
        self._check_format(o, env)
        self._check_context(o, w, env)
        self._check_tensor_parallel(o, w, env)
        self._set_env(*self._environment(w, env))

    def _check_format(self, o: str, env: dict[str, Any]) -> None:
        key = env["weight_format"]
        if key is None:
            return
        if isinstance(key, np.ndarray):
            msg = "takes one format per scenario, not an array (sweep weight_bytes_per_parameter instead)"
            raise FieldError(o, "weight_format", msg)
        fmt = weight_format(key)
        width = np.asarray(env["weight_bytes_per_parameter"])
        if np.any(width != fmt.bytes_per_value):
            msg = (
                f"must be {fmt.bytes_per_value:g} B ({fmt.bits_per_value:g} bits), the width of {fmt.name}, when "
                f"weight_format is {key!r}; got {_first(width, width != fmt.bytes_per_value):g} B (give both, or "
                "weight_format=None for every weight at this width)"
            )
            raise FieldError(o, "weight_bytes_per_parameter", msg)

    def _check_context(self, o: str, w: Workload, env: dict[str, Any]) -> None:
        ctx = np.asarray(env["context_length"])  # at most the model's context window: its knob's CONTEXT_WINDOW
        if env["prompt_length"] is not None:
            prompt = np.asarray(env["prompt_length"])
            if np.any(prompt > ctx):
                bad = prompt > ctx
                msg = (
                    f"must be at most context_length (the context is the prompt plus the generated tokens), got "
                    f"{_first(prompt, bad):,} with context_length = {_first(ctx, bad):,}"
                )
                field = (
                    "context_length"
                    if "context_length" in changed_fields() and "prompt_length" not in changed_fields()
                    else "prompt_length"
                )
                raise FieldError(o, field, msg)

    def _check_tensor_parallel(self, o: str, w: Workload, env: dict[str, Any]) -> None:
        """VLLM's rule for each layer's mixer (:func:`mlsysim_nb.layers.tensor_parallel_refusal`), value by value."""
        t = np.asarray(env["tensor_parallel"])
        arch = w.architecture()
        for value in np.unique(t):
            refused = tensor_parallel_refusal(arch, int(value), "vllm")
            if refused is not None:
                rule, reason = refused
                raise FieldError(o, "tensor_parallel", f"{rule} of {w.name}, got {int(value)} ({reason})")

    def _cache(self, o: str, w: Workload, env: dict[str, Any]) -> dict[str, Any]:
        """Values per token of every layer's cache rows on one device (vLLM's split), from the layer table.

        Layers alike (every one under the model's ``sliding_window`` or none) give ``cache_values_per_token``
        alone; a pattern of full-context layers beside layers of one window, or beside fixed states (a hybrid's
        state-space layers), gives the windowed layers' values and the state per sequence apart.
        """
        t = env["tensor_parallel"]
        found = _cache_values(w.architecture(), int(t)) if np.ndim(t) == 0 else (
            cache_values(w.architecture(), tensor_parallel=t, engine="vllm"))  # fmt: skip
        per_window = dict(found.per_token)
        total = sum(per_window.values())
        alike = set(per_window) <= {w.sliding_window} and not np.any(found.per_sequence)
        windows = set(per_window) - {None}
        if not alike and (len(windows) > 1 or None not in per_window):
            msg = (
                f"has layers whose caches this kind does not sum (windows {sorted(map(str, per_window))}): it sums "
                "full-context layers beside layers of one window and fixed states per sequence"
            )
            raise FieldError(o, "workload", msg)
        window = next(iter(windows), None)
        arch = w.architecture()
        width: dict[int | None, float] = {}
        for layer, count in arch.layer_counts():
            width[layer.window] = width.get(layer.window, 0) + count * mixers.find(layer.mixer).attended_width(arch)
        plain = all(layer.mixer == "attention" for layer in arch.layer_kinds())
        return {
            "has_layer_kinds": not (alike and plain), "full_attended_width": width.get(None, 0),
            "window_attended_width": sum(v for k, v in width.items() if k is not None),
            "cache_values_per_token": total, "has_mixed_cache": not alike,
            "window_cache_values": 0 if alike or window is None else per_window[window],
            "cache_window": 0 if alike or window is None else window,
            "full_cache_values": per_window.get(None, 0),
            "state_values": 0 if alike else found.per_sequence,
        }  # fmt: skip

    def _environment(self, w: Workload, env: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
        arch = w.architecture()
        node = self.hardware
        env.update(parameter_groups(w))
        key = env.pop("weight_format")
        env.update(kept_groups(w, key), kept_bytes_per_parameter=KEPT_BYTES, has_weight_format=key is not None)
        env.update(
            **self._cache(type(self).__name__, w, env),
            parameters=float(w.parameters.magnitude),
            active_parameters=float(w.active_parameters.magnitude),
            layers=w.layers,
            hidden_dim=w.hidden_dim,
            heads=w.heads,
            kv_heads=arch.kv,
            head_dim=arch.d,
            context_window=w.context_length,
            sliding_window=w.sliding_window,
            has_sliding_window=w.sliding_window is not None,
            experts=w.experts,
            experts_per_token=w.experts_per_token,
            has_experts=bool(w.experts),
            prompt_given=env["prompt_length"] is not None,
            chunk_given=env["chunk_length"] is not None,
            default_chunk=default_chunk(node),
            capacity=node.memory._capacity_bytes,  # noqa: SLF001 - converted once in Memory
            bandwidth=node.memory._bandwidth_bytes_per_second,  # noqa: SLF001
            peak_flops=None if node.peak_flops is None else float(node.peak_flops.m_as("FLOP/second")),
            **serving_links(node, env["tensor_parallel"]),
        )
        needs = {
            "context_window": f"workload.context_length (the context window, which {w.name} does not give)",
            "sliding_window": f"a sliding attention window ({w.name} attends to the whole context)",
            "experts": f"a mixture of experts ({w.name} has a dense MLP)",
            "experts_per_token": f"a mixture of experts ({w.name} has a dense MLP)",
            "peak_flops": f"hardware.peak_flops ({node.name} gives none)",
            "prompt_length": "a stated prompt_length",
            "chunk_length": "a stated chunk_length",
            "default_chunk": f"a stated chunk_length (vllm serve's default rule is the GPUs'; {node.name} is not one)",
            "cache_groups": (
                f"layers of one kind of cache ({w.name} mixes kinds: vLLM's hybrid allocator then groups its "
                "full-context, windowed and state layers into groups of equal size, which this figure does not follow)"
            ),
            "link_bandwidth": f"hardware.link_bandwidth ({node.name} gives none)",
            "network_bandwidth": f"hardware.network_bandwidth ({node.name} gives none)",
        }
        env["cache_groups"] = None if env["has_mixed_cache"] else 1
        return env, needs

    # -- weights per device
    split_parameters = derived("split_parameters")
    kept_weights = derived("kept_weights")
    kv_heads_per_device = derived("kv_heads_per_device")
    kv_head_replicas = derived("kv_head_replicas")
    weights = derived("weights")
    # -- the cache
    kv_cache_per_token = derived("kv_cache_per_token")
    kv_tokens = derived("kv_tokens")
    kv_cache = derived("kv_cache")
    blocks_per_sequence = derived("blocks_per_sequence")
    block_waste = derived("block_waste")
    # -- the fit
    reserve = derived("reserve")
    total = derived("total")
    free_memory = derived("free_memory")
    fits = derived("fits")
    kv_budget = derived("kv_budget")
    sequence_memory = derived("sequence_memory")
    max_batch_size = derived("max_batch_size", post=lambda v: v.astype(np.int64) if is_array(v) else int(v))
    fit_blocks = derived("fit_blocks", post=lambda v: v.astype(np.int64) if is_array(v) else int(v))
    max_context_length = derived("max_context_length", post=lambda v: v.astype(np.int64) if is_array(v) else int(v))
    # -- vLLM's start-up figure
    chunk_tokens = derived("chunk_tokens", post=lambda v: v.astype(np.int64) if is_array(v) else int(v))
    vllm_cache_blocks = derived("vllm_cache_blocks", post=lambda v: v.astype(np.int64) if is_array(v) else int(v))
    vllm_blocks_per_request = derived(
        "vllm_blocks_per_request", post=lambda v: v.astype(np.int64) if is_array(v) else int(v)
    )
    vllm_max_concurrency = derived("vllm_max_concurrency")
    # -- decode
    experts_touched = derived("experts_touched")
    lookup_weights = derived("lookup_weights")
    multiplied_parameters = derived("multiplied_parameters")
    expert_weights = derived("expert_weights")
    weights_read_per_step = derived("weights_read_per_step")
    bytes_read_per_step = derived("bytes_read_per_step")
    decode_memory_time = derived("decode_memory_time")
    decode_flops_per_step = derived("decode_flops_per_step")
    decode_compute_time = derived("decode_compute_time")
    decode_time_per_token = derived("decode_time_per_token")
    memory_bound = derived("memory_bound")
    tokens_per_second = derived("tokens_per_second")
    aggregate_tokens_per_second = derived("aggregate_tokens_per_second")
    # -- prefill
    prompt_tokens = derived("prompt_tokens")
    prefill_flops = derived("prefill_flops")
    prefill_time = derived("prefill_time")
    # -- serving time (kinds/inference/timing.py)
    serving_link_bandwidth = derived("serving_link_bandwidth")
    decode_allreduce_traffic = derived("decode_allreduce_traffic")
    decode_allreduce_time = derived("decode_allreduce_time")
    time_per_output_token = derived("time_per_output_token")
    prefill_allreduce_time = derived("prefill_allreduce_time")
    time_to_first_token = derived("time_to_first_token")


InferenceMemoryScenario.NOTES = notes(InferenceMemoryScenario.symbols())
