"""Lines as Python counts them (no libcst here: runs that parse nothing
import this)."""

from __future__ import annotations

import re

# Line breaks as Python counts them.
NEWLINE = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """Lines as Python counts them (``str.splitlines`` also splits on form
    feeds and other separators, which would shift row numbers)."""
    return NEWLINE.split(text)
