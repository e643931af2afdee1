"""``vllm-spec-lint codemod``: the one-shot rewrites (the NIXL worker's
check, the fixes of whole rules), with libcst's codemod machinery."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from vllm_spec_lint.core.settings import (
    Config,
)
from vllm_spec_lint.faces.cli_options import (
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDINGS,
)
from vllm_spec_lint.faces.commands.running import (
    diff_text,
    progress_line,
    report_failures,
)


def command_codemod(args: argparse.Namespace, config: Config) -> int:
    if args.name == "nixl-mla-region":
        return _codemod_nixl(args)
    if args.name == "layout-property":
        from vllm_spec_lint.faces.commands.layout_property import (
            command_layout_property,
        )

        return command_layout_property(args, config)
    from vllm_spec_lint.edges.runner import run

    # A one-shot run a person asked for and reviews as a diff: every fix,
    # unsafe ones included (they change behaviour; that is the point here).
    result = run(
        args.paths,
        config,
        fix=True,
        unsafe=True,
        write=not args.diff,
        progress=progress_line if sys.stderr.isatty() else None,
    )
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    changed = [r for r in result.results if r.fixed_source is not None]
    if args.diff:
        sys.stdout.write(
            "".join(diff_text(r.path, r.original, r.fixed_source) for r in changed)
        )
    failures = report_failures(result)
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
            sys.stdout.write(diff_text(str(path), source, fixed))
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
