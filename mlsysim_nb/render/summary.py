"""One line that answers a scenario's question, for ``repr``, catalogs and the top of the HTML.

Each kind of scenario writes its own :class:`~mlsysim_nb.model.presentation.Headline`;
this is the one place that turns it into a line of text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mlsysim_nb.model.scenario import Scenario

__all__ = ["summary_line"]


def summary_line(s: Scenario) -> str:
    """The scenario's answer in one line (its headline and verdict). Never raises."""
    try:
        return str(s.headline())
    except Exception as err:  # noqa: BLE001 - a summary must never raise
        return f"{type(s).__name__} ({type(err).__name__}: {err})"
