"""Parsing only the statements that name a word (core/partial_parse.py):
which statements are kept, when a file is parsed whole instead, that the two
parts join into exactly CPython's tree, and what is reported of a file that
does not parse."""

from __future__ import annotations

import ast
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.test_fuzz import FUZZ, module
from vllm_spec_lint.core import partial_parse
from vllm_spec_lint.core.analysis import analyze_source
from vllm_spec_lint.core.nesting import first_row
from vllm_spec_lint.core.partial_parse import statements_naming
from vllm_spec_lint.core.settings import Config
from vllm_spec_lint.core.slicing import Screen, relevant_source
from vllm_spec_lint.model.hierarchy import ClassHierarchy

WORDS = frozenset({"MLAAttentionSpec"})
KCI = "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"

# The tokenizer and the parser change between versions: every Python runs these.
pytestmark = pytest.mark.fast


def _rows(text: str, words=WORDS) -> list[int] | None:
    """The rows the kept top-level statements start on; None: parsed whole."""
    partial = statements_naming(text, words)
    return None if partial is None else [first_row(n) for n in partial.tree.body]


def _dump(tree: ast.Module) -> str:
    return ast.dump(tree, include_attributes=True)


# name -> (source, the rows its kept statements start on; None: parsed whole)
CASES = {
    "only the statements naming a word": (
        "import os\n"
        + KCI
        + "\n\ndef a():\n    return 1\n"
        + "\n\ndef b(s):\n    return isinstance(s, MLAAttentionSpec)\n",
        [2, 9],
    ),
    "a docstring's lines at the margin start nothing": (
        '"""Docs.\n\nMLAAttentionSpec at the margin,\ndef f(): not code\n"""\nx = 1\n',
        [1],
    ),
    "an else or an except goes with the statement before it": (
        "if flag:\n    x = MLAAttentionSpec\nelse:\n    x = None\n"
        "try:\n    y = 1\nexcept ImportError:\n    y = 2\n",
        [1],
    ),
    "a decorator goes with its definition": (
        "@decorate\ndef f(s):\n    return isinstance(s, MLAAttentionSpec)\n"
        "@decorate\ndef g():\n    pass\n",
        [1],
    ),
    "after a backslash continuation the next statement is kept": (
        "x = MLAAttentionSpec \\\n    + 1\ny = 2\nz = 3\n",
        [1, 3],
    ),
    "a statement that leaves a bracket open is kept": (
        "x = MLAAttentionSpec\ny = (\n1, 2)\nz = 3\n",
        None,  # `1, 2)` at the margin: two statements the parser sees as one
    ),
    "a line at the margin inside brackets: parsed whole": (
        "SPECS = [\n(1, 2),\nMLAAttentionSpec,\n]\n",
        None,
    ),
    "a triple quote in a comment: the statements until the next are one": (
        'x = 1  # a stray """\ndef f(s):\n    return isinstance(s, MLAAttentionSpec)\n'
        'y = 2  # and another """\nz = 3\n',
        [1, 2, 4],
    ),
    "a statement after a string closed on its line is kept with it": (
        "A = '''\n'''; B = MLAAttentionSpec\nC = 1\n",
        [1, 2],
    ),
    "a kept statement that does not start its line: parsed whole": (
        # As above; the statement on row 4 starts after the string closes.
        'x = \'"""\'\nS = """\ntext\n"""; y = MLAAttentionSpec\n',
        None,
    ),
    "not ASCII: the same": (
        "# é\nimport os\n" + KCI,
        [3],
    ),
    "a line inside a string the count of quotes missed: parsed whole": (
        # `'"""'` makes the count wrong: `text` looks like a statement of
        # its own and is blanked; the parser then finds none on row 4.
        'x = \'"""\'\nS = """\ntext\n"""\ny = MLAAttentionSpec\n',
        None,
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_kept_statements(name):
    text, rows = CASES[name]
    assert _rows(text) == rows
    partial = statements_naming(text, WORDS)
    if partial is not None:
        assert _dump(partial.whole()) == _dump(ast.parse(text))


@pytest.mark.parametrize(
    "text",
    [
        KCI + "x = 1\r\ny = 2\r\n",
        KCI + "x = 1\n\x00\n",
        "\ufeffimport os\n" + KCI,
        KCI + "x = '\ud800'\n",
        "",
        "    \n# only a comment\n",
    ],
    ids=[
        "carriage-returns",
        "null-byte",
        "byte-order-mark",
        "lone-surrogate",
        "empty",
        "no-statement",
    ],
)
def test_files_parsed_whole(text):
    assert statements_naming(text, WORDS) is None


@pytest.mark.parametrize(
    "text, whole",
    [
        ("x = (1,\n", False),
        ("x = [1,\n", False),
        ("x = {1,\n", False),
        ("x = 1)\n", False),
        ('x = "a\n', False),
        ("x = '''a\n", False),
        ("x = 1 + \\\n", False),
        ("x = ')' + \"(\"  # ( [ {\n", True),
        ('x = """a\n(b\n"""\n', True),
        ('x = "\\"(" + r"\\[" + \'\\\'{\'\n', True),
        ("x = (1,\n     2)\n", True),
        ("x = [{1: 2}]\n", True),
    ],
)
def test_what_a_blanked_statement_must_close(text, whole):
    assert partial_parse._whole(text, 0, len(text)) is whole


# Rows: 1 import; 2-7 an if and its else; 8-13 a long class naming a word;
# 14-16 a long class naming none; 17 a statement starting with a word;
# 18-19 one continued by a backslash; 20 the statement after it.
SPLIT = (
    "import os\n"
    "if flag:\n    a = MLAAttentionSpec\nelse:\n    a = None\n\n\n"
    "class Layer:\n    x = 1\n    y = 2\n    z = MLAAttentionSpec\n\n\n"
    'class Other:\n    w = 1\n    v = """2"""\n'
    "MLAAttentionSpec.x = 1\n"
    "value = MLAAttentionSpec \\\n    + 1\n"
    "last = 2\n"
)
IF_ELSE = "if flag:\n    a = MLAAttentionSpec\nelse:\n    a = None\n\n\n"
OTHER = 'class Other:\n    w = 1\n    v = """2"""\n'
KEPT_TAIL = "MLAAttentionSpec.x = 1\nvalue = MLAAttentionSpec \\\n    + 1\nlast = 2\n"


@pytest.mark.parametrize(
    "split_at, kept, rest, rows, bodies",
    [
        (
            59,  # the class naming a word is 60 characters long: split
            "\n"
            + IF_ELSE
            + "class Layer:\n    x = 1\n"
            + "\n"
            + "    z = MLAAttentionSpec\n\n\n"
            + "\n\n\n"
            + KEPT_TAIL,
            "import os\n"
            + "\n" * 6
            + "class Layer:\n"
            + "\n"
            + "    y = 2\n"
            + "\n\n\n"
            + OTHER
            + "\n"
            + "\n\n"
            + "\n",
            ([2, 8, 17, 18, 20], [1, 8, 14]),
            ({8: ([9, 11], 4)}, {8: ([10], 4)}),
        ),
        (
            60,  # not longer than that: kept whole
            "\n"
            + IF_ELSE
            + "class Layer:\n    x = 1\n    y = 2\n    z = MLAAttentionSpec\n\n\n"
            + "\n\n\n"
            + KEPT_TAIL,
            "import os\n" + "\n" * 12 + OTHER + "\n" + "\n\n" + "\n",
            ([2, 8, 17, 18, 20], [1, 14]),
            ({}, {}),
        ),
    ],
)
def test_the_two_texts(monkeypatch, split_at, kept, rest, rows, bodies):
    monkeypatch.setattr(partial_parse, "SPLIT_AT", split_at)
    partial = statements_naming(SPLIT, WORDS)
    split = partial._split
    assert "".join(split.kept) == kept
    assert "".join(split.rest) == rest
    assert (split.kept_rows, split.rest_rows) == rows
    assert (split.kept_bodies, split.rest_bodies) == bodies
    assert _dump(partial.whole()) == _dump(ast.parse(SPLIT))


def test_the_rest_is_parsed_once_and_the_file_never(monkeypatch):
    monkeypatch.setattr(partial_parse, "SPLIT_AT", 59)
    parsed = []
    parse = ast.parse
    monkeypatch.setattr(ast, "parse", lambda text: parsed.append(text) or parse(text))
    partial = statements_naming(SPLIT, WORDS)
    assert parsed == ["".join(partial._split.kept)]
    tree = partial.whole()
    assert partial.whole() is tree
    assert parsed[1:] == ["".join(partial._split.rest)]


def test_no_word_means_nothing_kept():
    assert _rows(KCI + "x = 1\n", frozenset({"Absent"})) == []


@pytest.mark.parametrize(
    "text, nests",
    [
        ('x = f"{d["k"]}"\n', True),
        ('x = f"""{"""k"""}"""\n', True),
        ("x = rf'{d['k']}'\n", True),
        ("x = f\"{d['k']}\"\n", False),
        ('x = f"{a:{width}}" + F"{{literal}}"\n', False),
        ('x = "%f" % y; elif_ = "if"\n', False),
        ('x = f"{ {"k": 1}["k"] }"\n', True),
        ('x = f"{ {1: 2}["k"] }"\n', True),
        ('x = F"{d["k"]}"\n', True),
        ('x = f"{{ {d["k"]}"\n', True),
        ('x = a if"b" else f"{d["k"]}"\n', True),
        ("x = (f'--config \\'{{\"extra\": '\n    f'{value}}}\\'')\n", False),
    ],
)
def test_f_strings_that_may_nest_their_own_quotes(text, nests):
    assert partial_parse._nests_quotes(text) is nests


def test_a_long_definition_is_split_into_its_statements(monkeypatch):
    monkeypatch.setattr(partial_parse, "SPLIT_AT", 0)
    text = (
        "class Layer:\n"
        '    """Docs."""\n'
        "\n"
        "    def a(self):\n"
        "        return 1\n"
        "\n"
        "    def b(self, s):\n"
        "        return isinstance(s, MLAAttentionSpec)\n"
        "\n"
        "    @property\n"
        "    def c(self):\n"
        "        return 2\n"
    )
    partial = statements_naming(text, WORDS)
    [layer] = partial.tree.body
    assert [first_row(n) for n in layer.body] == [2, 7]  # the first always kept
    whole = partial.whole()
    assert [first_row(n) for n in whole.body[0].body] == [2, 4, 7, 10]
    assert (whole.body[0].end_lineno, whole.body[0].end_col_offset) == (12, 16)
    assert _dump(whole) == _dump(ast.parse(text))


@pytest.mark.parametrize(
    "text, body_rows",
    [
        # Named only in its header: the first statement is kept all the same.
        ("class A(MLAAttentionSpec):\n    x = 1\n    y = 2\n", [2]),
        # A header over several lines, then the body.
        (
            "def check(\n    spec,\n    flag: bool,\n) -> bool:\n"
            "    x = 1\n    y = 2\n    return isinstance(spec, MLAAttentionSpec)\n",
            [5, 7],
        ),
    ],
    ids=["named-in-its-header", "a-header-over-several-lines"],
)
def test_the_kept_statements_of_a_split_definition(monkeypatch, text, body_rows):
    monkeypatch.setattr(partial_parse, "SPLIT_AT", 0)
    partial = statements_naming(text, WORDS)
    assert [first_row(n) for n in partial.tree.body[0].body] == body_rows
    assert _dump(partial.whole()) == _dump(ast.parse(text))


@pytest.mark.parametrize(
    "text, kept, rest",
    [
        # A decorated file: the class's body is split all the same.
        (
            "@dataclass\nclass A:\n    x = 1\n    y = 2\n    z = MLAAttentionSpec\n",
            "@dataclass\nclass A:\n    x = 1\n\n    z = MLAAttentionSpec\n",
            "@dataclass\nclass A:\n\n    y = 2\n\n",
        ),
        # A comment before a decorated first statement: the decorator is
        # the statement's, not one of its own.
        (
            "# c\n@dataclass\nclass A:\n    x = 1\n    z = MLAAttentionSpec\nw = 1\n",
            "# c\n@dataclass\nclass A:\n    x = 1\n    z = MLAAttentionSpec\n\n",
            "\n\n\n\n\nw = 1\n",
        ),
        # A decorated statement after the first.
        (
            "w = 1\n@dataclass\nclass A:\n    x = 1\n    z = MLAAttentionSpec\n",
            "\n@dataclass\nclass A:\n    x = 1\n    z = MLAAttentionSpec\n",
            "w = 1\n\n\n\n\n",
        ),
    ],
    ids=["a-decorated-file", "a-comment-then-a-decorator", "a-later-decorator"],
)
def test_a_decorator_and_its_definition_are_one_statement(
    monkeypatch, text, kept, rest
):
    monkeypatch.setattr(partial_parse, "SPLIT_AT", 0)
    partial = statements_naming(text, WORDS)
    assert "".join(partial._split.kept) == kept
    assert "".join(partial._split.rest) == rest
    assert _dump(partial.whole()) == _dump(ast.parse(text))


def test_a_body_line_inside_a_string_the_count_missed(monkeypatch):
    monkeypatch.setattr(partial_parse, "SPLIT_AT", 0)
    text = (
        "class A:\n"
        '    x = \'"""\'\n'
        '    S = """\n'
        "    text\n"
        '    """\n'
        "    y = MLAAttentionSpec\n"
    )
    assert statements_naming(text, WORDS) is None


def test_a_long_definition_on_one_line_is_kept_whole(monkeypatch):
    monkeypatch.setattr(partial_parse, "SPLIT_AT", 0)
    text = "import os\ndef f(): return MLAAttentionSpec\n"
    partial = statements_naming(text, WORDS)
    assert [first_row(n) for n in partial.tree.body] == [2]
    assert partial._split.kept_bodies == {}


def test_a_split_definition_with_every_statement_kept_leaves_the_rest_blank(
    monkeypatch,
):
    monkeypatch.setattr(partial_parse, "SPLIT_AT", 0)
    text = "import os\nclass A:\n    x = MLAAttentionSpec\n    y = MLAAttentionSpec\n"
    split = statements_naming(text, WORDS)._split
    assert "".join(split.rest) == "import os\n\n\n\n"
    assert (split.rest_rows, split.rest_bodies) == ([1], {})


@pytest.mark.parametrize(
    "text, before_3_12",
    [
        # A replacement field holding a string in other quotes: valid on
        # every Python, read as possibly nesting (the whole file then).
        ("import os\nx = f\"{'{'}\"\n" + KCI, [3]),
    ],
)
def test_the_check_for_nested_quotes_runs_from_python_3_12(text, before_3_12):
    assert _rows(text) == (None if sys.version_info >= (3, 12) else before_3_12)


def test_words_other_than_the_screens_parse_the_rest():
    """A tree blanked for other words is no partial tree for this screen."""
    hierarchy = ClassHierarchy.default()
    screen = Screen.build(Config(), hierarchy, None)
    text = KCI + "\n\ndef f(s):\n    assert isinstance(s, SlidingWindowSpec)\n"
    partial = statements_naming(text, WORDS)
    assert [first_row(n) for n in partial.tree.body] == [1]
    sliced = relevant_source(text, partial, screen)
    assert sliced.has_candidates
    assert sliced == relevant_source(text, ast.parse(text), screen)


@pytest.mark.parametrize(
    "imported, named, scans",
    [
        # The partial parse found where the words occur: no scan again.
        ("MLAAttentionSpec", "MLAAttentionSpec", 0),
        # An alias is a new word: the text is scanned for it.
        ("MLAAttentionSpec as M", "M", 1),
    ],
    ids=["the-screens-words", "an-alias"],
)
def test_the_slicer_takes_the_words_places_from_the_partial_parse(
    monkeypatch, imported, named, scans
):
    from vllm_spec_lint.core import slicing

    screen = Screen.build(Config(), ClassHierarchy.default(), None)
    header = f"from vllm.v1.kv_cache_interface import {imported}\n"
    text = header + f"\n\ndef f(s):\n    return isinstance(s, {named})\n\n\n"
    partial = statements_naming(text + "def g():\n    pass\n", screen.looked_for)
    found = []
    real = slicing.occurrences
    monkeypatch.setattr(slicing, "occurrences", lambda *a: found.append(a) or real(*a))
    sliced = relevant_source(partial.text, partial, screen)
    assert len(found) == scans
    assert (sliced.text, sliced.rows) == (text, [1, 2, 3, 4, 5, 6, 7])


@pytest.mark.parametrize(
    "text, findings",
    [
        # A statement naming no word is not parsed in a file without a
        # candidate (docs/precision.md).
        (KCI + "\nx = = 1\n", []),
        (
            KCI + "x = MLAAttentionSpec +\n",
            [("VSL900", (2, 23), "cannot parse: invalid syntax")],
        ),
        (
            KCI + "ok = isinstance(s, MLAAttentionSpec)\nx = = 1\n",
            [("VSL900", (3, 5), "cannot parse: invalid syntax")],
        ),
    ],
    ids=[
        "in-a-statement-naming-nothing",
        "in-a-statement-naming-a-word",
        "in-a-file-with-a-candidate",
    ],
)
def test_what_a_file_that_does_not_parse_reports(text, findings):
    result = analyze_source(text, "f.py", Config())
    assert [(f.code, f.location, f.message) for f in result.findings] == findings


@FUZZ
@given(module())
def test_generated_modules_join_into_cpythons_tree_and_slice(source):
    hierarchy = ClassHierarchy.default()
    screen = Screen.build(Config(strict=True), hierarchy, "vllm.x.gen")
    partial = statements_naming(source, screen.looked_for)
    assert partial is not None
    assert relevant_source(source, partial, screen) == relevant_source(
        source, ast.parse(source), screen
    )
    assert _dump(statements_naming(source, screen.looked_for).whole()) == _dump(
        ast.parse(source)
    )


def _names_a_word(node: ast.stmt, lines: list[str], words) -> bool:
    text = "\n".join(lines[first_row(node) - 1 : node.end_lineno])
    return any(w in text for w in words)


def _by_row(statements: list[ast.stmt]) -> dict[int, list[ast.stmt]]:
    rows: dict[int, list[ast.stmt]] = {}
    for node in statements:
        rows.setdefault(first_row(node), []).append(node)
    return rows


# Statements that make reading a file's statements from its text hard:
# text at the margin inside strings and brackets, continuations, clauses,
# decorators, quotes and brackets inside comments and strings.
_TOP_LEVEL = [
    "import os\n",
    KCI,
    "x = 1; y = MLAAttentionSpec\n",
    'DOC = """\ntext at the margin, MLAAttentionSpec\ndef f(): pass\n"""\n',
    "S = '''\n'''; T = 2\n",
    "SPECS = [\n(1, 2),\nMLAAttentionSpec,\n]\n",
    "SPECS = (\n    MLAAttentionSpec,\n)\n",
    "value = 1 + \\\n2\n",
    "value = MLAAttentionSpec \\\n    + 1\n",
    "@decorate\ndef f(spec):\n    return isinstance(spec, MLAAttentionSpec)\n",
    'def g():\n    return "#"  # a """ in a comment\n',
    "if flag:\n    a = 1\nelif other:\n    a = MLAAttentionSpec\nelse:\n    a = 3\n",
    "try:\n    import x\nexcept ImportError:\n    x = None\nfinally:\n    pass\n",
    "x = f'{a!r:>{width}}'  # {\n",
    "x = ')'  # (\n",
    "msg = (\n'a'\n'b MLAAttentionSpec'\n)\n",
    "def h(\n    spec,\n) -> None:\n    pass\n",
    'x = """a""" """b"""\n',
    "async def k():\n    await MLAAttentionSpec\n",
    "match spec:\n    case MLAAttentionSpec():\n        pass\n",
    "x = '''\n''' if MLAAttentionSpec else '''\n'''\n",
    "class B(MLAAttentionSpec):\n    pass\n",
    "# a comment naming MLAAttentionSpec\n",
    "\n",
    "x = {'a': (\n1)}\n",
    "def long():\n    s = '''\nx\n'''\n    return MLAAttentionSpec\n",
]
_IN_CLASS = [
    "    def a(self):\n        return 1\n",
    "    def b(self, s):\n        return isinstance(s, MLAAttentionSpec)\n",
    "    X = 1\n",
    "    Y = (\n1, MLAAttentionSpec)\n",
    "    doc = '''\ndef fake(self):\n    pass\n'''\n",
    "    @property\n    def c(self):\n        return 2\n",
    "    if flag:\n        z = 1\n    else:\n        z = MLAAttentionSpec\n",
    "    # MLAAttentionSpec in a comment\n    pass\n",
    "    w = 1 + \\\n2\n",
]


@st.composite
def hard_module(draw):
    pieces = []
    for _ in range(draw(st.integers(1, 8))):
        if draw(st.booleans()):
            pieces.append(draw(st.sampled_from(_TOP_LEVEL)))
        else:
            body = draw(st.lists(st.sampled_from(_IN_CLASS), min_size=1, max_size=6))
            pieces.append("class C:\n" + "".join(body))
    return "".join(pieces)


@FUZZ
@given(
    hard_module(),
    st.sets(
        st.sampled_from(["MLAAttentionSpec", "flag", "x", "def", "pass"]), min_size=1
    ),
    st.sampled_from([0, 64, 4096]),
)
def test_hard_modules_keep_every_statement_naming_a_word(code, words, split_at):
    """The soundness of the blanking, against CPython's own tree: every
    statement (and body statement of a split definition) whose lines name a
    word is in the partial tree as CPython parses it, and the rest joins in
    to CPython's tree exactly."""
    full = ast.parse(code)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(partial_parse, "SPLIT_AT", split_at)
        partial = statements_naming(code, words)
    if partial is None:
        return
    lines = code.split("\n")
    kept = _by_row(partial.tree.body)
    for row, nodes in _by_row(full.body).items():
        if not any(_names_a_word(n, lines, words) for n in nodes):
            continue
        if [_dump(n) for n in kept[row]] == [_dump(n) for n in nodes]:
            continue
        # A split definition: its body's statements naming a word.
        [split], [node] = kept[row], nodes
        body = {first_row(n): _dump(n) for n in split.body}
        for inner in node.body:
            if _names_a_word(inner, lines, words):
                assert body[first_row(inner)] == _dump(inner)
    assert _dump(partial.whole()) == _dump(full)


@pytest.mark.skipif(sys.version_info < (3, 12), reason="nested quotes: Python 3.12")
def test_an_f_string_nesting_its_own_quotes_parses_the_whole_file():
    text = KCI + 'x = f"{d["MLAAttentionSpec"]}"\n'
    assert statements_naming(text, WORDS) is None
