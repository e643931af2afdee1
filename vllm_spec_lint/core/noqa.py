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


def add_noqa(
    text: str, codes_by_row: dict[int, set[str]]
) -> tuple[str, int, list[int]]:
    """``# noqa: CODE`` on each row of ``codes_by_row`` (1-based), merged into
    a noqa comment the line has (``# noqa: E501`` -> ``# noqa: E501, VSL001``).
    A row whose end cannot take a comment (inside a multi-line string, or a
    backslash continuation) is left alone. Gives the new text, how many
    directives were added or extended, and the rows left alone."""
    lines = text.splitlines(keepends=True)
    closed = _rows_that_cannot_end_in_a_comment(text)
    added, skipped = 0, []
    for row in sorted(codes_by_row):
        if row > len(lines) or row in closed:
            skipped.append(row)
            continue
        line = lines[row - 1]
        body = line.rstrip("\r\n")
        ending = line[len(body) :]
        new = sorted(c for c in codes_by_row[row] if not is_suppressed(body, c))
        if not new:
            continue
        lines[row - 1] = _with_codes(body, new) + ending
        added += 1
    return "".join(lines), added, skipped


def _with_codes(line: str, codes: list[str]) -> str:
    comment = _comment_start(line)
    match = None if comment is None else NOQA_RE.search(line, comment)
    if match is None or match.group("codes") is None:
        return f"{line.rstrip()}  # noqa: {', '.join(codes)}"
    listed = [c for c in re.split(r"[,\s]+", match.group("codes")) if c]
    start, end = match.span("codes")
    return line[:start] + ", ".join(listed + codes) + line[end:]


def _tokens(text: str):
    import io
    import tokenize

    try:
        yield from tokenize.generate_tokens(io.StringIO(text).readline)
    except (tokenize.TokenError, SyntaxError):
        return


def _comment_start(line: str) -> int | None:
    """Where the line's comment starts (not a ``#`` in a string), if any."""
    import tokenize

    for token in _tokens(line + "\n"):
        if token.type == tokenize.COMMENT:
            return token.start[1]
    return None


def _rows_that_cannot_end_in_a_comment(text: str) -> set[int]:
    """Rows whose end is inside a string (an f-string's too, from its start
    to its end), or that continue with a backslash."""
    import tokenize

    rows: set[int] = set()
    fstrings: list[int] = []  # rows where the open f-strings start
    start_type = getattr(tokenize, "FSTRING_START", None)
    end_type = getattr(tokenize, "FSTRING_END", None)
    for token in _tokens(text):
        if token.type == start_type:
            fstrings.append(token.start[0])
        elif token.type == end_type and fstrings:
            rows.update(range(fstrings.pop(), token.end[0]))
        elif token.type == tokenize.STRING:
            rows.update(range(token.start[0], token.end[0]))
    for row, line in enumerate(text.splitlines(), start=1):
        if line.endswith("\\"):
            rows.add(row)
    return rows
