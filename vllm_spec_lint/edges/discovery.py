"""Which files a run looks at, and what module each one is."""

from __future__ import annotations

import functools
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from vllm_spec_lint.core.globs import glob_problem, with_posix_classes
from vllm_spec_lint.core.settings import Config
from vllm_spec_lint.edges.files import is_within

# As ruff's defaults, plus our own cache.
DEFAULT_EXCLUDES = (
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".mypy_cache",
    ".nox", ".pants.d", ".pytype", ".ruff_cache", ".svn", ".tox", ".venv",
    ".vllm_spec_lint_cache", "__pypackages__", "_build", "buck-out", "build",
    "dist", "node_modules", "venv",
)  # fmt: skip
PYTHON_SUFFIXES = (".py", ".pyi")
_GIT_NAMES = frozenset({".git", ".gitignore"})


class Excluder:
    """Default excludes, ``exclude`` from the configuration (gitignore-style
    patterns relative to the configuration's folder), ``--exclude`` from the
    command line (relative to the working folder) and ``.gitignore`` files.

    Folders the walk has listed are known to hold (or not) ``.git`` and
    ``.gitignore`` without asking the file system again; pathspec is loaded
    only when there are patterns to match."""

    def __init__(self, config: Config):
        self.config = config
        # (folder the patterns are relative to, their spec)
        self.patterns = tuple(
            (os.path.abspath(root), _spec(patterns))
            for root, patterns in (
                (config.root, config.exclude),
                (os.getcwd(), config.command_line_exclude),
            )
            if patterns
        )
        # folder -> which of .git and .gitignore it holds, for folders listed
        self._listed: dict[str, frozenset[str]] = {}
        self._ignores: dict[str, tuple] = {}
        self._roots: dict[str, str | None] = {}

    def listed(self, folder: str, names: set[str]) -> None:
        self._listed[folder] = frozenset(names & _GIT_NAMES)

    def by_name_only(self, folder: str) -> bool:
        """True when nothing but the default names can exclude an entry of
        ``folder`` (no patterns, no .gitignore above it): the common case,
        checked once per folder instead of once per file."""
        return not self.patterns and not (
            self.config.respect_gitignore and self._gitignores_above(folder)
        )

    def excludes(self, path: Path, is_dir: bool) -> bool:
        return self.excludes_entry(os.path.abspath(path), is_dir)

    def excludes_entry(self, path: str, is_dir: bool, itself: bool = False) -> bool:
        """``path`` is absolute; works on strings, as it runs for every entry.
        ``itself``: only a pattern about the entry itself excludes it, not
        one about a folder above it (inside an excluded folder named on the
        command line, which is walked all the same, as in ruff)."""
        folder, name = os.path.split(path)
        if name in DEFAULT_EXCLUDES:
            return True
        suffix = "/" if is_dir else ""
        matches = _matches_itself if itself else _matches
        for root, spec in self.patterns:
            if is_within(path, root) and matches(
                spec, Path(os.path.relpath(path, root)).as_posix() + suffix
            ):
                return True
        if self.config.respect_gitignore:
            for top, spec in self._gitignores_above(folder):
                relative = Path(os.path.relpath(path, top)).as_posix()
                if matches(spec, relative + suffix):
                    return True
        return False

    def _has(self, folder: str, name: str) -> bool:
        known = self._listed.get(folder)
        if known is not None:
            return name in known
        return os.path.exists(os.path.join(folder, name))

    def _git_root(self, folder: str) -> str | None:
        if folder not in self._roots:
            parent = os.path.dirname(folder)
            if self._has(folder, ".git"):
                self._roots[folder] = folder
            else:
                self._roots[folder] = (
                    None if parent == folder else self._git_root(parent)
                )
        return self._roots[folder]

    def _gitignores_above(self, folder: str) -> tuple:
        """The ``.gitignore`` files that apply in ``folder``, up to the git
        root, as (folder, spec) pairs."""
        found = self._ignores.get(folder)
        if found is None:
            top = self._git_root(folder)
            found = ()
            if top is not None:
                parent = os.path.dirname(folder)
                above = () if folder == top or parent == folder else (
                    self._gitignores_above(parent)
                )  # fmt: skip
                spec = self._gitignore(folder)
                found = ((folder, spec), *above) if spec is not None else above
            self._ignores[folder] = found
        return found

    def _gitignore(self, folder: str):
        if not self._has(folder, ".gitignore"):
            return None
        try:
            with open(os.path.join(folder, ".gitignore"), "rb") as f:
                text = f.read().decode("utf-8", errors="replace")
        except OSError:
            return None
        return _gitignore_spec(text.splitlines())


def _spec(lines):
    """Our own patterns (``exclude``, ``--exclude``), checked already by
    ``exclusion_problem``."""
    return _compiled(with_posix_classes(line) for line in lines)


def _gitignore_spec(lines):
    """A ``.gitignore`` as git reads it: a line git cannot match (a range
    that runs backwards, a trailing backslash, an unclosed ``[``) matches
    nothing there, and is left out here."""
    return _compiled(
        with_posix_classes(line) for line in lines if glob_problem(line) is None
    )


def _compiled(lines):
    import warnings

    import pathspec

    with warnings.catch_warnings():
        # A '[' inside brackets, which git reads as itself, is what Python's
        # regular expressions read too; they only warn that this may change.
        warnings.simplefilter("ignore", FutureWarning)
        return pathspec.GitIgnoreSpec.from_lines(list(lines))


def _matches(spec, path: str) -> bool:
    return spec.match_file(path)


def _matches_itself(spec, path: str) -> bool:
    """Whether ``spec`` excludes ``path`` by a pattern that matches the path
    itself (the last one to match decides, as in git). A pathspec pattern
    also matches what lies in a folder it matches: there, its match stops
    at a ``/`` before the path's end."""
    excluded = False
    for pattern in spec.patterns:
        if pattern.include is not None and pattern.regex.fullmatch(path):
            excluded = pattern.include
    return excluded


def exclusion_problem(pattern: str) -> str | None:
    """Why an exclusion pattern of ours cannot be used, or None."""
    problem = glob_problem(pattern)
    if problem is None:
        try:
            _compiled([pattern])
        except Exception as e:  # pathspec's refusals have no common class
            problem = str(e)
    return problem


def iter_python_files(
    paths: list[Path],
    config: Config,
    *,
    follow_links: bool = False,
    force_exclude: bool = False,
) -> Iterator[str]:
    """Python files under ``paths`` (as strings: there are thousands), each
    once, in a stable order: a folder's files by name, then its subfolders.

    Files and folders named on the command line are taken even when excluded
    (as in ruff), unless ``force_exclude`` (for pre-commit, which names every
    file); inside folders, excluded files (in an excluded folder named, those
    a pattern excludes by themselves), non-regular files and, unless
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
                yield str(path)  # missing or unreadable: the reader reports it
            continue
        walk = _Walk(excluder, roots, follow_links, seen)
        # Named, though excluded: walked, and only what lies inside matched.
        itself = excluder.excludes(path, is_dir=True)
        yield from walk.files(str(path), os.path.abspath(path), itself)


class _Walk:
    """One folder tree, read with ``os.scandir``: the kind of each entry comes
    with its name, so only links cost a ``stat``."""

    def __init__(self, excluder, roots: list[str], follow_links: bool, seen: set[str]):
        self.excluder = excluder
        self.roots = roots
        self.follow_links = follow_links
        self.seen = seen
        self.visited: set[str] = set()  # real folders, against link cycles

    def files(self, top: str, top_absolute: str, itself: bool) -> Iterator[str]:
        # Names as ruff prints them: "pkg/a.py", not "./pkg/a.py", cold or warm.
        strip = len(os.curdir + os.sep) if top == os.curdir else 0
        folders = [(top, top_absolute)]
        while folders:
            folder, absolute = folders.pop()
            subfolders = []
            entries = self._entries(folder)
            self.excluder.listed(absolute, {e.name for e in entries})
            by_name_only = self.excluder.by_name_only(absolute)
            for entry in entries:
                name = entry.name
                try:
                    is_folder = entry.is_dir(follow_symlinks=False) or (
                        self.follow_links and entry.is_dir()
                    )
                except OSError:
                    continue
                if is_folder:
                    inside = os.path.join(absolute, name)
                    if not self.excluder.excludes_entry(inside, True, itself):
                        subfolders.append((entry.path, inside))
                elif (
                    name.endswith(PYTHON_SUFFIXES)
                    and entry.path[strip:] not in self.seen
                    and not (
                        name in DEFAULT_EXCLUDES
                        if by_name_only
                        else self.excluder.excludes_entry(
                            os.path.join(absolute, name), False, itself
                        )
                    )
                    and self._is_regular_file(entry)
                ):
                    self.seen.add(entry.path[strip:])
                    yield entry.path[strip:]
            folders.extend(reversed(subfolders))

    def _entries(self, folder: str) -> list[os.DirEntry]:
        if self.follow_links:
            real = os.path.realpath(folder)
            if real in self.visited:
                return []
            self.visited.add(real)
        try:
            with os.scandir(folder) as scan:
                return sorted(scan, key=lambda e: e.name)
        except OSError:
            return []  # vanished or unreadable folder

    def _is_regular_file(self, entry: os.DirEntry) -> bool:
        try:
            if entry.is_symlink():
                target = os.path.realpath(entry.path)
                if not self.follow_links and not any(
                    is_within(target, r) for r in self.roots
                ):
                    return False  # a link leading outside the given roots
                try:
                    return stat.S_ISREG(os.stat(entry.path).st_mode)
                except OSError:
                    # Dangling or looping: the reader reports it at its path,
                    # in the system's words (as ruff's E902).
                    return True
            # A pipe or device must never be opened.
            return entry.is_file(follow_symlinks=False)
        except OSError:
            return False  # vanished since the folder was listed


def forget_packages() -> None:
    """Start a run: which folders are packages is read again. The answers
    are kept for one run only; a language server lives through a user
    adding ``__init__.py`` files, which changes every module name below."""
    _package.cache_clear()


@functools.cache
def _package(folder: Path) -> str | None:
    if not (folder / "__init__.py").is_file():
        return None
    parent = _package(folder.parent) if folder.parent != folder else None
    return f"{parent}.{folder.name}" if parent else folder.name


def module_name_for(path: Path | str) -> str | None:
    """Dotted module name from the ``__init__.py`` files above ``path``;
    ``pkg.__init__`` for a package's own ``__init__.py``."""
    path = Path(path)
    package = _package(path.absolute().parent)
    if package is None:
        return path.stem if path.stem.isidentifier() else None
    return f"{package}.{path.stem}"
