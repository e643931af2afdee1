"""Settings: ``[tool.vllm-spec-lint]`` in pyproject.toml or ``[vllm-spec-lint]``
in setup.cfg, found by walking up from the first path checked (the closest
file that has the section wins, as in ruff). Configuration is data only.
"""

from __future__ import annotations

import keyword
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from vllm_spec_lint.core.globs import glob_problem
from vllm_spec_lint.core.settings import (
    KNOWN_CODES,
    Config,
    ConfigError,
    unknown_selectors,
)
from vllm_spec_lint.edges.discovery import exclusion_problem
from vllm_spec_lint.model.hierarchy import Family, short_name
from vllm_spec_lint.repair.formatting import FIX_FORMATTERS

SECTION = "vllm-spec-lint"


def _str_list(
    source: str, key: str, value, *, codes: bool = False, split: bool = True
) -> tuple[str, ...]:
    """A list of strings; with ``split`` (INI files, where every value is a
    string) also one string of items separated by commas or spaces."""
    if split and isinstance(value, str):
        value = [v for v in re.split(r"[,\s]+", value) if v]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(source, key, "expected a list of strings")
    if codes:
        bad = unknown_selectors(v.strip() for v in value)
        if bad:
            raise ConfigError(source, key, unknown_selector_reason(bad))
    return tuple(v.strip() for v in value)


def unknown_selector_reason(bad: list[str]) -> str:
    """ruff's words for a selector that matches no rule."""
    listed = ", ".join(f"'{b}'" for b in bad)
    return f"unknown rule selector {listed} (codes: {', '.join(KNOWN_CODES)})"


def _bool(source: str, key: str, value) -> bool:
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0"):
        return value.strip().lower() in ("true", "1")
    if not isinstance(value, bool):
        raise ConfigError(source, key, "expected true or false")
    return value


def _families(source: str, value) -> tuple[Family, ...]:
    key = "families"
    if not isinstance(value, list):
        raise ConfigError(source, key, "expected a list of tables")
    families = []
    for i, entry in enumerate(value):
        where = f"{key}[{i}]"
        if not isinstance(entry, Mapping):
            raise ConfigError(source, where, "expected a table")
        unknown = set(entry) - {"name", "module", "members", "layout-property"}
        if unknown:
            raise ConfigError(source, where, f"unknown field(s): {sorted(unknown)}")
        module = entry.get("module")
        if not isinstance(module, str) or not re.fullmatch(r"[\w.]+", module):
            raise ConfigError(
                source, f"{where}.module", "expected a dotted module name"
            )
        members = _str_list(source, f"{where}.members", entry.get("members"))
        if len(members) < 2 or not all(_class_name(m) for m in members):
            raise ConfigError(
                source,
                f"{where}.members",
                "expected two or more class names (dotted for another module)",
            )
        # Absent: named after the anchor (Family.property_name).
        layout_property = entry.get("layout-property", "")
        if "layout-property" in entry and not (
            isinstance(layout_property, str)
            and layout_property.isidentifier()
            and not keyword.iskeyword(layout_property)
        ):
            raise ConfigError(
                source, f"{where}.layout-property", "expected a Python identifier"
            )
        # A dotted member is in its own module: a plugin's stand-in beside
        # vLLM's companion.
        modules = tuple(m.rpartition(".")[0] or module for m in members)
        families.append(
            Family(
                str(entry.get("name", short_name(members[0]))),
                module,
                tuple(short_name(m) for m in members),
                member_modules=modules if set(modules) != {module} else (),
                layout_property=layout_property,
            )
        )
    return tuple(families)


def _class_name(member: str) -> bool:
    return all(part.isidentifier() for part in member.split("."))


def _per_file_ignores(
    source: str, value, *, split: bool
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    key = "per-file-ignores"
    if split and isinstance(value, str):  # setup.cfg, flake8: "pattern: CODE,CODE"
        pairs = {}
        for line in value.splitlines():
            if line.strip():
                pattern, sep, codes = line.partition(":")
                if not sep:
                    raise ConfigError(
                        source, key, f"expected 'pattern: codes': {line!r}"
                    )
                pairs[pattern.strip()] = codes
        value = pairs
    if not isinstance(value, Mapping):
        raise ConfigError(source, key, "expected a table of pattern = [codes]")
    for pattern in value:
        problem = glob_problem(pattern)
        if problem is not None:
            raise ConfigError(source, f"{key}.{pattern}", f"not a glob: {problem}")
    return tuple(
        (
            pattern,
            _str_list(source, f"{key}.{pattern}", codes, codes=True, split=split),
        )
        for pattern, codes in value.items()
    )


def _exclusions(source: str, key: str, value, *, split: bool) -> tuple[str, ...]:
    patterns = _str_list(source, key, value, split=split)
    for pattern in patterns:
        problem = exclusion_problem(pattern)
        if problem is not None:
            raise ConfigError(source, key, f"{pattern!r} is not a glob: {problem}")
    return patterns


def line_length_problem(value) -> str | None:
    """Why ``value`` is no line length (ruff's range), or None."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 320:
        return "expected an integer from 1 to 320"
    return None


def _families_from_cfg(source: str, value: str) -> tuple[Family, ...]:
    # setup.cfg: one family per line, "module: Anchor, Companion, ..."
    entries = []
    for line in value.splitlines():
        if line.strip():
            module, sep, members = line.partition(":")
            if not sep:
                raise ConfigError(
                    source, "families", f"expected 'module: A, B': {line!r}"
                )
            entries.append({"module": module.strip(), "members": members})
    return _families(source, entries)


def parse_settings(
    raw: Mapping, source: str, root: Path, *, toml: bool = False
) -> Config:
    """Validate one settings table (keys as written in the file). ``toml``:
    the values carry their types, so a string is no list and no number;
    otherwise (setup.cfg, tox.ini, flake8's options) every value is text."""
    split = not toml
    settings = {}
    for key, value in raw.items():
        name = key.replace("_", "-")
        if name in ("select", "ignore", "extend-select", "extend-ignore"):
            settings[name] = _str_list(source, key, value, codes=True, split=split)
        elif name in ("extend-safe-fixes", "extend-unsafe-fixes"):
            codes = _str_list(source, key, value, codes=True, split=split)
            settings[name.replace("-", "_")] = codes
        elif name in ("exclude", "extend-exclude"):
            settings[name] = _exclusions(source, key, value, split=split)
        elif name == "per-file-ignores":
            settings["per_file_ignores"] = _per_file_ignores(source, value, split=split)
        elif name == "line-length":
            if isinstance(value, str) and not toml and value.strip().isdigit():
                value = int(value)
            problem = line_length_problem(value)
            if problem is not None:
                raise ConfigError(source, key, problem)
            settings["line_length"] = value
        elif name in ("families", "extend-families"):
            # A TOML list of tables, or setup.cfg's (and flake8's) lines.
            read = _families_from_cfg if isinstance(value, str) else _families
            settings[name.replace("-", "_")] = read(source, value)
        elif name == "max-file-size":
            if isinstance(value, str) and not toml and value.strip().isdigit():
                value = int(value)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(source, key, "expected a size in MiB")
            size = value
            if size < 1:
                raise ConfigError(source, key, "expected a size in MiB (1 or more)")
            settings["max_file_size_mb"] = size
        elif name == "vllm-source":
            if not isinstance(value, str) or not value.strip():
                raise ConfigError(source, key, "expected a path")
            settings["vllm_source"] = root / value.strip()
        elif name == "fix-formatter":
            if value not in FIX_FORMATTERS:
                raise ConfigError(
                    source, key, f"expected one of {', '.join(FIX_FORMATTERS)}"
                )
            settings["fix_formatter"] = value
        elif name in ("strict", "respect-gitignore", "discover-families"):
            settings[name.replace("-", "_")] = _bool(source, key, value)
        else:
            raise ConfigError(source, None, f"unknown setting '{key}'")
    config = Config(root=root, source=source)
    select = settings.pop("select", config.select) + settings.pop("extend-select", ())
    ignore = settings.pop("ignore", ()) + settings.pop("extend-ignore", ())
    exclude = settings.pop("exclude", ()) + settings.pop("extend-exclude", ())
    families = settings.pop("families", config.families) + settings.pop(
        "extend_families", ()
    )
    return replace(
        config,
        select=select,
        ignore=ignore,
        exclude=exclude,
        families=families,
        **settings,
    )


def read_config_file(path: Path) -> Mapping | None:
    """The tool's section of ``path``, or None when it has none."""
    # Imported here: most runs find no configuration file to parse.
    import configparser

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    source = str(path)
    try:
        if path.suffix == ".toml":
            with open(path, "rb") as f:
                data = tomllib.load(f)
            return data.get("tool", {}).get(SECTION)
        parser = configparser.ConfigParser(interpolation=None)
        # read_file, not read(): read() passes over a file it cannot open.
        with open(path, encoding="utf-8") as f:
            parser.read_file(f, source)
        if parser.has_section(SECTION):
            return dict(parser.items(SECTION))
        return None
    except FileNotFoundError:
        raise ConfigError(source, None, "not found") from None
    except IsADirectoryError:
        raise ConfigError(source, None, "is a folder, not a settings file") from None
    except (OSError, UnicodeDecodeError) as e:
        reason = getattr(e, "strerror", None) or str(e)
        raise ConfigError(source, None, f"cannot read: {reason}") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(*_toml_error(source, e)) from None
    except configparser.Error as e:
        raise ConfigError(*_ini_error(source, e)) from None


def _ini_error(source: str, error: Exception) -> tuple[str, None, str]:
    """``file:line`` and the reason, in words of our own: configparser's
    messages repeat the file and differ between Python versions."""
    import configparser

    if isinstance(error, configparser.MissingSectionHeaderError):
        line, reason = error.lineno, "a setting before the first [section] header"
    elif isinstance(error, configparser.ParsingError):
        line = error.errors[0][0]
        reason = "a line that is not a [section] header, a setting or a comment"
    elif isinstance(error, configparser.DuplicateOptionError):
        line = error.lineno
        reason = f"'{error.option}' given twice in [{error.section}]"
    else:  # configparser.DuplicateSectionError: read_file raises no other
        line, reason = error.lineno, f"[{error.section}] given twice"
    return f"{source}:{line}", None, f"not a valid INI file: {reason}"


def _toml_error(source: str, error: ValueError) -> tuple[str, None, str]:
    """``file:line:column`` and tomllib's reason, without its own position."""
    message = str(error)
    match = re.search(r"\s*\(at line (\d+), column (\d+)\)", message)
    if match:
        source = f"{source}:{match.group(1)}:{match.group(2)}"
        message = message[: match.start()] + message[match.end() :]
    elif "(at end of document)" in message:
        message = message.replace(" (at end of document)", " at the end of the file")
    return source, None, f"invalid TOML: {message}"


def find_config(start: Path) -> Path | None:
    # realpath, not resolve(): a link loop given as a path is the reader's
    # to report (VSL900), not an error here.
    start = Path(os.path.realpath(start))
    folder = start if start.is_dir() else start.parent
    for candidate in (folder, *folder.parents):
        for name in ("pyproject.toml", "setup.cfg", "tox.ini"):
            path = candidate / name
            if path.is_file() and read_config_file(path) is not None:
                return path
    return None


def load_config(start: Path, explicit: Path | None = None) -> Config:
    path = explicit or find_config(start)
    if path is None:
        return Config()
    raw = read_config_file(path)
    if raw is None:
        section = f"[tool.{SECTION}]" if path.suffix == ".toml" else f"[{SECTION}]"
        raise ConfigError(str(path), None, f"has no {section} section")
    toml = path.suffix == ".toml"
    return parse_settings(raw, str(path), path.resolve().parent, toml=toml)
