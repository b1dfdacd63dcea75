"""A new kind of scenario touches one place: a small kind defined here shows through every display.

The kind below is a class on the package's scenario base with two fields and
two formulas, registered from this file. It is shown through the HTML, text
and Markdown reprs, ``compare()``, ``explore()`` and ``sweep()`` with no change
to the package; and no display, comparison, control or sweep module asks
which kind of scenario it holds.
"""

from __future__ import annotations

import ast
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from mlsysim_nb import Q_, FieldError, compare, explore, kinds, sweep
from mlsysim_nb.model.equations import Equations, defined
from mlsysim_nb.model.knob import knob
from mlsysim_nb.model.scenario import Scenario, derived

PACKAGE = Path(__file__).resolve().parents[2] / "mlsysim_nb"

_D = defined
TOY_EQUATIONS = Equations(
    "the toy cache equations",
    [
        _D("toy_cache", "toy_tokens * toy_bytes_per_token", "Key/value cache of the prompt.", "GB",
           symbol="M_kv", label="key/value cache", base="byte"),
        _D("toy_cache_halved", "toy_cache / 2", "The cache with 8-bit instead of 16-bit values.", "GB",
           symbol="M_kv,8", label="8-bit key/value cache", base="byte"),
    ],
)  # fmt: skip


@dataclass(frozen=True, kw_only=True, repr=False, eq=False)
class ToyCacheScenario(Scenario):
    """A key/value cache: tokens times bytes per token (a kind the package does not know)."""

    toy_tokens: int = knob(1024, kind="count", symbol="n_tok", label="cached tokens", high=2**20, control="log")
    toy_bytes_per_token: Any = knob(  # noqa: RUF009
        Q_(0.5, "MB"), kind="bytes", symbol="b_tok", label="cache bytes per token", high=1e9
    )
    name: str = dataclasses.field(default="", compare=False)

    EQUATIONS: ClassVar[Equations] = TOY_EQUATIONS

    def __post_init__(self) -> None:
        self._set_env(self._check_fields(), {})

    toy_cache = derived("toy_cache")
    toy_cache_halved = derived("toy_cache_halved")


def test_the_kind_computes_from_its_formulas() -> None:
    """1024 tokens x 0.5 MB = 512 MB; halved, 256 MB."""
    s = ToyCacheScenario()
    assert Q_(0.512, "GB") == s.toy_cache
    assert Q_(0.256, "GB") == s.toy_cache_halved


def test_the_kind_validates_through_its_declarations() -> None:
    """A bad value names the field, from the knob() declaration alone."""
    with pytest.raises(FieldError, match=r"ToyCacheScenario.toy_tokens: must be at least 1"):
        ToyCacheScenario(toy_tokens=0)
    with pytest.raises(FieldError, match=r"toy_bytes_per_token: must be in units of"):
        ToyCacheScenario(toy_bytes_per_token=Q_(1, "s"))


def test_reprs_show_the_derivation() -> None:
    """HTML, text and Markdown each show both equations with the numbers substituted."""
    s = ToyCacheScenario(name="<toy>")
    html, text, markdown = s.to_html(), s.to_text(), s.to_markdown()
    for out in (html, text, markdown):
        assert "toy_cache_halved" in out.replace("\\_", "_")
        assert "512 MB" in out
        assert "256 MB" in out
    assert "&lt;toy&gt;" in html
    assert "<toy>" not in html
    assert "toy_cache" in repr(s)


def test_compare_lines_up_the_kind() -> None:
    """compare() reads the kind's rows: doubling the tokens doubles the cache."""
    s = ToyCacheScenario()
    table = dict(compare(s, s.variant(toy_tokens=2048)).table())
    assert table["toy_cache"][1][1] == " (▲ 100 %)"


def test_explore_drives_the_kind() -> None:
    """explore() builds a control from the field's declaration; a rejected value shows and the state stays."""
    panel = explore(ToyCacheScenario())
    assert list(panel.specs) == ["toy_tokens"]
    panel.set("toy_tokens", 4096)
    assert Q_(2.048, "GB") == panel.scenario.toy_cache
    panel.set("toy_tokens", float("nan"))
    assert "was not applied" in panel.error
    assert panel.scenario.toy_tokens == 4096


def test_sweep_evaluates_the_kind() -> None:
    """sweep() evaluates the kind's formulas over a grid, vectorised."""
    result = sweep(ToyCacheScenario(), toy_tokens=[1024, 2048, 4096])
    np.testing.assert_allclose([0.512, 1.024, 2.048], result["toy_cache"].m_as("GB"))
    assert result.fits("toy_cache", hardware="T4", plus=Q_(15.5, "GB")).tolist() == [
        True,
        True,
        False,
    ]  # T4: 16 GiB = 17.18 GB


# the kinds' own folders, and the places that build scenarios as a user would (the measurement lab)
_CLIENTS = ("measure",)
#: the reference's helper functions evaluate two kinds' equations, in those kinds' notation
_CLIENT_MODULES = ("helpers.py",)
_KINDS = kinds.all_kinds()
_KIND_NAMES = {kind.name for kind in _KINDS}
_KIND_MODULES = {kind.package for kind in _KINDS}


def _inside_a_kind(path: Path) -> bool:
    return path.relative_to(PACKAGE).parts[0] == "kinds" and len(path.relative_to(PACKAGE).parts) > 2


def test_the_registry_finds_the_package_kinds() -> None:
    """The five kinds of the package are found by listing mlsysim_nb/kinds/, in catalog order."""
    assert [k.name for k in _KINDS] == [
        "TrainingStateFitScenario",
        "ActivationMemoryScenario",
        "ParallelTrainingScenario",
        "TrainingTimeScenario",
        "InferenceMemoryScenario",
    ]


@pytest.mark.parametrize(
    "path",
    sorted(
        p
        for p in PACKAGE.rglob("*.py")
        if not _inside_a_kind(p) and p.parent.name not in _CLIENTS and p.name not in _CLIENT_MODULES
    ),
    ids=lambda p: str(p.relative_to(PACKAGE)),
)
def test_no_module_outside_the_kinds_asks_which_kind(path: Path) -> None:
    """No module outside a kind's folder (display, comparison, control, sweep, catalog, exports) names a kind."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    named = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
        a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names
    }
    named |= {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    modules = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert set() == named & _KIND_NAMES
    assert [m for m in modules if any(m.startswith(package) for package in _KIND_MODULES)] == []


def test_a_kind_without_a_chart_says_so() -> None:
    """plot() of a kind that declares no memory chart is not applicable, naming why; its HTML has no chart."""
    from mlsysim_nb import NotApplicableError

    with pytest.raises(NotApplicableError, match="does not declare"):
        ToyCacheScenario().plot()
    assert "msn-chart" not in ToyCacheScenario().to_html()
