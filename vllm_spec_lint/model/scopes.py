"""Which binding a name refers to, by Python's scoping rules.

The rules ask this of a few dozen names per file (is ``isinstance`` the
builtin, is ``M`` vLLM's ``MLAAttentionSpec``); libcst's ScopeProvider
answers it for every name in the file and, with the ExpressionContext pass
it needs, costs more than everything else together. Here a scope's bindings
are collected when a name in it is first asked about, by reading node fields
directly rather than through libcst's visitor machinery.

Qualified names follow libcst's: ``a.b.C`` for ``from a.b import C``,
``..x.C`` for relative imports (resolved by the caller), ``builtins.len``
for unbound builtins, and the bare name for module-level definitions.
Bindings are not flow-sensitive: every binding of a name in a scope counts,
as with libcst.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from vllm_spec_lint.model.syntax import COMPREHENSIONS, DEFINITIONS, child_nodes, walk

_BUILTINS = frozenset(dir(builtins))
_IMPORTS = frozenset({cst.Import, cst.ImportFrom})


@dataclass(frozen=True)
class Binding:
    name: str
    qualified: str
    # The ImportFrom/Import statement and alias, for import bindings.
    statement: cst.CSTNode | None = None
    alias: cst.ImportAlias | None = None


def dotted(node: cst.CSTNode) -> str | None:
    """``a.b.c`` for a Name or a chain of Attributes, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted(node.value)
        return None if base is None else f"{base}.{node.attr.value}"
    return None


class _Scope:
    def __init__(self, node: cst.CSTNode, parent: _Scope | None, prefix: str):
        self.node = node
        self.parent = parent
        # Qualifies local names: "f.<locals>." in functions, "" at module level.
        self.prefix = prefix
        self.bindings: dict[str, list[Binding]] = {}
        self.declared_global: set[str] = set()
        self.declared_nonlocal: set[str] = set()

    def bind(self, name: str, binding: Binding | None = None) -> None:
        self.bindings.setdefault(name, []).append(
            binding or Binding(name, self.prefix + name)
        )


class Scopes:
    """Name resolution over one parsed module, computed scope by scope."""

    def __init__(self, module: cst.Module, parents: dict[cst.CSTNode, cst.CSTNode]):
        self.module = module
        self.parents = parents
        self._scopes: dict[cst.CSTNode, _Scope] = {}
        # (binding scope's node, name): whether an inner scope declares the
        # name nonlocal.
        self._nonlocal: dict[tuple[cst.CSTNode, str], bool] = {}

    # -- where a node is -------------------------------------------------------

    def _scope_node_of(self, node: cst.CSTNode) -> cst.CSTNode:
        """The node whose scope ``node`` is evaluated in."""
        child, parent = node, self.parents.get(node)
        previous = None
        # A parameter's annotation and default are evaluated where the
        # function is defined. Every expression in a function's parameters
        # lies in a Param, which sets this on the way up.
        in_parameter_value = False
        while parent is not None:
            kind = type(parent)
            if kind is cst.Param:
                in_parameter_value = child is not parent.name
            elif kind in DEFINITIONS:
                if child is parent.body or (
                    child is getattr(parent, "params", None) and not in_parameter_value
                ):
                    return parent
            elif kind in COMPREHENSIONS:
                # The first iterable is evaluated outside the comprehension.
                if not (child is parent.for_in and previous is parent.for_in.iter):
                    return parent
            previous, child, parent = child, parent, self.parents.get(parent)
        return self.module

    def scope(self, node: cst.CSTNode) -> _Scope:
        return self._scope_for(self._scope_node_of(node))

    def _scope_for(self, scope_node: cst.CSTNode) -> _Scope:
        scope = self._scopes.get(scope_node)
        if scope is None:
            if scope_node is self.module:
                scope = _Scope(scope_node, None, "")
            else:
                parent = self.scope(scope_node)
                scope = _Scope(scope_node, parent, parent.prefix + _label(scope_node))
            _collect(scope)
            self._scopes[scope_node] = scope
        return scope

    # -- what a name means -------------------------------------------------------

    def visible(self, scope: _Scope, name: str) -> list[Binding]:
        """The bindings ``name`` refers to in ``scope``: the innermost scope
        binding it, skipping class scopes other than the first."""
        binder = self._binder_from(scope, name)
        return [] if binder is None else binder.bindings[name]

    def binder(self, node: cst.CSTNode, name: str) -> _Scope | None:
        """The scope whose binding of ``name`` is the one ``node`` sees, as
        Python resolves it (a comprehension, lambda or function of its own
        binds its own names); None for a name no scope binds."""
        return self._binder_from(self.scope(node), name)

    def _binder_from(self, scope: _Scope, name: str) -> _Scope | None:
        current: _Scope | None = scope
        first = True
        while current is not None:
            if name in current.declared_global:
                current = self._scope_for(self.module)
                first = False
                continue
            if name in current.declared_nonlocal:  # the enclosing function's
                current, first = current.parent, False
                continue
            if (first or type(current.node) is not cst.ClassDef) and (
                current.bindings.get(name)
            ):
                return current
            current = current.parent
            first = False
        return None

    def rebound_elsewhere(self, node: cst.CSTNode, name: str) -> bool:
        """Whether code in another scope may rebind the variable ``name`` is
        at ``node``: a module-level name read in a function (any call can
        change a global), or a variable an inner function declares
        ``nonlocal``."""
        binder = self.binder(node, name)
        if binder is None or binder.node is self.module:  # global (or unbound)
            return self._scope_node_of(node) is not self.module
        key = (binder.node, name)
        if key not in self._nonlocal:
            self._nonlocal[key] = any(
                type(inner) is cst.Nonlocal
                and any(item.name.value == name for item in inner.names)
                for inner in walk(binder.node)
            )
        return self._nonlocal[key]

    def qualified_names_of(self, scope: _Scope, name: str) -> set[str]:
        """Qualified names of the dotted ``name`` as seen in ``scope``."""
        base, dot, rest = name.partition(".")
        bindings = self.visible(scope, base)
        if not bindings:
            # As libcst: `int.from_bytes` is named `builtins.int`.
            return {f"builtins.{base}"} if base in _BUILTINS else set()
        return {b.qualified + dot + rest for b in bindings}

    def qualified_names(self, node: cst.CSTNode) -> set[str]:
        name = dotted(node)
        if name is None:
            return set()
        return self.qualified_names_of(self.scope(node), name)

    def visible_imports(self, scope: _Scope) -> Iterator[Binding]:
        current: _Scope | None = scope
        while current is not None:
            for bindings in current.bindings.values():
                yield from (b for b in bindings if b.alias is not None)
            current = current.parent


def _label(scope_node: cst.CSTNode) -> str:
    """How local names are qualified inside this scope (as libcst does)."""
    if isinstance(scope_node, cst.FunctionDef):
        return f"{scope_node.name.value}.<locals>."
    if isinstance(scope_node, cst.ClassDef):
        return f"{scope_node.name.value}."
    if isinstance(scope_node, cst.Lambda):
        return "<locals>."
    return "<comprehension>."


# -- collecting a scope's bindings ---------------------------------------------------


def _collect(scope: _Scope) -> None:
    node = scope.node
    if isinstance(node, (cst.FunctionDef, cst.Lambda)):
        _bind_parameters(scope, node.params)
        # A lambda's body is an expression: only an assignment expression in
        # it binds (in the lambda, PEP 572).
        _walk_body(scope, node.body)
    elif type(node) in COMPREHENSIONS:
        comp: cst.CompFor | None = node.for_in
        while comp is not None:
            _bind_target(scope, comp.target)
            comp = comp.inner_for_in
        # A walrus binds in the enclosing function (PEP 572): _walk_body.
    else:
        _walk_body(scope, node.body)


def _bind_walrus_targets(scope: _Scope, comprehension: cst.CSTNode) -> None:
    """``x := ...`` inside a comprehension (nested ones too, not a lambda)
    binds ``x`` in the scope around it (PEP 572)."""
    stack = list(child_nodes(comprehension))
    while stack:
        inner = stack.pop()
        if type(inner) is cst.NamedExpr:
            _bind_target(scope, inner.target)
        if type(inner) is not cst.Lambda:
            stack.extend(child_nodes(inner))


def _bind_parameters(scope: _Scope, params: cst.Parameters) -> None:
    for param in (
        *params.posonly_params,
        *params.params,
        *params.kwonly_params,
        params.star_arg,
        params.star_kwarg,
    ):
        if isinstance(param, cst.Param):
            scope.bind(param.name.value)


def _bind_target(scope: _Scope, target: cst.CSTNode) -> None:
    if isinstance(target, cst.Name):
        scope.bind(target.value)
    elif isinstance(target, (cst.Tuple, cst.List)):
        # A starred element (`a, *rest`) is an element too: its value is
        # the name.
        for element in target.elements:
            _bind_target(scope, element.value)


def _walk_body(scope: _Scope, body: cst.CSTNode) -> None:
    """Bindings made in this scope: not inside nested functions, classes,
    lambdas or comprehensions (their names are their own)."""
    stack = list(body) if isinstance(body, (tuple, list)) else [body]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is cst.FunctionDef or kind is cst.ClassDef:
            scope.bind(node.name.value)
            # Decorators, bases and defaults belong to this scope.
            stack.extend(child for child in child_nodes(node) if child is not node.body)
            continue
        if kind is cst.Lambda:
            continue
        if kind in COMPREHENSIONS:
            _bind_walrus_targets(scope, node)
            continue
        if kind in _IMPORTS:
            _bind_import(scope, node)
            continue
        _bind_statement_part(scope, node)
        stack.extend(child_nodes(node))


# The node types that bind or declare names: most nodes are none of them,
# and one set lookup answers that faster than the isinstance chain below.
_BINDING_KINDS = frozenset(
    {
        cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For, cst.NamedExpr,
        cst.AsName, cst.Del, cst.Global, cst.Nonlocal, cst.MatchAs, cst.MatchStar,
        cst.MatchMapping,
    }
)  # fmt: skip


def _bind_statement_part(scope: _Scope, node: cst.CSTNode) -> None:
    if type(node) not in _BINDING_KINDS:
        return
    if isinstance(node, cst.AssignTarget):
        _bind_target(scope, node.target)
    elif isinstance(node, (cst.AnnAssign, cst.AugAssign, cst.For, cst.NamedExpr)):
        _bind_target(scope, node.target)
    elif isinstance(node, cst.AsName):  # with ... as x, except ... as x
        _bind_target(scope, node.name)
    elif isinstance(node, cst.Del):
        _bind_target(scope, node.target)
    elif isinstance(node, (cst.Global, cst.Nonlocal)):
        names = {item.name.value for item in node.names}
        if isinstance(node, cst.Global):
            scope.declared_global |= names
        else:
            scope.declared_nonlocal |= names
    elif isinstance(node, (cst.MatchAs, cst.MatchStar)):
        if node.name is not None:
            scope.bind(node.name.value)
    elif isinstance(node, cst.MatchMapping) and node.rest is not None:
        scope.bind(node.rest.value)


def _bind_import(scope: _Scope, node: cst.Import | cst.ImportFrom) -> None:
    if isinstance(node, cst.Import):
        for alias in node.names:
            full = dotted(alias.name)
            if alias.asname is not None:
                bound = alias.asname.name.value
                scope.bind(bound, Binding(bound, full, node, alias))
            else:
                top = full.partition(".")[0]
                scope.bind(top, Binding(top, top, node, alias))
    elif not isinstance(node.names, cst.ImportStar):
        source = "." * len(node.relative) + (dotted(node.module) or "")
        for alias in node.names:
            name = dotted(alias.name)
            bound = alias.asname.name.value if alias.asname is not None else name
            separator = "" if source.endswith(".") else "."
            scope.bind(bound, Binding(bound, f"{source}{separator}{name}", node, alias))
