"""Applying fixes to text (repair/text.py): which fixes go in together, and
where the changed text ends up. Every expected text and span is written out."""

from __future__ import annotations

import pytest

from vllm_spec_lint.model.lines import ends_and_starts, split_lines
from vllm_spec_lint.repair.text import Edit, Fix, apply_fixes, line_starts


def fix(*edits: tuple[str, tuple[int, int], tuple[int, int]]) -> Fix:
    return Fix("safe", "a fix", tuple(Edit(c, start, end) for c, start, end in edits))


TEXT = "x = a\ny = b\nz = c\n"


def test_two_fixes_apart_are_both_applied_with_their_spans_in_the_new_text():
    fixes = [
        fix(("AA", (1, 5), (1, 6))),  # a -> AA
        fix(("B", (2, 5), (2, 6))),  # b -> B
    ]
    text, changed, applied = apply_fixes(TEXT, fixes)
    assert text == "x = AA\ny = B\nz = c\n"
    assert applied == [0, 1]
    # "AA" at 4..6; "B" moved one right by the longer first edit: 11..12.
    assert changed == [(4, 6), (11, 12)]


def test_each_edit_shifts_every_later_span_by_the_sum_of_earlier_growth():
    fixes = [
        fix(("AAA", (1, 5), (1, 6))),  # +2
        fix(("BBB", (2, 5), (2, 6))),  # +2
        fix(("C", (3, 5), (3, 6))),
    ]
    text, changed, applied = apply_fixes(TEXT, fixes)
    assert text == "x = AAA\ny = BBB\nz = C\n"
    assert changed == [(4, 7), (12, 15), (20, 21)]


def test_a_fix_overlapping_an_earlier_one_is_left_for_the_next_pass():
    fixes = [
        fix(("A", (1, 1), (1, 6))),  # the whole first statement
        fix(("Q", (1, 5), (1, 6))),  # inside it
        fix(("B", (2, 5), (2, 6))),  # apart: still applied
    ]
    text, changed, applied = apply_fixes(TEXT, fixes)
    assert text == "A\ny = B\nz = c\n"
    assert applied == [0, 2]
    assert changed == [(0, 1), (6, 7)]


def test_a_fix_ending_inside_an_earlier_one_overlaps_it():
    fixes = [
        fix(("Q", (1, 3), (1, 6))),  # "= a"
        fix(("R", (1, 1), (1, 4))),  # "x =": ends inside the first
    ]
    text, _, applied = apply_fixes(TEXT, fixes)
    assert text == "x Q\ny = b\nz = c\n"
    assert applied == [0]


def test_a_fix_that_contains_an_earlier_one_overlaps_it():
    fixes = [
        fix(("Q", (1, 5), (1, 6))),
        fix(("R", (1, 1), (2, 1))),  # the whole first line
    ]
    text, _, applied = apply_fixes(TEXT, fixes)
    assert text == "x = Q\ny = b\nz = c\n"
    assert applied == [0]


def test_edits_that_touch_end_to_start_do_not_overlap():
    fixes = [
        fix(("P", (1, 1), (1, 2))),  # "x"
        fix(("Q", (1, 2), (1, 5))),  # " = " starts where "x" ends
    ]
    text, changed, applied = apply_fixes(TEXT, fixes)
    assert text == "PQa\ny = b\nz = c\n"
    assert applied == [0, 1]
    assert changed == [(0, 1), (1, 2)]


def test_a_replacement_ending_where_an_insertion_stands_does_not_overlap_it():
    fixes = [
        fix(("# new\n", (2, 1), (2, 1))),  # insertion before line 2
        fix(("A", (1, 5), (2, 1))),  # "a\n" up to that point
    ]
    text, _, applied = apply_fixes(TEXT, fixes)
    assert text == "x = A# new\ny = b\nz = c\n"
    assert applied == [0, 1]


def test_an_insertion_where_an_earlier_replacement_ends_does_not_overlap_it():
    fixes = [
        fix(("A", (1, 5), (2, 1))),  # "a\n" up to line 2
        fix(("# new\n", (2, 1), (2, 1))),  # insertion where it ends
    ]
    text, changed, applied = apply_fixes(TEXT, fixes)
    assert text == "x = A# new\ny = b\nz = c\n"
    assert applied == [0, 1]
    assert changed == [(4, 5), (5, 11)]


def test_two_different_insertions_at_one_point_overlap():
    fixes = [
        fix(("import a\n", (1, 1), (1, 1))),
        fix(("import b\n", (1, 1), (1, 1))),
    ]
    text, _, applied = apply_fixes(TEXT, fixes)
    assert text == "import a\n" + TEXT
    assert applied == [0]


def test_an_edit_shared_by_two_fixes_is_made_once_and_both_count_as_applied():
    shared = ("from m import C\n", (1, 1), (1, 1))
    fixes = [
        fix(shared, ("A", (1, 5), (1, 6))),
        fix(shared, ("B", (2, 5), (2, 6))),
    ]
    text, changed, applied = apply_fixes(TEXT, fixes)
    assert text == "from m import C\nx = A\ny = B\nz = c\n"
    assert applied == [0, 1]
    assert changed == [(0, 16), (20, 21), (26, 27)]


def test_an_edit_on_the_last_line_without_a_newline_lands_on_that_line():
    text, _, _ = apply_fixes("x = a\ny = b", [fix(("Z", (2, 1), (2, 2)))])
    assert text == "x = a\nZ = b"


def test_an_edit_past_the_last_line_appends_to_the_text():
    text, changed, _ = apply_fixes("x = a\n", [fix(("y = b\n", (3, 1), (3, 1)))])
    assert text == "x = a\ny = b\n"
    assert changed == [(6, 12)]


def test_a_fix_of_several_edits_is_skipped_whole_when_one_of_them_overlaps():
    fixes = [
        fix(("A", (1, 5), (1, 6))),
        fix(("B", (2, 5), (2, 6)), ("Q", (1, 5), (1, 6))),
        fix(("C", (3, 5), (3, 6))),
    ]
    text, _, applied = apply_fixes(TEXT, fixes)
    assert text == "x = A\ny = b\nz = C\n"
    assert applied == [0, 2]


@pytest.mark.parametrize(
    ("text", "starts"),
    [
        ("a\nb\n", [0, 2, 4]),
        ("a\r\nb", [0, 3]),
        ("a\rb\rc", [0, 2, 4]),
        ("", [0]),
    ],
)
def test_line_starts_split_lines_as_python_does(text, starts):
    assert line_starts(text) == starts


@pytest.mark.parametrize(
    ("text", "lines", "ends", "starts"),
    [
        ("a\nbc\n", ["a", "bc", ""], ["\n", "\n", ""], [0, 2, 5]),
        ("a\fb\n", ["a\fb", ""], ["\n", ""], [0, 4]),  # a form feed ends no line
        ("a\r\nb\rc\nd", ["a", "b", "c", "d"], ["\r\n", "\r", "\n", ""], [0, 3, 5, 7]),
        ("", [""], [""], [0]),
    ],
)
def test_lines_their_ends_and_starts_are_pythons(text, lines, ends, starts):
    assert split_lines(text) == lines
    assert ends_and_starts(text, lines) == (ends, starts)
