"""Fixing a file's text: analyse, apply the fixes, lay out what changed,
analyse again, until nothing fixable is left. No file I/O: the caller reads
and writes files and passes in the formatter (repair/formatting.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from vllm_spec_lint.core.analysis import analyze_source
from vllm_spec_lint.core.findings import Finding, wanted
from vllm_spec_lint.core.settings import Config
from vllm_spec_lint.model.hierarchy import ClassHierarchy
from vllm_spec_lint.repair.text import apply_fixes

# Formatter: (text, [(start offset, end offset), ...], the text as found) -> text
Formatter = Callable[[str, list[tuple[int, int]], str], str]


@dataclass
class FixOutcome:
    text: str
    # The code of each finding fixed.
    fixed: tuple[str, ...] = ()
    remaining: list[Finding] = field(default_factory=list)
    failure: str | None = None


def fix_source(
    text: str,
    path: str,
    config: Config,
    hierarchy: ClassHierarchy | None = None,
    *,
    module_name: str | None = None,
    unsafe: bool = False,
    formatter: Formatter | None = None,
    select: Callable[[Finding], bool] = lambda f: True,
    max_passes: int = 4,
) -> FixOutcome:
    """Fix ``text`` until nothing fixable is left (a few passes at most: a
    fix that overlaps another waits for the next pass)."""

    def analyze(source: str):
        return analyze_source(
            source, path, config, hierarchy, module_name=module_name
        ).findings

    current, fixed = text, ()
    findings = first = analyze(current)
    for _ in range(max_passes):
        todo = [f for f in findings if wanted(f, unsafe) and select(f)]
        if not todo:  # also when the file does not parse: VSL900 has no fix
            break
        new, changed, applied = apply_fixes(current, [f.fix for f in todo])
        if formatter is not None:
            new = formatter(new, changed, text)
        findings = analyze(new)
        if any(f.code == "VSL900" for f in findings):
            return FixOutcome(
                text,
                remaining=first,
                failure="the fixed code does not parse; not written",
            )
        current = new
        fixed += tuple(todo[i].code for i in applied)
    still = [f for f in findings if wanted(f, unsafe) and select(f)]
    if still:
        return FixOutcome(
            text,
            remaining=findings,
            failure=f"{still[0].code} at {still[0].location[0]}:{still[0].location[1]}"
            " is still reported after fixing; not written",
        )
    return FixOutcome(current, fixed, findings)
