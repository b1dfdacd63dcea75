"""What autograd keeps for backward: every saved tensor, the step and op that saved it, and its storage.

Imported only by the measuring functions (it imports torch). Two views of the
same forward pass are joined: ``saved_tensors_hooks`` sees every saved tensor
as it is packed (and so the forward step that was running), and a walk over
the autograd graph names the node and slot that hold it. Bytes are counted per
distinct storage, since Q, K and V may be views of one buffer and a Linear
saves a 2-D view of its 3-D input.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch


@dataclass
class Saved:
    """One tensor autograd saved: where, by which op and slot, and the tensor itself."""

    step: str
    op: str
    slot: str
    tensor: torch.Tensor

    @property
    def storage(self) -> int:
        """Address of the storage the tensor views (identity only, never shown)."""
        return int(self.tensor.untyped_storage().data_ptr())


def record(run: Callable[[Callable[[str], None]], torch.Tensor]) -> tuple[torch.Tensor, list[Saved]]:
    """Run ``run(mark)`` under saved-tensor hooks; return its output and every tensor it saved, in order."""
    current = {"step": "(before the first step)"}
    packed: list[tuple[str, torch.Tensor]] = []

    def mark(step: str) -> None:
        current["step"] = step

    def pack(t: torch.Tensor) -> torch.Tensor:
        packed.append((current["step"], t))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = run(mark)
    slots: dict[tuple[Any, ...], list[tuple[str, str]]] = {}
    for op, slot, t in _graph_slots(out):
        slots.setdefault(_view_key(t), []).append((op, slot))
    saved = []
    for step, t in packed:
        found = slots.get(_view_key(t))
        op, slot = found.pop(0) if found else ("(not in the graph)", "")
        saved.append(Saved(step, op, slot, t))
    return out, saved


def _view_key(t: torch.Tensor) -> tuple[Any, ...]:
    """What identifies a saved view: unpacking may hand back a new tensor object over the same memory."""
    return (t.untyped_storage().data_ptr(), t.storage_offset(), tuple(t.shape), t.stride(), t.dtype)


def _graph_slots(out: torch.Tensor) -> Iterator[tuple[str, str, torch.Tensor]]:
    """(node name, slot, tensor) for every saved tensor reachable from ``out``'s grad_fn."""
    seen: set[Any] = set()
    stack = [out.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        for slot in sorted(a for a in dir(node) if a.startswith("_saved_")):
            value = getattr(node, slot)
            if isinstance(value, torch.Tensor):
                yield type(node).__name__, slot, value
        stack.extend(f for f, _ in node.next_functions)


def storage_bytes(t: torch.Tensor) -> int:
    """Bytes of the whole storage ``t`` views."""
    return int(t.untyped_storage().nbytes())


def claim_mask(t: torch.Tensor) -> np.ndarray:
    """Indices of the storage's bytes that the view ``t`` covers (exactly, for any strides)."""
    size = t.element_size()
    elements = storage_bytes(t) // size
    index = torch.arange(elements).as_strided(t.shape, t.stride(), t.storage_offset()).reshape(-1).numpy()
    return (index[:, None] * size + np.arange(size)[None, :]).reshape(-1)


class Claims:
    """Which bytes of which storages are already attributed (first claim wins, in forward order)."""

    def __init__(self) -> None:
        self._taken: dict[int, np.ndarray] = {}

    def claim(self, saved: Saved) -> int:
        """Mark the bytes ``saved`` covers; return how many were not claimed before."""
        taken = self._taken.setdefault(saved.storage, np.zeros(storage_bytes(saved.tensor), dtype=bool))
        before = int(np.count_nonzero(taken))
        taken[claim_mask(saved.tensor)] = True  # a broadcast view repeats indices: count bytes, not indices
        return int(np.count_nonzero(taken)) - before
