"""The command line's options: their declarations, the values they take,
the settings they make, and the exit statuses.

Mutation testing (MUTATION.md) covers all of it but the option declarations
(the ``# pragma: no mutate`` region): help texts and metavars are held by the
CLI tests' written-out help instead.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from vllm_spec_lint import __version__
from vllm_spec_lint.core.settings import (
    Config,
    unknown_selectors,
)
from vllm_spec_lint.edges.config import (
    line_length_problem,
    load_config,
    unknown_selector_reason,
)
from vllm_spec_lint.edges.discovery import exclusion_problem

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports it


class UsageError(Exception):
    """A command line that cannot be run as given (exit 2, one line)."""


class _HelpFormatter(argparse.HelpFormatter):
    """Every option's default in its help, as ruff shows them."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help  # argparse asks only for options with a help text
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
        help="processes analysing at once (default: all cores)",
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="neither read nor write the results cache (.vllm_spec_lint_cache)",
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
        choices=("add-sliding-window-mla", "nixl-mla-region", "layout-property"),
        help="add-sliding-window-mla: every fix over the tree (behaviour-changing "
        "ones too; review the diff); nixl-mla-region: vLLM PR #45831's fix of "
        "the NIXL worker; layout-property: declare uses_mla_layout on the spec "
        "classes and rewrite the class tests that mean it",
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
    codemod.add_argument(
        "--unsafe-fixes",
        action="store_true",
        help="layout-property: also rewrite the tests that leave a companion "
        "out (VSL001's findings; they change behaviour)",
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


def reads_stdin(args: argparse.Namespace) -> bool:
    paths = getattr(args, "paths", None)
    if paths is None:
        return False
    return bool(getattr(args, "stdin_filename", None)) or Path("-") in paths


def config_for(args: argparse.Namespace) -> Config:
    paths = getattr(args, "paths", None) or [Path(".")]
    if reads_stdin(args):
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
