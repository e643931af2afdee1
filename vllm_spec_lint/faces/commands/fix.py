"""``vllm-spec-lint fix``: apply the fixes, report what is left."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from vllm_spec_lint.core.settings import (
    Config,
)
from vllm_spec_lint.faces.cli_options import (
    EXIT_CLEAN,
    EXIT_FINDINGS,
    reads_stdin,
)
from vllm_spec_lint.faces.commands.running import (
    Output,
    diff_text,
    format_findings,
    report_failures,
    run_checks,
)


def command_fix(args: argparse.Namespace, config: Config) -> int:
    from vllm_spec_lint.faces import report

    stdin = sys.stdin.buffer.read() if reads_stdin(args) else None
    # Fixing standard input: the source (or diff) goes to stdout, the report
    # to stderr; as ruff does.
    out = Output(args, report_to_stderr=stdin is not None)
    fixed = run_checks(
        args,
        config,
        out,
        stdin,
        fix=True,
        unsafe=args.unsafe_fixes,
        write=not args.diff and stdin is None,
    )
    changed = [r for r in fixed.results if r.fixed_source is not None]
    count = sum(len(r.fixed) for r in changed)
    failures = report_failures(fixed)
    remaining = _without_failed_fixes(fixed.results)
    if args.diff:
        diff = "".join(diff_text(r.path, r.original, r.fixed_source) for r in changed)
        if not args.silent:
            sys.stdout.write(diff)
        if args.show_fixes:
            shown = report.fixed_codes(changed)
            out.summary(report.format_fixes(shown, applied=False))
        elif diff and stdin is None:
            out.summary("\n")
        out.summary(report.diff_summary(count, remaining, unsafe=args.unsafe_fixes))
        problems = changed or failures
    else:
        if stdin is not None:
            _write_fixed_stdin(fixed.results, stdin)
        out.report(
            format_findings(
                args, remaining, config, unsafe=args.unsafe_fixes, stdin=stdin
            )
        )
        if args.output_format in ("full", "text", "concise"):
            if args.show_fixes:
                shown = report.fixed_codes(changed)
                out.summary(report.format_fixes(shown, applied=True))
            out.summary(report.fix_summary(count, remaining, unsafe=args.unsafe_fixes))
        problems = remaining or failures or (args.exit_non_zero_on_fix and count)
    out.close()
    return EXIT_FINDINGS if problems and not args.exit_zero else EXIT_CLEAN


def _without_failed_fixes(results) -> list:
    """The findings left after a fix run; in a file whose fix failed (not
    written, the formatter failed) without their fix: running fix again is
    not what they need, and the report must not say it is."""
    return [
        replace(f, fix=None) if r.failure else f for r in results for f in r.findings
    ]


def _write_fixed_stdin(results, source: bytes) -> None:
    """The fixed source on stdout; the source as given when nothing was fixed
    (or the file was excluded)."""
    fixed = [r.fixed_source for r in results if r.fixed_source is not None]
    sys.stdout.buffer.write(fixed[0] if fixed else source)
    sys.stdout.flush()
