"""``vllm-spec-lint``: the command-line face, modelled on ruff's.

Exit status: 0 nothing found, 1 findings, 2 usage, configuration or
internal error.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from vllm_spec_lint import __version__
from vllm_spec_lint.config import CODE_RE, Config, ConfigError, load_config

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _codes(value: str) -> tuple[str, ...]:
    codes = tuple(c.strip() for c in value.split(",") if c.strip())
    bad = [c for c in codes if not CODE_RE.match(c)]
    if bad:
        raise argparse.ArgumentTypeError(f"unknown rule code(s): {', '.join(bad)}")
    return codes


def _add_selection_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", type=Path, default=[Path(".")])
    parser.add_argument("--config", type=Path, help="settings file to use")
    parser.add_argument("--select", type=_codes, help="codes to report (e.g. VSL001)")
    parser.add_argument("--extend-select", type=_codes, default=())
    parser.add_argument("--ignore", type=_codes, default=())
    parser.add_argument("--line-length", type=int)
    parser.add_argument(
        "--no-respect-gitignore",
        action="store_true",
        help="also check files that .gitignore excludes",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="vllm-spec-lint",
        description="Find vLLM KV-cache spec checks that leave out a sibling spec.",
    )
    parser.add_argument("--version", action="version", version=__version__)
    commands = parser.add_subparsers(dest="command", required=True)

    check = commands.add_parser("check", help="report findings")
    _add_selection_options(check)
    check.add_argument("--format", choices=("text", "json"), default="text")
    check.add_argument(
        "--exit-zero", action="store_true", help="exit 0 even with findings"
    )
    check.add_argument(
        "--statistics", action="store_true", help="count findings per code"
    )
    check.add_argument("--output-file", type=Path, help="write the report here")

    families = commands.add_parser("families", help="print the families and hierarchy")
    families.add_argument("paths", nargs="*", type=Path, default=[Path(".")])
    families.add_argument("--config", type=Path)
    return parser


def _config_for(args: argparse.Namespace) -> Config:
    config = load_config(args.paths[0] if args.paths else Path("."), args.config)
    changes = {}
    if getattr(args, "select", None):
        changes["select"] = args.select
    if getattr(args, "extend_select", ()):
        changes["select"] = changes.get("select", config.select) + args.extend_select
    if getattr(args, "ignore", ()):
        changes["ignore"] = config.ignore + args.ignore
    if getattr(args, "line_length", None):
        changes["line_length"] = args.line_length
    if getattr(args, "no_respect_gitignore", False):
        changes["respect_gitignore"] = False
    return replace(config, **changes)


def _write(text: str, output_file: Path | None) -> None:
    if output_file is None:
        sys.stdout.write(text)
    else:
        output_file.write_text(text, encoding="utf-8")


def command_check(args: argparse.Namespace, config: Config) -> int:
    from vllm_spec_lint import report
    from vllm_spec_lint.runner import run_check

    run = run_check(args.paths, config)
    for warning in run.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    findings = run.findings
    if args.format == "json":
        text = report.format_json(findings)
    else:
        text = report.format_text(findings, files_checked=len(run.analyses))
    if args.statistics:
        text = report.format_statistics(findings)
    _write(text, args.output_file)
    return EXIT_FINDINGS if findings and not args.exit_zero else EXIT_CLEAN


def command_families(args: argparse.Namespace, config: Config) -> int:
    from vllm_spec_lint.discovery import iter_python_files
    from vllm_spec_lint.families import short_name
    from vllm_spec_lint.runner import load_hierarchy

    warnings: list[str] = []
    files = [f for f in iter_python_files(args.paths, config)]
    hierarchy = load_hierarchy(args.paths, files, config, warnings)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for family in config.families:
        print(f"family {family.name} ({family.module})")
        print(f"  anchor: {short_name(family.anchor)}")
        for companion in family.companions:
            print(f"  companion: {short_name(companion)}")
    print(f"hierarchy (from {', '.join(hierarchy.sources)}):")
    for cls in sorted(hierarchy.bases):
        bases = ", ".join(short_name(b) for b in hierarchy.bases[cls]) or "-"
        print(f"  {short_name(cls)} <- {bases}")
    return EXIT_CLEAN


COMMANDS = {"check": command_check, "families": command_families}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        config = _config_for(args)
        return COMMANDS[args.command](args, config)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return EXIT_ERROR
    except Exception as e:  # an internal error is exit 2, never a silent pass
        import traceback

        traceback.print_exc()
        print(f"error: internal error: {e}", file=sys.stderr)
        return EXIT_ERROR
