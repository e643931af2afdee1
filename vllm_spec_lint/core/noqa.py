"""Inline suppression comments, with flake8's semantics."""

from __future__ import annotations

import re

# As flake8 reads them: a bare noqa, or one followed by ": VSL001,VSL002".
NOQA_RE = re.compile(
    r"#\s*noqa"
    r"(?::[\s]?(?P<codes>[A-Z][A-Z0-9]*[0-9](?:[,\s]+[A-Z][A-Z0-9]*[0-9])*))?",
    re.IGNORECASE,
)


def is_suppressed(line: str, code: str) -> bool:
    """True when ``line`` carries a noqa comment that covers ``code``."""
    for match in NOQA_RE.finditer(line):
        codes = match.group("codes")
        if codes is None:
            return True
        if any(code.startswith(c.upper()) for c in re.split(r"[,\s]+", codes) if c):
            return True
    return False
