"""The rich-display protocol (``_repr_mimebundle_``) shared by scenarios, records and catalogs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mlsysim_nb.options import OPTIONS

if TYPE_CHECKING:
    from mlsysim_nb.model.scenario import Scenario

__all__ = ["RichRepr", "scenario_bundle"]


def scenario_bundle(scenario: Scenario) -> dict[str, str]:
    """text/plain, text/markdown and (unless display_style is "text") text/html for a scenario."""
    from mlsysim_nb.render.text import scenario_markdown, scenario_text

    bundle = {"text/plain": scenario_text(scenario), "text/markdown": scenario_markdown(scenario)}
    if OPTIONS["display_style"] == "html":
        from mlsysim_nb.render.html import scenario_html

        bundle["text/html"] = scenario_html(scenario, chart=OPTIONS["chart"])
    return bundle


class RichRepr:
    """Mixin: ``_repr_mimebundle_`` from ``_repr_text_()`` and ``_repr_html_()``."""

    def _repr_text_(self) -> str:
        return repr(self)

    def _repr_html_(self) -> str | None:
        return None

    def _markdown_rows(self) -> tuple[list[str], list[list[str]]] | None:
        return None

    def _repr_markdown_(self) -> str | None:
        table = self._markdown_rows()
        if table is None:
            return None
        from mlsysim_nb.render.text import markdown_table

        return markdown_table(*table)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        bundle = {"text/plain": self._repr_text_()}
        markdown = self._repr_markdown_()
        if markdown is not None:
            bundle["text/markdown"] = markdown
        if OPTIONS["display_style"] == "html":
            html = self._repr_html_()
            if html is not None:
                bundle["text/html"] = html
        return bundle
