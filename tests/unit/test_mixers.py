"""Adding a mixer is adding a module: a toy mixer written to a temporary folder shows everywhere.

The toy is one module (``toy.py``) under ``tmp_path``, made visible with
:func:`mlsysim_nb.layers.register_mixer_path`. No file of the package is edited: a model whose layers alternate
attention and the toy (``pattern=("attention", "toy")``) counts the toy's weights, saves its rows, caches its
values, and every repr of every kind shows the pattern.

The hand-worked model: h = 64, 4 heads of d = 16 sharing 2 key/value heads, 4 layers, a GPT-style layer
(LayerNorm, 4h GeLU MLP with biases, dropout), a vocabulary of 100, tied embeddings. The toy mixes with two
h x n projections (n = 16), saves one s x b x n state per layer and caches n values per token.
"""

from __future__ import annotations

import sys
import textwrap

import pytest

from mlsysim_nb import (
    Q_,
    ActivationMemoryScenario,
    Hardware,
    InferenceMemoryScenario,
    TrainingStateFitScenario,
    Workload,
    layers,
)
from mlsysim_nb.errors import FieldError
from mlsysim_nb.layers import Architecture, Layer, mixers

_TOY = """
    from mlsysim_nb.layers.mixers import Mixer
    from mlsysim_nb.layers.rows import Cached, Saved, Weight


    class Toy(Mixer):
        name = "toy"
        label = "toy mixer"

        def symbols(self, arch):
            return {"n": 16}

        def weights(self, arch):
            return (Weight("toy_in", "toy input projection", "toy", ("h", "n")),
                    Weight("toy_out", "toy output projection", "toy", ("n", "h")))

        def saved(self, arch, implementation, attention, device):
            return (Saved("toy_state", "toy state", "toy", ("s", "b", "n")),)

        def cache(self, arch):
            return (Cached("toy_state", "toy cached values", ("n",)),)


    MIXER = Toy()
"""

_SHAPE = {"hidden_dim": 64, "heads": 4, "kv_heads": 2, "vocab_size": 100, "layers": 4}


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """The toy mixer's folder, seen by the layer table for this module's tests only."""
    root = tmp_path_factory.mktemp("course_mixers")
    (root / "toy.py").write_text(textwrap.dedent(_TOY), encoding="utf-8")
    saved = list(mixers.__path__)
    layers.register_mixer_path(root)
    yield mixers.find("toy")
    mixers.__path__[:] = saved
    sys.modules.pop("mlsysim_nb.layers.mixers.toy", None)


@pytest.fixture(scope="module")
def hybrid(toy):
    """The hand-worked model as a workload: attention and the toy, alternating over 4 layers."""
    return Workload(name="toy hybrid", parameters=168_960, layers=4, hidden_dim=64, heads=4, kv_heads=2,
                    context_length=2048, vocab_size=100, pattern=("attention", "toy"))  # fmt: skip


def test_the_table_finds_the_module(toy) -> None:
    """The module's MIXER is found by its name beside the package's attention."""
    assert toy.name == "toy"
    assert {"attention", "toy"} <= set(mixers.all_mixers())


def test_the_parameter_count_holds_its_weights(toy) -> None:
    """2 attention layers of 45,824 + 2 toy layers of 35,392 + embeddings 6,400 + final norm 128 = 168,960.

    Attention: Q and output 64·64 each, K and V 64·32 each, biases 64 + 2·32 + 64 (12,480); the toy: 2·64·16
    (2,048); every layer: two LayerNorms (256) and the MLP 2·64·256 + 256 + 64 (33,088).
    """
    arch = Architecture(**_SHAPE, pattern=(Layer("attention"), Layer("toy")))
    assert layers.parameter_count(arch, 4) == 2 * 45_824 + 2 * 35_392 + 6_400 + 128 == 168_960


def test_the_saved_bytes_hold_its_rows(toy) -> None:
    """A toy layer saves 12,288 B around the mixer and its state 8·16·2 = 256 B; one layer is the mean of both kinds.

    At s = 8, b = 1, 16 bits: LayerNorm inputs, MLP input 4 · 1,024 B, GeLU's two 8·256·2 = 4,096 B and two
    one-byte masks of 512 B: 12,288 B, plus the toy's 256 B.
    """
    hybrid = Architecture(**_SHAPE, pattern=(Layer("attention"), Layer("toy")))
    attention = Architecture(**_SHAPE)
    run = {"seq_len": 8, "micro_batch": 1, "dtype_bytes": 2}
    toy_layer = 12_288 + 256
    assert layers.layer_saved_bytes(hybrid, **run) == (layers.layer_saved_bytes(attention, **run) + toy_layer) / 2
    assert "toy state" in [row.label for row in layers.layer_rows(hybrid)]


def test_the_cache_holds_its_values(toy) -> None:
    """Per token: 2 attention layers x K and V x 2 heads x 16 = 128 values, 2 toy layers x 16 = 32: 160."""
    arch = Architecture(**_SHAPE, pattern=(Layer("attention"), Layer("toy")))
    assert layers.cache_values(arch).per_token == ((None, 160.0),)
    assert layers.cache_bytes(arch, context=1000, bytes_per_value=2) == 160 * 1000 * 2


def test_the_serving_kind_sums_its_cache(hybrid) -> None:
    """The serving kind's cache per token is the table's 160 values at 2 B: 320 B; 1,000 tokens: 320 kB."""
    s = InferenceMemoryScenario(workload=hybrid, hardware=Hardware.H100, context_length=1000)
    assert Q_(320, "B") == s.kv_cache_per_token
    assert Q_(320_000, "B") == s.kv_cache


def test_every_repr_shows_the_pattern(hybrid) -> None:
    """The workload, and each kind's repr built on it, name the toy in the layers' pattern."""
    shown = [repr(hybrid), hybrid._repr_html_()]
    serving = InferenceMemoryScenario(workload=hybrid, hardware=Hardware.H100, context_length=1000)
    training = TrainingStateFitScenario(
        workload=hybrid, hardware=Hardware.H100, bytes_per_value=2, optimizer_bytes_per_parameter=8
    )
    activations = ActivationMemoryScenario(workload=hybrid, micro_batch=1, seq_len=8)
    for scenario in (serving, training, activations):
        shown += [scenario._repr_html_(), scenario.to_text(), scenario.to_markdown()]
    for out in shown:
        assert "toy" in out


def test_an_unknown_mixer_is_refused_by_name(toy) -> None:
    """A layer naming no mixer module is refused, naming the field and the mixers there are."""
    with pytest.raises(FieldError, match=r"Workload\.pattern: names a mixer of the layer table \(attention, .*toy"):
        Workload(name="x", parameters=1, layers=2, hidden_dim=64, heads=4, pattern=("mamba",))


def test_a_fixed_state_is_counted_once_per_sequence(toy, tmp_path) -> None:
    """A mixer whose cache is a fixed state keeps it whatever the context: 2 layers x 16 values x 2 B = 64 B."""
    (tmp_path / "stateful.py").write_text(textwrap.dedent(_TOY).replace(
        '("n",)),)', '("n",), per_token=False),)').replace('"toy"', '"stateful"'), encoding="utf-8")  # fmt: skip
    saved = list(mixers.__path__)
    layers.register_mixer_path(tmp_path)
    try:
        arch = Architecture(hidden_dim=64, layers=2, pattern=(Layer("stateful"),))
        assert layers.cache_values(arch).per_sequence == 32
        assert layers.cache_bytes(arch, context=10, bytes_per_value=2) == layers.cache_bytes(arch, context=10**6) == 64
    finally:
        mixers.__path__[:] = saved
        sys.modules.pop("mlsysim_nb.layers.mixers.stateful", None)


def test_the_parallel_kind_shows_the_pattern_too(hybrid) -> None:
    """The many-device kind built on the hybrid model names the toy in its reprs; the toy splits under any t."""
    from mlsysim_nb import ParallelTrainingScenario

    state = TrainingStateFitScenario(workload=hybrid, hardware=Hardware.H100, bytes_per_value=2,
                                     optimizer_bytes_per_parameter=8)  # fmt: skip
    parallel = ParallelTrainingScenario(state=state, tensor_parallel=2)
    for out in (parallel._repr_html_(), parallel.to_text(), parallel.to_markdown()):
        assert "toy" in out


def test_the_serving_kind_sums_one_window_beside_full_layers_and_refuses_two(toy) -> None:
    """Local and global attention are summed as the table sums them; layers of two different windows are refused."""
    local = Workload(name="local and global", parameters=1, layers=4, hidden_dim=64, heads=4, context_length=2048,
                     pattern=(Layer("attention", 512), Layer("attention")))  # fmt: skip
    arch = local.architecture()
    assert layers.cache_bytes(arch, context=1024, bytes_per_value=2) == 2 * 2 * 64 * (512 + 1024) * 2
    served = InferenceMemoryScenario(workload=local, hardware=Hardware.H100, context_length=1024)
    assert served.kv_cache.m_as("B") == 2 * 2 * 64 * (512 + 1024) * 2
    two = local.variant(pattern=(Layer("attention", 512), Layer("attention", 256), Layer("attention")))
    with pytest.raises(FieldError, match=r"InferenceMemoryScenario\.workload: has layers whose caches"):
        InferenceMemoryScenario(workload=two, hardware=Hardware.H100, context_length=1024)
