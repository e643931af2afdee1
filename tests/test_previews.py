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
    ],
)
def test_a_previews_edit_is_narrow_and_cuts_no_word(old, new, edit):
    assert _narrowed(old, new, 5) == edit
