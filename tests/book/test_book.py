"""The course site (``make book``): built from the stored outputs, the student version, read in Chromium.

One build per module (the ``site`` fixture). Every page loads without a console error or a request
leaving the machine, every internal link and anchor resolves, each chapter holds every derivation and
chart the notebook stores (readable without JavaScript), no solution reaches the student site, and the
reprs keep their contrast in the light and the dark theme.
"""

from __future__ import annotations

import html
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin, urlparse

import pytest

from mlsysim_nb.course import cells
from mlsysim_nb.course.book import STUDENT_PAGE, binder_folder, binder_link, notebooks, prepare, repository
from mlsysim_nb.course.cells import MARKERS, SOLUTION
from mlsysim_nb.course.student_version import problems

try:
    from msn_book import anchor, entries, is_letter, letters, scenario_classes, symbols_in
except ImportError as err:  # Sphinx (the book extra) is missing: skip locally, fail in CI
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        raise
    pytest.skip(f"the book extra is not installed: {err}", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
CONTRAST_JS = (ROOT / "tests" / "browser" / "contrast.js").read_text(encoding="utf-8")
NOTEBOOKS = notebooks()
WIDGET = "application/vnd.jupyter.widget-view+json"
#: what a check cell prints after reading an answer (the answer itself)
RECORDED = re.compile(r"Answer recorded: (.+?)\. It ")
#: build time allowed (measured about 13 s on 2 shared cores); a build several times slower is a regression
BUILD_SECONDS = 120


_cells = cells.cells


def _shown(cell: dict[str, Any]) -> bool:
    """A stored output the student site keeps: not an answer cell's, not a graded check's."""
    meta = cells.grading(cell)
    return not (meta.get("solution") or meta.get("grade"))


def _html_outputs(path: Path) -> list[str]:
    return [
        "".join(out["data"]["text/html"])
        for cell in _cells(path)
        if cell["cell_type"] == "code" and _shown(cell)
        for out in cell.get("outputs", [])
        if "text/html" in out.get("data", {})  # a live panel's static snapshot included
    ]


def live_panels(path: Path) -> int:
    """How many live panels a notebook's kept outputs hold (each stores a static snapshot beside its view)."""
    return sum(
        1
        for cell in _cells(path)
        if cell["cell_type"] == "code" and _shown(cell)
        for out in cell.get("outputs", [])
        if WIDGET in out.get("data", {})
    )


def expected_figures(path: Path) -> tuple[int, int]:
    """(derivations, charts) in a notebook's kept stored outputs: repr containers; PNG and SVG charts."""
    derivations = sum(h.count('class="msn-wrap"') for h in _html_outputs(path))
    charts = sum(h.count("<img") + h.count("<svg") for h in _html_outputs(path))
    charts += sum(
        1
        for cell in _cells(path)
        if cell["cell_type"] == "code" and _shown(cell)
        for out in cell.get("outputs", [])
        if {"image/png", "image/svg+xml"} & set(out.get("data", {}))
    )
    return derivations, charts


def chapter(path: Path) -> str:
    """A notebook's chapter page, relative to the site's root."""
    return f"notebooks/{path.stem}.html"


def _text(page: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def _pages(site: Any) -> list[str]:
    """Every page of the site (the theme's _static holds template fragments, not pages)."""
    return sorted(p.relative_to(site.root).as_posix() for p in site.root.rglob("*.html") if "_static" not in p.parts)


# --- the build and its pages --------------------------------------------------------------------------


def test_build_is_lean_and_every_notebook_is_a_chapter(site: Any) -> None:
    """One chapter per notebook (found by glob, in course order), with its learning goals and a Binder link."""
    print(f"book build: {site.seconds:.1f} s")  # noqa: T201 - the measured build time, in -s or -rP output
    assert site.seconds < BUILD_SECONDS
    assert NOTEBOOKS
    index = site.page("index.html")
    positions = [index.find(f'href="{chapter(p)}"') for p in NOTEBOOKS]
    assert all(pos >= 0 for pos in positions), "every chapter is in the table of contents"
    assert positions == sorted(positions), "chapters come in course order"
    for path in NOTEBOOKS:
        page = site.page(chapter(path))
        assert "Learning goals" in page, path.name
        assert f'href="{binder_link(path.name)}"' in page, path.name
        assert STUDENT_PAGE in _text(page)
    assert binder_folder().startswith("https://mybinder.org/v2/gh/")
    assert "/".join(repository().split("/")[-2:]) in binder_folder()


def test_front_page_guide_and_differences_are_included(site: Any) -> None:
    """The README's introduction, the instructor's guide and the README's differences, from their files."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    intro = readme.split("## Quick start")[0].split("\n\n")[2]  # the paragraph after the badge
    assert " ".join(intro.split()[:8]).replace("`", "") in _text(site.page("index.html"))
    guide = (ROOT / "docs" / "instructors.md").read_text(encoding="utf-8")
    assert guide.splitlines()[0].lstrip("# ") in _text(site.page("docs/instructors.html"))
    rows = re.findall(r"^\| (D\d+) \|", readme.split("## Differences from")[1], flags=re.MULTILINE)
    differences = _text(site.page("differences.html"))
    assert rows
    assert all(row in differences for row in rows)


def test_glossary_is_generated_from_the_notation(site: Any) -> None:
    """One entry per symbol of the kinds' notation tables, with the course's core symbols among them."""
    page = site.page("glossary.html")
    symbols = {q.symbol.text() for cls in scenario_classes() for q in cls.notation().values()}  # type: ignore[attr-defined]
    assert {e.text for e in entries()} == symbols
    for text in symbols:
        assert f'id="{anchor(text)}"' in page, text
    for core in ["P", "b_val", "b_opt", "s", "b", "h", "a", "L", "k", "t", "p", "m"]:
        assert core in symbols, core
    first = page.index("Conditions and numbers the equations write")
    for entry in entries():
        assert (page.index(f'id="{anchor(entry.text)}"') < first) == is_letter(entry), entry.text


@pytest.mark.parametrize(
    ("latex", "symbols"),
    [
        ("P", ["P"]),
        (r"2 b_\text{val} + b_\text{opt}", ["b_val", "b_opt"]),
        (r"b_{\text{val}} \times 4", ["b_val"]),
        (r"\kappa_\text{tok} \cdot s", ["κ_tok", "s"]),
        (r"B' \le B_\mathrm{lim}", ["B′", "B_lim"]),
        (r"M_{\mathrm{ad,g}}", ["M_ad,g"]),
    ],
)
def test_symbols_in_formulas(latex: str, symbols: list[str]) -> None:
    """The symbols an inline formula writes, as the notation writes them."""
    assert list(symbols_in(latex)) == symbols


def test_longer_letters_are_read_first() -> None:
    """A letter of several characters the glossary holds (BW) is one symbol, not B then W."""
    assert "BW" in letters()
    assert list(symbols_in(r"BW_\text{mem} \cdot t", letters())) == ["BW_mem", "t"]


def test_every_chapter_links_its_first_symbols_to_the_glossary(site: Any) -> None:
    """Each symbol is linked once per chapter, at its first formula, to its glossary entry."""
    known = {anchor(e.text) for e in entries()}
    for path in NOTEBOOKS:
        targets = re.findall(r'class="[^"]*msn-term[^"]*" href="\.\./glossary\.html#([^"]+)"', site.page(chapter(path)))
        targets += re.findall(r'href="\.\./glossary\.html#([^"]+)"[^>]*class="[^"]*msn-term', site.page(chapter(path)))
        assert targets, path.name
        assert len(targets) == len(set(targets)), f"{path.name}: a symbol linked twice"
        assert set(targets) <= known


# --- the student version ------------------------------------------------------------------------------


def test_student_site_holds_no_solution(site: Any) -> None:
    """No solution, model answer, hidden test or marker anywhere in the site, and no answer a check echoed."""
    assert problems([site.root]) == []
    for path in site.root.rglob("*"):
        if path.is_file() and path.suffix in (".html", ".js", ".txt", ".ipynb"):
            text = path.read_text(encoding="utf-8", errors="replace")
            assert not [m for m in MARKERS if m in text], path
            assert "Model answer." not in _text(text), path
    for nb in NOTEBOOKS:
        page = _text(site.page(chapter(nb)))
        echoed = [
            value
            for cell in _cells(nb)
            for out in cell.get("outputs", [])
            for value in RECORDED.findall("".join(out.get("text", "")))
        ]
        for value in echoed:
            assert f"Answer recorded: {value}" not in page, nb.name
            if len(value) >= 4 and re.search(r"\d\.\d", value):
                assert value not in page, f"{nb.name}: the solution value {value} is shown"


def test_instructor_version_keeps_the_solutions(tmp_path: Path) -> None:
    """``make book-solutions``' source: the notebooks as they are, solutions and check outputs included."""
    chapters = prepare(tmp_path / "src", solutions=True)
    assert [c.name for c in chapters] == [p.name for p in NOTEBOOKS]
    first = chapters[0].read_text(encoding="utf-8")
    assert SOLUTION.begin in first
    assert "Answer recorded" in first


# --- in the browser -----------------------------------------------------------------------------------


def _ids(page: str) -> set[str]:
    return set(re.findall(r'\sid="([^"]+)"', page))


@pytest.mark.browser
def test_every_page_loads_and_every_internal_link_resolves(site: Any, browser: Any) -> None:
    """Crawl every page in Chromium: no console error, nothing fetched off the machine, no broken link."""
    context = browser.new_context()
    outside: list[str] = []

    def route(r: Any) -> None:
        if urlparse(r.request.url).hostname == "127.0.0.1":
            r.continue_()
        else:
            outside.append(r.request.url)
            r.fulfill(status=204, body="")

    context.route("**/*", route)
    errors: list[str] = []
    broken: list[str] = []
    ids: dict[str, set[str]] = {}
    for relative in _pages(site):
        page = context.new_page()
        page.on("console", lambda m, where=relative: errors.append(f"{where}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e, where=relative: errors.append(f"{where}: {e}"))
        page.goto(site.url + relative, wait_until="load")
        hrefs = page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)")
        page.close()
        for href in hrefs:
            parsed = urlparse(href)
            if parsed.hostname != "127.0.0.1" or parsed.scheme not in ("http", "https"):
                continue
            target = unquote(parsed.path).removeprefix("/") or "index.html"
            if target.endswith("/"):
                target += "index.html"
            file = site.root / target
            if not file.is_file():
                broken.append(f"{relative}: {href}")
                continue
            if parsed.fragment and file.suffix == ".html":
                found = ids.setdefault(target, _ids(file.read_text(encoding="utf-8")))
                if unquote(parsed.fragment) not in found:
                    broken.append(f"{relative}: {href}")
    context.close()
    assert len(_pages(site)) >= len(NOTEBOOKS) + 5
    assert errors == [], "\n".join(errors)
    assert outside == []
    assert broken == []


@pytest.mark.browser
def test_derivations_and_charts_read_without_javascript(site: Any, browser: Any) -> None:
    """Each chapter shows every derivation and chart the notebook stores, with JavaScript off."""
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    total = 0
    for path in NOTEBOOKS:
        derivations, charts = expected_figures(path)
        page.goto(site.url + chapter(path))
        shown = page.evaluate(
            "() => [document.querySelectorAll('.cell_output .msn-wrap').length,"
            " document.querySelectorAll('.cell_output img, .cell_output svg').length,"
            " Array.from(document.querySelectorAll('.cell_output .msn-wrap'))"
            ".filter(e => e.getBoundingClientRect().height > 0).length]"
        )
        assert shown == [derivations, charts, derivations], path.name
        total += derivations + charts
        panels = live_panels(path)
        if panels:
            assert page.locator(".admonition.note", has_text="Live panel").count() == panels, path.name
            # each live panel shows its snapshot: the derivation and the chart at its values, not one line
            snapshots = page.locator(".cell_output .msn-wrap", has=page.locator(".msn-panel-snapshot"))
            assert snapshots.count() == panels, path.name
            # every snapshot draws its memory bar (a kind with a second chart, time by cause, draws that too)
            charted = snapshots.filter(has=page.locator("img.msn-chart"))
            assert charted.count() == panels, path.name
    context.close()
    assert total > len(NOTEBOOKS)


@pytest.mark.browser
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_reprs_keep_their_contrast(site: Any, browser: Any, artifacts: Path, theme: str) -> None:
    """Every text of every derivation reaches 4.5:1 in the book's light and dark themes."""
    context = browser.new_context(viewport={"width": 1200, "height": 900}, color_scheme=theme)
    context.add_init_script(f"localStorage.setItem('mode', '{theme}'); localStorage.setItem('theme', '{theme}');")
    page = context.new_page()
    checked = 0
    for path in NOTEBOOKS:
        if not expected_figures(path)[0]:
            continue
        page.goto(site.url + chapter(path))
        assert page.evaluate("() => document.documentElement.dataset.theme") == theme
        page.evaluate("() => document.querySelectorAll('.msn-wrap details').forEach(d => d.open = true)")
        results = page.evaluate(CONTRAST_JS)
        low = [r for r in results if r["ratio"] < 4.5]
        assert low == [], f"{path.name} ({theme})"
        checked += len(results)
        if checked == len(results):
            page.locator(".msn-wrap").first.screenshot(path=str(artifacts / f"book-repr-{theme}.png"))
    context.close()
    assert checked > 100


def test_links_resolve_relative_to_pages() -> None:
    """The crawler's resolution of a relative link (a guard on the test itself)."""
    assert urljoin("http://127.0.0.1:1/notebooks/a.html", "../glossary.html#sym-P").endswith("/glossary.html#sym-P")


def test_chapters_read_as_pages(site: Any) -> None:
    """A chapter reads as a page: figures described, the prediction asked for in words, no scolding.

    Every figure has alt text (not its file name); no page scolds a reader for a guess it cannot record.
    """
    import re

    chapters = sorted((site.root / "notebooks").glob("*.html"))
    assert chapters
    for path in chapters:
        text = path.read_text(encoding="utf-8")
        alts = re.findall(r'<img[^>]*\balt="([^"]*)"', text)
        assert [a for a in alts if not a.strip() or a.endswith((".png", ".svg"))] == [], path.name
        assert "You made no guess" not in text, path.name
        assert "Predict first.</strong>" in text, path.name


# --- the book's own pages: tables, notation, API, search, dark theme, its environment ----------------


def test_markdown_outputs_render_as_tables(site: Any) -> None:
    """Chapter 9's walk summary (a Markdown output) is an HTML table, not its Markdown source."""
    page = site.page("notebooks/09_how_gpt3_fits.html")
    text = _text(page)
    assert "| 0. one device | 1 |" not in text  # a row as Markdown source (the cell's code builds it, never writes it)
    assert re.search(r"<th[^>]*>\s*(<p>)?state per device", page)
    assert "<td><p>57.01 GB (53.10 GiB)</p></td>" in page  # step 4, Korthikanti's Table 3: 43.75 + 13.26 GB


def test_glossary_says_what_a_unitless_name_holds(site: Any) -> None:
    """adapter_mode is true or false, attention a choice, batch_size a whole number: none is "a plain number"."""
    text = _text(site.page("glossary.html"))
    assert "adapters are configured ( adapter_mode , true or false)" in text
    assert "attention kernel ( attention , a choice: eager, fused)" in text
    assert "batch size ( batch_size , a whole number)" in text
    assert "adapter_mode , a plain number" not in text


def test_api_reference_is_a_page_per_kind(site: Any) -> None:
    """The API page links one page per kind the registry finds; each holds its class and its equations."""
    index = site.page("api.html")
    for number, cls in enumerate(scenario_classes()):
        relative = f"api/{number:02d}_{cls.__name__}.html"
        assert relative in index, relative
        page = site.page(relative)
        assert f'id="mlsysim_nb.{cls.__name__}"' in page
        assert "msn-equations" in page
        for name in cls.EQUATIONS.names:  # type: ignore[attr-defined]
            assert f'<span class="pre">{name}</span>' in page, f"{cls.__name__}.{name}"
    assert 'id="mlsysim_nb.TrainingStateFitScenario"' not in index
    assert len(index) < len(site.page(f"api/00_{scenario_classes()[0].__name__}.html")) * 2


@pytest.mark.browser
def test_search_results_show_excerpts(site: Any, browser: Any) -> None:
    """A search lists pages with an excerpt of their own text around the word, not the theme's buttons."""
    context = browser.new_context()
    page = context.new_page()
    page.goto(site.url + "search.html?q=recomputation")
    excerpts = page.locator("#search-results li p.context")
    excerpts.first.wait_for(timeout=30_000)
    page.wait_for_timeout(1000)
    texts = excerpts.all_text_contents()
    context.close()
    assert len(texts) >= 3
    assert not [t for t in texts if "System Settings" in t or "Light Dark" in t]
    assert sum("recomputation" in t.lower() for t in texts) >= len(texts) // 2


@pytest.mark.browser
def test_charts_and_symbols_are_not_framed_or_cut(site: Any, browser: Any) -> None:
    """Dark theme: no grey frame around a repr or its chart; the glossary's D_step keeps its D's left edge."""
    context = browser.new_context(viewport={"width": 1200, "height": 900}, color_scheme="dark")
    context.add_init_script("localStorage.setItem('mode', 'dark'); localStorage.setItem('theme', 'dark');")
    page = context.new_page()
    page.goto(site.url + chapter(NOTEBOOKS[0]))
    page.wait_for_function("() => document.documentElement.dataset.theme === 'dark'")
    frames = page.evaluate(
        "() => Array.from(document.querySelectorAll('.cell_output img.msn-chart')).map(i => {"
        " const o = i.closest('.output'); const a = getComputedStyle(i), b = getComputedStyle(o);"
        " return [a.paddingLeft, a.filter, b.paddingLeft, b.backgroundColor]; })"
    )
    assert frames
    assert all(f == ["0px", "none", "0px", "rgba(0, 0, 0, 0)"] for f in frames), frames
    page.goto(site.url + "glossary.html")
    overflow = page.locator("dt#sym-D_step .msn-math").evaluate("e => getComputedStyle(e).overflow")
    context.close()
    assert overflow == "visible"


def test_book_builds_outside_the_students_lab() -> None:
    """`make book` installs the book extra (nbgrader with it) into .venv-book, never into the lab's .venv."""
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^BOOK_VENV \?= \.venv-book$", make, re.MULTILINE)
    assert re.search(
        r"^book: \$\(BOOK_VENV\)/\.book-installed\n\t\$\(BOOK_BIN\)/python -m mlsysim_nb\.course\.book ",
        make,
        re.MULTILINE,
    )
    assert re.search(
        r'^\$\(BOOK_VENV\)/\.book-installed:.*\n\t\$\(BOOK_BIN\)/python -m pip install --quiet -e "\.\[book\]"',
        make,
        re.MULTILINE,
    )
    lab = re.search(r"^\$\(VENV\)/\.lab-installed:.*\n\t(.*)$", make, re.MULTILINE)
    assert lab is not None
    assert lab.group(1).endswith('-e ".[lab]"')
