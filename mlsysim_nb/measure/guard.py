"""The size guard of the measurement lab: predict a run's memory with the model, refuse it above a limit.

A configuration is checked before PyTorch allocates anything, so that one the
model itself predicts at hundreds of gigabytes is refused at once, naming its
size and the limit, instead of running until the operating system refuses.
"""

from __future__ import annotations

from typing import Any

from mlsysim_nb.errors import MemoryLimitError
from mlsysim_nb.model.fields import check_quantity
from mlsysim_nb.render.numbers import format_bytes

__all__ = ["DEFAULT_MEMORY_LIMIT", "MAX_SIZES", "check_memory_limit", "refuse_above_limit"]

#: The most memory a measurement may take by the model's prediction, unless ``memory_limit=`` raises it.
#: 4 GiB runs every configuration of the course many times over and fits a student's laptop.
DEFAULT_MEMORY_LIMIT = "4 GiB"

#: The largest size of each dimension the model itself accepts (the activation model's field ranges).
MAX_SIZES = {"seq_len": 2**24, "micro_batch": 2**20, "hidden": 2**20, "heads": 2**16, "layers": 10**5}


def check_memory_limit(owner: str, value: Any) -> float:
    """``memory_limit`` in bytes: an amount of memory (``"16 GiB"``, ``Q_(16, "GiB")`` or bytes), 1 MiB to 10 PB."""
    _, limit = check_quantity(owner, "memory_limit", value, "byte", minimum=2**20, maximum=1e16,
                              rule="from 1 MiB to 10 PB")  # fmt: skip
    return float(limit)


def refuse_above_limit(
    owner: str, parts: dict[str, float], limit: float, given: Any, *, basis: str = "by the model's own prediction"
) -> None:
    """A :class:`MemoryLimitError` when the predicted ``parts`` (bytes, by what they hold) sum above ``limit``.

    ``basis`` says where the figure comes from, in the message.
    """
    total = sum(parts.values())
    if total <= limit:
        return
    shown = ", ".join(f"{name} {format_bytes(value)}" for name, value in parts.items())
    reason = (
        f"this configuration needs about {format_bytes(total, binary=True)} {basis} "
        f"({shown}), more than the limit of {format_bytes(limit, binary=True)}; give a smaller configuration, "
        f"or raise the limit with memory_limit= (now {given!s}) if the machine has the memory"
    )
    raise MemoryLimitError(owner, "memory_limit", reason)
