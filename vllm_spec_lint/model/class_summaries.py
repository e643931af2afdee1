"""What one file says about its classes and how it uses class names, for
backend pairing (pairing.py): read with ``ast`` once per file, no I/O.

Per module-level class: its bases and what its pairing methods return
(class names, ``super()``, the spec given, or unknown; class_bodies.py
reads the class's own code). Per identifier:
every way the file uses it (a base, an annotation, a class test, a
membership test, an import, a return of a pairing method, an attribute read
off it, a string that could be imported, a table it is kept in, or anything
else).
"""

from __future__ import annotations

import ast
import builtins
import functools
import re
from dataclasses import dataclass, field

from vllm_spec_lint.model import class_bodies
from vllm_spec_lint.model.ast_fields import node_fields as _node_fields
from vllm_spec_lint.model.class_bodies import OWN_SPEC

BUILDER_METHOD = "get_builder_cls"
BACKEND_METHOD = "get_attn_backend"
SPEC_METHOD = "get_kv_cache_spec"
CUSTOMIZE_METHOD = "customize_spec"
_METHODS = (BUILDER_METHOD, BACKEND_METHOD, SPEC_METHOD, CUSTOMIZE_METHOD)

# How a name is used (ModuleSummary.uses).
BASE = "base"
ANNOTATION = "annotation"
CLASS_TEST = "class test"
MEMBERSHIP = "membership"
IMPORT = "import"
STRING = "string"
OTHER = "other"
RETURNED = "returned by "  # + the method
ATTRIBUTE = "attribute "  # + the attribute read
IN_TABLE = "in table "  # + the table's qualified name

HARMLESS = frozenset({BASE, ANNOTATION, CLASS_TEST, MEMBERSHIP, IMPORT})
_BUILTINS = frozenset(dir(builtins))
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\Z")
_IDENTITY_TESTS = (ast.Is, ast.IsNot, ast.Eq, ast.NotEq)
_TABLE_MAKERS = frozenset({"frozenset", "tuple"})
_MAY_REBIND = (OWN_SPEC.encode(), b"setattr", b"delattr")


@dataclass
class ClassSummary:
    qualname: str
    bases: tuple[str, ...]
    # Method -> what its returns can be (qualified names, SUPER, SAME);
    # None: computed, unknown. Only the pairing methods.
    returns: dict[str, tuple[str, ...] | None]
    # The class statement, for what is asked only of a chain's builders
    # (worked out then: most classes read are never asked).
    node: ast.ClassDef | None = field(default=None, repr=False, compare=False)
    # Whether its text spells the attribute, setattr or delattr.
    may_rebind: bool = False

    @functools.cached_property
    def rebinds_own_spec(self) -> bool:
        """Assigns ``self.kv_cache_spec`` (its spec is then not the group's)."""
        return self.may_rebind and class_bodies.rebinds_own_spec(self.node)

    @functools.cached_property
    def passes_other_spec(self) -> bool:
        """Its ``__init__`` hands its base's ``__init__`` something other
        than what it was given."""
        inits = [m for m in class_bodies.methods(self.node) if m.name == "__init__"]
        return bool(inits) and class_bodies.passes_other_spec(inits[-1])


@dataclass
class ModuleSummary:
    """One module's classes, imports, tables, and how it uses each name."""

    module: str
    classes: dict[str, ClassSummary] = field(default_factory=dict)
    # "module.local" -> the qualified name a module-level import binds.
    aliases: dict[str, str] = field(default_factory=dict)
    # A module-level tuple or frozenset of names: qualified name -> names.
    tables: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Short names of the module-level classes.
    defined: set[str] = field(default_factory=set)
    # identifier -> how the module uses it, for the top-level statements
    # read so far.
    used: dict[str, set[str]] = field(default_factory=dict)
    # The top-level statements not read for uses yet, each with its text. A
    # pass asks about a few names, which most statements never spell: each
    # is read once, when a name asked about is in its text.
    unread: list[tuple[ast.stmt, bytes]] = field(default_factory=list)
    # The whole file's text.
    text: bytes = b""
    # The names asked about so far: every statement spelling one has been
    # read, and no other statement can use it.
    asked: set[str] = field(default_factory=set)

    def uses(self, name: str) -> set[str]:
        word = name.encode()
        if name not in self.asked and word in self.text:
            reader = _Uses(self)
            unread = []
            for statement, text in self.unread:
                if word in text:
                    reader.statement(statement, top=True)
                else:
                    unread.append((statement, text))
            self.unread = unread
        self.asked.add(name)
        return self.used.get(name, set())


def summarize(source: bytes, module: str, is_package: bool) -> ModuleSummary:
    """What one file says about classes and their names (``ast`` only)."""
    tree = ast.parse(source)
    summary = ModuleSummary(module)
    summary.defined = {s.name for s in tree.body if isinstance(s, ast.ClassDef)}
    imports = _Imports(module, is_package)
    for statement in tree.body:
        imports.read(statement, summary.aliases)
        table = _table(statement)
        if table is not None:
            name, members = table
            summary.tables[f"{module}.{name}"] = tuple(m.id for m in members)
    summary.text = source
    lines = source.splitlines()
    for statement in tree.body:
        first = min(d.lineno for d in [statement, *_decorators(statement)])
        text = b"\n".join(lines[first - 1 : statement.end_lineno])
        summary.unread.append((statement, text))
        if isinstance(statement, ast.ClassDef):
            # Only a class spelling the attribute, setattr or delattr changes it.
            may_rebind = any(word in text for word in _MAY_REBIND)
            info = _class_summary(statement, summary, imports, may_rebind)
            summary.classes[info.qualname] = info
    return summary


def _decorators(statement: ast.stmt) -> list[ast.expr]:
    return getattr(statement, "decorator_list", [])


class _Imports:
    def __init__(self, module: str, is_package: bool):
        self.module = module
        self.package = module if is_package else module.rpartition(".")[0]

    def source_of(self, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        parts = self.package.split(".") if self.package else []
        parts = parts[: len(parts) - (node.level - 1)] if node.level > 1 else parts
        return ".".join(parts + ([node.module] if node.module else []))

    def read(self, statement: ast.stmt, into: dict[str, str]) -> None:
        if isinstance(statement, ast.ImportFrom):
            source = self.source_of(statement)
            for alias in statement.names:
                if alias.name != "*":
                    local = alias.asname or alias.name
                    into[f"{self.module}.{local}"] = f"{source}.{alias.name}"
        elif isinstance(statement, ast.Import):
            for alias in statement.names:
                local = alias.asname or alias.name.partition(".")[0]
                target = alias.name if alias.asname else local
                into[f"{self.module}.{local}"] = target


def _resolver(summary: ModuleSummary, local_aliases: dict[str, str]):
    """Qualified name of a Name or dotted Attribute, as the module (and the
    function's own imports) bind it; None for anything else."""
    module = summary.module
    defined = summary.defined

    def resolve(node: ast.expr) -> str | None:
        if isinstance(node, ast.Attribute):
            base = resolve(node.value)
            return None if base is None else f"{base}.{node.attr}"
        if not isinstance(node, ast.Name):
            return None
        key = f"{module}.{node.id}"
        if key in local_aliases:
            return local_aliases[key]
        if key in summary.aliases:
            return summary.aliases[key]
        if node.id in defined:
            return key
        if node.id in _BUILTINS:
            return f"builtins.{node.id}"
        return None

    return resolve


class _Uses:
    """Records, for every identifier, how each occurrence uses it."""

    def __init__(self, summary: ModuleSummary):
        self.summary = summary

    def note(self, name: str, how: str) -> None:
        self.summary.used.setdefault(name, set()).add(how)

    def visit_body(self, body: list[ast.stmt], *, top=False, method=None) -> None:
        for statement in body:
            self.statement(statement, top=top, method=method)

    def statement(self, node: ast.stmt, *, top=False, method=None) -> None:
        if _is_bare_string(node):
            return  # a docstring, or a string that does nothing
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                self.expr(base, BASE if top else OTHER)
            for part in node.keywords + node.decorator_list:
                self.expr(part, OTHER)
            for item in node.body:
                # An async method returns a coroutine: no pairing method.
                if isinstance(item, ast.FunctionDef):
                    self.function(item, method=item.name if top else None)
                else:
                    self.statement(item)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.function(node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                name = alias.name.rpartition(".")[2]
                renamed = alias.asname is not None and alias.asname != name
                self.note(name, OTHER if renamed else IMPORT)
        elif isinstance(node, ast.Return) and node.value is not None:
            how = RETURNED + method if method in _METHODS else OTHER
            self.returned(node.value, how)
        elif _assigns_all(node):
            pass  # __all__'s strings name what the module exports
        elif isinstance(node, ast.AnnAssign):
            self.expr(node.annotation, ANNOTATION)
            for part in (node.target, node.value):
                if part is not None:
                    self.expr(part, OTHER)
        elif top and self.table(node):
            pass
        else:
            for name in _node_fields(type(node)):
                self.child(getattr(node, name), method)

    def child(self, value, method) -> None:
        if isinstance(value, list):
            for item in value:
                self.child(item, method)
        elif isinstance(value, ast.stmt):
            self.statement(value, method=method)
        elif isinstance(value, ast.expr):
            self.expr(value, OTHER)
        elif isinstance(value, ast.AST):  # handlers, match cases, comprehensions
            for name in _node_fields(type(value)):
                self.child(getattr(value, name), method)

    def function(self, node, method=None) -> None:
        arguments = node.args
        for arg in arguments.posonlyargs + arguments.args + arguments.kwonlyargs:
            if arg.annotation is not None:
                self.expr(arg.annotation, ANNOTATION)
        for arg in (arguments.vararg, arguments.kwarg):
            if arg is not None and arg.annotation is not None:
                self.expr(arg.annotation, ANNOTATION)
        for default in arguments.defaults + arguments.kw_defaults:
            if default is not None:
                self.expr(default, OTHER)
        for decorator in node.decorator_list:
            self.expr(decorator, OTHER)
        if node.returns is not None:
            self.expr(node.returns, ANNOTATION)
        self.visit_body(node.body, method=method)

    def returned(self, value: ast.expr, how: str) -> None:
        if isinstance(value, ast.IfExp):
            self.expr(value.test, OTHER)
            self.returned(value.body, how)
            self.returned(value.orelse, how)
        elif isinstance(value, (ast.Name, ast.Attribute)):
            self.expr(value, how)
        else:
            self.expr(value, OTHER)

    def table(self, node: ast.stmt) -> bool:
        """``T = frozenset({A, B})`` (or a tuple): the names are in a table
        that is only ever tested for membership if T is."""
        table = _table(node)
        if table is None:
            return False
        name, members = table
        qualname = f"{self.summary.module}.{name}"
        for member in members:
            self.note(member.id, IN_TABLE + qualname)
        return True

    def expr(self, node: ast.expr, how: str) -> None:
        if how == ANNOTATION:
            for inner in ast.walk(node):
                if isinstance(inner, ast.Name):
                    self.note(inner.id, ANNOTATION)
                elif isinstance(inner, ast.Attribute):
                    self.note(inner.attr, ANNOTATION)
            return
        if isinstance(node, ast.Name):
            self.note(node.id, how)
        elif isinstance(node, ast.Attribute):
            self.note(node.attr, how)
            inner = node.value
            if isinstance(inner, ast.Name):
                self.note(inner.id, ATTRIBUTE + node.attr)
            else:
                self.expr(inner, OTHER)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if _DOTTED.match(node.value):
                self.note(node.value.rpartition(".")[2], STRING)
        elif isinstance(node, ast.Call) and _is_class_test(node):
            self.expr(node.args[0], OTHER)
            self.classinfo(node.args[1], CLASS_TEST)
        elif isinstance(node, ast.Compare) and self.compare(node):
            pass
        else:
            for name in _node_fields(type(node)):
                self.child_expr(getattr(node, name))

    def child_expr(self, value) -> None:
        if isinstance(value, ast.expr):
            self.expr(value, OTHER)
        elif isinstance(value, list):
            for item in value:
                self.child_expr(item)
        elif isinstance(value, ast.AST):  # comprehension, keyword, ...
            for name in _node_fields(type(value)):
                self.child_expr(getattr(value, name))

    def classinfo(self, node: ast.expr, how: str) -> None:
        if isinstance(node, (ast.Tuple, ast.Set, ast.List)):
            for element in node.elts:
                self.classinfo(element, how)
        elif isinstance(node, (ast.Name, ast.Attribute)):
            self.expr(node, how)
        else:
            self.expr(node, OTHER)

    def compare(self, node: ast.Compare) -> bool:
        operands = [node.left, *node.comparators]
        if all(isinstance(op, _IDENTITY_TESTS) for op in node.ops):
            for operand in operands:
                self.classinfo(operand, CLASS_TEST)
            return True
        if len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
            self.expr(node.left, OTHER)
            self.classinfo(node.comparators[0], MEMBERSHIP)
            return True
        return False


def _is_bare_string(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def _assigns_all(node: ast.stmt) -> bool:
    targets = getattr(node, "targets", None) or [getattr(node, "target", None)]
    return any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets)


def _is_class_test(node: ast.Call) -> bool:
    return (
        isinstance(node.func, ast.Name)
        and node.func.id in ("isinstance", "issubclass")
        and len(node.args) == 2
        and not node.keywords
    )


def _table(node: ast.stmt) -> tuple[str, list[ast.Name]] | None:
    """(name, members) of ``T = frozenset({A, B})`` (or a tuple), else None."""
    if not (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
    ):
        return None
    members = _table_members(node.value)
    return None if members is None else (node.targets[0].id, members)


def _table_members(value: ast.expr) -> list[ast.Name] | None:
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id in _TABLE_MAKERS
        and len(value.args) == 1
        and not value.keywords
    ):
        value = value.args[0]
    elif not isinstance(value, ast.Tuple):
        return None
    if not isinstance(value, (ast.Tuple, ast.Set, ast.List)):
        return None
    if not value.elts or not all(isinstance(e, ast.Name) for e in value.elts):
        return None
    return list(value.elts)


# -- one class ------------------------------------------------------------------


def _class_summary(
    node: ast.ClassDef, summary: ModuleSummary, imports: _Imports, may_rebind: bool
):
    resolve = _resolver(summary, {})
    bases = []
    for base in node.bases:
        target = base.value if isinstance(base, ast.Subscript) else base
        bases.append(resolve(target) or f"?{ast.unparse(target)}")
    info = ClassSummary(
        f"{summary.module}.{node.name}", tuple(bases), {}, node, may_rebind
    )
    for item in class_bodies.methods(node):
        if item.name not in _METHODS:
            continue
        local: dict[str, str] = {}  # a method's own imports
        for inner in ast.walk(item):
            if isinstance(inner, (ast.Import, ast.ImportFrom)):
                imports.read(inner, local)
        want = "class" if item.name in (BUILDER_METHOD, BACKEND_METHOD) else "made"
        resolve = _resolver(summary, local)
        info.returns[item.name] = class_bodies.method_returns(item, resolve, want)
    return info
