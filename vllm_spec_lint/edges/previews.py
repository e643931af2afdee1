"""What a report shows of a fix is what ``fix`` writes.

A rule's fix is a raw edit (``isinstance(x, (A, B))`` on one long line);
``fix`` lays it out with the project's formatter. A report that shows fixes
(the full format's diff, JSON's and SARIF's edits) runs the same first pass
for each file: every fix applied at once, the changed ranges laid out, as
``fix`` does; the laid-out text is then cut back into one fix per finding,
each holding the changed lines its own edits touched. One formatter call per
file with fixes, none for a file without.
"""

from __future__ import annotations

import difflib
from dataclasses import replace
from pathlib import Path

from vllm_spec_lint.core.findings import Finding
from vllm_spec_lint.core.settings import Config
from vllm_spec_lint.repair.formatting import FormatError, choose
from vllm_spec_lint.repair.text import Edit, apply_fixes


def laid_out(
    findings: list[Finding], sources: dict[str, str], config: Config, start: Path
) -> list[Finding]:
    """``findings`` with each fix as the project's formatter lays it out;
    findings in files not in ``sources``, or whose formatter fails or is not
    installed, keep their fix as the rule made it."""
    by_file: dict[str, list[Finding]] = {}
    for finding in findings:
        if finding.fix is not None and finding.path in sources:
            by_file.setdefault(finding.path, []).append(finding)
    if not by_file:
        return findings
    # A missing formatter is fix's to warn about; a report shows the raw edit.
    choice = choose(config.fix_formatter, start.absolute(), config.line_length, [])
    replaced: dict[int, Finding] = {}
    for path, with_fix in by_file.items():
        formatter = choice.for_file(path)
        if formatter is None:
            continue
        try:
            replaced.update(_laid_out_file(sources[path], with_fix, formatter))
        except FormatError:
            continue
    return [replaced.get(id(f), f) for f in findings]


def _laid_out_file(text: str, findings: list[Finding], formatter) -> dict:
    """{id(finding): the finding with its fix laid out} for the fixes the
    first pass of ``fix`` applies in ``text``."""
    new, changed, applied = apply_fixes(text, [f.fix for f in findings])
    formatted = formatter(new, changed)
    before = text.splitlines(keepends=True)
    after = formatted.splitlines(keepends=True)
    blocks = [
        (i1, i2, j1, j2)
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(
            None, before, after, autojunk=False
        ).get_opcodes()
        if tag != "equal"
    ]
    result = {}
    for index in applied:
        finding = findings[index]
        rows = [
            (e.location[0] - 1, e.end_location[0] - 1) for e in finding.fix.edits
        ]  # 0-based, both ends included
        edits = tuple(
            Edit("".join(after[j1:j2]), (i1 + 1, 1), (i2 + 1, 1))
            for i1, i2, j1, j2 in blocks
            if any(first < max(i2, i1 + 1) and i1 <= last for first, last in rows)
        )
        if edits:
            result[id(finding)] = replace(
                finding, fix=replace(finding.fix, edits=edits)
            )
    return result
