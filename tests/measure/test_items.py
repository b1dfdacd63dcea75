"""Korthikanti's line items and the model's figures they split, checked by hand; no PyTorch needed."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mlsysim_nb import KORTHIKANTI_PER_TOKEN_BYTES, KORTHIKANTI_SCORE_BYTES, Q_
from mlsysim_nb.errors import FieldError
from mlsysim_nb.measure import ITEMS, layer_scenario, measure_layer, measure_training_state, torch_extra
from mlsysim_nb.measure.items import coefficient_sum, predicted_items

# (s, b, h, a) of the issue, with sbh and a·s²·b worked by hand
CONFIGS = [
    ((256, 2, 512, 8), 262_144, 1_048_576),
    ((512, 1, 768, 12), 393_216, 3_145_728),
    ((128, 4, 1024, 16), 524_288, 1_048_576),
]


def _scenario(config):
    s, b, h, a = config
    return layer_scenario(seq_len=s, micro_batch=b, hidden=h, heads=a, dtype="bfloat16")


def test_the_items_add_up_to_the_models_constants():
    """The paper's per-token items sum to 34 and its score items to 5, the model's two constants."""
    assert (coefficient_sum("sbh"), coefficient_sum("as2b")) == (KORTHIKANTI_PER_TOKEN_BYTES, KORTHIKANTI_SCORE_BYTES)
    assert (coefficient_sum("sbh"), coefficient_sum("as2b")) == (34, 5)


def test_every_item_has_a_distinct_key_and_label():
    """Fourteen items, no key or label used twice."""
    assert len({i.key for i in ITEMS}) == len({i.label for i in ITEMS}) == len(ITEMS) == 14


@pytest.mark.parametrize(("config", "sbh", "as2b"), CONFIGS)
def test_predicted_layer_is_34sbh_plus_5as2b(config, sbh, as2b):
    """At 16 bits one layer is predicted at 34·sbh + 5·as²b bytes, the model's activations('none')."""
    scenario = _scenario(config)
    assert scenario.activations("none").to("byte") == Q_(34 * sbh + 5 * as2b, "byte")
    assert sum(predicted_items(scenario).values()) == pytest.approx(34 * sbh + 5 * as2b, rel=1e-12)


@pytest.mark.parametrize(("config", "sbh", "as2b"), CONFIGS)
def test_items_split_the_models_own_line_items(config, sbh, as2b):
    """GeLU input is the model's FFN tensor; QKV input, Q, K and V its four projection tensors; the scores its score item."""
    scenario = _scenario(config)
    p = predicted_items(scenario)
    assert p["gelu_input"] == pytest.approx(scenario.ffn_activations_per_layer.m_as("byte"), rel=1e-12)
    assert p["gelu_input"] == 8 * sbh
    four = p["qkv_input"] + p["qk"] + p["v"]
    assert four == pytest.approx(scenario.projection_activations_per_layer.m_as("byte"), rel=1e-12)
    scores = p["softmax_output"] + p["softmax_dropout_mask"] + p["softmax_dropout_output"]
    assert scores == pytest.approx(scenario.score_activations_per_layer.m_as("byte"), rel=1e-12)
    assert p["softmax_dropout_mask"] == pytest.approx(as2b, rel=1e-12)


def test_fp32_doubles_every_prediction():
    """At 4 bytes per value the model scales every item by 4/2, the mask included (its simplification)."""
    half = predicted_items(layer_scenario(seq_len=256, micro_batch=2, hidden=512, heads=8, dtype="bfloat16"))
    full = predicted_items(layer_scenario(seq_len=256, micro_batch=2, hidden=512, heads=8, dtype="float32"))
    assert {k: v * 2 for k, v in half.items()} == pytest.approx(full, rel=1e-12)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"heads": 7}, "heads"),
        ({"hidden": 0}, "hidden"),
        ({"seq_len": 1.5}, "seq_len"),
        ({"attention": "flash"}, "attention"),
        ({"dtype": "int8"}, "dtype"),
        ({"dropout_mask": "bits"}, "dropout_mask"),
        ({"random_state": -1}, "random_state"),
    ],
)
def test_bad_layer_input_names_the_field(changes, field):
    """Each bad argument raises FieldError naming it, before PyTorch is touched."""
    args = {"seq_len": 128, "micro_batch": 1, "hidden": 512, "heads": 8, **changes}
    with pytest.raises(FieldError, match=rf"^measure_layer\.{field}: ") as err:
        measure_layer(**args)
    assert err.value.field == field


@pytest.mark.parametrize(
    ("changes", "field"), [({"recipe": "fp8"}, "recipe"), ({"heads": 5}, "heads"), ({"layers": 0}, "layers")]
)
def test_bad_training_input_names_the_field(changes, field):
    """An unknown recipe or a bad size raises FieldError naming the field."""
    with pytest.raises(FieldError, match=rf"^measure_training_state\.{field}: "):
        measure_training_state(**changes)


def test_without_torch_the_error_says_how_to_install(monkeypatch):
    """With PyTorch hidden, measuring raises ImportError carrying the install command for the extra."""
    monkeypatch.setattr(torch_extra, "torch_available", lambda: False)
    with pytest.raises(ImportError, match=r"mlsysim_nb\[measure\]"):
        torch_extra.require_torch()
    with pytest.raises(ImportError, match=r"mlsysim_nb\[measure\]"):
        torch_extra.require_transformers()


@pytest.mark.parametrize(
    ("module", "absent"),
    [
        ("mlsysim_nb", ("torch", "transformers", "mlsysim_nb.measure")),
        ("mlsysim_nb.measure", ("torch", "transformers")),
        ("mlsysim_nb.layers", ("torch", "transformers")),
    ],
)
def test_importing_does_not_import_torch(module, absent):
    """`import mlsysim_nb` loads neither torch, transformers nor the lab; the lab and the layer table load neither."""
    code = f"import sys, {module}; print(sorted(m for m in {absent!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
