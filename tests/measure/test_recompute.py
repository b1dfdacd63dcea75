"""The rerun fraction of full recomputation with k segments, counted on PyTorch's own checkpoint_sequential."""

from __future__ import annotations

import pytest

from mlsysim_nb import Scenarios

pytestmark = pytest.mark.measure


@pytest.mark.parametrize(("layers", "segments"), [(48, 8), (48, 5), (12, 12), (12, 1), (32, 3)])
def test_checkpoint_sequential_reruns_all_but_the_last_segment(torch, layers: int, segments: int) -> None:
    """Forward calls in one step are L + (k − 1)·⌊L/k⌋: the last segment is not rerun, as rerun_fraction says."""
    from torch.utils.checkpoint import checkpoint_sequential

    calls = [0]

    class Counted(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = torch.nn.Linear(4, 4)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            calls[0] += 1
            return torch.tanh(self.linear(x))

    model = torch.nn.Sequential(*(Counted() for _ in range(layers)))
    x = torch.randn(2, 4, requires_grad=True)
    checkpoint_sequential(model, segments, x, use_reentrant=False).sum().backward()
    rerun = calls[0] - layers
    assert rerun == (segments - 1) * (layers // segments)
    if layers == 48:  # GPT-2 XL's layers: the scenario's fraction is the counted one
        case = Scenarios.Gpt2XlBatch32SegmentCheckpointed.variant(checkpoint_segments=segments)
        assert case.rerun_fraction == rerun / layers
