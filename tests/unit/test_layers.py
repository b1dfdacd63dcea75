"""The layer table: Korthikanti's coefficients are sums over one table of saved tensors, never typed twice."""

from __future__ import annotations

import re

import pytest

import mlsysim_nb.kinds.parallel.model  # noqa: F401 - registers the many-device formulas, so every table is read
from mlsysim_nb import layers
from mlsysim_nb.kinds.parallel.physics import EQUATIONS  # the many-device equations include every other kind's
from mlsysim_nb.layers import GPT_LAYER


def _block(block: str, term: str) -> int:
    return sum(t.coefficient() for t in GPT_LAYER if t.block == block and (t.term == "scores") == (term == "as2b"))


def test_the_paper_sums() -> None:
    """Sec. 4.1: attention 11sbh + 5as²b, MLP 19sbh, layer norms 4sbh: 34 and 5; Sec. 4.2.1: 10 stay whole."""
    assert (_block("attention", "sbh"), _block("attention", "as2b")) == (11, 5)
    assert _block("MLP", "sbh") == 19
    assert _block("layer norms", "sbh") == 4
    assert layers.per_token_bytes() == 34
    assert layers.score_bytes() == 5
    assert layers.replicated_bytes() == 10
    assert layers.per_token_bytes() - layers.replicated_bytes() == 24  # 24/t in Table 2


@pytest.mark.parametrize(("f", "expected"), [(1, 22), (2, 26), (4, 34), (8, 50)])
def test_the_mlp_width_enters_through_its_two_wide_tensors(f: int, expected: int) -> None:
    """18 + 4f: only the GeLU's input and output are f·h wide."""
    assert layers.ffn_free_bytes() == 18
    assert layers.ffn_bytes() == 4
    assert layers.per_token_bytes(f) == expected


def test_projection_tensors_are_q_k_v_and_the_output_projection_input() -> None:
    """The illustrative line item counts four hidden-width tensors (the reference's literal 4)."""
    assert layers.projection_tensors() == 4


def test_keys_are_unique() -> None:
    """Each tensor is named once."""
    keys = [t.key for t in GPT_LAYER]
    assert sorted(keys) == sorted(set(keys))


def test_no_layer_coefficient_is_typed_in_a_formula() -> None:
    """Formulas read the table's sums by name: no 34, 18, 10, 5 or 4 appears as a literal in any equation.

    The literals left are counting, not layer physics: 1, 2 (16 bits, or Adam's two moments), 6 and 8 (6PD and
    8PD FLOPs) and tensor parallelism's four ring all-reduces per layer, each moving 2(t - 1)/t of s·b·h.
    """
    found: dict[str, set[str]] = {}
    for name, formula in EQUATIONS.formulas.items():
        expressions = [case.expression for case in formula.cases] if formula.cases else [formula.expression]
        for expression in expressions:
            for literal in re.findall(r"(?<![\w.])\d+(?:\.\d+)?", expression):
                found.setdefault(literal, set()).add(name)
    assert set(found) <= {"1", "2", "6", "8"}
    assert found.get("8", set()) <= {"checkpointed_training_flops", "tensor_parallel_traffic_per_layer"}
