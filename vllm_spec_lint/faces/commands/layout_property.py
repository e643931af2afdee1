"""``vllm-spec-lint codemod layout-property``: the migration of
edges/layout_migration.py, as a diff or written, with its census."""

from __future__ import annotations

import argparse
import sys

from vllm_spec_lint.core.settings import Config
from vllm_spec_lint.faces.cli_options import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS
from vllm_spec_lint.faces.commands.running import diff_text


def command_layout_property(args: argparse.Namespace, config: Config) -> int:
    from vllm_spec_lint.edges.files import WriteRefused, write_atomically
    from vllm_spec_lint.edges.layout_migration import MigrationError, migrate

    try:
        migration = migrate(args.paths, config, unsafe=args.unsafe_fixes)
    except MigrationError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_ERROR
    for warning in migration.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    failures = list(migration.failures)
    if args.diff:
        sys.stdout.write(
            "".join(diff_text(str(p), old, new) for p, old, new in migration.changed)
        )
    else:
        for path, old, new in migration.changed:
            try:
                write_atomically(path, old, new)
            except (WriteRefused, OSError) as e:
                failures.append(f"{path}: not written: {e}")
                if migration.declared and path == migration.changed[0][0]:
                    break  # no read of a property that was not declared
    for failure in failures:
        print(f"error: {failure}", file=sys.stderr)
    print(summary(migration, diff=args.diff), file=sys.stderr)
    if failures:
        return EXIT_ERROR
    return EXIT_FINDINGS if args.diff and migration.changed else EXIT_CLEAN


def summary(migration, *, diff: bool) -> str:
    """What was declared, then per rule the sites rewritten and kept, why."""
    from vllm_spec_lint.faces.report import plural

    verb = "would change" if diff else "changed"
    lines = [
        f"{plural(migration.checked, 'file')} checked, {len(migration.changed)} {verb}"
    ]
    lines += [f"declared: {line}" for line in migration.declared]
    for title, counts in (("rewritten", migration.rewritten), ("kept", migration.kept)):
        total = sum(counts.values())
        lines.append(f"{title}: {plural(total, 'test')}")
        for (code, why), n in sorted(counts.items()):
            lines.append(f"  {code}: {n} ({why})")
    return "\n".join(lines)
