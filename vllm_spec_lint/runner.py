"""The edge around the analysis core: reading files, finding the class
hierarchy in the scanned tree, and running the core over many files."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from vllm_spec_lint.analysis import (
    Finding,
    analyze_source,
    might_have_findings,
    parse_error,
)
from vllm_spec_lint.config import Config
from vllm_spec_lint.discovery import iter_python_files, module_name_for
from vllm_spec_lint.families import ClassHierarchy, read_class_bases
from vllm_spec_lint.files import (
    WriteRefused,
    decode_source,
    read_source,
    write_atomically,
)
from vllm_spec_lint.formatting import formatter_for


@dataclass
class FileResult:
    """One file's outcome: its findings (what is left, after fixing), and
    when fixing changed it, the bytes before and after."""

    path: str
    findings: list[Finding]
    skipped: bool = False
    original: bytes | None = None
    fixed_source: bytes | None = None
    fixed: int = 0
    failure: str | None = None
    suppressed: list[Finding] = field(default_factory=list)


@dataclass
class CheckRun:
    results: list[FileResult]
    hierarchy: ClassHierarchy
    warnings: list[str] = field(default_factory=list)

    @property
    def findings(self) -> list[Finding]:
        return [f for r in self.results for f in r.findings]

    @property
    def suppressed(self) -> list[Finding]:
        return [f for r in self.results for f in r.suppressed]


def _module_file_candidates(roots: list[Path], module_path: str):
    for root in roots:
        folder = root.absolute() if root.is_dir() else root.absolute().parent
        for candidate in (folder, *folder.parents):
            yield candidate / module_path


def load_hierarchy(
    roots: list[Path], files: list[Path], config: Config, warnings: list[str]
) -> ClassHierarchy:
    """Built-in defaults, overridden by each family module found in the tree
    (``vllm/v1/kv_cache_interface.py``), so coverage follows vLLM's own classes."""
    hierarchy = ClassHierarchy.default()
    for module in dict.fromkeys(f.module for f in config.families):
        module_path = module.replace(".", "/") + ".py"
        in_tree = [f for f in files if f.as_posix().endswith("/" + module_path)]
        for candidate in in_tree or _module_file_candidates(roots, module_path):
            if candidate.is_file():
                try:
                    bases = read_class_bases(read_source(candidate))
                except Exception as e:  # a broken file keeps the defaults
                    warnings.append(f"{candidate}: cannot read class hierarchy: {e}")
                    break
                hierarchy = hierarchy.with_module(module, bases, str(candidate))
                break
    return hierarchy


def process_file(
    path: Path,
    config: Config,
    hierarchy: ClassHierarchy,
    *,
    fix: bool = False,
    unsafe: bool = False,
    write: bool = False,
) -> FileResult:
    name = str(path)
    try:
        source = read_source(path)
    except OSError as e:
        reason = e.strerror or str(e)
        return FileResult(name, [parse_error(name, f"cannot read: {reason}")])
    if not might_have_findings(source, config):
        return FileResult(name, [], skipped=True)
    try:
        text, encoding = decode_source(source)
    except (SyntaxError, UnicodeDecodeError) as e:
        return FileResult(name, [parse_error(name, f"cannot decode: {e}")])
    module_name = module_name_for(path)
    if not fix:
        analysis = analyze_source(
            text, name, config, hierarchy, module_name=module_name
        )
        return FileResult(name, analysis.findings, suppressed=analysis.suppressed)
    from vllm_spec_lint.fixes import fix_source

    outcome = fix_source(
        text,
        name,
        config,
        hierarchy,
        module_name=module_name,
        unsafe=unsafe,
        formatter=formatter_for(name, config.line_length),
    )
    result = FileResult(name, outcome.remaining, failure=outcome.failure)
    if outcome.failure is None and outcome.text != text:
        result.original = source
        result.fixed_source = outcome.text.encode(encoding)
        result.fixed = outcome.fixed
        if write:
            try:
                write_atomically(path, source, result.fixed_source)
            except (WriteRefused, OSError) as e:
                result.failure = f"not written: {e}"
                result.findings = analyze_source(
                    text, name, config, hierarchy, module_name=module_name
                ).findings
                result.fixed = 0
    return result


def run(
    paths: list[Path],
    config: Config,
    *,
    fix: bool = False,
    unsafe: bool = False,
    write: bool = False,
    progress: Callable[[int, int], None] | None = None,
    force_exclude: bool = False,
) -> CheckRun:
    files = list(iter_python_files(paths, config, force_exclude=force_exclude))
    warnings: list[str] = []
    hierarchy = load_hierarchy(paths, files, config, warnings)
    results = []
    for done, path in enumerate(files, 1):
        results.append(
            process_file(path, config, hierarchy, fix=fix, unsafe=unsafe, write=write)
        )
        if progress is not None:
            progress(done, len(files))
    return CheckRun(results, hierarchy, warnings)
