"""The layout property (issue #45): every rewrite form is equivalent to the
class test it replaces, and the codemod migrates a tree once, leaving
deliberate sites alone."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import run_cli
from vllm_spec_lint.core.analysis import analyze_source
from vllm_spec_lint.core.fixing import fix_source
from vllm_spec_lint.core.settings import Config
from vllm_spec_lint.model.hierarchy import (
    ClassHierarchy,
    Family,
    read_class_bases,
    read_declared,
)

INTERFACE = "vllm.v1.kv_cache_interface"

# vLLM's shape, as the codemod leaves it (the property declared), and a
# plugin's stand-ins and own classes below it.
CLASSES = """\
class KVCacheSpec:
    @property
    def uses_mla_layout(self) -> bool:
        return False


class AttentionSpec(KVCacheSpec):
    pass


class FullAttentionSpec(AttentionSpec):
    pass


class MLAAttentionSpec(FullAttentionSpec):
    @property
    def uses_mla_layout(self) -> bool:
        return True


class SlidingWindowSpec(AttentionSpec):
    pass


class SlidingWindowMLASpec(SlidingWindowSpec):
    @property
    def uses_mla_layout(self) -> bool:
        return True


class MambaSpec(KVCacheSpec):
    pass


class AscendMLAAttentionSpec(MLAAttentionSpec):
    pass


class AscendSlidingWindowMLASpec(SlidingWindowMLASpec):
    pass


class PluginWindowSpec(SlidingWindowSpec):
    pass
"""

# Each function holds one class test; the comment names the form its
# rewrite takes.
TESTS = """

def whole(x):  # guarded
    return isinstance(x, (MLAAttentionSpec, SlidingWindowMLASpec))


def union(x):  # guarded, from a union
    return isinstance(x, MLAAttentionSpec | SlidingWindowMLASpec)


def negated(x):  # guarded, parenthesized under not
    return not isinstance(x, (SlidingWindowMLASpec, MLAAttentionSpec))


def with_others(x):  # others or guarded
    return isinstance(x, (MLAAttentionSpec, MambaSpec, SlidingWindowMLASpec))


def with_others_in_and(x, flag=True):  # parenthesized in and
    return flag and isinstance(x, (MLAAttentionSpec, SlidingWindowMLASpec, MambaSpec))


def annotated(x: KVCacheSpec):  # known spec
    return isinstance(x, (MLAAttentionSpec, SlidingWindowMLASpec))


def annotated_with_others(x: KVCacheSpec):  # others or known spec
    return isinstance(x, (MambaSpec, MLAAttentionSpec, SlidingWindowMLASpec))


def narrowed(x):  # known spec by the same decision
    return isinstance(x, AttentionSpec) and not isinstance(x, MLAAttentionSpec)


def values(specs: dict[str, KVCacheSpec]):  # known spec: an annotated dict's value
    return [isinstance(s, MLAAttentionSpec) for s in specs.values()]


class Holder:
    def __init__(self, kv_cache_spec):
        self.kv_cache_spec = kv_cache_spec

    def layout(self):  # known spec: a kv_cache_spec attribute
        return isinstance(self.kv_cache_spec, (MLAAttentionSpec, SlidingWindowMLASpec))


def partial(x):  # leaves the companion out: unsafe, the whole family's answer
    return isinstance(x, MLAAttentionSpec)


def swept(x):  # a companion's parent's test (VSL007): the layout excluded
    if isinstance(x, SlidingWindowSpec):
        return False
    return True


def exact(x):  # exact type: unsafe, subclasses pass too
    return type(x) is MLAAttentionSpec


def exact_negated(x, flag=False):  # not, parenthesized, in or
    return flag or type(x) is not MLAAttentionSpec


def exact_whole(specs: list[KVCacheSpec]):  # known spec: a generator's element
    return all(type(s) in [MLAAttentionSpec, SlidingWindowMLASpec] for s in specs)
"""

REWRITTEN = """

def whole(x):  # guarded
    return isinstance(x, KVCacheSpec) and x.uses_mla_layout


def union(x):  # guarded, from a union
    return isinstance(x, KVCacheSpec) and x.uses_mla_layout


def negated(x):  # guarded, parenthesized under not
    return not (isinstance(x, KVCacheSpec) and x.uses_mla_layout)


def with_others(x):  # others or guarded
    return isinstance(x, MambaSpec) or (isinstance(x, KVCacheSpec) and x.uses_mla_layout)


def with_others_in_and(x, flag=True):  # parenthesized in and
    return flag and (isinstance(x, MambaSpec) or (isinstance(x, KVCacheSpec) and x.uses_mla_layout))


def annotated(x: KVCacheSpec):  # known spec
    return x.uses_mla_layout


def annotated_with_others(x: KVCacheSpec):  # others or known spec
    return isinstance(x, MambaSpec) or x.uses_mla_layout


def narrowed(x):  # known spec by the same decision
    return isinstance(x, AttentionSpec) and not x.uses_mla_layout


def values(specs: dict[str, KVCacheSpec]):  # known spec: an annotated dict's value
    return [s.uses_mla_layout for s in specs.values()]


class Holder:
    def __init__(self, kv_cache_spec):
        self.kv_cache_spec = kv_cache_spec

    def layout(self):  # known spec: a kv_cache_spec attribute
        return self.kv_cache_spec.uses_mla_layout


def partial(x):  # leaves the companion out: unsafe, the whole family's answer
    return isinstance(x, KVCacheSpec) and x.uses_mla_layout


def swept(x):  # a companion's parent's test (VSL007): the layout excluded
    if isinstance(x, SlidingWindowSpec) and not x.uses_mla_layout:
        return False
    return True


def exact(x):  # exact type: unsafe, subclasses pass too
    return isinstance(x, KVCacheSpec) and x.uses_mla_layout


def exact_negated(x, flag=False):  # not, parenthesized, in or
    return flag or not (isinstance(x, KVCacheSpec) and x.uses_mla_layout)


def exact_whole(specs: list[KVCacheSpec]):  # known spec: a generator's element
    return all(s.uses_mla_layout for s in specs)
"""

SPEC_CLASSES = [
    "KVCacheSpec", "AttentionSpec", "FullAttentionSpec", "MLAAttentionSpec",
    "SlidingWindowSpec", "SlidingWindowMLASpec", "MambaSpec",
    "AscendMLAAttentionSpec", "AscendSlidingWindowMLASpec", "PluginWindowSpec",
]  # fmt: skip
# The forms that read the property unguarded hold for the values the model
# knows the test can see: specs.
KNOWN_SPEC = {"annotated", "annotated_with_others", "values", "layout"}


def _hierarchy(source: str, properties=("uses_mla_layout",)) -> ClassHierarchy:
    return ClassHierarchy.default().with_module(
        INTERFACE,
        read_class_bases(source),
        "kv.py",
        "scanned tree",
        read_declared(source, set(properties)),
    )


def _rewritten(unsafe: bool) -> str:
    source = CLASSES + TESTS
    outcome = fix_source(
        source, "kv.py", Config(), _hierarchy(source), module_name=INTERFACE,
        unsafe=unsafe,
    )  # fmt: skip
    assert outcome.failure is None
    return outcome.text


# The tests that leave the companion out (or sweep it in), as VSL001's
# (VSL007's) fix writes them: what their rewrite must answer.
WHOLE_FAMILY = """

def narrowed(x):
    return isinstance(x, AttentionSpec) and not isinstance(
        x, (MLAAttentionSpec, SlidingWindowMLASpec)
    )


def values(specs):
    return [isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec)) for s in specs.values()]


def partial(x):
    return isinstance(x, (MLAAttentionSpec, SlidingWindowMLASpec))


def swept(x):
    if isinstance(x, SlidingWindowSpec) and not isinstance(x, SlidingWindowMLASpec):
        return False
    return True
"""


def _namespaces() -> tuple[dict, dict]:
    """The tests before and after, over one set of classes."""
    classes: dict = {}
    exec(compile(CLASSES, "kv.py", "exec"), classes)
    before, after = dict(classes), dict(classes)
    exec(compile(TESTS + WHOLE_FAMILY, "before.py", "exec"), before)
    exec(compile(REWRITTEN, "after.py", "exec"), after)
    return before, after


def _calls(namespace: dict, name: str, value):
    if name == "values":
        return namespace["values"]({"layer": value})
    if name == "layout":
        return namespace["Holder"](value).layout()
    return namespace[name](value)


def test_the_codemod_rewrites_every_form_as_written():
    assert _rewritten(unsafe=True) == CLASSES + REWRITTEN


def test_without_unsafe_fixes_the_test_leaving_a_companion_out_stays():
    rewritten = _rewritten(unsafe=False)
    assert "    return isinstance(x, MLAAttentionSpec)\n" in rewritten
    # Exact comparisons change behaviour whatever they name: each stays.
    assert rewritten.endswith(
        "    return type(x) is MLAAttentionSpec\n"
        + TESTS.partition("    return type(x) is MLAAttentionSpec\n")[2]
    )
    # partial, values, narrowed, swept and the three exact ones: each stays.
    assert (
        rewritten.count("uses_mla_layout")
        == (CLASSES + REWRITTEN).count("uses_mla_layout") - 7
    )


@pytest.mark.parametrize(
    "name",
    ["whole", "union", "negated", "with_others", "with_others_in_and", "annotated",
     "annotated_with_others", "narrowed", "values", "layout", "partial", "swept"],
)  # fmt: skip
def test_every_rewritten_test_gives_the_same_answer_for_every_value(name):
    before, after = _namespaces()
    specs = [before[c]() for c in SPEC_CLASSES]
    values = specs if name in KNOWN_SPEC else [*specs, None, 1, object(), "spec"]
    for value in values:
        expected = _calls(before, name, value)
        assert _calls(after, name, value) == expected, (name, type(value).__name__)


@pytest.mark.parametrize(
    ("name", "changed"),
    [
        # The companion, and subclasses of the anchor and of the companion.
        ("exact", ["SlidingWindowMLASpec", "AscendMLAAttentionSpec",
                   "AscendSlidingWindowMLASpec"]),
        ("exact_negated", ["SlidingWindowMLASpec", "AscendMLAAttentionSpec",
                           "AscendSlidingWindowMLASpec"]),
        # The whole family named: their subclasses only.
        ("exact_whole", ["AscendMLAAttentionSpec", "AscendSlidingWindowMLASpec"]),
    ],
)  # fmt: skip
def test_the_rewrite_of_an_exact_comparison_changes_the_subclasses_only(name, changed):
    before, after = _namespaces()
    differ = []
    for cls in SPEC_CLASSES:
        value = [before[cls]()] if name == "exact_whole" else before[cls]()
        if before[name](value) != after[name](value):
            differ.append(cls)
    assert differ == changed
    if name != "exact_whole":  # the guarded forms: no other value changes
        for value in (None, 1, object(), "spec"):
            assert before[name](value) == after[name](value), value


def test_the_rewrite_of_a_test_leaving_a_companion_out_changes_the_companion_only():
    classes: dict = {}
    exec(compile(CLASSES + TESTS, "before.py", "exec"), classes)
    after = dict(classes)
    exec(compile(REWRITTEN, "after.py", "exec"), after)
    changed = [
        c for c in SPEC_CLASSES
        if classes["partial"](classes[c]()) != after["partial"](classes[c]())
    ]  # fmt: skip
    assert changed == ["SlidingWindowMLASpec", "AscendSlidingWindowMLASpec"]


# -- the codemod over a tree ---------------------------------------------------

TREE_INTERFACE = '''\
from dataclasses import dataclass


@dataclass(frozen=True)
class KVCacheSpec:
    block_size: int

    @property
    def has_layer_views(self) -> bool:
        """Whether generic allocation creates per-layer cache views."""
        return True


@dataclass(frozen=True)
class AttentionSpec(KVCacheSpec):
    num_kv_heads: int


@dataclass(frozen=True)
class FullAttentionSpec(AttentionSpec):
    pass


@dataclass(frozen=True)
class MLAAttentionSpec(FullAttentionSpec):
    cache_dtype_str: str | None = None


@dataclass(frozen=True)
class SlidingWindowSpec(AttentionSpec):
    sliding_window: int


@dataclass(frozen=True)
class SlidingWindowMLASpec(SlidingWindowSpec):
    pass
'''

TREE_USER = """\
from vllm.v1.kv_cache_interface import (
    AttentionSpec,
    KVCacheSpec,
    MLAAttentionSpec,
    SlidingWindowMLASpec,
    SlidingWindowSpec,
)


def is_mla_region(layer_spec) -> bool:
    return isinstance(layer_spec, (MLAAttentionSpec, SlidingWindowMLASpec))


def page_rows(spec: KVCacheSpec) -> int:
    if isinstance(spec, MLAAttentionSpec):
        return 1
    return 2


def checked(spec: AttentionSpec) -> None:
    assert isinstance(spec, MLAAttentionSpec), "MLA only"


def chosen(spec: KVCacheSpec) -> bool:
    return isinstance(spec, MLAAttentionSpec)  # noqa: VSL001 MLA proper only


def replicated(specs: list[KVCacheSpec]) -> bool:
    return all(type(spec) is MLAAttentionSpec for spec in specs)


def write_mode(groups) -> None:
    if any(isinstance(g.kv_cache_spec, SlidingWindowSpec) for g in groups):
        raise NotImplementedError("WRITE mode does not support sliding window")
"""

DECLARED_ON_ROOT = '''
    @property
    def uses_mla_layout(self) -> bool:
        """Whether this cache uses the MLAAttentionSpec layout.

        SlidingWindowMLASpec has this layout without subclassing
        MLAAttentionSpec: ask this property instead of testing for classes, so
        that a new class with the layout sets it once rather than joining every
        isinstance() check.
        """
        return False
'''

OVERRIDE = """
    @property
    def uses_mla_layout(self) -> bool:
        return True
"""


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "vllm" / "v1").mkdir(parents=True)
    (tmp_path / "vllm" / "v1" / "kv_cache_interface.py").write_text(TREE_INTERFACE)
    (tmp_path / "vllm" / "v1" / "user.py").write_text(TREE_USER)
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 88\n")
    return tmp_path


def test_the_codemod_declares_the_property_on_the_family_only(tree):
    out = run_cli("codemod", "layout-property", ".", cwd=tree)
    assert out.returncode == 0, out.stderr
    interface = (tree / "vllm" / "v1" / "kv_cache_interface.py").read_text()
    expected = TREE_INTERFACE.replace(
        "        return True\n", "        return True\n" + DECLARED_ON_ROOT, 1
    )
    expected = expected.replace(
        "    cache_dtype_str: str | None = None\n",
        "    cache_dtype_str: str | None = None\n" + OVERRIDE,
    )
    expected = expected.rstrip("\n") + "\n" + OVERRIDE
    assert interface == expected


def test_the_codemod_rewrites_the_whole_family_and_keeps_the_rest(tree):
    out = run_cli("codemod", "layout-property", ".", cwd=tree)
    user = (tree / "vllm" / "v1" / "user.py").read_text()
    assert (
        "    return isinstance(layer_spec, KVCacheSpec) and layer_spec.uses_mla_layout\n"
        in user
    )
    for kept in (
        "    if isinstance(spec, MLAAttentionSpec):\n",
        '    assert isinstance(spec, MLAAttentionSpec), "MLA only"\n',
        "    return isinstance(spec, MLAAttentionSpec)  # noqa: VSL001 MLA proper only\n",
    ):
        assert kept in user
    assert "    SlidingWindowMLASpec,\n" not in user  # its import left unused: gone
    assert out.stderr.splitlines() == [
        "2 files checked, 2 changed",
        "declared: vllm/v1/kv_cache_interface.py: uses_mla_layout on KVCacheSpec "
        "(False), "
        "MLAAttentionSpec (True), SlidingWindowMLASpec (True)",
        "rewritten: 1 test",
        "  VSL008: 1 (names the whole family)",
        "kept: 5 tests",
        "  VSL001: 1 (assert)",
        "  VSL001: 1 (changes behaviour: --unsafe-fixes rewrites it)",
        "  VSL001: 1 (noqa)",
        "  VSL002: 1 (changes behaviour: --unsafe-fixes rewrites it)",
        "  VSL007: 1 (changes behaviour: --unsafe-fixes rewrites it)",
    ]


def test_with_unsafe_fixes_the_reported_test_is_rewritten_too(tree):
    out = run_cli("codemod", "layout-property", "--unsafe-fixes", ".", cwd=tree)
    assert out.returncode == 0, out.stderr
    user = (tree / "vllm" / "v1" / "user.py").read_text()
    assert "    if spec.uses_mla_layout:\n" in user
    assert "    return all(spec.uses_mla_layout for spec in specs)\n" in user
    # A test of the companion's parent excludes the layout, not the class.
    assert (
        "    if any(\n"
        "        isinstance(g.kv_cache_spec, SlidingWindowSpec)\n"
        "        and not g.kv_cache_spec.uses_mla_layout\n"
        "        for g in groups\n"
        "    ):\n"
    ) in user
    assert out.stderr.splitlines()[2:] == [
        "rewritten: 4 tests",
        "  VSL001: 1 (leaves a companion out)",
        "  VSL002: 1 (leaves a companion out)",
        "  VSL007: 1 (excludes the companion)",
        "  VSL008: 1 (names the whole family)",
        "kept: 2 tests",
        "  VSL001: 1 (assert)",
        "  VSL001: 1 (noqa)",
    ]


def test_a_second_run_changes_nothing_and_check_is_clean_at_the_rewrites(tree):
    run_cli("codemod", "layout-property", "--unsafe-fixes", ".", cwd=tree)
    before = {p: p.read_text() for p in tree.rglob("*.py")}
    again = run_cli(
        "codemod", "layout-property", "--unsafe-fixes", "--diff", ".", cwd=tree
    )
    assert (again.returncode, again.stdout) == (0, "")
    assert {p: p.read_text() for p in tree.rglob("*.py")} == before
    check = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=tree)
    assert (check.returncode, check.stdout) == (0, "All checks passed!\n")


def test_the_migrated_tree_is_clean_for_ruff_and_its_formatter(tree):
    run_cli("codemod", "layout-property", "--unsafe-fixes", ".", cwd=tree)
    ruff = [sys.executable, "-m", "ruff"]
    lint = subprocess.run(
        [*ruff, "check", "--no-cache", "--select", "F821,F401", "."],
        cwd=tree, capture_output=True, text=True,
    )  # fmt: skip
    assert lint.returncode == 0, lint.stdout
    fmt = subprocess.run(
        [*ruff, "format", "--check", "--no-cache", "."],
        cwd=tree, capture_output=True, text=True,
    )  # fmt: skip
    assert fmt.returncode == 0, fmt.stdout


def test_after_the_migration_a_new_class_test_is_reported_with_the_property_fix(tree):
    run_cli("codemod", "layout-property", ".", cwd=tree)
    new = tree / "vllm" / "v1" / "new.py"
    new.write_text(
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n\n\n"
        "def f(spec):\n    return isinstance(spec, MLAAttentionSpec)\n"
    )
    check = run_cli("check", "--no-cache", "--output-format", "concise", ".", cwd=tree)
    assert check.stdout.splitlines()[0] == (
        "vllm/v1/new.py:5:12: VSL008 isinstance() lists MLAAttentionSpec and "
        "leaves out SlidingWindowMLASpec: ask `uses_mla_layout`"
    )
    run_cli("check", "--no-cache", "--fix", "--unsafe-fixes", ".", cwd=tree)
    assert new.read_text() == textwrap.dedent(
        """\
        from vllm.v1.kv_cache_interface import KVCacheSpec, MLAAttentionSpec


        def f(spec):
            return isinstance(spec, KVCacheSpec) and spec.uses_mla_layout
        """
    )


def test_before_the_migration_the_rule_is_silent(tree):
    check = run_cli(
        "check", "--no-cache", "--select", "VSL008", "--strict", ".", cwd=tree
    )
    assert (check.returncode, check.stdout.splitlines()[-1:]) == (
        0, ["All checks passed!"]
    )  # fmt: skip


def test_a_family_root_outside_the_paths_is_refused_and_nothing_changes(tree):
    before = {p: p.read_text() for p in tree.rglob("*.py")}
    out = run_cli("codemod", "layout-property", "vllm/v1/user.py", cwd=tree)
    assert out.returncode == 2
    assert out.stderr.startswith(
        "error: family mla: cannot declare uses_mla_layout on KVCacheSpec: "
        "vllm/v1/kv_cache_interface.py is not under the paths given"
    )
    assert {p: p.read_text() for p in tree.rglob("*.py")} == before


def test_the_files_themselves_as_the_paths_given(tree):
    """Each path is a root: the family module given as a file is under
    itself, and not under the other file given."""
    out = run_cli(
        "codemod",
        "layout-property",
        "vllm/v1/kv_cache_interface.py",
        "vllm/v1/user.py",
        cwd=tree,
    )
    assert out.returncode == 0, out.stderr
    assert out.stderr.startswith("2 files checked, 2 changed\n")
    interface = (tree / "vllm" / "v1" / "kv_cache_interface.py").read_text()
    assert interface.count("def uses_mla_layout(self) -> bool:") == 3


def test_a_family_whose_module_was_not_read_is_refused(tree):
    (tree / "pyproject.toml").write_text(
        "[tool.vllm-spec-lint]\n"
        'extend-families = [{ module = "vllm_plugin.specs", '
        'members = ["PluginMLASpec", "PluginSWMLASpec"] }]\n'
    )
    before = {p: p.read_text() for p in tree.rglob("*.py")}
    out = run_cli("codemod", "layout-property", ".", cwd=tree)
    assert (out.returncode, out.stderr) == (
        2,
        "error: family PluginMLASpec: cannot declare uses_plugin_mla_layout on "
        "PluginMLASpec: vllm_plugin/specs.py is not under the paths given (its "
        "module was not read); run the codemod on the tree that defines the "
        "family's classes\n",
    )
    assert {p: p.read_text() for p in tree.rglob("*.py")} == before


FULL_FAMILY = (
    "\n[tool.vllm-spec-lint]\n"
    'extend-families = [{ module = "vllm.v1.kv_cache_interface", '
    'members = ["FullAttentionSpec", "SlidingWindowSpec"] }]\n'
)


def test_two_families_of_one_module_each_get_their_property(tree):
    """The configured family's property goes beside vLLM's in the same
    file, and the migrated tree runs."""
    with (tree / "pyproject.toml").open("a") as settings:
        settings.write(FULL_FAMILY)
    out = run_cli("codemod", "layout-property", ".", cwd=tree)
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines()[1:3] == [
        "declared: vllm/v1/kv_cache_interface.py: uses_mla_layout on KVCacheSpec "
        "(False), MLAAttentionSpec (True), SlidingWindowMLASpec (True)",
        "declared: vllm/v1/kv_cache_interface.py: uses_full_layout on KVCacheSpec "
        "(False), FullAttentionSpec (True), SlidingWindowSpec (True)",
    ]
    interface = (tree / "vllm" / "v1" / "kv_cache_interface.py").read_text()
    assert interface.count("    def uses_mla_layout(self) -> bool:\n") == 3
    assert interface.count("    def uses_full_layout(self) -> bool:\n") == 3
    ran = subprocess.run(
        [
            sys.executable,
            "-c",
            "from vllm.v1.kv_cache_interface import FullAttentionSpec, "
            "SlidingWindowMLASpec\n"
            "from vllm.v1.user import is_mla_region\n"
            "print(is_mla_region(SlidingWindowMLASpec(16, 1, 4)),"
            " is_mla_region(FullAttentionSpec(16, 1)),"
            " SlidingWindowMLASpec(16, 1, 4).uses_full_layout)",
        ],
        cwd=tree,
        capture_output=True,
        text=True,
    )
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, "True False True\n", "")


def test_a_family_member_its_module_does_not_define_is_refused(tree):
    with (tree / "pyproject.toml").open("a") as settings:
        settings.write(FULL_FAMILY.replace("SlidingWindowSpec", "GoneSpec"))
    before = {p: p.read_text() for p in tree.rglob("*.py")}
    out = run_cli("codemod", "layout-property", ".", cwd=tree)
    interface = tree / "vllm" / "v1" / "kv_cache_interface.py"
    assert (out.returncode, out.stderr) == (
        2,
        "error: family FullAttentionSpec: cannot declare uses_full_layout on "
        "GoneSpec: vllm/v1/kv_cache_interface.py does not define it (read from "
        f"{interface})\n",
    )
    assert {p: p.read_text() for p in tree.rglob("*.py")} == before


def test_two_families_answering_with_one_property_are_refused(tree):
    """A second family with vLLM's anchor would be named uses_mla_layout
    too: declared for both, the property would answer for neither."""
    with (tree / "pyproject.toml").open("a") as settings:
        settings.write(
            FULL_FAMILY.replace(
                '"FullAttentionSpec", "SlidingWindowSpec"',
                '"MLAAttentionSpec", "SlidingWindowSpec"',
            )
        )
    before = {p: p.read_text() for p in tree.rglob("*.py")}
    out = run_cli("codemod", "layout-property", ".", cwd=tree)
    assert (out.returncode, out.stderr) == (
        2,
        "error: families mla and MLAAttentionSpec would both declare "
        "uses_mla_layout: give one of them its own name (`layout-property` in "
        "its extend-families entry)\n",
    )
    assert {p: p.read_text() for p in tree.rglob("*.py")} == before


def test_a_warning_of_the_hierarchy_is_said_once(tree):
    """A configured class whose base no module read defines."""
    (tree / "vllm" / "v1" / "plugin_specs.py").write_text(
        "from elsewhere import Base\n\n\n"
        "class PluginSpec(Base):\n    pass\n\n\n"
        "class PluginMLASpec(PluginSpec):\n    pass\n"
    )
    with (tree / "pyproject.toml").open("a") as settings:
        settings.write(
            "\n[tool.vllm-spec-lint]\n"
            'extend-families = [{ module = "vllm.v1.plugin_specs", '
            'members = ["PluginSpec", "PluginMLASpec"] }]\n'
        )
    out = run_cli("codemod", "layout-property", "--diff", ".", cwd=tree)
    warnings = [line for line in out.stderr.splitlines() if line.startswith("warn")]
    assert warnings == [
        "warning: family PluginSpec: PluginSpec derives from elsewhere.Base, which "
        "no module read defines; its bases are unknown, so no test against a "
        "parent class is taken to exclude it",
        "warning: family PluginSpec: PluginMLASpec derives from elsewhere.Base, "
        "which no module read defines; its bases are unknown, so no test against "
        "a parent class is taken to exclude it",
    ]


def test_only_imports_the_rewrite_left_unused_are_dropped_and_only_they_laid_out(
    tmp_path,
):
    """An import unused before the rewrite is the author's, and stays, as
    does one still used after it; the formatter lays out the changed import
    only, never the file's other lines (written against ruff's style on
    purpose)."""
    from vllm_spec_lint.edges.layout_migration import _without_unused

    before = (
        "from kv import (KVCacheSpec, MLAAttentionSpec,\n"
        "    SlidingWindowMLASpec)\n\n"
        "x = [1,2]\n"
        "ok = isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))\n"
        "kept = type(s) is SlidingWindowMLASpec\n"
    )
    after = before.replace(
        "isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))", "s.uses_mla_layout"
    )
    names = {"KVCacheSpec", "MLAAttentionSpec", "SlidingWindowMLASpec"}
    config = Config(fix_formatter="ruff")
    assert _without_unused(after, before, names, str(tmp_path / "m.py"), config) == (
        "from kv import KVCacheSpec, SlidingWindowMLASpec\n\n"
        "x = [1,2]\n"
        "ok = s.uses_mla_layout\n"
        "kept = type(s) is SlidingWindowMLASpec\n"
    )


# -- after the migration: a read of the property is a test of the family -----


def _strict_findings(code: str, classes: str = CLASSES) -> list[tuple]:
    """(code, row in ``code``, why strict mode adds it) of each finding."""
    source = classes + textwrap.dedent(code)
    analysis = analyze_source(
        source, "kv.py", Config(strict=True), _hierarchy(source), module_name=INTERFACE
    )
    offset = classes.count("\n")
    return [
        (f.code, f.location[0] - offset, f.suppressed_by) for f in analysis.findings
    ]


EXACT_THEN_PROPERTY = """

def certifiable(spec):
    if type(spec) is MLAAttentionSpec:
        return True
    if spec.uses_mla_layout:
        return False
    return True
"""


def test_a_property_read_is_a_test_of_the_companion_for_the_narrowing():
    # The function handles the companion through the property read: the
    # exact comparison is deliberate (reported by strict mode only, by VSL008
    # in VSL002's place).
    assert _strict_findings(EXACT_THEN_PROPERTY) == [
        ("VSL008", 4, "deliberate: line 50 tests `spec` for SlidingWindowMLASpec")
    ]


def test_without_the_declaration_the_same_read_is_no_class_test():
    undeclared = CLASSES.replace("uses_mla_layout", "other")
    code = EXACT_THEN_PROPERTY.replace("uses_mla_layout", "other")
    assert _strict_findings(code, undeclared) == [("VSL002", 4, None)]


def test_an_earlier_property_branch_takes_the_companion_from_an_elif():
    taken = """

    def rows(spec):
        if spec.uses_mla_layout:
            return 1
        elif isinstance(spec, MLAAttentionSpec):
            return 2
        return 3
    """
    assert _strict_findings(taken) == []
    alone = taken.replace("if spec.uses_mla_layout", "if spec is None")
    assert _strict_findings(alone) == [("VSL008", 6, None)]


def test_declarations_keep_the_files_line_endings_and_say_what_they_added():
    from vllm_spec_lint.repair.declarations import declare_property

    text = "class Root:\r\n    x: int\r\n\r\n\r\nclass Anchor(Root):\r\n    pass"
    new, added = declare_property(
        text, {"Root": False, "Anchor": True}, "uses_a_layout", ["Doc."]
    )
    assert new == (
        "class Root:\r\n    x: int\r\n"
        "\r\n    @property\r\n    def uses_a_layout(self) -> bool:\r\n"
        '        """Doc.\r\n        """\r\n        return False\r\n'
        "\r\n\r\nclass Anchor(Root):\r\n    pass\r\n"
        "\r\n    @property\r\n    def uses_a_layout(self) -> bool:\r\n"
        "        return True\r\n"
    )
    assert [new[start:end] for start, end in added] == [
        "\r\n    @property\r\n    def uses_a_layout(self) -> bool:\r\n"
        '        """Doc.\r\n        """\r\n        return False\r\n',
        "\r\n    @property\r\n    def uses_a_layout(self) -> bool:\r\n"
        "        return True\r\n",
    ]
    # A second run adds nothing.
    again = declare_property(new, {"Root": False, "Anchor": True}, "uses_a_layout", [])
    assert again == (new, [])


@pytest.mark.parametrize(
    "text, declared",
    [
        # Nothing to declare on: nothing added.
        ("", ""),
        # Another line last, without its line break: left as it was.
        (
            "class Anchor:\n    pass\n\n\nx = 1",
            "class Anchor:\n    pass\n\n    @property\n"
            "    def uses_a_layout(self) -> bool:\n        return True\n\n\nx = 1",
        ),
        # Old Mac line breaks: one each, none doubled.
        (
            "class Anchor:\r    pass\r",
            "class Anchor:\r    pass\r\n    @property\n"
            "    def uses_a_layout(self) -> bool:\n        return True\n",
        ),
    ],
    ids=["empty", "no-final-break-elsewhere", "carriage-returns"],
)
def test_declarations_add_only_their_block(text, declared):
    from vllm_spec_lint.repair.declarations import declare_property

    assert declare_property(text, {"Anchor": True}, "uses_a_layout", [])[0] == declared


@pytest.mark.parametrize(
    "body, location, message",
    [
        (
            "def f(x):\n"
            "    return type(x) in (MLAAttentionSpec, SlidingWindowMLASpec, MambaSpec)\n",
            (6, 24),
            "exact type comparison with MLAAttentionSpec, SlidingWindowMLASpec: ask "
            "`uses_mla_layout` (no fix: other classes are compared exactly too: "
            "rewrite it by hand)",
        ),
        (
            "def f(make):\n"
            "    return isinstance(make(), (MLAAttentionSpec, SlidingWindowMLASpec))\n",
            (6, 12),
            "isinstance() lists MLAAttentionSpec, SlidingWindowMLASpec: ask "
            "`uses_mla_layout` (no fix: the tested value is computed, and the "
            "rewrite would read it twice: rewrite it by hand)",
        ),
        (
            "isinstance = print\n\n\ndef f(x):\n    return type(x) is MLAAttentionSpec\n",
            (9, 23),
            "exact type comparison with MLAAttentionSpec leaves out "
            "SlidingWindowMLASpec: ask `uses_mla_layout` (no fix: isinstance is "
            "rebound here)",
        ),
        (  # rebound in the function that compares
            "def f(x):\n"
            "    isinstance = print\n"
            "    return type(x) is MLAAttentionSpec\n",
            (7, 23),
            "exact type comparison with MLAAttentionSpec leaves out "
            "SlidingWindowMLASpec: ask `uses_mla_layout` (no fix: isinstance is "
            "rebound here)",
        ),
        (
            "KVCacheSpec = None\n\n\n"
            "def f(x):\n"
            "    return isinstance(x, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
            (9, 12),
            "isinstance() lists MLAAttentionSpec, SlidingWindowMLASpec: ask "
            "`uses_mla_layout` (no fix: KVCacheSpec cannot be named here)",
        ),
        (
            # Known to be a spec, but computed: the others' test would read it
            # a second time.
            "def f(groups):\n"
            "    return isinstance(\n"
            "        groups[0].kv_cache_spec,\n"
            "        (MambaSpec, MLAAttentionSpec, SlidingWindowMLASpec),\n"
            "    )\n",
            (6, 12),
            "isinstance() lists MLAAttentionSpec, SlidingWindowMLASpec: ask "
            "`uses_mla_layout` (no fix: the tested value is computed, and the "
            "rewrite would read it twice: rewrite it by hand)",
        ),
    ],
    ids=[
        "exact-with-others",
        "computed",
        "isinstance-rebound",
        "isinstance-rebound-in-function",
        "root-unnamed",
        "known-spec-computed-with-others",
    ],
)
def test_a_test_the_rewrite_cannot_take_says_why_and_has_no_fix(
    body, location, message
):
    source = (
        "from vllm.v1.kv_cache_interface import (\n"
        "    MambaSpec, MLAAttentionSpec, SlidingWindowMLASpec\n)\n\n" + body
    )
    analysis = _analyzed(source)
    [finding] = [f for f in analysis.findings if f.code == "VSL008"]
    assert (finding.location, finding.message, finding.fix) == (
        location,
        message,
        None,
    )


def _analyzed(source: str):
    """``source`` analysed as a module beside vLLM's, whose spec classes
    declare the layout property."""
    return analyze_source(
        source, "x.py", Config(), _hierarchy(CLASSES), module_name="vllm.other"
    )


# Where the rewrite lands decides its parentheses and guard: each body (one
# line after the import) and the line its fix writes.
PLACES = [
    (  # a known spec read once, however computed
        "def f(groups):\n"
        "    return isinstance(groups[0].kv_cache_spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
        "    return groups[0].kv_cache_spec.uses_mla_layout\n",
    ),
    (  # known by the same decision: a subscript read as it is
        "def f(specs: list[KVCacheSpec]):\n"
        "    return isinstance(specs[0], KVCacheSpec) and isinstance(specs[0], (MLAAttentionSpec, SlidingWindowMLASpec))\n",
        "    return isinstance(specs[0], KVCacheSpec) and specs[0].uses_mla_layout\n",
    ),
    (  # a parenthesized name is the annotated parameter still
        "def f(x: KVCacheSpec):\n"
        "    return isinstance((x), (MLAAttentionSpec, SlidingWindowMLASpec))\n",
        "    return (x).uses_mla_layout\n",
    ),
    (  # isinstance rebound, but spelled through builtins: kept as spelled
        "import builtins\n"
        "isinstance = print\n\n\n"
        "def f(x):\n"
        "    return builtins.isinstance(x, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
        "    return builtins.isinstance(x, KVCacheSpec) and x.uses_mla_layout\n",
    ),
    (  # isinstance rebound: a known spec's exact test needs no isinstance
        "isinstance = print\n\n\n"
        "def f(x: KVCacheSpec):\n"
        "    return type(x) is MLAAttentionSpec\n",
        "    return x.uses_mla_layout\n",
    ),
    (  # isinstance rebound in another function only: the builtin here
        "def g():\n"
        "    isinstance = print\n\n\n"
        "def f(x):\n"
        "    return type(x) is MLAAttentionSpec\n",
        "    return isinstance(x, KVCacheSpec) and x.uses_mla_layout\n",
    ),
    (  # not under not: no parentheses
        "def f(x: KVCacheSpec):\n    return not type(x) is not MLAAttentionSpec\n",
        "    return not not x.uses_mla_layout\n",
    ),
    (  # not in a subscript: parenthesized
        "def f(x: KVCacheSpec, flags):\n"
        "    return flags[type(x) is not MLAAttentionSpec]\n",
        "    return flags[(not x.uses_mla_layout)]\n",
    ),
    (  # or in or: associative, no parentheses
        "def f(x, flag):\n"
        "    return flag or isinstance(x, (MambaSpec, MLAAttentionSpec, SlidingWindowMLASpec))\n",
        "    return flag or isinstance(x, MambaSpec) or (isinstance(x, KVCacheSpec) and x.uses_mla_layout)\n",
    ),
    (  # a starred argument: parenthesized
        "def f(x):\n"
        "    return print(*isinstance(x, (MLAAttentionSpec, SlidingWindowMLASpec)))\n",
        "    return print(*(isinstance(x, KVCacheSpec) and x.uses_mla_layout))\n",
    ),
    (  # a plain argument is open: no parentheses
        "def f(x):\n"
        "    return print(isinstance(x, (MLAAttentionSpec, SlidingWindowMLASpec)))\n",
        "    return print(isinstance(x, KVCacheSpec) and x.uses_mla_layout)\n",
    ),
    (  # a dictionary's key (its value is open): parenthesized
        "def f(x):\n"
        "    return {isinstance(x, (MLAAttentionSpec, SlidingWindowMLASpec)): 1}\n",
        "    return {(isinstance(x, KVCacheSpec) and x.uses_mla_layout): 1}\n",
    ),
]


@pytest.mark.parametrize(
    "body, fixed",
    PLACES,
    ids=[
        "known-computed",
        "known-subscript",
        "parenthesized-name",
        "builtins",
        "rebound-known",
        "rebound-elsewhere",
        "not-under-not",
        "not-in-subscript",
        "or-in-or",
        "starred",
        "argument",
        "dict-key",
    ],
)
def test_each_rewrite_is_parenthesized_and_guarded_for_where_it_lands(body, fixed):
    head = (
        "from vllm.v1.kv_cache_interface import (\n"
        "    KVCacheSpec, MambaSpec, MLAAttentionSpec, SlidingWindowMLASpec\n)\n\n"
    )
    outcome = fix_source(
        head + body, "x.py", Config(), _hierarchy(CLASSES), module_name="vllm.other",
        unsafe=True,
    )  # fmt: skip
    assert outcome.failure is None
    *kept, last = body.splitlines(keepends=True)
    assert outcome.text == head + "".join(kept) + fixed


def test_an_exact_comparison_is_vsl002s_site_and_silenced_by_its_noqa():
    source = (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n\n\n"
        "def f(s):\n"
        "    return type(s) is MLAAttentionSpec  # noqa: VSL002\n\n\n"
        "def g(s):\n"
        "    return type(s) is MLAAttentionSpec  # noqa: VSL001\n"
    )
    analysis = _analyzed(source)
    assert [(f.code, f.location) for f in analysis.findings] == [("VSL008", (9, 23))]


def test_a_whole_family_test_is_no_vsl001_site_and_a_narrowed_one_is_deliberate():
    """VSL001's noqa does not silence a test naming the whole family (VSL001
    never reports it); a test leaving out a companion an earlier branch
    handled is deliberate, as VSL001 says."""
    source = (
        "from vllm.v1.kv_cache_interface import (\n"
        "    FullAttentionSpec, KVCacheSpec, MLAAttentionSpec, SlidingWindowMLASpec\n"
        ")\n\n\n"
        "def f(s: KVCacheSpec):\n"
        "    if isinstance(s, SlidingWindowMLASpec):\n"
        "        return 0\n"
        "    if isinstance(s, MLAAttentionSpec):\n"
        "        return 1\n\n\n"
        "def g(s: KVCacheSpec):\n"
        "    if isinstance(s, MLAAttentionSpec):\n"
        "        return 1\n"
        "    assert isinstance(s, FullAttentionSpec)\n\n\n"
        "ok = isinstance(x, (MLAAttentionSpec, SlidingWindowMLASpec))  # noqa: VSL001\n"
    )
    analysis = _analyzed(source)
    assert [(f.code, f.location) for f in analysis.findings] == [("VSL008", (19, 6))]
    assert [(f.code, f.location, f.suppressed_by) for f in analysis.suppressed] == [
        (
            "VSL008",
            (9, 8),
            "narrowed: `isinstance(s, SlidingWindowMLASpec)` (line 7) already "
            "excludes SlidingWindowMLASpec",
        ),
        (
            "VSL008",
            (14, 8),
            "assert: line 16 rejects what the check lets through, "
            "SlidingWindowMLASpec included, loudly",
        ),
    ]


def _declaring_full(declared: bool) -> str:
    return (
        "    @property\n"
        "    def uses_full_layout(self) -> bool:\n"
        f"        return {declared}\n"
    )


# A second family, ``full``: FullAttentionSpec with SlidingWindowSpec, its
# property declared on its root and both members.
TWO_FAMILY_CLASSES = (
    CLASSES.replace(
        "class KVCacheSpec:\n", "class KVCacheSpec:\n" + _declaring_full(False) + "\n"
    )
    .replace(
        "class FullAttentionSpec(AttentionSpec):\n    pass\n",
        "class FullAttentionSpec(AttentionSpec):\n" + _declaring_full(True),
    )
    .replace(
        "class SlidingWindowSpec(AttentionSpec):\n    pass\n",
        "class SlidingWindowSpec(AttentionSpec):\n" + _declaring_full(True),
    )
)
FULL = Family("full", INTERFACE, ("FullAttentionSpec", "SlidingWindowSpec"))


@pytest.mark.parametrize(
    "first_full, tested, message",
    [
        (  # the first family does not know the test
            True,
            "MLAAttentionSpec",
            "isinstance() lists MLAAttentionSpec and leaves out SlidingWindowMLASpec: "
            "ask `uses_mla_layout`",
        ),
        (  # a parent class covers the first family's companion
            False,
            "(MLAAttentionSpec, SlidingWindowSpec, FullAttentionSpec)",
            "isinstance() lists SlidingWindowSpec, FullAttentionSpec: "
            "ask `uses_full_layout`",
        ),
    ],
)
def test_a_family_passed_over_leaves_the_next_one_its_say(first_full, tested, message):
    properties = ("uses_mla_layout", "uses_full_layout")
    hierarchy = _hierarchy(TWO_FAMILY_CLASSES, properties)
    families = (FULL, *Config().families) if first_full else (*Config().families, FULL)
    source = (
        "from vllm.v1.kv_cache_interface import (\n"
        "    FullAttentionSpec, MLAAttentionSpec, SlidingWindowSpec\n"
        ")\n\n\n"
        f"def f(s):\n    return isinstance(s, {tested})\n"
    )
    analysis = analyze_source(
        source, "x.py", Config(families=families), hierarchy, module_name="vllm.other"
    )
    assert [(f.code, f.location, f.message) for f in analysis.findings] == [
        ("VSL008", (7, 12), message)
    ]


def test_a_builders_test_of_its_own_spec_names_the_builder_and_the_left_out():
    """What backend pairing decides on (edges/pairing.py), as VSL001's."""
    source = (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n\n\n"
        "class Builder:\n"
        "    def __init__(self, kv_cache_spec):\n"
        "        self.kv_cache_spec = kv_cache_spec\n"
        "        if isinstance(self.kv_cache_spec, MLAAttentionSpec):\n"
        "            self.x = 1\n"
    )
    analysis = _analyzed(source)
    assert [(f.code, f.own_spec) for f in analysis.findings] == [
        (
            "VSL008",
            ("vllm.other.Builder", "vllm.v1.kv_cache_interface.SlidingWindowMLASpec"),
        )
    ]


def test_the_guard_names_the_root_class_as_the_test_names_the_anchor():
    """Imported where the anchor is imported from; through the module's
    alias where the anchor is read through it. Each fix says what it does."""
    source = (
        "import vllm.v1.kv_cache_interface as kvi\n"
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
        "\n\n"
        "def f(s):\n"
        "    return isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))\n"
        "\n\n"
        "def g(s):\n"
        "    return type(s) is kvi.MLAAttentionSpec\n"
        "\n\n"
        "def h(s):\n"
        "    return type(s) in (MLAAttentionSpec, SlidingWindowMLASpec)\n"
    )
    analysis = _analyzed(source)
    assert [
        (f.code, f.fix.message, f.fix.applicability) for f in analysis.findings
    ] == [
        ("VSL008", "Ask `uses_mla_layout`", "safe"),
        ("VSL008", "Ask `uses_mla_layout` (their subclasses pass too)", "unsafe"),
        # The whole family compared exactly: still unsafe (subclasses pass).
        ("VSL008", "Ask `uses_mla_layout` (their subclasses pass too)", "unsafe"),
    ]
    outcome = fix_source(
        source, "x.py", Config(), _hierarchy(CLASSES), module_name="vllm.other",
        unsafe=True, formatter=None,
    )  # fmt: skip
    assert outcome.text == (
        "import vllm.v1.kv_cache_interface as kvi\n"
        "from vllm.v1.kv_cache_interface import KVCacheSpec, MLAAttentionSpec, "
        "SlidingWindowMLASpec\n"
        "\n\n"
        "def f(s):\n"
        "    return isinstance(s, KVCacheSpec) and s.uses_mla_layout\n"
        "\n\n"
        "def g(s):\n"
        "    return isinstance(s, kvi.KVCacheSpec) and s.uses_mla_layout\n"
        "\n\n"
        "def h(s):\n"
        "    return isinstance(s, KVCacheSpec) and s.uses_mla_layout\n"
    )


# -- the migration itself (edges/layout_migration.py), without the command line --

MORE = """\
from vllm.v1.kv_cache_interface import (
    KVCacheSpec,
    MLAAttentionSpec,
    SlidingWindowMLASpec,
    SlidingWindowSpec,
)


def windowed(groups) -> None:
    if any(isinstance(g, SlidingWindowSpec) for g in groups):  # noqa: VSL007
        raise NotImplementedError("no sliding window here")


def by_name(spec) -> bool:
    return type(spec).__name__ == "MLAAttentionSpec"


def computed(make) -> bool:
    return isinstance(make(), (MLAAttentionSpec, SlidingWindowMLASpec))


def whole(spec: KVCacheSpec) -> bool:
    return isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec))
"""
THIRD = """\
from vllm.v1.kv_cache_interface import (
    KVCacheSpec,
    MLAAttentionSpec,
    SlidingWindowMLASpec,
)
from vllm.v1.kv_cache_interface import MLAAttentionSpec as Latent


def whole(spec: KVCacheSpec) -> bool:
    return isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec))
"""


def _migrated(tmp_path, monkeypatch, files: dict[str, str], unsafe: bool):
    """The migration of a tree of vLLM's family module and ``files`` (named
    below vllm/v1/), run from the tree's root."""
    from vllm_spec_lint.edges.config import load_config
    from vllm_spec_lint.edges.layout_migration import migrate

    folder = tmp_path / "vllm" / "v1"
    folder.mkdir(parents=True)
    (folder / "kv_cache_interface.py").write_text(TREE_INTERFACE)
    for name, text in files.items():
        (folder / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    return migrate([Path(".")], load_config(Path(".")), unsafe=unsafe)


@pytest.mark.parametrize("unsafe", [False, True])
def test_the_migration_counts_every_site_and_drops_only_imports_left_unused(
    tmp_path, monkeypatch, unsafe
):
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nline-length = 88\n")
    files = {"more.py": MORE, "third.py": THIRD}
    migration = _migrated(tmp_path, monkeypatch, files, unsafe)
    interface = Path("vllm/v1/kv_cache_interface.py")
    assert migration.declared == [
        "vllm/v1/kv_cache_interface.py: uses_mla_layout on KVCacheSpec (False), "
        "MLAAttentionSpec (True), SlidingWindowMLASpec (True)"
    ]
    assert (migration.checked, migration.failures, migration.warnings) == (3, [], [])
    assert migration.rewritten == {("VSL008", "names the whole family"): 2}
    assert migration.kept == {
        ("VSL007", "noqa"): 1,
        ("VSL005", "not a class test the property can answer"): 1,
        (
            "VSL008",
            "the tested value is computed, and the rewrite would read it twice: "
            "rewrite it by hand",
        ): 1,
    }
    # The declarations first: an interrupted write never leaves a read of an
    # undeclared property.
    changed = {path: new.decode() for path, _, new in migration.changed}
    assert list(changed)[0] == interface
    assert changed[Path("vllm/v1/more.py")] == MORE.replace(
        "    return isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
        "    return spec.uses_mla_layout\n",
    ).replace(
        "def computed(make) -> bool:\n    return spec.uses_mla_layout\n",
        "def computed(make) -> bool:\n"
        "    return isinstance(make(), (MLAAttentionSpec, SlidingWindowMLASpec))\n",
    )
    # MLAAttentionSpec is named by the other import only: it goes too, and
    # the import is laid out again by the project's formatter.
    assert changed[Path("vllm/v1/third.py")] == (
        "from vllm.v1.kv_cache_interface import KVCacheSpec\n"
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec as Latent\n"
        "\n\ndef whole(spec: KVCacheSpec) -> bool:\n"
        "    return spec.uses_mla_layout\n"
    )
    # Nothing is written by the migration itself.
    assert (tmp_path / "vllm/v1/third.py").read_text() == THIRD


# Each kind of site the census tells apart, written twice (``f``, ``f_too``).
SITES = [
    ("windowed", "groups", (
        "    if any(isinstance(g, SlidingWindowSpec) for g in groups):  # noqa: VSL007\n"
        '        raise NotImplementedError("no sliding window here")\n'
    )),
    ("by_name", "spec", '    return type(spec).__name__ == "MLAAttentionSpec"\n'),
    ("by_name_kept", "spec", (
        '    return type(spec).__name__ == "MLAAttentionSpec"  # noqa: VSL005\n'
    )),
    ("computed", "make", (
        "    return isinstance(make(), (MLAAttentionSpec, SlidingWindowMLASpec))\n"
    )),
    ("left_out", "spec: KVCacheSpec", "    return isinstance(spec, MLAAttentionSpec)\n"),
    ("kept", "spec: KVCacheSpec", (
        "    return isinstance(spec, MLAAttentionSpec)  # noqa: VSL001\n"
    )),
]  # fmt: skip
TWICE = (
    "from vllm.v1.kv_cache_interface import (\n"
    "    KVCacheSpec, MLAAttentionSpec, SlidingWindowMLASpec, SlidingWindowSpec\n"
    ")\n"
) + "".join(
    f"\n\ndef {name}{too}({params}):\n{body}"
    for name, params, body in SITES
    for too in ("", "_too")
)


@pytest.mark.parametrize("unsafe", [False, True])
def test_the_migration_counts_each_site_however_many_share_its_reason(
    tmp_path, monkeypatch, unsafe
):
    """Two sites of each kind the census tells apart."""
    migration = _migrated(tmp_path, monkeypatch, {"twice.py": TWICE}, unsafe)
    computed = (
        "the tested value is computed, and the rewrite would read it twice: "
        "rewrite it by hand"
    )
    kept = {
        ("VSL007", "noqa"): 2,
        ("VSL005", "not a class test the property can answer"): 2,
        ("VSL005", "noqa"): 2,
        ("VSL008", computed): 2,
        ("VSL001", "noqa"): 2,
    }
    if unsafe:
        assert migration.rewritten == {("VSL001", "leaves a companion out"): 2}
    else:
        assert migration.rewritten == {}
        kept[("VSL001", "changes behaviour: --unsafe-fixes rewrites it")] = 2
    assert migration.kept == kept


def test_an_import_named_elsewhere_in_the_file_is_kept(tmp_path):
    from vllm_spec_lint.core.settings import Config
    from vllm_spec_lint.edges.layout_migration import _without_unused

    before = (
        "from kv import MLAAttentionSpec, SlidingWindowMLASpec\n\n"
        '__all__ = ["SlidingWindowMLASpec"]\n\n'
        "ok = isinstance(x, (MLAAttentionSpec, SlidingWindowMLASpec))\n"
    )
    after = before.replace(
        "isinstance(x, (MLAAttentionSpec, SlidingWindowMLASpec))",
        "x.uses_mla_layout",
    )
    names = {"MLAAttentionSpec", "SlidingWindowMLASpec"}
    config = Config(fix_formatter="none")
    assert _without_unused(after, before, names, str(tmp_path / "m.py"), config) == (
        after.replace(
            "MLAAttentionSpec, SlidingWindowMLASpec\n", "SlidingWindowMLASpec\n"
        )
    )


# -- where the tested value is known to be a spec: the unguarded read -----------

KNOWN = "spec.uses_mla_layout"
GUARDED = "isinstance(spec, KVCacheSpec) and spec.uses_mla_layout"
WHOLE = "isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec))"


@pytest.mark.parametrize(
    "header, loop, form",
    [
        ("specs: dict[str, KVCacheSpec]", "for name, spec in specs.items():", KNOWN),
        ("specs: dict[str, KVCacheSpec]", "for spec in specs.values():", KNOWN),
        ("specs: list[AttentionSpec]", "for spec in specs:", KNOWN),
        (
            "specs: typing.Mapping[str, KVCacheSpec]",
            "for spec in specs.values():",
            KNOWN,
        ),
        ("specs: tuple[KVCacheSpec, ...]", "for (spec) in specs:", KNOWN),
        ("specs: tuple[KVCacheSpec, AttentionSpec]", "for spec in specs:", KNOWN),
        ("specs: tuple[int, KVCacheSpec]", "for spec in specs:", GUARDED),
        ("specs: tuple[KVCacheSpec, int]", "for spec in specs:", GUARDED),
        # Iterating a mapping gives its keys; a list has no items.
        ("specs: dict[KVCacheSpec, int]", "for spec in specs:", GUARDED),
        ("specs: list[KVCacheSpec]", "for name, spec in specs.items():", GUARDED),
        ("specs: dict[str, KVCacheSpec]", "for spec, name in specs.items():", GUARDED),
        ("specs: dict[str, KVCacheSpec]", "for spec in specs.keys():", GUARDED),
        ("specs: dict[str, KVCacheSpec]", "for a, b, spec in specs.items():", GUARDED),
        ("specs: dict[str, int]", "for spec in specs.values():", GUARDED),
        ("specs: dict", "for spec in specs.values():", GUARDED),
        ("specs", "for spec in specs.values():", GUARDED),
        ("specs: dict[str, KVCacheSpec]", "for spec in self.specs.values():", GUARDED),
        ("specs: list[KVCacheSpec]", "for i, spec in enumerate(specs):", GUARDED),
        ("specs: Other[KVCacheSpec]", "for spec in specs:", GUARDED),
        ("spec: KVCacheSpec, specs=()", "for other in specs:", KNOWN),
        ("spec, specs=()", "for other in specs:", GUARDED),
        ("spec: int, specs=()", "for other in specs:", GUARDED),
    ],
)
def test_a_value_from_an_annotated_spec_collection_is_read_unguarded(
    header, loop, form
):
    function = (
        f"\n\ndef f(self, {header}):\n    {loop}\n"
        f"        if {WHOLE}:\n            return 1\n"
    )
    source = CLASSES + "\nimport typing\n" + function
    outcome = fix_source(
        source, "kv.py", Config(), _hierarchy(CLASSES), module_name=INTERFACE
    )
    assert outcome.text == source.replace(WHOLE, form)


@pytest.mark.parametrize(
    "function, form",
    [
        # The same name bound twice in the function: not known.
        (
            "def f(specs: list[KVCacheSpec]):\n    specs = other()\n"
            "    for spec in specs:\n        if WHOLE:\n            return 1\n",
            GUARDED,
        ),
        (
            "def f(specs: list[KVCacheSpec], spec=None):\n    for spec in specs:\n"
            "        if WHOLE:\n            return 1\n",
            GUARDED,
        ),
        # A loop in a nested function is that function's.
        (
            "def f(specs: list[KVCacheSpec]):\n    def g(spec):\n"
            "        return WHOLE\n    for spec in specs:\n        pass\n",
            GUARDED,
        ),
        # ... and a nested function's loop is not the function's own.
        (
            "def f(specs: list[KVCacheSpec], others):\n    def g():\n"
            "        for spec in specs:\n            pass\n"
            "    for spec in others:\n        if WHOLE:\n            return 1\n",
            GUARDED,
        ),
        # An element of a comprehension, from an inner clause too.
        (
            "def f(specs: list[KVCacheSpec]):\n    return any(WHOLE for spec in specs)\n",
            KNOWN,
        ),
        (
            "def f(groups: list[list[KVCacheSpec]], specs: list[KVCacheSpec]):\n"
            "    return [WHOLE for group in groups for spec in specs]\n",
            KNOWN,
        ),
        (
            "def f(groups):\n    return [WHOLE for group in groups for spec in group]\n",
            GUARDED,
        ),
        # An earlier test of the same decision said it is a spec.
        (
            "def f(spec):\n    return isinstance(spec, AttentionSpec) and WHOLE\n",
            KNOWN,
        ),
        (
            "def f(spec):\n    return isinstance(spec, (AttentionSpec, int)) and WHOLE\n",
            GUARDED,
        ),
        (
            "def f(spec):\n    if not isinstance(spec, AttentionSpec):\n"
            "        return 0\n    return WHOLE\n",
            KNOWN,
        ),
        (
            "def f(spec):\n    return isinstance(spec, int) or WHOLE\n",
            GUARDED,
        ),
        # A module-level loop binds no parameter.
        ("for spec in SPECS:\n    ok = WHOLE\n", GUARDED),
    ],
)
def test_a_value_bound_once_as_a_spec_is_read_unguarded(function, form):
    source = CLASSES + "\n\n" + function.replace("WHOLE", WHOLE)
    outcome = fix_source(
        source, "kv.py", Config(), _hierarchy(CLASSES), module_name=INTERFACE
    )
    assert outcome.text == source.replace(WHOLE, form)


@pytest.mark.parametrize(
    "before, after",
    [
        (
            "ok = isinstance(x, (MLAAttentionSpec, MambaSpec, SlidingWindowMLASpec, str))",
            "ok = isinstance(x, (MambaSpec, str)) or "
            "(isinstance(x, KVCacheSpec) and x.uses_mla_layout)",
        ),
        (
            "ok = (isinstance(x, (MLAAttentionSpec, SlidingWindowMLASpec)))",
            "ok = (isinstance(x, KVCacheSpec) and x.uses_mla_layout)",
        ),
        (
            "ok = flag and (isinstance(x, (MLAAttentionSpec, SlidingWindowMLASpec)))",
            "ok = flag and (isinstance(x, KVCacheSpec) and x.uses_mla_layout)",
        ),
        (
            "ok = type(x) is not MLAAttentionSpec",
            "ok = not (isinstance(x, KVCacheSpec) and x.uses_mla_layout)",
        ),
    ],
    ids=["two-others", "parenthesized", "parenthesized-in-and", "exact-negated"],
)
def test_the_rewrite_keeps_other_classes_and_the_tests_own_parentheses(before, after):
    source = CLASSES + "\n\n" + before + "\n"
    outcome = fix_source(
        source, "kv.py", Config(), _hierarchy(CLASSES), module_name=INTERFACE,
        unsafe=True,
    )  # fmt: skip
    assert outcome.text == CLASSES + "\n\n" + after + "\n"


def test_the_codemods_diff_shows_the_declarations_first_and_writes_nothing(tree):
    before = {p: p.read_text() for p in tree.rglob("*.py")}
    out = run_cli("codemod", "layout-property", "--diff", ".", cwd=tree)
    assert out.returncode == 1
    headers = [line for line in out.stdout.splitlines() if line.startswith("--- ")]
    assert headers == [
        "--- vllm/v1/kv_cache_interface.py",
        "--- vllm/v1/user.py",
    ]
    assert "+    def uses_mla_layout(self) -> bool:\n" in out.stdout
    assert (
        "-    return isinstance(layer_spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n"
        "+    return isinstance(layer_spec, KVCacheSpec) and layer_spec.uses_mla_layout\n"
    ) in out.stdout
    assert out.stderr.splitlines()[0] == "2 files checked, 2 would change"
    assert {p: p.read_text() for p in tree.rglob("*.py")} == before


def test_a_declaration_file_not_written_stops_the_rest(tree):
    interface = tree / "vllm" / "v1" / "kv_cache_interface.py"
    interface.chmod(0o444)
    user = (tree / "vllm" / "v1" / "user.py").read_text()
    out = run_cli("codemod", "layout-property", ".", cwd=tree)
    assert out.returncode == 2
    assert out.stderr.splitlines()[0] == (
        "error: vllm/v1/kv_cache_interface.py: not written: the file is read-only"
    )
    # No read of a property that was not declared.
    assert (tree / "vllm" / "v1" / "user.py").read_text() == user
    assert interface.read_text() == TREE_INTERFACE


def test_a_declaration_on_a_failing_disk_is_told_and_stops_the_rest(
    tree, monkeypatch, capsys
):
    from tests.conftest import failing_disk
    from vllm_spec_lint.faces import cli

    failing_disk(monkeypatch)
    monkeypatch.chdir(tree)
    assert cli.main(["codemod", "layout-property", "."]) == 2
    assert capsys.readouterr().err.splitlines()[0] == (
        "error: vllm/v1/kv_cache_interface.py: not written: [Errno 5] "
        "Input/output error"
    )
    interface = tree / "vllm" / "v1" / "kv_cache_interface.py"
    assert interface.read_text() == TREE_INTERFACE
    assert (tree / "vllm" / "v1" / "user.py").read_text() == TREE_USER
    assert not list(tree.rglob("*.vsl-tmp"))


def test_a_file_not_written_after_the_declarations_is_told_and_the_rest_written(
    tree,
):
    user = tree / "vllm" / "v1" / "user.py"
    user.chmod(0o444)
    out = run_cli("codemod", "layout-property", ".", cwd=tree)
    assert out.returncode == 2
    assert out.stderr.splitlines()[0] == (
        "error: vllm/v1/user.py: not written: the file is read-only"
    )
    assert user.read_text() == TREE_USER
    assert "def uses_mla_layout" in (user.parent / "kv_cache_interface.py").read_text()


def test_the_docstring_says_which_companions_have_the_layout():
    from vllm_spec_lint.repair.declarations import property_docstring

    assert property_docstring(["MLAAttentionSpec", "SlidingWindowMLASpec"]) == [
        "Whether this cache uses the MLAAttentionSpec layout.",
        "",
        "SlidingWindowMLASpec has this layout without subclassing",
        "MLAAttentionSpec: ask this property instead of testing for classes, so",
        "that a new class with the layout sets it once rather than joining every",
        "isinstance() check.",
    ]
    assert property_docstring(["A", "B", "C"])[2:] == [
        "B and C have this layout without subclassing A: ask this property",
        "instead of testing for classes, so that a new class with the layout sets",
        "it once rather than joining every isinstance() check.",
    ]


def test_declarations_follow_each_classs_indentation_and_skip_nested_ones():
    from vllm_spec_lint.repair.declarations import declare_property

    text = (
        "class Root:\n  x: int\n\n\n"
        "if TYPE_CHECKING:\n    class Anchor(Root):\n        pass\n\n\n"
        "class Other(Root):\n        y: int\n"
    )
    values = {"Root": False, "Anchor": True, "Other": True, "Missing": True}
    new, added = declare_property(text, values, "uses_a_layout", ["Doc.", "", "More."])
    assert new == (
        "class Root:\n  x: int\n"
        "\n  @property\n  def uses_a_layout(self) -> bool:\n"
        '    """Doc.\n\n    More.\n    """\n    return False\n'
        "\n\nif TYPE_CHECKING:\n    class Anchor(Root):\n        pass\n\n\n"
        "class Other(Root):\n        y: int\n"
        "\n        @property\n        def uses_a_layout(self) -> bool:\n"
        # The class's own step (eight), again inside the property.
        "                return True\n"
    )
    assert len(added) == 2


def test_only_a_family_module_of_the_scanned_tree_is_written(tmp_path):
    from vllm_spec_lint.edges.layout_migration import _defined_in
    from vllm_spec_lint.model.hierarchy import KV_CACHE_INTERFACE, ClassHierarchy

    kci = tmp_path / "vllm" / "v1" / "kv_cache_interface.py"
    cls = f"{KV_CACHE_INTERFACE}.MLAAttentionSpec"
    scanned = ClassHierarchy.default().with_module(
        KV_CACHE_INTERFACE, {"MLAAttentionSpec": ()}, str(kci), "scanned tree"
    )
    installed = ClassHierarchy.default().with_module(
        KV_CACHE_INTERFACE, {"MLAAttentionSpec": ()}, str(kci), "vllm-source"
    )
    assert _defined_in(cls, scanned) == str(kci)
    # vLLM's installed source (vsl-vllm-source): read, never written.
    assert _defined_in(cls, installed) is None


def test_a_family_module_that_cannot_be_written_stops_the_migration(tree):
    """Its readers are not rewritten to read a property that was not
    declared; a reader that cannot be written does not stop the others."""
    interface = tree / "vllm" / "v1" / "kv_cache_interface.py"
    user = tree / "vllm" / "v1" / "user.py"
    interface.chmod(0o444)
    out = run_cli("codemod", "layout-property", ".", cwd=tree)
    assert out.returncode == 2
    assert (interface.read_text(), user.read_text()) == (TREE_INTERFACE, TREE_USER)
    # The declaration written, one reader read-only: a later one is written.
    interface.chmod(0o644)
    (tree / "vllm" / "v1" / "zz_another.py").write_text(TREE_USER)
    user.chmod(0o444)
    out = run_cli("codemod", "layout-property", ".", cwd=tree)
    assert out.returncode == 2
    assert "error: vllm/v1/user.py: not written: the file is read-only" in out.stderr
    assert user.read_text() == TREE_USER
    assert "uses_mla_layout" in (tree / "vllm" / "v1" / "zz_another.py").read_text()
    # Declared already (nothing declared this time): a read-only reader
    # still does not stop the next one.
    (tree / "vllm" / "v1" / "zz_third.py").write_text(TREE_USER)
    out = run_cli("codemod", "layout-property", ".", cwd=tree)
    assert out.returncode == 2
    assert "uses_mla_layout" in (tree / "vllm" / "v1" / "zz_third.py").read_text()


def test_paths_are_shown_relative_below_the_working_folder(tmp_path, monkeypatch):
    from vllm_spec_lint.edges.layout_migration import _shown

    monkeypatch.chdir(tmp_path)
    below = tmp_path / "..data" / "user.py"  # a name starting with ".."
    above = tmp_path.parent / "user.py"
    assert _shown(str(below)) == "..data/user.py"
    assert _shown(str(above)) == str(above)
