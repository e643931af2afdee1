"""``vllm-spec-lint check``: report (``--fix``: and fix) findings; also
``--show-files`` and ``--add-noqa``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from vllm_spec_lint.core.settings import (
    PARSE_ERROR_CODE,
    Config,
)
from vllm_spec_lint.faces.cli_options import (
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDINGS,
    UsageError,
    reads_stdin,
)
from vllm_spec_lint.faces.commands.fix import command_fix
from vllm_spec_lint.faces.commands.running import (
    Output,
    format_findings,
    run_checks,
    shows_fixes,
    with_findings,
)


def _show_files(args: argparse.Namespace, config: Config) -> int:
    from vllm_spec_lint.edges.discovery import iter_python_files

    files = iter_python_files(
        args.paths,  # `.` when none was given (_main)
        config,
        force_exclude=args.force_exclude,
        follow_links=args.follow_links,
    )
    for name in sorted(files):
        print(name)
    return EXIT_CLEAN


def command_check(args: argparse.Namespace, config: Config) -> int:
    if args.show_files:
        return _show_files(args, config)
    if args.add_noqa:
        if args.fix or args.diff or reads_stdin(args):
            raise UsageError("--add-noqa cannot be combined with --fix, --diff or -")
        return _add_noqa(args, config)
    if args.fix or args.diff:
        return command_fix(args, config)
    out = Output(args)
    stdin = sys.stdin.buffer.read() if reads_stdin(args) else None
    early = None
    if shows_fixes(args) and stdin is None and not args.write_baseline:
        from vllm_spec_lint.edges.previews import LaidOutEarly

        early = LaidOutEarly(config, args.paths[0])
    try:
        return _check(args, config, out, stdin, early)
    finally:
        if early is not None:
            early.close()


def _check(args, config: Config, out: Output, stdin: bytes | None, early) -> int:
    from vllm_spec_lint.faces import report

    on_result = early.add if early is not None else None
    checked = run_checks(args, config, out, stdin, on_result=on_result)
    findings = checked.findings
    if args.write_baseline or args.baseline:
        from vllm_spec_lint.faces import baseline
    if args.write_baseline:
        count = baseline.write_baseline(args.write_baseline, findings)
        print(
            f"Wrote {report.plural(count, 'entry')} to {args.write_baseline}.",
            file=sys.stderr,
        )
        return EXIT_CLEAN
    if args.baseline:
        try:
            looked_at = (
                [Path(args.stdin_filename or "-")] if stdin is not None else args.paths
            )
            findings, stale = baseline.split_by_baseline(
                findings, args.baseline, looked_at
            )
        except baseline.BaselineError as e:
            print(f"error: {e}", file=sys.stderr)
            return EXIT_ERROR
        if args.show_stale:
            for entry in stale:
                print(
                    f"stale: {entry.path}: {entry.code} {entry.source!r}",
                    file=sys.stderr,
                )
    if args.explain_suppressions:
        out.report(report.format_suppressions(checked.suppressed))
    out.report(
        format_findings(
            args, findings, config, unsafe=args.unsafe_fixes, stdin=stdin, early=early
        )
    )
    if args.output_format in ("full", "text", "concise"):
        if args.show_fixes:
            shown = report.fixable_codes(
                with_findings(checked.results, findings), unsafe=args.unsafe_fixes
            )
            out.summary(report.format_fixes(shown, applied=False))
        out.summary(report.check_summary(findings, unsafe=args.unsafe_fixes))
    out.close()
    return EXIT_FINDINGS if findings and not args.exit_zero else EXIT_CLEAN


def _add_noqa(args: argparse.Namespace, config: Config) -> int:
    """ruff's ``--add-noqa``: a ``# noqa`` for every finding reported, merged
    into the line's own noqa comment; files written whole or not at all."""
    from vllm_spec_lint.core.noqa import add_noqa
    from vllm_spec_lint.edges.files import (
        WriteRefused,
        decode_source,
        read_source,
        write_atomically,
    )
    from vllm_spec_lint.faces import report

    out = Output(args)
    checked = run_checks(args, config, out)
    by_file: dict[str, dict[int, set[str]]] = {}
    for finding in checked.findings:
        if finding.code != PARSE_ERROR_CODE:  # always reported, never noqa'd
            rows = by_file.setdefault(finding.path, {})
            rows.setdefault(finding.location[0], set()).add(finding.code)
    added, status = 0, EXIT_CLEAN
    for path, rows in by_file.items():
        try:
            source = read_source(path)
            text, encoding = decode_source(source)
            new, count, skipped = add_noqa(text, rows)
            if count:
                write_atomically(Path(path), source, new.encode(encoding))
        except (OSError, WriteRefused, SyntaxError, UnicodeError) as e:
            print(f"error: {path}: no noqa directive added: {e}", file=sys.stderr)
            status = EXIT_ERROR
            continue
        added += count
        for row in skipped:
            out.warning(
                f"{path}:{row}: no noqa directive added: the line ends inside a "
                "string or continues with a backslash"
            )
    print(f"Added {report.plural(added, 'noqa directive')}.", file=sys.stderr)
    return status
