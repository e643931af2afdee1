"""Names: which known spec class an expression names, what a name is bound
to where, and module constants. Scoping itself is ``scopes.py``; this adds
what the family configuration and the class hierarchy know."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property

import libcst as cst

from vllm_spec_lint.model.hierarchy import (
    ClassHierarchy,
    Family,
    absolute_name,
    short_name,
)
from vllm_spec_lint.model.scopes import Scopes
from vllm_spec_lint.model.syntax import code_of


class Names:
    """Name resolution for one parsed module."""

    def __init__(
        self,
        module: cst.Module,
        scopes: Scopes,
        *,
        families: tuple[Family, ...],
        hierarchy: ClassHierarchy,
        module_name: str | None,
    ):
        self.module = module
        self.scopes = scopes
        self.families = families
        self.hierarchy = hierarchy
        self.module_name = module_name
        self._qualified_names: dict[cst.CSTNode, set[str]] = {}

    @cached_property
    def known_classes(self) -> frozenset[str]:
        members = {m for f in self.families for m in f.qualified_members}
        return self.hierarchy.classes() | members

    # -- names -------------------------------------------------------------

    def _absolute(self, name: str) -> str:
        return absolute_name(name, self.module_name)

    def _known(self, name: str) -> str | None:
        if name in self.known_classes:
            return name
        if name.startswith("."):  # relative, package unknown: match by suffix
            suffix = "." + name.lstrip(".")
            matches = [c for c in self.known_classes if c.endswith(suffix)]
            return matches[0] if len(matches) == 1 else None
        return None

    def qualified_names(self, node: cst.CSTNode) -> set[str]:
        names = self._qualified_names.get(node)
        if names is None:
            found = self.scopes.qualified_names(node)
            names = self._qualified_names[node] = {self._absolute(q) for q in found}
        return names

    def is_builtin(self, node: cst.CSTNode, name: str) -> bool:
        return f"builtins.{name}" in self.qualified_names(node)

    @cached_property
    def _star_modules(self) -> tuple[str, ...]:
        modules = []
        for stmt in self.module.body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.ImportFrom) and isinstance(
                        small.names, cst.ImportStar
                    ):
                        dots = "." * len(small.relative)
                        module = code_of(small.module) if small.module else ""
                        modules.append(self._absolute(dots + module))
        return tuple(modules)

    def class_of(self, node: cst.CSTNode) -> str | None:
        """The known spec class ``node`` names, or None."""
        if not isinstance(node, (cst.Name, cst.Attribute)):
            return None
        bare = node.value if isinstance(node, cst.Name) else None
        return self._class_for(self.qualified_names(node), bare)

    def _class_for(self, names: set[str], bare: str | None) -> str | None:
        for name in names:
            known = self._known(name)
            if known:
                return known
            # A class defined in the family's own module, named locally there.
            if self.module_name and "." not in name:
                known = self._known(f"{self.module_name}.{name}")
                if known:
                    return known
        if not names and bare is not None:
            # Unbound in every scope: maybe from ``from <family module> import *``.
            for module in self._star_modules:
                known = self._known(f"{module}.{bare}")
                if known:
                    return known
        return None

    def class_named(self, string: cst.SimpleString) -> str | None:
        """The known spec class a string names by its class name: what code
        that compares ``__name__`` means. None when the module binds that
        name to something else (a class of its own of the same name)."""
        value = string.evaluated_value
        if not isinstance(value, str) or not value.isidentifier():
            return None
        matches = sorted(c for c in self.known_classes if short_name(c) == value)
        if len(matches) != 1:
            return None
        bound = self.scopes.qualified_names_of(self.scopes.scope(self.module), value)
        if bound and self._class_for({self._absolute(q) for q in bound}, value) is None:
            return None
        return matches[0]

    # -- bindings, for fixes -------------------------------------------------

    def _names_in_scope(self, at: cst.CSTNode, name: str) -> set[str]:
        found = self.scopes.qualified_names_of(self.scopes.scope(at), name)
        return {self._absolute(q) for q in found}

    def bound_name(self, at: cst.CSTNode, cls: str) -> str | None:
        """A name that already refers to ``cls`` where ``at`` is, if any."""
        candidates = [cls.rpartition(".")[2]]
        candidates += [
            b.name for b in self.scopes.visible_imports(self.scopes.scope(at))
        ]
        for name in dict.fromkeys(candidates):
            if self._class_for(self._names_in_scope(at, name), name) == cls:
                return name
        return None

    def name_is_taken(self, at: cst.CSTNode, name: str) -> bool:
        return bool(self.scopes.visible(self.scopes.scope(at), name))

    def import_of(
        self, name: cst.Name
    ) -> tuple[cst.ImportFrom, cst.ImportAlias] | None:
        """The ``from ... import`` statement and alias that bind ``name``."""
        for binding in self.scopes.visible(self.scopes.scope(name), name.value):
            if isinstance(binding.statement, cst.ImportFrom):
                return binding.statement, binding.alias
        return None

    # -- constants ---------------------------------------------------------

    @cached_property
    def constants(self) -> dict[str, cst.BaseExpression]:
        """Names assigned exactly once at module level, with their value."""
        values: dict[str, cst.BaseExpression] = {}
        seen: set[str] = set()
        for name, value in self._assignments(self.module.body):
            if name in seen:
                values.pop(name, None)
            else:
                values[name] = value
            seen.add(name)
        return values

    @staticmethod
    def _assignments(body) -> Iterator[tuple[str, cst.BaseExpression]]:
        for stmt in body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign) and len(small.targets) == 1:
                        target = small.targets[0].target
                        if isinstance(target, cst.Name):
                            yield target.value, small.value
                    elif isinstance(small, cst.AnnAssign) and small.value is not None:
                        if isinstance(small.target, cst.Name):
                            yield small.target.value, small.value
