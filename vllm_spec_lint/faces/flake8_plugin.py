"""flake8 face: a thin adapter over the analysis core.

flake8 does selection, ``# noqa`` and per-file-ignores itself; this reports
what :func:`vllm_spec_lint.core.analysis.analyze_source` finds, with the same
codes and positions as ``vllm-spec-lint check``. Files that never name an
anchor class cost one substring search: libcst is not even imported.
"""

from __future__ import annotations

import ast
import functools
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

from vllm_spec_lint import __version__
from vllm_spec_lint.core.analysis import might_have_findings
from vllm_spec_lint.core.settings import PARSE_ERROR_CODE, Config, ConfigError
from vllm_spec_lint.edges.config import parse_settings


@functools.cache
def _hierarchy_near(folder: Path, config: Config):
    from vllm_spec_lint.edges.hierarchy_sources import load_hierarchy

    return load_hierarchy([folder], [], config, [])


def _refuse(error: Exception) -> NoReturn:
    """A setting that cannot be used stops flake8 as its own bad options do:
    one line, exit 2 (1 would read as findings)."""
    print(f"vllm-spec-lint: {error}", file=sys.stderr)
    raise SystemExit(2)


def _undecodable(path: Path) -> str | None:
    """Why the file at ``path`` cannot be decoded as Python reads it, or
    None. flake8 falls back to Latin-1 where the file's encoding fails, so
    the lines it hands over decode whatever the bytes; ``check`` reports such
    a file as VSL900, and so must this face. Read only for files that name
    an anchor (standard input is not read again)."""
    from vllm_spec_lint.edges.files import decode_source, read_source

    try:
        decode_source(read_source(path))
    except OSError:
        return None  # standard input, or gone: flake8 reported what it read
    except (SyntaxError, UnicodeDecodeError) as e:
        return f"cannot decode: {e}"
    return None


@functools.cache
def _analysis():
    """``analyze_source``, imported at the first file that names an anchor.
    The import (libcst above all) leaves about 26,000 objects in flake8's
    process for good, and Python's cycle collector walked them at each of
    its full collections: about 4 % of flake8's CPU over vLLM, more than
    the plugin's own work. ``gc.freeze()`` moves what is alive now out of
    the collections, as CPython advises for what lives as long as the
    process; reference counting still frees it, and everything made later
    is collected as before."""
    import gc

    import libcst  # noqa: F401

    import vllm_spec_lint.model.semantic_model  # noqa: F401
    import vllm_spec_lint.rules  # noqa: F401
    from vllm_spec_lint.core.analysis import analyze_source

    gc.freeze()
    return analyze_source


class Flake8Plugin:
    name = "vllm-spec-lint"
    version = __version__
    config = Config(select=("VSL",))

    def __init__(self, tree: ast.AST, filename: str, lines: list[str]):
        self.tree = tree
        self.filename = filename
        self.lines = lines

    @classmethod
    def add_options(cls, manager) -> None:
        manager.add_option(
            "--vsl-extend-families",
            parse_from_config=True,
            default="",
            help="vllm-spec-lint: more families, one per line: "
            "'module: Anchor, Companion, ...'",
        )
        manager.add_option(
            "--vsl-vllm-source",
            parse_from_config=True,
            default="",
            help="vllm-spec-lint: read vLLM's spec classes from this checkout "
            "or site-packages folder",
        )
        manager.add_option(
            "--vsl-strict",
            parse_from_config=True,
            action="store_true",
            help="vllm-spec-lint: report every syntactic finding",
        )

    @classmethod
    def parse_options(cls, options) -> None:
        # add_options registered all three, so flake8 has set each of them.
        raw = {"strict": options.vsl_strict}
        if options.vsl_vllm_source.strip():
            raw["vllm-source"] = options.vsl_vllm_source
        if options.vsl_extend_families.strip():
            raw["extend-families"] = options.vsl_extend_families
        try:
            config = parse_settings(raw, "flake8 options", Path.cwd())
        except ConfigError as e:
            _refuse(e)
        if config.vllm_source is not None:
            from vllm_spec_lint.edges.hierarchy_sources import (
                HierarchyError,
                load_hierarchy,
            )

            warnings: list[str] = []
            try:  # a source that cannot be used stops the run, as in the CLI
                load_hierarchy([], [], config, warnings)
            except HierarchyError as e:
                _refuse(e)
            for warning in warnings:  # a broken module: the defaults stand in
                print(f"vllm-spec-lint: warning: {warning}", file=sys.stderr)
        # flake8 selects codes itself; the defaults let every rule run.
        cls.config = config

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        source = "".join(self.lines)
        path = Path(self.filename)
        hierarchy = _hierarchy_near(path.absolute().parent, self.config)
        # flake8 decoded the file, so the text has no lone surrogates.
        if not might_have_findings(source.encode("utf-8"), self.config, hierarchy):
            return
        undecodable = _undecodable(path)
        if undecodable is not None:
            yield 1, 0, f"{PARSE_ERROR_CODE} {undecodable}", type(self)
            return
        from vllm_spec_lint.edges.discovery import module_name_for

        analysis = _analysis()(
            source,
            self.filename,
            self.config,
            hierarchy,
            module_name=module_name_for(path),
            apply_noqa=False,
            tree=self.tree,
        )
        for finding in analysis.findings:
            row, column = finding.location
            yield row, column - 1, f"{finding.code} {finding.message}", type(self)
