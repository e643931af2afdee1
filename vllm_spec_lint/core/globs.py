"""Glob patterns as git reads them, before pathspec or fnmatch sees them.

Two readers, two tolerances: a ``.gitignore`` is git's file, and a line git
cannot match is skipped as git skips it; ``exclude`` and ``per-file-ignores``
are ours, and a pattern that cannot mean what its writer meant is refused
(ruff refuses the same ones).
"""

from __future__ import annotations

# git's wildmatch knows POSIX classes inside brackets; Python's regular
# expressions do not (``[[:alpha:]]`` would be a set of ``[:alph`` and a
# stray ``]``). Each as ranges that pathspec passes through unchanged: no
# backslash (pathspec doubles them), no ``]`` (it would end the set), no
# ``/`` (it would split the pattern; no file name holds one anyway) and no
# ``!`` or ``^`` first (a class may open the set, where they negate it).
POSIX_CLASSES = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "blank": " \t",
    "cntrl": "\x00-\x1f\x7f",
    "digit": "0-9",
    "graph": "0-~!-.",
    "lower": "a-z",
    "print": " -~",
    "punct": ":-@!-.[-`{-~",
    "space": " \t\n\v\f\r",
    "upper": "A-Z",
    "xdigit": "0-9A-Fa-f",
}


def glob_problem(pattern: str) -> str | None:
    """Why ``pattern`` cannot be used as a glob, or None: an unclosed ``[``,
    a range that runs backwards, an unknown ``[:class:]``, a trailing
    backslash (which escapes nothing)."""
    end = len(pattern)
    i = 0
    while i < end:
        char = pattern[i]
        if char == "\\":
            if i + 1 == end:
                return "ends with a backslash that escapes nothing"
            i += 2
            continue
        if char == "[":
            closing, problem = _bracket(pattern, i + 1)
            if problem:
                return problem
            i = closing + 1
            continue
        i += 1
    return None


def _bracket(pattern: str, start: int) -> tuple[int, str | None]:
    """The index of the ``]`` closing the set opened before ``start``, and
    what is wrong inside it."""
    end = len(pattern)
    i = start
    if i < end and pattern[i] in "!^":
        i += 1
    members: list[str] = []
    first = True
    while i < end and (pattern[i] != "]" or first):
        first = False
        if pattern.startswith("[:", i):
            close = pattern.find(":]", i + 2)
            if close != -1:
                name = pattern[i + 2 : close]
                if name not in POSIX_CLASSES:
                    return i, f"unknown character class '[:{name}:]'"
                members.append("")  # a class is no end of a range
                i = close + 2
                continue
        if pattern[i] == "\\" and i + 1 < end:
            i += 1
        members.append(pattern[i])
        i += 1
        if len(members) >= 3 and members[-2] == "-" and members[-3]:
            low, high = members[-3], members[-1]
            if high and low > high:
                return i, f"the range '{low}-{high}' runs backwards"
            members[-1] = ""  # an end of a range starts no other range
    if i >= end:
        return i, "a '[' that is never closed"
    return i, None


def with_posix_classes(pattern: str) -> str:
    """``pattern`` with every ``[:class:]`` inside brackets spelled out as
    ranges; a pattern without one is returned as it is."""
    if "[:" not in pattern:
        return pattern
    for name, ranges in POSIX_CLASSES.items():
        pattern = pattern.replace(f"[:{name}:]", ranges)
    return pattern
