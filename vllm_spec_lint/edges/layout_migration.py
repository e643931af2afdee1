"""``codemod layout-property``: the migration from class tests to the
layout property, over a tree (docs/layout-property.md).

1. Where the property goes: each configured family's root, anchor and
   companions, in the files of the scanned tree that define them; a class
   outside the paths given stops the run before anything changes.
2. A census of every site (strict mode, noqa'd sites included) with the
   property assumed declared: what VSL008 rewrites, what stays, and why.
3. The rewrite: VSL008's fixes (safe ones; with ``unsafe`` the tests that
   leave a companion out and the exact comparisons too), then imports the
   rewrite left unused go (libcst's RemoveImportsVisitor), then the
   declarations; every changed statement laid out by the project's
   formatter.

Nothing is written until every changed file parses; the declarations are
written first, so an interrupted run never leaves a read of an undeclared
property behind.
"""

from __future__ import annotations

import ast
import os
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

from vllm_spec_lint.core.settings import Config
from vllm_spec_lint.edges.files import decode_source, is_within, read_source
from vllm_spec_lint.edges.hierarchy_sources import load_hierarchy
from vllm_spec_lint.edges.runner import run
from vllm_spec_lint.model.hierarchy import ClassHierarchy, Family, module_path
from vllm_spec_lint.model.hierarchy import short_name as short
from vllm_spec_lint.repair.declarations import declare_property, property_docstring
from vllm_spec_lint.repair.formatting import formatter_for

CODE = "VSL008"


class MigrationError(Exception):
    """The property cannot be declared (exit 2; nothing was changed)."""


@dataclass
class Migration:
    # (path, original bytes, new bytes), declaration files first.
    changed: list[tuple[Path, bytes, bytes]] = field(default_factory=list)
    # What was declared where, one line each.
    declared: list[str] = field(default_factory=list)
    # Per rule, the sites rewritten and kept: (code, why) -> count.
    rewritten: Counter = field(default_factory=Counter)
    kept: Counter = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    checked: int = 0


def migrate(paths: list[Path], config: Config, *, unsafe: bool) -> Migration:
    """The migration's new file contents (nothing written here)."""
    migration = Migration()
    hierarchy = load_hierarchy(paths, [], config, migration.warnings)
    families = [f for f in config.families if not f.derived_from]
    declarations = _declarations(paths, families, hierarchy)
    census = run(
        paths,
        replace(
            config, strict=True, noqa_as_suppression=True, assume_layout_property=True
        ),
    )
    _count(census, migration, unsafe)
    # VSL007's fixes exclude the companion through the property (unsafe).
    codes = (CODE, "VSL007") if unsafe else (CODE,)
    rewrite = run(
        paths,
        replace(config, select=codes, ignore=(), assume_layout_property=True),
        fix=True,
        unsafe=unsafe,
    )
    migration.checked = len(rewrite.results)
    # The rewrite reads the hierarchy again: its warnings are said once.
    migration.warnings += [w for w in rewrite.warnings if w not in migration.warnings]
    migration.failures += [
        f"{r.path}: {r.failure}" for r in rewrite.results if r.failure
    ]
    fixed = {
        os.path.abspath(r.path): (r.original, r.fixed_source)
        for r in rewrite.results
        if r.fixed_source is not None and r.fixed
    }
    members = {short(c) for f in families for c in hierarchy.layout_classes(f)}
    new_files = {}
    for path, (original, new) in fixed.items():
        text, encoding = decode_source(new)
        before, _ = decode_source(original)
        text = _without_unused(text, before, members, path, config)
        new_files[path] = (original, text, encoding)
    declared_files = []
    for path, values, family in declarations:
        if path in new_files:
            original, text, encoding = new_files[path]
        else:
            original = read_source(Path(path))
            text, encoding = decode_source(original)
        text, added = declare_property(
            text, values, family.property_name, property_docstring(list(family.members))
        )
        if added:
            before, _ = decode_source(original)
            text = _formatted(text, added, path, config, before)
            migration.declared.append(
                f"{_shown(path)}: {family.property_name} on "
                + ", ".join(f"{c} ({v})" for c, v in values.items())
            )
            declared_files.append(path)
        new_files[path] = (original, text, encoding)
    for path in sorted(new_files, key=lambda p: (p not in declared_files, p)):
        original, text, encoding = new_files[path]
        new = text.encode(encoding)
        if new == original:
            continue
        try:
            ast.parse(text)
        except SyntaxError as e:  # never written: the run stops
            raise MigrationError(
                f"{path}: the migrated code does not parse: {e}"
            ) from e
        migration.changed.append((Path(_shown(path)), original, new))
    return migration


def _shown(path: str) -> str:
    """``path`` as the other commands print it: relative to the working
    folder when it lies below it."""
    absolute = os.path.abspath(path)
    return os.path.relpath(absolute) if is_within(absolute, os.getcwd()) else path


def _declarations(
    paths: list[Path], families: list[Family], hierarchy: ClassHierarchy
) -> list[tuple[str, dict[str, bool], Family]]:
    """Each declaration to make: the file, {class: its value} and the family
    (a file may take several families': their properties differ). Every
    class must be defined in a file under ``paths``."""
    roots = [p.absolute() for p in paths]
    # One property, one family: declared for two, it would answer for both.
    named: dict[str, Family] = {}
    for family in families:
        first = named.setdefault(family.property_name, family)
        if first is not family:
            raise MigrationError(
                f"families {first.name} and {family.name} would both declare "
                f"{family.property_name}: give one of them its own name "
                "(`layout-property` in its extend-families entry)"
            )
    found: dict[tuple[str, Family], dict[str, bool]] = {}
    for family in families:
        for cls, value in hierarchy.layout_classes(family).items():
            path = _defined_in(cls, hierarchy)
            refused = f"family {family.name}: cannot declare {family.property_name} "
            refused += f"on {short(cls)}: {module_path(cls.rpartition('.')[0])}"
            if path is None or not any(_under(Path(path), r) for r in roots):
                where = f"read from {path}" if path else "its module was not read"
                raise MigrationError(
                    f"{refused} is not under the paths given ({where}); run the "
                    "codemod on the tree that defines the family's classes"
                )
            if cls not in hierarchy.bases:
                raise MigrationError(f"{refused} does not define it (read from {path})")
            found.setdefault((path, family), {})[short(cls)] = value
    return [(path, values, family) for (path, family), values in found.items()]


def _defined_in(cls: str, hierarchy: ClassHierarchy) -> str | None:
    suffix = "/" + module_path(cls.rpartition(".")[0])
    for source, origin in zip(hierarchy.sources, hierarchy.origins, strict=True):
        if origin == "scanned tree" and source.replace(os.sep, "/").endswith(suffix):
            return os.path.abspath(source)
    return None


def _under(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _count(census, migration: Migration, unsafe: bool) -> None:
    """Each site of the census, as rewritten or kept and why."""
    for finding in census.findings:
        reason = finding.suppressed_by
        if finding.code == "VSL007":
            # A test of a companion's parent: a layout test only where the
            # default mode reports it (strict's reasons say it is not one).
            if reason is None:
                _count_fix(
                    migration, "VSL007", finding, "excludes the companion", unsafe
                )
            elif reason.startswith("noqa"):
                migration.kept[("VSL007", "noqa")] += 1
            continue
        if finding.code != CODE:
            why = "not a class test the property can answer"
            migration.kept[(finding.code, reason.split(":")[0] if reason else why)] += 1
            continue
        # A test VSL001 or VSL002 would report leaves a companion out.
        whole = not finding.follows
        rule = finding.follows[0] if finding.follows else CODE
        if reason:
            migration.kept[(rule, reason.split(":")[0])] += 1
        else:
            what = "names the whole family" if whole else "leaves a companion out"
            _count_fix(migration, rule, finding, what, unsafe)


def _count_fix(migration: Migration, rule: str, finding, what: str, unsafe: bool):
    if finding.fix is None:
        why = re.search(r"\(no fix: (.*)\)$", finding.message)
        migration.kept[(rule, why.group(1) if why else "no fix")] += 1
    elif finding.fix.applicability == "safe" or unsafe:
        migration.rewritten[(rule, what)] += 1
    else:
        migration.kept[(rule, "changes behaviour: --unsafe-fixes rewrites it")] += 1


def _without_unused(
    text: str, before: str, names: set[str], path: str, config: Config
) -> str:
    """``text`` less the imports of ``names`` the rewrite left unused (used
    in ``before``, named only by their import now)."""
    import libcst as cst
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import RemoveImportsVisitor

    tree = ast.parse(text)
    used_before = _outside_imports(before, ast.parse(before))
    used_now = _outside_imports(text, tree)
    gone = [n for n in names if _names(used_before, n) and not _names(used_now, n)]
    if not gone:
        return text
    module = cst.parse_module(text)
    unused = []
    for statement in tree.body:
        if isinstance(statement, ast.ImportFrom) and statement.level == 0:
            for alias in statement.names:
                if alias.name in gone and alias.asname is None:
                    unused.append((statement.module, alias.name, None))
    if not unused:
        return text
    new = RemoveImportsVisitor(CodemodContext(), unused).transform_module(module).code
    return _formatted(new, _changed_ranges(text, new), path, config, before)


def _outside_imports(source: str, tree: ast.Module) -> str:
    """``source`` less its import statements: where a name written is a use
    (a string such as ``__all__``'s counts: the import may be a re-export)."""
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            skipped.update(range(node.lineno - 1, node.end_lineno or node.lineno))
    lines = source.splitlines(keepends=True)
    return "".join(line for i, line in enumerate(lines) if i not in skipped)


def _names(text: str, name: str) -> bool:
    return re.search(rf"\b{name}\b", text) is not None


def _changed_ranges(old: str, new: str) -> list[tuple[int, int]]:
    """Offsets in ``new`` of the lines that differ from ``old``."""
    import difflib

    old_lines = old.splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    starts = [0]
    for line in new_lines:
        starts.append(starts[-1] + len(line))
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    return [
        (starts[j1], starts[j2])
        for tag, _, _, j1, j2 in matcher.get_opcodes()
        if tag != "equal" and j2 > j1
    ]


def _formatted(text: str, ranges, path: str, config: Config, before: str) -> str:
    """``ranges`` of ``text`` laid out; ``before``: the file as it was found."""
    formatter = formatter_for(path, config.line_length, config.fix_formatter)
    return formatter(text, ranges, before) if formatter and ranges else text
