"""Byte accounting over shared storages, on tiny hand-made views."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.measure


def _saved(tensor):
    from mlsysim_nb.measure._saved import Saved

    return Saved("step", "Op", "_saved_self", tensor)


def test_a_strided_view_claims_exactly_its_bytes(torch):
    """Every other bf16 element of 6 covers bytes 0-1, 4-5 and 8-9 of the 12-byte storage."""
    from mlsysim_nb.measure._saved import claim_mask

    base = torch.zeros(6, dtype=torch.bfloat16)
    assert sorted(claim_mask(base[::2]).tolist()) == [0, 1, 4, 5, 8, 9]


def test_first_claim_wins_and_overlaps_count_once(torch):
    """Two overlapping views of 8 fp32 values (bytes 0-19 and 8-31) claim 20 then 12 new bytes; a repeat claims 0."""
    from mlsysim_nb.measure._saved import Claims

    base = torch.zeros(8)
    claims = Claims()
    assert claims.claim(_saved(base[:5])) == 20
    assert claims.claim(_saved(base[2:])) == 12
    assert claims.claim(_saved(base[1:3])) == 0


def test_a_broadcast_view_counts_its_bytes_once(torch):
    """A stride-0 expansion of 2 fp32 values to 2 x 1000 still covers only the 8 bytes of the storage."""
    from mlsysim_nb.measure._saved import Claims

    base = torch.zeros(2, 1)
    assert Claims().claim(_saved(base.expand(2, 1000))) == 8
