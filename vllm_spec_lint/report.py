"""Output formats for findings."""

from __future__ import annotations

import json
import os
from collections import Counter

from vllm_spec_lint.analysis import Finding


def format_text(findings: list[Finding], *, files_checked: int) -> str:
    lines = [
        f"{f.path}:{f.location[0]}:{f.location[1]}: {f.code} {f.message}"
        for f in findings
    ]
    fixable = sum(1 for f in findings if f.fix is not None)
    if findings:
        summary = f"Found {len(findings)} error{'s' if len(findings) != 1 else ''}"
        summary += (
            f" in {files_checked} file{'s' if files_checked != 1 else ''} checked."
        )
        if fixable:
            summary += f"\n[*] {fixable} fixable with `vllm-spec-lint fix`."
        lines.append(summary)
    else:
        lines.append(f"All checks passed ({files_checked} files checked).")
    return "\n".join(lines) + "\n"


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
        "url": None,
    }


def format_json(findings: list[Finding]) -> str:
    return json.dumps([finding_as_json(f) for f in findings], indent=2) + "\n"


def format_statistics(findings: list[Finding]) -> str:
    counts = Counter(f.code for f in findings)
    return "".join(f"{n:>5}\t{code}\n" for code, n in sorted(counts.items()))
