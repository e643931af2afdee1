"""What libcst needs to see of a file: every line the rules can act on.

libcst costs about ten times what CPython's parser does per line, and a
4,000-line vLLM file names the anchor class in a handful of functions. Every
finding and every fact the rules use lies in the function that holds the
check (or at module or class level), so a definition holding no *candidate*
is left out: a class test or class pattern naming an anchor (or an alias of
one) that does not already name what covers every companion, or a module or
class constant naming an anchor. A dropped definition's name stays bound
through a one-line stub (``def name(): pass``) when the name could matter to
the rules (a builtin they resolve, or a spec class name); otherwise it goes
entirely. Kept lines are kept whole, so columns do not change, and each kept
line's original row is recorded: findings and fix edits are reported against
the real file. A file without candidates needs no libcst at all.

A test counts as covering only through names that surely are the family's
classes: imported by name from the family module (or defined there, in the
module itself) and bound nowhere else in the file. Anything less certain
stays a candidate, so the slice never hides a finding; the test suite checks
that findings are the same with and without slicing.

CPython's own parser (``ast``) finds the definitions; it also decides
whether the file is valid Python. Only statements on rows that name an
anchor or a covering class are walked, so only those are parsed until a
slice is cut (partial_parse.py).
"""

from __future__ import annotations

import ast
import bisect
from dataclasses import dataclass
from functools import cached_property

from vllm_spec_lint.core.name_search import occurrences
from vllm_spec_lint.core.nesting import deeper_than_libcst, statement_text
from vllm_spec_lint.core.nesting import first_row as _first_row
from vllm_spec_lint.core.partial_parse import PartialTree
from vllm_spec_lint.core.settings import Config
from vllm_spec_lint.model.ast_fields import children
from vllm_spec_lint.model.hierarchy import ClassHierarchy, absolute_name, short_name
from vllm_spec_lint.model.lines import ends_and_starts, split_lines

_TEST_CALLS = {"isinstance", "issubclass"}
# Names the rules resolve as builtins: a definition that rebinds one matters.
_BUILTINS_USED = {"isinstance", "issubclass", "type", "all", "any", "frozenset", "dict"}
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


@dataclass(frozen=True)
class Slice:
    text: str
    rows: list[int]  # rows[i]: the original row of the slice's row i + 1
    # False when nothing in the file can be a finding.
    has_candidates: bool = True
    # The slice's row of each top-level statement CPython's parser sees in
    # it (``a; b`` is two), so that positions need not parse it again.
    statement_rows: list[int] | None = None
    # The row of the first kept statement nested deeper than libcst can take
    # (see core/nesting.py), or None.
    too_deep: int | None = None


@dataclass(frozen=True)
class Screen:
    """What the slicer needs to know of the configuration, by short name."""

    anchors: frozenset[str]
    # Spec class names: a definition of one keeps a stub.
    class_names: frozenset[str]
    # (anchor, ((companion, classes that cover it in isinstance), ...)), by
    # qualified name, one entry per family.
    families: tuple[tuple[str, tuple[tuple[str, frozenset[str]], ...]], ...]
    module_name: str | None = None
    # The companions' own parents (VSL007), by short name: a test of one is a
    # candidate only where it can be reported (a rejection, unless strict).
    parents: frozenset[str] = frozenset()
    # (parent, companion) by short name: a table that keys the companion
    # beside its parent gives it an entry of its own.
    parent_companions: frozenset[tuple[str, str]] = frozenset()
    strict: bool = False
    # Anchors of families whose layout property is declared: every test of
    # one is a candidate (VSL008 reports tests naming the whole family).
    layout_anchors: frozenset[str] = frozenset()

    @classmethod
    def build(
        cls, config: Config, hierarchy: ClassHierarchy, module_name: str | None
    ) -> Screen:
        families = tuple(
            (f.anchor, tuple((c, hierarchy.ancestors(c)) for c in f.companions))
            for f in config.families
        )
        # VSL007: a test against a companion's own parent is a candidate
        # unless it names the companion itself, or the anchor (or a base of
        # it): then it admits the anchor's layout too.
        swept = [
            (parent, companion, f.anchor)
            for f in config.families
            for companion, own in hierarchy.companion_parents(f).items()
            for parent in own
        ]
        families += tuple(
            (parent, ((companion, hierarchy.ancestors(anchor) | {companion}),))
            for parent, companion, anchor in swept
        )
        return cls(
            parents=frozenset(short_name(p) for p, _, _ in swept),
            parent_companions=frozenset(
                (short_name(p), short_name(c)) for p, c, _ in swept
            ),
            strict=config.strict or config.explain_suppressed,
            anchors=frozenset(short_name(a) for a, _ in families),
            class_names=frozenset(short_name(c) for c in hierarchy.classes())
            | {m for f in config.families for m in f.members},
            families=families,
            module_name=module_name,
            layout_anchors=frozenset(
                short_name(f.anchor)
                for f in config.families
                if hierarchy.declares_layout(f)
            ),
        )

    @cached_property
    def modules(self) -> frozenset[str]:
        """Modules whose classes can cover a companion."""
        return frozenset(
            c.rpartition(".")[0]
            for _, companions in self.families
            for _, covering in companions
            for c in covering
        )

    @cached_property
    def looked_for(self) -> frozenset[str]:
        """What a statement must name for the scan to walk it, before any
        alias is known."""
        return self.anchors | self.covering_names | _DISPATCH_WORDS

    @cached_property
    def covering_names(self) -> frozenset[str]:
        return frozenset(
            short_name(c)
            for _, companions in self.families
            for _, covering in companions
            for c in covering
        )

    def uncovered(self, anchor_refs: set[str], named: set[str], exact: bool) -> bool:
        """Whether a test naming these may still leave out a companion."""
        for anchor, companions in self.families:
            if short_name(anchor) not in anchor_refs:
                continue
            for companion, covering in companions:
                if companion not in named if exact else not (named & covering):
                    return True
        return False


def _rows_naming(text: str, names: set[str], line_starts: list[int]) -> list[int]:
    """Rows (sorted) where any of ``names`` occurs as text: a superset of the
    rows where the parser sees them. (One scan for all the names: a word
    lies within a row, so the occurrences that overlap one found are on
    its row.)"""
    found = occurrences(text, tuple(sorted(names)))
    return _rows_at([at for _, at in found], line_starts)


def _rows_at(offsets: list[int], line_starts: list[int]) -> list[int]:
    """The rows (sorted) the text's ``offsets`` lie on."""
    return sorted({bisect.bisect_right(line_starts, at) for at in offsets})


def _any_within(rows: list[int], first: int, last: int) -> bool:
    index = bisect.bisect_left(rows, first)
    return index < len(rows) and rows[index] <= last


def _word(node: ast.AST) -> str | None:
    """The name a node can stand for a class by: a name, an attribute, or
    a string (tests by class name, VSL005)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _registers(node: ast.AST) -> bool:
    """``x.register(...)``, or a function under ``@x.register``."""
    if isinstance(node, ast.Call):
        return isinstance(node.func, ast.Attribute) and node.func.attr == "register"
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return any(
            _word(d.func if isinstance(d, ast.Call) else d) == "register"
            for d in node.decorator_list
        )
    return False


def _table_keys(node: ast.AST) -> list[ast.AST]:
    """Where the keys of a dict display or a ``dict(...)`` call can be."""
    if isinstance(node, ast.Call):
        is_dict = isinstance(node.func, ast.Name) and node.func.id == "dict"
        return list(node.args) if is_dict else []
    return [k for k in node.keys if k is not None] if isinstance(node, ast.Dict) else []


def _refuses(body: list[ast.stmt]) -> bool:
    """A branch that raises at its end or returns ``False``/``None`` first."""
    if not body:
        return False
    if isinstance(body[-1], ast.Raise):
        return True
    first = body[0]
    return isinstance(first, ast.Return) and (
        first.value is None
        or (
            isinstance(first.value, ast.Constant) and first.value.value in (False, None)
        )
    )


def _is_class_test(node: ast.AST) -> bool:
    """Nodes a finding can sit in: class tests and class patterns."""
    if isinstance(node, (ast.Compare, ast.MatchClass)):
        return True
    if isinstance(node, ast.Call):
        word = _word(node.func)
        if word == "any":  # a test of its own only as a scan of an MRO (VSL005)
            return any(_word(n) in _MRO_WORDS for n in ast.walk(node))
        return word in _TEST_CALLS
    return False


# Names on the rows where dispatch on classes can be (VSL006): registrations
# and MRO walks. The scan reads those rows too.
_MRO_WORDS = frozenset({"__mro__", "mro", "getmro"})
_DISPATCH_WORDS = frozenset({"register", "singledispatch", "singledispatchmethod"})
_DISPATCH_WORDS |= _MRO_WORDS


def _is_dispatch(node: ast.AST, aliases: set[str]) -> bool:
    """A registration (``x.register``, ``@singledispatch`` or an alias of
    it) or an MRO walk (``__mro__``, ``.mro()``, ``getmro``)."""
    word = _word(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
    return word in _DISPATCH_WORDS or word in aliases


def _classinfo_parts(test: ast.Call | ast.Compare) -> list[ast.AST]:
    """Where a test's classes can be: not the value it tests."""
    if isinstance(test, ast.Call):
        return test.args[1:]
    return [
        operand
        for operand in (test.left, *test.comparators)
        if not isinstance(operand, ast.Call)
        and not (isinstance(operand, ast.Attribute) and operand.attr == "__class__")
    ]


def _bound_names(node: ast.AST) -> list[str]:
    """Names ``node`` binds in its scope (imports are handled apart)."""
    if isinstance(node, ast.Name):
        return [node.id] if not isinstance(node.ctx, ast.Load) else []
    if isinstance(node, _DEFINITIONS):
        return [node.name]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)):
        return [node.name] if node.name else []
    if isinstance(node, ast.MatchMapping):
        return [node.rest] if node.rest else []
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return list(node.names)
    return []


class _Scan:
    """One pass over the statements on rows that name an anchor or a
    covering class: where the candidates are, and which names are trusted."""

    def __init__(self, screen: Screen, words: set[str]):
        self.screen = screen
        self.words = words
        self.candidates: list[int] = []
        # name -> qualified class, for names bound only by a trusted import
        self.trusted: dict[str, str] = {}
        self.rebound: set[str] = set()
        self.aliases: set[str] = set()
        self.tests: list[tuple[int, ast.AST]] = []
        self.dispatch_aliases: set[str] = set()
        # Registrations and MRO walks; they matter once a registration or a
        # table names an anchor.
        self.dispatch_rows: list[int] = []
        self.dispatches_anchor = False
        # Tables keyed by a companion's parent and no anchor (VSL007): the
        # row and the names of the keys, judged once the imports are known.
        self.parent_tables: list[tuple[int, set[str]]] = []
        # Tests inside the test of an `if` that rejects in a branch, or of an
        # assert: where a VSL007 finding can be (a superset, by position).
        self.rejecting: set[int] = set()

    def run(self, tree: ast.Module, rows: list[int]) -> None:
        # Each node with the scope it is in: "module", "class" or "function".
        stack = [(node, "module") for node in reversed(tree.body)]
        while stack:
            node, scope = stack.pop()
            if hasattr(node, "lineno") and not _any_within(
                rows, _first_row(node), node.end_lineno or node.lineno
            ):
                continue
            self._visit(node, scope)
            # A class body is a class's scope even inside a function: its
            # constants are VSL004's too.
            if isinstance(node, ast.ClassDef):
                inner = "class"
            elif isinstance(node, _FUNCTIONS):
                inner = "function"
            else:
                inner = scope
            stack.extend((child, inner) for child in children(node))
        for row, test in self.tests:
            if self._is_candidate(test):
                self.candidates.append(row)
        for row, keys in self.parent_tables:
            if self._sweeping_table(keys):
                self.candidates.append(row)
                self.dispatches_anchor = True
        if self.dispatches_anchor:
            # VSL006 reads every registration of a module together, and an
            # MRO walk decides how a table is looked up: all of them stay.
            self.candidates += self.dispatch_rows
        self.candidates.sort()

    def _visit(self, node: ast.AST, scope: str) -> None:
        screen = self.screen
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            self._import(node, scope)
            return
        for name in _bound_names(node):
            if (
                isinstance(node, ast.ClassDef)
                and scope == "module"
                and screen.module_name in screen.modules
            ):
                # The family module's own classes.
                self._trust(name, f"{screen.module_name}.{name}")
            else:
                self.rebound.add(name)
        if isinstance(node, ast.Assert) or (
            isinstance(node, ast.If) and (_refuses(node.body) or _refuses(node.orelse))
        ):
            self.rejecting.update(id(n) for n in ast.walk(node.test))
        elif isinstance(node, ast.match_case) and _refuses(node.body):
            self.rejecting.update(id(n) for n in ast.walk(node.pattern))
        if _is_class_test(node):
            self.tests.append((node.lineno, node))
        elif _is_dispatch(node, self.dispatch_aliases):
            self.dispatch_rows.append(node.lineno)
        elif keys := _table_keys(node):
            # Every name in the keys: the companion's own entry counts too.
            named = {_word(n) for key in keys for n in ast.walk(key)}
            if named & (self.words - self.screen.parents):  # an anchor
                self.candidates.append(node.lineno)
                self.dispatches_anchor = True
            elif named & self.words:  # only companions' parents (VSL007)
                self.parent_tables.append((node.lineno, named))
        if _registers(node) and self._names_word(node, dispatch=True):
            self.dispatches_anchor = True
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and scope != "function":
            # A module or class constant naming an anchor (VSL004).
            if node.value is not None and self._names_word(node.value):
                self.candidates.append(node.lineno)

    def _import(self, node: ast.Import | ast.ImportFrom, scope: str) -> None:
        module = None
        if isinstance(node, ast.ImportFrom) and node.module:
            module = absolute_name(
                "." * node.level + node.module, self.screen.module_name
            )
        for alias in node.names:
            bound = alias.asname or alias.name.partition(".")[0]
            if alias.asname and alias.name in _DISPATCH_WORDS:
                self.dispatch_aliases.add(alias.asname)
                self.aliases.add(alias.asname)  # its rows are read too
            if alias.asname and alias.name in self.words | self.screen.covering_names:
                self.aliases.add(alias.asname)
            # A name imported in a function or class is bound only there.
            if module in self.screen.modules and scope == "module":
                self._trust(bound, f"{module}.{alias.name}")
            else:
                self.rebound.add(bound)

    def _trust(self, name: str, qualified: str) -> None:
        if self.trusted.setdefault(name, qualified) != qualified:
            self.rebound.add(name)

    def _names_word(self, node: ast.AST, *, dispatch: bool = False) -> bool:
        """Names an anchor; a companion's parent counts only in dispatch
        (VSL007 reads parent-keyed tables and registrations, and of the
        other forms only class tests)."""
        anchors = self.words if dispatch else self.words - self.screen.parents
        return any(_word(n) in anchors for n in ast.walk(node))

    def _sweeping_table(self, keys: set[str]) -> bool:
        """A table keyed by a parent that does not also key the companion
        (the vLLM class, not a name rebound in the module)."""
        for parent, companion in self.screen.parent_companions:
            if parent not in keys:
                continue
            own_entry = (
                companion in keys
                and companion in self.trusted
                and companion not in self.rebound
            )
            if not own_entry:
                return True
        return False

    def _is_candidate(self, test: ast.AST) -> bool:
        anchors_named = {_word(n) for n in ast.walk(test)} & self.words
        if not anchors_named:
            return False
        if anchors_named <= self.screen.parents and not (
            self.screen.strict or id(test) in self.rejecting
        ):
            return False  # VSL007 reports only rejections by default
        if isinstance(test, ast.MatchClass):
            return True
        refs = {
            w for part in _classinfo_parts(test) for n in ast.walk(part)
            if (w := _word(n)) is not None
        }  # fmt: skip
        # Aliases of an anchor stand for it (resolved by the trusted map when
        # imported from the family module; otherwise treated as the anchor).
        anchor_refs = {short_name(self.trusted.get(w, w)) for w in anchors_named}
        if not anchor_refs & self.screen.anchors:
            anchor_refs |= self.screen.anchors
        named = {
            self.trusted[w] for w in refs if w in self.trusted and w not in self.rebound
        }
        if anchor_refs & self.screen.layout_anchors:
            return True  # VSL008 reports whole-family tests, exact ones too
        exact = isinstance(test, ast.Compare)
        return self.screen.uncovered(anchor_refs, named, exact)


def relevant_source(text: str, tree: ast.Module | PartialTree, screen: Screen) -> Slice:
    """``text`` without the definitions that cannot matter (see above).

    The tree may hold only the statements that name ``screen.looked_for``
    (partial_parse.py): the scan walks no other. The rest is parsed only for
    an alias (its uses may be anywhere) or a slice to cut."""
    whole = None
    # Where the words occur, when the partial parse found them already.
    named_at = None
    if isinstance(tree, PartialTree):
        if tree.words == screen.looked_for:
            tree, whole, named_at = tree.tree, tree.whole, tree.named_at
        else:  # blanked for other words, its statements may hold these
            tree = tree.whole()
    lines = split_lines(text)
    newlines, line_starts = ends_and_starts(text, lines)
    words = set(screen.anchors)
    looked_for = set(screen.looked_for)
    while True:
        scan = _Scan(screen, words)
        if named_at is None:
            rows = _rows_naming(text, looked_for, line_starts)
        else:
            rows, named_at = _rows_at(named_at, line_starts), None
        scan.run(tree, rows)
        # An alias (`import X as Y`) is only known once its import is read.
        new = scan.aliases - looked_for
        if not new:
            break
        if whole is not None:
            tree, whole = whole(), None
        looked_for |= new
        words |= {
            a
            for a in new
            if a not in screen.covering_names and a not in scan.dispatch_aliases
        }
    if not scan.candidates:
        return Slice("", [], has_candidates=False)
    if whole is not None:
        tree = whole()  # the same scan: it walked only what both trees hold
    candidates = scan.candidates
    sensitive = _BUILTINS_USED | screen.class_names | words
    # first row -> (last row, replacement line, or None to leave nothing)
    cuts: dict[int, tuple[int, str | None]] = {}

    def cut(body: list[ast.stmt]) -> None:
        removed = 0
        for node in body:
            if isinstance(node, _DEFINITIONS):
                first = _first_row(node)
                last = node.end_lineno or node.lineno
                if _any_within(candidates, first, last):
                    if isinstance(node, ast.ClassDef):
                        cut(node.body)  # its methods are judged one by one
                    continue
                # Blank and comment lines right after a definition lie between
                # statements (never inside a string): they go with it.
                while last < len(lines) and lines[last].strip()[:1] in ("", "#"):
                    last += 1
                stub = _stub(node, lines) if node.name in sensitive else None
                cuts[first] = (last, stub)
                removed += cuts[first][1] is None
            elif isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
                # Definitions under `if TYPE_CHECKING:`, `try:` and the like.
                for block in ("body", "orelse", "finalbody"):
                    cut(getattr(node, block, []))
                for handler in getattr(node, "handlers", []):
                    cut(handler.body)
        if body and removed == len(body):
            # A block may not end up empty: its first definition becomes `pass`.
            first = _first_row(body[0])
            last, _ = cuts[first]
            cuts[first] = (last, _indent_of(lines[body[0].lineno - 1]) + "pass")

    cut(tree.body)
    too_deep = next(
        (
            _first_row(node)
            for node in tree.body
            if _first_row(node) not in cuts
            and deeper_than_libcst(node, statement_text(node, text, line_starts))
        ),
        None,
    )
    if not cuts:
        return Slice(
            text,
            list(range(1, len(lines) + 1)),
            statement_rows=[node.lineno for node in tree.body],
            too_deep=too_deep,
        )
    out: list[str] = []
    rows: list[int] = []
    row = 1
    while row <= len(lines):
        if row in cuts:
            # A definition always starts its own line, so whole lines go; a
            # replacement takes the line ending of the definition's last line.
            last, replacement = cuts[row]
            if replacement is not None:
                out += [replacement, newlines[last - 1]]
                rows.append(row)
            row = last + 1
        else:
            out += [lines[row - 1], newlines[row - 1]]
            rows.append(row)
            row += 1
    row_in_slice = {original: i for i, original in enumerate(rows, start=1)}
    statement_rows = []
    for node in tree.body:
        cut_here = cuts.get(_first_row(node))
        if cut_here is None:
            statement_rows.append(row_in_slice[node.lineno])
        elif cut_here[1] is not None:  # the stub stands on the first row
            statement_rows.append(row_in_slice[_first_row(node)])
    return Slice("".join(out), rows, statement_rows=statement_rows, too_deep=too_deep)


def _indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _stub(node: ast.AST, lines: list[str]) -> str:
    indent = _indent_of(lines[node.lineno - 1])
    if isinstance(node, ast.ClassDef):
        return f"{indent}class {node.name}: pass"
    keyword = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    return f"{indent}{keyword} {node.name}(): pass"
