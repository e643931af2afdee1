"""Reading the spec classes' definitions for discovery (model/twins.py): the
family modules the hierarchy was read from, and the classes in the scanned
files that derive from a known spec class (plugins define their own).
Sources are parsed with ``ast``; nothing is imported or run."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from vllm_spec_lint.core.settings import Config
from vllm_spec_lint.edges.discovery import module_name_for
from vllm_spec_lint.edges.files import ends_with_path, read_source
from vllm_spec_lint.model.ast_fields import CANNOT_PARSE
from vllm_spec_lint.model.hierarchy import (
    ClassHierarchy,
    is_vllm_module,
    module_path,
    short_name,
)
from vllm_spec_lint.model.stand_ins import stand_in_families
from vllm_spec_lint.model.twins import (
    ClassShape,
    Twin,
    class_shapes,
    discover_twins,
    families_from,
)

# A class statement's bases: the cheap screen before parsing a file.
_CLASS_BASES = re.compile(rb"class[ \t]+\w+[ \t]*\(([^)]*)\)")
_WORD = re.compile(rb"\w+")


@dataclass
class SpecClasses:
    """The spec classes' shapes: the family modules' first, then those of the
    scanned files (from ``first_scanned`` on); ``known`` maps short names to
    qualified ones."""

    shapes: list[ClassShape]
    known: dict[str, str]
    first_scanned: int


def read_spec_classes(
    files: list[str],
    config: Config,
    hierarchy: ClassHierarchy,
    warnings: list[str],
    read: Callable[[str], bytes] = read_source,
) -> SpecClasses:
    """``read`` reads a scanned file (the runner keeps the bytes for later)."""
    shapes: list[ClassShape] = []
    family_files = set()
    modules = dict.fromkeys(m for f in config.families for m in f.modules)
    paths = {module: module_path(module) for module in modules}
    for module, module_file in paths.items():
        path = _source_of(module_file, hierarchy)
        if path is None:
            continue
        family_files.add(os.path.abspath(path))
        try:
            shapes += class_shapes(read_source(Path(path)), module, len(shapes))
        except (OSError, *CANNOT_PARSE) as e:
            warnings.append(f"{path}: cannot read spec classes: {e}")
    first_scanned = len(shapes)
    known = {short_name(c): c for c in hierarchy.classes()}
    known.update({s.name: s.qualname for s in shapes})
    encoded = frozenset(n.encode() for n in known)
    # Only names that end like a family module can be one: no abspath for
    # the thousands of others.
    family_suffixes = tuple(f"/{module_file}" for module_file in paths.values())
    for name in files:
        # "/" first: a relative name ("vllm/v1/...") ends like one too.
        if ("/" + name.replace(os.sep, "/")).endswith(
            family_suffixes
        ) and os.path.abspath(name) in family_files:
            continue
        try:
            source = read(name)
        except OSError:
            continue  # the analysis reports unreadable files
        if not _derives_from(source, encoded):
            continue
        try:
            found = class_shapes(source, module_name_for(name) or name, len(shapes))
        except CANNOT_PARSE:
            continue  # the analysis reports files that do not parse
        shapes += [s for s in found if any(_base_name(b) in known for b in s.bases)]
    return SpecClasses(shapes, known, first_scanned)


def discover(
    files: list[str],
    config: Config,
    hierarchy: ClassHierarchy,
    warnings: list[str],
    read: Callable[[str], bytes] = read_source,
    classes: SpecClasses | None = None,
) -> tuple[list[Twin], str | None]:
    """Twins among the spec classes, best first, and the root class they
    derive from (None when no family module was read and no class is known)."""
    if classes is None:
        classes = read_spec_classes(files, config, hierarchy, warnings, read)
    ancestors = _ancestry(classes.shapes, hierarchy, classes.known)
    root = _root(config, hierarchy)
    return discover_twins(classes.shapes, ancestors, root), root


def with_spec_classes(
    config: Config,
    files: list[str],
    hierarchy: ClassHierarchy,
    warnings: list[str],
    read: Callable[[str], bytes] = read_source,
) -> tuple[Config, ClassHierarchy]:
    """A plugin's own spec classes join the hierarchy (when the scanned tree
    is not vLLM itself: vLLM defines its spec classes in the family module)
    and the families their stand-ins form join the families
    (model/stand_ins.py); with ``discover-families`` the discovered twins
    join too."""
    plugin = not _scans_vllm(config, hierarchy)
    if config.discover_families or (plugin and files):
        classes = read_spec_classes(files, config, hierarchy, warnings, read)
    else:
        classes = None
    if plugin and classes is not None:
        scanned = classes.shapes[classes.first_scanned :]
        bases = {
            s.qualname: tuple(
                classes.known[_base_name(b)]
                for b in s.bases
                if _base_name(b) in classes.known
                and classes.known[_base_name(b)] != s.qualname
            )
            for s in scanned
        }
        if bases:
            count = "1 class" if len(bases) == 1 else f"{len(bases)} classes"
            hierarchy = hierarchy.with_classes(bases, count, "scanned files")
    derived = stand_in_families(config.families, hierarchy)
    if derived:
        config = replace(config, families=config.families + derived)
    if config.discover_families:
        twins, _ = discover(files, config, hierarchy, warnings, read, classes)
        joined = families_from(twins, config.families)
        if joined:
            config = replace(config, families=config.families + joined)
    return config, hierarchy


def _scans_vllm(config: Config, hierarchy: ClassHierarchy) -> bool:
    """Whether the scanned tree holds vLLM's own family module."""
    vllm_paths = [f.module_path for f in config.families if is_vllm_module(f.module)]
    return any(
        origin == "scanned tree" and any(ends_with_path(source, p) for p in vllm_paths)
        for source, origin in zip(hierarchy.sources, hierarchy.origins, strict=True)
    )


def _derives_from(source: bytes, names: frozenset[bytes]) -> bool:
    """Whether a class statement in ``source`` names one of ``names`` among
    its bases (as written on one line, as vLLM writes them)."""
    return any(
        word in names
        for match in _CLASS_BASES.finditer(source)
        for word in _WORD.findall(match.group(1))
    )


def _source_of(module_file: str, hierarchy: ClassHierarchy) -> str | None:
    """The file the hierarchy read the module at ``module_file`` from."""
    for source in hierarchy.sources:
        if ends_with_path(source, module_file):
            return source
    return None


def _base_name(base: str) -> str:
    return base.rpartition(".")[2].partition("[")[0]


def _ancestry(shapes: list[ClassShape], hierarchy: ClassHierarchy, known):
    """``ancestors(qualname)`` over the hierarchy and the scanned classes,
    whose bases are matched by name."""
    scanned = {s.qualname: s for s in shapes}
    cache: dict[str, frozenset[str]] = {}

    def ancestors(qualname: str) -> frozenset[str]:
        if qualname not in cache:
            cache[qualname] = frozenset({qualname})  # a cycle stops here
            shape = scanned.get(qualname)
            found = set(hierarchy.ancestors(qualname))
            if shape is not None and qualname not in hierarchy.bases:
                for base in shape.bases:
                    resolved = known.get(_base_name(base))
                    if resolved is not None and resolved != qualname:
                        found |= ancestors(resolved)
            cache[qualname] = frozenset(found)
        return cache[qualname]

    return ancestors


def spec_hierarchy(config: Config, hierarchy: ClassHierarchy) -> list[str]:
    """The classes of the families' hierarchies, sorted: those that derive
    from the topmost base of a family's anchor (``KVCacheSpec``), not the
    other classes of the module (``KVCacheConfig``)."""
    roots = {hierarchy.root(family.anchor) for family in config.families}
    return sorted(c for c in hierarchy.bases if hierarchy.ancestors(c) & roots)


def _root(config: Config, hierarchy: ClassHierarchy) -> str | None:
    """The topmost class the first family's anchor derives from."""
    if not config.families:
        return None
    return hierarchy.root(config.families[0].anchor)
