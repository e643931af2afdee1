"""Output formats for findings."""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import replace

from vllm_spec_lint.core.findings import PARSE_ERROR_CODE, Finding, wanted
from vllm_spec_lint.core.settings import RULE_NAMES, rule_url
from vllm_spec_lint.model.lines import split_lines


def _text_line(f: Finding, unsafe: bool) -> str:
    marker = "[*] " if wanted(f, unsafe) else ""
    line = f"{f.path}:{f.location[0]}:{f.location[1]}: {f.code} {marker}{f.message}"
    return line + (f" [strict; {f.suppressed_by}]" if f.suppressed_by else "")


def format_suppressions(suppressed: list[Finding]) -> str:
    """One line per site the default mode does not report, with the reason."""
    return "".join(
        f"{f.path}:{f.location[0]}:{f.location[1]}: {f.code} not reported: "
        f"{f.suppressed_by}\n"
        for f in suppressed
    )


def format_concise(findings: list[Finding], *, unsafe: bool = False) -> str:
    """One line per finding, as ruff's concise format; ``[*]`` marks the
    findings a fix run with the same options would fix."""
    return "".join(_text_line(f, unsafe) + "\n" for f in findings)


# -- ruff's full format: a code frame, help, the fix as a diff ------------------

_CONTEXT = 2  # lines shown around the reported line, as ruff does
_DIFF_CONTEXT = 1


def format_full(
    findings: list[Finding], sources: dict[str, str], *, unsafe: bool = False
) -> str:
    """As ruff's default ``full`` format: per finding, its code and message,
    the location, a frame of the source with the span underlined, what the
    fix does and the fix as a diff, and whether it is unsafe. ``sources``
    holds the text of each file (none for files that could not be read)."""
    lines_of: dict[str, list[str] | None] = {}  # each file split once
    for f in findings:
        if f.path not in lines_of:
            source = sources.get(f.path)
            lines_of[f.path] = None if source is None else _lines(source)
    return "".join(_full(f, lines_of[f.path], unsafe) + "\n" for f in findings)


def _full(f: Finding, lines: list[str] | None, unsafe: bool) -> str:
    marker = "[*] " if wanted(f, unsafe) else ""
    row, column = f.location
    head = f"{f.code} {marker}{f.message}"
    if lines is None:
        return f"{head}\n --> {f.path}:{row}:{column}\n"
    first, last = max(1, row - _CONTEXT), min(len(lines), row + _CONTEXT)
    width = len(str(max(last, row)))
    gutter = " " * width
    out = [head, f"{gutter}--> {f.path}:{row}:{column}", f"{gutter} |"]
    for number in range(first, last + 1):
        text = lines[number - 1]  # the window ends at the last line
        out.append(f"{number:>{width}} | {text}".rstrip())
        if number == row:
            end = f.end_location[1] if f.end_location[0] == row else len(text) + 1
            out.append(f"{gutter} | {' ' * (column - 1)}{'^' * max(1, end - column)}")
    out.append(f"{gutter} |")
    if f.suppressed_by:
        out.append(f"note: not reported by default: {f.suppressed_by}")
    if f.fix is not None:
        out.append(f"help: {f.fix.message}")
        out += _fix_diff(lines, f.fix)
        if f.fix.applicability != "safe":
            out.append("note: This is an unsafe fix and may change runtime behavior")
    if f.code != PARSE_ERROR_CODE:
        out.append(
            "note: if leaving it out is deliberate, keep the code and say so: "
            f"`# noqa: {f.code}` with the reason"
        )
    return "\n".join(out) + "\n"


def _lines(text: str) -> list[str]:
    """The rows as Python counts them; a final newline ends a row, adds none."""
    lines = split_lines(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _fix_diff(before: list[str], fix) -> list[str]:
    """The fix as ruff shows it: changed lines with one line of context,
    numbered as in the fixed file; removed lines unnumbered. Only the rows
    around the edits are fixed and compared (the whole file, per finding,
    would make a report quadratic in the file's findings)."""
    import difflib

    windows = list(_edit_windows(fix, len(before)))
    after: dict[int, str] = {}  # the fixed file's rows, around the edits
    for (o1, o2), (n1, _) in windows:
        for offset, line in enumerate(_fixed_rows(before, fix, o1, o2)):
            after[n1 + offset] = line
    width = len(str(len(before) + _rows_added(fix)))
    gutter = " " * width
    out = [f"{gutter} |"]
    groups = []
    for (o1, o2), (n1, n2) in windows:
        matcher = difflib.SequenceMatcher(
            None, before[o1:o2], [after[j] for j in range(n1, n2)], autojunk=False
        )
        groups += [
            [(tag, o1 + i1, o1 + i2, n1 + j1, n1 + j2) for tag, i1, i2, j1, j2 in group]
            for group in matcher.get_grouped_opcodes(_DIFF_CONTEXT)
        ]
    for index, group in enumerate(groups):
        if index:
            out.append(f"{gutter} ...")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [
                    f"{j + 1:>{width}} | {after[j]}".rstrip() for j in range(j1, j2)
                ]
                continue
            out += [f"{gutter} - {before[i]}".rstrip() for i in range(i1, i2)]
            out += [f"{j + 1:>{width}} + {after[j]}".rstrip() for j in range(j1, j2)]
    out.append(f"{gutter} |")
    return out


def _fixed_rows(before: list[str], fix, first: int, stop: int) -> list[str]:
    """Rows ``first`` to ``stop`` (0-based, ``stop`` excluded) with the fix's
    edits inside them made: the same rows of the fixed file."""
    from vllm_spec_lint.repair.text import apply_fixes

    window = "\n".join(before[first:stop]) + "\n"
    local = replace(
        fix,
        edits=tuple(
            replace(
                e,
                location=(e.location[0] - first, e.location[1]),
                end_location=(e.end_location[0] - first, e.end_location[1]),
            )
            for e in fix.edits
            if first < e.location[0] <= stop + 1  # + 1: an insertion at the end
        ),
    )
    fixed, _, _ = apply_fixes(window, [local])
    return _lines(fixed)


def _rows_added(fix) -> int:
    from vllm_spec_lint.model.lines import NEWLINE

    return sum(
        len(NEWLINE.findall(e.content)) - (e.end_location[0] - e.location[0])
        for e in fix.edits
    )


def _edit_windows(fix, rows: int):
    """Per group of nearby edits, the 0-based row ranges ``(start, end)`` it
    covers in the file before and after the fix, with one row of context."""
    from vllm_spec_lint.model.lines import NEWLINE

    spans = sorted(
        (e.location[0], e.end_location[0], len(NEWLINE.findall(e.content)))
        for e in fix.edits
    )
    groups: list[list[int]] = []  # [first row, last row, rows added]
    for first, last, newlines in spans:
        added = newlines - (last - first)
        if groups and first <= groups[-1][1] + 2 * _DIFF_CONTEXT:
            groups[-1][1] = max(groups[-1][1], last)
            groups[-1][2] += added
        else:
            groups.append([first, last, added])
    shift = 0
    for first, last, added in groups:
        start = max(first - 1 - _DIFF_CONTEXT, 0)
        end = min(last + _DIFF_CONTEXT, rows)
        yield (start, end), (start + shift, end + shift + added)
        shift += added


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``1 error``, ``2 errors``, ``2 entries``; ``nouns`` when irregular."""
    if count == 1:
        return f"1 {noun}"
    if nouns is None:
        nouns = noun[:-1] + "ies" if noun.endswith("y") else noun + "s"
    return f"{count} {nouns}"


def _hidden(findings: list[Finding], unsafe: bool) -> int:
    """Fixes that only ``--unsafe-fixes`` would apply."""
    if unsafe:
        return 0
    return sum(1 for f in findings if f.fix and not wanted(f, False))


def _unsafe_available(hidden: int) -> str:
    fixes = plural(hidden, "unsafe fix", "unsafe fixes")
    return f"{fixes} available with `--fix --unsafe-fixes`"


def check_summary(findings: list[Finding], *, unsafe: bool = False) -> str:
    """ruff's closing lines for a check: how many, how many ``--fix`` would
    fix (safe fixes only, unless ``unsafe``), and how many only
    ``--unsafe-fixes`` would."""
    if not findings:
        return "All checks passed!\n"
    text = f"Found {plural(len(findings), 'error')}.\n"
    fixable = sum(1 for f in findings if wanted(f, unsafe))
    hidden = _hidden(findings, unsafe)
    if fixable and hidden:
        return (
            text
            + f"[*] {fixable} fixable with `--fix` ({_unsafe_available(hidden)}).\n"
        )
    if fixable:
        return text + f"[*] {fixable} fixable with `--fix`.\n"
    if hidden:
        return text + f"{_unsafe_available(hidden)}.\n"
    return text


def fix_summary(fixed: int, remaining: list[Finding], *, unsafe: bool = False) -> str:
    """ruff's closing lines for a fix run."""
    if not fixed:
        return check_summary(remaining, unsafe=unsafe)
    found = plural(fixed + len(remaining), "error")
    text = f"Found {found} ({fixed} fixed, {len(remaining)} remaining).\n"
    hidden = _hidden(remaining, unsafe)
    if hidden:
        text += f"{_unsafe_available(hidden)}.\n"
    return text


def diff_summary(would_fix: int, remaining: list[Finding], *, unsafe: bool) -> str:
    """ruff's closing line for ``--diff``."""
    hidden = _hidden(remaining, unsafe)
    if not would_fix:
        if not hidden:
            return ""
        more = plural(hidden, "fix", "fixes")
        return f"No errors would be fixed ({more} available with `--unsafe-fixes`).\n"
    text = f"Would fix {plural(would_fix, 'error')}"
    if hidden:
        more = plural(hidden, "additional fix", "additional fixes")
        text += f" ({more} available with `--unsafe-fixes`)"
    return text + ".\n"


def fixed_codes(results) -> dict[str, Counter]:
    """Per file, the codes of the findings a fix run fixed."""
    return {r.path: Counter(r.fixed) for r in results}


def fixable_codes(results, *, unsafe: bool) -> dict[str, Counter]:
    """Per file, the codes of the findings a fix run would fix."""
    return {
        r.path: Counter(f.code for f in r.findings if wanted(f, unsafe))
        for r in results
    }


def format_fixes(codes_by_file: dict[str, Counter], *, applied: bool) -> str:
    """``--show-fixes``: per file, how many findings of each code were (or a
    fix run would be) fixed; as ruff lists them."""
    from vllm_spec_lint.faces.rule_docs import rule_doc

    total = sum(sum(c.values()) for c in codes_by_file.values())
    if not total:
        return ""
    verb = "Fixed" if applied else "Would fix"
    lines = ["", f"{verb} {plural(total, 'error')}:"]
    for path, codes in codes_by_file.items():
        if not codes:
            continue
        lines.append(f"- {path}:")
        for code, count in sorted(codes.items()):
            doc = rule_doc(code)
            name = f" ({doc.name})" if doc is not None else ""
            lines.append(f"    {count} \u00d7 {code}{name}")
    return "\n".join(lines) + "\n\n"


def _position(row_col: tuple[int, int]) -> dict:
    return {"row": row_col[0], "column": row_col[1]}


def finding_as_json(finding: Finding) -> dict:
    """One finding in ruff's JSON shape."""
    fix = None
    if finding.fix is not None:
        fix = {
            "applicability": finding.fix.applicability,
            "message": finding.fix.message,
            "edits": [
                {
                    "content": e.content,
                    "location": _position(e.location),
                    "end_location": _position(e.end_location),
                }
                for e in finding.fix.edits
            ],
        }
    return {
        "code": finding.code,
        "message": finding.message,
        "filename": os.path.abspath(finding.path),
        "location": _position(finding.location),
        "end_location": _position(finding.end_location),
        "fix": fix,
        "noqa_row": finding.location[0],
        "url": rule_url(finding.code),
        "name": RULE_NAMES[finding.code],
        "suppressed_by": finding.suppressed_by,
    }


def format_json(findings: list[Finding]) -> str:
    return json.dumps([finding_as_json(f) for f in findings], indent=2) + "\n"


def _statistics(findings: list[Finding], unsafe: bool) -> list[tuple[str, int, int]]:
    """(code, findings, fixable findings) per code, most frequent first."""
    counts = Counter(f.code for f in findings)
    fixable = Counter(f.code for f in findings if wanted(f, unsafe))
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [(code, n, fixable[code]) for code, n in rows]


def format_statistics(findings: list[Finding], *, unsafe: bool = False) -> str:
    """As ruff's ``--statistics``: count, code, fix marker and the rule's
    name, most frequent first."""
    rows = _statistics(findings, unsafe)
    width = len(str(max((n for _, n, _ in rows), default=0)))
    return "".join(
        f"{n:>{width}}\t{code}\t{'[*]' if fixable else '[ ]'} {RULE_NAMES[code]}\n"
        for code, n, fixable in rows
    )


def format_statistics_json(findings: list[Finding], *, unsafe: bool = False) -> str:
    """``--statistics --output-format json``: ruff's objects, in its order."""
    rows = [
        {
            "code": code,
            "name": RULE_NAMES[code],
            "count": n,
            "fixable": fixable > 0,
            "fixable_count": fixable,
        }
        for code, n, fixable in _statistics(findings, unsafe)
    ]
    return json.dumps(rows, indent=2) + "\n"


# -- GitHub Actions ------------------------------------------------------------


def _escape_data(text: str) -> str:
    """A workflow command's message, escaped as GitHub's runner unescapes it."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def format_github(findings: list[Finding]) -> str:
    lines = []
    for f in findings:
        properties = ",".join(
            f"{key}={_escape_property(str(value))}"
            for key, value in (
                ("file", f.path),
                ("line", f.location[0]),
                ("col", f.location[1]),
                ("endLine", f.end_location[0]),
                ("endColumn", f.end_location[1]),
                (
                    "title",
                    f"{f.code} {RULE_NAMES[f.code]} ({rule_url(f.code)})",
                ),
            )
        )
        lines.append(f"::error {properties}::{_escape_data(f'{f.code} {f.message}')}\n")
    return "".join(lines)


# -- SARIF 2.1.0 ---------------------------------------------------------------


def _uri(path: str) -> str:
    from pathlib import Path
    from urllib.parse import quote

    from vllm_spec_lint.edges.files import is_within

    absolute = os.path.abspath(path)
    if not is_within(absolute, os.getcwd()):
        return Path(absolute).as_uri()
    return quote(Path(os.path.relpath(absolute)).as_posix())


def _region(start: tuple[int, int], end: tuple[int, int]) -> dict:
    return {
        "startLine": start[0],
        "startColumn": start[1],
        "endLine": end[0],
        "endColumn": end[1],
    }


def format_sarif(findings: list[Finding]) -> str:
    from vllm_spec_lint import __version__
    from vllm_spec_lint.faces.rule_docs import rule_docs

    docs = rule_docs()
    index = {d.code: i for i, d in enumerate(docs)}
    rules = [
        {
            "id": d.code,
            "name": d.name,
            "shortDescription": {"text": d.summary},
            "fullDescription": {"text": d.body},
            "help": {"text": d.explain(), "markdown": d.explain()},
            "helpUri": rule_url(d.code),
            "defaultConfiguration": {"level": "error"},
        }
        for d in docs
    ]
    results = []
    for f in findings:
        result = {
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": "error",
            "message": {"text": f.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": _uri(f.path)},
                        "region": _region(f.location, f.end_location),
                    }
                }
            ],
        }
        if f.fix is not None:
            result["fixes"] = [
                {
                    "description": {"text": f"{f.fix.message} ({f.fix.applicability})"},
                    "artifactChanges": [
                        {
                            "artifactLocation": {"uri": _uri(f.path)},
                            "replacements": [
                                {
                                    "deletedRegion": _region(
                                        e.location, e.end_location
                                    ),
                                    "insertedContent": {"text": e.content},
                                }
                                for e in f.fix.edits
                            ],
                        }
                    ],
                }
            ]
        results.append(result)
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "vllm-spec-lint",
                        "version": __version__,
                        "informationUri": "https://pypi.org/project/vllm-spec-lint/",
                        "rules": rules,
                    }
                },
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2) + "\n"
