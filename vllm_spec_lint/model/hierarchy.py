"""The spec classes the rules reason about: families and the class hierarchy.

A *family* is a set of classes that share one cache layout although none of
them subclasses the others. Its first member is the *anchor*, the class code
checks against (``MLAAttentionSpec``); every other member is a *companion*
that any check naming the anchor must also cover (``SlidingWindowMLASpec``).

A check *covers* a companion when it names the companion or one of its base
classes: ``isinstance(s, (MLAAttentionSpec, SlidingWindowSpec))`` is fine.
Classes are identified by qualified name (``module.ClassName``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

KV_CACHE_INTERFACE = "vllm.v1.kv_cache_interface"


@dataclass(frozen=True)
class Family:
    name: str
    module: str
    members: tuple[str, ...]
    # Why a discovered family was proposed (model/twins.py), in a few words;
    # empty for a configured one.
    evidence: str = ""
    # A stand-in family (model/stand_ins.py): the module of each member,
    # which may differ (a plugin's anchor beside vLLM's companion); empty
    # when every member is in ``module``.
    member_modules: tuple[str, ...] = ()
    # A stand-in family: the configured family it derives from, and why.
    derived_from: str = ""
    stand_in: str = ""
    # Why tests against the anchor are not reported by default (a subclass
    # that is not a stand-in); ``--strict`` reports them with this reason.
    quiet_reason: str = ""
    # The property the spec classes answer the family's layout with
    # (model/layout.py); empty: named after the anchor (``uses_mla_layout``).
    layout_property: str = ""

    @property
    def qualified_members(self) -> tuple[str, ...]:
        modules = self.member_modules or (self.module,) * len(self.members)
        return tuple(f"{m}.{c}" for m, c in zip(modules, self.members, strict=True))

    @property
    def anchor(self) -> str:
        return self.qualified_members[0]

    @property
    def companions(self) -> tuple[str, ...]:
        return self.qualified_members[1:]

    @property
    def property_name(self) -> str:
        """The layout property: configured, or ``uses_<anchor>_layout`` with
        the anchor's name less its ``AttentionSpec``/``Spec`` ending, in
        snake case (``MLAAttentionSpec``: ``uses_mla_layout``)."""
        if self.layout_property:
            return self.layout_property
        stem = re.sub(r"(Attention)?Spec$", "", self.members[0]) or self.members[0]
        snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", stem)
        return f"uses_{snake.lower()}_layout"

    @property
    def module_path(self) -> str:
        """Where the module's file sits in a source tree, e.g. ``vllm/v1/x.py``."""
        return module_path(self.module)

    @property
    def modules(self) -> tuple[str, ...]:
        """The modules the members are defined in, the family's own first."""
        return tuple(dict.fromkeys((self.module, *self.member_modules)))


def is_vllm_module(module: str) -> bool:
    """Whether ``module`` is one of vLLM's own (``vllm`` or below it)."""
    return module.partition(".")[0] == "vllm"


def module_path(module: str) -> str:
    """Where a module's file sits in a source tree, e.g. ``vllm/v1/x.py``."""
    return module.replace(".", "/") + ".py"


DEFAULT_FAMILIES = (
    Family("mla", KV_CACHE_INTERFACE, ("MLAAttentionSpec", "SlidingWindowMLASpec")),
)

# Direct bases as vLLM declares them; used when the scanned tree does not
# contain vllm/v1/kv_cache_interface.py to read them from.
_DEFAULT_BASES = {
    "AttentionSpec": ("KVCacheSpec",),
    "FullAttentionSpec": ("AttentionSpec",),
    "MLAAttentionSpec": ("FullAttentionSpec",),
    "HiddenStateCacheSpec": ("MLAAttentionSpec",),
    "SlidingWindowSpec": ("AttentionSpec",),
    "SlidingWindowMLASpec": ("SlidingWindowSpec",),
}


def _qualify(module: str, bases: Mapping[str, tuple[str, ...]]):
    return {
        f"{module}.{cls}": tuple(f"{module}.{b}" for b in parents)
        for cls, parents in bases.items()
    }


@dataclass(frozen=True)
class ClassHierarchy:
    """Direct bases by qualified class name, and where they were read from."""

    bases: Mapping[str, tuple[str, ...]]
    sources: tuple[str, ...] = ("built-in defaults",)
    # For each source, where it was found: "vllm-source", "scanned tree",
    # "VIRTUAL_ENV", "interpreter" (edges/hierarchy_sources.py), "scanned files".
    origins: tuple[str, ...] = ("built-in defaults",)
    # Classes with a base that is not a known class (imported from a module
    # that was not read), as those bases' dotted names.
    unresolved: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # Layout properties the classes read define in their own bodies
    # (:func:`read_declared`), by qualified class name.
    declared: Mapping[str, frozenset[str]] = field(default_factory=dict)
    _ancestors: dict[str, frozenset[str]] = field(
        default_factory=dict, compare=False, repr=False
    )

    @classmethod
    def default(cls) -> ClassHierarchy:
        return cls(_qualify(KV_CACHE_INTERFACE, _DEFAULT_BASES))

    def with_module(
        self,
        module: str,
        bases: Mapping[str, tuple[str, ...]],
        source: str,
        origin: str,
        declared: Mapping[str, frozenset[str]] | None = None,
    ) -> ClassHierarchy:
        """This hierarchy with ``module``'s classes replaced by ``bases``
        (:func:`read_class_bases`) and what they declare (:func:`read_declared`,
        by class name). An imported base counts when it is a
        class this hierarchy knows, by its dotted name or, re-exported, by a
        class name only one known class has; others are kept in
        ``unresolved``."""
        prefix = module + "."
        kept = {c: b for c, b in self.bases.items() if not c.startswith(prefix)}
        outside = set(kept) | {b for bs in kept.values() for b in bs}
        by_name: dict[str, list[str]] = {}
        for known in outside:
            by_name.setdefault(short_name(known), []).append(known)
        unresolved = {
            c: b for c, b in self.unresolved.items() if not c.startswith(prefix)
        }
        for cls, parents in bases.items():
            found, missing = [], []
            for base in parents:
                if "." not in base:  # defined in the module itself
                    found.append(prefix + base)
                    continue
                dotted = absolute_name(base, module)
                same_name = by_name.get(short_name(dotted), [])
                if dotted in outside:
                    found.append(dotted)
                elif len(same_name) == 1:
                    found.append(same_name[0])
                else:
                    missing.append(dotted)
            kept[prefix + cls] = tuple(found)
            if missing:
                unresolved[prefix + cls] = tuple(missing)
        # The built-in defaults describe vLLM's module: read, they are gone.
        replaced = module == KV_CACHE_INTERFACE
        found = {c: n for c, n in self.declared.items() if not c.startswith(prefix)}
        found.update({prefix + c: n for c, n in (declared or {}).items()})
        return self._replaced(kept, source, origin, not replaced, unresolved, found)

    def with_classes(
        self, bases: Mapping[str, tuple[str, ...]], source: str, origin: str
    ) -> ClassHierarchy:
        """This hierarchy with more classes (qualified names, as their bases)."""
        return self._replaced({**self.bases, **bases}, source, origin)

    def _replaced(
        self,
        bases,
        source: str,
        origin: str,
        keep_defaults: bool = True,
        unresolved: Mapping[str, tuple[str, ...]] | None = None,
        declared: Mapping[str, frozenset[str]] | None = None,
    ) -> ClassHierarchy:
        kept = [
            (s, o)
            for s, o in zip(self.sources, self.origins, strict=True)
            if keep_defaults or o != "built-in defaults"
        ]
        kept.append((source, origin))
        return ClassHierarchy(
            bases,
            tuple(s for s, _ in kept),
            tuple(o for _, o in kept),
            self.unresolved if unresolved is None else unresolved,
            self.declared if declared is None else declared,
        )

    def root(self, cls: str) -> str:
        """The topmost class ``cls`` derives from (``KVCacheSpec``); the first
        by name when it has several."""
        roots = sorted(c for c in self.ancestors(cls) if not self.bases.get(c))
        return roots[0] if roots else cls

    def layout_classes(self, family: Family) -> dict[str, bool]:
        """The classes that declare the family's layout property, with what
        each returns: the root False, the anchor and companions True."""
        return {
            self.root(family.anchor): False,
            **dict.fromkeys(family.qualified_members, True),
        }

    def declares_layout(self, family: Family) -> bool:
        """Whether the family's layout property is declared as VSL008's
        rewrite needs it (model/layout.py): by exactly the
        :meth:`layout_classes` of the classes read (an override elsewhere
        would make it mean something else)."""
        name = family.property_name
        declaring = {c for c, names in self.declared.items() if name in names}
        return declaring == set(self.layout_classes(family))

    def knows_bases(self, cls: str) -> bool:
        """Whether every base of ``cls`` is known: a class read from a module
        whose bases were all found (not a configured class whose module was
        never found, nor one deriving from a class of an unread module)."""
        return cls in self.bases and not any(
            c in self.unresolved for c in self.ancestors(cls)
        )

    def described_sources(self) -> str:
        """Where the hierarchy came from, for people: ``origin: path, ...``."""
        return ", ".join(
            s if s == o else f"{o}: {s}"
            for s, o in zip(self.sources, self.origins, strict=True)
        )

    def classes(self) -> frozenset[str]:
        return frozenset(self.bases) | {b for bs in self.bases.values() for b in bs}

    def ancestors(self, cls: str) -> frozenset[str]:
        """``cls`` and every class it inherits from."""
        if cls not in self._ancestors:
            found = [cls]
            for current in found:  # grows as bases are found, each once
                found += [b for b in self.bases.get(current, ()) if b not in found]
            self._ancestors[cls] = frozenset(found)
        return self._ancestors[cls]

    def companion_parents(self, family: Family) -> dict[str, tuple[str, ...]]:
        """Per companion, its proper ancestors that the anchor does not share
        (below their common ancestor): for vLLM, ``SlidingWindowMLASpec``'s
        ``SlidingWindowSpec``, not ``AttentionSpec``. A test against one of
        them sweeps the companion in (VSL007)."""
        shared = self.ancestors(family.anchor)
        return {
            c: tuple(sorted(self.ancestors(c) - shared - {c}))
            for c in family.companions
        }

    def uncovered(
        self, family: Family, named: Iterable[str], *, exact: bool = False
    ) -> list[str]:
        """Companions of ``family`` that a check naming ``named`` lets through.

        ``exact`` is for ``type(x) is C`` comparisons, where a base class
        does not match its subclasses.
        """
        named = set(named)
        return [
            c
            for c in family.companions
            if not (c in named if exact else named & self.ancestors(c))
        ]


def read_class_bases(source: bytes | str) -> dict[str, tuple[str, ...]]:
    """Top-level classes of a module and their bases: a class defined in the
    module by its bare name, an imported one by its dotted name as imported
    (``vllm.v1.kv_cache_interface.MLAAttentionSpec``, or relative:
    ``..kv_cache_interface.MLAAttentionSpec``); other bases are left out.

    Read with ``ast``: this runs on every check of a vLLM tree, and needs no
    more than names. The same module (flake8 asks once per folder) is parsed
    once.
    """
    return dict(_class_bases(source))


@functools.lru_cache(maxsize=8)
def _class_bases(source: bytes | str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    import ast

    from vllm_spec_lint.model.ast_fields import statements

    tree = ast.parse(source)
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    defined = {c.name for c in classes}
    imported: dict[str, str] = {}
    for node in statements(tree.body):  # under ``if TYPE_CHECKING:`` too
        if isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            for alias in node.names:
                dot = "" if module.endswith(".") else "."
                imported[alias.asname or alias.name] = f"{module}{dot}{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name.partition(".")[0]
                imported[bound] = alias.name if alias.asname else bound

    def base_name(base: ast.expr) -> str | None:
        if isinstance(base, ast.Subscript):  # Generic[T], a parametrised base
            base = base.value
        if isinstance(base, ast.Name):
            return base.id if base.id in defined else imported.get(base.id)
        if isinstance(base, ast.Attribute):
            head = base_name(base.value)
            return f"{head}.{base.attr}" if head else None
        return None

    return tuple(
        (c.name, tuple(b for b in map(base_name, c.bases) if b is not None))
        for c in classes
    )


def read_declared(
    source: bytes | str, names: Iterable[str]
) -> dict[str, frozenset[str]]:
    """Which of ``names`` each top-level class of a module defines in its own
    body (a method, property or class attribute). A source that holds none
    of them is not parsed: that is every vLLM release before the migration."""
    raw = source.encode() if isinstance(source, str) else source
    names = frozenset(n for n in names if n.encode() in raw)
    if not names:
        return {}
    import ast

    found = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef):
            defined = body_names(node) & names
            if defined:
                found[node.name] = frozenset(defined)
    return found


def body_names(node) -> set[str]:
    """The names an ``ast.ClassDef``'s own body defines: methods,
    properties, class attributes."""
    import ast

    defined = set()
    for statement in node.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defined.add(statement.name)
        elif isinstance(statement, ast.AnnAssign) and isinstance(
            statement.target, ast.Name
        ):
            defined.add(statement.target.id)
        elif isinstance(statement, ast.Assign):
            defined |= {t.id for t in statement.targets if isinstance(t, ast.Name)}
    return defined


def absolute_name(name: str, module_name: str | None) -> str:
    """Resolve a relative qualified name (``..v1.x.C``) as seen from the
    module ``module_name`` (``vllm.v1.core.y``); unchanged when it cannot be."""
    if not name.startswith("."):
        return name
    dots = len(name) - len(name.lstrip("."))
    rest = name[dots:]
    if module_name is None:
        return name
    package = module_name.split(".")[:-1]  # modules: parent package
    if dots - 1 >= len(package):  # beyond the top-level package
        return name
    base = package[: len(package) - (dots - 1)]
    return ".".join([*base, rest]) if rest else ".".join(base)


def short_name(qualified: str) -> str:
    return qualified.rpartition(".")[2]
