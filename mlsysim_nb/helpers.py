"""The helper functions of the reference implementation (mlsysim), over the activation and training equations.

Each evaluates the same :class:`~mlsysim_nb.formula.Formula` records the
scenarios use (so the equations are never retyped) and returns a pint
quantity, or a plain number for counts and ratios. Their docstrings show the
equations in the notation of the scenario class whose equations they evaluate.
"""

from __future__ import annotations

from typing import Any

from mlsysim_nb.kinds.activation.model import ActivationMemoryScenario
from mlsysim_nb.kinds.activation.table import paper_coefficients
from mlsysim_nb.kinds.training.model import TrainingStateFitScenario
from mlsysim_nb.model.equations import with_equations
from mlsysim_nb.model.fields import check_count, check_number
from mlsysim_nb.physics import STRATEGIES

__all__ = [
    "calc_activation_memory",
    "calc_checkpoint_memory_units",
    "calc_low_rank_update_params",
    "calc_transformer_decode_flops",
    "calc_transformer_training_flops",
]


@with_equations(
    "activations_none",
    "activations_selective",
    "activations_full",
    "per_token_bytes_coefficient",
    "score_bytes_coefficient",
    source=ActivationMemoryScenario,
)
def calc_activation_memory(  # noqa: PLR0917 - the reference's helper takes these positionally
    n_layers: int,
    seq_len: int,
    batch_size: int,
    hidden_dim: int,
    n_heads: int | None = None,
    precision_bytes: float = 2,
    strategy: str = "selective",
) -> Any:
    """Saved activations of a transformer in training (Korthikanti et al. 2022).

    ``none`` keeps every tensor, attention scores included; ``selective``
    recomputes the scores; ``full`` keeps only each layer's input. The paper's
    coefficients are for 2-byte values; ``precision_bytes`` rescales them.

    >>> calc_activation_memory(48, 1024, 32, 1600, 25, 2, "full")
    <Quantity(5033164800, 'byte')>

    Raises
    ------
    ValueError
        For an unknown ``strategy`` (naming the valid ones), a non-positive
        size, or ``strategy="none"`` without ``n_heads``.
    """
    from mlsysim_nb.units import Q_

    if strategy not in STRATEGIES:
        msg = f"unknown activation strategy {strategy!r}; valid strategies are {', '.join(map(repr, STRATEGIES))}"
        raise ValueError(msg)
    for name, value in [
        ("n_layers", n_layers),
        ("seq_len", seq_len),
        ("batch_size", batch_size),
        ("hidden_dim", hidden_dim),
        ("precision_bytes", precision_bytes),
    ]:
        check_number("calc_activation_memory", name, value)
    if strategy == "none" and n_heads is None:
        msg = "strategy 'none' stores the attention scores, so it needs n_heads"
        raise ValueError(msg)
    check_number("calc_activation_memory", "n_heads", n_heads, optional=True)
    inputs = {
        "layers": n_layers,
        "sequence": seq_len,
        "micro_batch": batch_size,
        "hidden_dim": hidden_dim,
        "heads": n_heads,
        "precision_bytes": precision_bytes,
        "ffn_multiple": 4,  # Korthikanti's 4h MLP: the helper, like the reference's, takes no FFN width
        **paper_coefficients(4),
    }
    return Q_(ActivationMemoryScenario.EQUATIONS.evaluate(f"activations_{strategy}", inputs), "byte")


@with_equations("checkpoint_memory_units", source=ActivationMemoryScenario)
def calc_checkpoint_memory_units(n_layers: int, checkpoints: int) -> float:
    """Activation memory of ``k`` evenly spaced checkpoints over ``L`` layers, in layer units.

    The forward pass keeps ``k`` checkpoint inputs; the backward pass rebuilds
    one segment of ``L/k`` layers at a time. The minimum is near ``k = √L``.

    >>> calc_checkpoint_memory_units(48, 4)
    16.0
    """
    check_number("calc_checkpoint_memory_units", "n_layers", n_layers)
    check_number("calc_checkpoint_memory_units", "checkpoints", checkpoints)
    return float(
        ActivationMemoryScenario.EQUATIONS.evaluate(
            "checkpoint_memory_units", {"layers": n_layers, "checkpoints": checkpoints}
        )
    )


@with_equations("training_flops", "checkpointed_training_flops", source=ActivationMemoryScenario)
def calc_transformer_training_flops(n_params: float, n_tokens: float, activation_checkpointing: bool = False) -> Any:
    """Training FLOPs of a dense transformer, with or without recomputing the forward pass (Kaplan et al. 2020).

    >>> calc_transformer_training_flops(1.5e9, 1)
    <Quantity(9e+09, 'FLOP')>
    """
    from mlsysim_nb.units import Q_

    check_number("calc_transformer_training_flops", "n_params", n_params)
    check_number("calc_transformer_training_flops", "n_tokens", n_tokens)
    name = "checkpointed_training_flops" if activation_checkpointing else "training_flops"
    return Q_(
        ActivationMemoryScenario.EQUATIONS.evaluate(
            name, {"parameters": float(n_params), "tokens": n_tokens, "segments_given": False}
        ),
        "FLOP",
    )


@with_equations("decode_flops", source=ActivationMemoryScenario)
def calc_transformer_decode_flops(n_params: float, n_tokens: float = 1) -> Any:
    """Forward-pass FLOPs per token (attention over the context is left out).

    >>> calc_transformer_decode_flops(1.5e9)
    <Quantity(3e+09, 'FLOP')>
    """
    from mlsysim_nb.units import Q_

    check_number("calc_transformer_decode_flops", "n_params", n_params)
    check_number("calc_transformer_decode_flops", "n_tokens", n_tokens)
    return Q_(
        ActivationMemoryScenario.EQUATIONS.evaluate(
            "decode_flops", {"parameters": float(n_params), "tokens": n_tokens}
        ),
        "FLOP",
    )


@with_equations("low_rank_update_params", source=TrainingStateFitScenario)
def calc_low_rank_update_params(in_dim: int, out_dim: int, rank: int) -> int:
    """Trainable parameters of one rank-``r`` update of a ``d_in × d_out`` matrix (Hu et al. 2021).

    >>> calc_low_rank_update_params(4096, 4096, 16)
    131072
    """
    for name, value in [("in_dim", in_dim), ("out_dim", out_dim), ("rank", rank)]:
        check_count("calc_low_rank_update_params", name, value)
    inputs = {"adapter_rank": rank, "adapter_in_dim": in_dim, "adapter_out_dim": out_dim}
    return int(TrainingStateFitScenario.EQUATIONS.evaluate("low_rank_update_params", inputs))
