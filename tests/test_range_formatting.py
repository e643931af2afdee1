"""repair/formatting.py in the process: spans merged, only the fixed lines
taken from the formatter's output, and the real formatters (ruff, black,
yapf from beside the interpreter) run on the fixed rows only."""

from __future__ import annotations

import os
import sys

import pytest

from vllm_spec_lint.repair.formatting import (
    FormatError,
    RangeFormatter,
    _confined,
    _merged,
    _semicolon_on,
    detect,
    find_executable,
    only_within,
)


def _tool(name: str) -> str:
    # Found as the tool finds it: beside the interpreter first.
    found = find_executable(name)
    if found is None:
        pytest.fail(f"{name} is not installed beside {sys.executable}")
    return found


@pytest.mark.parametrize(
    "spans, expected",
    [
        ([(5, 8), (1, 3)], [(1, 3), (5, 8)]),
        ([(1, 3), (3, 6)], [(1, 6)]),
        ([(1, 10), (2, 4)], [(1, 10)]),
        ([(1, 4), (3, 6), (5, 9)], [(1, 9)]),
        ([(1, 3), (4, 6)], [(1, 3), (4, 6)]),
        ([], []),
    ],
    ids=["sorted", "touching", "nested", "chain", "apart", "none"],
)
def test_spans_are_merged_where_they_touch_or_overlap(spans, expected):
    assert _merged(spans) == expected


@pytest.mark.parametrize(
    "before, after, rows, expected",
    [
        (
            "a=1\n#\nb=2\n#\nc=3\n",
            "a = 1\n#\nb = 2\n#\nc = 3\n",
            [(3, 3)],
            "a=1\n#\nb = 2\n#\nc=3\n",
        ),
        (
            "a=1\n#\nb=2\n#\nc=3\n",
            "a = 1\n#\nb = 2\n#\nc = 3\n",
            [(1, 1)],
            "a = 1\n#\nb=2\n#\nc=3\n",
        ),
        (
            "a=1\n#\nb=2\n#\nc=3\n",
            "a = 1\n#\nb = 2\n#\nc = 3\n",
            [(5, 5)],
            "a=1\n#\nb=2\n#\nc = 3\n",
        ),
        (
            "a=1\n#\nb=2\n#\nc=3\n",
            "a = 1\n#\nb = 2\n#\nc = 3\n",
            [(1, 1), (5, 5)],
            "a = 1\n#\nb=2\n#\nc = 3\n",
        ),
        # A hunk that reaches into the rows is taken whole: the formatter may
        # have rewritten one statement across the range's edge.
        ("a=1\nb=2\n", "a = 1\nb = 2\n", [(2, 2)], "a = 1\nb = 2\n"),
        ("a = 1\nb=2\n", "a = 1\nb = 2\n", [(1, 1)], "a = 1\nb=2\n"),
        ("a = 1\nb = 2\n", "a = 1\n\nb = 2\n", [(2, 2)], "a = 1\n\nb = 2\n"),
        (
            "x = f(\n    a)\n#\ny=2\n",
            "x = f(a)\n#\ny = 2\n",
            [(1, 2)],
            "x = f(a)\n#\ny=2\n",
        ),
        (
            "x = f(aaaa, bbbb)\n#\ny=2\n",
            "x = f(\n    aaaa,\n    bbbb,\n)\n#\ny = 2\n",
            [(1, 1)],
            "x = f(\n    aaaa,\n    bbbb,\n)\n#\ny=2\n",
        ),
        (
            "import a\nimport  b\n\n\nx = 1\n",
            "import a\nimport b\n\nx = 1\n",
            [(2, 2)],
            "import a\nimport b\n\n\nx = 1\n",
        ),
        (
            "x = 1\n\n\nimport  b\n",
            "x = 1\n\nimport b\n",
            [(4, 4)],
            "x = 1\n\n\nimport b\n",
        ),
        ("x=1\n\n\n\ny=2\n", "x = 1\n\n\ny = 2\n", [(1, 1)], "x = 1\n\n\n\ny=2\n"),
        # A hunk that ends right above the rows is not theirs.
        ("a=1\nb = 2\n", "a = 1\nb = 2\n", [(2, 2)], "a=1\nb = 2\n"),
        # A line inserted right above the rows is; one line higher, it is not.
        ("a = 1\nb = 2\n", "a = 1\nx = 0\nb = 2\n", [(2, 2)], "a = 1\nx = 0\nb = 2\n"),
        ("a = 1\nb = 2\n", "x = 0\na = 1\nb = 2\n", [(2, 2)], "a = 1\nb = 2\n"),
        # Blank lines around the rows keep their own whitespace; the
        # formatter's blank lines in their place are dropped.
        (
            "x = 1\n  \nb=2\nc = 3\n",
            "x = 1\n\nb = 2\nc = 3\n",
            [(3, 3)],
            "x = 1\n  \nb = 2\nc = 3\n",
        ),
        (
            "x = 1\nb=2\nd=4\n  \nc = 3\n",
            "x = 1\nb = 2\nd = 4\n\nc = 3\n",
            [(2, 3)],
            "x = 1\nb = 2\nd = 4\n  \nc = 3\n",
        ),
        # Text the formatter left alone stays as it is, blank lines and all.
        ("\n\n\nb = 2\n", "\n\n\nb = 2\n", [(2, 4)], "\n\n\nb = 2\n"),
        # 200 lines, half of them blank: blank lines still anchor the diff
        # (difflib's autojunk would ignore them and make one hunk of it all).
        (
            "".join(f"x{i}=1\n\n" for i in range(100)),
            "".join(f"x{i} = 1\n\n" for i in range(100)),
            [(1, 1)],
            "x0 = 1\n\n" + "".join(f"x{i}=1\n\n" for i in range(1, 100)),
        ),
        # A hunk whose rows around the range are not all blank is taken
        # whole, the formatter's blank lines with it (none doubled).
        (
            "x=1\ny=2\n\nz = 3\n",
            "x = 1\ny = 2\nz = 3\n",
            [(2, 2)],
            "x = 1\ny = 2\nz = 3\n",
        ),
        # A blank line the formatter deletes in the rows: nothing in its place.
        ("a = 1\n\n\n\nb = 2\n", "a = 1\n\n\nb = 2\n", [(4, 4)], "a = 1\n\n\nb = 2\n"),
    ],  # fmt: skip
    ids=[
        "middle",
        "first",
        "last",
        "two-ranges",
        "hunk-whole",
        "hunk-after",
        "inserted-at-start",
        "joined",
        "split",
        "blank-below",
        "blank-above",
        "blank-outside",
        "hunk-before",
        "inserted-right-above",
        "inserted-two-above",
        "whitespace-blank-above",
        "whitespace-blank-below",
        "unchanged",
        "long-and-blank",
        "hunk-with-text-around",
        "blank-deleted",
    ],
)
def test_only_the_fixed_rows_take_the_formatters_changes(before, after, rows, expected):
    assert only_within(before, after, rows) == expected


@pytest.mark.parametrize(
    "after, confined",
    [
        ("a\nB\nc\n", True),  # the fixed row only
        ("A\nb\nc\n", False),  # a row above the first fixed one
        ("a\nb\nC\n", False),  # a row below the last
    ],
)
def test_one_formatter_call_is_kept_only_when_it_changed_the_fixed_rows(
    after, confined
):
    assert _confined("a\nb\nc\n", after, [(2, 2)]) is confined


FIXED = "x = f(aaaa,bbbb)\ny=2\nz  =  3\n"


@pytest.mark.parametrize(
    "kind, expected",
    [
        ("ruff", "x = f(aaaa, bbbb)\ny=2\nz  =  3\n"),
        ("black", "x = f(aaaa, bbbb)\ny=2\nz  =  3\n"),
        ("yapf", "x = f(aaaa, bbbb)\ny=2\nz  =  3\n"),
    ],
)
def test_a_real_formatter_formats_the_fixed_span_only(tmp_path, kind, expected):
    formatter = RangeFormatter(kind, _tool(kind), str(tmp_path / "m.py"), 88)
    assert formatter(FIXED, [(0, 16)], FIXED) == expected


@pytest.mark.parametrize(
    "before, fixed, expected",
    [
        # As found, the file was as ruff's defaults lay it out: ruff formats.
        ("x = f(aaaa)\ny = 2\n", "x = f(aaaa,bbbb)\ny = 2\n", "x = f(aaaa, bbbb)\ny = 2\n"),
        # A statement the fix did not touch was not: the edit stays as made.
        ("x = f(aaaa)\ny=2\n", "x = f(aaaa,bbbb)\ny=2\n", "x = f(aaaa,bbbb)\ny=2\n"),
        # ruff cannot read it: no evidence of ruff either.
        ("x = f(\n", "x = f(aaaa,bbbb\n", "x = f(aaaa,bbbb\n"),
    ],
)  # fmt: skip
def test_with_no_formatter_configured_ruff_formats_only_a_file_laid_out_so(
    tmp_path, before, fixed, expected
):
    formatter = RangeFormatter(
        "ruff", _tool("ruff"), str(tmp_path / "m.py"), None, assumed=True
    )
    assert formatter(fixed, [(0, 15)], before) == expected


def test_black_formats_every_row_of_a_span(tmp_path):
    # Two statements in one span: both rows are black's to format.
    text = "x = f(aaaa,bbbb)\ny=2\nz  =  3\n"
    formatter = RangeFormatter("black", _tool("black"), str(tmp_path / "m.py"), 88)
    assert formatter(text, [(0, len("x = f(aaaa,bbbb)\ny=2"))], text) == (
        "x = f(aaaa, bbbb)\ny = 2\nz  =  3\n"
    )


def test_ruff_is_given_the_line_length(tmp_path):
    text = "x = f(aaaa, bbbb)\n"
    formatter = RangeFormatter("ruff", _tool("ruff"), str(tmp_path / "m.py"), 12)
    assert formatter(text, [(0, 17)], text) == "x = f(\n    aaaa,\n    bbbb,\n)\n"


def test_yapf_takes_its_style_from_the_files_folder(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / ".style.yapf").write_text(
        "[style]\nbased_on_style = pep8\nspaces_around_power_operator = true\n"
    )
    formatter = RangeFormatter("yapf", _tool("yapf"), str(tmp_path / "pkg/m.py"), 88)
    assert formatter("x = a**b\n", [(0, 8)], "x = a**b\n") == "x = a ** b\n"


def test_a_formatter_that_fails_says_why(tmp_path):
    formatter = RangeFormatter("ruff", _tool("ruff"), str(tmp_path / "m.py"), 88)
    with pytest.raises(FormatError) as raised:
        formatter("x = (\n", [(0, 5)], "x = (\n")
    message = str(raised.value)
    assert message.startswith("error: Failed to parse ")
    assert message == message.strip()


def test_a_file_in_a_folder_that_does_not_exist_is_still_formatted(tmp_path):
    path = os.path.join(str(tmp_path), "missing", "m.py")
    formatter = RangeFormatter("ruff", _tool("ruff"), path, 88)
    assert formatter("x=1\n", [(0, 3)], "x=1\n") == "x = 1\n"


def test_a_failing_formatters_undecodable_reason_is_still_told(tmp_path):
    # Any program can stand where the formatter is configured; what it says
    # on failure is passed on, bytes that are not UTF-8 replaced.
    program = tmp_path / "broken-formatter"
    program.write_text("#!/bin/sh\nprintf ' bad \\377 byte \\n' >&2\nexit 3\n")
    program.chmod(0o755)
    formatter = RangeFormatter("ruff", str(program), str(tmp_path / "m.py"), 88)
    with pytest.raises(FormatError) as raised:
        formatter("x=1\n", [(0, 3)], "x=1\n")
    assert str(raised.value) == "bad \ufffd byte"


# -- which formatter a project configures ---------------------------------------


def test_a_later_section_of_setup_cfg_configures_yapf_despite_bad_bytes(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.black]\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "setup.cfg").write_bytes(
        b"[metadata]\nname = caf\xe9\n\n[yapf]\nbased_on_style = pep8\n"
    )
    assert detect(project) == "yapf"


def test_a_later_tool_ruff_table_configures_ruff_before_a_parents_black(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.black]\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        "[project]\nname = 'x'\n\n[tool.ruff.lint]\nselect = ['E']\n"
    )
    assert detect(project) == "ruff"
    assert detect(tmp_path) == "black"


def test_ruff_without_our_line_length_reads_the_projects_own(tmp_path):
    """No line length of ours: ruff's settings for the file decide (here
    the project's 120, so a 100-character statement stays on one line)."""
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 120\n")
    text = (
        "value = some_function_name(first_argument_value, "
        "second_argument_value_long, third_argument)\n"
    )
    assert 88 < len(text) - 1 <= 120
    formatter = RangeFormatter("ruff", _tool("ruff"), str(tmp_path / "m.py"), None)
    assert formatter(text, [(0, len(text) - 1)], text) == text
    ours = RangeFormatter("ruff", _tool("ruff"), str(tmp_path / "m.py"), 88)
    assert ours(text, [(0, len(text) - 1)], text) == (
        "value = some_function_name(\n"
        "    first_argument_value, second_argument_value_long, third_argument\n"
        ")\n"
    )


def test_a_fix_in_a_project_with_its_own_ruff_line_length_stays_ruff_clean(tmp_path):
    """A plugin with `line-length = 120` in [tool.ruff]: the fixed file is
    one its own `ruff format --check` accepts."""
    import subprocess
    import sys

    from tests.conftest import run_cli

    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 120\n")
    source = (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n\n\n"
        "def register(layer_specs):\n"
        "    for layer_spec in layer_specs:\n"
        "        is_mla_region_for_this_layer = isinstance(layer_spec, MLAAttentionSpec)\n"
        "        print(is_mla_region_for_this_layer)\n"
    )
    (tmp_path / "w.py").write_text(source)
    out = run_cli("fix", "--unsafe-fixes", "--no-cache", "-q", "w.py", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    fixed = (tmp_path / "w.py").read_text()
    assert (
        "        is_mla_region_for_this_layer = isinstance(layer_spec, "
        "(MLAAttentionSpec, SlidingWindowMLASpec))\n"
    ) in fixed
    check = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "w.py"],
        cwd=tmp_path, capture_output=True, text=True,
    )  # fmt: skip
    assert check.returncode == 0, check.stdout + check.stderr


def _many(rows: int, *, neighbours: str) -> str:
    """``rows`` fixed statements (``f(a,b)``, to be formatted), each followed
    by an untouched one written as ``neighbours`` says."""
    return "".join(f"x{i} = f(a,b)\n{neighbours.format(i=i)}\n" for i in range(rows))


def _spans(text: str) -> list[tuple[int, int]]:
    return [(i, i + len("x0 = f(a,b)")) for i in range(len(text)) if text[i] == "x"]


@pytest.mark.parametrize("changed", [1, 2, 3, 17, 40])
@pytest.mark.parametrize("neighbours", ["y{i}  =  {i}", "y{i} = {i}"])
def test_ruff_formats_each_changed_statement_and_nothing_between(
    tmp_path, changed, neighbours
):
    """From two changed places one call for them all is tried first, and
    kept only where ruff changed nothing else; either way each changed row
    is formatted and the rows between stay as written."""
    text = _many(changed, neighbours=neighbours)
    formatter = RangeFormatter("ruff", _tool("ruff"), str(tmp_path / "m.py"), None)
    expected = "".join(
        f"x{i} = f(a, b)\n{neighbours.format(i=i)}\n" for i in range(changed)
    )
    assert formatter(text, _spans(text), text) == expected


@pytest.mark.parametrize(
    "changed, neighbours, calls",
    [
        (40, "y{i} = {i}", 1),  # the rest is formatted: one call is exact
        (40, "y{i}  =  {i}", 41),  # it is not: one call each after the first
        (2, "y{i} = {i}", 1),  # a fix's import and its site
        (2, "y{i}  =  {i}", 3),
        (1, "y{i}  =  {i}", 1),  # one place: one call, the same
    ],
)
def test_changes_in_a_formatted_file_cost_one_ruff_call(
    tmp_path, monkeypatch, changed, neighbours, calls
):
    formatter = RangeFormatter("ruff", _tool("ruff"), str(tmp_path / "m.py"), None)
    made = []
    run = formatter._run
    monkeypatch.setattr(formatter, "_run", lambda *a: made.append(a) or run(*a))
    text = _many(changed, neighbours=neighbours)
    formatter(text, _spans(text), text)
    assert len(made) == calls


@pytest.mark.parametrize(
    "rows, found",
    [
        ([(2, 2)], True),
        ([(1, 3)], True),
        ([(1, 1)], False),  # the row before it
        ([(3, 3)], False),  # the row after it
        ([(1, 1), (3, 3)], False),
        ([(4, 4)], False),  # the last row, which has no line ending
    ],
)
def test_a_semicolon_counts_only_on_the_changed_rows(rows, found):
    from vllm_spec_lint.repair.text import line_starts

    text = "a = 1\nb = 2; c = 3\nd = 4\ne = 5"
    assert _semicolon_on(text, line_starts(text), rows) is found


@pytest.mark.parametrize("changed", [3, 17])
def test_a_statement_sharing_a_changed_row_after_a_semicolon_stays_on_it(
    tmp_path, changed
):
    """One call for all the places would put ``w = 1`` on a line of its own;
    a call for the place alone, what a fix asks for, leaves it there."""
    text = _many(changed, neighbours="y{i} = {i}").replace(
        "x1 = f(a,b)\n", "x1 = f(a,b); w = 1\n"
    )
    formatter = RangeFormatter("ruff", _tool("ruff"), str(tmp_path / "m.py"), None)
    formatted = formatter(text, _spans(text), text).splitlines()
    assert formatted[:4] == ["x0 = f(a, b)", "y0 = 0", "x1 = f(a, b); w = 1", "y1 = 1"]


def test_one_call_for_many_changes_is_not_kept_where_it_adds_lines_between_them(
    tmp_path,
):
    """Formatting the range from the first change to the last, ruff puts
    blank lines between the functions; formatting each change alone (what a
    fix asks for) does not. Such an answer is not kept."""
    formatter = RangeFormatter("ruff", _tool("ruff"), str(tmp_path / "m.py"), None)
    expected = "".join(f"def g{i}():\n    return f(a, b)\n" for i in range(17))
    for text in (
        "".join(f"def g{i}(): return f(a,b)\n" for i in range(17)),
        # Only blank lines would be added outside the changed rows.
        "".join(f"def g{i}():\n    return f(a,b)\n" for i in range(17)),
    ):
        spans = [(i, i + 6) for i in range(len(text)) if text.startswith("f(a,b)", i)]
        assert formatter(text, spans, text) == expected
    # Methods: one blank line between them, not added either.
    text = "class C:\n" + "".join(
        f"    def g{i}(self):\n        return f(a,b)\n" for i in range(17)
    )
    spans = [(i, i + 6) for i in range(len(text)) if text.startswith("f(a,b)", i)]
    assert formatter(text, spans, text) == text.replace("f(a,b)", "f(a, b)")
