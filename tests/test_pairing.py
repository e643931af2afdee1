"""Backend pairing across a tree (model/pairing.py, edges/pairing.py): a test
on a metadata builder's own spec is deliberate when no layer whose backend
returns that builder builds the companion; any escape keeps it reported.

The tree is vLLM's shape in miniature, written here: a backend returning an
indexer builder, an indexer cache layer using that backend and building
MLAAttentionSpec, and the builder testing its own spec for MLA."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.conftest import run_cli, run_flake8

pytestmark = pytest.mark.fast

BACKEND_BASE = """\
class AttentionBackend:
    @classmethod
    def customize_spec(cls, spec):
        return spec


class AttentionMetadataBuilder:
    def __init__(self, kv_cache_spec, layer_names, vllm_config, device):
        self.kv_cache_spec = kv_cache_spec
"""

INDEXER = """\
from vllm.v1.attention.backend import AttentionBackend, AttentionMetadataBuilder
from vllm.v1.kv_cache_interface import MLAAttentionSpec


class IndexerBackend(AttentionBackend):
    @staticmethod
    def get_builder_cls() -> type["IndexerMetadataBuilder"]:
        return IndexerMetadataBuilder


class IndexerMetadataBuilder(AttentionMetadataBuilder):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.compress_ratio = 1
        if isinstance(self.kv_cache_spec, MLAAttentionSpec):
            self.compress_ratio = self.kv_cache_spec.compress_ratio
"""

LAYER = """\
from vllm.v1.attention.backends.indexer import IndexerBackend
from vllm.v1.kv_cache_interface import MLAAttentionSpec


class IndexerCache:
    def get_attn_backend(self):
        return IndexerBackend

    def get_kv_cache_spec(self, vllm_config):
        return MLAAttentionSpec(block_size=64, num_kv_heads=1, head_size=128)
"""

SITE = "vllm/v1/attention/backends/indexer.py"
SITE_ROW = 15


def _tree(root: Path, extra: dict[str, str] | None = None) -> Path:
    files = {
        "vllm/v1/attention/backend.py": BACKEND_BASE,
        SITE: INDEXER,
        "vllm/model_executor/layers/indexer_cache.py": LAYER,
        **(extra or {}),
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for folder in {(root / n).parent for n in files}:
        while folder != root:
            (folder / "__init__.py").touch()
            folder = folder.parent
    return root


def _check(root: Path, *args: str):
    out = run_cli(
        "check", "--no-cache", "--output-format", "json", *args, ".", cwd=root
    )
    assert out.returncode in (0, 1), out.stderr
    return [
        (f["filename"].removeprefix(str(root) + "/"), f["location"]["row"], f["code"])
        for f in json.loads(out.stdout)
    ], json.loads(out.stdout)


def test_a_test_no_layer_of_the_builder_can_fail_is_left_out(tmp_path):
    root = _tree(tmp_path)
    assert _check(root)[0] == []


def test_explain_suppressions_prints_the_chain(tmp_path):
    root = _tree(tmp_path)
    out = run_cli("check", "--no-cache", "--explain-suppressions", ".", cwd=root)
    assert out.returncode == 0, out.stdout + out.stderr
    assert (
        f"{SITE}:{SITE_ROW}:43: VSL001 not reported: pairing: "
        "IndexerMetadataBuilder's spec comes only from layers using "
        "IndexerBackend; those layers build only MLAAttentionSpec; assumes no "
        "layer outside this tree uses these backends"
    ) in out.stdout


def test_strict_reports_the_site_tagged_with_an_unsafe_fix(tmp_path):
    root = _tree(tmp_path)
    sites, raw = _check(root, "--strict")
    assert sites == [(SITE, SITE_ROW, "VSL001")]
    assert raw[0]["suppressed_by"].startswith("pairing: IndexerMetadataBuilder's")
    assert raw[0]["fix"]["applicability"] == "unsafe"


def test_one_file_alone_keeps_reporting(tmp_path):
    """The flake8 plugin, pre-commit and an editor see one file: no tree, no
    pairing."""
    root = _tree(tmp_path)
    sites, _ = _check(root / SITE.rpartition("/")[0])
    assert [(row, code) for _, row, code in sites] == [(SITE_ROW, "VSL001")]
    out = run_flake8("--select", "VSL", SITE, cwd=root)
    assert f"{SITE}:{SITE_ROW}:43: VSL001" in out.stdout


# Each a change to the tree after which a SlidingWindowMLASpec may reach the
# builder, or the reading can no longer tell: the site is reported again.
ESCAPES = {
    "a new layer subclass that builds the companion": {
        "vllm/models/v4/cache.py": """\
from vllm.model_executor.layers.indexer_cache import IndexerCache
from vllm.v1.kv_cache_interface import SlidingWindowMLASpec


class WindowIndexerCache(IndexerCache):
    def get_kv_cache_spec(self, vllm_config):
        return SlidingWindowMLASpec(block_size=64, sliding_window=128)
"""
    },
    "a conditional return of a spec from elsewhere": {
        "vllm/model_executor/layers/indexer_cache.py": LAYER.replace(
            "        return MLAAttentionSpec(",
            "        if self.windowed:\n"
            "            return self.window_spec\n"
            "        return MLAAttentionSpec(",
        )
    },
    "a backend kept in a table": {
        "vllm/v1/attention/registry.py": """\
from vllm.v1.attention.backends.indexer import IndexerBackend

BACKENDS = {"indexer": IndexerBackend}
"""
    },
    "a layer returning its backend from an attribute": {
        "vllm/model_executor/layers/indexer_cache.py": LAYER.replace(
            "    def get_attn_backend(self):\n        return IndexerBackend",
            "    def __init__(self):\n        self.backend = IndexerBackend\n\n"
            "    def get_attn_backend(self):\n        return self.backend",
        )
    },
    "a backend chosen by a conditional in a layer building the companion": {
        "vllm/models/v4/swa.py": """\
from vllm.v1.attention.backends.indexer import IndexerBackend
from vllm.v1.attention.backends.swa import SWABackend
from vllm.v1.kv_cache_interface import SlidingWindowMLASpec


class CompressedCache:
    def get_attn_backend(self):
        return IndexerBackend if self.compressed else SWABackend

    def get_kv_cache_spec(self, vllm_config):
        return SlidingWindowMLASpec(block_size=64, sliding_window=128)
"""
    },
    "a dotted-path string naming the builder": {
        "vllm/config/builders.py": (
            'INDEXER = "vllm.v1.attention.backends.indexer.IndexerMetadataBuilder"\n'
        )
    },
    "a customize_spec that rewrites the spec": {
        SITE: INDEXER.replace(
            "class IndexerBackend(AttentionBackend):\n",
            "class IndexerBackend(AttentionBackend):\n"
            "    @classmethod\n"
            "    def customize_spec(cls, spec):\n"
            "        return to_window(spec)\n\n",
        )
    },
    "a subclass of the builder handing its base another spec": {
        "vllm/models/v4/builder.py": """\
from dataclasses import replace

from vllm.v1.attention.backends.indexer import IndexerMetadataBuilder


class V4IndexerMetadataBuilder(IndexerMetadataBuilder):
    def __init__(self, kv_cache_spec, layer_names, vllm_config, device):
        super().__init__(widen(kv_cache_spec), layer_names, vllm_config, device)
"""
    },
    "the builder rebinding its own spec": {
        SITE: INDEXER.replace(
            "        self.compress_ratio = 1\n",
            "        self.kv_cache_spec = self.kv_cache_spec.merged()\n"
            "        self.compress_ratio = 1\n",
        )
    },
    "the backend renamed on import": {
        "vllm/models/v4/alias.py": (
            "from vllm.v1.attention.backends.indexer import IndexerBackend as B\n"
        )
    },
}


@pytest.mark.parametrize("escape", sorted(ESCAPES))
def test_an_escape_keeps_the_site_reported(tmp_path, escape):
    root = _tree(tmp_path, ESCAPES[escape])
    sites, raw = _check(root)
    added = ESCAPES[escape].get(SITE, INDEXER).count("\n") - INDEXER.count("\n")
    row = SITE_ROW + added
    assert (SITE, row, "VSL001") in sites, (escape, sites)
    mine = [f for f in raw if f["filename"].endswith(SITE)]
    assert mine[0]["suppressed_by"] is None


# Uses of the builder's and backend's names that hand the class to nobody.
HARMLESS = {
    "vllm/v1/worker/graphs.py": """\
'''Builds IndexerMetadataBuilder metadata in graphs (a docstring).'''
from vllm.v1.attention.backends.indexer import IndexerBackend, IndexerMetadataBuilder

__all__ = ["IndexerMetadataBuilder"]
_READERS = frozenset({IndexerMetadataBuilder})


def recordable(builder: IndexerMetadataBuilder) -> bool:
    sizes = IndexerBackend.get_supported_kernel_block_sizes()
    if isinstance(builder, IndexerMetadataBuilder) or type(builder) is IndexerMetadataBuilder:
        return bool(sizes)
    return type(builder) in _READERS
""",
    "vllm/models/v4/cache.py": """\
from dataclasses import replace

from vllm.model_executor.layers.indexer_cache import IndexerCache
from vllm.v1.kv_cache_interface import MLAAttentionSpec


class CompressedIndexerCache(IndexerCache):
    def get_kv_cache_spec(self, vllm_config):
        spec = super().get_kv_cache_spec(vllm_config)
        return replace(spec, compress_ratio=4)
""",
}


def test_uses_that_hand_the_class_to_nobody_keep_the_site_left_out(tmp_path):
    root = _tree(tmp_path, HARMLESS)
    assert _check(root)[0] == []


def test_the_companion_built_through_super_and_replace_is_seen(tmp_path):
    extra = dict(HARMLESS)
    extra["vllm/models/v4/cache.py"] = extra["vllm/models/v4/cache.py"].replace(
        "MLAAttentionSpec\n", "MLAAttentionSpec, SlidingWindowMLASpec\n"
    ) + textwrap.dedent(
        """

        class WindowCache(CompressedIndexerCache):
            def get_kv_cache_spec(self, vllm_config):
                if self.window:
                    return SlidingWindowMLASpec(block_size=64, sliding_window=8)
                return super().get_kv_cache_spec(vllm_config)
        """
    )
    root = _tree(tmp_path, extra)
    assert (SITE, SITE_ROW, "VSL001") in _check(root)[0]


def test_fix_leaves_a_deliberate_site_and_fixes_a_kept_one(tmp_path):
    root = _tree(tmp_path / "deliberate")
    out = run_cli("fix", "--unsafe-fixes", "--no-cache", ".", cwd=root)
    assert out.returncode == 0, out.stdout + out.stderr
    assert (root / SITE).read_text() == INDEXER

    escape = ESCAPES["a dotted-path string naming the builder"]
    root = _tree(tmp_path / "kept", escape)
    out = run_cli("fix", "--unsafe-fixes", "--no-cache", ".", cwd=root)
    assert out.returncode == 0, out.stdout + out.stderr
    fixed = (root / SITE).read_text()
    assert (
        "isinstance(self.kv_cache_spec, (MLAAttentionSpec, SlidingWindowMLASpec))"
        in fixed
    )
    assert out.stdout == "Found 1 error (1 fixed, 0 remaining).\n"


# -- the reading itself, on the same trees (model/pairing.py, no I/O) ------------

BUILDER = "vllm.v1.attention.backends.indexer.IndexerMetadataBuilder"


def _summaries(extra: dict[str, str]):
    from vllm_spec_lint.model.class_summaries import summarize
    from vllm_spec_lint.model.pairing import Tree

    files = {
        "vllm/v1/attention/backend.py": BACKEND_BASE,
        SITE: INDEXER,
        "vllm/model_executor/layers/indexer_cache.py": LAYER,
        **extra,
    }
    return Tree(
        [
            summarize(text.encode(), name.removesuffix(".py").replace("/", "."), False)
            for name, text in files.items()
        ]
    )


# Why each escape keeps the site: the chain's own word for it, or (None) a
# chain that reads through but whose layers or backends decide against it.
WHY = {
    "a new layer subclass that builds the companion": None,
    "a conditional return of a spec from elsewhere": None,
    "a backend kept in a table": "the backend IndexerBackend is used in a way not followed (other)",
    "a layer returning its backend from an attribute": "the backend IndexerBackend is used in a way not followed (other)",
    "a backend chosen by a conditional in a layer building the companion": None,
    "a dotted-path string naming the builder": "the builder IndexerMetadataBuilder is used in a way not followed (string)",
    "a customize_spec that rewrites the spec": None,
    "a subclass of the builder handing its base another spec": "V4IndexerMetadataBuilder gives its base another spec",
    "the builder rebinding its own spec": "IndexerMetadataBuilder assigns self.kv_cache_spec",
    "the backend renamed on import": "the backend IndexerBackend is used in a way not followed (other)",
}


@pytest.mark.parametrize("escape", sorted(ESCAPES))
def test_the_reading_says_why_an_escape_keeps_the_site(escape):
    from vllm_spec_lint.model.hierarchy import ClassHierarchy
    from vllm_spec_lint.model.pairing import chain_of, verdict

    tree = _summaries(ESCAPES[escape])
    assert chain_of(BUILDER, tree).unknown == WHY[escape]
    own_spec = (BUILDER, "vllm.v1.kv_cache_interface.SlidingWindowMLASpec")
    assert verdict(own_spec, tree, ClassHierarchy.default()) is None


def test_the_layers_of_a_conditional_backend_choice_are_all_counted():
    from vllm_spec_lint.model.pairing import chain_of

    escape = "a backend chosen by a conditional in a layer building the companion"
    chain = chain_of(BUILDER, _summaries(ESCAPES[escape]))
    assert chain.layers == {
        "vllm.model_executor.layers.indexer_cache.IndexerCache",
        "vllm.models.v4.swa.CompressedCache",
    }


def test_the_unchanged_tree_reads_as_deliberate():
    from vllm_spec_lint.model.hierarchy import ClassHierarchy
    from vllm_spec_lint.model.pairing import verdict

    own_spec = (BUILDER, "vllm.v1.kv_cache_interface.SlidingWindowMLASpec")
    assert verdict(own_spec, _summaries({}), ClassHierarchy.default()) == (
        "pairing: IndexerMetadataBuilder's spec comes only from layers using "
        "IndexerBackend; those layers build only MLAAttentionSpec; assumes no "
        "layer outside this tree uses these backends"
    )


# -- real releases: the real bugs stay reported with pairing on ----------------

NIXL = "vllm/distributed/kv_transfer/kv_connector/v1/nixl/base_worker.py"
# (release, the row reported once the line PR #45831 fixed is put back, the
# site where unify_kv_cache_spec_page_size misses the companion)
REAL_BUGS = [
    ("0.24.0", 1065, None),
    ("0.29.0", None, ("vllm/v1/core/kv_cache_utils.py", 1186)),
    ("0.33.0", 1617, ("vllm/v1/core/kv_cache_planning.py", 397)),
    ("0.34.0", 1700, ("vllm/v1/core/kv_cache_planning.py", 443)),
]


@pytest.mark.release
@pytest.mark.parametrize(("version", "nixl_row", "unify"), REAL_BUGS)
def test_pr_45831s_line_put_back_and_the_unify_miss_stay_reported(
    version, nixl_row, unify, tmp_path
):
    import shutil

    from tests.conftest import fetch_vllm

    tree = tmp_path / f"vllm-{version}"
    shutil.copytree(fetch_vllm(version), tree)
    if nixl_row is not None:
        worker = tree / NIXL
        fixed = "layer_spec, (MLAAttentionSpec, SlidingWindowMLASpec)"
        text = worker.read_text()
        assert text.count(fixed) == 1
        worker.write_text(text.replace(fixed, "layer_spec, MLAAttentionSpec"))
    sites, _ = _check(tree)
    if nixl_row is not None:
        assert (NIXL, nixl_row, "VSL001") in sites
    if unify is not None:
        assert (*unify, "VSL001") in sites


def test_no_customize_spec_anywhere_in_a_backends_bases_is_no_customizing():
    """vLLM 0.24.0 had no customize_spec at all."""
    from vllm_spec_lint.model.hierarchy import ClassHierarchy
    from vllm_spec_lint.model.pairing import verdict

    base = BACKEND_BASE.replace(
        "    @classmethod\n    def customize_spec(cls, spec):\n        return spec\n",
        "    pass\n",
    )
    tree = _summaries({"vllm/v1/attention/backend.py": base})
    own_spec = (BUILDER, "vllm.v1.kv_cache_interface.SlidingWindowMLASpec")
    assert verdict(own_spec, tree, ClassHierarchy.default()).startswith("pairing: ")


def test_a_backend_base_outside_the_tree_may_customize_the_spec():
    from vllm_spec_lint.model.hierarchy import ClassHierarchy
    from vllm_spec_lint.model.pairing import verdict

    base = BACKEND_BASE.replace(
        "class AttentionBackend:\n    @classmethod\n"
        "    def customize_spec(cls, spec):\n        return spec\n",
        "from plugin.backends import PluginBackend\n\n\n"
        "class AttentionBackend(PluginBackend):\n    pass\n",
    )
    tree = _summaries({"vllm/v1/attention/backend.py": base})
    own_spec = (BUILDER, "vllm.v1.kv_cache_interface.SlidingWindowMLASpec")
    assert verdict(own_spec, tree, ClassHierarchy.default()) is None


def test_the_cached_verdict_is_asked_again_after_any_file_changes(tmp_path):
    root = _tree(tmp_path)

    def reported():
        out = run_cli("check", "--output-format", "concise", ".", cwd=root)
        assert out.returncode in (0, 1), out.stderr
        return out.returncode == 1

    assert not reported()
    assert (root / ".vllm_spec_lint_cache").is_dir()
    assert not reported()  # from the cache
    escape = "a conditional return of a spec from elsewhere"
    for name, text in ESCAPES[escape].items():
        (root / name).write_text(text)
    assert reported()
    (root / "vllm/model_executor/layers/indexer_cache.py").write_text(LAYER)
    assert not reported()
    escape = "a dotted-path string naming the builder"
    _tree(root, ESCAPES[escape])  # a new file, none changed
    assert reported()


def test_builders_are_guessed_from_their_own_spec_tests_in_the_text():
    from vllm_spec_lint.edges.pairing import guess_builders

    source = b"""\
class Plain:
    def f(self, kv_cache_spec):
        return isinstance(kv_cache_spec, FullAttentionSpec)


class Both(Base):
    def __init__(self):
        ok = isinstance(self.kv_cache_spec, (MLAAttentionSpec, SlidingWindowMLASpec))


class Mine(Base):
    def __init__(self, kv_cache_spec):
        mla = isinstance(kv_cache_spec, (FullAttentionSpec, MLAAttentionSpec))


class Theirs(Base):
    def build(self):
        return isinstance(self.kv_cache_spec, MLAAttentionSpec)
"""
    guessed = guess_builders(
        "pkg.mod", source, [b"MLAAttentionSpec"], [b"SlidingWindowMLASpec"]
    )
    assert guessed == ["pkg.mod.Mine", "pkg.mod.Theirs"]
    assert (
        guess_builders("pkg.mod", b"x = kv_cache_spec\n", [b"MLAAttentionSpec"]) == []
    )
    assert guess_builders(None, source, [b"MLAAttentionSpec"]) == []


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_with_or_without_workers_the_verdicts_are_the_same(tmp_path, jobs):
    """With workers, the pass starts early on guessed builders."""
    escape = "a new layer subclass that builds the companion"
    kept = _tree(tmp_path / "kept", ESCAPES[escape])
    left = _tree(tmp_path / "left")
    assert _check(kept, "-j", jobs)[0] == [(SITE, SITE_ROW, "VSL001")]
    assert _check(left, "-j", jobs)[0] == []
