"""Fixes as data (a fix is a list of text edits) and applying them to text.
No libcst here: the findings carry fixes, and runs that parse nothing import
the findings."""

from __future__ import annotations

from dataclasses import dataclass

from vllm_spec_lint.model.lines import NEWLINE


@dataclass(frozen=True)
class Edit:
    """Replace the text between two 1-based (row, column) positions."""

    content: str
    location: tuple[int, int]
    end_location: tuple[int, int]


@dataclass(frozen=True)
class Fix:
    applicability: str
    message: str
    edits: tuple[Edit, ...]


def line_starts(text: str) -> list[int]:
    """Offset of each line's start, splitting lines as Python does."""
    return [0] + [m.end() for m in NEWLINE.finditer(text)]


def _offset(starts: list[int], text: str, row_col: tuple[int, int]) -> int:
    row, column = row_col
    if row > len(starts):
        return len(text)
    return starts[row - 1] + column - 1


def apply_fixes(
    text: str, fixes: list[Fix]
) -> tuple[str, list[tuple[int, int]], list[int]]:
    """Apply every fix whose edits do not overlap an earlier fix's.

    Identical edits (the same import added for several findings) are made
    once. Returns the new text, the spans it changed (offsets in the new
    text) and the indices of the fixes applied.
    """
    starts = line_starts(text)
    accepted: dict[tuple[int, int, str], None] = {}
    applied = []
    for index, fix in enumerate(fixes):
        spans = [
            (
                _offset(starts, text, e.location),
                _offset(starts, text, e.end_location),
                e.content,
            )
            for e in fix.edits
        ]
        new = [s for s in spans if s not in accepted]
        if any(
            s[0] < a[1] and a[0] < s[1] or (s[0] == a[0] == s[1] == a[1])
            for s in new
            for a in accepted
        ):
            continue  # overlaps: the next pass gets it
        accepted.update(dict.fromkeys(new))
        applied.append(index)
    pieces, changed, cursor, shift = [], [], 0, 0
    for start, end, content in sorted(accepted):
        pieces.append(text[cursor:start])
        pieces.append(content)
        new_start = start + shift
        changed.append((new_start, new_start + len(content)))
        shift += len(content) - (end - start)
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces), changed, applied


def common_ends(old, new) -> tuple[int, int]:
    """How many items two sequences (strings, lists of lines) begin with
    alike, and how many of the rest they end with alike."""
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while (
        tail < min(len(old), len(new)) - head
        and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]
    ):
        tail += 1
    return head, tail
