"""What a class's own code says, for backend pairing (class_summaries.py
reads the module around it): what its pairing methods return, whether its
``__init__`` hands its base a spec other than the one it was given, and
whether any of its code rebinds its own spec. Read with ``ast``, no I/O."""

from __future__ import annotations

import ast

from vllm_spec_lint.model.ast_fields import children as _children

OWN_SPEC = "kv_cache_spec"

# A returned value that is not a class: the method of the next class up, or
# (customize_spec) the spec it was given.
SUPER = "<super>"
SAME = "<the spec given>"

_COPIES = frozenset({"dataclasses.replace", "copy.copy", "copy.deepcopy"})


def methods(node: ast.ClassDef) -> list[ast.FunctionDef]:
    """The class's own ``def`` methods (a pairing method is never ``async``)."""
    return [item for item in node.body if isinstance(item, ast.FunctionDef)]


def _own_statements(function) -> list[ast.AST]:
    """The nodes of ``function``'s own body, not of functions, lambdas or
    classes defined in it."""
    inner = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
    found, todo = [], [node for node in function.body if not isinstance(node, inner)]
    while todo:
        node = todo.pop()
        found.append(node)
        for child in _children(node):
            if not isinstance(child, inner):
                todo.append(child)
    return found


def method_returns(function, resolve, want: str) -> tuple[str, ...] | None:
    """What ``function`` can return: with ``want`` "class", the classes it
    names (``resolve`` gives a name's qualified name); with "made", the
    classes of the values it makes, ``SUPER`` or ``SAME``. None: unknown
    (a generator, or a value not followed)."""
    nodes = _own_statements(function)
    if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in nodes):
        return None
    assigned: dict[str, list[ast.expr | None]] = {}
    for node in nodes:
        if type(node) not in _BINDING:
            continue
        for target, value in _bindings(node):
            assigned.setdefault(target, []).append(value)
    params = [a.arg for a in function.args.posonlyargs + function.args.args]
    given = params[1] if len(params) > 1 else None  # after self/cls
    found: list[str] = []
    for node in nodes:
        if isinstance(node, ast.Return):
            if node.value is None:
                continue
            value = _value(node.value, resolve, want, assigned, given, 0)
            if value is None:
                return None
            found += value
    return tuple(dict.fromkeys(found))


# The nodes that bind names in a function's body (_bindings).
_BINDING = frozenset(
    {
        ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor,
        ast.NamedExpr, ast.With, ast.AsyncWith, ast.Import, ast.ImportFrom,
    }
)  # fmt: skip


def _bindings(node: ast.AST):
    if isinstance(node, ast.Assign):
        for target in node.targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    single = isinstance(target, ast.Name)
                    yield name.id, node.value if single else None
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
        for name in ast.walk(node.target):
            if isinstance(name, ast.Name):
                yield name.id, None
    elif isinstance(node, ast.NamedExpr):
        yield node.target.id, None
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        for item in node.items:
            if item.optional_vars is not None:
                for name in ast.walk(item.optional_vars):
                    if isinstance(name, ast.Name):
                        yield name.id, None
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        for alias in node.names:
            yield (alias.asname or alias.name.partition(".")[0]), "import"


def _value(node, resolve, want, assigned, given, depth) -> tuple[str, ...] | None:
    """What ``node`` can be: class names (``want`` "class") or the classes
    of the values it makes ("made"); None: unknown."""
    if depth > 8:
        return None
    if isinstance(node, ast.Constant) and node.value is None:
        return ()
    if isinstance(node, ast.IfExp):
        body = _value(node.body, resolve, want, assigned, given, depth + 1)
        orelse = _value(node.orelse, resolve, want, assigned, given, depth + 1)
        return None if body is None or orelse is None else body + orelse
    if isinstance(node, ast.Name) and node.id in assigned:
        values = assigned[node.id]
        if len(values) != 1 or values[0] == "import":
            return None if values[0] != "import" else _named(node, resolve, want)
        if values[0] is None:
            return None
        return _value(values[0], resolve, want, assigned, given, depth + 1)
    if isinstance(node, ast.Name) and node.id == given:
        return (SAME,) if want == "made" else None
    if want == "class":
        return _named(node, resolve, want)
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Call)
        and isinstance(func.value.func, ast.Name)
        and func.value.func.id == "super"
    ):
        return (SUPER,)
    called = resolve(func)
    if called in _COPIES and node.args:
        return _value(node.args[0], resolve, want, assigned, given, depth + 1)
    if called is None or called.startswith("builtins."):
        return None
    return (called,)


def _named(node, resolve, want) -> tuple[str, ...] | None:
    if want != "class" or not isinstance(node, (ast.Name, ast.Attribute)):
        return None
    name = resolve(node)
    return None if name is None else (name,)


def passes_other_spec(init) -> bool:
    """Whether ``__init__`` gives the base's ``__init__`` anything but what
    it was given: its own ``kv_cache_spec``, or its ``*args``/``**kwargs``
    passed on as they came."""
    arguments = init.args
    names = [
        a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs
    ]
    nodes = _own_statements(init)
    rebound = {name for n in nodes if type(n) in _BINDING for name, _ in _bindings(n)}
    own = OWN_SPEC if OWN_SPEC in names and OWN_SPEC not in rebound else None
    varargs = arguments.vararg.arg if arguments.vararg else None
    kwargs = arguments.kwarg.arg if arguments.kwarg else None

    def unchanged(node, name) -> bool:
        return isinstance(node, ast.Name) and node.id == name and name not in rebound

    for node in nodes:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr != "__init__":
            continue
        inner = node.func.value
        if not (
            isinstance(inner, ast.Call)
            and isinstance(inner.func, ast.Name)
            and inner.func.id == "super"
        ):
            return True  # Base.__init__(self, ...): not followed
        first = node.args[0] if node.args else None
        if isinstance(first, ast.Starred):
            if not unchanged(first.value, varargs):
                return True
        elif first is not None:
            if not (own and unchanged(first, own)):
                return True
        for keyword in node.keywords:
            if keyword.arg == OWN_SPEC and not (own and unchanged(keyword.value, own)):
                return True
            if keyword.arg is None and not unchanged(keyword.value, kwargs):
                return True
    return False


def rebinds_own_spec(node: ast.ClassDef) -> bool:
    """Whether any code in the class stores or deletes a ``kv_cache_spec``
    attribute, or calls setattr/delattr (which could)."""
    todo = [node]
    while todo:
        inner = todo.pop()
        todo += _children(inner)
        if isinstance(inner, ast.Attribute) and inner.attr == OWN_SPEC:
            if not isinstance(inner.ctx, ast.Load):
                return True
        elif (
            isinstance(inner, ast.Call)
            and isinstance(inner.func, ast.Name)
            and inner.func.id in ("setattr", "delattr")
        ):
            return True
    return False
