"""``vllm-spec-lint``: the command-line face, modelled on ruff's. The
options are declared in ``cli_options.py``; each command lives in a module
of its own under ``commands/``; this module dispatches and turns errors into
exit statuses and one line each.

Exit status: 0 nothing found, 1 findings, 2 usage, configuration or
internal error, 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import NoReturn

from vllm_spec_lint import __version__
from vllm_spec_lint.core.settings import (
    PARSE_ERROR_CODE,
    Config,
    ConfigError,
)
from vllm_spec_lint.edges.files import ReportNotWritten
from vllm_spec_lint.edges.hierarchy_sources import HierarchyError
from vllm_spec_lint.faces.cli_options import (
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    UsageError,
    build_parser,
    config_for,
    reads_stdin,
)
from vllm_spec_lint.faces.commands.check import command_check
from vllm_spec_lint.faces.commands.codemod import command_codemod
from vllm_spec_lint.faces.commands.families import command_families
from vllm_spec_lint.faces.commands.fix import command_fix
from vllm_spec_lint.faces.commands.rules import command_explain, command_rules


def command_server(args: argparse.Namespace, config: Config) -> int:
    if args.tcp is not None:
        _language_server().serve(args.tcp)
        return EXIT_CLEAN
    # Over stdio, initialize is answered before pygls is imported.
    from vllm_spec_lint.faces.lsp_start import serve_stdio

    serve_stdio(lambda: _language_server().build_server())
    return EXIT_CLEAN


def _language_server():
    try:
        from vllm_spec_lint.faces import lsp
    except ImportError as e:
        raise UsageError(
            f"the language server needs pygls ({e}): pip install 'vllm-spec-lint[lsp]'"
        ) from None
    return lsp


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
        _stdout_to_null_device()
        return EXIT_ERROR
    except Exception as e:  # an internal error is exit 2, never a silent pass
        print(f"error: internal error: {_crash_report(e)}", file=sys.stderr)
        return EXIT_ERROR


def run() -> NoReturn:
    """The command (the console script, ``python -m vllm_spec_lint``):
    :func:`main`, its output flushed, then out at once. Python's own exit
    would free every object the run made, one by one, libcst's modules
    among them: about 30 ms of a one-file check, 20 ms of a whole tree's
    (mypy's ``--fast-exit`` skips it too). Nothing is left to it: the
    commands write and close their files, and end their workers. While it
    runs, dataclasses take their methods' code from the code cache
    (edges/code_cache.py: half of libcst's import); what was new is saved
    after, unless the run was interrupted."""
    from vllm_spec_lint.edges.code_cache import compiled_dataclasses

    with compiled_dataclasses() as code:
        status = main()
        if code is not None and status != EXIT_INTERRUPTED:
            code.save()
    try:
        _flush(sys.stdout)
        _flush(sys.stderr)
    except BrokenPipeError:  # a report small enough to wait for the exit
        _stdout_to_null_device()
        status = EXIT_ERROR
    os._exit(status)


def _flush(stream) -> None:
    if stream is not None and not stream.closed:  # the server closes stdout
        stream.flush()


def _stdout_to_null_device() -> None:
    """What is flushed later goes nowhere, not into a second traceback."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


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
    if getattr(args, "paths", None) == [] and not reads_stdin(args):
        args.paths = [Path(".")]  # no path means `.`, exactly
    if args.command == "server":  # settings are read per document
        return command_server(args, Config())  # for hours: the collector runs
    # A run is short and makes few reference cycles: the cycle collector
    # would walk the growing heap again and again while it imports and
    # parses (~4 % of a cold whole-tree check's CPU); forked workers inherit
    # the pause. Afterwards as it was, for a caller in the same process, with
    # what the run left counted old (not walked at once as the run ends).
    # (Imported here: the server starts without the analysis.)
    from vllm_spec_lint.core.analysis import gc_paused

    with gc_paused(survivors_old=True):
        config = config_for(args)
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
