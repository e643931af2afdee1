"""Backend pairing: which spec classes a metadata builder can be given.

vLLM builds one metadata builder per attention group, with the group's spec:
the group's layers answer ``get_attn_backend()``, that backend answers
``get_builder_cls()``, and the builder is made with the spec the layers'
``get_kv_cache_spec()`` built (after the backend's ``customize_spec``). So a
test on a builder's own spec (own_spec.py) can only see the spec classes
built by the layers whose backend returns that builder or a subclass of it.
When none of them builds a companion, the test is deliberate.

Soundness first: every step is read from the code as written, and anything
else makes the answer unknown (the finding stays). A class object can only
be reached by naming it, so every use of a builder's or backend's name in
the tree is classified; a use that could hand the class to code we do not
follow (stored, passed, called, put in a table that is not only tested for
membership, renamed on import, named in a string that could be imported,
``get_builder_cls`` read off a backend) is an *escape*. Returns must be
class names (or ``super()``, ``dataclasses.replace`` of one); a computed
one is unknown. What is outside the tree (plugins) is invisible: the reason
says so.

Per file, :func:`summarize` reads ``ast`` once; :func:`verdict` joins the
summaries. Pure: the tree pass (edges/pairing.py) reads the files.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vllm_spec_lint.model.class_bodies import OWN_SPEC, SAME, SUPER
from vllm_spec_lint.model.class_summaries import (
    ATTRIBUTE,
    BACKEND_METHOD,
    BUILDER_METHOD,
    CUSTOMIZE_METHOD,
    HARMLESS,
    IMPORT,
    IN_TABLE,
    MEMBERSHIP,
    RETURNED,
    SPEC_METHOD,
    ModuleSummary,
)
from vllm_spec_lint.model.hierarchy import ClassHierarchy, short_name

# Bases outside the tree known to define no pairing method: Python's own,
# and torch's Module, which every vLLM layer derives from.
_STANDARD_BASES = frozenset(
    {
        "builtins.object",
        "abc.ABC",
        "typing.Generic",
        "typing.Protocol",
        "torch.nn.Module",
        "torch.nn.modules.module.Module",
    }
)
# A class not read (a plugin's mixin, a base outside the tree) may define any
# method. Building the spec or customizing it, it could make a companion
# without naming a chain class: not read, it leaves the answer unknown. The
# builder's and the backend's methods need no such care: to return a chain
# class they must name it, and every file naming one is read.
_UNREAD_MAY_ANSWER = frozenset({SPEC_METHOD, CUSTOMIZE_METHOD})


@dataclass
class Chain:
    """The classes between one builder and the specs it can be given."""

    builders: set[str] = field(default_factory=set)
    backends: set[str] = field(default_factory=set)
    layers: set[str] = field(default_factory=set)
    # Why the answer is unknown, once it is.
    unknown: str | None = None
    # Modules whose classes a lookup needed and no summary holds.
    missing_modules: set[str] = field(default_factory=set)

    def names(self) -> set[str]:
        """Short names whose every use in the tree matters."""
        return {short_name(c) for c in self.builders | self.backends | self.layers}


class Tree:
    """The summaries read so far, joined."""

    def __init__(self, summaries: list[ModuleSummary]):
        self.summaries = summaries
        self.classes = {q: c for s in summaries for q, c in s.classes.items()}
        self.aliases = {k: v for s in summaries for k, v in s.aliases.items()}
        self.tables = {q: t for s in summaries for q, t in s.tables.items()}
        self.subclasses: dict[str, set[str]] = {}
        for info in self.classes.values():
            for base in info.bases:
                self.subclasses.setdefault(self.canonical(base), set()).add(
                    info.qualname
                )

    def canonical(self, qualname: str) -> str:
        """Through re-exports (``from .indexer import X`` in a package)."""
        for _ in range(10):
            if qualname in self.classes or qualname not in self.aliases:
                return qualname
            qualname = self.aliases[qualname]
        return qualname

    def descendants(self, qualname: str) -> set[str]:
        found, todo = {qualname}, [qualname]
        while todo:
            for child in self.subclasses.get(todo.pop(), ()):
                if child not in found:
                    found.add(child)
                    todo.append(child)
        return found

    def lookup(self, qualname: str, method: str, chain: Chain | None, after=False):
        """(class defining ``method`` as the MRO finds it from ``qualname``
        (from its bases with ``after``), what its returns can be), or None
        when no class read defines it. For the spec's methods a class not
        read that comes first may define it: (that class, None), unknown.
        With a ``chain``, the modules of bases not read yet are recorded in
        ``chain.missing_modules``, to be read."""
        order = self._mro(qualname, chain)
        for owner in order[1:] if after else order:
            info = self.classes.get(owner)
            if info is None:
                if method in _UNREAD_MAY_ANSWER and owner not in _STANDARD_BASES:
                    return owner, None
                continue
            if method in info.returns:
                return owner, self._expand(owner, info.returns[method], method, chain)
        return None

    def _expand(self, owner, returns, method, chain):
        if returns is None or SUPER not in returns:
            return returns
        above = self.lookup(owner, method, chain, after=True)
        if above is None or above[1] is None:
            return None
        rest = tuple(r for r in returns if r != SUPER)
        return rest + above[1]

    def _mro(self, qualname: str, chain: Chain | None) -> list[str]:
        """Depth-first, left to right (C3 agrees on single inheritance)."""
        order: list[str] = []
        todo = [self.canonical(qualname)]
        while todo:
            current = todo.pop(0)
            if current in order:
                continue
            order.append(current)
            info = self.classes.get(current)
            if info is None:
                if chain is not None and not current.startswith("?"):
                    chain.missing_modules.add(current.rpartition(".")[0])
                continue
            todo[:0] = [self.canonical(b) for b in info.bases]
        return order

    def fully_read(self, qualname: str) -> bool:
        """Whether every class of ``qualname``'s MRO was read (or is one of
        the standard bases, which define no pairing method)."""
        return all(
            c in self.classes or c in _STANDARD_BASES for c in self._mro(qualname, None)
        )

    def uses(self, name: str) -> set[str]:
        return {how for s in self.summaries for how in s.uses(name)}


def chain_of(builder: str, tree: Tree) -> Chain:
    """The builders, backends and layers ``builder``'s spec comes from, and
    whether anything escapes the reading."""
    chain = Chain()
    builder = tree.canonical(builder)
    if builder not in tree.classes:
        chain.unknown = f"{short_name(builder)} is not defined in the tree"
        return chain
    chain.builders = tree.descendants(builder)
    for name in sorted(chain.builders):
        info = tree.classes[name]
        if info.rebinds_own_spec:
            chain.unknown = f"{short_name(name)} assigns self.{OWN_SPEC}"
        elif info.passes_other_spec:
            chain.unknown = f"{short_name(name)} gives its base another spec"
    # A base not read cannot return a chain class: it would name it, and
    # every file naming one is read.
    for qualname in tree.classes:
        found = tree.lookup(qualname, BUILDER_METHOD, None)
        if found is not None and found[1] and chain.builders & _canon(found[1], tree):
            chain.backends |= tree.descendants(qualname)
    for qualname in tree.classes:
        found = tree.lookup(qualname, BACKEND_METHOD, None)
        if found is not None and found[1] and chain.backends & _canon(found[1], tree):
            chain.layers |= tree.descendants(qualname)
    for backend in chain.backends:
        tree.lookup(backend, CUSTOMIZE_METHOD, chain)
    for layer in chain.layers:
        tree.lookup(layer, SPEC_METHOD, chain)
    if chain.unknown is None:
        chain.unknown = _escape(chain, tree)
    return chain


def _canon(names, tree: Tree) -> set[str]:
    return {tree.canonical(n) for n in names}


def _escape(chain: Chain, tree: Tree) -> str | None:
    """The first use of a builder's or backend's name that could hand the
    class to code this reading does not follow, described; else None."""
    for names, role in ((chain.builders, "builder"), (chain.backends, "backend")):
        allowed_return = RETURNED + (
            BUILDER_METHOD if role == "builder" else BACKEND_METHOD
        )
        for qualname in sorted(names):
            name = short_name(qualname)
            for how in sorted(tree.uses(name)):
                if how in HARMLESS or how == allowed_return:
                    continue
                if how.startswith(ATTRIBUTE) and role == "backend":
                    if how != ATTRIBUTE + BUILDER_METHOD:
                        continue
                if how.startswith(IN_TABLE):
                    table = short_name(how.removeprefix(IN_TABLE))
                    if tree.uses(table) <= {MEMBERSHIP, IMPORT}:
                        continue
                    return f"the {role} {name} is kept in {table}, used otherwise"
                return f"the {role} {name} is used in a way not followed ({how})"
    return None


def verdict(own_spec: tuple[str, ...], tree: Tree, hierarchy: ClassHierarchy):
    """Why the test ``own_spec`` (builder, companions it leaves out) names is
    deliberate, or None when a layer can build a companion or the answer
    is unknown."""
    builder, missing = own_spec[0], own_spec[1:]
    chain = chain_of(builder, tree)
    if chain.unknown is not None or not chain.backends or not chain.layers:
        return None
    for backend in chain.backends:
        found = tree.lookup(backend, CUSTOMIZE_METHOD, chain)
        if found is None and not tree.fully_read(backend):
            return None  # a base we cannot read may customize the spec
        if found is not None and found[1] != (SAME,):
            return None
    built: set[str] = set()
    for layer in chain.layers:
        found = tree.lookup(layer, SPEC_METHOD, chain)
        if found is None or found[1] is None or SAME in found[1]:
            return None
        built |= _canon(found[1], tree)
    for spec in built:
        if spec not in hierarchy.bases:
            return None  # not a spec class we know (a helper's result?)
        if any(m in hierarchy.ancestors(spec) for m in missing):  # itself too
            return None
    backends = sorted(short_name(b) for b in chain.backends)
    more = f" (+{len(backends) - 1})" if len(backends) > 1 else ""
    return (
        f"pairing: {short_name(builder)}'s spec comes only from layers using "
        f"{backends[0]}{more}; those layers build only "
        f"{', '.join(sorted(short_name(s) for s in built))}; assumes no layer "
        "outside this tree uses these backends"
    )
