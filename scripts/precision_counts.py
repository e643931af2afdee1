"""Write docs/precision.md's table of counts on vLLM releases.

    python scripts/precision_counts.py

For each release (fetched with scripts/fetch_sources.py), one
`vllm-spec-lint check --explain-suppressions` over the whole tree: the
findings the default mode reports, and the sites it leaves out by the first
word of their reason. tests/test_hard_edges.py computes the same and
compares it with the page: run this after a change that moves a count.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PAGE = REPO / "docs" / "precision.md"
VERSIONS = ("0.24.0", "0.29.0", "0.33.0", "0.34.0")
START, END = "<!-- counts:start -->", "<!-- counts:end -->"
# The reasons' first words, in the page's order (model/narrowing.py and the
# rules say them).
REASONS = ("narrowed", "deliberate", "assert", "raise", "shared", "pairing")


def counts(tree: Path) -> tuple[int, Counter]:
    """Findings reported by default, and the left-out sites per reason."""
    out = subprocess.run(
        [sys.executable, "-m", "vllm_spec_lint", "check", "--no-cache",
         "--explain-suppressions", "--output-format", "concise", "-q", "."],
        cwd=tree, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if out.returncode not in (0, 1):
        raise RuntimeError(f"{tree}: check failed: {out.stderr}")
    reported, left_out = 0, Counter()
    for line in out.stdout.splitlines():
        reason = re.search(r" not reported: (\w+)", line)
        if reason:
            left_out[reason.group(1)] += 1
        else:
            reported += 1
    return reported, left_out


def table(rows: dict[str, tuple[int, Counter]]) -> str:
    head = "| vLLM | strict | default | left out: " + " / ".join(REASONS) + " |"
    lines = [head, "|---|---|---|---|"]
    for version, (reported, left_out) in rows.items():
        unknown = set(left_out) - set(REASONS)
        if unknown:
            raise RuntimeError(
                f"{version}: reasons the table has no column for: {unknown}"
            )
        strict = reported + sum(left_out.values())
        split = " / ".join(str(left_out[r]) for r in REASONS)
        lines.append(f"| {version} | {strict} | {reported} | {split} |")
    return "\n".join(lines) + "\n"


def page_table(text: str) -> str:
    """The table between the page's markers."""
    return text[text.index(START) + len(START) : text.index(END)].lstrip("\n")


def with_table(text: str, new: str) -> str:
    start, end = text.index(START) + len(START), text.index(END)
    return text[:start] + "\n" + new + text[end:]


def main() -> None:
    sys.path.insert(0, str(REPO / "scripts"))
    from fetch_sources import fetch_sources

    rows = {v: counts(fetch_sources(f"vllm=={v}")) for v in VERSIONS}
    text = PAGE.read_text()
    PAGE.write_text(with_table(text, table(rows)))
    print(table(rows), end="")


if __name__ == "__main__":
    main()
