"""One file's outcome, as a run (edges/runner.py) and its workers
(edges/workers.py) hand it on."""

from __future__ import annotations

from dataclasses import dataclass, field

from vllm_spec_lint.core.findings import Finding


@dataclass
class FileResult:
    """One file's outcome: its findings (what is left, after fixing), and
    when fixing changed it, the bytes before and after."""

    path: str
    findings: list[Finding]
    original: bytes | None = None
    fixed_source: bytes | None = None
    # The code of each finding fixed.
    fixed: tuple[str, ...] = ()
    failure: str | None = None
    suppressed: list[Finding] = field(default_factory=list)
