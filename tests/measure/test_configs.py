"""Every shipped configuration's parameter count equals the real model's, built on PyTorch's meta device."""

from __future__ import annotations

from typing import Any

import pytest

from mlsysim_nb.records.models import configuration_keys
from mlsysim_nb.records.workloads import Workloads

pytestmark = pytest.mark.measure


@pytest.mark.parametrize("key", configuration_keys())
def test_from_hf_config_counts_what_transformers_builds(key: str, torch: Any, transformers: Any) -> None:
    """AutoModelForCausalLM.from_config on the meta device (no memory, no weights): the same exact count."""
    import json
    from importlib import resources

    text = resources.files("mlsysim_nb.records").joinpath("data", "models", f"{key}.json").read_text("utf-8")
    raw = json.loads(text)["config"]
    cfg = transformers.AutoConfig.for_model(**raw)
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(cfg)
    built = sum(p.numel() for p in model.parameters())
    workload = Workloads.configuration(key)
    assert int(workload.parameters.magnitude) == built
    assert Workloads.configuration(key) == type(workload).from_hf_config(cfg.to_dict(), name=workload.name,
                                                                         source=workload.source)  # fmt: skip
