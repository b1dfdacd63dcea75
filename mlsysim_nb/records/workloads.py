"""Workloads: a model's parameter count and, for transformers, its geometry."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlsysim_nb.errors import FieldError
from mlsysim_nb.model.fields import check_count
from mlsysim_nb.render.display import RichRepr
from mlsysim_nb.units import Q_, ureg

__all__ = ["Workload", "Workloads", "check_workload", "workload_rows"]

#: A quadrillion parameters: three orders of magnitude beyond the largest models trained.
MAX_PARAMETERS = 10**15
#: Upper bounds of a transformer's shape, far beyond any published model.
_SHAPE_LIMITS = {
    "layers": 10**5,
    "hidden_dim": 2**20,
    "heads": 2**16,
    "kv_heads": 2**16,
    "context_length": 2**24,
}


@dataclass(frozen=True, kw_only=True, repr=False)
class Workload(RichRepr):
    """A model to train: its parameter count and, for a transformer, its shape.

    Parameters
    ----------
    name
        How the model is called in tables and derivations.
    parameters
        Parameter count: an int, or a dimensionless quantity (``count``/``param``).
    layers, hidden_dim, heads, context_length
        Transformer geometry the activation model reads; each optional, so a
        CNN such as ResNet-50 is a workload too.
    kv_heads
        Key/value heads under grouped-query attention (at most ``heads``, and dividing it).
        ``heads`` must divide ``hidden_dim``.
    source
        Where the numbers come from.

    >>> Workload(name="tiny", parameters=1_000_000, layers=2).parameters
    <Quantity(1000000, 'count')>
    """

    name: str
    parameters: Any
    layers: int | None = None
    hidden_dim: int | None = None
    heads: int | None = None
    kv_heads: int | None = None
    context_length: int | None = None
    source: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        owner = "Workload"
        if not isinstance(self.name, str) or not self.name:
            raise FieldError(owner, "name", f"must be a non-empty string, got {self.name!r}")
        if not isinstance(self.source, str):
            raise FieldError(owner, "source", f"must be a string, got {type(self.source).__name__} {self.source!r}")
        for name in ("parameters", *_SHAPE_LIMITS):
            if np.ndim(getattr(getattr(self, name), "magnitude", getattr(self, name))) > 0:
                msg = "must be a single number; to compare several, sweep a scenario's fields with sweep()"
                raise FieldError(owner, name, msg)
        count = check_count(owner, "parameters", self.parameters, maximum=MAX_PARAMETERS)
        object.__setattr__(self, "parameters", Q_(count, "count"))
        for name, limit in _SHAPE_LIMITS.items():
            value = check_count(owner, name, getattr(self, name), optional=True, maximum=limit)
            object.__setattr__(self, name, value)
        self._check_layout(owner)

    def _check_layout(self, owner: str) -> None:
        """Attention layouts that can exist: heads split the width evenly, key/value heads share the heads evenly."""
        heads, kv_heads, hidden = self.heads, self.kv_heads, self.hidden_dim
        if kv_heads is not None:
            if heads is None:
                raise FieldError(owner, "kv_heads", "needs heads to be given as well")
            check_count(owner, "kv_heads", kv_heads, maximum=heads)
            if heads % kv_heads:
                msg = (
                    f"must divide heads ({heads:,}) evenly, so that each key/value head serves whole query heads; "
                    f"got {kv_heads:,}"
                )
                raise FieldError(owner, "kv_heads", msg)
        if heads is not None and hidden is not None and hidden % heads:
            msg = f"must divide hidden_dim ({hidden:,}) evenly, so that every head has the same width; got {heads:,}"
            raise FieldError(owner, "heads", msg)

    def _markdown_rows(self) -> tuple[list[str], list[list[str]]]:
        fields = ("layers", "hidden_dim", "heads", "kv_heads", "context_length")
        rows = [["name", self.name], ["parameters", f"{self.parameters.magnitude:,.0f}"]]
        rows += [[k, str(getattr(self, k))] for k in fields]
        return ["field", "value"], rows

    def _repr_html_(self) -> str:
        from mlsysim_nb.render.html import workload_html

        return workload_html(self)

    def __repr__(self) -> str:
        count = self.parameters.to("count").magnitude
        shape = ", ".join(
            f"{k}={getattr(self, k)}"
            for k in ("layers", "hidden_dim", "heads", "kv_heads", "context_length")
            if getattr(self, k) is not None
        )
        return f"Workload({self.name!r}, parameters={count:.4g}" + (f", {shape})" if shape else ")")


def _w(**kwargs: Any) -> Workload:
    return Workload(**kwargs)


class Workloads:
    """The workloads the named scenarios use, with the reference's numbers.

    >>> Workloads.GPT2_XL.layers
    48
    """

    GPT2_XL = _w(
        name="GPT-2 XL (1.5B)",
        parameters=1_500_000_000,
        layers=48,
        hidden_dim=1600,
        heads=25,
        context_length=1024,
        source="Radford et al. (2019), Language Models are Unsupervised Multitask Learners, Table 2",
    )
    GPT3_175B = _w(
        name="GPT-3 (175B)",
        parameters=175_000_000_000,
        layers=96,
        hidden_dim=12288,
        heads=96,
        context_length=2048,
        source="Brown et al. (2020), Language Models are Few-Shot Learners, Table 2.1",
    )
    LLAMA3_8B = _w(
        name="Llama 3.1 8B",
        parameters=8_030_000_000,
        layers=32,
        hidden_dim=4096,
        heads=32,
        kv_heads=8,
        context_length=131072,
        source="Llama Team (2024), The Llama 3 Herd of Models, Table 3",
    )
    LLAMA2_7B = _w(
        name="Llama 2 7B",
        parameters=7_000_000_000,
        layers=32,
        hidden_dim=4096,
        heads=32,
        context_length=4096,
        source="Touvron et al. (2023), Llama 2: Open Foundation and Fine-Tuned Chat Models, Table 1",
    )
    RESNET50 = _w(
        name="ResNet-50",
        parameters=25_557_032,
        layers=50,
        source="He et al. (2016); exact count from torchvision.models.resnet50 (1000-class head)",
    )
    HYPOTHETICAL_8B = _w(
        name="Hypothetical 8B transformer",
        parameters=8_000_000_000,
        layers=32,
        hidden_dim=4096,
        source="A round-number model for adapter arithmetic; no attention heads given",
    )

    @classmethod
    def all(cls) -> dict[str, Workload]:
        """Every catalog workload by its attribute name."""
        return {k: v for k, v in vars(cls).items() if isinstance(v, Workload)}


_ = ureg  # the registry is imported so Q_ quantities share it


def check_workload(owner: str, value: Any) -> Workload:
    """``value`` if it is a :class:`Workload`, else a :class:`FieldError` naming ``owner.workload``."""
    if not isinstance(value, Workload):
        raise FieldError(owner, "workload", f"must be a Workload, got {type(value).__name__}")
    return value


def workload_rows(workload: Workload) -> list[tuple[str, str, str]]:
    """The workload's numbers as (name, meaning, value) rows of a derivation's inputs table."""
    from mlsysim_nb.model.notation import RECORD_QUANTITIES
    from mlsysim_nb.render.numbers import format_magnitude

    rows = [("workload", "model", workload.name)]
    rows.append(("workload.parameters", "model parameters", format_magnitude("", workload.parameters.magnitude)))
    for attr in ("layers", "hidden_dim", "heads", "kv_heads", "context_length"):
        value = getattr(workload, attr)
        if value is not None:
            rows.append((f"workload.{attr}", RECORD_QUANTITIES[attr].label, str(value)))
    return rows
