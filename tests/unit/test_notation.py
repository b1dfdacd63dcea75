"""One notation for the package and the book: across every kind the registry finds, a symbol has one meaning."""

from __future__ import annotations

import pytest

from mlsysim_nb.kinds import all_kinds
from mlsysim_nb.model.notation import Quantity, clashes, quantity


def _tables() -> list[tuple[str, dict[str, Quantity]]]:
    """Every kind's whole notation (the records', its fields' and its equations' rows), by class name."""
    return [(kind.name, dict(kind.load().notation())) for kind in all_kinds()]


def test_no_symbol_has_two_meanings_across_the_kinds() -> None:
    """Every symbol of every kind means one quantity, and every quantity is written with one symbol."""
    tables = _tables()
    assert len(tables) >= 4
    assert clashes(tables) == []


def test_the_renamed_symbols() -> None:
    """The batch is B (trained or served), the micro-batch b, a cache block s_blk, the reserve u_rt, top-k k_exp."""
    notation = {kind.name: kind.load().notation() for kind in all_kinds()}
    serving, training = notation["InferenceMemoryScenario"], notation["TrainingStateFitScenario"]
    parallel, activation = notation["ParallelTrainingScenario"], notation["ActivationMemoryScenario"]
    assert serving["batch_size"].symbol.text() == training["batch_size"].symbol.text() == "B"
    assert activation["micro_batch"].symbol.text() == parallel["micro_batch"].symbol.text() == "b"
    assert serving["block_size"].symbol.text() == "s_blk"
    assert serving["runtime_reserve"].symbol.text() == "u_rt"
    assert training["adapter_rank"].symbol.text() == "r"
    assert serving["experts_per_token"].symbol.text() == parallel["experts_per_token"].symbol.text() == "k_exp"
    assert activation["checkpoint_segments"].symbol.text() == "k"
    assert serving["max_batch_size"].symbol.text() == "B_max"
    # Korthikanti's letters, as the paper writes them (s, b, h, a, L, t, p)
    written = {n: parallel[n].symbol.text() for n in ("sequence", "micro_batch", "hidden_dim", "heads", "layers")}
    assert written == {"sequence": "s", "micro_batch": "b", "hidden_dim": "h", "heads": "a", "layers": "L"}
    assert (parallel["tensor_parallel"].symbol.text(), parallel["pipeline_parallel"].symbol.text()) == ("t", "p")


@pytest.mark.parametrize(
    ("tables", "found"),
    [
        # the old serving kind: B the block, b the batch, r the reserve, beside the training kinds' B, b and r
        (
            [
                (
                    "train",
                    {"batch_size": quantity("B", "", "batch size"), "adapter_rank": quantity("r", "", "adapter rank")},
                ),
                (
                    "serve",
                    {
                        "block_size": quantity("B", "", "cache block (tokens)"),
                        "runtime_reserve": quantity("r", "", "runtime reserve"),
                    },
                ),
            ],
            [
                "B means batch_size (batch size) in train and block_size (cache block (tokens)) in serve",
                "r means adapter_rank (adapter rank) in train and runtime_reserve (runtime reserve) in serve",
            ],
        ),
        # one quantity, two symbols
        (
            [
                ("a", {"micro_batch": quantity("b", "", "micro-batch")}),
                ("c", {"micro_batch": quantity("m", "", "micro-batch")}),
            ],
            ["micro_batch (micro-batch) is written b in a and m in c"],
        ),
        # the same quantity under two names (shared label) or two labels (shared name), and a constant: no clash
        (
            [
                (
                    "a",
                    {"total": quantity("M_dev", "byte", "memory per device"), "four": quantity("4", "", "projections")},
                ),
                (
                    "c",
                    {
                        "total_per_device": quantity("M_dev", "byte", "memory per device"),
                        "all": quantity("4", "", "all-to-alls"),
                    },
                ),
            ],
            [],
        ),
    ],
)
def test_clashes_are_named(tables: list[tuple[str, dict[str, Quantity]]], found: list[str]) -> None:
    """A symbol with two meanings and a quantity with two symbols are each named with both sources."""
    assert clashes(tables) == found


def test_a_mixers_own_symbols_mean_nothing_else() -> None:
    """Latent attention's and Mamba-2's sizes (r_kv, d_rope, H_ssm, ...) are no kind's symbol for another quantity.

    The serving kind's copies of a key/value head are ρ_kv, so the latent width r_kv shown beside them in a
    DeepSeek-V3 derivation has one meaning.
    """
    from mlsysim_nb import Workloads
    from mlsysim_nb.layers import mixers

    written = {row.symbol.text() for _, table in _tables() for row in table.values()}
    own: set[str] = set()
    for key in ("deepseek-v3", "bamba-9b", "nemotron-h-8b"):
        arch = Workloads.configuration(key).architecture()
        own |= {s for layer in arch.layer_kinds() if layer.has_mixer for s in mixers.find(layer.mixer).symbols(arch)}
    assert {"r_kv", "r_q", "d_rope", "H_ssm"} <= own
    assert own & written == set()
    serving = {kind.name: kind.load().notation() for kind in all_kinds()}["InferenceMemoryScenario"]
    assert serving["kv_head_replicas"].symbol.text() == "ρ_kv"
