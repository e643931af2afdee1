"""Codemods, for ``vllm-spec-lint codemod NAME`` and for libcst's own runner::

    python -m libcst.tool codemod -x --no-format \\
        vllm_spec_lint.faces.codemods.AddSlidingWindowMLA PATH
    python -m libcst.tool codemod -x --no-format \\
        vllm_spec_lint.faces.codemods.NixlMlaRegion PATH

(``-x``: named in full, no ``.libcst.codemod.yaml`` needed). Both faces
call the same fix engine as ``vllm-spec-lint fix``; ``--no-format`` because the
codemods lay out what they change themselves, with ruff's range formatting,
and nothing else in the file may move.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from pathlib import Path

import libcst as cst
from libcst.codemod import CodemodCommand, SkipFile
from libcst.metadata import MetadataWrapper, PositionProvider

from vllm_spec_lint.core.fixing import fix_source
from vllm_spec_lint.core.settings import Config
from vllm_spec_lint.edges.config import load_config
from vllm_spec_lint.edges.files import ends_with_path
from vllm_spec_lint.model.hierarchy import ClassHierarchy
from vllm_spec_lint.model.syntax import code_of
from vllm_spec_lint.repair.formatting import formatter_for

NIXL_WORKER = "vllm/distributed/kv_transfer/kv_connector/v1/nixl/base_worker.py"


@functools.cache
def _settings_for(folder: Path) -> tuple[Config, ClassHierarchy]:
    from vllm_spec_lint.edges.hierarchy_sources import load_hierarchy

    config = load_config(folder)
    return config, load_hierarchy([folder], [], config, [])


def _fix_text(
    text: str, filename: str | None, select=lambda f: True, strict: bool = False
):
    path = Path(filename) if filename else Path("<module>")
    config, hierarchy = _settings_for(path.absolute().parent)
    if strict:
        config = replace(config, strict=True)
    from vllm_spec_lint.edges.discovery import module_name_for

    return fix_source(
        text,
        str(path),
        config,
        hierarchy,
        module_name=module_name_for(path) if filename else None,
        formatter=formatter_for(str(path), config.line_length, config.fix_formatter),
        select=select,
        # A codemod is a run a person asked for and reviews as a diff: the
        # fixes that change behaviour (all of them) are what it is for.
        unsafe=True,
    )


class AddSlidingWindowMLA(CodemodCommand):
    DESCRIPTION = (
        "Add SlidingWindowMLASpec next to MLAAttentionSpec in every check that "
        "leaves it out (the fixes of VSL001-VSL006, which change behaviour: "
        "review the diff), with its import."
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        text = tree.code
        outcome = _fix_text(text, self.context.filename)
        if outcome.failure:
            raise RuntimeError(outcome.failure)
        if outcome.text == text:
            raise SkipFile("nothing to fix")
        return cst.parse_module(outcome.text)


@dataclass(frozen=True)
class NixlOutcome:
    status: str  # "applied", "already applied" or "not found"
    text: str
    detail: str = ""


class MlaRegionLocator(cst.CSTVisitor):
    """Finds each ``is_mla_region = isinstance(layer_spec, ...)`` inside
    ``register_kv_caches`` (one per branch when the value depends on one),
    and where its class expression starts."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self) -> None:
        super().__init__()
        self._inside = 0
        self.checks: list[cst.Call] = []
        self.classinfo_positions: list[tuple[int, int]] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._inside += node.name.value == "register_kv_caches"

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._inside -= original_node.name.value == "register_kv_caches"

    def visit_Assign(self, node: cst.Assign) -> None:
        if self._inside and _is_mla_region(node):
            self.checks.append(node.value)
            start = self.get_metadata(PositionProvider, node.value.args[1].value).start
            self.classinfo_positions.append((start.line, start.column + 1))


def _is_mla_region(node: cst.Assign) -> bool:
    value = node.value
    return (
        len(node.targets) == 1
        and isinstance(node.targets[0].target, cst.Name)
        and node.targets[0].target.value == "is_mla_region"
        and isinstance(value, cst.Call)
        and isinstance(value.func, cst.Name)
        and value.func.value == "isinstance"
        and len(value.args) == 2
        and isinstance(value.args[0].value, cst.Name)
        and value.args[0].value.value == "layer_spec"
    )


def nixl_mla_region(text: str, filename: str | None) -> NixlOutcome:
    """The PR #45831 change on one file's text, and nothing else."""
    locator = MlaRegionLocator()
    MetadataWrapper(cst.parse_module(text)).visit(locator)
    if not locator.checks:
        return NixlOutcome(
            "not found",
            text,
            "no `is_mla_region = isinstance(layer_spec, ...)` in "
            "register_kv_caches: vLLM may have moved this code",
        )
    named = [code_of(check.args[1].value) for check in locator.checks]
    if all("SlidingWindowMLASpec" in classinfo for classinfo in named):
        return NixlOutcome("already applied", text)
    # Every such check that leaves the companion out: a branch left as it
    # was would keep the bug for the layers that take it.
    # Strict: the PR's site is the bug whatever the default mode infers from
    # the function around it (a branch fixed by hand is not a deliberate
    # handling of the other branch's layers).
    result = _fix_text(
        text,
        filename,
        select=lambda f: (
            f.code == "VSL001" and f.location in locator.classinfo_positions
        ),
        strict=True,
    )
    if result.failure is None and result.text != text:
        return NixlOutcome("applied", result.text)
    reason = result.failure or "the check is not reported as fixable"
    return NixlOutcome("not found", text, reason)


class NixlMlaRegion(CodemodCommand):
    DESCRIPTION = (
        "vLLM PR #45831: in the NIXL worker's register_kv_caches, make "
        "`is_mla_region` cover SlidingWindowMLASpec and import it."
    )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        filename = self.context.filename
        # Whole names: "myvllm/distributed/..." is another package's.
        if filename and not ends_with_path(filename, NIXL_WORKER):
            raise SkipFile(f"not the NIXL worker ({NIXL_WORKER})")
        outcome = nixl_mla_region(tree.code, filename)
        if outcome.status == "not found":
            raise RuntimeError(outcome.detail)
        if outcome.status == "already applied":
            raise SkipFile("already applied")
        return cst.parse_module(outcome.text)


CODEMODS = {
    "add-sliding-window-mla": AddSlidingWindowMLA,
    "nixl-mla-region": NixlMlaRegion,
}
