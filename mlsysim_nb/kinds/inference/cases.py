"""The serving kind's named cases: real models on one or several devices, and the model of the vLLM paper's figure.

Each factory builds its scenario on first use; the shipped configurations are read then, so listing the catalog
reads no model file.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from mlsysim_nb.model.cases import Factory, case

__all__ = ["CASES", "opt_13b"]

_INT4 = (4 * 128 + 16) / 128 / 8  # 4 bits and a 16-bit scale per group of 128 weights: 0.515625 B
_FP8_BLOCK = (8 + 32 / (128 * 128)) / 8  # records/data/formats.toml's fp8_e4m3_block128: 1.000244140625 B
_MXFP4 = (4 + 8 / 32) / 8  # records/data/formats.toml's mxfp4_experts: 0.53125 B


def _serve(**fields: Any) -> Any:
    """A serving scenario (the model loads when the first case is built)."""
    from mlsysim_nb.kinds.inference.model import InferenceMemoryScenario

    return InferenceMemoryScenario(**fields)


def _configured(key: str) -> Any:
    """A shipped configuration, read when the case is built."""

    def read(_catalog: Any) -> Any:
        from mlsysim_nb.records.workload_catalog import Workloads

        return Workloads.configuration(key)

    return read


@cache
def opt_13b() -> Any:
    """OPT-13B from its published shape: 40 layers of width 5120 with 40 heads, a 20480-wide MLP, 2048 positions.

    Zhang et al. (2022), "OPT: Open Pre-trained Transformer Language Models", arXiv:2205.01068, Table 1 (13B: 40
    layers, 40 heads, d_model 5120) and Sec. 2.2 (a sequence length of 2048); the MLP width (4 × 5120) and the
    vocabulary of 50272 as in its Hugging Face config.json (facebook/opt-13b). A GPT-style layer: LayerNorm,
    biases everywhere, learned positions, multi-head attention, FP16 weights; its ReLU MLP changes neither the
    weights nor the cache. The parameters are counted by the layer table (OPT keeps two more position rows).
    """
    from mlsysim_nb.layers import Architecture, parameter_count
    from mlsysim_nb.records.workloads import Workload

    arch = Architecture(hidden_dim=5120, heads=40, ffn_dim=20480, vocab_size=50272, context_length=2048)
    return Workload(
        name="OPT-13B",
        parameters=parameter_count(arch, 40),
        layers=40,
        hidden_dim=5120,
        heads=40,
        context_length=2048,
        ffn_dim=20480,
        vocab_size=50272,
        positions="learned",
        source="Zhang et al. (2022), OPT, arXiv:2205.01068, Table 1 and Sec. 2.2; facebook/opt-13b config.json",
    )


def _cases() -> dict[str, Factory]:
    llama8, llama70, mixtral = (_configured(k) for k in ("llama-3.1-8b", "llama-3.1-70b", "mixtral-8x7b"))
    return {
        "Llama3_1_8BServeOnL4": case(
            _serve, "Llama 3.1 8B served in 16-bit on one L4",
            "16-bit weights (16.1 GB) on a 24 GiB L4: beside vLLM's 10 % reserve, room for 13 sequences of 4,096 "
            "tokens at 128 KiB per token; 8 are served.",
            workload=llama8, hardware="L4", batch_size=8, context_length=4096,
        ),
        "Llama3_1_8BServeOnH100": case(
            _serve, "Llama 3.1 8B served in 16-bit on one H100",
            "16-bit weights and cache, 32 sequences of 4,096 tokens on one H100: each decoding step reads 15.0 of "
            "the 16.1 GB of weights (all but the token embeddings, a lookup table) and the batch's 17.2 GB of cache.",
            workload=llama8, hardware="H100", batch_size=32, context_length=4096,
        ),
        "Llama3_1_8BLongContextOnH100": case(
            _serve, "Llama 3.1 8B at its full 131,072-token context on one H100, 8-bit cache",
            "One sequence at Llama 3.1's whole context window, with an 8-bit key/value cache (64 KiB per token, "
            "8 GiB for the sequence).",
            workload=llama8, hardware="H100", batch_size=1, context_length=131072, kv_bytes_per_value=1,
        ),
        "Llama3_1_70BServeOn2H100": case(
            _serve, "Llama 3.1 70B served in 16-bit on 2 H100",
            "141 GB of 16-bit weights split over t = 2 (70.6 GB each): little is left for the cache, 8 sequences of "
            "4,096 tokens.",
            workload=llama70, hardware="H100", tensor_parallel=2, batch_size=8, context_length=4096,
        ),
        "Llama3_1_70BServeOn8H100": case(
            _serve, "Llama 3.1 70B served in 16-bit on 8 H100",
            "Tensor parallelism over one 8-GPU node: each device holds one of the 8 key/value heads of every layer "
            "and 1/8 of the weights; 64 sequences of 8,192 tokens.",
            workload=llama70, hardware="H100", tensor_parallel=8, batch_size=64, context_length=8192,
        ),
        "Llama3_1_70BInt4ServeOnH100": case(
            _serve, "Llama 3.1 70B served in 4-bit on one H100",
            "4-bit weights with a 16-bit scale per group of 128 (4.125 bits, 36.4 GB) fit one H100, with a 16-bit "
            "cache for 16 sequences of 4,096 tokens.",
            workload=llama70, hardware="H100", weight_bytes_per_parameter=_INT4, batch_size=16, context_length=4096,
        ),
        "Llama3_1_70BInt4ServeOn2H100": case(
            _serve, "Llama 3.1 70B served in 4-bit on 2 H100",
            "4-bit weights (4.125 bits with the group scales) split over t = 2, 32 sequences of 8,192 tokens.",
            workload=llama70, hardware="H100", weight_bytes_per_parameter=_INT4, tensor_parallel=2, batch_size=32,
            context_length=8192,
        ),
        "Llama3_1_70BInt4ServeOn8H100": case(
            _serve, "Llama 3.1 70B served in 4-bit on 8 H100",
            "The eight-GPU server of the 16-bit case with 4-bit weights (4.125 bits with the group scales): 4.5 GB of "
            "weights per device, so almost all of each device is cache; 64 sequences of 8,192 tokens.",
            workload=llama70, hardware="H100", weight_bytes_per_parameter=_INT4, tensor_parallel=8, batch_size=64,
            context_length=8192,
        ),
        "Mixtral8x7BServeOn2H100": case(
            _serve, "Mixtral 8x7B served in 16-bit on 2 H100",
            "All 8 experts of every layer resident (46.7 billion parameters, 93.4 GB, split over t = 2); a decode "
            "step of 16 sequences reads the distinct experts its tokens are routed to (uniform top-2 routing "
            "assumed).",
            workload=mixtral, hardware="H100", tensor_parallel=2, batch_size=16, context_length=4096,
        ),
        "DeepSeekV3ServeOn8H200FP8": case(
            _serve, "DeepSeek-V3 served in FP8 on one node of 8 H200",
            "671 billion parameters in the checkpoint's FP8 (E4M3 with an FP32 scale per 128 x 128 block; the "
            "embeddings, output layer, norms and routers in BF16): 85.1 GB of weights per device at t = 8. Latent "
            "attention caches 70,272 B per token (61 layers x 576 values in BF16), whole on every device: 16 "
            "sequences of 32,768 tokens take 36.8 GB; at most 22 fit.",
            workload=_configured("deepseek-v3"), hardware="H200", tensor_parallel=8, batch_size=16,
            context_length=32768, weight_format="fp8_e4m3_block128", weight_bytes_per_parameter=_FP8_BLOCK,
        ),
        "GptOss120BServeOnH100": case(
            _serve, "gpt-oss 120B served in MXFP4 on one H100",
            "The experts in MXFP4 (4.25 bits), the attention, router, embeddings and output layer in BF16: 65.2 GB "
            "of weights on one 80 GiB H100. Half the layers attend to a 128-token window: 8 sequences of 8,192 "
            "tokens keep 2.45 GB of cache.",
            workload=_configured("gpt-oss-120b"), hardware="H100", batch_size=8, context_length=8192,
            weight_format="mxfp4_experts", weight_bytes_per_parameter=_MXFP4,
        ),
        "Bamba9BAt128KOnH100": case(
            _serve, "Bamba 9B, a Mamba-2 hybrid, at 131,072 tokens on one H100",
            "Attention in 3 of 32 layers: 3 sequences of 131,072 tokens keep 4.83 GB of keys and values and 0.19 GB "
            "of Mamba-2 states (62.8 MB a sequence, constant in the context); up to 34 such sequences fit. Llama "
            "3.1 8B at the same context (Llama3_1_8BAt128KOnH100) keeps 17.2 GB per sequence: at most 3 fit.",
            workload=_configured("bamba-9b"), hardware="H100", batch_size=3, context_length=131072,
        ),
        "Llama3_1_8BAt128KOnH100": case(
            _serve, "Llama 3.1 8B at 131,072 tokens on one H100, beside the hybrid",
            "A transformer of about Bamba 9B's size at the same context: attention in all 32 layers keeps 17.2 GB "
            "per sequence (128 KiB per token), so 3 sequences (51.5 GB of cache) are all that fit.",
            workload=llama8, hardware="H100", batch_size=3, context_length=131072,
        ),
        "Opt13BPagedAttentionOnA100": case(
            _serve, "OPT-13B in FP16 on one A100 40GB, the vLLM paper's model",
            "Kwon et al. (2023)'s example: 800 KB of cache per token (2 × 5120 × 40 × 2 B = 819,200 B = 800 KiB), "
            "1,600 MiB (1.68 GB) for a sequence of 2,048 tokens; 4 such sequences beside 25.7 GB of weights.",
            workload=lambda _catalog: opt_13b(), hardware="A100_40GB", batch_size=4, context_length=2048,
        ),
    }  # fmt: skip


#: Named serving cases, as factories taking the catalog.
CASES: dict[str, Factory] = _cases()
