"""What a run is asked to do: the settings every layer above the semantic
model reads. Reading them from configuration files is edges/config.py."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from vllm_spec_lint.model.hierarchy import DEFAULT_FAMILIES, Family

# Every code a finding can carry, with its name, in order: the rules'
# (rules/__init__.py holds the classes; a test keeps the two equal) and
# VSL900. Written out here so that checking a selector or naming a finding
# imports no rule, hence no libcst.
PARSE_ERROR_CODE = "VSL900"
RULE_NAMES = {
    "VSL001": "isinstance-leaves-out-companion",
    "VSL002": "exact-type-leaves-out-companion",
    "VSL003": "match-class-leaves-out-companion",
    "VSL004": "constant-leaves-out-companion",
    "VSL005": "class-name-leaves-out-companion",
    "VSL006": "dispatch-leaves-out-companion",
    "VSL007": "parent-sweeps-in-companion",
    "VSL008": "class-test-instead-of-layout-property",
    PARSE_ERROR_CODE: "unreadable-file",
}
KNOWN_CODES = tuple(RULE_NAMES)
# The rule's page, as ruff's findings carry theirs.
RULE_PAGE = (
    "https://github.com/vllm-project/vllm-spec-lint/blob/main/docs/rules/{code}.md"
)


def rule_url(code: str) -> str | None:
    return RULE_PAGE.format(code=code) if code in RULE_NAMES else None


_SELECTOR_RE = re.compile(r"VSL\d{0,3}")


def is_selector(text: str) -> bool:
    """A code or a prefix of at least one known code (``VSL``, ``VSL00``,
    ``VSL001``), as ruff's selectors; case-sensitive, as ruff's are."""
    return bool(_SELECTOR_RE.fullmatch(text)) and any(
        code.startswith(text) for code in KNOWN_CODES
    )


def unknown_selectors(selectors) -> list[str]:
    return [s for s in selectors if not is_selector(s)]


class ConfigError(Exception):
    """A configuration value that cannot be used; names the file and key
    (``key`` None: the file as a whole, e.g. not found or not TOML)."""

    def __init__(self, source: str, key: str | None, reason: str):
        if key is None:
            super().__init__(f"{source}: {reason}")
        else:
            super().__init__(f"{source}: invalid value for '{key}': {reason}")


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ("VSL",)
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    # --exclude / --extend-exclude: gitignore-style, from the working folder.
    command_line_exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # Passed to the formatter only when set: otherwise the project's own
    # formatter settings decide (ruff's and black's default is 88).
    line_length: int | None = None
    families: tuple[Family, ...] = DEFAULT_FAMILIES
    strict: bool = False
    # Find every site the default mode leaves out, with its reason, as strict
    # does, but keep them apart (--explain-suppressions).
    explain_suppressed: bool = False
    # Structural twins of the spec classes join the families (model/twins.py).
    discover_families: bool = False
    # Where vLLM's family modules are read from, before anything else.
    vllm_source: Path | None = None
    # What lays out fixes: auto, ruff, black, yapf or none (repair/formatting.py).
    fix_formatter: str = "auto"
    # ruff's per-project fix safety: rules whose fixes are made safe/unsafe.
    extend_safe_fixes: tuple[str, ...] = ()
    extend_unsafe_fixes: tuple[str, ...] = ()
    respect_gitignore: bool = True
    # Larger files that name an anchor are reported, not parsed: CPython's
    # own parser needs minutes and gigabytes for a 50 MB module.
    max_file_size_mb: int = 10
    # VSL008 as if the families' layout property were declared: the
    # layout-property codemod rewrites tests before it writes the property.
    assume_layout_property: bool = False
    # Strict mode's census: a site a ``# noqa`` comment silences is kept as
    # a suppressed finding ("noqa") instead of dropped (the codemod counts).
    noqa_as_suppression: bool = False
    # Folder that relative patterns (exclude, per-file-ignores) are matched from.
    root: Path = field(default_factory=Path.cwd, compare=False)
    source: str = "defaults"

    def is_enabled(self, code: str, ignored: tuple[str, ...] = ()) -> bool:
        """ruff/flake8 selection: the longest matching prefix decides."""
        chosen = _longest_prefix(code, self.select)
        dropped = _longest_prefix(code, self.ignore + ignored)
        return bool(chosen) and len(chosen) > len(dropped)

    def fix_applicability(self, code: str, fix) -> str:
        """The applicability of a rule's fix after the project's overrides:
        the longest matching selector decides, ``extend-unsafe-fixes`` on a
        tie (the cautious reading)."""
        safe = _longest_prefix(code, self.extend_safe_fixes)
        unsafe = _longest_prefix(code, self.extend_unsafe_fixes)
        if unsafe and len(unsafe) >= len(safe):
            return "unsafe"
        if safe:
            return "safe"
        return fix.applicability


def _longest_prefix(code: str, selectors: tuple[str, ...]) -> str:
    return max((s for s in selectors if code.startswith(s)), key=len, default="")
