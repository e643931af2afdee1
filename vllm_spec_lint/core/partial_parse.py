"""Parse only the statements of a file that name what the slicer looks for.

The slicer (slicing.py) walks only the statements on rows that name an
anchor, a covering class or a dispatch word; any other statement is skipped
whole. Most of a vLLM file that names an anchor is such statements, and
CPython's parser spent most of a cold run's parse on them. So a file is
parsed as two texts, each as long in rows as the file: the statements that
name a word, the others blanked (each replaced by as many empty lines, so
every row and column stays); and, only when the slicer finds a candidate
and needs the whole tree, the others. The two trees are then joined.

Where statements start is read from the text: a line at column 0 (not
blank, not a comment, not a closing bracket) starts a top-level statement
unless it goes on with the one before (``else``, ``elif``, ``except``,
``finally``, the definition under a decorator, a line inside a
triple-quoted string); in a long top-level class or function, a line at
the indentation of its body starts a statement of the body. Text alone can
be wrong (such a line inside a string or brackets), so both sides are
checked:

- each blanked statement, read from a fresh line as Python's tokenizer
  would, closes every string and bracket it opens and continues no line;
- the parser finds a statement starting on each kept statement's row at
  its level's column: its line starts it.

The second makes Python's state fresh where each blanked run starts; the
first then makes it fresh where the run ends, so a run is whole statements
and the kept text reads as it does in the file. Files where this cannot be
told cheaply are parsed whole: ``\\r`` line ends, a byte-order mark, an
f-string that nests its own quotes (Python 3.12); after a backslash
continuation nothing is blanked. So are files the compiler refuses whole
(a null byte, a lone surrogate).

What a file without candidates loses: a syntax error in a statement that
names none of the words is not seen (VSL900 covers the statements parsed).
Those statements name nothing the rules read.
"""

from __future__ import annotations

import ast
import bisect
import re
import sys
from collections.abc import Iterable

from vllm_spec_lint.core.name_search import occurrences
from vllm_spec_lint.core.nesting import first_row
from vllm_spec_lint.model.ast_fields import CANNOT_PARSE

# What a line that starts a statement starts with (not blank, not a comment,
# not a closing bracket).
_STATEMENT_CHARACTER = r"[^\s#)\]}]"
# The line break before a top-level statement's first line; before an
# indented line, and its indent. (A search for the line break is several
# times faster than one for "^" in multi-line mode, which tries every
# position.)
_TOP_LEVEL = re.compile(rf"\n(?={_STATEMENT_CHARACTER})")
_INDENTED = re.compile(rf"\n([ \t]+)(?={_STATEMENT_CHARACTER})")
_AT_MARGIN = re.compile(_STATEMENT_CHARACTER)
_INDENT = re.compile(r"[ \t]*")
# A clause that goes on with the statement before it.
_CLAUSE = re.compile(r"(?:else|elif|except|finally)\b")
_DEFINITION = re.compile(r"(?:@|class\b|def\b|async[ \t]+def\b)")
_DEFINITIONS = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
# A header's last line: it ends with a colon (and maybe a comment).
_HEADER_END = re.compile(r":[ \t]*(?:#[^\n]*)?\n")
# Strings and comments, as the tokenizer reads them from a fresh line
# (prefixes need not be matched: they do not change where a string ends).
_STRINGS_AND_COMMENTS = re.compile(
    r"#[^\n]*"
    r'|"""[^"\\]*(?:(?:\\[\s\S]|""?(?!"))[^"\\]*)*"""'
    r"|'''[^'\\]*(?:(?:\\[\s\S]|''?(?!'))[^'\\]*)*'''"
    r'|"[^"\\\n]*(?:\\[\s\S][^"\\\n]*)*"'
    r"|'[^'\\\n]*(?:\\[\s\S][^'\\\n]*)*'"
)
_BRACES = re.compile(r"\{\{|\}\}|[{}]")
_STRING = re.compile(_STRINGS_AND_COMMENTS.pattern.partition("|")[2])
_SURROGATE = re.compile("[\ud800-\udfff]")
# The quote after an f-string's (t-string's) prefix. (Looking behind each
# quote is several times faster than looking for the prefix's letters.)
_F_STRING_QUOTE = re.compile(
    r"[\"'](?<=[fFtT][\"'])|[\"'](?<=[fFtT][rR][\"'])|[\"'](?<=[rR][fFtT][\"'])"
)
# A definition shorter than this is kept or blanked whole.
SPLIT_AT = 4096


class PartialTree:
    """A file parsed without the statements that name no word (``tree``);
    :meth:`whole` parses those and joins them in."""

    def __init__(self, text: str, words: frozenset[str], tree, split: _Split):
        self.text = text
        self.words = words
        self.tree = tree
        self._split = split
        self._whole: ast.Module | None = None

    @property
    def named_at(self) -> list[int]:
        """Where the words occur in the text (offsets, in order): any
        occurrence, in code, a string or a comment."""
        return self._split.named_at

    def whole(self) -> ast.Module:
        """The whole file's tree, as ``ast.parse`` gives it (or raises)."""
        if self._whole is None:
            self._whole = self._join()
        return self._whole

    def _join(self) -> ast.Module:
        split = self._split
        try:
            rest = ast.parse("".join(split.rest))
        except CANNOT_PARSE:
            return ast.parse(self.text)  # its own error, where the file has it
        if not split.placed(rest, split.rest_rows, split.rest_bodies):
            return ast.parse(self.text)
        split_definitions = {
            first_row(node): node
            for node in self.tree.body
            if first_row(node) in split.rest_bodies
        }
        added = []
        for node in rest.body:
            definition = split_definitions.get(first_row(node))
            if definition is None:
                added.append(node)
            else:  # the statements its body lost, and maybe its end
                definition.body = sorted(definition.body + node.body, key=first_row)
                ends = (node.end_lineno, node.end_col_offset)
                if ends > (definition.end_lineno, definition.end_col_offset):
                    definition.end_lineno, definition.end_col_offset = ends
        self.tree.body = sorted(self.tree.body + added, key=first_row)
        return self.tree


def statements_naming(text: str, words: Iterable[str]) -> PartialTree | None:
    """The file parsed without the statements whose text holds none of
    ``words`` (a substring search, as the slicer's), or None when that
    cannot be done safely: then the whole file is to be parsed."""
    first = _first_statement(text)
    if first is None or "\r" in text or "\0" in text or text.startswith("\ufeff"):
        return None
    if not text.isascii() and _SURROGATE.search(text):
        return None  # the compiler refuses the whole file
    if sys.version_info >= (3, 12) and _nests_quotes(text):
        return None
    split = _Split(text, tuple(sorted(words)))
    split.keep(0, first)  # comments and blank lines
    for start, end in _statements(text, _TOP_LEVEL, first, len(text), split.quotes):
        long_and_named = end - start > SPLIT_AT and split.names(start, end)
        if not (
            long_and_named
            and _DEFINITION.match(text, start)
            and split.put_definition(start, end)
        ):
            split.put(start, end, split.kept_rows, split.rest_rows)
    try:
        tree = ast.parse("".join(split.kept))
    except CANNOT_PARSE:
        return None  # the whole file's parse says what is wrong, if anything
    if not split.placed(tree, split.kept_rows, split.kept_bodies):
        return None
    return PartialTree(text, frozenset(words), tree, split)


class _Split:
    """The file's statements in two texts: those kept (the others blanked)
    and the rest (those kept blanked), with the rows on which each text's
    statements must start."""

    def __init__(self, text: str, words: tuple[str, ...]):
        self.text = text
        # Where the words occur: a statement names one if one starts in it
        # (a word never spans lines, and a statement starts a line).
        # And where triple quotes are (see _statements).
        found = occurrences(text, (*words, '"""', "'''"))
        self.named_at = [at for w, at in found if w < len(words)]
        self.quotes = [at for w, at in found if w >= len(words)]
        self.kept: list[str] = []
        self.rest: list[str] = []
        self.kept_rows: list[int] = []
        self.rest_rows: list[int] = []
        # Per split definition (by its row): its body's rows in each text,
        # and the body's column.
        self.kept_bodies: dict[int, tuple[list[int], int]] = {}
        self.rest_bodies: dict[int, tuple[list[int], int]] = {}
        self.row = 1  # where the next statement starts
        # Whether the last statement kept may end in a backslash
        # continuation: the next is kept too (a blanked statement is checked
        # as read from a fresh line).
        self.continued = False

    def names(self, start: int, end: int) -> bool:
        at = bisect.bisect_left(self.named_at, start)
        return at < len(self.named_at) and self.named_at[at] < end

    def put(self, start: int, end: int, kept_rows: list, rest_rows: list) -> None:
        """One statement: kept if it names a word or cannot be blanked (its
        row goes to ``kept_rows``, else to ``rest_rows``)."""
        keep = (
            self.continued
            or self.names(start, end)
            or not _whole(self.text, start, end)
        )
        (kept_rows if keep else rest_rows).append(self.row)
        self.keep(start, end, kept=keep)

    def keep(self, start: int, end: int, *, kept=True, both=False) -> None:
        piece = self.text[start:end]
        lines = self.text.count("\n", start, end)
        self.kept.append(piece if kept or both else "\n" * lines)
        self.rest.append(piece if both or not kept else "\n" * lines)
        self.row += lines
        self.continued = kept and self.text.find("\\\n", start, end) >= 0

    def put_definition(self, start: int, end: int) -> bool:
        """A long definition, its body's statements put one by one (the
        first always kept, so that no body is empty); False, with nothing
        put, when its body cannot be found."""
        text = self.text
        header = _HEADER_END.search(text, start, end)
        # (The header's last line break is where the body's line starts.)
        body = header and _INDENTED.search(text, header.end() - 1, end)
        if not body:
            return False
        body_start = body.start() + 1
        at_indent = re.compile(
            rf"\n{re.escape(body.group(1))}(?={_STATEMENT_CHARACTER})"
        )
        statements = _statements(text, at_indent, body_start, end, self.quotes)
        row = self.row
        self.kept_rows.append(row)
        self.keep(start, body_start, both=True)
        header_piece = len(self.rest) - 1
        kept, rest = [self.row], []
        self.keep(*statements[0])
        for first, last in statements[1:]:
            self.put(first, last, kept, rest)
        column = len(body.group(1))
        self.kept_bodies[row] = (kept, column)
        if rest:
            self.rest_rows.append(row)
            self.rest_bodies[row] = (rest, column)
        else:  # the rest has no statement of it: no header either
            self.rest[header_piece] = "\n" * text.count("\n", start, body_start)
        return True

    @staticmethod
    def placed(tree: ast.Module, rows: list[int], bodies: dict) -> bool:
        """Whether the parser found a statement starting each of ``rows``
        (and in each split definition, each of its rows) at the start of
        its line: then no string, bracket or continuation was open there."""
        if not _start_lines(tree.body, rows, 0):
            return False
        for node in tree.body:
            body = bodies.get(first_row(node))
            if body is not None and not (
                isinstance(node, _DEFINITIONS) and _start_lines(node.body, *body)
            ):
                return False
        return True


def _start_lines(statements: list[ast.stmt], rows: list[int], column: int) -> bool:
    """Whether each of ``rows`` has a statement starting it at ``column``
    (under decorators, a definition's keyword is at their column)."""
    first_on = {}
    for node in statements:
        first_on.setdefault(first_row(node), node)
    return all(row in first_on and first_on[row].col_offset == column for row in rows)


def _first_statement(text: str) -> int | None:
    """Where the first line at the margin that can start a statement starts."""
    if _AT_MARGIN.match(text):
        return 0
    match = _TOP_LEVEL.search(text)
    return None if match is None else match.start() + 1


def _statements(text: str, starts: re.Pattern, begin: int, end: int, quotes):
    """(start, end) of each statement in ``text[begin:end]``: the first at
    ``begin``, then those whose first line ``starts`` finds (it finds the
    line break before the line, then the line's indent; the line's first
    character is where the match ends). ``quotes``: where triple quotes
    are, in order: a line at the margin inside a triple-quoted string (a
    docstring's) starts nothing. (A wrong count only costs the whole parse:
    the parser checks where statements start.)"""
    found = [begin]
    decorated = text.startswith("@", _INDENT.match(text, begin).end())
    for match in starts.finditer(text, begin, end):
        line = match.end()
        in_string = bisect.bisect_left(quotes, line) % 2
        if not (in_string or decorated or _CLAUSE.match(text, line)):
            found.append(match.start() + 1)
        decorated = text.startswith("@", line)
    return list(zip(found, [*found[1:], end], strict=True))


def _whole(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]``, read from a fresh line, closes every
    string and bracket it opens and continues no line."""
    code = _STRINGS_AND_COMMENTS.sub("", text[start:end])
    return (
        '"' not in code
        and "'" not in code
        and "\\" not in code
        and code.count("(") == code.count(")")
        and code.count("[") == code.count("]")
        and code.count("{") == code.count("}")
    )


def _nests_quotes(text: str) -> bool:
    """Whether an f-string (t-string) may nest its own quotes, as Python
    3.12 allows: read as a plain string, it ends inside a replacement
    field."""
    for match in _F_STRING_QUOTE.finditer(text):
        before = text[max(match.start() - 3, 0) : match.start()].rstrip("rRfFtT")
        if before[-1:].isalnum() or before[-1:] == "_":
            continue  # the end of a name
        string = _STRING.match(text, match.start())
        if string is None or _open_field(string.group()):
            return True
    return False


def _open_field(string: str) -> bool:
    """Whether a replacement field is left open at the string's end."""
    depth = 0
    for brace in _BRACES.findall(string):
        if depth == 0 and len(brace) == 2:
            continue  # an escaped brace
        depth = max(depth + len(brace) * (1 if brace[0] == "{" else -1), 0)
    return depth > 0
