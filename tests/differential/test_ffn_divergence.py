"""The FFN multiple sizes the per-token coefficient here, not in mlsysim 0.3.0: asserted on both sides.

A deliberate difference for the README's "Differences from mlsysim 0.3.0" table (a row for the lead to add;
once it is listed, this test belongs in ``test_divergences.py`` as ``test_d17_...``).
"""

from __future__ import annotations

import pytest

from mlsysim_nb import Scenarios
from tests.reference import ref

pytestmark = pytest.mark.reference

ACT = "Gpt2XlBatch32Activations"  # GPT-2 XL: L = 48, s = 1024, b = 32, h = 1600


def test_ffn_multiple_sizes_the_per_token_coefficient() -> None:
    """ffn_multiple = 8: the reference keeps 34 bytes per token (85.56 GB selective); ours is 18 + 4 · 8 = 50."""
    theirs = getattr(ref.Scenarios, ACT).variant(ffn_multiple=8)
    ours = Scenarios[ACT].variant(ffn_multiple=8)
    sbh_l = 48 * 1024 * 32 * 1600
    assert theirs.per_token_bytes_coefficient == 34
    assert theirs.activations("selective").m_as("byte") == pytest.approx(sbh_l * 34, rel=1e-12)
    assert ours.per_token_bytes_coefficient == 50
    assert ours.activations("selective").m_as("byte") == sbh_l * 50
    # at Korthikanti's 4h MLP both give 34
    assert Scenarios[ACT].per_token_bytes_coefficient == getattr(ref.Scenarios, ACT).per_token_bytes_coefficient == 34
