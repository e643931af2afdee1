"""A file's last analysis, for a caller that checks the same file again and
again as it is edited (the language server).

libcst and the rules see only the file's slice (slicing.py). A keystroke
outside the slice, which is most of a file, leaves the slice's text as it
was: the findings are then the last analysis's, moved to the rows their
lines stand on now. Only the slice's text, the settings and the hierarchy
decide the findings, so that is the key.
"""

from __future__ import annotations

import re
from dataclasses import replace

from vllm_spec_lint.core.findings import FileAnalysis, Finding
from vllm_spec_lint.model.lines import split_lines
from vllm_spec_lint.repair.text import Edit


class LastAnalysis:
    """Held by the caller per file; :func:`analyze_source` reads and updates
    it. One assignment replaces what it holds: checks of the same buffer may
    run on two threads at once (the language server's)."""

    def __init__(self) -> None:
        # (key, hierarchy, the slice's rows, the analysis)
        self._held: tuple[tuple, object, list[int], FileAnalysis] | None = None

    def reuse(
        self, key: tuple, hierarchy: object, rows: list[int], source: str
    ) -> FileAnalysis | None:
        """The last analysis on today's rows, when ``key`` (and the same
        hierarchy) gave it; None when the file must be analysed."""
        held = self._held
        if held is None or held[1] is not hierarchy or held[0] != key:
            return None
        _, _, last_rows, analysis = held
        # Each kept row's place in the slice, then the row it stands on now.
        in_slice = {row: index for index, row in enumerate(last_rows)}
        lines = split_lines(source)

        def moved(row: int) -> int | None:
            index = in_slice.get(row)
            return None if index is None else rows[index]

        findings = [_moved(f, moved, lines) for f in analysis.findings]
        suppressed = [_moved(f, moved, lines) for f in analysis.suppressed]
        if None in findings or None in suppressed:
            return None  # a position off the slice's rows: analyse again
        return FileAnalysis(findings, suppressed=suppressed)

    def keep(
        self, key: tuple, hierarchy: object, rows: list[int], analysis: FileAnalysis
    ) -> None:
        self._held = (key, hierarchy, rows, analysis)


def _moved(finding: Finding, moved, lines: list[str]) -> Finding | None:
    start, end = moved(finding.location[0]), moved(finding.end_location[0])
    if start is None or end is None:
        return None
    fix = finding.fix
    if fix is not None:
        edits = []
        for edit in fix.edits:
            first, last = moved(edit.location[0]), moved(edit.end_location[0])
            if first is None or last is None:
                return None
            edits.append(
                Edit(
                    edit.content,
                    (first, edit.location[1]),
                    (last, edit.end_location[1]),
                )
            )
        fix = replace(fix, edits=tuple(edits))
    reason = finding.suppressed_by
    if reason is not None:
        # Reasons name the rows of other checks ("narrowed: `...` (line 9)").
        rows = [int(row) for row in _ROW_IN_REASON.findall(reason)]
        now = [moved(row) for row in rows]
        if None in now:
            return None
        reason = _ROW_IN_REASON.sub(lambda _: str(now.pop(0)), reason)
    return replace(
        finding,
        location=(start, finding.location[1]),
        end_location=(end, finding.end_location[1]),
        fix=fix,
        line_text=lines[start - 1],
        suppressed_by=reason,
    )


_ROW_IN_REASON = re.compile(r"(?<=\bline )\d+\b")
