"""What analysing a file gives: findings, each with its fix (repair/edits.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from vllm_spec_lint.core.settings import PARSE_ERROR_CODE
from vllm_spec_lint.repair.text import Fix

__all__ = ["PARSE_ERROR_CODE", "FileAnalysis", "Finding", "parse_error", "wanted"]


@dataclass(frozen=True)
class Finding:
    code: str
    message: str
    path: str
    location: tuple[int, int]  # 1-based row and column
    end_location: tuple[int, int]
    fix: Fix | None = None
    # The reported line's source, for baselines.
    line_text: str = field(default="", compare=False)
    # Why the default mode leaves it out (set on findings strict mode adds).
    suppressed_by: str | None = None
    # A test on a metadata builder's own spec, as the rule reported it:
    # (the builder's class, the companions left out). Backend pairing
    # (edges/pairing.py) decides across the tree whether it stays.
    own_spec: tuple[str, ...] = field(default=(), compare=False)
    # Rules whose site this is too (a VSL008 test VSL001 or VSL002 would
    # otherwise report): their noqa silences it, and the migration counts it
    # under them.
    follows: tuple[str, ...] = field(default=(), compare=False)


@dataclass
class FileAnalysis:
    """What analysing one file gave (the findings name the file)."""

    findings: list[Finding]
    # Sites the default mode does not report, each with its reason.
    suppressed: list[Finding] = field(default_factory=list)


def wanted(finding: Finding, unsafe: bool) -> bool:
    """Whether a fix run applies this finding's fix."""
    return finding.fix is not None and (unsafe or finding.fix.applicability == "safe")


def parse_error(path: str, message: str, row: int = 1, column: int = 1) -> Finding:
    return Finding(PARSE_ERROR_CODE, message, path, (row, column), (row, column))
