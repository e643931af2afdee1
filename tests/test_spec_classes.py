"""edges/spec_classes.py: a plugin's own spec classes, placed in the hierarchy
by the names of their bases as written."""

from __future__ import annotations

import sys

import pytest

from tests.conftest import BAD, SPEC_CLASSES, write_family_module
from vllm_spec_lint.core.settings import Config
from vllm_spec_lint.edges.spec_classes import (
    _ancestry,
    _root,
    read_spec_classes,
    spec_hierarchy,
)
from vllm_spec_lint.model.hierarchy import ClassHierarchy, Family
from vllm_spec_lint.model.twins import class_shapes

KCI = "vllm.v1.kv_cache_interface"
# vLLM's chain above MLAAttentionSpec, in the built-in hierarchy.
MLA_CHAIN = {
    f"{KCI}.MLAAttentionSpec",
    f"{KCI}.FullAttentionSpec",
    f"{KCI}.AttentionSpec",
    f"{KCI}.KVCacheSpec",
}
PLUGIN = """\
from typing import Generic, TypeVar

from vllm.v1 import kv_cache_interface as kv
from vllm.v1.kv_cache_interface import MLAAttentionSpec

T = TypeVar("T")


class DottedSpec(kv.MLAAttentionSpec): ...
class GenericSpec(MLAAttentionSpec, Generic[T]): ...
class SubscriptedSpec(GenericSpec[int]): ...
class GrandchildSpec(DottedSpec): ...
class LoopA(LoopB): ...
class LoopB(LoopA): ...
"""


@pytest.fixture
def ancestors():
    shapes = class_shapes(PLUGIN, "plugin.specs")
    hierarchy = ClassHierarchy.default()
    known = {c.rpartition(".")[2]: c for c in hierarchy.classes()}
    known.update({s.qualname.rpartition(".")[2]: s.qualname for s in shapes})
    return _ancestry(shapes, hierarchy, known)


@pytest.mark.parametrize(
    "name, expected",
    [
        ("DottedSpec", {"plugin.specs.DottedSpec"} | MLA_CHAIN),
        # Generic is no spec class: it is left out, not looked up.
        ("GenericSpec", {"plugin.specs.GenericSpec"} | MLA_CHAIN),
        (
            "SubscriptedSpec",
            {"plugin.specs.SubscriptedSpec", "plugin.specs.GenericSpec"} | MLA_CHAIN,
        ),
        (
            "GrandchildSpec",
            {"plugin.specs.GrandchildSpec", "plugin.specs.DottedSpec"} | MLA_CHAIN,
        ),
        ("LoopA", {"plugin.specs.LoopA", "plugin.specs.LoopB"}),
    ],
)
def test_a_scanned_classs_ancestors_follow_its_bases_as_written(
    ancestors, name, expected
):
    assert ancestors(f"plugin.specs.{name}") == expected


def test_a_class_of_the_hierarchy_keeps_its_ancestors_there(ancestors):
    assert ancestors(f"{KCI}.MLAAttentionSpec") == MLA_CHAIN


def test_the_spec_hierarchy_is_what_derives_from_the_root():
    hierarchy = ClassHierarchy.default().with_module(
        KCI,
        {
            "KVCacheSpec": (),
            "KVCacheConfig": (),
            "MLAAttentionSpec": ("KVCacheSpec",),
            "SlidingWindowMLASpec": ("KVCacheSpec",),
        },
        "test",
        "scanned tree",
    )
    assert spec_hierarchy(Config(), hierarchy) == [
        f"{KCI}.KVCacheSpec",
        f"{KCI}.MLAAttentionSpec",
        f"{KCI}.SlidingWindowMLASpec",
    ]
    assert _root(Config(), hierarchy) == f"{KCI}.KVCacheSpec"


def test_without_families_there_is_no_root_and_in_a_loop_the_anchor_is_it():
    assert _root(Config(families=()), ClassHierarchy.default()) is None
    hierarchy = ClassHierarchy.default().with_module(
        "plugin.specs",
        {"Anchor": ("Companion",), "Companion": ("Anchor",)},
        "test",
        "scanned tree",
    )
    family = Family("x", "plugin.specs", ("Anchor", "Companion"))
    assert _root(Config(families=(family,)), hierarchy) == "plugin.specs.Anchor"


# -- read_spec_classes: the family modules first, then the scanned files ------

FAMILY_A = "class FirstSpec(MLAAttentionSpec): ...\nclass SecondSpec(FirstSpec): ...\n"
FAMILY_B = "class OtherSpec(MLAAttentionSpec): ...\n"


def _read(tmp_path, files: dict[str, str], family_modules, scanned, read=None):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    sources = tuple(
        str(tmp_path / (m.replace(".", "/") + ".py"))
        for m in family_modules
        if (tmp_path / (m.replace(".", "/") + ".py")).exists()
    )
    hierarchy = ClassHierarchy(
        ClassHierarchy.default().bases, sources, ("vllm-source",) * len(sources)
    )
    config = Config(
        families=tuple(Family(m, m, ("MLAAttentionSpec", "X")) for m in family_modules)
    )
    warnings: list[str] = []
    found = read_spec_classes(
        [str(tmp_path / s) for s in scanned],
        config,
        hierarchy,
        warnings,
        **({"read": read} if read else {}),
    )
    shapes = [(s.qualname, s.order) for s in found.shapes]
    return shapes, found.first_scanned, warnings


def test_every_family_modules_classes_are_read_in_order(tmp_path):
    shapes, first_scanned, warnings = _read(
        tmp_path,
        {"pkg/a.py": FAMILY_A, "pkg/b.py": FAMILY_B},
        ["pkg.missing", "pkg.a", "pkg.b"],
        [],
    )
    assert shapes == [
        ("pkg.a.FirstSpec", 0),
        ("pkg.a.SecondSpec", 1),
        ("pkg.b.OtherSpec", 2),
    ]
    assert (first_scanned, warnings) == (3, [])


def test_a_family_module_that_does_not_parse_is_a_warning_and_the_rest_is_read(
    tmp_path,
):
    shapes, first_scanned, warnings = _read(
        tmp_path,
        {"pkg/a.py": "class (:\n", "pkg/b.py": FAMILY_B},
        ["pkg.a", "pkg.b"],
        [],
    )
    assert shapes == [("pkg.b.OtherSpec", 0)]
    assert warnings == [
        f"{tmp_path / 'pkg/a.py'}: cannot read spec classes: "
        "invalid syntax (<unknown>, line 1)"
    ]


def test_scanned_files_add_their_spec_classes_after_the_families(tmp_path):
    def read(name: str) -> bytes:
        if name.endswith("unreadable.py"):
            raise OSError("gone")
        with open(name, "rb") as f:
            return f.read()

    shapes, first_scanned, warnings = _read(
        tmp_path,
        {
            "pkg/a.py": FAMILY_A,
            "plugin/broken.py": "class Broken(MLAAttentionSpec): ...\nx = (\n",
            "plugin/one.py": "class OneSpec(FirstSpec): ...\nclass Plain: ...\n",
            "plugin/two.py": "class TwoSpec(MLAAttentionSpec): ...\n",
            # Another copy of the family module's path: scanned, not skipped.
            "other/pkg/a.py": "class CopySpec(MLAAttentionSpec): ...\n",
        },
        ["pkg.a"],
        [
            "pkg/a.py",
            "plugin/unreadable.py",
            "plugin/broken.py",
            "plugin/one.py",
            "plugin/two.py",
            "other/pkg/a.py",
        ],
        read=read,
    )
    scanned = [
        (name.rpartition(".")[2], order) for name, order in shapes[first_scanned:]
    ]
    assert scanned == [("OneSpec", 2), ("TwoSpec", 3), ("CopySpec", 4)]
    assert [name for name, _ in shapes[:first_scanned]] == [
        "pkg.a.FirstSpec",
        "pkg.a.SecondSpec",
    ]
    assert warnings == []


def test_a_family_module_gone_before_its_classes_are_read_is_a_warning(
    tmp_path, monkeypatch, capsys
):
    """Read for the hierarchy, then gone (or unreadable) when its classes are
    read: each face says so and goes on."""
    from vllm_spec_lint.edges import runner, spec_classes
    from vllm_spec_lint.faces import cli

    kci = write_family_module(tmp_path, SPEC_CLASSES)

    def gone(path):
        raise FileNotFoundError(2, "No such file or directory")

    monkeypatch.setattr(spec_classes, "read_source", gone)
    warning = f"{kci}: cannot read spec classes: [Errno 2] No such file or directory"
    config = Config(root=tmp_path, discover_families=True)
    checked = runner.run([tmp_path], config, use_cache=False, jobs=1)
    assert checked.warnings == [warning]
    name = str(tmp_path / "w.py")
    assert runner.run_source(name, BAD.encode(), config).warnings == [warning]
    monkeypatch.chdir(tmp_path)
    for args in (["--discover"], ["--discover-families"]):
        assert cli.main(["families", *args, "."]) == 0
        assert capsys.readouterr().err == f"warning: {warning}\n"


def test_a_scanned_file_no_import_can_name_is_named_by_its_path(tmp_path):
    shapes, first_scanned, _ = _read(
        tmp_path,
        {"pkg/a.py": FAMILY_A, "tools/my-plugin.py": "class MySpec(FirstSpec): ...\n"},
        ["pkg.a"],
        ["tools/my-plugin.py"],
    )
    # (the helper hands the reader absolute paths)
    path = tmp_path / "tools" / "my-plugin.py"
    assert shapes[first_scanned:] == [(f"{path}.MySpec", 2)]


@pytest.mark.parametrize(
    "expression",
    [
        "-" * 100_000 + "1",  # MemoryError from CPython's parser
        pytest.param(
            "+".join(["1"] * 200_000),  # RecursionError
            marks=pytest.mark.skipif(
                sys.version_info >= (3, 13),
                reason="CPython 3.13.0's parser crashes (SIGSEGV) on this sum",
            ),
        ),
    ],
    ids=["unary", "sum"],
)
def test_a_scanned_file_nested_too_deeply_to_parse_is_left_to_the_analysis(
    tmp_path, expression
):
    deep = "class DeepSpec(FirstSpec): ...\nx = " + expression + "\n"
    shapes, first_scanned, warnings = _read(
        tmp_path,
        {"pkg/a.py": FAMILY_A, "plugin/deep.py": deep, "plugin/two.py": FAMILY_B},
        ["pkg.a"],
        ["plugin/deep.py", "plugin/two.py"],
    )
    # The deep file is passed over (the analysis reports it); the next is read.
    assert [name.rpartition(".")[2] for name, _ in shapes[first_scanned:]] == [
        "OtherSpec"
    ]
    assert warnings == []


def test_vllms_own_subclasses_form_no_stand_ins_when_discovering(tmp_path):
    """In vLLM's own tree a subclass named like a stand-in is vLLM's class,
    read by the family module's hierarchy, not a plugin's: discovery reads
    the classes, the families stay vLLM's."""
    from tests.conftest import run_cli

    write_family_module(tmp_path, SPEC_CLASSES)
    (tmp_path / "vllm" / "v1" / "other.py").write_text(
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n\n\n"
        "class TkvMLAAttentionSpec(MLAAttentionSpec): ...\n"
    )
    (tmp_path / "pyproject.toml").write_text(
        "[tool.vllm-spec-lint]\ndiscover-families = true\n"
    )
    out = run_cli("families", ".", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "stand-in" not in out.stdout
    assert out.stdout.startswith("family mla (vllm.v1.kv_cache_interface)\n")


# A plugin that declares its own family, whose module is in its tree, and one
# more spec class in another of its files.
ACME_FAMILY_MODULE = (
    "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
    "\n\nclass AcmeMLASpec(MLAAttentionSpec): ...\n"
    "\n\nclass AcmeSlidingWindowMLASpec(SlidingWindowMLASpec): ...\n"
)
ACME_INDEXER = (
    "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
    "\n\nclass AcmeIndexerSpec(MLAAttentionSpec): ...\n"
)
ACME = Family("acme", "acme.kv", ("AcmeMLASpec", "AcmeSlidingWindowMLASpec"))


def _acme_tree(root, *, with_vllm: bool):
    from vllm_spec_lint.model.hierarchy import DEFAULT_FAMILIES

    (root / "acme" / "ops").mkdir(parents=True)
    (root / "acme" / "kv.py").write_text(ACME_FAMILY_MODULE)
    (root / "acme" / "ops" / "indexer.py").write_text(ACME_INDEXER)
    if with_vllm:
        write_family_module(root, SPEC_CLASSES)
    return Config(root=root, families=(*DEFAULT_FAMILIES, ACME))


def test_a_plugins_own_family_module_in_its_tree_keeps_it_a_plugin(tmp_path):
    """Its other files' spec classes join the hierarchy: only vLLM's own
    family module makes the tree vLLM."""
    from vllm_spec_lint.edges.runner import run

    config = _acme_tree(tmp_path, with_vllm=False)
    check_run = run([tmp_path], config, use_cache=False, jobs=1)
    assert check_run.hierarchy.described_sources() == (
        f"built-in defaults, scanned tree: {tmp_path}/acme/kv.py, "
        "scanned files: 1 class"
    )


def test_a_tree_holding_vllms_family_module_beside_a_plugins_is_vllm(tmp_path):
    from vllm_spec_lint.edges.runner import run

    config = _acme_tree(tmp_path, with_vllm=True)
    check_run = run([tmp_path], config, use_cache=False, jobs=1)
    assert check_run.hierarchy.described_sources() == (
        f"scanned tree: {tmp_path}/vllm/v1/kv_cache_interface.py, "
        f"scanned tree: {tmp_path}/acme/kv.py"
    )


def test_vllms_family_module_makes_the_tree_vllm_beside_another_vllm_family(
    tmp_path,
):
    """A configured family in another vLLM module, not in this tree: the
    tree holding one vLLM family module is vLLM all the same, and its own
    subclass elsewhere joins no hierarchy as a plugin's would."""
    from vllm_spec_lint.edges.runner import run
    from vllm_spec_lint.model.hierarchy import DEFAULT_FAMILIES

    write_family_module(tmp_path, SPEC_CLASSES)
    (tmp_path / "vllm" / "extra_spec.py").write_text(ACME_INDEXER)
    other = Family("chunked", "vllm.v1.chunked_specs", ("ChunkedSpec", "ChunkedSWSpec"))
    config = Config(root=tmp_path, families=(*DEFAULT_FAMILIES, other))
    check_run = run([tmp_path], config, use_cache=False, jobs=1)
    assert check_run.hierarchy.described_sources() == (
        f"scanned tree: {tmp_path}/vllm/v1/kv_cache_interface.py"
    )
