"""Structural twins: spec classes that take over another's cache layout by
repeating its members instead of deriving from it.

``SlidingWindowMLASpec`` is the first: it repeats ``MLAAttentionSpec``'s own
dataclass fields and calls the same alignment helper in ``__post_init__``,
while deriving from ``SlidingWindowSpec``. Every check against the older
class silently misses the twin. This module finds such pairs among the spec
classes of a source tree, from their definitions alone (read with ``ast``,
never imported), so the next one is noticed without configuration.

For each pair of spec classes where neither derives from the other, the
members each declares in its own body are compared:

- fields both declare, by name (1 point each);
- fields with the same annotation and default under different names, when
  the annotation names a non-builtin type (0.5 each);
- module-level helpers both call with ``self`` (2 points each);
- methods and properties both define with the same body, once their own
  class names are set aside (1 point each);
- a docstring that names the other's layout (the other's name without its
  ``AttentionSpec``/``Spec`` suffix, e.g. "MLA cache format"; 1 point).

A pair is proposed when it scores at least ``THRESHOLD`` (5) with at least
two shared fields or one shared helper: on every vLLM release from 0.23.0 to
0.33.0 that proposes exactly ``MLAAttentionSpec`` / ``SlidingWindowMLASpec``
(README, "Discovered families").

Direction: the anchor is the class more code builds on, the one with more
subclasses; on a tie the one defined first (the older class: the family
module before classes defined in the scanned files, then source order).
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field
from itertools import combinations

from vllm_spec_lint.model.hierarchy import Family

THRESHOLD = 5.0
_BUILTIN_NAMES = frozenset(dir(builtins)) | {"None"}
_SUFFIXES = ("AttentionSpec", "Spec")


@dataclass(frozen=True)
class ClassShape:
    """What a class declares in its own body."""

    qualname: str
    bases: tuple[str, ...]  # as written, dotted names
    order: int  # where it was defined: earlier sources and lines first
    fields: dict[str, str] = field(default_factory=dict)  # name -> annotation
    defaults: dict[str, str] = field(default_factory=dict)  # name -> default
    methods: dict[str, str | None] = field(default_factory=dict)  # -> body shape
    # module-level helper -> the methods that call it with ``self``
    helpers: dict[str, frozenset[str]] = field(default_factory=dict)
    docstring: str = ""

    @property
    def name(self) -> str:
        return self.qualname.rpartition(".")[2]

    @property
    def stem(self) -> str:
        for suffix in _SUFFIXES:
            if self.name.endswith(suffix) and self.name != suffix:
                return self.name[: -len(suffix)]
        return self.name


@dataclass(frozen=True)
class Twin:
    anchor: str
    companion: str
    score: float
    evidence: tuple[str, ...]

    def to_json(self) -> dict:
        return {
            "anchor": self.anchor,
            "companion": self.companion,
            "score": self.score,
            "evidence": list(self.evidence),
        }

    @property
    def short_evidence(self) -> str:
        """The evidence in a few words, for a finding's message."""
        return self.evidence[0].replace("shares fields", "same fields")


def class_shapes(source: str | bytes, module: str, first_order: int = 0):
    """The shapes of a module's top-level classes, in source order."""
    tree = ast.parse(source)
    functions = {
        n.name
        for n in tree.body
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    shapes = []
    for index, node in enumerate(n for n in tree.body if isinstance(n, ast.ClassDef)):
        shapes.append(_shape(node, module, first_order + index, functions))
    return shapes


def _shape(node: ast.ClassDef, module: str, order: int, functions) -> ClassShape:
    fields, defaults, methods, helpers = {}, {}, {}, {}
    for item in node.body:
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            fields[item.target.id] = ast.unparse(item.annotation)
            if item.value is not None:
                defaults[item.target.id] = ast.unparse(item.value)
        elif isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            methods[item.name] = _body_shape(item, node.name)
            for helper in _helpers_called(item, functions):
                helpers[helper] = helpers.get(helper, frozenset()) | {item.name}
    return ClassShape(
        qualname=f"{module}.{node.name}",
        bases=tuple(ast.unparse(b) for b in node.bases),
        order=order,
        fields=fields,
        defaults=defaults,
        methods=methods,
        helpers=helpers,
        docstring=ast.get_docstring(node) or "",
    )


def _body_shape(function: ast.FunctionDef, class_name: str) -> str | None:
    """The body's structure, without its docstring, positions, or its own
    class's name (two twins' ``merge`` name their own class). None for a
    body that only returns a constant: many unrelated classes share those."""
    body = list(function.body)
    docstring = body and isinstance(body[0], ast.Expr)
    if docstring and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if len(body) == 1 and isinstance(body[0], ast.Return):
        if body[0].value is None or isinstance(body[0].value, ast.Constant):
            return None
    text = "\n".join(ast.dump(statement) for statement in body)
    return text.replace(f"'{class_name}'", "'<class>'")


def _helpers_called(function: ast.FunctionDef, functions) -> set[str]:
    """Module-level functions the method calls with ``self``."""
    return {
        call.func.id
        for call in ast.walk(function)
        if isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id in functions
        and any(isinstance(a, ast.Name) and a.id == "self" for a in call.args)
    }


def _compare(a: ClassShape, b: ClassShape) -> tuple[float, list[str], int]:
    """Score, evidence and the number of shared fields of one pair."""
    score, evidence = 0.0, []
    shared = sorted(set(a.fields) & set(b.fields))
    if shared:
        score += len(shared)
        evidence.append(f"shares fields {', '.join(shared)}")
    alike = sorted(
        f"{x}/{y}"
        for x, annotation in a.fields.items()
        for y, other in b.fields.items()
        if x != y
        and x not in b.fields
        and y not in a.fields
        and annotation == other
        and a.defaults.get(x) == b.defaults.get(y)
        and _names_a_type(annotation)
    )
    if alike:
        score += 0.5 * len(alike)
        evidence.append(f"same annotations under other names: {', '.join(alike)}")
    for helper in sorted(set(a.helpers) & set(b.helpers)):
        score += 2
        both = sorted(a.helpers[helper] & b.helpers[helper])
        where = f" in {', '.join(both)}" if both else ""
        evidence.append(f"both call {helper}{where}")
    same_bodies = sorted(
        m
        for m in set(a.methods) & set(b.methods)
        if a.methods[m] == b.methods[m] and a.methods[m] is not None
    )
    if same_bodies:
        score += len(same_bodies)
        evidence.append(f"same body: {', '.join(same_bodies)}")
    for one, other in ((a, b), (b, a)):
        if other.stem and other.stem != other.name and other.stem in one.docstring:
            score += 1
            evidence.append(f"{one.name}'s docstring names {other.stem}")
    return score, evidence, len(shared)


def _names_a_type(annotation: str) -> bool:
    names = {n.id for n in ast.walk(ast.parse(annotation, mode="eval"))
             if isinstance(n, ast.Name)}  # fmt: skip
    return bool(names - _BUILTIN_NAMES)


def discover_twins(
    shapes: list[ClassShape], ancestors, root: str | None = None
) -> list[Twin]:
    """Pairs above the threshold, best first. ``ancestors(qualname)`` gives a
    class and the classes it inherits from; only classes that derive from
    ``root`` (when given) take part."""
    spec = [s for s in shapes if root is None or root in ancestors(s.qualname)]
    spec = [s for s in spec if s.qualname != root]
    descendants = {
        s.qualname: sum(
            1 for o in spec if o is not s and s.qualname in ancestors(o.qualname)
        )
        for s in spec
    }
    twins = []
    for a, b in combinations(spec, 2):
        if a.qualname in ancestors(b.qualname) or b.qualname in ancestors(a.qualname):
            continue
        if a.name == b.name:  # one class read under two module names
            continue
        score, evidence, shared = _compare(a, b)
        if score < THRESHOLD or (shared < 2 and not set(a.helpers) & set(b.helpers)):
            continue
        anchor, companion = sorted(
            (a, b), key=lambda s: (-descendants[s.qualname], s.order)
        )
        twins.append(Twin(anchor.qualname, companion.qualname, score, tuple(evidence)))
    twins.sort(key=lambda t: (-t.score, t.anchor, t.companion))
    return twins


def families_from(twins: list[Twin], configured: tuple[Family, ...]):
    """The twins that join the configured families: those whose two classes
    sit in one module and that no configured family already pairs. A twin
    whose anchor is itself a companion (``SlidingWindowMLASpec`` and a third
    class with the same fields) is left to the pair with the real anchor."""
    paired = {(f.anchor, c) for f in configured for c in f.companions}
    companions = {c for f in configured for c in f.companions}
    companions |= {t.companion for t in twins}
    joined = []
    for twin in twins:
        module, _, anchor = twin.anchor.rpartition(".")
        companion_module, _, companion = twin.companion.rpartition(".")
        if (
            module != companion_module
            or (twin.anchor, twin.companion) in paired
            or twin.anchor in companions
        ):
            continue
        joined.append(
            Family(
                f"discovered:{anchor}/{companion}",
                module,
                (anchor, companion),
                evidence=twin.short_evidence,
            )
        )
    return tuple(joined)
