"""The course site's Sphinx extension: notation and equations from the package, and first-use links.

* ``notation-glossary``: the glossary of the course's notation, one entry per symbol, from the scenario
  kinds' own notation tables (``Scenario.notation()``: the records', the fields' and the equations' rows),
  never retyped. Each entry's anchor is ``sym-`` and the symbol's text (case kept: ``P`` and ``p`` differ).
* ``kind-equations KIND``: every equation a kind defines, from its ``EQUATIONS`` table, in LaTeX.
* in every chapter (a document under ``notebooks/``), the first inline math that writes a glossary
  symbol links to the symbol's entry.
* math as MathML, converted at build time (``latex2mathml``): formulas read without JavaScript, and the
  site loads no script or font for them.
"""

from __future__ import annotations

import functools
import html
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

if TYPE_CHECKING:
    from sphinx.application import Sphinx

GLOSSARY = "glossary"
CHAPTERS = "notebooks/"

#: one symbol in LaTeX: a letter (or a symbol's longer letter, BW), or a Greek command, primes, and a subscript
_SYMBOL_PATTERN = (
    r"(?P<letter>\\[A-Za-z]+|{longer}[A-Za-z])(?P<prime>(?:′|')*)"
    r"(?:_(?:\{{(?P<braced>(?:[^{{}}]|\{{[^{{}}]*\}})*)\}}|\\(?:text|mathrm)\{{(?P<text>[^{{}}]*)\}}|(?P<one>[A-Za-z0-9])))?"
)
_FORMATTING = re.compile(r"\\(?:text|mathrm|mathit|operatorname)\{([^{}]*)\}")


@dataclass(frozen=True)
class Entry:
    """One symbol of the glossary and every name written with it."""

    text: str  # the symbol as text, "b_val"
    letter: str  # its letter, "b"
    latex: str
    names: tuple[tuple[str, str, str], ...]  # (name, label, base unit or what it holds)
    kinds: tuple[str, ...]


def scenario_classes() -> list[type]:
    """Every scenario kind's class, in catalog order."""
    from mlsysim_nb.kinds import all_kinds

    return [kind.load() for kind in all_kinds()]


@functools.cache
def entries() -> tuple[Entry, ...]:
    """The glossary: every symbol in the kinds' notation, its names, labels, units and kinds."""
    rows: dict[str, dict[str, Any]] = {}
    for cls in scenario_classes():
        for name, quantity in cls.notation().items():  # type: ignore[attr-defined]
            text = quantity.symbol.text()
            row = rows.setdefault(
                text, {"letter": quantity.symbol.letter, "latex": quantity.symbol.latex(), "names": {}, "kinds": []}
            )
            row["names"].setdefault(name, (name, quantity.label, what_it_is(cls, name, quantity.base)))
            if cls.__name__ not in row["kinds"]:
                row["kinds"].append(cls.__name__)
    out = [Entry(t, r["letter"], r["latex"], tuple(r["names"].values()), tuple(r["kinds"])) for t, r in rows.items()]
    return tuple(sorted(out, key=lambda e: (e.text.casefold(), e.text)))


def anchor(text: str) -> str:
    """The glossary anchor of a symbol: ``sym-`` and its text, other characters as their hex code."""
    return "sym-" + re.sub(r"[^A-Za-z0-9_]", lambda m: f"-{ord(m.group()):x}", text)


def _letter(command: str) -> str:
    if not command.startswith("\\"):
        return command
    name = command[1:]
    case = "CAPITAL" if name[0].isupper() else "SMALL"
    try:
        return unicodedata.lookup(f"GREEK {case} LETTER {name.upper()}")
    except KeyError:
        return ""


@functools.cache
def _token(longer: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "".join(f"{re.escape(letter)}|" for letter in sorted(longer, key=len, reverse=True))
    return re.compile(_SYMBOL_PATTERN.format(longer=alternatives))


def letters() -> tuple[str, ...]:
    """The glossary's letters of more than one character (``BW``), read before single letters."""
    return tuple(sorted({e.letter for e in entries() if len(e.letter) > 1 and e.letter.isascii()}))


def symbols_in(latex: str, longer: Iterable[str] = ()) -> Iterator[str]:
    r"""The symbols an inline formula writes, as text (``b_\text{val}`` -> ``b_val``), in reading order."""
    for m in _token(tuple(longer)).finditer(latex):
        letter = _letter(m.group("letter"))
        if not letter:
            continue
        prime = "′" * len(m.group("prime").replace("′", "'"))
        sub = m.group("braced") or m.group("text") or m.group("one") or ""
        sub = _FORMATTING.sub(r"\1", sub).replace("\\,", " ").replace("{", "").replace("}", "").strip()
        yield f"{letter}{prime}_{sub}" if sub else f"{letter}{prime}"


@functools.cache
def _example(cls: type) -> Any:
    """One scenario of kind ``cls`` from the catalog (what its flags and choices hold), or ``None``."""
    from mlsysim_nb import Scenarios

    names = Scenarios.names(cls)
    return Scenarios[names[0]] if names else None


def what_it_is(cls: type, name: str, base: str) -> str:
    """A name's unit, or what it holds when it has none: a choice (with its options), yes or no, a plain number."""
    if base:
        return base
    from mlsysim_nb.model.knob import knobs

    declared = knobs(cls).get(name)
    if declared is not None and declared.kind == "choice":
        if all(isinstance(value, bool) for _, value in declared.choices):
            return "true or false"
        values = [str(value) for _, value in declared.choices if isinstance(value, str)]
        return "a choice: " + ", ".join(values) if values else "a choice"
    try:
        value = getattr(_example(cls), name)
    except Exception:  # noqa: BLE001 - a property that needs an argument or another input: a number
        value = None
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, str):
        return "a choice"
    if declared is not None and declared.kind == "count":
        return "a whole number"
    return "a plain number"


def is_letter(entry: Entry) -> bool:
    """A symbol proper (``P``, ``b_val``, ``κ_tok``), not a condition (``[E > 0]``) or a number (``4``)."""
    return entry.letter[:1].isalpha()


def _item(entry: Entry) -> nodes.definition_list_item:
    term = nodes.term("", "", ids=[anchor(entry.text)])
    term += nodes.math(entry.latex, entry.latex)
    term += nodes.Text("  ")
    term += nodes.literal(entry.text, entry.text)
    body = nodes.definition()
    for name, label, base in entry.names:
        para = nodes.paragraph()
        para += nodes.Text(f"{label} (")
        para += nodes.literal(name, name)
        para += nodes.Text(f", {base})")
        body += para
    used = nodes.paragraph(classes=["msn-kinds"])
    used += nodes.Text("In " + ", ".join(entry.kinds) + ".")
    body += used
    return nodes.definition_list_item("", term, body)


class NotationGlossary(SphinxDirective):
    """The glossary of every symbol, generated from the package's notation tables."""

    def run(self) -> list[nodes.Node]:
        """One definition-list item per symbol; then the conditions and numbers the equations write."""
        symbols = nodes.definition_list(classes=["msn-glossary", "glossary"])
        others = nodes.definition_list(classes=["msn-glossary", "glossary"])
        for entry in entries():
            (symbols if is_letter(entry) else others).append(_item(entry))
        out: list[nodes.Node] = [symbols]
        if len(others):
            out += [nodes.rubric(text="Conditions and numbers the equations write"), others]
        return out


def _table(header: list[str], rows: list[list[nodes.Node]]) -> nodes.table:
    table = nodes.table(classes=["msn-equations"])
    group = nodes.tgroup(cols=len(header))
    table += group
    for _ in header:
        group += nodes.colspec(colwidth=1)
    head = nodes.thead()
    row = nodes.row()
    for title in header:
        row += nodes.entry("", nodes.paragraph(text=title))
    head += row
    group += head
    body = nodes.tbody()
    for cells in rows:
        row = nodes.row()
        for cell in cells:
            row += nodes.entry("", cell)
        body += row
    group += body
    return table


class KindEquations(SphinxDirective):
    """Every equation of one kind (its class name as the argument), from its ``EQUATIONS``."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        """A table: the property, its equation in LaTeX (one line per case), its unit and its description."""
        cls = next(c for c in scenario_classes() if c.__name__ == self.arguments[0])
        equations = cls.EQUATIONS  # type: ignore[attr-defined]
        symbols = cls.symbols()  # type: ignore[attr-defined]
        rows = []
        for name in equations.names:
            formula = equations.formula(name)
            lhs = symbols[name].latex()
            cell = nodes.paragraph()
            for index, case in enumerate(formula.cases):
                if index:
                    cell += nodes.inline("", "", nodes.raw("", "<br/>", format="html"))
                rhs = formula.render(symbols, "latex", case=case)
                cell += nodes.math("", f"{lhs} = {rhs}")
                if formula.is_branching:
                    cell += nodes.Text(f" ({case.label})")
            rows.append(
                [
                    nodes.paragraph("", "", nodes.literal(name, name)),
                    cell,
                    nodes.paragraph(text=formula.unit or "plain number"),
                    nodes.paragraph(text=formula.doc),
                ]
            )
        return [_table(["property", "equation", "unit", "what it is"], rows)]


def _inside(node: nodes.Node, kinds: tuple[type, ...]) -> bool:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, kinds):
            return True
        parent = parent.parent
    return False


def link_first_uses(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """In a chapter, wrap the first inline math writing each glossary symbol in a link to its entry."""
    if not docname.startswith(CHAPTERS):
        return
    known = {e.text: e for e in entries()}
    uri = app.builder.get_relative_uri(docname, GLOSSARY)
    seen: set[str] = set()
    for math in list(doctree.findall(nodes.math)):
        if _inside(math, (nodes.reference, nodes.title, nodes.literal_block, nodes.raw)):
            continue
        new = [s for s in symbols_in(math.astext(), letters()) if s in known and s not in seen]
        if not new:
            continue
        first = new[0]
        seen.add(first)
        labels = "; ".join(label for _, label, _ in known[first].names)
        link = nodes.reference(
            "", "", refuri=f"{uri}#{anchor(first)}", internal=True, reftitle=f"{first}: {labels}", classes=["msn-term"]
        )
        math.replace_self(link)
        link += math


def mathml(latex: str, *, display: bool) -> str:
    """A formula as MathML; one latex2mathml cannot read stays its LaTeX source, as code."""
    from latex2mathml.converter import convert

    try:
        return convert(latex, display="block" if display else "inline")
    except Exception:  # noqa: BLE001 - any formula the converter refuses is shown as written
        return f'<code class="msn-tex">{html.escape(latex)}</code>'


def _visit_math(translator: Any, node: nodes.math) -> None:
    translator.body.append(f'<span class="math msn-math">{mathml(node.astext(), display=False)}</span>')
    raise nodes.SkipNode


def _visit_math_block(translator: Any, node: nodes.math_block) -> None:
    translator.body.append(f'<div class="math msn-math">{mathml(node.astext(), display=True)}</div>')
    raise nodes.SkipNode


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the directives, the first-use links and the MathML renderer."""
    app.add_html_math_renderer("msn_mathml", (_visit_math, None), (_visit_math_block, None))
    app.add_directive("notation-glossary", NotationGlossary)
    app.add_directive("kind-equations", KindEquations)
    app.connect("doctree-resolved", link_first_uses)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
