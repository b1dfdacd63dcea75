"""Side-by-side comparison (live/comparison.py): what compare() shows, and what it refuses with a reason."""

from __future__ import annotations

import numpy as np
import pytest

from mlsysim_nb import (
    Q_,
    Scenarios,
    compare,
)

TRAIN = Scenarios.Gpt2MixedPrecisionAdamOnH100  # GPT-2 XL, 16 B per parameter, batch 32


def test_compare_refuses_a_sweep_with_a_reason() -> None:
    """compare() of a scenario holding arrays says why, instead of a truth-value error."""
    with pytest.raises(TypeError, match="holds arrays"):
        compare(TRAIN, TRAIN.variant(batch_size=np.array([8, 16]), activations=Q_([1, 2], "GB")))


def test_compare_shows_no_percentage_across_a_sign_change() -> None:
    """-5 -> 7 is ▲ 12, not ▲ 240 %; a boolean reads True / False."""
    state_overflows = Scenarios.Llama3_8BFullFineTuneOnH100
    c = compare(state_overflows, state_overflows.variant(bytes_per_value=1, master_bytes_per_parameter=None,
                                                         optimizer_bytes_per_parameter=2))  # fmt: skip
    rows = dict(c.table())
    first, second = rows["max_resident_batch"]
    assert first[0].startswith("-")
    assert "%" not in second[1]
    assert "True" in {t for t, _ in rows["training_fits"]} or "False" in {t for t, _ in rows["training_fits"]}
