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

from vllm_spec_lint.model.class_tests import TypeTest
from vllm_spec_lint.model.facts import excludes
from vllm_spec_lint.model.hierarchy import Family, short_name
from vllm_spec_lint.model.own_spec import own_spec_class
from vllm_spec_lint.model.semantic_model import SemanticModel
from vllm_spec_lint.repair.plans import FixPlan


@dataclass(frozen=True)
class Report:
    code: str
    node: cst.CSTNode
    message: str
    fix: FixPlan | None = None
    # Why the default mode does not report it (narrowing.py); strict mode does.
    suppressed_by: str | None = None
    # A discovered pair or a stand-in's family is a guess: its fix stays
    # unsafe whatever a project promotes (extend-safe-fixes).
    guessed_family: bool = False
    # A test on a metadata builder's own spec: (its class, the companions it
    # leaves out), for backend pairing across the tree (model/pairing.py).
    own_spec: tuple[str, ...] = ()
    # Codes whose noqa also silences this report: a finding at another
    # rule's site follows that rule's suppressions.
    follows: tuple[str, ...] = ()


@dataclass(frozen=True)
class Example:
    """A VALID or INVALID example; ``module`` is the module it pretends to be."""

    code: str
    module: str | None = None
    # Expected (line, column) of the finding, 1-based; INVALID only.
    position: tuple[int, int] | None = None
    # The finding's message, written out; INVALID only.
    message: str | None = None
    # The code after every fix (unsafe ones too), unformatted; INVALID only.
    fixed: str | None = None


class Rule(cst.BatchableCSTVisitor):
    CODE: ClassVar[str]
    NAME: ClassVar[str]
    SUMMARY: ClassVar[str]
    VALID: ClassVar[list[Example | str]] = []
    INVALID: ClassVar[list[Example | str]] = []

    def __init__(self, model: SemanticModel):
        super().__init__()
        self.model = model
        self.reports: list[Report] = []

    def report(
        self,
        node: cst.CSTNode,
        message: str,
        fix: FixPlan | None = None,
        suppressed_by: str | None = None,
        *,
        family: Family | None = None,
        test: TypeTest | None = None,
        missing: list[str] = (),
        follows: tuple[str, ...] = (),
    ):
        guessed = family is not None and bool(family.evidence or family.stand_in)
        if family is not None and family.evidence:  # a guess: say why
            message += f" (discovered twin: {family.evidence})"
        if family is not None and suppressed_by is None:
            suppressed_by = family.quiet_reason or None
        own_spec = ()
        if test is not None and suppressed_by is None:
            owner = own_spec_class(self.model, test.target)
            if owner is not None:
                own_spec = (owner, *missing)
        self.reports.append(
            Report(
                self.CODE, node, message, fix, suppressed_by, guessed, own_spec, follows
            )
        )

    def suppression(
        self, test: TypeTest, family: Family, missing: list[str]
    ) -> str | None:
        """Why a check that leaves out ``missing`` is fine as written, if it is."""
        return self.model.narrowing.reason(
            test.node, test.target, family, missing, test.positive
        )

    # Shared by the class-test rules (VSL001, VSL002).
    def missing_companions(self, test: TypeTest, family: Family) -> list[str]:
        """Companions a test lets through: those it does not cover and that
        its own decision (its or-chain, earlier elif branches) does not
        take before or after it."""
        hierarchy = self.model.hierarchy
        missing = hierarchy.uncovered(family, test.named, exact=test.exact)
        if missing:
            decision = list(
                self.model.facts.decision(test.node, test.target, test.positive)
            )
            missing = [
                c
                for c in missing
                if not any(excludes(f, c, hierarchy) for f in decision)
            ]
        return missing


def describe(names: list[str]) -> str:
    return ", ".join(short_name(n) for n in names)
