"""The real models' configurations the package ships, as data: ``records/data/models/<key>.json``.

Each file holds ``name``, ``source`` (where its numbers come from: the ``config.json`` address on the Hugging Face
hub) and ``config``, the model's published ``config.json`` as Hugging Face hosts it. Read with
:func:`read_configuration` or ``Workloads.configuration(key)``.

A configuration whose layers some kind does not describe yet would wait in ``records/data/models/pending/``, in
the same shape: :func:`pending_keys` lists it and ``Workloads.configuration(key)`` reads it, but
``Workloads.configurations()`` (which every kind's tests and controls go through) leaves it out until every kind
describes its layers. A file moves up one folder then, as every 2025 family's has (DeepSeek-V3, Qwen3, Gemma 3,
gpt-oss, and the Mamba-2 hybrids Bamba 9B and Nemotron-H 8B): none waits today.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

from mlsysim_nb.errors import FieldError

__all__ = ["configuration_keys", "pending_keys", "read_configuration"]


def _folder(*parts: str) -> Traversable:
    return resources.files("mlsysim_nb.records").joinpath("data", "models", *parts)


def _keys(folder: Traversable) -> tuple[str, ...]:
    if not folder.is_dir():  # git keeps no empty folder: no configuration waits
        return ()
    return tuple(sorted(p.name.removesuffix(".json") for p in folder.iterdir() if p.name.endswith(".json")))


@cache
def configuration_keys() -> tuple[str, ...]:
    """The keys of the shipped configurations ``from_hf_config`` reads (file names without ``.json``), sorted."""
    return _keys(_folder())


@cache
def pending_keys() -> tuple[str, ...]:
    """The keys of the shipped configurations not yet in every kind's catalog (the 2025 families), sorted.

    >>> pending_keys()
    ()
    """
    return _keys(_folder("pending"))


def read_configuration(key: str) -> dict[str, Any]:
    """The shipped file of configuration ``key`` (e.g. ``"llama-3.1-8b"``): its ``name``, ``source`` and ``config``.

    >>> read_configuration("mixtral-8x7b")["config"]["num_local_experts"]
    8
    >>> read_configuration("deepseek-v3")["config"]["kv_lora_rank"]
    512
    """
    if key in configuration_keys():
        path = _folder(f"{key}.json")
    elif key in pending_keys():
        path = _folder("pending", f"{key}.json")
    else:
        known = ", ".join((*configuration_keys(), *pending_keys()))
        raise FieldError("Workloads.configuration", "key", f"must be one of {known}, got {key!r}")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data
