"""What autograd keeps for backward: every saved tensor, the step and op that saved it, and its storage.

Imported only by the measuring functions (it imports torch). Two views of the
same forward pass are joined: ``saved_tensors_hooks`` sees every saved tensor
as it is packed (and so the forward step that was running), and a walk over
the autograd graph names the node and slot that hold it. Bytes are counted per
distinct storage, since Q, K and V may be views of one buffer and a Linear
saves a 2-D view of its 3-D input.
"""

from __future__ import annotations

import gc
import math
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

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
    # Keep only what outlives the forward pass: a tensor saved by a node that nothing reaches once the forward
    # returns (DeepSeek's router saves top-k indices of its group scores, which feed a mask, not the output) is
    # freed with that node and is no memory of the backward pass.
    refs = [(step, weakref.ref(t)) for step, t in packed]
    packed.clear()
    gc.collect()
    alive = [(step, t) for step, ref in refs if (t := ref()) is not None]
    slots: dict[tuple[Any, ...], list[tuple[str, str]]] = {}
    for op, slot, t in _graph_slots(out):
        slots.setdefault(_view_key(t), []).append((op, slot))
    saved = []
    for step, t in alive:
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


class Claims:
    """Which bytes of one storage are already attributed (first claim wins, in forward order).

    One flag per ``granule`` bytes of the storage (the element size its views share, so 1/2 or 1/4 of its
    bytes), written through a strided view of the flags that covers exactly what the tensor covers: no
    index arrays, so accounting a storage takes a fraction of that storage's memory, and only while it
    is being accounted.
    """

    def __init__(self, nbytes: int, granule: int = 1) -> None:
        self._granule = granule
        self._taken = torch.zeros(nbytes // granule, dtype=torch.bool)

    def claim(self, t: torch.Tensor) -> int:
        """Mark the bytes the view ``t`` covers; return how many were not claimed before."""
        per = t.element_size() // self._granule
        strides = (*(stride * per for stride in t.stride()), 1)
        covered = self._taken.as_strided((*t.shape, per), strides, t.storage_offset() * per)
        before = int(self._taken.count_nonzero())
        covered.fill_(value=True)  # a broadcast view repeats positions: bytes are counted, not positions
        return (int(self._taken.count_nonzero()) - before) * self._granule


def first_claims(saved: list[Saved], counted: Callable[[Saved], bool]) -> list[int]:
    """For each saved tensor, the bytes of its storage it was the first (in forward order) to cover.

    Only the tensors ``counted`` claims bytes (the others get 0 and leave their bytes to later views);
    storages are accounted one at a time, so the accounting holds flags for one storage at once.
    """
    by_storage: dict[int, list[int]] = {}
    for index, s in enumerate(saved):
        if counted(s):
            by_storage.setdefault(s.storage, []).append(index)
    out = [0] * len(saved)
    for indices in by_storage.values():
        views = [saved[i].tensor for i in indices]
        nbytes = storage_bytes(views[0])
        claims = Claims(nbytes, math.gcd(nbytes, *(t.element_size() for t in views)))
        for i, t in zip(indices, views, strict=True):
            out[i] = claims.claim(t)
    return out
