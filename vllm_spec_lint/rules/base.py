"""What every rule is: a libcst visitor that reports what it finds.

A rule only describes: the node to point at, a message, and optionally how
the code would be repaired (a :class:`FixPlan`). Positions, noqa, selection,
fix edits and output are the analysis core's business.

Each rule module's class docstring is its documentation (``vllm-spec-lint
explain CODE``); ``VALID`` and ``INVALID`` are examples the test suite runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import libcst as cst

from vllm_spec_lint.families import Family, short_name
from vllm_spec_lint.rewrite import FixPlan
from vllm_spec_lint.semantics import FileContext, TypeTest


@dataclass(frozen=True)
class Report:
    code: str
    node: cst.CSTNode
    message: str
    fix: FixPlan | None = None
    # Why the default mode does not report it (narrowing.py); strict mode does.
    suppressed_by: str | None = None


@dataclass(frozen=True)
class Example:
    """A VALID or INVALID example; ``module`` is the module it pretends to be."""

    code: str
    module: str | None = None
    # Expected (line, column) of the finding, 1-based; INVALID only.
    position: tuple[int, int] | None = None


class Rule(cst.BatchableCSTVisitor):
    CODE: ClassVar[str]
    NAME: ClassVar[str]
    SUMMARY: ClassVar[str]
    VALID: ClassVar[list[Example | str]] = []
    INVALID: ClassVar[list[Example | str]] = []

    def __init__(self, context: FileContext):
        super().__init__()
        self.context = context
        self.reports: list[Report] = []

    def report(
        self,
        node: cst.CSTNode,
        message: str,
        fix: FixPlan | None = None,
        suppressed_by: str | None = None,
    ):
        self.reports.append(Report(self.CODE, node, message, fix, suppressed_by))

    def suppression(
        self, test: TypeTest, family: Family, missing: list[str]
    ) -> str | None:
        """Why a check that leaves out ``missing`` is fine as written, if it is."""
        return self.context.narrowing.reason(
            test.node, test.target, family, missing, test.positive
        )

    # Shared by the class-test rules (VSL001, VSL002).
    def missing_companions(self, test: TypeTest, family: Family) -> list[str]:
        """Companions a test lets through once its chain and earlier elif
        branches are taken into account."""
        ctx = self.context
        missing = set(ctx.hierarchy.uncovered(family, test.named, exact=test.exact))
        if missing:
            for other in (
                *ctx.chain_alternatives(test),
                *ctx.earlier_branch_tests(test),
            ):
                missing &= set(
                    ctx.hierarchy.uncovered(family, other.named, exact=other.exact)
                )
        return [c for c in family.companions if c in missing]


def describe(names: list[str]) -> str:
    return ", ".join(short_name(n) for n in names)
