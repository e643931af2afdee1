"""Which files a run looks at, and what module each one is."""

from __future__ import annotations

import functools
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pathspec

from vllm_spec_lint.config import Config

# As ruff's defaults, plus our own cache.
DEFAULT_EXCLUDES = (
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".mypy_cache",
    ".nox", ".pants.d", ".pytype", ".ruff_cache", ".svn", ".tox", ".venv",
    ".vllm_spec_lint_cache", "__pypackages__", "_build", "buck-out", "build",
    "dist", "node_modules", "venv",
)  # fmt: skip
PYTHON_SUFFIXES = (".py", ".pyi")


@functools.cache
def _gitignore(folder: Path) -> pathspec.GitIgnoreSpec | None:
    try:
        text = (folder / ".gitignore").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(text.splitlines())


def _git_root(folder: Path) -> Path | None:
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


class Excluder:
    """Default excludes, ``exclude`` from the configuration (gitignore-style
    patterns relative to the configuration's folder) and ``.gitignore`` files."""

    def __init__(self, config: Config):
        self.config = config
        self.root = config.root.resolve()
        self.patterns = pathspec.GitIgnoreSpec.from_lines(config.exclude)

    def _gitignores_for(
        self, path: Path
    ) -> Iterator[tuple[Path, pathspec.GitIgnoreSpec]]:
        top = _git_root(path.parent)
        if top is None:
            return
        for folder in (path.parent, *path.parent.parents):
            spec = _gitignore(folder)
            if spec is not None:
                yield folder, spec
            if folder == top:
                return

    def excludes(self, path: Path, is_dir: bool) -> bool:
        path = path.absolute()
        if path.name in DEFAULT_EXCLUDES:
            return True
        suffix = "/" if is_dir else ""
        if self.config.exclude:
            try:
                relative = path.relative_to(self.root).as_posix()
            except ValueError:
                relative = None
            if relative and self.patterns.match_file(relative + suffix):
                return True
        if self.config.respect_gitignore:
            for folder, spec in self._gitignores_for(path):
                if spec.match_file(path.relative_to(folder).as_posix() + suffix):
                    return True
        return False


def iter_python_files(
    paths: list[Path],
    config: Config,
    *,
    follow_links: bool = False,
    force_exclude: bool = False,
) -> Iterator[Path]:
    """Python files under ``paths``, each once, in a stable order.

    Files and folders named on the command line are taken even when excluded
    (as in ruff), unless ``force_exclude`` (for pre-commit, which names every
    file); inside folders, excluded files, non-regular files and, unless
    ``follow_links``, links leading outside the given roots are passed over.
    """
    excluder = Excluder(config)
    roots = [p.resolve() for p in paths]
    seen: set[Path] = set()
    for path in paths:
        if force_exclude and excluder.excludes(path, is_dir=path.is_dir()):
            continue
        if not path.is_dir():
            if path not in seen:
                seen.add(path)
                yield path  # missing or unreadable: the reader reports it
            continue
        for folder, dirs, files in os.walk(path, followlinks=follow_links):
            base = Path(folder)
            dirs[:] = sorted(d for d in dirs if not excluder.excludes(base / d, True))
            for name in sorted(files):
                if not name.endswith(PYTHON_SUFFIXES):
                    continue
                file = base / name
                if file in seen or excluder.excludes(file, is_dir=False):
                    continue
                try:
                    mode = os.stat(file).st_mode
                except OSError:
                    continue  # dangling link or vanished file
                if not stat.S_ISREG(mode):
                    continue  # a pipe or device must never be opened
                if file.is_symlink() and not follow_links:
                    target = file.resolve()
                    if not any(target.is_relative_to(r) for r in roots):
                        continue
                seen.add(file)
                yield file


@functools.cache
def _package(folder: Path) -> str | None:
    if not (folder / "__init__.py").is_file():
        return None
    parent = _package(folder.parent) if folder.parent != folder else None
    return f"{parent}.{folder.name}" if parent else folder.name


def module_name_for(path: Path) -> str | None:
    """Dotted module name from the ``__init__.py`` files above ``path``;
    ``pkg.__init__`` for a package's own ``__init__.py``."""
    package = _package(path.absolute().parent)
    if package is None:
        return path.stem if path.stem.isidentifier() else None
    return f"{package}.{path.stem}"
