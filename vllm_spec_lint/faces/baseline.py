"""Baselines: turn the check on for a big codebase today and fail only on
findings that are new.

An entry is keyed by the file (relative to the baseline's folder), the code,
the offending line's source with white space folded, and which occurrence of
that key in the file it is; so moving code up or down does not break it.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from vllm_spec_lint.core.findings import Finding
from vllm_spec_lint.edges.files import is_within

FORMAT_VERSION = 1


class BaselineError(Exception):
    pass


@dataclass(frozen=True)
class Entry:
    path: str
    code: str
    source: str
    occurrence: int


def _keyed(findings: list[Finding], folder: Path) -> list[tuple[Entry, Finding]]:
    seen: Counter = Counter()
    keyed = []
    for f in sorted(findings, key=lambda f: (f.path, f.location, f.code)):
        relative = Path(os.path.relpath(os.path.abspath(f.path), folder)).as_posix()
        base = (relative, f.code, " ".join(f.line_text.split()))
        keyed.append((Entry(*base, seen[base]), f))
        seen[base] += 1
    return keyed


def write_baseline(path: Path, findings: list[Finding]) -> int:
    entries = [e for e, _ in _keyed(findings, path.absolute().parent)]
    data = {
        "version": FORMAT_VERSION,
        "tool": "vllm-spec-lint",
        "entries": [e.__dict__ for e in entries],
    }
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return len(entries)


def read_baseline(path: Path) -> list[Entry]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("version") != FORMAT_VERSION:
            raise BaselineError(
                f"{path}: unsupported baseline version {data.get('version')!r}"
            )
        return [Entry(**e) for e in data["entries"]]
    except OSError as e:
        raise BaselineError(
            f"{path}: cannot read baseline: {e.strerror or e}"
        ) from None
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise BaselineError(f"{path}: not a vllm-spec-lint baseline: {e}") from None


def split_by_baseline(
    findings: list[Finding], path: Path, checked: list[Path]
) -> tuple[list[Finding], list[Entry]]:
    """Findings not in the baseline at ``path``, and the baseline entries
    under the ``checked`` paths that no longer match any finding (stale); an
    entry elsewhere was not looked at, so it is not stale."""
    entries = read_baseline(path)
    known = set(entries)
    folder = path.absolute().parent
    keyed = _keyed(findings, folder)
    new = [f for e, f in keyed if e not in known]
    matched = {e for e, _ in keyed}
    roots = [os.path.abspath(p) for p in checked]
    stale = [
        e
        for e in entries
        if e not in matched
        and any(is_within(os.path.abspath(folder / e.path), r) for r in roots)
    ]
    return sorted(new, key=lambda f: (f.path, f.location)), stale
