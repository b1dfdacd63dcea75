"""The real models' configurations the package ships, as data: ``records/data/models/<key>.json``.

Each file holds ``name``, ``source`` (where its numbers come from) and ``config``, the model's published
``config.json`` as Hugging Face hosts it. Read with :func:`configuration` or ``Workloads.configuration(key)``.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from mlsysim_nb.errors import FieldError

__all__ = ["configuration_keys", "read_configuration"]


@cache
def configuration_keys() -> tuple[str, ...]:
    """The keys of the shipped configurations (file names without ``.json``), sorted."""
    folder = resources.files("mlsysim_nb.records").joinpath("data", "models")
    return tuple(sorted(p.name.removesuffix(".json") for p in folder.iterdir() if p.name.endswith(".json")))


def read_configuration(key: str) -> dict[str, Any]:
    """The shipped file of configuration ``key`` (e.g. ``"llama-3.1-8b"``): its ``name``, ``source`` and ``config``.

    >>> read_configuration("mixtral-8x7b")["config"]["num_local_experts"]
    8
    """
    if key not in configuration_keys():
        raise FieldError(
            "Workloads.configuration", "key", f"must be one of {', '.join(configuration_keys())}, got {key!r}"
        )
    text = resources.files("mlsysim_nb.records").joinpath("data", "models", f"{key}.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data
