"""The command line: `show`, `list`, and `--html` that says in one line why it cannot write."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mlsysim_nb import Scenarios
from mlsysim_nb.__main__ import main

NAME = "Gpt2Fp32AdamOnH100"


def test_show_writes_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`show NAME --html FILE` prints the derivation and writes a standalone page with its chart."""
    page = tmp_path / "page.html"
    assert main(["show", NAME, "--html", str(page)]) == 0
    out, err = capsys.readouterr()
    assert "GPT-2" in out
    assert "M_w = P · b_val" in out
    assert err.strip() == f"wrote {page}"
    html = page.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    assert "data:image/png;base64," in html


@pytest.mark.parametrize(
    ("where", "reason"),
    [("missing/page.html", "No such file or directory"), (".", "Is a directory")],
)
def test_unwritable_html_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str, reason: str
) -> None:
    """An --html path that cannot be written prints one line saying why, no traceback, and exits 2."""
    target = tmp_path / where
    assert main(["show", NAME, "--html", str(target), "--no-chart"]) == 2
    _, err = capsys.readouterr()
    assert err.splitlines() == [f"cannot write {target}: {reason}"]
    assert not target.is_file()


@pytest.mark.parametrize("empty", ["", "   "])
def test_empty_html_name_refused(capsys: pytest.CaptureFixture[str], empty: str) -> None:
    """`--html ""` is refused with a message and exit status 2, before anything is printed."""
    with pytest.raises(SystemExit) as info:
        main(["show", NAME, "--html", empty])
    assert info.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "--html: needs a file name, got an empty string" in err


def test_unknown_scenario_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    """An unknown name exits 2 and points to `list`."""
    assert main(["show", "NoSuchScenario"]) == 2
    assert "python -m mlsysim_nb list" in capsys.readouterr().err


def test_list_names_every_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    """`list` prints one line per named scenario."""
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == [name for name, *_ in Scenarios.rows()]


def test_help_lists_the_course_commands_and_hands_them_on(capsys: pytest.CaptureFixture[str]) -> None:
    """``--help`` lists scan-submissions and regrade; their own ``--help`` is the course's parser's (their options)."""
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    listed = capsys.readouterr().out
    assert "scan-submissions" in listed and "regrade" in listed
    with pytest.raises(SystemExit) as done:
        main(["regrade", "--help"])
    assert done.value.code == 0
    assert "--nbgrader-db" in capsys.readouterr().out


def _cli(args: list[str], env: dict[str, str] | None = None, stdout: Any = None) -> Any:
    """``python -m mlsysim_nb ARGS`` in a fresh process that imports this package."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    import mlsysim_nb

    root = str(Path(mlsysim_nb.__file__).resolve().parents[1])
    environment = {**os.environ, "PYTHONPATH": root, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "mlsysim_nb", *args],
        stdout=subprocess.PIPE if stdout is None else stdout,
        stderr=subprocess.PIPE,
        env=environment,
        check=False,
        timeout=120,
    )


@pytest.mark.parametrize("args", [["list"], ["show", "Gpt2Fp32AdamOnH100"]])
def test_cli_closed_pipe_exits_quietly(args: list[str]) -> None:
    """Writing into a pipe whose reader has gone (`list | head -1`) ends with status 1 and no traceback."""
    import os

    read, write = os.pipe()
    os.close(read)  # the reader has gone before the first line
    try:
        result = _cli(args, stdout=write)
    finally:
        os.close(write)
    assert result.returncode == 1
    assert result.stderr == b""


@pytest.mark.parametrize(
    "env",
    [{"PYTHONIOENCODING": "ascii"}, {"LC_ALL": "C", "LANG": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"}],
)
def test_cli_under_an_ascii_terminal_degrades(env: dict[str, str]) -> None:
    """Under an ASCII-only terminal `show` prints the derivation with ASCII spellings (x, *, ^9), no traceback."""
    result = _cli(["show", "Gpt2XlBatch32SegmentCheckpointed"], env=env)
    assert result.returncode == 0, result.stderr.decode("ascii", "replace")
    assert result.stderr == b""
    text = result.stdout.decode("ascii")
    assert "1.5x10^9" in text or "x10^" in text
    assert "*" in text


def test_ascii_spelling() -> None:
    """Symbols spelt out, a run of superscripts as one exponent, Greek by name, anything else escaped."""
    from mlsysim_nb.__main__ import _ascii_spelling

    assert _ascii_spelling("1.5×10⁹ · κ ≤ ⌊x⌋, 10⁻¹² — ☃") == "1.5x10^9 * kappa <= floor(x), 10^-12 -- \\u2603"
