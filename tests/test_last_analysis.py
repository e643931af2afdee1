"""A file's last analysis reused while its slice stays the same (the
language server's keystrokes): the findings are always those a fresh
analysis of the new text gives."""

from __future__ import annotations

import pytest

from tests.conftest import count_slice_analyses
from vllm_spec_lint.core.analysis import analyze_source
from vllm_spec_lint.core.findings import FileAnalysis, Finding
from vllm_spec_lint.core.last_analysis import LastAnalysis
from vllm_spec_lint.core.settings import Config
from vllm_spec_lint.model.hierarchy import ClassHierarchy
from vllm_spec_lint.repair.text import Edit, Fix

HIERARCHY = ClassHierarchy.default()
PATH = "vllm/worker.py"

SOURCE = """\
from vllm.v1.kv_cache_interface import MLAAttentionSpec


def unrelated(blocks):
    total = 0
    for block in blocks:
        total += block
    return total


def is_mla(spec):
    return isinstance(spec, MLAAttentionSpec)  # the finding
"""


def _fresh(text: str) -> FileAnalysis:
    return analyze_source(text, PATH, Config(), HIERARCHY, module_name="vllm.worker")


def _with(last: LastAnalysis, text: str) -> FileAnalysis:
    return analyze_source(
        text, PATH, Config(), HIERARCHY, module_name="vllm.worker", last=last
    )


def _edit(row: int, line: str, text: str = SOURCE) -> str:
    """``text`` with ``line`` inserted before its 1-based ``row``."""
    lines = text.splitlines(keepends=True)
    return "".join(lines[: row - 1] + [line] + lines[row - 1 :])


def test_the_first_analysis_is_the_fresh_one():
    assert _with(LastAnalysis(), SOURCE) == _fresh(SOURCE)
    assert [f.location for f in _fresh(SOURCE).findings] == [(12, 29)]


def test_an_edit_outside_the_slice_moves_the_findings_and_their_fix():
    last = LastAnalysis()
    _with(last, SOURCE)
    edited = _edit(6, "    # typing inside a function the rules never see\n")
    moved = _with(last, edited)
    assert moved == _fresh(edited)
    [finding] = moved.findings
    assert finding.location == (13, 29)
    assert (
        finding.line_text
        == "    return isinstance(spec, MLAAttentionSpec)  # the finding"
    )
    # The companion after the anchor, and its import on row 1.
    assert [e.location[0] for e in finding.fix.edits] == [13, 1]


def test_an_edit_outside_the_slice_is_answered_without_analysing_it_again(
    monkeypatch,
):
    """The promise the language server's speed rests on: libcst and the
    rules run for the first text and for an edit inside the slice, not for
    an edit outside it."""
    analysed = count_slice_analyses(monkeypatch)
    last = LastAnalysis()
    _with(last, SOURCE)
    assert len(analysed) == 1
    _with(last, _edit(6, "    # typing inside a function the rules never see\n"))
    assert len(analysed) == 1
    _with(last, SOURCE.replace("(spec, MLA", "(other, MLA"))
    assert len(analysed) == 2


def test_the_last_analysis_is_reused_only_for_the_same_slice():
    last = LastAnalysis()
    analysis = _fresh(SOURCE)
    last.keep(("slice", "settings"), HIERARCHY, [1, 2, 12], analysis)
    # The same key on other rows: the findings move with their rows.
    [moved] = last.reuse(
        ("slice", "settings"), HIERARCHY, [1, 2, 20], SOURCE * 2
    ).findings
    assert moved.location == (20, 29)
    assert (
        last.reuse(("another slice", "settings"), HIERARCHY, [1, 2, 12], SOURCE) is None
    )
    other = ClassHierarchy.default()
    assert last.reuse(("slice", "settings"), other, [1, 2, 12], SOURCE) is None


def test_a_finding_off_the_kept_rows_is_analysed_again():
    last = LastAnalysis()
    last.keep(("slice",), HIERARCHY, [1, 2], _fresh(SOURCE))  # row 12 not kept
    assert last.reuse(("slice",), HIERARCHY, [1, 2], SOURCE) is None


def test_every_edit_in_a_sequence_gives_the_fresh_findings():
    last = LastAnalysis()
    text = SOURCE
    for row, line in [
        (6, "    # outside the slice\n"),
        (13, "    # inside the function with the finding\n"),
        (1, "import os\n"),
        (14, "    if isinstance(spec, MLAAttentionSpec):\n        return 1\n"),
        (5, "    x = (\n"),  # a syntax error: VSL900, and back
    ]:
        text = _edit(row, line, text)
        assert _with(last, text) == _fresh(text), (row, line)
    text = text.replace("    x = (\n", "")
    assert _with(last, text) == _fresh(text)


NARROWED = """\
from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec


def unrelated(blocks):
    return sum(blocks)


def narrowed(spec):
    if isinstance(spec, SlidingWindowMLASpec):
        return None
    return isinstance(spec, MLAAttentionSpec)
"""


def test_the_sites_left_out_move_with_their_rows_and_their_reasons_rows():
    last = LastAnalysis()
    first = _with(last, NARROWED)
    assert first.findings == []
    assert [f.location for f in first.suppressed] == [(11, 29)]
    edited = _edit(5, "    # a comment\n", NARROWED)
    moved = _with(last, edited)
    assert moved == _fresh(edited)
    [site] = moved.suppressed
    assert (site.location, site.end_location) == ((12, 29), (12, 45))
    assert site.line_text == "    return isinstance(spec, MLAAttentionSpec)"
    # The reason names the guard's row as it stands now.
    assert site.suppressed_by == (
        "narrowed: `isinstance(spec, SlidingWindowMLASpec)` (line 10) already "
        "excludes SlidingWindowMLASpec"
    )


# The family module's own classes: only there is the local class the
# family's anchor.
OWN_CLASSES = """\
class MLAAttentionSpec(FullAttentionSpec):
    pass


class SlidingWindowMLASpec(SlidingWindowSpec):
    pass


def is_mla(spec):
    return isinstance(spec, MLAAttentionSpec)
"""
DEFAULTS = {"path": PATH, "config": Config(), "module_name": "vllm.worker"}
# name -> (text, the first analysis's inputs, the second's, the second's
# findings as (path, location))
CHANGED_INPUTS = {
    "path": (
        SOURCE,
        {},
        {"path": "vllm/other_worker.py"},
        [("vllm/other_worker.py", (12, 29))],
    ),
    "config": (SOURCE, {}, {"config": Config(ignore=("VSL001",))}, []),
    "noqa": (
        SOURCE.replace("# the finding", "# noqa: VSL001"),
        {"apply_noqa": True},
        {"apply_noqa": False},
        [(PATH, (12, 29))],
    ),
    "module name": (
        OWN_CLASSES,
        {},
        {"module_name": "vllm.v1.kv_cache_interface"},
        [(PATH, (10, 29))],
    ),
}


@pytest.mark.parametrize("name", CHANGED_INPUTS)
def test_the_same_text_with_another_input_is_analysed_again(name):
    """The path, the settings, noqa and the module's name change what is
    found in the same slice: none of them reuses the last analysis."""
    text, first, second, expected = CHANGED_INPUTS[name]
    last = LastAnalysis()

    def analyse(inputs: dict, last: LastAnalysis | None) -> FileAnalysis:
        inputs = {**DEFAULTS, **inputs}
        return analyze_source(
            text, inputs.pop("path"), inputs.pop("config"), HIERARCHY, **inputs,
            last=last,
        )  # fmt: skip

    analyse(first, last)
    again = analyse(second, last)
    assert [(f.path, f.location) for f in again.findings] == expected
    assert again == analyse(second, None)


def _at(start: int, end: int, **changes) -> Finding:
    return Finding("VSL001", "m", PATH, (start, 5), (end, 9), line_text="x", **changes)


# Held findings with one row off the kept rows 1 and 2 (a slice that lost
# it): each makes the file be analysed again.
OFF_THE_ROWS = {
    "a finding's start": FileAnalysis([_at(3, 2)]),
    "a finding's end": FileAnalysis([_at(2, 3)]),
    "a fix edit's first row": FileAnalysis(
        [_at(2, 2, fix=Fix("unsafe", "Add", (Edit("x", (3, 1), (2, 1)),)))]
    ),
    "a fix edit's last row": FileAnalysis(
        [_at(2, 2, fix=Fix("unsafe", "Add", (Edit("x", (2, 1), (3, 1)),)))]
    ),
    "a site left out": FileAnalysis([], suppressed=[_at(3, 3, suppressed_by="x")]),
    "a row its reason names": FileAnalysis(
        [], suppressed=[_at(2, 2, suppressed_by="deliberate: line 3 tests `s`")]
    ),
}


@pytest.mark.parametrize("name", OFF_THE_ROWS)
def test_any_row_off_the_kept_rows_is_analysed_again(name):
    last = LastAnalysis()
    last.keep(("slice",), HIERARCHY, [1, 2], OFF_THE_ROWS[name])
    assert last.reuse(("slice",), HIERARCHY, [1, 2], "a\nb\nc\n") is None


def test_rows_on_the_kept_rows_move_with_them():
    held = FileAnalysis(
        [_at(2, 2, fix=Fix("unsafe", "Add", (Edit("x", (1, 1), (2, 1)),)))],
        suppressed=[_at(1, 1, suppressed_by="deliberate: line 2 tests `s`")],
    )
    last = LastAnalysis()
    last.keep(("slice",), HIERARCHY, [1, 2], held)
    again = last.reuse(("slice",), HIERARCHY, [4, 6], "a\nb\nc\nd\ne\nf\n")
    [moved], [kept] = again.findings, again.suppressed
    assert (moved.location, moved.fix.edits[0].location) == ((6, 5), (4, 1))
    assert (kept.location, kept.suppressed_by) == (
        (4, 5),
        "deliberate: line 6 tests `s`",
    )
