"""``vllm-spec-lint``: the command-line face, modelled on ruff's.

Mutation testing (MUTATION.md) covers all of it but the option declarations
(the ``# pragma: no mutate`` region): help texts and metavars are held by the
CLI tests' written-out help instead.

Exit status: 0 nothing found, 1 findings, 2 usage, configuration or
internal error, 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from vllm_spec_lint import __version__
from vllm_spec_lint.core.settings import (
    PARSE_ERROR_CODE,
    Config,
    ConfigError,
    unknown_selectors,
)
from vllm_spec_lint.edges.config import (
    line_length_problem,
    load_config,
    unknown_selector_reason,
)
from vllm_spec_lint.edges.discovery import exclusion_problem
from vllm_spec_lint.edges.files import ReportNotWritten
from vllm_spec_lint.edges.hierarchy_sources import HierarchyError

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports it


class UsageError(Exception):
    """A command line that cannot be run as given (exit 2, one line)."""


class _HelpFormatter(argparse.HelpFormatter):
    """Every option's default in its help, as ruff shows them."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        shown = default not in (None, False, True, [], (), argparse.SUPPRESS)
        if shown and "[default:" not in text and not action.option_strings == []:
            text += " [default: %(default)s]"
        return text


class _Parser(argparse.ArgumentParser):
    """argparse with errors in one line, as every other error here."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        raise UsageError(f"{message} (see '{self.prog} --help')")


def _codes(value: str) -> tuple[str, ...]:
    codes = tuple(c.strip() for c in value.split(",") if c.strip())
    bad = unknown_selectors(codes)
    if bad:
        raise argparse.ArgumentTypeError(unknown_selector_reason(bad))
    return codes


def _patterns(value: str) -> tuple[str, ...]:
    patterns = tuple(p.strip() for p in value.split(",") if p.strip())
    for pattern in patterns:
        problem = exclusion_problem(pattern)
        if problem is not None:
            raise argparse.ArgumentTypeError(f"{pattern!r} is not a glob: {problem}")
    return patterns


def _line_length(value: str) -> int:
    number = _integer(value)
    problem = line_length_problem(number)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"{value!r}: {problem}")
    return number


def _jobs(value: str) -> int:
    number = _integer(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"{value!r}: expected 1 or more")
    return number


def _integer(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r}: expected an integer") from None


# The options' declarations: mutation testing leaves them alone (help texts).
# pragma: no mutate start
def _add_selection_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        type=Path,
        default=[],
        help="files or folders to check; - is stdin [default: .]",
    )
    parser.add_argument(
        "--config",
        type=Path,
        help="settings file to use [default: the closest pyproject.toml, "
        "setup.cfg or tox.ini with a vllm-spec-lint section]",
    )
    parser.add_argument(
        "--select",
        type=_codes,
        metavar="CODES",
        help="rule codes or prefixes to report, comma-separated [default: VSL]",
    )
    parser.add_argument(
        "--extend-select",
        type=_codes,
        default=(),
        metavar="CODES",
        help="codes to report besides the selected ones",
    )
    parser.add_argument(
        "--ignore",
        type=_codes,
        default=(),
        metavar="CODES",
        help="codes not to report (VSL900 is always reported)",
    )
    parser.add_argument(
        "--exclude",
        type=_patterns,
        action="append",
        metavar="PATTERNS",
        help="gitignore-style patterns to leave out, instead of the configured ones",
    )
    parser.add_argument(
        "--extend-exclude",
        type=_patterns,
        action="append",
        default=[],
        metavar="PATTERNS",
        help="patterns to leave out, besides the configured ones",
    )
    parser.add_argument(
        "--line-length",
        type=_line_length,
        help="the line length fixes are laid out for [default: the project "
        "formatter's own]",
    )
    parser.add_argument(
        "--no-respect-gitignore",
        action="store_true",
        help="also check files that .gitignore excludes",
    )
    parser.add_argument(
        "--jobs",
        "-j",
        type=_jobs,
        help="worker processes for parsing (default: all cores)",
    )
    parser.add_argument(
        "--no-cache", action="store_true", help="neither read nor write the cache"
    )
    parser.add_argument(
        "--follow-links",
        action="store_true",
        help="follow links that lead outside the given paths",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="also report checks that narrowing or deliberate handling suppress",
    )
    parser.add_argument(
        "--discover-families",
        action="store_true",
        help="also check the structural twins discovered among the spec classes",
    )
    parser.add_argument(
        "--vllm-source",
        type=Path,
        metavar="PATH",
        help="read vLLM's spec classes from this checkout or site-packages folder",
    )
    parser.add_argument(
        "--force-exclude",
        action="store_true",
        help="apply exclusions to files named on the command line too (pre-commit)",
    )
    parser.add_argument(
        "--stdin-filename",
        metavar="NAME",
        help="read the source from standard input and report it as NAME",
    )
    parser.add_argument(
        "--show-files",
        action="store_true",
        help="print the files that would be checked, and nothing else",
    )
    parser.add_argument(
        "--show-fixes",
        action="store_true",
        help="list the fixes applied (fix) or that --fix would apply (check)",
    )
    parser.add_argument(
        "--output-format",
        "--format",  # our earlier name, kept as an alias
        dest="output_format",
        choices=("full", "concise", "json", "github", "sarif", "text"),
        default="full",
        help="report format (--format is an alias; text is full's old name)",
    )
    loudness = parser.add_mutually_exclusive_group()
    loudness.add_argument(
        "-q", "--quiet", action="store_true", help="print findings only, no summary"
    )
    loudness.add_argument(
        "-s",
        "--silent",
        action="store_true",
        help="print nothing on stdout; the exit status tells",
    )
    parser.add_argument(
        "--exit-zero", action="store_true", help="exit 0 even with findings"
    )


def _add_fix_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--diff", action="store_true", help="print the fixes as a diff; write nothing"
    )
    parser.add_argument(
        "--fix-formatter",
        choices=("auto", "ruff", "black", "yapf", "none"),
        help="what lays out fixed statements (default: auto, the project's own)",
    )
    parser.add_argument(
        "--unsafe-fixes",
        action="store_true",
        help="also apply unsafe fixes",
    )
    parser.add_argument(
        "--no-unsafe-fixes",
        dest="unsafe_fixes",
        action="store_false",
        help="apply safe fixes only (the default; overrides --unsafe-fixes)",
    )
    parser.add_argument(
        "--extend-safe-fixes",
        type=_codes,
        default=(),
        metavar="CODES",
        help="treat these rules' fixes as safe (a team that reviews every fix)",
    )
    parser.add_argument(
        "--extend-unsafe-fixes",
        type=_codes,
        default=(),
        metavar="CODES",
        help="treat these rules' fixes as unsafe",
    )
    parser.add_argument(
        "--exit-non-zero-on-fix",
        action="store_true",
        help="exit 1 when a fix was applied, even if nothing remains",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="vllm-spec-lint",
        description="Find vLLM KV-cache spec checks that leave out a sibling spec.",
    )
    parser.add_argument(
        "--version", "-V", action="version", version=f"vllm-spec-lint {__version__}"
    )
    commands = parser.add_subparsers(dest="command", required=True)

    check = commands.add_parser("check", help="report findings")
    _add_selection_options(check)
    _add_fix_options(check)
    check.add_argument(
        "--baseline", type=Path, help="report only findings not in this baseline"
    )
    check.add_argument(
        "--write-baseline", type=Path, help="record the current findings as a baseline"
    )
    check.add_argument(
        "--explain-suppressions",
        action="store_true",
        help="print each site the default mode does not report, and why",
    )
    check.add_argument(
        "--show-stale",
        action="store_true",
        help="with --baseline: list entries that no longer match",
    )
    check.add_argument(
        "--statistics", action="store_true", help="count findings per code"
    )
    check.add_argument("--output-file", type=Path, help="write the report here")
    check.add_argument(
        "--fix", action="store_true", help="apply fixes (same as the fix command)"
    )
    check.add_argument(
        "--no-fix", dest="fix", action="store_false", help="do not apply fixes"
    )
    check.add_argument(
        "--add-noqa",
        action="store_true",
        help="add '# noqa: CODE' to every reported line (adopting the tool on a "
        "large tree)",
    )

    fix = commands.add_parser("fix", help="apply fixes in place")
    _add_selection_options(fix)
    _add_fix_options(fix)

    codemod = commands.add_parser("codemod", help="run a codemod over a tree")
    codemod.add_argument(
        "name",
        choices=("add-sliding-window-mla", "nixl-mla-region"),
        help="add-sliding-window-mla: every fix over the tree (behaviour-changing "
        "ones too; review the diff); nixl-mla-region: vLLM PR #45831's fix of "
        "the NIXL worker",
    )
    codemod.add_argument(
        "paths",
        nargs="*",
        type=Path,
        default=[],
        help="files or folders (for nixl-mla-region: a checkout, any folder on "
        "the way to the worker, or the worker) [default: .]",
    )
    codemod.add_argument("--config", type=Path, help="settings file to use")
    codemod.add_argument(
        "--diff", action="store_true", help="print a diff; write nothing"
    )

    rules = commands.add_parser("rules", help="list the rules")
    rules.add_argument(
        "--output-format",
        "--format",
        dest="output_format",
        choices=("text", "markdown"),
        default="text",
        help="list format (--format is an alias)",
    )
    explain = commands.add_parser("explain", help="a rule's documentation")
    explain.add_argument("code", help="a rule's code (VSL001) or name")

    families = commands.add_parser("families", help="print the families and hierarchy")
    families.add_argument(
        "paths",
        nargs="*",
        type=Path,
        default=[],
        help="the tree whose hierarchy is read [default: .]",
    )
    families.add_argument("--config", type=Path, help="settings file to use")
    families.add_argument(
        "--vllm-source",
        type=Path,
        metavar="PATH",
        help="read vLLM's spec classes from this checkout or site-packages folder",
    )
    families.add_argument(
        "--discover",
        action="store_true",
        help="propose structural twins among the spec classes",
    )
    families.add_argument(
        "--discover-families",
        action="store_true",
        help="list the discovered twins that join the families",
    )
    families.add_argument(
        "--output-format",
        "--format",
        dest="output_format",
        choices=("text", "json", "mermaid", "dot"),
        default="text",
        help="text, json, or the hierarchy as a mermaid or graphviz dot graph",
    )
    server = commands.add_parser(
        "server", help="run the language server (editors; needs the lsp extra)"
    )
    server.add_argument(
        "--tcp",
        type=int,
        metavar="PORT",
        help="listen on this TCP port on 127.0.0.1 instead of stdio",
    )
    return parser


# pragma: no mutate end


def _reads_stdin(args: argparse.Namespace) -> bool:
    paths = getattr(args, "paths", None)
    if paths is None:
        return False
    return bool(getattr(args, "stdin_filename", None)) or Path("-") in paths


def _config_for(args: argparse.Namespace) -> Config:
    paths = getattr(args, "paths", None) or [Path(".")]
    if _reads_stdin(args):
        # Settings as for a file at NAME.
        paths = [Path(args.stdin_filename or ".")]
    config = load_config(paths[0], getattr(args, "config", None))
    changes = {}
    if getattr(args, "select", None):
        changes["select"] = args.select
    if getattr(args, "extend_select", ()):
        changes["select"] = changes.get("select", config.select) + args.extend_select
    if getattr(args, "ignore", ()):
        changes["ignore"] = config.ignore + args.ignore
    if getattr(args, "exclude", None) is not None:
        changes["exclude"] = ()
        changes["command_line_exclude"] = sum(args.exclude, ())
    if getattr(args, "extend_exclude", ()):
        changes["command_line_exclude"] = changes.get("command_line_exclude", ()) + sum(
            args.extend_exclude, ()
        )
    for option in ("extend_safe_fixes", "extend_unsafe_fixes"):
        if getattr(args, option, ()):
            changes[option] = getattr(config, option) + getattr(args, option)
    if getattr(args, "line_length", None):
        changes["line_length"] = args.line_length
    if getattr(args, "no_respect_gitignore", False):
        changes["respect_gitignore"] = False
    if getattr(args, "strict", False):
        changes["strict"] = True
    if getattr(args, "explain_suppressions", False):
        changes["explain_suppressed"] = True
    if getattr(args, "discover_families", False):
        changes["discover_families"] = True
    if getattr(args, "vllm_source", None) is not None:
        changes["vllm_source"] = args.vllm_source.absolute()
    if getattr(args, "fix_formatter", None):
        changes["fix_formatter"] = args.fix_formatter
    return replace(config, **changes)


class _Output:
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


def _diff(path: str, original: bytes, fixed: bytes) -> str:
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


def _report_failures(run) -> int:
    failures = [r for r in run.results if r.failure]
    for result in failures:
        print(f"error: {result.path}: {result.failure}", file=sys.stderr)
    return len(failures)


def _run(
    args: argparse.Namespace,
    config: Config,
    out: _Output,
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


def _format_findings(
    args: argparse.Namespace,
    findings,
    config: Config,
    *,
    unsafe: bool,
    stdin: bytes | None = None,
) -> str:
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

    sources = _sources_of(findings, stdin)
    start = Path(args.stdin_filename or ".") if stdin is not None else args.paths[0]
    cache = None if getattr(args, "no_cache", True) else PreviewCache(config.root)
    findings = laid_out(findings, sources, config, start, cache)
    if args.output_format == "json":
        return report.format_json(findings)
    if args.output_format == "sarif":
        return report.format_sarif(findings)
    # full (``text`` is its old name, as in ruff)
    return report.format_full(findings, sources, unsafe=unsafe)


def _sources_of(findings, stdin: bytes | None) -> dict[str, str]:
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
        if args.fix or args.diff or _reads_stdin(args):
            raise UsageError("--add-noqa cannot be combined with --fix, --diff or -")
        return _add_noqa(args, config)
    if args.fix or args.diff:
        return command_fix(args, config)
    from vllm_spec_lint.faces import report

    out = _Output(args)
    stdin = sys.stdin.buffer.read() if _reads_stdin(args) else None
    checked = _run(args, config, out, stdin)
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
        _format_findings(args, findings, config, unsafe=args.unsafe_fixes, stdin=stdin)
    )
    if args.output_format in ("full", "text", "concise"):
        if args.show_fixes:
            shown = report.fixable_codes(
                _with_findings(checked.results, findings), unsafe=args.unsafe_fixes
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

    out = _Output(args)
    checked = _run(args, config, out)
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


def _with_findings(results, findings):
    """``results`` holding only ``findings`` (what a baseline left)."""
    kept = {id(f) for f in findings}
    return [
        replace(r, findings=[f for f in r.findings if id(f) in kept]) for r in results
    ]


def command_fix(args: argparse.Namespace, config: Config) -> int:
    from vllm_spec_lint.faces import report

    stdin = sys.stdin.buffer.read() if _reads_stdin(args) else None
    # Fixing standard input: the source (or diff) goes to stdout, the report
    # to stderr; as ruff does.
    out = _Output(args, report_to_stderr=stdin is not None)
    fixed = _run(
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
    failures = _report_failures(fixed)
    remaining = _without_failed_fixes(fixed.results)
    if args.diff:
        diff = "".join(_diff(r.path, r.original, r.fixed_source) for r in changed)
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
            _format_findings(
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


def _progress(done: int, total: int) -> None:
    width = 30
    filled = width * done // max(total, 1)
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} files")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def command_codemod(args: argparse.Namespace, config: Config) -> int:
    if args.name == "nixl-mla-region":
        return _codemod_nixl(args)
    from vllm_spec_lint.edges.runner import run

    # A one-shot run a person asked for and reviews as a diff: every fix,
    # unsafe ones included (they change behaviour; that is the point here).
    result = run(
        args.paths,
        config,
        fix=True,
        unsafe=True,
        write=not args.diff,
        progress=_progress if sys.stderr.isatty() else None,
    )
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    changed = [r for r in result.results if r.fixed_source is not None]
    if args.diff:
        sys.stdout.write(
            "".join(_diff(r.path, r.original, r.fixed_source) for r in changed)
        )
    failures = _report_failures(result)
    print(_codemod_summary(result, changed, failures, diff=args.diff), file=sys.stderr)
    if failures:
        return EXIT_ERROR
    # As `check --diff`: 1 when there is something the run would change.
    return EXIT_FINDINGS if args.diff and changed else EXIT_CLEAN


def _codemod_summary(result, changed, failures: int, *, diff: bool) -> str:
    """Files checked and changed, and the fixes per rule (``would`` with --diff)."""
    from collections import Counter

    from vllm_spec_lint.faces.report import plural

    per_rule = Counter(code for r in changed for code in r.fixed)
    fixed = sum(per_rule.values())
    verb = "would change" if diff else "changed"
    fixes = "would fix" if diff else "fixed"
    text = (
        f"{plural(len(result.results), 'file')} checked, {len(changed)} {verb}, "
        f"{plural(fixed, 'finding')} {fixes}, {plural(failures, 'failure')}"
    )
    if per_rule:
        text += " (" + ", ".join(f"{c}: {n}" for c, n in sorted(per_rule.items())) + ")"
    return text


def _codemod_nixl(args: argparse.Namespace) -> int:
    from vllm_spec_lint.edges.files import (
        WriteRefused,
        decode_source,
        read_source,
        write_atomically,
    )
    from vllm_spec_lint.faces.codemods import nixl_mla_region

    status = EXIT_CLEAN
    for root in args.paths:
        path = _nixl_worker_under(root)
        if root.is_dir() and not path.is_file():
            print(
                f"error: {root}: no NIXL worker there (looked for {path})",
                file=sys.stderr,
            )
            status = EXIT_ERROR
            continue
        try:
            source = read_source(path)
            text, encoding = decode_source(source)
        except OSError as e:
            reason = e.strerror or str(e)
            print(
                f"error: {path}: cannot read the NIXL worker: {reason}", file=sys.stderr
            )
            status = EXIT_ERROR
            continue
        except (SyntaxError, UnicodeDecodeError) as e:
            print(f"error: {path}: cannot read the NIXL worker: {e}", file=sys.stderr)
            status = EXIT_ERROR
            continue
        outcome = nixl_mla_region(text, str(path))
        if outcome.status == "not found":
            print(f"error: {path}: {outcome.detail}", file=sys.stderr)
            status = EXIT_ERROR
        elif outcome.status == "already applied":
            print(f"{path}: already applied", file=sys.stderr)
        elif args.diff:
            fixed = outcome.text.encode(encoding)
            sys.stdout.write(_diff(str(path), source, fixed))
            status = max(status, EXIT_FINDINGS)
        else:
            try:
                write_atomically(path, source, outcome.text.encode(encoding))
            except (WriteRefused, OSError) as e:
                print(f"error: {path}: not written: {e}", file=sys.stderr)
                status = EXIT_ERROR
                continue
            print(f"{path}: applied", file=sys.stderr)
    return status


def _nixl_worker_under(root: Path) -> Path:
    """The NIXL worker for a path: the file itself, or from a checkout or any
    folder on the way to it (``vllm/``, ``.../kv_connector/v1/nixl/``): the
    longest overlap of the folder's end with the worker's path that exists."""
    from vllm_spec_lint.faces.codemods import NIXL_WORKER

    if not root.is_dir():
        return root
    parts = Path(NIXL_WORKER).parts
    folder = root.absolute().parts
    for overlap in range(len(parts) - 1, 0, -1):
        if folder[-overlap:] == parts[:overlap]:
            candidate = root.joinpath(*parts[overlap:])
            if candidate.is_file():
                return candidate
    return root / NIXL_WORKER


def command_rules(args: argparse.Namespace, config: Config) -> int:
    from vllm_spec_lint.faces.rule_docs import markdown_table, rule_docs

    if args.output_format == "markdown":
        sys.stdout.write(markdown_table())
    else:
        for doc in rule_docs():
            print(f"{doc.code}  {doc.name:<36} {doc.summary}")
    return EXIT_CLEAN


def command_explain(args: argparse.Namespace, config: Config) -> int:
    from vllm_spec_lint.faces.rule_docs import rule_doc

    doc = rule_doc(args.code)
    if doc is None:
        print(f"error: unknown rule code or name: {args.code}", file=sys.stderr)
        return EXIT_ERROR
    sys.stdout.write(doc.explain())
    return EXIT_CLEAN


def command_families(args: argparse.Namespace, config: Config) -> int:
    import json

    from vllm_spec_lint.edges.discovery import iter_python_files
    from vllm_spec_lint.edges.hierarchy_sources import load_hierarchy
    from vllm_spec_lint.edges.spec_classes import (
        discover,
        spec_hierarchy,
        with_spec_classes,
    )
    from vllm_spec_lint.model.hierarchy import short_name

    warnings: list[str] = []
    files = [f for f in iter_python_files(args.paths, config)]
    hierarchy = load_hierarchy(args.paths, files, config, warnings)
    twins = []
    configured = config.families
    if args.discover:
        twins, root = discover(files, config, hierarchy, warnings)
        # The stand-ins' families are shown beside the twins.
        config, _ = with_spec_classes(
            replace(config, discover_families=False), files, hierarchy, warnings
        )
    else:
        config, hierarchy = with_spec_classes(config, files, hierarchy, warnings)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.output_format in ("mermaid", "dot"):
        from vllm_spec_lint.faces import hierarchy_graph

        draw = getattr(hierarchy_graph, args.output_format)
        classes = spec_hierarchy(config, hierarchy)
        sys.stdout.write(draw(hierarchy, classes, config.families, twins))
        return EXIT_CLEAN
    if args.discover:
        stand_ins = [f for f in config.families if f.derived_from]
        if args.output_format == "json":
            print(json.dumps([t.to_json() for t in twins], indent=2))
        else:
            print(_twins_table(twins, root, hierarchy, config.families))
            if stand_ins:
                print()
                print(_stand_ins_text(stand_ins))
        return EXIT_CLEAN
    if args.output_format == "json":
        families = [
            {
                "name": f.name,
                "module": f.module,
                "anchor": f.anchor,
                "companions": list(f.companions),
                "discovered": bool(f.evidence),
                "stand_in": f.stand_in or None,
                "quiet": f.quiet_reason or None,
            }
            for f in config.families
        ]
        bases = {
            cls: list(hierarchy.bases[cls]) for cls in spec_hierarchy(config, hierarchy)
        }
        report = {
            "families": families,
            "hierarchy": bases,
            "source": hierarchy.described_sources(),
        }
        print(json.dumps(report, indent=2))
        return EXIT_CLEAN
    for family in config.families:
        if family.derived_from:
            continue
        kind = "discovered" if family not in configured else "family"
        print(f"{kind} {family.name} ({family.module})")
        print(f"  anchor: {short_name(family.anchor)}")
        for companion in family.companions:
            print(f"  companion: {short_name(companion)}")
        if family.evidence:
            print(f"  evidence: {family.evidence}")
    stand_ins = [f for f in config.families if f.derived_from]
    if stand_ins:
        print(_stand_ins_text(stand_ins))
    print(f"hierarchy (from {hierarchy.described_sources()}):")
    for cls in spec_hierarchy(config, hierarchy):
        bases = ", ".join(short_name(b) for b in hierarchy.bases[cls]) or "-"
        print(f"  {short_name(cls)} <- {bases}")
    return EXIT_CLEAN


def _stand_ins_text(families) -> str:
    """The stand-ins' families, and the configuration that checks them when
    files are checked a few at a time (pre-commit, flake8, an editor): those
    see only the classes in the files they are given."""
    import json

    from vllm_spec_lint.model.hierarchy import short_name

    lines = []
    for family in families:
        kind = "subclass" if family.quiet_reason else "stand-in"
        lines.append(f"{kind} {family.name} ({family.module})")
        lines.append(f"  anchor: {short_name(family.anchor)}")
        for companion in family.companions:
            module = companion.rpartition(".")[0]
            where = "" if module == family.module else f" ({module})"
            lines.append(f"  companion: {short_name(companion)}{where}")
        lines.append(f"  from: {family.stand_in}")
        if family.quiet_reason:
            lines.append("  reported with --strict only")
    if all(f.quiet_reason for f in families):
        return "\n".join(lines)
    lines.append(
        "To check the stand-ins when files are checked a few at a time "
        "(pre-commit, flake8, an editor), add to [tool.vllm-spec-lint]:"
    )
    lines.append("extend-families = [")
    for family in families:
        members = [
            m if i and m.rpartition(".")[0] != family.module else short_name(m)
            for i, m in enumerate((family.anchor, *family.companions))
        ]
        entry = (
            f'{{ name = "{family.name}", module = '
            f'"{family.module}", members = {json.dumps(members)} }},'
        )
        lines.append(f"  # {entry}" if family.quiet_reason else f"  {entry}")
    lines.append("]")
    return "\n".join(lines)


def _twins_table(twins, root, hierarchy, families) -> str:
    """Discovered twins as a table, each with its configuration entry."""
    from vllm_spec_lint.model.hierarchy import short_name
    from vllm_spec_lint.model.twins import THRESHOLD

    lines = [
        f"structural twins among the subclasses of {root or '(no root class)'} "
        f"(hierarchy from {hierarchy.described_sources()}; "
        f"proposed at a score of {THRESHOLD:g} or more):"
    ]
    if not twins:
        return "\n".join(lines + ["  none"])
    paired = {(f.anchor, c) for f in families for c in f.companions}
    lines.append("| anchor | companion | score | configured | evidence |")
    lines.append("|---|---|---|---|---|")
    for twin in twins:
        evidence = "; ".join(twin.evidence)
        configured = "yes" if (twin.anchor, twin.companion) in paired else "no"
        lines.append(
            f"| {short_name(twin.anchor)} | {short_name(twin.companion)} "
            f"| {twin.score:g} | {configured} | {evidence} |"
        )
    lines.append("")
    lines.append("To check them as families, add to [tool.vllm-spec-lint]:")
    lines.append("extend-families = [")
    for twin in twins:
        module, _, anchor = twin.anchor.rpartition(".")
        companion_module, _, companion = twin.companion.rpartition(".")
        if module != companion_module:
            lines.append(f"  # {twin.anchor} / {twin.companion}: not one module")
            continue
        if (twin.anchor, twin.companion) in paired:
            lines.append(f"  # {anchor} / {companion}: configured already")
            continue
        name = f"{anchor}-{companion}".lower()
        lines.append(
            f'  {{ name = "{name}", module = "{module}", '
            f'members = ["{anchor}", "{companion}"] }},'
        )
    lines.append("]")
    return "\n".join(lines)


def command_server(args: argparse.Namespace, config: Config) -> int:
    try:
        from vllm_spec_lint.faces.lsp import serve
    except ImportError as e:
        raise UsageError(
            f"the language server needs pygls ({e}): pip install 'vllm-spec-lint[lsp]'"
        ) from None
    serve(args.tcp)
    return EXIT_CLEAN


COMMANDS = {
    "check": command_check,
    "fix": command_fix,
    "codemod": command_codemod,
    "rules": command_rules,
    "explain": command_explain,
    "families": command_families,
    "server": command_server,
}


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(sys.argv[1:] if argv is None else argv)
    except (UsageError, ConfigError, HierarchyError, ReportNotWritten) as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt as e:
        print(f"error: {_interrupted(e)}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `... | head`: the reader has gone; say nothing
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_ERROR
    except Exception as e:  # an internal error is exit 2, never a silent pass
        print(f"error: internal error: {_crash_report(e)}", file=sys.stderr)
        return EXIT_ERROR


def _main(argv: list[str]) -> int:
    parser = build_parser()
    if not argv:  # as ruff: the help, and the status of a usage error
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    args, extra = parser.parse_known_args(argv)
    # argparse cannot take positionals after an option that follows another
    # positional (`codemod NAME --diff PATH`): such leftovers are more paths.
    options = [e for e in extra if e.startswith("-") and e != "-"]
    if extra and (options or not hasattr(args, "paths")):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if extra:
        args.paths = [*args.paths, *(Path(e) for e in extra)]
    if Path("-") in getattr(args, "paths", ()) and not hasattr(args, "stdin_filename"):
        raise UsageError(
            f"{args.command} does not read standard input ('-'): name files or folders"
        )
    if getattr(args, "paths", None) == [] and not _reads_stdin(args):
        args.paths = [Path(".")]  # no path means `.`, exactly
    if args.command == "server":  # settings are read per document
        return command_server(args, Config())
    config = _config_for(args)
    _warn_about_parse_error_selection(config)
    return COMMANDS[args.command](args, config)


def _warn_about_parse_error_selection(config: Config) -> None:
    """VSL900 is always reported, as ruff reports syntax errors: ignoring it
    by name changes nothing, and says so."""
    ignored = config.ignore + tuple(
        c for _, codes in config.per_file_ignores for c in codes
    )
    if any(len(c) > 3 and PARSE_ERROR_CODE.startswith(c) for c in ignored):
        print(
            f"warning: {PARSE_ERROR_CODE} (files that cannot be read or parsed) "
            "is always reported; ignoring it has no effect",
            file=sys.stderr,
        )


def _interrupted(interrupt: KeyboardInterrupt) -> str:
    """What a Ctrl-C left: nothing, or whole files written before it."""
    from vllm_spec_lint.edges.runner import RunInterrupted
    from vllm_spec_lint.faces.report import plural

    text = "interrupted"
    if isinstance(interrupt, RunInterrupted) and interrupt.written:
        text += (
            f"; {plural(interrupt.written, 'file')} already fixed and written, "
            "no other file changed"
        )
    return text


def _crash_report(error: Exception) -> str:
    """One line for the user; the traceback goes to a file it names."""
    import tempfile
    import traceback

    text = "".join(traceback.format_exception(error))
    try:
        fd, path = tempfile.mkstemp(prefix="vllm-spec-lint-crash-", suffix=".txt")
        with open(fd, "w", encoding="utf-8") as f:
            f.write(f"vllm-spec-lint {__version__}\n{' '.join(sys.argv)}\n\n{text}")
    except OSError:
        return f"{type(error).__name__}: {error} (please report it)"
    return f"{type(error).__name__}: {error} (please report it with {path})"
