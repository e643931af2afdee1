"""Rule documentation, from one source: each rule class's docstring and
examples. ``vllm-spec-lint rules`` / ``explain``, the SARIF ``help`` text and
the README's rule table are all made here."""

from __future__ import annotations

import inspect
from dataclasses import dataclass

from vllm_spec_lint.core.findings import PARSE_ERROR_CODE


@dataclass(frozen=True)
class RuleDoc:
    code: str
    name: str
    summary: str
    body: str  # what, why, fix and its safety, suppression
    invalid: str = ""  # an example that is reported
    valid: str = ""  # the same done right

    def explain(self) -> str:
        parts = [f"{self.code} ({self.name})", "", self.summary, "", self.body]
        if self.invalid:
            parts += ["", "Reported:", "", _indent(self.invalid)]
        if self.valid:
            parts += ["", "Not reported:", "", _indent(self.valid)]
        return "\n".join(parts).rstrip() + "\n"


PARSE_ERROR_DOC = RuleDoc(
    PARSE_ERROR_CODE,
    "unreadable-file",
    "a file that cannot be read, decoded or parsed",
    inspect.cleandoc(
        """
        Reported for a Python file that cannot be read (missing, unreadable,
        not a regular file, a dangling or looping link), decoded (invalid
        UTF-8, unknown PEP 263 encoding, a NUL byte) or parsed. The finding
        gives the reason and, for syntax errors, the position; the run goes on
        with the other files. Every file is read and decoded; only files that
        mention an anchor class (or a companion's own parent) are parsed, so
        syntax errors elsewhere are not reported: this is not a syntax
        checker.

        Also reported where a statement the rules must read is nested too
        deeply for libcst ("cannot parse: nested too deeply" at its row: more
        than 1,000 levels, an ``and``/``or`` operand counting as one) or for
        the rules' own walk ("cannot analyse: nested too deeply"), and where
        libcst refuses what CPython accepted (thousands of adjacent strings).

        Always reported, as ruff reports syntax errors: ``--select``,
        ``--ignore``, ``per-file-ignores`` and ``# noqa`` do not turn it off.
        Suppress it by excluding the file (``exclude``).

        No fix.
        """
    ),
)


def _indent(text: str) -> str:
    return "\n".join(
        "    " + line if line else "" for line in text.rstrip().split("\n")
    )


def _example_code(example) -> str:
    return example if isinstance(example, str) else example.code


def rule_docs() -> list[RuleDoc]:
    from vllm_spec_lint.rules import ALL_RULES

    docs = [
        RuleDoc(
            rule.CODE,
            rule.NAME,
            rule.SUMMARY,
            inspect.cleandoc(rule.__doc__ or ""),
            _example_code(rule.INVALID[0]) if rule.INVALID else "",
            _example_code(rule.VALID[0]) if rule.VALID else "",
        )
        for rule in ALL_RULES
    ]
    return docs + [PARSE_ERROR_DOC]


def rule_doc(code_or_name: str) -> RuleDoc | None:
    """A rule's documentation by its code (any case) or its name."""
    wanted = code_or_name.strip()
    return next(
        (d for d in rule_docs() if wanted.upper() == d.code or wanted == d.name),
        None,
    )


def markdown_table() -> str:
    """The README's rule table."""
    rows = ["| code | name | what it finds |", "|---|---|---|"]
    rows += [
        f"| {d.code} | `{d.name}` | {d.summary.replace('|', chr(92) + '|')} |"
        for d in rule_docs()
    ]
    return "\n".join(rows) + "\n"


def _markdown(text: str) -> str:
    """The docstrings' reStructuredText literals as Markdown code."""
    return text.replace("``", "`")


def rule_page(doc: RuleDoc) -> str:
    """``docs/rules/CODE.md``: what ruff's rule pages say, from the rule."""
    from vllm_spec_lint.core.settings import RULE_NAMES

    assert RULE_NAMES[doc.code] == doc.name
    if doc.code == PARSE_ERROR_CODE:
        fix = "No fix."
    else:
        fix = (
            "Fix is sometimes available, and always **unsafe**: it changes which "
            "values the code admits. `--unsafe-fixes`, `codemod "
            "add-sliding-window-mla` and the `vllm-spec-lint-fix` pre-commit hook "
            "apply it; `extend-safe-fixes` promotes it for a project that reviews "
            "every fix."
        )
    parts = [
        f"# {doc.name} ({doc.code})",
        "",
        f"_{_markdown(doc.summary)}_",
        "",
        fix,
        "",
        "## What it does, and why",
        "",
        _markdown(doc.body),
    ]
    if doc.invalid:
        parts += ["", "## Reported", "", "```python", doc.invalid.rstrip(), "```"]
    if doc.valid:
        parts += ["", "## Not reported", "", "```python", doc.valid.rstrip(), "```"]
    parts += [
        "",
        "## Options",
        "",
        f"`vllm-spec-lint explain {doc.code}` prints this page; "
        "[configuration](../configuration.md) lists the settings.",
    ]
    return "\n".join(parts) + "\n"


def hierarchy_page() -> str:
    """``docs/hierarchy.md``: vLLM's spec hierarchy as the tool knows it
    without a tree (its built-in defaults), drawn by ``families``."""
    from vllm_spec_lint.core.settings import Config
    from vllm_spec_lint.faces.hierarchy_graph import mermaid
    from vllm_spec_lint.model.hierarchy import ClassHierarchy

    config = Config()
    hierarchy = ClassHierarchy.default()
    classes = sorted(hierarchy.classes())
    return (
        "# vLLM's KV-cache spec hierarchy\n\n"
        "The classes and the family the checks are about, as `vllm-spec-lint "
        "families --output-format mermaid` draws them from the built-in "
        "defaults (run it in a vLLM checkout for that release's classes; "
        "`--output-format dot` gives graphviz). The dashed line joins the "
        "anchor and its companion: the same cache layout, not a subclass.\n\n"
        "```mermaid\n" + mermaid(hierarchy, classes, config.families) + "```\n"
    )


def documentation_pages() -> dict[str, str]:
    """Every generated page, by its path under ``docs/``."""
    pages = {f"rules/{d.code}.md": rule_page(d) for d in rule_docs()}
    pages["hierarchy.md"] = hierarchy_page()
    return pages
