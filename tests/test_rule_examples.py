"""Every rule's VALID and INVALID examples, run as tests (as Fixit does)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from vllm_spec_lint.core.analysis import analyze_source
from vllm_spec_lint.core.fixing import fix_source
from vllm_spec_lint.core.settings import Config
from vllm_spec_lint.model.hierarchy import (
    ClassHierarchy,
    read_class_bases,
    read_declared,
)
from vllm_spec_lint.rules import ALL_RULES
from vllm_spec_lint.rules.base import Example

pytestmark = pytest.mark.fast


def _examples(kind: str) -> list:
    return list(_iter_examples(kind))


def _iter_examples(kind: str):
    for rule in ALL_RULES:
        for i, example in enumerate(getattr(rule, kind)):
            if isinstance(example, str):
                example = Example(example)
            yield pytest.param(rule, example, id=f"{rule.CODE}-{kind.lower()}-{i}")


def _hierarchy(example: Example) -> ClassHierarchy | None:
    """An example that is a family's module (``module=``) is the hierarchy
    read from it, as a scanned vLLM tree's is: its classes, and the layout
    properties they declare (VSL008)."""
    families = Config().families
    if example.module not in {f.module for f in families}:
        return None
    return ClassHierarchy.default().with_module(
        example.module,
        read_class_bases(example.code),
        "example.py",
        "scanned tree",
        read_declared(example.code, {f.property_name for f in families}),
    )


def _run(example: Example):
    return analyze_source(
        example.code,
        "example.py",
        Config(),
        _hierarchy(example),
        module_name=example.module,
    ).findings


@pytest.mark.parametrize("rule, example", _examples("VALID"))
def test_valid_example_has_no_finding(rule, example):
    assert [f for f in _run(example)] == []


@pytest.mark.parametrize("rule, example", _examples("INVALID"))
def test_invalid_example_is_reported_by_its_rule(rule, example):
    found = _run(example)
    assert [f.code for f in found] == [rule.CODE]
    if example.position:
        assert found[0].location == example.position
    if example.message:
        assert found[0].message == example.message


@pytest.mark.parametrize("rule, example", _examples("INVALID"))
def test_invalid_example_of_a_discovered_family_says_it_is_a_guess(rule, example):
    """The same families, as if discovered: each finding names the evidence,
    and its fix stays unsafe even where the project marks the rule's safe."""
    guessed = tuple(replace(f, evidence="a guess") for f in Config().families)
    config = Config(families=guessed, extend_safe_fixes=(rule.CODE,))
    [found] = analyze_source(
        example.code,
        "example.py",
        config,
        _hierarchy(example),
        module_name=example.module,
    ).findings
    assert found.message.endswith(" (discovered twin: a guess)")
    if found.fix is not None:
        assert found.fix.applicability == "unsafe"


@pytest.mark.parametrize(
    "rule, example",
    [p for p in _examples("INVALID") if p.values[1].fixed is not None],
)
def test_invalid_example_is_fixed_as_written(rule, example):
    outcome = fix_source(
        example.code,
        "example.py",
        Config(),
        _hierarchy(example),
        module_name=example.module,
        unsafe=True,
    )
    assert (outcome.failure, outcome.text) == (None, example.fixed)


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.CODE)
def test_every_rule_is_documented_with_examples(rule):
    assert rule.__doc__ and "Suppress" in rule.__doc__ and "Fix" in rule.__doc__
    assert rule.VALID and rule.INVALID
    assert rule.CODE.startswith("VSL") and rule.SUMMARY
