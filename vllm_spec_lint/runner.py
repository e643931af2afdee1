"""The edge around the analysis core: reading files, finding the class
hierarchy in the scanned tree, and running the core over many files."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from vllm_spec_lint.analysis import (
    FileAnalysis,
    analyze_source,
    might_have_findings,
    parse_error,
)
from vllm_spec_lint.config import Config
from vllm_spec_lint.discovery import iter_python_files, module_name_for
from vllm_spec_lint.families import ClassHierarchy, read_class_bases


@dataclass
class CheckRun:
    analyses: list[FileAnalysis]
    hierarchy: ClassHierarchy
    warnings: list[str] = field(default_factory=list)

    @property
    def findings(self):
        return [f for a in self.analyses for f in a.findings]


def read_source(path: Path) -> bytes:
    """The file's bytes; never blocks on a pipe or device."""
    import os
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"not a regular file: {path}")
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    finally:
        os.close(fd)


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


def analyze_path(path: Path, config: Config, hierarchy: ClassHierarchy) -> FileAnalysis:
    name = str(path)
    try:
        source = read_source(path)
    except OSError as e:
        reason = e.strerror or str(e)
        return FileAnalysis(name, [parse_error(name, f"cannot read: {reason}")])
    if not might_have_findings(source, config):
        return FileAnalysis(name, [], skipped=True)
    return analyze_source(
        source, name, config, hierarchy, module_name=module_name_for(path)
    )


def run_check(paths: list[Path], config: Config) -> CheckRun:
    files = list(iter_python_files(paths, config))
    warnings: list[str] = []
    hierarchy = load_hierarchy(paths, files, config, warnings)
    analyses = [analyze_path(f, config, hierarchy) for f in files]
    return CheckRun(analyses, hierarchy, warnings)
