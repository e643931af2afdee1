"""The result cache (like ruff's): ``.vllm_spec_lint_cache/`` at the project
root, one entry per file, keyed by the file's content, path and module name,
the effective configuration, the class hierarchy and the tool version.

Entries are written whole (temporary file, then ``os.replace``), so runs at
the same time never see half an entry; an entry that cannot be read is a
miss and is written again. The cache is never needed for correctness.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import time
from dataclasses import asdict
from pathlib import Path

from vllm_spec_lint import __version__
from vllm_spec_lint.core.analysis import screened_names
from vllm_spec_lint.core.findings import Finding
from vllm_spec_lint.core.settings import KNOWN_CODES, Config
from vllm_spec_lint.edges.files import replace_whole
from vllm_spec_lint.model.hierarchy import ClassHierarchy, read_class_bases
from vllm_spec_lint.repair.text import Edit, Fix

CACHE_DIR = ".vllm_spec_lint_cache"


def fingerprint(config: Config, hierarchy: ClassHierarchy) -> str:
    settings = (
        __version__,
        config.select,
        config.ignore,
        config.per_file_ignores,
        config.families,
        config.strict,
        config.explain_suppressed,
        KNOWN_CODES,  # a new rule: cached results are stale
        # A finding's fix is cached with its applicability.
        config.extend_safe_fixes,
        config.extend_unsafe_fixes,
        sorted(hierarchy.bases.items()),
        sorted(hierarchy.unresolved.items()),
        sorted(hierarchy.declared.items()),
        config.assume_layout_property,
        config.noqa_as_suppression,
    )
    return hashlib.sha256(repr(settings).encode()).hexdigest()


def _finding_to_json(f: Finding) -> dict:
    data = asdict(f)
    data.pop("path")
    return data


def _finding_from_json(data: dict, path: str) -> Finding:
    fix = _fix_from_json(data.get("fix"))
    return Finding(
        data["code"],
        data["message"],
        path,
        tuple(data["location"]),
        tuple(data["end_location"]),
        fix,
        data.get("line_text", ""),
        data.get("suppressed_by"),
        tuple(data.get("own_spec", ())),
        tuple(data.get("follows", ())),
    )


def _write_entry(root: Path, entry: Path, data: bytes) -> None:
    """Write one cache file whole (edges/files.py's ``replace_whole``) under
    the cache folder at ``root``, which is marked as a cache on first use."""
    try:
        top = root / CACHE_DIR
        top.mkdir(parents=True, exist_ok=True)
        if not (top / ".gitignore").exists():
            (top / ".gitignore").write_text("# Created by vllm-spec-lint.\n*\n")
            (top / "CACHEDIR.TAG").write_text(
                "Signature: 8a477f597d28d172789f06886806bc55\n"
                "# This file is a cache directory tag created by vllm-spec-lint.\n"
            )
        replace_whole(entry, data)
    except OSError:
        pass  # a read-only checkout still gets its results


def version_folder(root: Path) -> Path:
    """Where this version keeps its cache under ``root`` (a release's cache
    is never read by another)."""
    return root / CACHE_DIR / __version__


def holds_results(root: Path) -> bool:
    """Whether a run of this version has cached anything under ``root``."""
    return version_folder(root).is_dir()


class ResultCache:
    def __init__(self, root: Path, config: Config, hierarchy: ClassHierarchy):
        self.root = root
        self.folder = version_folder(root)
        self.settings = fingerprint(config, hierarchy)

    def key(self, path: str, module_name: str | None, source: bytes) -> str:
        digest = hashlib.sha256()
        for part in (self.settings, path, module_name or "", ""):
            digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
        digest.update(source)
        return digest.hexdigest()

    def _entry(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str, path: str) -> tuple[list[Finding], list[Finding]] | None:
        try:
            with open(self._entry(key), encoding="utf-8") as f:
                data = json.load(f)
            return (
                [_finding_from_json(d, path) for d in data["findings"]],
                [_finding_from_json(d, path) for d in data["suppressed"]],
            )
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            return None  # missing or corrupt: a miss, rewritten by put()

    def put(self, key: str, findings: list[Finding], suppressed: list[Finding]) -> None:
        data = {
            "findings": [_finding_to_json(f) for f in findings],
            "suppressed": [_finding_to_json(f) for f in suppressed],
        }
        _write_entry(self.root, self._entry(key), json.dumps(data).encode())


class ClassBasesCache:
    """:func:`read_class_bases` of the family module, remembered by its
    content: the hierarchy is needed before any result can be looked up."""

    def __init__(self, root: Path):
        self.root = root
        self.folder = version_folder(root) / "class-bases-imported"

    def __call__(self, source: bytes) -> dict[str, tuple[str, ...]]:
        entry = self.folder / f"{hashlib.sha256(source).hexdigest()}.json"
        try:
            data = json.loads(entry.read_bytes())
            if isinstance(data, dict) and all(
                isinstance(k, str)
                and isinstance(v, list)
                and all(isinstance(b, str) for b in v)
                for k, v in data.items()
            ):
                return {k: tuple(v) for k, v in data.items()}
        except (OSError, ValueError):
            pass  # missing or corrupt: read again, written again
        bases = read_class_bases(source)
        _write_entry(self.root, entry, json.dumps(bases).encode())
        return bases


class CleanFiles:
    """Files whose bytes hold no anchor name, by their ``stat``: a warm run
    does not read them again (ruff's cache and git's index trust file
    metadata the same way). Size, both times, inode and device must all
    match. A file changed in the last two seconds before a run is not
    recorded, so a change within one timestamp tick is never missed."""

    _RECENT_NS = 2 * 10**9

    def __init__(self, root: Path, config: Config, hierarchy: ClassHierarchy):
        self.root = root
        # Clean means: none of the names a finding needs (anchors, and the
        # companions' own parents), for these rules.
        names = screened_names(config.families, hierarchy)
        settings = repr((__version__, KNOWN_CODES, names, os.getcwd())).encode()
        digest = hashlib.sha256(settings).hexdigest()[:16]
        self.path = version_folder(root) / f"clean-{digest}.marshal"
        self.started = time.time_ns()
        self.changed = False
        try:
            entries = marshal.loads(self.path.read_bytes())
            self.entries = entries if isinstance(entries, dict) else {}
        except (OSError, ValueError, EOFError, TypeError):
            self.entries = {}  # missing or corrupt: rebuilt

    @staticmethod
    def _signature(info: os.stat_result) -> tuple[int, ...]:
        return (
            info.st_size,
            info.st_mtime_ns,
            info.st_ctime_ns,
            info.st_ino,
            info.st_dev,
        )

    def is_clean(self, name: str, info: os.stat_result) -> bool:
        return self.entries.get(name) == self._signature(info)

    def mark_clean(self, name: str, info: os.stat_result) -> None:
        newest = max(info.st_mtime_ns, info.st_ctime_ns)
        if newest < self.started - self._RECENT_NS:
            self.entries[name] = self._signature(info)
            self.changed = True

    def forget(self, name: str) -> None:
        if self.entries.pop(name, None) is not None:
            self.changed = True

    def save(self) -> None:
        if self.changed:
            _write_entry(self.root, self.path, marshal.dumps(self.entries))


# Files whose content can change how a formatter lays out a file below them.
_FORMATTER_SETTINGS = (
    "pyproject.toml", "ruff.toml", ".ruff.toml", "setup.cfg", "tox.ini",
    ".style.yapf", ".pre-commit-config.yaml", ".editorconfig",
)  # fmt: skip


class PreviewCache:
    """Fixes as the formatter lays them out for a report (edges/previews.py),
    remembered by the file's text, its fixes, the formatter and the settings
    files above the file: a warm check runs no formatter."""

    def __init__(self, root: Path):
        self.root = root
        self.folder = version_folder(root) / "previews"
        # folder -> digest of the settings files in it and above it
        self._settings: dict[Path, bytes] = {}

    def key(self, path: str, text: str, fixes: list[Fix], formatter: str) -> str:
        digest = hashlib.sha256()
        for part in (formatter, path, repr(fixes), text):
            digest.update(part.encode("utf-8", "surrogatepass") + b"\0")
        digest.update(self._settings_above(Path(path).absolute().parent))
        return digest.hexdigest()

    def _settings_above(self, folder: Path) -> bytes:
        """A digest of the formatter settings files in ``folder`` and every
        folder above it, each folder read once a run."""
        known = self._settings.get(folder)
        if known is None:
            parent = folder.parent
            digest = hashlib.sha256(
                b"" if parent == folder else self._settings_above(parent)
            )
            for name in _FORMATTER_SETTINGS:
                try:
                    digest.update(name.encode() + (folder / name).read_bytes())
                except OSError:
                    continue
            known = self._settings[folder] = digest.digest()
        return known

    def _entry(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> list[Fix | None] | None:
        try:
            with open(self._entry(key), encoding="utf-8") as f:
                return [_fix_from_json(d) for d in json.load(f)]
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            return None

    def put(self, key: str, fixes: list[Fix | None]) -> None:
        data = [None if f is None else asdict(f) for f in fixes]
        _write_entry(self.root, self._entry(key), json.dumps(data).encode())


def _fix_from_json(data: dict | None) -> Fix | None:
    if data is None:
        return None
    edits = tuple(
        Edit(e["content"], tuple(e["location"]), tuple(e["end_location"]))
        for e in data["edits"]
    )
    return Fix(data["applicability"], data["message"], edits)


class PairingCache:
    """Backend pairing's verdicts (edges/pairing.py), which depend on every
    file of the tree: keyed by the settings and each scanned file's path,
    size and modification time, so that any change to any file asks again.
    An entry holds each test asked about so far: its reason, or None when
    it stays reported."""

    def __init__(self, root: Path, config: Config, hierarchy: ClassHierarchy):
        self.root = root
        self.folder = version_folder(root) / "pairing"
        self.settings = fingerprint(config, hierarchy)

    def key(self, files: list[str]) -> str:
        digest = hashlib.sha256(self.settings.encode())
        for name in files:
            try:
                info = os.stat(name)
                signature = f"{info.st_size} {info.st_mtime_ns}"
            except OSError:
                signature = "unreadable"
            digest.update(f"\0{name}\0{signature}".encode("utf-8", "surrogateescape"))
        return digest.hexdigest()

    def get(self, key: str) -> dict[tuple[str, ...], str | None] | None:
        try:
            data = json.loads((self.folder / f"{key}.json").read_bytes())
            return {
                tuple(spec): None if reason is None else str(reason)
                for spec, reason in data
            }
        except (OSError, ValueError, TypeError):
            return None  # missing or corrupt: decided again

    def put(self, key: str, verdicts: dict[tuple[str, ...], str | None]) -> None:
        data = json.dumps([[list(spec), reason] for spec, reason in verdicts.items()])
        _write_entry(self.root, self.folder / f"{key}.json", data.encode())


class InitializeAnswers:
    """The language server's answers to ``initialize``, by what decides them
    (the client's capabilities, and the versions of the server and the
    packages that compute them): a later start gives the answer before
    pygls, whose protocol types take half a second to import, is loaded."""

    def __init__(self, root: Path):
        self.root = root
        self.folder = version_folder(root) / "initialize"

    def _entry(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def get(self, key: str) -> dict | None:
        try:
            answer = json.loads(self._entry(key).read_bytes())
        except (OSError, ValueError):
            return None  # missing or corrupt: pygls answers, put() rewrites it
        return answer if isinstance(answer, dict) else None

    def put(self, key: str, answer: dict) -> None:
        _write_entry(self.root, self._entry(key), json.dumps(answer).encode())
