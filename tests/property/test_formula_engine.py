"""The formula engine on arrays: a case chosen by a swept flag is the scalar answer, element by element."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from mlsysim_nb.formula import Case, Formula

_RULE = Formula(
    "shards",
    doc="Shards of a state: N under ZeRO, t otherwise, 1 when neither.",
    cases=(
        Case("ZeRO", "data_parallel", when="sharded"),
        Case("tensor", "tensor_parallel", when="split"),
        Case("replicated", "1"),
    ),
)

_flags = st.lists(st.booleans(), min_size=1, max_size=8)


@given(_flags, _flags, st.integers(1, 64), st.integers(1, 64))
def test_a_swept_flag_takes_each_elements_own_case(sharded: list[bool], split: list[bool], n: int, t: int) -> None:
    """Evaluated on arrays of flags, each element equals the formula evaluated on that element's scalars."""
    size = min(len(sharded), len(split))
    a, b = np.array(sharded[:size]), np.array(split[:size])
    values = {"sharded": a, "split": b, "data_parallel": n, "tensor_parallel": t}
    swept = np.broadcast_to(_RULE.evaluate(values), (size,))
    one_by_one = [
        _RULE.evaluate({"sharded": bool(x), "split": bool(y), "data_parallel": n, "tensor_parallel": t})
        for x, y in zip(a, b, strict=True)
    ]
    assert swept.tolist() == one_by_one


@given(st.booleans(), st.booleans())
def test_only_the_case_that_applies_is_read(sharded: bool, split: bool) -> None:
    """With scalar flags a case that does not apply is never evaluated (its inputs may be absent)."""
    read: list[str] = []

    def get(name: str) -> object:
        read.append(name)
        return {"sharded": sharded, "split": split, "data_parallel": 4, "tensor_parallel": 8}[name]

    value = _RULE.evaluate(get)
    assert value == (4 if sharded else 8 if split else 1)
    assert ("data_parallel" in read) == sharded
    assert ("tensor_parallel" in read) == (not sharded and split)
