"""The report writers (faces/report.py) on findings written here: what the
command line's tests reach only through whole runs."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from vllm_spec_lint.core.findings import Finding
from vllm_spec_lint.faces.report import (
    check_summary,
    diff_summary,
    fix_summary,
    format_concise,
    format_fixes,
    format_full,
    format_json,
    format_sarif,
    format_statistics,
    format_statistics_json,
)
from vllm_spec_lint.repair.text import Edit, Fix

pytestmark = pytest.mark.fast

SOURCE = (
    "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
    "ok = isinstance(\n"
    "    s, MLAAttentionSpec\n"
    ")\n"
)
UNSAFE = Fix("unsafe", "Add SlidingWindowMLASpec", (Edit("X", (3, 8), (3, 24)),))
SPANNING = Finding("VSL001", "leaves out", "m.py", (2, 6), (4, 2), fix=UNSAFE)
AT_THE_TOP = Finding("VSL900", "cannot parse", "m.py", (1, 1), (1, 5))


def test_a_span_over_lines_is_underlined_to_the_end_of_its_first():
    assert format_full([SPANNING], {"m.py": SOURCE}).splitlines()[:8] == [
        "VSL001 leaves out",
        " --> m.py:2:6",
        "  |",
        "1 | from vllm.v1.kv_cache_interface import MLAAttentionSpec",
        "2 | ok = isinstance(",
        "  |      ^^^^^^^^^^^",
        "3 |     s, MLAAttentionSpec",
        "4 | )",
    ]


def test_the_first_line_is_framed_from_the_first_line():
    assert format_full([AT_THE_TOP], {"m.py": SOURCE}) == (
        "VSL900 cannot parse\n"
        " --> m.py:1:1\n"
        "  |\n"
        "1 | from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        "  | ^^^^\n"
        "2 | ok = isinstance(\n"
        "3 |     s, MLAAttentionSpec\n"
        "  |\n"
        "\n"
    )


def test_a_finding_past_the_last_line_has_an_empty_frame():
    past = Finding("VSL900", "cannot parse", "m.py", (6, 1), (6, 1))
    assert format_full([past], {"m.py": "a = 1\nb = (\n"}) == (
        "VSL900 cannot parse\n --> m.py:6:1\n  |\n  |\n\n"
    )


def test_unsafe_fixes_are_marked_only_when_asked():
    default = format_full([SPANNING], {"m.py": SOURCE})
    assert default == format_full([SPANNING], {"m.py": SOURCE}, unsafe=False)
    assert default.startswith("VSL001 leaves out\n")
    assert format_full([SPANNING], {}, unsafe=True).startswith(
        "VSL001 [*] leaves out\n"
    )
    assert format_statistics([SPANNING, AT_THE_TOP]) == (
        "1\tVSL001\t[ ] isinstance-leaves-out-companion\n"
        "1\tVSL900\t[ ] unreadable-file\n"
    )
    assert format_statistics([SPANNING], unsafe=True) == (
        "1\tVSL001\t[*] isinstance-leaves-out-companion\n"
    )


def test_sarif_regions_and_uris(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    outside = tmp_path.parent / "elsewhere" / "o.py"
    findings = [SPANNING, Finding("VSL001", "m", str(outside), (7, 3), (7, 9))]
    # Inside, though their names start with dots.
    for inside in (".ci/run.py", "..data/d.py"):
        findings.append(Finding("VSL001", "m", inside, (1, 1), (1, 2)))
    [run] = json.loads(format_sarif(findings))["runs"]
    locations = [r["locations"][0]["physicalLocation"] for r in run["results"]]
    assert [loc["artifactLocation"]["uri"] for loc in locations] == [
        "m.py",
        Path(os.path.abspath(outside)).as_uri(),
        ".ci/run.py",
        "..data/d.py",
    ]
    assert [loc["region"] for loc in locations][:2] == [
        {"startLine": 2, "startColumn": 6, "endLine": 4, "endColumn": 2},
        {"startLine": 7, "startColumn": 3, "endLine": 7, "endColumn": 9},
    ]


# -- closing lines of fix --diff ------------------------------------------------

SAFE = Fix("safe", "Add SlidingWindowMLASpec", (Edit("X", (3, 8), (3, 24)),))
SAFE_FIX = Finding("VSL004", "leaves out", "m.py", (2, 6), (2, 9), fix=SAFE)


@pytest.mark.parametrize(
    "would_fix, remaining, unsafe, expected",
    [
        (0, [], False, ""),
        (0, [AT_THE_TOP], False, ""),
        (0, [SPANNING], False,
         "No errors would be fixed (1 fix available with `--unsafe-fixes`).\n"),
        (0, [SPANNING, SPANNING], False,
         "No errors would be fixed (2 fixes available with `--unsafe-fixes`).\n"),
        (0, [SPANNING], True, ""),
        (2, [SPANNING], False,
         "Would fix 2 errors (1 additional fix available with `--unsafe-fixes`).\n"),
        (1, [SPANNING, SPANNING], False,
         "Would fix 1 error (2 additional fixes available with `--unsafe-fixes`).\n"),
        (1, [SPANNING, SAFE_FIX], True, "Would fix 1 error.\n"),
        (3, [SAFE_FIX], False, "Would fix 3 errors.\n"),
    ],
)  # fmt: skip
def test_the_diff_summary_counts_what_only_unsafe_fixes_would_do(
    would_fix, remaining, unsafe, expected
):
    assert diff_summary(would_fix, remaining, unsafe=unsafe) == expected


STRICT_ONLY = Finding(
    "VSL001", "leaves out", "m.py", (3, 8), (3, 24), suppressed_by="narrowed: x"
)


def test_concise_lines_mark_allowed_fixes_and_say_what_strict_mode_added():
    # Unsafe fixes are not allowed unless asked: the default is the explicit no.
    expected = "m.py:2:6: VSL001 leaves out\nm.py:3:8: VSL001 leaves out [strict; narrowed: x]\n"
    assert format_concise([SPANNING, STRICT_ONLY]) == expected
    assert format_concise([SPANNING, STRICT_ONLY], unsafe=False) == expected
    assert (
        format_concise([SPANNING], unsafe=True) == "m.py:2:6: VSL001 [*] leaves out\n"
    )


UNSAFE_AVAILABLE = "1 unsafe fix available with `--fix --unsafe-fixes`.\n"


def test_summaries_offer_unsafe_fixes_unless_they_are_allowed():
    assert check_summary([SPANNING]) == "Found 1 error.\n" + UNSAFE_AVAILABLE
    assert check_summary([SPANNING], unsafe=False) == check_summary([SPANNING])
    assert check_summary([SPANNING], unsafe=True) == (
        "Found 1 error.\n[*] 1 fixable with `--fix`.\n"
    )
    assert fix_summary(0, [SPANNING]) == "Found 1 error.\n" + UNSAFE_AVAILABLE
    assert fix_summary(0, [SPANNING], unsafe=True) == (
        "Found 1 error.\n[*] 1 fixable with `--fix`.\n"
    )
    fixed_two = "Found 3 errors (2 fixed, 1 remaining).\n"
    assert fix_summary(2, [SPANNING]) == fixed_two + UNSAFE_AVAILABLE
    assert fix_summary(2, [SPANNING], unsafe=False) == fixed_two + UNSAFE_AVAILABLE
    assert fix_summary(2, [SPANNING], unsafe=True) == fixed_two


def test_show_fixes_skips_files_without_fixes_and_names_known_rules():
    codes = {"a.py": Counter(), "b.py": Counter({"VSL001": 2, "VSL999": 1})}
    assert format_fixes(codes, applied=True) == (
        "\nFixed 3 errors:\n- b.py:\n"
        "    2 \u00d7 VSL001 (isinstance-leaves-out-companion)\n"
        "    1 \u00d7 VSL999\n\n"
    )
    assert format_fixes({"a.py": Counter()}, applied=False) == ""


def test_json_is_indented_by_two():
    assert format_json([SPANNING]).startswith('[\n  {\n    "code": "VSL001",\n')
    assert format_json([SPANNING]).endswith("\n]\n")


def test_statistics_as_json_count_unsafe_fixes_only_when_asked():
    """ruff's objects, indented by two; one fixable finding makes the code
    fixable."""
    expected = (
        "[\n"
        "  {\n"
        '    "code": "VSL001",\n'
        '    "name": "isinstance-leaves-out-companion",\n'
        '    "count": 1,\n'
        '    "fixable": %s,\n'
        '    "fixable_count": %d\n'
        "  }\n"
        "]\n"
    )
    assert format_statistics_json([SPANNING]) == expected % ("false", 0)
    assert format_statistics_json([SPANNING], unsafe=True) == expected % ("true", 1)


def test_nearby_edits_share_a_diff_window_and_later_windows_shift_by_added_rows():
    from vllm_spec_lint.faces.report import _edit_windows

    fix = Fix(
        "unsafe",
        "several edits",
        (
            Edit("i1\ni2\ni3\ni4\n", (1, 1), (1, 1)),  # 4 rows added above row 1
            Edit("X\nW", (2, 5), (2, 6)),  # 1 more, close enough to share
            Edit("p\nq", (5, 1), (5, 3)),  # three rows on: a window of its own
            Edit("z\n", (10, 1), (10, 1)),
        ),
    )
    # (rows before, rows after), 0-based and end-exclusive, one row of context.
    assert list(_edit_windows(fix, 20)) == [
        ((0, 3), (0, 8)),
        ((3, 6), (8, 12)),
        ((8, 11), (14, 18)),
    ]


def test_a_report_row_list_ends_where_the_text_does():
    from vllm_spec_lint.faces.report import _lines

    assert _lines("a\nb") == ["a", "b"]
    assert _lines("a\nb\n") == ["a", "b"]
    assert _lines("") == []
