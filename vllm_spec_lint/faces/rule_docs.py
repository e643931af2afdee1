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
        not a regular file), decoded (invalid UTF-8, unknown PEP 263 encoding)
        or parsed. The finding gives the reason and, for syntax errors, the
        position; the run goes on with the other files. Files that never
        mention an anchor class are not parsed, so their syntax errors are not
        reported: this is not a syntax checker.

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


def rule_doc(code: str) -> RuleDoc | None:
    return next((d for d in rule_docs() if d.code == code.upper()), None)


def markdown_table() -> str:
    """The README's rule table."""
    rows = ["| code | name | what it finds |", "|---|---|---|"]
    rows += [
        f"| {d.code} | `{d.name}` | {d.summary.replace('|', chr(92) + '|')} |"
        for d in rule_docs()
    ]
    return "\n".join(rows) + "\n"
