"""The standalone HTML page of a scenario in headless Chromium, light and dark: readable everywhere."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.browser

CONTRAST_JS = (Path(__file__).parent / "contrast.js").read_text(encoding="utf-8")

# JupyterLab 4's theme variables (light and dark), as a notebook page defines them
THEMES = {
    "light": {
        "attr": "true",
        "vars": {
            "--jp-layout-color0": "#ffffff",
            "--jp-layout-color2": "#eeeeee",
            "--jp-content-font-color0": "rgba(0, 0, 0, 1)",
            "--jp-border-color2": "#e0e0e0",
        },
        "bg": "#ffffff",
    },
    "dark": {
        "attr": "false",
        "vars": {
            "--jp-layout-color0": "#111111",
            "--jp-layout-color2": "#424242",
            "--jp-content-font-color0": "rgba(255, 255, 255, 1)",
            "--jp-border-color2": "#616161",
        },
        "bg": "#111111",
    },
}


@pytest.fixture(scope="module")
def page_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The CLI's standalone page of a scenario with adapters and activations."""
    out = tmp_path_factory.mktemp("page") / "scenario.html"
    cmd = [sys.executable, "-m", "mlsysim_nb", "show", "Llama3_8BLoraOnH100", "--html", str(out)]
    subprocess.run(cmd, check=True, capture_output=True)
    return out


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_page_renders_with_contrast(browser: Any, page_file: Path, artifacts: Path, theme: str) -> None:
    """Every text element reaches 4.5:1 against its rendered background; a screenshot is kept."""
    spec = THEMES[theme]
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(page_file.as_uri())
    styles = ";".join(f"{k}: {v}" for k, v in spec["vars"].items())
    page.evaluate(
        "([attr, styles, bg]) => { document.body.setAttribute('data-jp-theme-light', attr);"
        " document.body.setAttribute('style', styles + '; background:' + bg);"
        " document.querySelectorAll('details').forEach(d => d.open = true); }",
        [spec["attr"], styles, spec["bg"]],
    )
    page.screenshot(path=str(artifacts / f"static-repr-{theme}.png"), full_page=True)
    results = page.evaluate(CONTRAST_JS)
    page.close()
    assert len(results) > 100
    low = [r for r in results if r["ratio"] < 4.5]
    assert low == []
    assert errors == []


def test_chart_image_loads(browser: Any, page_file: Path) -> None:
    """The embedded PNG decodes to a real image with alt text."""
    page = browser.new_page()
    page.goto(page_file.as_uri())
    size = page.evaluate("() => { const i = document.querySelector('img'); return [i.naturalWidth, i.alt]; }")
    page.close()
    assert size[0] > 300
    assert "capacity line" in size[1]
