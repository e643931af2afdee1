"""Where the class hierarchy comes from: the family modules
(``vllm/v1/kv_cache_interface.py``) are read, never imported, from the first
of

1. ``--vllm-source PATH`` / ``vllm-source = "PATH"``: a vLLM checkout or a
   site-packages folder (an error when the family module is not there);
2. the scanned tree (or a folder above it): a vLLM checkout checks itself;
3. the active virtual environment's vLLM (``$VIRTUAL_ENV``);
4. the vLLM the running interpreter would import (located with
   ``importlib.util.find_spec``, which finds a top-level package without
   running it);
5. the built-in defaults.

A plugin's own spec classes (``class MyMLASpec(MLAAttentionSpec)`` in the
scanned files) are added by ``edges/spec_classes.py``.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

from vllm_spec_lint.core.settings import Config
from vllm_spec_lint.edges.files import ends_with_path, read_source
from vllm_spec_lint.model.hierarchy import (
    ClassHierarchy,
    is_vllm_module,
    module_path,
    read_class_bases,
    read_declared,
    short_name,
)


class HierarchyError(Exception):
    """A configured hierarchy source that cannot be used (exit 2)."""


def load_hierarchy(
    roots: list[Path],
    files: list[str],
    config: Config,
    warnings: list[str],
    *,
    class_bases: Callable[[bytes], dict] = read_class_bases,
) -> ClassHierarchy:
    """Built-in defaults, overridden by each family module found at the first
    source that has it. ``class_bases`` reads a module's classes (a cache,
    for the runner)."""
    hierarchy = ClassHierarchy.default()
    modules = dict.fromkeys(m for f in config.families for m in f.modules)
    properties = {f.property_name for f in config.families}
    # vLLM's modules first: a plugin's classes derive from theirs.
    for module in sorted(modules, key=lambda m: not is_vllm_module(m)):
        path = module_path(module)
        for origin, candidate in _candidates(roots, files, config, path):
            if not candidate.is_file():
                if origin == "vllm-source" and is_vllm_module(module):
                    raise HierarchyError(
                        f"{config.vllm_source}: no {path} there "
                        "(expected a vLLM checkout or a site-packages folder)"
                    )
                continue
            try:
                source = read_source(candidate)
                bases = class_bases(source)
                declared = read_declared(source, properties)
            except Exception as e:  # a broken file keeps the defaults
                warnings.append(f"{candidate}: cannot read class hierarchy: {e}")
                break
            hierarchy = hierarchy.with_module(
                module, bases, str(candidate), origin, declared
            )
            break
    warnings += _unknown_bases(config, hierarchy)
    if config.assume_layout_property:
        hierarchy = with_layout_property(hierarchy, config)
    return hierarchy


def with_layout_property(hierarchy: ClassHierarchy, config: Config) -> ClassHierarchy:
    """The hierarchy as the layout-property codemod leaves it: each family's
    root, anchor and companions declare its property. Stand-in families
    inherit the property of the family they stand in for and get none."""
    declared = dict(hierarchy.declared)
    for family in config.families:
        if family.derived_from:
            continue
        for cls in hierarchy.layout_classes(family):
            declared[cls] = declared.get(cls, frozenset()) | {family.property_name}
    return replace(hierarchy, declared=declared)


def _unknown_bases(config: Config, hierarchy: ClassHierarchy) -> list[str]:
    """A warning for each configured class whose bases are not all known:
    narrowing takes no test against a parent to exclude it."""
    found = []
    for family in config.families:
        for cls in family.qualified_members:
            if cls in hierarchy.bases and hierarchy.knows_bases(cls):
                continue
            if cls not in hierarchy.bases:
                path = module_path(cls.rpartition(".")[0])
                read = [s for s in hierarchy.sources if ends_with_path(s, path)]
                why = (
                    f"not found in {read[0]}"
                    if read
                    else f"not found: no {path} was read"
                )
            else:
                missing = [
                    b
                    for c in hierarchy.ancestors(cls)
                    for b in hierarchy.unresolved.get(c, ())
                ]
                why = f"derives from {', '.join(missing)}, which no module read defines"
            found.append(
                f"family {family.name}: {short_name(cls)} {why}; its bases are "
                "unknown, so no test against a parent class is taken to exclude it"
            )
    return found


def _candidates(
    roots: list[Path], files: list[str], config: Config, module_file: str
) -> Iterator[tuple[str, Path]]:
    """(origin, path) of each place the family module may be, in order."""
    if config.vllm_source is not None:
        yield "vllm-source", Path(config.vllm_source) / module_file
        if is_vllm_module(module_file.partition("/")[0]):
            return  # a plugin's module is looked for where it is installed
    in_tree = [
        Path(os.path.abspath(f)) for f in files if ends_with_path(f, module_file)
    ]
    for found in in_tree:
        yield "scanned tree", found
    if not in_tree:
        for root in roots:
            folder = root.absolute() if root.is_dir() else root.absolute().parent
            for candidate in (folder, *folder.parents):
                yield "scanned tree", candidate / module_file
    virtual_env = os.environ.get("VIRTUAL_ENV")
    if virtual_env:
        for site_packages in _site_packages(Path(virtual_env)):
            yield "VIRTUAL_ENV", site_packages / module_file
    for location in _importable(module_file.partition("/")[0]):
        yield "interpreter", location.parent / module_file


def _site_packages(environment: Path) -> list[Path]:
    found = sorted(environment.glob("lib/python3*/site-packages"))
    found += sorted(environment.glob("Lib/site-packages"))
    return found


def _importable(package: str) -> list[Path]:
    """Where the running interpreter would import ``package`` from. For a
    top-level name find_spec only searches sys.path: nothing is run."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return []
    if spec is None or not spec.submodule_search_locations:
        return []
    return [Path(location) for location in spec.submodule_search_locations]
