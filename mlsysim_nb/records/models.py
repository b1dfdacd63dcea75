"""The real models' configurations the package ships, as data: ``records/data/models/<key>.json``.

Each file holds ``name``, ``source`` (where its numbers come from) and ``config``, the model's published
``config.json`` as Hugging Face hosts it. Read with :func:`configuration` or ``Workloads.configuration(key)``.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING

from mlsysim_nb.errors import FieldError

if TYPE_CHECKING:
    from mlsysim_nb.records.workloads import Workload

__all__ = ["configuration", "configuration_keys"]


@cache
def configuration_keys() -> tuple[str, ...]:
    """The keys of the shipped configurations (file names without ``.json``), sorted."""
    folder = resources.files("mlsysim_nb.records").joinpath("data", "models")
    return tuple(sorted(p.name.removesuffix(".json") for p in folder.iterdir() if p.name.endswith(".json")))


@cache
def configuration(key: str) -> Workload:
    """The workload of the shipped configuration ``key`` (e.g. ``"llama-3.1-8b"``), exact parameters included.

    >>> configuration("mixtral-8x7b").active_parameters
    <Quantity(12879925248, 'count')>
    """
    from mlsysim_nb.records.workloads import Workload

    if key not in configuration_keys():
        raise FieldError(
            "Workloads.configuration", "key", f"must be one of {', '.join(configuration_keys())}, got {key!r}"
        )
    text = resources.files("mlsysim_nb.records").joinpath("data", "models", f"{key}.json").read_text(encoding="utf-8")
    data = json.loads(text)
    return Workload.from_hf_config(data["config"], name=data["name"], source=data["source"])
