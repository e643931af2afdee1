"""Our name resolution and positions against libcst's own providers, which
they replace for speed: they must agree on every node the rules can ask
about, in every corpus file and example."""

from __future__ import annotations

import ast

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider, QualifiedNameProvider

from tests.conftest import REPO, fetch_vllm
from vllm_spec_lint.model import positions
from vllm_spec_lint.model.positions import StatementPositions
from vllm_spec_lint.model.scopes import Scopes, dotted
from vllm_spec_lint.model.syntax import child_nodes, parent_map, walk

SAMPLES = {
    "shadowing": (
        "import builtins\n"
        "from vllm.v1 import kv_cache_interface as kci\n"
        "from ..v1.kv_cache_interface import MLAAttentionSpec as M\n"
        "import vllm.v1.kv_cache_interface\n"
        "X = M\n"
        "def f(isinstance, spec, *a, **k):\n"
        "    return isinstance(spec, M), type(spec), kci.SlidingWindowMLASpec\n"
        "class C:\n"
        "    M = 1\n"
        "    y = [M for _ in range(3)]\n"
        "    def g(self):\n"
        "        return M, vllm.v1.kv_cache_interface.MLAAttentionSpec\n"
        "def h():\n"
        "    global X\n"
        "    X = 2\n"
        "    return X, [s for s in X if isinstance(s, M)], lambda M: M\n"
        "try:\n"
        "    from a import Y\n"
        "except ImportError:\n"
        "    from b import Y\n"
        "print(Y, len)\n"
    ),
    "bindings": (
        "with open(p) as fh, x as (a, b):\n    pass\n"
        "for i, *rest in pairs:\n    pass\n"
        "if (n := len(x)) > 1:\n    pass\n"
        "try:\n    pass\nexcept E as err:\n    pass\n"
        "match v:\n    case [First, *others]:\n        pass\n"
        "    case {'k': K, **extra}:\n        pass\n"
        "    case Point(x=PX) as whole:\n        pass\n"
        "del gone\n"
        "print(fh, a, b, i, rest, n, err, First, others, K, extra, PX, whole, gone)\n"
    ),
    # Bodies of classes and functions: decorators, comments, a tab-indented
    # block, `a; b` inside a method, one-line bodies, a nested class.
    "nested": (
        "import functools\n"
        "class Outer:\n"
        "    x = 1; y = 2\n"
        "\n"
        "    # a comment before a method\n"
        "    @functools.cache\n"
        "    @staticmethod\n"
        "    def f(a,\n"
        "          b):\n"
        "        if a:\n"
        "            return (a +\n"
        "                    b)\n"
        "        c = 1; return c\n"
        "    class Inner:\n"
        "        def g(self): return 1\n"
        "    def h(self): pass\n"
        "    async def k(self):\n"
        '        """doc\n'
        '        string"""\n'
        "        async with x as y:\n"
        "            pass\n"
        "class Tabbed:\n"
        "\tdef t(self):\n"
        "\t\treturn isinstance(self, Tabbed)\n"
        "def top():\n"
        "    def inner():\n"
        "        return isinstance(v, C)\n"
        "    return inner\n"
    ),
    # `a; b` is one libcst statement line and two of CPython's statements.
    "semicolons": (
        "import os; import sys\n"
        "x = os.sep; y = sys.argv; z = 3\n"
        "\n"
        "# a comment\n"
        "def f():\n"
        "    a = 1; b = 2\n"
        "    return a + b\n"
        "w = f(); print(w)\n"
    ),
}


def _sources():
    for name, text in SAMPLES.items():
        yield pytest.param(text, id=name)
    for folder in (REPO / "examples", REPO / "tests" / "corpus"):
        for path in sorted(folder.rglob("*.py")):
            text = path.read_text()
            if "\n" in text.strip():  # not the empty __init__.py files
                yield pytest.param(text, id=str(path.relative_to(REPO)))


def _code_nodes(module: cst.Module):
    stack = [module]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(child_nodes(node))


@pytest.mark.parametrize("text", list(_sources()))
def test_qualified_names_agree_with_libcst(text):
    _assert_same_qualified_names(cst.parse_module(text))


def _assert_same_qualified_names(module: cst.Module) -> None:
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(
        QualifiedNameProvider
    )
    scopes = Scopes(module, parent_map(module))
    loads = [
        node
        for node in _code_nodes(module)
        # libcst also names `f().x` and `a[0].x`; classes are never named so.
        if isinstance(node, (cst.Name, cst.Attribute))
        and node in expected
        and dotted(node) is not None
    ]
    assert loads
    # libcst binds `x := ...` in a comprehension in the comprehension; Python
    # (PEP 572), and we, bind it in the scope around it.
    walrus = {
        n.target.value
        for n in _code_nodes(module)
        if isinstance(n, cst.NamedExpr) and isinstance(n.target, cst.Name)
    }
    for node in loads:
        value = expected[node]
        theirs = {q.name for q in (value() if callable(value) else value)}
        if not theirs:
            continue  # libcst leaves out what it cannot place; so may we
        if dotted(node).partition(".")[0] in walrus:
            theirs = {q.replace("<comprehension>.", "") for q in theirs}
            ours = {
                q.replace("<comprehension>.", "") for q in scopes.qualified_names(node)
            }
            assert theirs <= ours, module.code_for_node(node)
            continue
        # libcst sometimes keeps only the last of several bindings (an import
        # and its `except ImportError: X = None` fallback); any may be live.
        assert theirs <= scopes.qualified_names(node), module.code_for_node(node)


@pytest.mark.parametrize("text", list(_sources()))
def test_positions_agree_with_libcst(text):
    _assert_same_positions(text)


# How positions can be worked out: nested positions from this many rows
# (0: the statement of each class or function body that holds the node, for
# every node), and whether the rows of the top-level statements are given,
# as the slicer gives them (CPython's parser is then run only for what lies
# below them). The analysis's own way first.
ANALYSIS_WAY = (positions.NESTED_FROM_ROWS, True)
EVERY_WAY = (ANALYSIS_WAY, (positions.NESTED_FROM_ROWS, False), (0, True), (0, False))


def _assert_same_positions(text: str, module=None, expected=None, ways=EVERY_WAY):
    module = module or cst.parse_module(text)
    if expected is None:
        wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        expected = wrapper.resolve(PositionProvider)
    nodes = [n for n in _code_nodes(module) if n is not module]
    assert nodes
    parents = parent_map(module)
    rows = [statement.lineno for statement in ast.parse(text).body]
    for nested_from, rows_given in ways:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(positions, "NESTED_FROM_ROWS", nested_from)
            given = [rows] if rows_given else []
            found = StatementPositions(module, parents, text, *given)
            for node in nodes:
                assert found[node] == expected[node], module.code_for_node(node)


# Release files up to this size are checked every way positions can be
# worked out; larger ones the analysis's way (the other three ways on them
# took about a third of this test's two minutes; parsing each file three
# times and resolving libcst's positions twice took much of the rest).
EVERY_WAY_UP_TO = 50_000


@pytest.mark.release
def test_agree_on_every_vllm_file_naming_the_anchor():
    """Real vLLM code, whole files (not slices): the strongest sample. The
    examples and the corpus are checked every way (above)."""
    tree = fetch_vllm("0.33.0")
    files = [
        p for p in sorted((tree / "vllm").rglob("*.py"))
        if b"MLAAttentionSpec" in p.read_bytes()
    ]  # fmt: skip
    assert len(files) > 20
    every_way = [p for p in files if len(p.read_bytes()) <= EVERY_WAY_UP_TO]
    assert len(every_way) > 10
    for path in files:
        text = path.read_text()
        module = cst.parse_module(text)
        wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        expected = wrapper.resolve(PositionProvider)
        _assert_same_qualified_names(module)
        ways = EVERY_WAY if path in every_way else (ANALYSIS_WAY,)
        _assert_same_positions(text, module, expected, ways)
        _assert_source_order(module, expected)


@pytest.mark.parametrize("text", list(_sources()))
def test_walk_visits_code_in_source_order(text):
    """Rules and narrowing read tests in the order our walk gives; it must
    be the order of the source (libcst declares some fields in another).
    (Only for expressions: a decorated definition starts at ``def``.)"""
    _assert_source_order(cst.parse_module(text))


def _assert_source_order(module: cst.Module, where=None) -> None:
    if where is None:
        where = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    starts = [
        where[n].start
        for n in walk(module)
        if isinstance(n, cst.BaseExpression) and n in where
    ]
    assert starts == sorted(starts, key=lambda p: (p.line, p.column))


def test_a_statement_outside_the_body_asked_is_an_error_not_a_wrong_row():
    module = cst.parse_module("a = 1; b = 2\nc = 3\n")
    other = cst.parse_module("c = 3\n").body[0]
    assert positions._ast_index(module.body, module.body[1]) == 2  # a; b: two
    with pytest.raises(LookupError, match="^not a statement of this body$"):
        positions._ast_index(module.body, other)


def _generated_for(text: str, top: int, inner: bool = False):
    """Which statement's code is generated to place the first method of the
    class that is top-level statement ``top`` (``inner``: the method's first
    statement): the class, the method or that statement."""
    module = cst.parse_module(text)
    klass = module.body[top]
    method = klass.body.body[0]
    statement = method.body.body[0]
    found = StatementPositions(module, parent_map(module), text)
    found[statement if inner else method]
    [generated] = found._statements
    return {klass: "class", method: "method", statement: "statement"}[generated]


def _class(rows: int) -> str:
    """A class of ``rows`` rows: its method first, then assignments."""
    body = "".join(f"    a{i} = {i}\n" for i in range(rows - 3))
    return "class C:\n    def m(self):\n        return 1\n" + body


@pytest.mark.parametrize(
    "text, top, generated",
    [
        # Between long stretches of other statements, a short statement's
        # rows run to the next statement, not to the end of the file.
        ("x = 0\n" * 150 + _class(5) + "y = 0\n" * 150, 150, "class"),
        # The last statement runs to the end of the file.
        ("x = 0\n" + _class(20), 1, "class"),
        ("x = 0\n" + _class(21), 1, "method"),
        ("x = 0\n" + _class(20) + "y = 0\n", 1, "class"),
        ("x = 0\n" + _class(21) + "y = 0\n", 1, "method"),
    ],
    ids=["short-between", "last-20", "last-21", "20-then-more", "21-then-more"],
)
def test_a_statement_longer_than_nested_from_rows_is_entered(text, top, generated):
    """Up to NESTED_FROM_ROWS rows a statement's code is generated whole;
    a finding in a longer class has only its method generated."""
    assert positions.NESTED_FROM_ROWS == 20
    assert _generated_for(text, top) == generated


def test_a_node_in_a_method_of_a_long_class_has_only_its_statement_generated():
    text = "x = 0\n" + _class(101)
    assert _generated_for(text, 1, inner=True) == "statement"


_FILLER = "".join(f"    a{i} = {i}\n" for i in range(30))
# A long function holding every kind of indented block; the statement in
# each is `hit = MLAAttentionSpec`.
_BLOCKS = (
    "def f(spec):\n"
    "    if spec:\n        hit = MLAAttentionSpec\n"
    "    elif other:\n        hit = MLAAttentionSpec\n"
    "    else:\n        hit = MLAAttentionSpec\n"
    "    for x in y:\n        hit = MLAAttentionSpec\n"
    "    else:\n        hit = MLAAttentionSpec\n"
    "    while x:\n        hit = MLAAttentionSpec\n"
    "    with open(p) as f:\n        hit = MLAAttentionSpec\n"
    "    try:\n        hit = MLAAttentionSpec\n"
    "    except ValueError:\n        hit = MLAAttentionSpec\n"
    "    else:\n        hit = MLAAttentionSpec\n"
    "    finally:\n        hit = MLAAttentionSpec\n"
    "    match spec:\n        case MLAAttentionSpec():\n"
    "            hit = MLAAttentionSpec\n"
    "    if a:\n        if b:\n            hit = MLAAttentionSpec\n" + _FILLER
)


@pytest.mark.parametrize("indent", ["    ", "  ", "\t"], ids=["4", "2", "tab"])
def test_a_node_in_any_block_of_a_long_function_has_only_its_statement_generated(
    indent,
):
    """Down through every kind of indented block, at its indentation (the
    file's own: a match's cases are a block of their own): each name is
    placed as libcst places it, generating only its own line."""
    text = _BLOCKS.replace("    ", indent)
    module = cst.parse_module(text)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    hits = [
        node
        for node in walk(module)
        if isinstance(node, cst.SimpleStatementLine)
        and module.code_for_node(node).strip() == "hit = MLAAttentionSpec"
    ]
    assert len(hits) == 13
    for hit in hits:
        found = StatementPositions(module, parent_map(module), text)
        name = hit.body[0].value
        assert found[name] == expected[name]
        assert list(found._statements) == [hit]


def test_a_node_in_a_header_has_its_compound_statement_generated():
    """A name in an `if`'s or an `elif`'s test, or a case's pattern, is placed
    by generating the statement around it (an `elif` alone reads `if`)."""
    module = cst.parse_module(_BLOCKS)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    function = module.body[0]
    first_if, match = function.body.body[0], function.body.body[5]
    for name, generated in (
        (first_if.test, first_if),
        (first_if.orelse.test, first_if),
        (match.cases[0].pattern.cls, match),
    ):
        found = StatementPositions(module, parent_map(module), _BLOCKS)
        assert found[name] == expected[name]
        assert list(found._statements) == [generated]
