"""Adding a kind is adding a folder: a toy kind written to a temporary folder shows everywhere.

The toy is a package of four files (``__init__.py``, ``physics.py``, ``model.py``, ``cases.py``) written
under ``tmp_path`` and made visible with :func:`mlsysim_nb.kinds.register_kind_path`. No file of the package
is edited: the package exports its class, the catalog lists its case, the charts take its colour, and every
repr, ``compare()``, ``explore()`` and ``sweep()`` shows it.
"""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest

import mlsysim_nb
from mlsysim_nb import Q_, Scenarios, compare, explore, kinds, sweep
from mlsysim_nb.render.charts import part_color

_FILES = {
    "__init__.py": """
        KIND = "ToyPromptCacheScenario"
        COLORS = {"prompt cache": "#117733"}
    """,
    "physics.py": """
        from mlsysim_nb.model.equations import Equations, defined

        EQUATIONS = Equations(
            "the prompt-cache equations",
            [
                defined(
                    "toy_prompt_cache", "toy_prompt_tokens * toy_prompt_bytes", "Cache of the prompt.", "GB",
                    symbol="M_p", label="prompt cache", base="byte",
                )
            ],
        )
    """,
    "model.py": """
        import dataclasses
        from dataclasses import dataclass
        from typing import Any, ClassVar

        from mlsysim_nb.model.equations import Equations
        from mlsysim_nb.model.scenario import Scenario, derived
        from mlsysim_nb.model.knob import knob
        from mlsysim_nb.model.presentation import MemoryChart
        from mlsysim_nb.units import Q_

        from mlsysim_nb.kinds.toy.physics import EQUATIONS


        @dataclass(frozen=True, kw_only=True, repr=False, eq=False)
        class ToyPromptCacheScenario(Scenario):
            '''A prompt's key/value cache: tokens times bytes per token.'''

            toy_prompt_tokens: int = knob(
                1000, kind="count", symbol="n_p", label="prompt tokens", high=2**20, control="log",
                help="tokens of the prompt whose keys and values are cached",
            )
            toy_prompt_bytes: Any = knob(
                Q_(1, "MB"), kind="bytes", symbol="b_p", label="cache bytes per prompt token", high=1e9
            )
            name: str = dataclasses.field(default="", compare=False)
            description: str = dataclasses.field(default="", compare=False)

            EQUATIONS: ClassVar[Equations] = EQUATIONS

            def __post_init__(self) -> None:
                self._set_env(self._check_fields(), {})

            toy_prompt_cache = derived("toy_prompt_cache")

            def memory_chart(self) -> MemoryChart:
                return MemoryChart((("prompt", {"prompt cache": self.magnitude("toy_prompt_cache")}),))
    """,
    "cases.py": """
        from mlsysim_nb.model.cases import case


        def _toy(**fields):
            from mlsysim_nb.kinds.toy.model import ToyPromptCacheScenario

            return ToyPromptCacheScenario(**fields)


        CASES = {"ToyPrompt4kTokens": case(_toy, "A 4,000-token prompt", "4,000 tokens of 1 MB.", toy_prompt_tokens=4000)}
    """,
}


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """The toy kind's folder, seen by the registry for this module's tests only."""
    root = tmp_path_factory.mktemp("course_kinds")
    (root / "toy").mkdir()
    for name, text in _FILES.items():
        (root / "toy" / name).write_text(textwrap.dedent(text), encoding="utf-8")
    saved = list(kinds.__path__)
    kinds.register_kind_path(root)
    yield mlsysim_nb.ToyPromptCacheScenario
    kinds.__path__[:] = saved
    for module in [m for m in sys.modules if m.startswith("mlsysim_nb.kinds.toy")]:
        del sys.modules[module]


def test_the_package_exports_the_kind(toy) -> None:
    """`mlsysim_nb.<KIND>` is the class in the folder's model.py; it is in __all__ and dir()."""
    assert toy.__module__ == "mlsysim_nb.kinds.toy.model"
    assert "ToyPromptCacheScenario" in dir(mlsysim_nb)
    assert kinds.find("ToyPromptCacheScenario").load() is toy


def test_the_catalog_lists_its_case(toy) -> None:
    """Scenarios finds the case in cases.py, after the package's 42; 4,000 tokens x 1 MB = 4 GB."""
    assert list(Scenarios)[-1] == "ToyPrompt4kTokens"
    assert len(Scenarios) == 54  # the package's 53 and the toy's
    case = Scenarios["ToyPrompt4kTokens"]
    assert isinstance(case, toy)
    assert Q_(4, "GB") == case.toy_prompt_cache
    assert Scenarios.ToyPrompt4kTokens is case


def test_every_repr_shows_it(toy) -> None:
    """repr, HTML (with its chart), text and Markdown each show the formula and its 4 GB."""
    s = Scenarios["ToyPrompt4kTokens"]
    for out in (repr(s), s._repr_html_(), s.to_text(), s.to_markdown()):
        assert "toy_prompt_cache" in out.replace("\\_", "_")
        assert "4 GB" in out
    assert "msn-chart" in s._repr_html_()


def test_its_fields_and_equations_are_written_once(toy) -> None:
    """The equations render in the knobs' symbols; the help is the HTML row's tooltip and the control's."""
    assert "M_p = n_p · b_p" in toy.toy_prompt_cache.__doc__
    assert "toy_prompt_tokens : n_p" in toy.__doc__
    s = Scenarios["ToyPrompt4kTokens"]
    html = s.to_html(chart=False)
    assert (
        '<tr title="tokens of the prompt whose keys and values are cached"><th class="msn-name">toy_prompt_tokens'
        in html
    )
    assert "cache bytes per prompt token" in html
    panel = explore(s)
    assert panel.specs["toy_prompt_tokens"].help == "tokens of the prompt whose keys and values are cached"
    assert panel.controls["toy_prompt_tokens"].tooltip == "tokens of the prompt whose keys and values are cached"


def test_the_charts_take_its_colour(toy) -> None:
    """A part named in the folder's COLORS takes that colour in the chart and the panel."""
    assert part_color("prompt cache") == "#117733"


def test_compare_explore_and_sweep_show_it(toy) -> None:
    """compare() marks the doubled cache; explore() drives the field; sweep() evaluates the grid."""
    s = Scenarios["ToyPrompt4kTokens"]
    table = dict(compare(s, s.variant(toy_prompt_tokens=8000)).table())
    assert table["toy_prompt_cache"][1][1] == " (▲ 100 %)"
    panel = explore(s)
    assert "toy_prompt_tokens" in panel.specs
    panel.set("toy_prompt_tokens", 2000)
    assert Q_(2, "GB") == panel.scenario.toy_prompt_cache
    result = sweep(s, toy_prompt_tokens=[1000, 2000, 4000])
    np.testing.assert_allclose([1, 2, 4], result["toy_prompt_cache"].m_as("GB"))


def test_a_case_name_two_kinds_give_is_refused(toy, tmp_path) -> None:
    """A second folder whose cases reuse a name is refused, naming the name; the catalog is unchanged after."""
    (tmp_path / "toy_twin").mkdir()
    (tmp_path / "toy_twin" / "__init__.py").write_text('KIND = "ToyTwinScenario"\n', encoding="utf-8")
    (tmp_path / "toy_twin" / "cases.py").write_text(
        "CASES = {'ToyPrompt4kTokens': lambda catalog: None}\n", encoding="utf-8"
    )
    before = list(kinds.__path__)
    kinds.register_kind_path(tmp_path)
    try:
        with pytest.raises(ValueError, match="ToyPrompt4kTokens"):
            kinds.all_cases()
    finally:
        kinds.__path__[:] = before
        sys.modules.pop("mlsysim_nb.kinds.toy_twin", None)
        sys.modules.pop("mlsysim_nb.kinds.toy_twin.cases", None)
    assert len(Scenarios) == 54  # the package's 53 and the toy's
