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
Splitting the layer over devices and its saved tensors in training are not described yet: ``t > 1`` and the
training kinds refuse it by name.
"""

from __future__ import annotations

from mlsysim_nb.errors import FieldError
from mlsysim_nb.layers.architecture import Architecture
from mlsysim_nb.layers.mixers import Mixer
from mlsysim_nb.layers.rows import Cached, Saved, Weight

__all__ = ["MIXER", "Mamba2"]

_OWN = ("H_ssm", "P_ssm", "N_ssm", "G_ssm", "K_conv")


class Mamba2(Mixer):
    """A Mamba-2 mixer, as transformers' hybrids build it (a convolution bias, no projection biases)."""

    name = "mamba2"
    label = "Mamba-2 state-space layer"

    def check(self, arch: Architecture) -> None:
        """Its own sizes, each at least 1."""
        for symbol in _OWN:
            if arch.shape(symbol) < 1:
                raise FieldError("Architecture", "mixer_shapes", f"must give {symbol} at least 1")

    def symbols(self, arch: Architecture) -> dict[str, int]:
        """Its five sizes, and ``d_ssm = H·P``, ``c_ssm = d_ssm + 2·G·N``, ``p_ssm = d_ssm + c_ssm + H``."""
        own = {symbol: arch.shape(symbol) for symbol in _OWN}
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

    def saved(self, arch: Architecture, implementation: str, attention: str, device: str) -> tuple[Saved, ...]:
        """Not described yet: refused by name, never a number for another layer."""
        msg = "holds a Mamba-2 layer, whose saved tensors in training are not described yet"
        raise FieldError("Architecture", "pattern", msg)

    def cache(self, arch: Architecture) -> tuple[Cached, ...]:
        """The convolution state and the SSM state of each sequence (no token axis)."""
        return (
            Cached("conv_state", "convolution state", ("c_ssm", "K_conv"), per_token=False),
            Cached("ssm_state", "SSM state", ("H_ssm", "P_ssm", "N_ssm"), per_token=False),
        )

    def refusal(self, arch: Architecture, tensor_parallel: int, engine: str) -> tuple[str, str] | None:
        """Only one device: splitting a Mamba-2 layer is not described yet."""
        if tensor_parallel != 1:
            return "must be 1 for a model with Mamba-2 layers", "their split over devices is not described yet"
        return None


MIXER = Mamba2()
