"""What ``check`` and ``fix`` share: running the checks over the paths (or
standard input), where the report goes, and the report itself."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from vllm_spec_lint.core.settings import (
    Config,
)


class Output:
    """Where a command's report goes: the report (findings) to stdout or
    ``--output-file``, the summary after it unless ``--quiet``; nothing to
    stdout with ``--silent``. Errors always go to stderr."""

    def __init__(self, args: argparse.Namespace, *, report_to_stderr: bool = False):
        self.quiet = args.quiet or args.silent
        self.silent = args.silent
        self.file = getattr(args, "output_file", None)
        self.to_stderr = report_to_stderr
        self.parts: list[str] = []

    def report(self, text: str) -> None:
        if not self.silent:
            self.parts.append(text)

    def summary(self, text: str) -> None:
        if not self.quiet:
            self.parts.append(text)

    def warning(self, text: str) -> None:
        if not self.quiet:
            print(f"warning: {text}", file=sys.stderr)

    def close(self) -> None:
        text = "".join(self.parts)
        if self.file is not None:
            from vllm_spec_lint.edges.files import write_report

            write_report(self.file, text)
        elif self.to_stderr:
            sys.stderr.write(text)
        else:
            sys.stdout.write(text)


def diff_text(path: str, original: bytes, fixed: bytes) -> str:
    import difflib

    from vllm_spec_lint.edges.files import decode_source

    before, _ = decode_source(original)
    after, _ = decode_source(fixed)
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=path,
            tofile=path,
        )
    )


def report_failures(run) -> int:
    failures = [r for r in run.results if r.failure]
    for result in failures:
        print(f"error: {result.path}: {result.failure}", file=sys.stderr)
    return len(failures)


def run_checks(
    args: argparse.Namespace,
    config: Config,
    out: Output,
    stdin: bytes | None = None,
    **mode,
):
    """The runner with the command line's selection options, over the paths
    or over ``stdin``'s bytes; prints warnings."""
    from vllm_spec_lint.edges import runner

    if stdin is not None:
        result = runner.run_source(
            args.stdin_filename or "-",
            stdin,
            config,
            fix=mode.get("fix", False),
            unsafe=mode.get("unsafe", False),
            force_exclude=args.force_exclude,
        )
    else:
        result = runner.run(
            args.paths,
            config,
            force_exclude=args.force_exclude,
            jobs=args.jobs,
            use_cache=not args.no_cache,
            follow_links=args.follow_links,
            **mode,
        )
    for warning in result.warnings:
        out.warning(warning)
    if not result.results and stdin is None:
        out.warning("No Python files found under the given path(s)")
    return result


def shows_fixes(args: argparse.Namespace) -> bool:
    """Whether ``check``'s report shows fixes (the full format's diffs,
    JSON's and SARIF's edits): then as fix lays them out, which runs the
    formatter."""
    return not args.statistics and args.output_format not in ("github", "concise")


def format_findings(
    args: argparse.Namespace,
    findings,
    config: Config,
    *,
    unsafe: bool,
    stdin: bytes | None = None,
    early=None,
) -> str:
    """The report; ``early``: a LaidOutEarly given the run's results."""
    from vllm_spec_lint.faces import report

    if getattr(args, "statistics", False):
        if args.output_format == "json":
            return report.format_statistics_json(findings, unsafe=unsafe)
        return report.format_statistics(findings, unsafe=unsafe)
    if args.output_format == "github":
        return report.format_github(findings)
    if args.output_format == "concise":
        return report.format_concise(findings, unsafe=unsafe)
    # The formats that show fixes show them as fix lays them out.
    from vllm_spec_lint.edges.cache import PreviewCache
    from vllm_spec_lint.edges.previews import laid_out

    sources = sources_of(findings, stdin)
    start = Path(args.stdin_filename or ".") if stdin is not None else args.paths[0]
    cache = None if getattr(args, "no_cache", True) else PreviewCache(config.root)
    findings = laid_out(findings, sources, config, start, cache, early)
    if args.output_format == "json":
        return report.format_json(findings)
    if args.output_format == "sarif":
        return report.format_sarif(findings)
    # full (``text`` is its old name, as in ruff)
    return report.format_full(findings, sources, unsafe=unsafe)


def sources_of(findings, stdin: bytes | None) -> dict[str, str]:
    """The text of each file with findings, for the code frames; a file
    that cannot be read again is shown without one."""
    from vllm_spec_lint.edges.files import decode_source, read_source

    sources: dict[str, str] = {}
    for path in dict.fromkeys(f.path for f in findings):
        try:
            data = stdin if stdin is not None else read_source(path)
            sources[path] = decode_source(data)[0]
        except (OSError, SyntaxError, UnicodeDecodeError):
            continue
    return sources


def progress_line(done: int, total: int) -> None:
    width = 30
    filled = width * done // max(total, 1)
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} files")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def with_findings(results, findings):
    """``results`` holding only ``findings`` (what a baseline left)."""
    kept = {id(f) for f in findings}
    return [
        replace(r, findings=[f for f in r.findings if id(f) in kept]) for r in results
    ]
