"""A Mamba-2 state-space layer (Dao and Gu 2024): its weights, and its state per sequence, constant in the context.

The layer projects ``h`` to ``d_ssm + c_ssm + H_ssm`` values (``in_proj``: the gate ``z``, the convolution's
input ``x, B, C`` and the step sizes), runs a causal depthwise convolution of ``K_conv`` taps over the
``c_ssm = d_ssm + 2·G_ssm·N_ssm`` channels, the selective scan over ``H_ssm`` heads of ``P_ssm`` values with a
state of ``N_ssm`` per value, a gated RMSNorm over ``d_ssm = H_ssm·P_ssm`` and ``out_proj`` back to ``h``:
transformers' ``BambaMixer`` (and ``NemotronHMamba2Mixer``, ``FalconH1Mixer``).

Symbols of its own (``Architecture.mixer_shapes``): ``H_ssm`` heads, ``P_ssm`` head width, ``N_ssm`` state size,
``G_ssm`` groups of B and C, ``K_conv`` convolution taps; ``d_ssm``, ``c_ssm`` and ``p_ssm`` (the projection's
width) follow from them.

What a serving engine keeps per sequence, whatever its length: the convolution's last inputs, ``c_ssm × K_conv``
values (transformers keeps ``K_conv`` columns; vLLM's Mamba cache ``K_conv - 1``), and the SSM state,
``H_ssm × P_ssm × N_ssm`` values, in the cache's width. A hybrid's cache grows only in its attention layers.
In training (:meth:`Mamba2.saved`) two accountings: what the fused kernel of mamba_ssm and Megatron-LM keeps, and
what transformers' PyTorch path keeps (measured), which reads the scan's chunk size ``Q_ssm`` too. Over ``t``
devices both engines split the heads and the groups (:meth:`Mamba2.refusal` cites their asserts).
"""

from __future__ import annotations

from typing import Any

from mlsysim_nb.errors import FieldError
from mlsysim_nb.layers.architecture import Architecture
from mlsysim_nb.layers.mixers import ENGINES, Mixer
from mlsysim_nb.layers.rows import Cached, Saved, Weight

__all__ = ["MIXER", "Mamba2"]

_OWN = ("H_ssm", "P_ssm", "N_ssm", "G_ssm", "K_conv")
#: The chunk size of the chunked (SSD) scan: only the saved tensors of transformers' PyTorch path read it.
_CHUNK = "Q_ssm"
_T = ("s", "b")
_H = ("s", "b", "h")
_BLOCK = "state space"


class Mamba2(Mixer):
    """A Mamba-2 mixer, as transformers' hybrids build it (a convolution bias, no projection biases)."""

    name = "mamba2"
    label = "Mamba-2 state-space layer"

    def check(self, arch: Architecture) -> None:
        """Its own sizes, each at least 1."""
        for symbol in (*_OWN, *((_CHUNK,) if _CHUNK in dict(arch.mixer_shapes) else ())):
            if arch.shape(symbol) < 1:
                raise FieldError("Architecture", "mixer_shapes", f"must give {symbol} at least 1")

    def symbols(self, arch: Architecture) -> dict[str, int]:
        """Its five sizes, and ``d_ssm = H·P``, ``c_ssm = d_ssm + 2·G·N``, ``p_ssm = d_ssm + c_ssm + H``."""
        own = {symbol: arch.shape(symbol) for symbol in _OWN} | ({_CHUNK: arch.shape(_CHUNK)} if _CHUNK in dict(
            arch.mixer_shapes) else {})  # fmt: skip
        inner = own["H_ssm"] * own["P_ssm"]
        conv = inner + 2 * own["G_ssm"] * own["N_ssm"]
        return own | {"d_ssm": inner, "c_ssm": conv, "p_ssm": inner + conv + own["H_ssm"]}

    def weights(self, arch: Architecture) -> tuple[Weight, ...]:
        """The input projection, the convolution and its bias, the per-head dt bias, A and D, the norm, the output."""
        return (
            Weight("ssm_in", "input projection (z, x, B, C, dt)", "state space", ("h", "p_ssm")),
            Weight("ssm_conv", "convolution taps", "state space", ("c_ssm", "K_conv")),
            Weight("ssm_conv_bias", "convolution bias", "state space", ("c_ssm",)),
            Weight("ssm_heads", "dt bias, A (log) and D per head", "state space", ("H_ssm",), count=3),
            Weight("norm_ssm", "gated RMSNorm scale", "state space", ("d_ssm",)),
            Weight("ssm_out", "output projection", "state space", ("d_ssm", "h")),
        )

    def run_symbols(self, arch: Architecture, seq_len: Any) -> dict[str, Any]:
        """The sizes that follow ``seq_len``: the scan's chunks and the convolution's padded output.

        ``n_chunk`` chunks of ``Q_ssm``, ``s_pad`` = n·Q tokens, ``n_chunk1`` = n + 1 chunk states, and
        ``s_conv`` = s + K - 1 (without a chunk size, that last only).
        """
        conv = {"s_conv": seq_len + arch.shape("K_conv") - 1}
        if _CHUNK not in dict(arch.mixer_shapes):
            return conv
        chunk = arch.shape(_CHUNK)
        chunks = -(-seq_len // chunk)  # ceil, for a whole number or an array of them
        return conv | {"n_chunk": chunks, "n_chunk1": chunks + 1, "s_pad": chunks * chunk}

    def saved(self, arch: Architecture, implementation: str, attention: str, device: str) -> tuple[Saved, ...]:
        """The block's rows, from the input projection's input to the output projection's input, in forward order.

        ``"megatron"``: what the fused kernel keeps (:func:`_fused`); ``"transformers"``: transformers' PyTorch path
        (:func:`_torch_path`), which needs the scan's chunk size ``Q_ssm``. ``attention`` does not change them.
        """
        if implementation == "megatron":
            return _fused()
        if _CHUNK not in dict(arch.mixer_shapes):
            msg = "must give Q_ssm, the chunk size of the Mamba-2 scan, for transformers' saved tensors in training"
            raise FieldError("Architecture", "mixer_shapes", msg)
        return _torch_path()

    def cache(self, arch: Architecture) -> tuple[Cached, ...]:
        """The convolution state and the SSM state of each sequence (no token axis)."""
        return (
            Cached("conv_state", "convolution state", ("c_ssm", "K_conv"), per_token=False),
            Cached("ssm_state", "SSM state", ("H_ssm", "P_ssm", "N_ssm"), per_token=False),
        )

    def per_device(self, arch: Architecture, tensor_parallel: Any, engine: str) -> dict[str, Any]:
        """Heads and groups over ``t`` (both engines split them; :meth:`refusal` keeps t dividing both).

        The widths follow: ``d_ssm = H/t·P``, ``c_ssm = d_ssm + 2·G/t·N``, ``p_ssm = d_ssm + c_ssm + H/t``.
        """
        own = self.symbols(arch)
        heads, groups = own["H_ssm"] / tensor_parallel, own["G_ssm"] / tensor_parallel
        inner = heads * own["P_ssm"]
        conv = inner + 2 * groups * own["N_ssm"]
        return {"H_ssm": heads, "G_ssm": groups, "d_ssm": inner, "c_ssm": conv, "p_ssm": inner + conv + heads}

    def refusal(self, arch: Architecture, tensor_parallel: int, engine: str) -> tuple[str, str] | None:
        """Each engine's rule, as its code asserts it: t divides the heads and the groups of B and C.

        Megatron-LM (megatron/core/ssm/mamba_mixer.py, ``MambaMixer.__init__``): ``nheads % tp_size == 0`` and
        ``ngroups % tp_size == 0``, each device a whole head and a whole group. vLLM (vllm/model_executor/layers/
        mamba/mamba_mixer2.py, ``MambaMixer2.__init__``): ``num_heads % tp_size == 0``, and t divides the groups
        or there is one group, which every device then holds a copy of (``extra_groups_for_head_shards``); that
        copy's weights and state are not described here, so one group over several devices is refused too.
        """
        own, t, name = self.symbols(arch), tensor_parallel, ENGINES[engine]
        if own["H_ssm"] % t:
            rule = f"must divide the Mamba-2 layers' {own['H_ssm']} heads"
            return rule, f"each device holds whole heads, as {name} splits them"
        if own["G_ssm"] % t:
            if engine == "vllm" and own["G_ssm"] == 1:
                why = ("vLLM copies the one group's B and C to every device; the table does not describe that copy's "
                       "weights and state yet")  # fmt: skip
                return "must be 1 for Mamba-2 layers with one group of B and C", why
            return f"must divide the Mamba-2 layers' {own['G_ssm']} group(s) of B and C", f"{name} splits whole groups"
        return None


def _fused() -> tuple[Saved, ...]:
    """What the fused Mamba-2 kernel keeps, Megatron-LM's and mamba_ssm's ``use_mem_eff_path`` (the paper's style).

    ``mamba_split_conv1d_scan_combined`` (mamba_ssm/ops/triton/ssd_combined.py, ``MambaSplitConv1dScanCombinedFn``)
    calls ``ctx.save_for_backward(zxbcdt, conv1d_weight, conv1d_bias, out_x, A, D, dt_bias, initial_states, seq_idx,
    rmsnorm_weight, rstd, outproj_weight, outproj_bias)``: of activations, the input projection's output, the scan's
    output before the gated norm and the norm's FP32 1/rms per token and group. Its backward recomputes the
    convolution, the norm and the output projection's input; the input projection (an ``nn.Linear`` outside the
    kernel) keeps its input. Stated from the code, not measured (the kernel needs a GPU).
    """
    return (
        Saved("ssm_input", "input projection input", _BLOCK, _H, split="sp"),
        Saved("ssm_zxbcdt", "input projection output (z, x, B, C, dt)", _BLOCK, (*_T, "p_ssm")),
        Saved("ssm_scan_output", "scan output before the gated norm", _BLOCK, (*_T, "d_ssm")),
        Saved("ssm_norm_rstd", "gated norm 1/rms per group (FP32)", _BLOCK, (*_T, "G_ssm"), width="fp32"),
    )


_F32 = "the scan runs in FP32 whatever the activation dtype (hidden_states.float(), B.float(), C.float())"
_COPY = "einsum copies its operand into the batched matmul's layout, and the matmul keeps the copy"
_CAST = "in FP32 the cast is a no-op: the view keeps the SiLU output's whole storage (x, B and C) alive"


def _scan32(key: str, label: str, shape: tuple[str, ...], count: int = 1) -> Saved:
    """A row of the scan's FP32 intermediates."""
    return Saved(key, label, _BLOCK, shape, count=count, width="fp32", note=_F32)


def _torch_path() -> tuple[Saved, ...]:
    """What transformers' PyTorch path keeps (``BambaMixer``, ``NemotronHMamba2Mixer``: ``mamba2_chunk_scan``).

    Read from transformers 5.x's modeling_bamba.py and measured (tests/measure/test_mamba2_training.py): the
    projection's output, the convolution's output at its padded length s + K - 1, the step sizes, and the chunked
    scan's intermediates in FP32 over the sequence padded to whole chunks (``s_pad``): B and C repeated to every
    head, the chunk-local Q × Q decay and score matrices, the chunk states, then the gated RMSNorm in FP32.
    """
    pad, chunks = ("b", "s_pad", "H_ssm"), ("b", "n_chunk", "Q_ssm", "Q_ssm", "H_ssm")
    return (
        Saved("ssm_input", "input projection input (the norm's output)", _BLOCK, _H, split="sp"),
        Saved("ssm_zxbcdt", "input projection output (z, x, B, C, dt: one storage)", _BLOCK, (*_T, "p_ssm"),
              note="the convolution keeps a view of its x, B, C part, which keeps the whole projection alive"),
        Saved("ssm_conv_output", "convolution output at s + K - 1 (SiLU input)", _BLOCK, ("b", "c_ssm", "s_conv"),
              note="the causal convolution pads K - 1 on each side and is cut to s: SiLU's input views it all"),
        Saved("ssm_silu_output", "SiLU output (x, B, C; FP32 runs only)", _BLOCK, (*_T, "c_ssm"), width="fp32",
              wide_only=True, note=_CAST),
        Saved("ssm_x_fp32", "x in FP32", _BLOCK, (*_T, "d_ssm"), width="fp32", narrow_only=True, note=_F32),
        Saved("ssm_dt", "dt + bias, softplus output (softplus and clamp inputs)", _BLOCK, (*_T, "H_ssm"), count=2),
        Saved("ssm_dt_fp32", "dt in FP32", _BLOCK, (*_T, "H_ssm"), width="fp32"),
        Saved("ssm_dt_fp32_copy", "dt in FP32, a second copy", _BLOCK, (*_T, "H_ssm"), width="fp32",
              narrow_only=True, note="dt[..., None].float() and dt.float() are two copies where dt is narrower"),
        Saved("ssm_A", "A = -exp(A_log) and its copy (FP32)", _BLOCK, ("H_ssm",), count=2, width="fp32"),
        _scan32("ssm_x_padded", "x padded to whole chunks (D's skip term)", (*pad, "P_ssm")),
        Saved("ssm_masks", "causal masks of a chunk and of the chunks", _BLOCK, ("Q_ssm", "Q_ssm"), count=2,
              width="bool", split="none"),
        Saved("ssm_chunk_masks", "causal masks of the chunk states", _BLOCK, ("n_chunk1", "n_chunk1"), count=2,
              width="bool", split="none"),
        _scan32("ssm_decay", "L = exp(segment sums): Q × Q decays per chunk and head", chunks),
        _scan32("ssm_scores", "C·Bᵀ and its product with L (G and M)", chunks, count=2),
        Saved("ssm_BC", "B and C repeated to every head, padded: B, B·decay and C, and copies", _BLOCK, (*pad, "N_ssm"),
              count=5, width="fp32", note=_COPY),
        Saved("ssm_xdt", "x·dt, padded (two layouts)", _BLOCK, (*pad, "P_ssm"), count=2, width="fp32", note=_COPY),
        _scan32("ssm_decay_states", "exp(A cumulative sums): decays into and out of the chunk states",
                ("b", "H_ssm", "s_pad"), count=2),
        _scan32("ssm_chunk_decay", "decay between chunks", ("b", "H_ssm", "n_chunk1", "n_chunk1")),
        _scan32("ssm_states", "chunk states with the initial one", ("b", "n_chunk1", "H_ssm", "P_ssm", "N_ssm")),
        Saved("ssm_states_copy", "chunk states (a copy for C·states)", _BLOCK, ("b", "n_chunk", "H_ssm", "P_ssm",
              "N_ssm"), width="fp32", note=_COPY),
        _scan32("ssm_c_states", "C·states (off-diagonal output)", (*pad, "P_ssm")),
        _scan32("ssm_scan_output", "scan output, padded (gated norm input)", (*pad, "P_ssm")),
        Saved("ssm_gate_fp32", "gate z in FP32 (SiLU input)", _BLOCK, (*_T, "d_ssm"), width="fp32", narrow_only=True,
              note="the gated norm upcasts z; in FP32 it is a view of the projection's output"),
        Saved("ssm_norm", "SiLU(z), y·SiLU(z) and the normalized product (FP32)", _BLOCK, (*_T, "d_ssm"), count=3,
              width="fp32", note="the gated RMSNorm computes in FP32"),
        Saved("ssm_norm_rstd", "gated norm 1/rms per group (FP32)", _BLOCK, (*_T, "G_ssm"), width="fp32"),
        Saved("ssm_out_input", "output projection input", _BLOCK, (*_T, "d_ssm")),
    )  # fmt: skip


MIXER = Mamba2()
