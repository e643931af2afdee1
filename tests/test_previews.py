"""edges/previews.py: the edit a preview shows is as narrow as the rule's own
and never cuts a word in two (whole previews are in test_golden_outputs)."""

from __future__ import annotations

import pytest

from vllm_spec_lint.edges.previews import _narrowed
from vllm_spec_lint.repair.text import Edit

pytestmark = pytest.mark.fast


@pytest.mark.parametrize(
    "old, new, edit",
    [
        # `is X` -> `in (X, Y)`: the operator whole, not its `s`.
        ("x is A\n", "x in (A, B)\n", Edit("in (A, B)", (5, 3), (5, 7))),
        (
            "isinstance(x, A)\n",
            "isinstance(x, (A, B))\n",
            Edit("(A, B)", (5, 15), (5, 16)),
        ),
        # A word grown at its start, or shrunk there: the whole word.
        ("x = Aa\n", "x = BAa\n", Edit("BAa", (5, 5), (5, 7))),
        ("x = AB\n", "x = B\n", Edit("B", (5, 5), (5, 7))),
        # ... at its end, in the new text or the old.
        ("y\nx = A\n", "y\nx = A_B\n", Edit("A_B", (6, 5), (6, 6))),
        ("y\nx = A_B\n", "y\nx = A\n", Edit("A", (6, 5), (6, 8))),
        # The first word of the text, and one after a dot.
        ("Ab\n", "Ac\n", Edit("Ac", (5, 1), (5, 3))),
        ("a.Ab\n", "a.Xb\n", Edit("Xb", (5, 3), (5, 5))),
        # Punctuation around a word: the common ends are kept, no more.
        ("f(a)\n", "f((a))\n", Edit("(a)", (5, 3), (5, 4))),
        # Punctuation after a word, or before one: the word is not taken in.
        ("x = A\n", "x = A()\n", Edit("()", (5, 6), (5, 6))),
        ("x = A\n", "x = (A\n", Edit("(", (5, 5), (5, 5))),
        # A last line without its line break: the ends of either text.
        ("x = A", "x = AB", Edit("AB", (5, 5), (5, 6))),
        ("x = A", "x = A()", Edit("()", (5, 6), (5, 6))),
        ("x = A()", "x = A", Edit("", (5, 6), (5, 8))),
        ("A", "(A", Edit("(", (5, 1), (5, 1))),
        ("(A", "A", Edit("", (5, 1), (5, 2))),
        ("Ab", "Xb", Edit("Xb", (5, 1), (5, 3))),
        # A word cut at the text's first character, in the old text or the new.
        ("AB", "(B", Edit("(B", (5, 1), (5, 3))),
        ("(B", "AB", Edit("AB", (5, 1), (5, 3))),
    ],
)
def test_a_previews_edit_is_narrow_and_cuts_no_word(old, new, edit):
    assert _narrowed(old, new, 5) == edit


def _finding(path: str, row: int, text: str):
    from vllm_spec_lint.core.findings import Finding
    from vllm_spec_lint.repair.text import Fix

    fix = Fix("safe", "Add", (Edit(text, (row, 1), (row, 2)),))
    return Finding("VSL001", "m", path, (row, 1), (row, 2), fix)


def test_a_finding_in_a_file_without_its_source_keeps_its_fix(tmp_path):
    from vllm_spec_lint.core.settings import Config
    from vllm_spec_lint.edges.previews import laid_out

    findings = [_finding("gone.py", 1, "x")]
    assert laid_out(findings, {}, Config(), tmp_path) == findings


def test_a_cached_layout_of_another_number_of_fixes_is_laid_out_again(tmp_path):
    # ruff lays the file out; then the cache is made to hold one fix for the
    # file's two, as a stale or damaged entry would.
    from vllm_spec_lint.core.settings import Config
    from vllm_spec_lint.edges.cache import PreviewCache
    from vllm_spec_lint.edges.previews import laid_out

    path = str(tmp_path / "m.py")
    source = "a = 1\nb = 2\n"
    findings = [_finding(path, 1, "x"), _finding(path, 2, "y")]
    cache = PreviewCache(tmp_path)
    config = Config(fix_formatter="ruff")
    laid = laid_out(findings, {path: source}, config, tmp_path, cache)
    (entry,) = cache.folder.rglob("*.json")  # its key names the formatter too
    key = entry.name.removesuffix(".json")
    cache.put(key, [findings[0].fix])
    assert cache.get(key) == [findings[0].fix]
    assert laid_out(findings, {path: source}, config, tmp_path, cache) == laid
    assert len(cache.get(key)) == 2  # laid out again, and kept


def test_a_fix_starting_on_the_line_after_a_changed_block_keeps_its_own_edit():
    from vllm_spec_lint.edges.previews import _laid_out_fixes
    from vllm_spec_lint.repair.text import Fix

    text = "a = 1\nb = 2\n"
    on_a = Fix("safe", "one", (Edit("10", (1, 5), (1, 6)),))
    before_b = Fix("safe", "two", (Edit("c = 3\n", (2, 1), (2, 1)),))

    def formatter(new: str, changed, before) -> str:  # lays out line 1 only
        return new.replace("a = 10\n", "a = 10  # ten\n")

    laid = _laid_out_fixes(text, [on_a, before_b], formatter)
    # Line 1 became two lines (difflib: one block, rows 1-1 of the old
    # text): the fix on line 1 takes it; the insertion at line 2 starts
    # after it and keeps its own edit.
    assert laid == [
        Fix("safe", "one", (Edit("10  # ten\nc = 3", (1, 5), (1, 6)),)),
        before_b,
    ]


def test_a_block_after_a_fixs_last_line_is_not_its_own():
    from vllm_spec_lint.edges.previews import _laid_out_fixes
    from vllm_spec_lint.repair.text import Fix

    text = "a = 1\nx = 0\nb = 2\n"
    on_a = Fix("safe", "one", (Edit("10", (1, 5), (1, 6)),))

    def formatter(new: str, changed, before) -> str:  # also changes line 3
        return new.replace("b = 2\n", "b = 20\n")

    laid = _laid_out_fixes(text, [on_a], formatter)
    assert laid == [Fix("safe", "one", (Edit("10", (1, 5), (1, 6)),))]


def test_a_line_a_fix_inserts_is_laid_out_as_its_own():
    from vllm_spec_lint.edges.previews import _laid_out_fixes
    from vllm_spec_lint.repair.text import Fix

    text = "a = 1\nb = 2\n"
    inserted = Fix("safe", "one", (Edit("c=3\n", (2, 1), (2, 1)),))

    def formatter(new: str, changed, before) -> str:
        return new.replace("c=3\n", "c = 3\n")

    laid = _laid_out_fixes(text, [inserted], formatter)
    assert laid == [Fix("safe", "one", (Edit("c = 3\n", (2, 1), (2, 1)),))]


def test_a_preview_is_laid_out_at_the_line_length_set(tmp_path):
    from vllm_spec_lint.core.findings import Finding
    from vllm_spec_lint.core.settings import Config
    from vllm_spec_lint.edges.previews import laid_out
    from vllm_spec_lint.repair.text import Fix

    path = str(tmp_path / "m.py")
    source = "ok = isinstance(spec, MLAAttentionSpec)\n"
    named = Edit("(MLAAttentionSpec, SlidingWindowMLASpec)", (1, 23), (1, 39))
    finding = Finding(
        "VSL001", "m", path, (1, 23), (1, 39), Fix("safe", "Add", (named,))
    )
    config = Config(fix_formatter="ruff", line_length=40)
    [laid] = laid_out([finding], {path: source}, config, tmp_path)
    assert laid.fix.edits == (
        Edit(
            "\n    spec,\n    (\n        MLAAttentionSpec,\n"
            "        SlidingWindowMLASpec,\n    ),\n",
            (1, 17),
            (1, 39),
        ),
    )


def test_a_cached_layout_is_of_the_same_fixes_only(tmp_path):
    """Another fix on the same text is laid out anew, not answered with the
    first fix's layout."""
    from vllm_spec_lint.core.settings import Config
    from vllm_spec_lint.edges.cache import PreviewCache
    from vllm_spec_lint.edges.previews import laid_out

    path = str(tmp_path / "m.py")
    source = "a = 1\nb = 2\n"
    cache = PreviewCache(tmp_path)
    config = Config(fix_formatter="ruff")
    [first] = laid_out(
        [_finding(path, 1, "x")], {path: source}, config, tmp_path, cache
    )
    [second] = laid_out(
        [_finding(path, 1, "y")], {path: source}, config, tmp_path, cache
    )
    assert first.fix.edits == (Edit("x", (1, 1), (1, 2)),)
    assert second.fix.edits == (Edit("y", (1, 1), (1, 2)),)


# -- laid out early, while the run goes on -------------------------------------

LONG = "ok = isinstance(spec, MLAAttentionSpec)\n"
LAID_OUT_AT_40 = (
    Edit(
        "\n    spec,\n    (\n        MLAAttentionSpec,\n"
        "        SlidingWindowMLASpec,\n    ),\n",
        (1, 17),
        (1, 39),
    ),
)


def _long_line_finding(path: str, own_spec=None):
    from vllm_spec_lint.core.findings import Finding
    from vllm_spec_lint.repair.text import Fix

    named = Edit("(MLAAttentionSpec, SlidingWindowMLASpec)", (1, 23), (1, 39))
    fix = Fix("safe", "Add", (named,))
    return Finding("VSL001", "m", path, (1, 23), (1, 39), fix, own_spec=own_spec)


@pytest.fixture
def formatter_runs(monkeypatch):
    """The texts the real formatter was run on, in order."""
    from vllm_spec_lint.repair.formatting import RangeFormatter

    runs = []
    real = RangeFormatter._run

    def counted(self, ranges, text):
        runs.append(text)
        return real(self, ranges, text)

    monkeypatch.setattr(RangeFormatter, "_run", counted)
    return runs


def _laid_out_with_early(tmp_path, findings, file_text, shown_text):
    """``findings`` (in m.py, holding ``file_text`` while the run goes on)
    given to LaidOutEarly as their file's result, then laid out for the
    report with ``shown_text`` as the file's text."""
    from vllm_spec_lint.core.settings import Config
    from vllm_spec_lint.edges.previews import LaidOutEarly, laid_out
    from vllm_spec_lint.edges.results import FileResult

    path = findings[0].path
    (tmp_path / "m.py").write_text(file_text)
    config = Config(fix_formatter="ruff", line_length=40)
    early = LaidOutEarly(config, tmp_path)
    try:
        early.add(FileResult(path, findings))
        return laid_out(findings, {path: shown_text}, config, tmp_path, None, early)
    finally:
        early.close()


def test_fixes_laid_out_early_are_not_laid_out_again(tmp_path, formatter_runs):
    path = str(tmp_path / "m.py")
    [laid] = _laid_out_with_early(tmp_path, [_long_line_finding(path)], LONG, LONG)
    assert laid.fix.edits == LAID_OUT_AT_40
    assert len(formatter_runs) == 1


def test_a_file_changed_since_it_was_laid_out_early_is_laid_out_again(
    tmp_path, formatter_runs
):
    path = str(tmp_path / "m.py")
    shown = LONG + "# changed since\n"
    [laid] = _laid_out_with_early(tmp_path, [_long_line_finding(path)], LONG, shown)
    assert laid.fix.edits == LAID_OUT_AT_40
    assert [run.endswith("# changed since\n") for run in formatter_runs] == [
        False,
        True,
    ]


def test_other_fixes_than_those_laid_out_early_are_laid_out_again(
    tmp_path, formatter_runs
):
    from vllm_spec_lint.core.settings import Config
    from vllm_spec_lint.edges.previews import LaidOutEarly, laid_out
    from vllm_spec_lint.edges.results import FileResult

    path = str(tmp_path / "m.py")
    (tmp_path / "m.py").write_text("a = 1\nb = 2\n")
    config = Config(fix_formatter="ruff")
    early = LaidOutEarly(config, tmp_path)
    early.add(FileResult(path, [_finding(path, 1, "x"), _finding(path, 2, "y")]))
    # A baseline left the second finding out of the report.
    [laid] = laid_out(
        [_finding(path, 1, "x")],
        {path: "a = 1\nb = 2\n"},
        config,
        tmp_path,
        None,
        early,
    )
    early.close()
    assert laid.fix.edits == (Edit("x", (1, 1), (1, 2)),)
    assert formatter_runs == ["x = 1\ny = 2\n", "x = 1\nb = 2\n"]


def test_a_file_testing_a_builders_own_spec_waits_for_the_pairing(
    tmp_path, formatter_runs
):
    from vllm_spec_lint.core.settings import Config
    from vllm_spec_lint.edges.previews import LaidOutEarly
    from vllm_spec_lint.edges.results import FileResult

    path = str(tmp_path / "m.py")
    (tmp_path / "m.py").write_text(LONG)
    early = LaidOutEarly(Config(fix_formatter="ruff", line_length=40), tmp_path)
    finding = _long_line_finding(path, own_spec=("m.Builder", "SlidingWindowMLASpec"))
    early.add(FileResult(path, [finding]))
    early.close()
    assert formatter_runs == []


def test_a_formatter_failing_early_leaves_the_fix_as_made(tmp_path, formatter_runs):
    path = str(tmp_path / "m.py")
    broken = "x = (\n"  # ruff cannot parse it
    finding = _finding(path, 1, "y")
    [laid] = _laid_out_with_early(tmp_path, [finding], broken, broken)
    assert laid == finding
    assert formatter_runs == ["y = (\n"]


@pytest.mark.parametrize(
    "options, shown",
    [
        ([], True),
        (["--output-format", "full"], True),
        (["--output-format", "text"], True),
        (["--output-format", "json"], True),
        (["--output-format", "sarif"], True),
        (["--output-format", "concise"], False),
        (["--output-format", "github"], False),
        (["--statistics"], False),
        (["--output-format", "json", "--statistics"], False),
    ],
)
def test_the_reports_that_show_fixes(options, shown):
    """Those lay their fixes out (early, while the run goes on)."""
    from vllm_spec_lint.faces.cli_options import build_parser
    from vllm_spec_lint.faces.commands.running import shows_fixes

    args = build_parser().parse_args(["check", *options, "."])
    assert shows_fixes(args) is shown


def test_without_the_formatter_a_report_shows_fixes_as_made(
    tmp_path, monkeypatch, formatter_runs
):
    """Early and at the end: a missing formatter is fix's to warn about."""
    from vllm_spec_lint.core.settings import Config
    from vllm_spec_lint.edges.previews import LaidOutEarly, laid_out
    from vllm_spec_lint.edges.results import FileResult
    from vllm_spec_lint.repair import formatting

    # An environment without yapf: nothing beside the interpreter, an empty PATH.
    monkeypatch.setattr(formatting, "_interpreter_scripts", lambda: [])
    monkeypatch.setenv("PATH", str(tmp_path))
    path = str(tmp_path / "m.py")
    (tmp_path / "m.py").write_text(LONG)
    finding = _long_line_finding(path)
    config = Config(fix_formatter="yapf")
    early = LaidOutEarly(config, tmp_path)
    early.add(FileResult(path, [finding]))
    early.close()
    assert laid_out([finding], {path: LONG}, config, tmp_path, None, early) == [finding]
    assert formatter_runs == []


@pytest.fixture
def formatter_threads(monkeypatch):
    """Per formatter run: whether it ran on the main thread."""
    import threading

    from vllm_spec_lint.repair.formatting import RangeFormatter

    on_main = []
    real = RangeFormatter._run

    def recorded(self, ranges, text):
        on_main.append(threading.current_thread() is threading.main_thread())
        return real(self, ranges, text)

    monkeypatch.setattr(RangeFormatter, "_run", recorded)
    return on_main


def test_a_check_lays_its_fixes_out_while_the_run_goes_on(
    tmp_path, monkeypatch, capsys, formatter_threads
):
    """One file, analysed in this process: its fix is laid out on another
    thread as its result comes in, and taken for the report."""
    from tests.conftest import BAD
    from vllm_spec_lint.faces import cli

    (tmp_path / "w.py").write_text(BAD)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["check", "--no-cache", "--exit-zero", "."]) == 0
    assert "SlidingWindowMLASpec" in capsys.readouterr().out
    assert set(formatter_threads) == {False}  # run, and never on the main thread


def test_a_check_that_writes_a_baseline_lays_out_no_fix(
    tmp_path, monkeypatch, capsys, formatter_threads
):
    from tests.conftest import BAD
    from vllm_spec_lint.faces import cli

    (tmp_path / "w.py").write_text(BAD)
    monkeypatch.chdir(tmp_path)
    status = cli.main(["check", "--no-cache", "--write-baseline", "b.json", "."])
    assert status == 0
    assert "Wrote 1 entry to b.json." in capsys.readouterr().err
    assert formatter_threads == []
