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
import os
import tempfile
from dataclasses import asdict
from pathlib import Path

from vllm_spec_lint import __version__
from vllm_spec_lint.analysis import Edit, Finding, Fix
from vllm_spec_lint.config import Config
from vllm_spec_lint.families import ClassHierarchy

CACHE_DIR = ".vllm_spec_lint_cache"


def fingerprint(config: Config, hierarchy: ClassHierarchy) -> str:
    settings = (
        __version__,
        config.select,
        config.ignore,
        config.per_file_ignores,
        config.families,
        config.strict,
        sorted(hierarchy.bases.items()),
    )
    return hashlib.sha256(repr(settings).encode()).hexdigest()


def _finding_to_json(f: Finding) -> dict:
    data = asdict(f)
    data.pop("path")
    return data


def _finding_from_json(data: dict, path: str) -> Finding:
    fix = data.get("fix")
    if fix is not None:
        edits = tuple(
            Edit(e["content"], tuple(e["location"]), tuple(e["end_location"]))
            for e in fix["edits"]
        )
        fix = Fix(fix["applicability"], fix["message"], edits)
    return Finding(
        data["code"],
        data["message"],
        path,
        tuple(data["location"]),
        tuple(data["end_location"]),
        fix,
        data.get("line_text", ""),
        data.get("suppressed_by"),
    )


class ResultCache:
    def __init__(self, root: Path, config: Config, hierarchy: ClassHierarchy):
        self.folder = root / CACHE_DIR / __version__
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
        entry = self._entry(key)
        data = {
            "findings": [_finding_to_json(f) for f in findings],
            "suppressed": [_finding_to_json(f) for f in suppressed],
        }
        try:
            entry.parent.mkdir(parents=True, exist_ok=True)
            self._mark_folder()
            fd, temporary = tempfile.mkstemp(dir=entry.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f)
            os.replace(temporary, entry)
        except OSError:
            pass  # a read-only checkout still gets its results

    def _mark_folder(self) -> None:
        top = self.folder.parent
        ignore = top / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# Created by vllm-spec-lint.\n*\n")
            (top / "CACHEDIR.TAG").write_text(
                "Signature: 8a477f597d28d172789f06886806bc55\n"
                "# This file is a cache directory tag created by vllm-spec-lint.\n"
            )
