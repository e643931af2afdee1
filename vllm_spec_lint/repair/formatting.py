"""Laying out fixed statements the way vLLM's formatter would: ruff's range
formatting on just the spans a fix changed, so nothing else in the file moves."""

from __future__ import annotations

import shutil
import subprocess
import sys


def find_ruff() -> str | None:
    try:
        from ruff.__main__ import find_ruff_bin

        return find_ruff_bin()
    except (ImportError, FileNotFoundError):
        return shutil.which("ruff")


def _row_col(text: str, offset: int) -> tuple[int, int]:
    from vllm_spec_lint.repair.text import line_starts

    starts = line_starts(text)
    row = max(i for i, s in enumerate(starts) if s <= offset)
    return row + 1, offset - starts[row] + 1


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


class RuffRangeFormatter:
    """Formats spans of a file's text with ``ruff format --range``.

    ``path`` is passed as ``--stdin-filename`` so ruff uses the project's own
    settings; ``line_length`` comes from our configuration.
    """

    def __init__(self, path: str, line_length: int, ruff: str):
        self.path = path
        self.line_length = line_length
        self.ruff = ruff

    def __call__(self, text: str, spans: list[tuple[int, int]]) -> str:
        # Last span first, so the offsets of earlier spans stay valid.
        for start, end in reversed(_merged(spans)):
            (r1, c1), (r2, c2) = _row_col(text, start), _row_col(text, end)
            result = subprocess.run(
                [
                    self.ruff, "format", "--range", f"{r1}:{c1}-{r2}:{c2}",
                    "--line-length", str(self.line_length),
                    "--stdin-filename", self.path, "-",
                ],
                input=text.encode("utf-8"),
                capture_output=True,
                timeout=120,
            )  # fmt: skip
            if result.returncode != 0:
                raise FormatError(result.stderr.decode("utf-8", "replace").strip())
            text = result.stdout.decode("utf-8")
        return text


class FormatError(Exception):
    pass


NO_RUFF_WARNING = (
    "ruff is not installed: fixes are applied without formatting "
    "(pip install 'vllm-spec-lint[format]')"
)
_warned = False


def formatter_for(path: str, line_length: int):
    """The ruff range formatter, or None (with one warning per run) when ruff
    is not installed: fixes then apply unwrapped."""
    global _warned
    ruff = find_ruff()
    if ruff is None:
        if not _warned:
            print(f"warning: {NO_RUFF_WARNING}", file=sys.stderr)
            _warned = True
        return None
    return RuffRangeFormatter(path, line_length, ruff)
