"""core/globs.py: the patterns git can match and the ones it cannot, as
``exclude`` and ``.gitignore`` lines are read (the CLI's view of them is in
tests/test_hard_edges.py)."""

from __future__ import annotations

import pytest

from vllm_spec_lint.core.globs import glob_problem, with_posix_classes

pytestmark = pytest.mark.fast


@pytest.mark.parametrize(
    "pattern",
    [
        "",
        "*.py",
        "vllm/**/nixl/",
        "a\\[b",  # an escaped bracket opens no set
        "a\\\\",  # an escaped backslash
        "[abc]",
        "[]abc]",  # a ']' first is a member
        "[!]a]",
        "[^a]",
        "[a-z]",
        "[a-]",  # a '-' last is a member
        "[-a]",
        "[--a]",  # from '-' to 'a'
        "[a-c-a]",  # 'a-c', then '-' and 'a': a range's end starts none
        "[[:alpha:]-a]",  # a class is no start of a range
        "[[:alpha:][:digit:]_]",
        "[\\]-a]",  # an escaped ']' starts a range
        "[a]b[c]",
        "[a-a]",  # a range of one
        "[b-[:alpha:]]",  # a class ends no range
        "[a[]",  # a '[' in a set is a member; the set ends at its ']'
    ],
)
def test_a_pattern_git_can_match_has_no_problem(pattern):
    assert glob_problem(pattern) is None


@pytest.mark.parametrize(
    "pattern, problem",
    [
        ("a\\", "ends with a backslash that escapes nothing"),
        ("[a]\\", "ends with a backslash that escapes nothing"),
        ("[abc", "a '[' that is never closed"),
        ("[]", "a '[' that is never closed"),
        ("[!]", "a '[' that is never closed"),
        ("[!", "a '[' that is never closed"),
        ("[", "a '[' that is never closed"),
        ("x[a]y[", "a '[' that is never closed"),
        ("[[:alpha:]", "a '[' that is never closed"),
        ("[[:", "a '[' that is never closed"),
        ("[z-a]", "the range 'z-a' runs backwards"),
        ("[!z-a]", "the range 'z-a' runs backwards"),
        ("[\\z-a]", "the range 'z-a' runs backwards"),
        ("[a--]", "the range 'a--' runs backwards"),
        ("[a-b][c-a]", "the range 'c-a' runs backwards"),
        ("[ab-a]", "the range 'b-a' runs backwards"),
        # After a range's end or a class, the next range starts afresh.
        ("[a-c-z-a]", "the range 'z-a' runs backwards"),
        ("[[:alpha:]-z-a]", "the range 'z-a' runs backwards"),
        ("[a\\", "a '[' that is never closed"),  # the backslash escapes nothing
        ("[[:alphx:]]", "unknown character class '[:alphx:]'"),
        ("[a[:word:]]", "unknown character class '[:word:]'"),
        ("[[::]]", "unknown character class '[::]'"),  # a class without a name
        # An escape outside a set covers one character, and the scan goes on.
        ("a\\b[c", "a '[' that is never closed"),
        ("\\*[z-a]", "the range 'z-a' runs backwards"),
        # Inside a set too: the escaped ']' is a member, not the set's end.
        ("[\\]z-a]", "the range 'z-a' runs backwards"),
        ("[\\]", "a '[' that is never closed"),
        ("[a\\]", "a '[' that is never closed"),
        ("[X-A]", "the range 'X-A' runs backwards"),  # only '!' and '^' negate
    ],
)
def test_a_pattern_git_cannot_match_says_why(pattern, problem):
    assert glob_problem(pattern) == problem


@pytest.mark.parametrize(
    "pattern, spelled",
    [
        ("[[:digit:]]*.py", "[0-9]*.py"),
        ("[[:upper:][:lower:]]", "[A-Za-z]"),
        ("[![:space:]]", "[! \t\n\v\f\r]"),
        ("[[:xdigit:]][[:alnum:]]", "[0-9A-Fa-f][0-9A-Za-z]"),
        ("[[:foo:]]", "[[:foo:]]"),  # unknown: refused before, kept here
    ],
)
def test_posix_classes_are_spelled_as_ranges(pattern, spelled):
    assert with_posix_classes(pattern) == spelled


def test_a_pattern_without_a_class_is_returned_itself():
    pattern = "".join(["vllm/", "[a-z]*.py"])
    assert with_posix_classes(pattern) is pattern
