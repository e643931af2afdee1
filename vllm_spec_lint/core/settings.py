"""What a run is asked to do: the settings every layer above the semantic
model reads. Reading them from configuration files is edges/config.py."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from vllm_spec_lint.model.hierarchy import DEFAULT_FAMILIES, Family

CODE_RE = re.compile(r"^VSL\d{0,3}$")


class ConfigError(Exception):
    """A configuration value that cannot be used; names the file and key."""

    def __init__(self, source: str, key: str, reason: str):
        super().__init__(f"{source}: invalid value for '{key}': {reason}")
        self.source = source
        self.key = key


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ("VSL",)
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    # --exclude / --extend-exclude: gitignore-style, from the working folder.
    command_line_exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    line_length: int = 88
    families: tuple[Family, ...] = DEFAULT_FAMILIES
    strict: bool = False
    # Structural twins of the spec classes join the families (model/twins.py).
    discover_families: bool = False
    # Where vLLM's family modules are read from, before anything else.
    vllm_source: Path | None = None
    # What lays out fixes: auto, ruff, black, yapf or none (repair/formatting.py).
    fix_formatter: str = "auto"
    respect_gitignore: bool = True
    # Larger files that name an anchor are reported, not parsed: CPython's
    # own parser needs minutes and gigabytes for a 50 MB module.
    max_file_size_mb: int = 10
    # Folder that relative patterns (exclude, per-file-ignores) are matched from.
    root: Path = field(default_factory=Path.cwd, compare=False)
    source: str = "defaults"

    def is_enabled(self, code: str, ignored: tuple[str, ...] = ()) -> bool:
        """ruff/flake8 selection: the longest matching prefix decides."""
        chosen = max(
            (p for p in self.select if code.startswith(p)), key=len, default=""
        )
        dropped = max(
            (p for p in self.ignore + ignored if code.startswith(p)),
            key=len,
            default="",
        )
        return bool(chosen) and len(chosen) > len(dropped)
