"""Byte accounting over shared storages, on tiny hand-made views."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.measure


def _saved(tensor):
    from mlsysim_nb.measure._saved import Saved

    return Saved("step", "Op", "_saved_self", tensor)


def test_a_strided_view_claims_exactly_its_bytes(torch):
    """Every other bf16 element of 6 covers bytes 0-1, 4-5 and 8-9 of the 12-byte storage: 6 bytes, then 6 more."""
    from mlsysim_nb.measure._saved import Claims

    base = torch.zeros(6, dtype=torch.bfloat16)
    claims = Claims(12)
    assert claims.claim(base[::2]) == 6
    assert claims.claim(base) == 6


def test_first_claim_wins_and_overlaps_count_once(torch):
    """Two overlapping views of 8 fp32 values (bytes 0-19 and 8-31) claim 20 then 12 new bytes; a repeat claims 0."""
    from mlsysim_nb.measure._saved import Claims

    base = torch.zeros(8)
    for granule in (1, 4):  # byte flags, or one flag per fp32 element: the same counts
        claims = Claims(32, granule)
        assert claims.claim(base[:5]) == 20
        assert claims.claim(base[2:]) == 12
        assert claims.claim(base[1:3]) == 0


def test_a_broadcast_view_counts_its_bytes_once(torch):
    """A stride-0 expansion of 2 fp32 values to 2 x 1000 still covers only the 8 bytes of the storage."""
    from mlsysim_nb.measure._saved import Claims

    base = torch.zeros(2, 1)
    assert Claims(8, 4).claim(base.expand(2, 1000)) == 8


def test_views_of_two_widths_share_one_storage(torch):
    """An fp32 view and a bf16 view of one 16-byte storage: the fp32 element 1 (bytes 4-7), then bf16 halves 0-3 of 8."""
    from mlsysim_nb.measure._saved import first_claims

    base = torch.zeros(4)
    halves = base.view(torch.bfloat16)  # 8 bf16 values over the same 16 bytes
    saved = [_saved(base[1:2]), _saved(halves[:4]), _saved(halves[2:6])]
    assert first_claims(saved, lambda _: True) == [4, 4, 4]  # bytes 4-7; 0-3; 8-11 (4-7 already taken)


def test_only_counted_tensors_claim(torch):
    """A tensor left out of the count claims nothing, so a later view of the same bytes claims them."""
    from mlsysim_nb.measure._saved import first_claims

    base = torch.zeros(4)
    saved = [_saved(base), _saved(base[:2])]
    assert first_claims(saved, lambda s: s is saved[1]) == [0, 8]
