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


@functools.cache
def _git_root(folder: Path) -> Path | None:
    if (folder / ".git").exists():
        return folder
    return None if folder.parent == folder else _git_root(folder.parent)


@functools.cache
def _gitignores_above(folder: str) -> tuple[tuple[Path, pathspec.GitIgnoreSpec], ...]:
    """The ``.gitignore`` files that apply in ``folder``, up to the git root."""
    folder = Path(folder)
    top = _git_root(folder)
    if top is None:
        return ()
    found = []
    for candidate in (folder, *folder.parents):
        spec = _gitignore(candidate)
        if spec is not None:
            found.append((candidate, spec))
        if candidate == top:
            break
    return tuple(found)


class Excluder:
    """Default excludes, ``exclude`` from the configuration (gitignore-style
    patterns relative to the configuration's folder) and ``.gitignore`` files."""

    def __init__(self, config: Config):
        self.config = config
        self.root = os.path.abspath(config.root)
        self.patterns = pathspec.GitIgnoreSpec.from_lines(config.exclude)

    def excludes(self, path: Path, is_dir: bool) -> bool:
        return self.excludes_entry(os.path.abspath(path), is_dir)

    def excludes_entry(self, path: str, is_dir: bool) -> bool:
        """``path`` is absolute; works on strings, as it runs for every entry."""
        folder, name = os.path.split(path)
        if name in DEFAULT_EXCLUDES:
            return True
        suffix = "/" if is_dir else ""
        if self.config.exclude:
            relative = os.path.relpath(path, self.root)
            if not relative.startswith("..") and self.patterns.match_file(
                Path(relative).as_posix() + suffix
            ):
                return True
        if self.config.respect_gitignore:
            for top, spec in _gitignores_above(folder):
                relative = Path(os.path.relpath(path, top)).as_posix()
                if spec.match_file(relative + suffix):
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
    roots = [os.path.realpath(p) for p in paths]
    seen: set[str] = set()
    for path in paths:
        if force_exclude and excluder.excludes(path, is_dir=path.is_dir()):
            continue
        if not path.is_dir():
            if str(path) not in seen:
                seen.add(str(path))
                yield path  # missing or unreadable: the reader reports it
            continue
        for folder, dirs, files in os.walk(path, followlinks=follow_links):
            absolute = os.path.abspath(folder)
            dirs[:] = sorted(
                d
                for d in dirs
                if not excluder.excludes_entry(os.path.join(absolute, d), True)
            )
            for name in sorted(files):
                if not name.endswith(PYTHON_SUFFIXES):
                    continue
                file = os.path.join(folder, name)
                if file in seen or excluder.excludes_entry(
                    os.path.join(absolute, name), is_dir=False
                ):
                    continue
                try:
                    info = os.lstat(file)
                    if stat.S_ISLNK(info.st_mode):
                        target = os.path.realpath(file)
                        if not follow_links and not any(
                            target == r or target.startswith(r + os.sep) for r in roots
                        ):
                            continue  # a link leading outside the given roots
                        info = os.stat(file)
                except OSError:
                    continue  # dangling link or vanished file
                if not stat.S_ISREG(info.st_mode):
                    continue  # a pipe or device must never be opened
                seen.add(file)
                yield Path(file)


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
