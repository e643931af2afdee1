"""Backend pairing across a tree (model/pairing.py, edges/pairing.py): a test
on a metadata builder's own spec is deliberate when no layer whose backend
returns that builder builds the companion; any escape keeps it reported.

The tree is vLLM's shape in miniature, written here: a backend returning an
indexer builder, an indexer cache layer using that backend and building
MLAAttentionSpec, and the builder testing its own spec for MLA."""

from __future__ import annotations

import json
import os
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
    """Even where the project makes VSL001's fixes safe: a deliberate site's
    fix is never applied without --unsafe-fixes."""
    root = _tree(tmp_path)
    (root / "pyproject.toml").write_text(
        '[tool.vllm-spec-lint]\nextend-safe-fixes = ["VSL001"]\n'
    )
    sites, raw = _check(root, "--strict")
    assert sites == [(SITE, SITE_ROW, "VSL001")]
    assert raw[0]["suppressed_by"].startswith("pairing: IndexerMetadataBuilder's")
    assert raw[0]["fix"]["applicability"] == "unsafe"


def test_only_the_deliberate_site_of_a_file_leaves_its_findings(tmp_path):
    """The builder's file also holds an ordinary finding, and a site with no
    fix (an MRO test) on the builder's own spec."""
    indexer = INDEXER + (
        "\n    def is_mla(self):\n"
        "        return MLAAttentionSpec in type(self.kv_cache_spec).__mro__\n"
        "\n\nOTHER = isinstance(DEFAULT_SPEC, MLAAttentionSpec)\n"
        "\n\ndef narrowed(spec):\n"
        "    if isinstance(spec, SlidingWindowMLASpec):\n"
        "        return None\n"
        "    return isinstance(spec, MLAAttentionSpec)\n"
        "\n\nfrom vllm.v1.kv_cache_interface import SlidingWindowMLASpec\n"
    )
    root = _tree(tmp_path, {SITE: indexer})
    assert _check(root)[0] == [(SITE, SITE_ROW + 7, "VSL001")]
    out = run_cli("check", "--no-cache", "--explain-suppressions", ".", cwd=root)
    reasons = [line for line in out.stdout.splitlines() if "not reported" in line]
    # In the file's order, the pairing's and the file's own narrowing's.
    assert [r.split(" not reported: ")[0] for r in reasons] == [
        f"{SITE}:{SITE_ROW}:43: VSL001",
        f"{SITE}:{SITE_ROW + 4}:16: VSL005",
        f"{SITE}:{SITE_ROW + 13}:29: VSL001",
    ]
    assert reasons[2].split(" not reported: ")[1].startswith("narrowed: ")


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
    "a file naming the backend that does not parse": {
        "vllm/models/v4/broken.py": (
            "from vllm.v1.attention.backends.indexer import IndexerBackend\n"
            "BACKENDS = {\n"
        )
    },
    "a file naming the backend nested too deeply to read": {
        "vllm/models/v4/deep.py": "x = " + "-" * 3000 + "IndexerBackend\n"
    },
    "a file naming the backend too deeply for the parser": {
        "vllm/models/v4/deeper.py": "x = " + "-" * 20000 + "IndexerBackend\n"
    },
    "a file naming a layer that does not parse": {
        "vllm/models/v4/sub.py": (
            "from vllm.model_executor.layers.indexer_cache import IndexerCache\n"
            "class SubCache(IndexerCache:\n"
        )
    },
    "a file naming the backend with a NUL byte": {
        "vllm/models/v4/nul.py": "import IndexerBackend\n\0\n"
    },
    "a script no import can name keeping the backend": {
        "run-indexer.py": (
            "from vllm.v1.attention.backends.indexer import IndexerBackend\n"
            "BACKENDS = [IndexerBackend]\n"
        )
    },
    "a classmethod of the builder called elsewhere": {
        "vllm/models/v4/make.py": (
            "from vllm.v1.attention.backends.indexer import IndexerMetadataBuilder\n\n"
            "BUILDER = IndexerMetadataBuilder.for_spec(WINDOW_SPEC)\n"
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


def kinds(builder) -> tuple:
    return (
        type(builder) == IndexerMetadataBuilder,
        type(builder) != IndexerMetadataBuilder,
        type(builder) is not IndexerMetadataBuilder,
        type(builder) in (IndexerMetadataBuilder, IndexerBackend),
        type(builder) in _PLAIN or type(builder) in _MADE,
    )


_PLAIN = (IndexerMetadataBuilder,)
_MADE = tuple([IndexerMetadataBuilder])
_LOG = make_logger(__name__)
"vllm.v1.attention.backends.indexer.IndexerMetadataBuilder"  # a bare string
""",
    "vllm/models/v4/doc.py": '''\
"""vllm.v1.attention.backends.indexer.IndexerMetadataBuilder"""
from vllm.v1.attention.backends.indexer import IndexerMetadataBuilder


class PlainIndexerMetadataBuilder(IndexerMetadataBuilder):
    """Builds what its base builds."""
''',
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


# The builder's file with a second builder no backend returns (what reaches
# it is unknown: its own-spec test is kept), an ordinary finding and one
# without a fix (left after the fix's first pass beside the own-spec ones).
TWO_BUILDERS = (
    INDEXER
    + """

class PlainMetadataBuilder(AttentionMetadataBuilder):
    def is_mla(self) -> bool:
        return isinstance(self.kv_cache_spec, MLAAttentionSpec)


IS_MLA = isinstance(DEFAULT_SPEC, MLAAttentionSpec)
MRO_MLA = MLAAttentionSpec in type(OTHER_SPEC).__mro__
"""
)
TWO_BUILDERS_FIXED = (
    TWO_BUILDERS.replace(
        "import MLAAttentionSpec\n", "import MLAAttentionSpec, SlidingWindowMLASpec\n"
    )
    .replace(
        "        return isinstance(self.kv_cache_spec, MLAAttentionSpec)\n",
        "        return isinstance(self.kv_cache_spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
    )
    .replace(
        "IS_MLA = isinstance(DEFAULT_SPEC, MLAAttentionSpec)\n",
        "IS_MLA = isinstance(DEFAULT_SPEC, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
    )
)


def test_a_tree_fix_holds_a_builders_file_until_the_pairing_has_decided(tmp_path):
    """The deliberate site stays; the kept builder's site and the ordinary
    one are fixed, in the one write made after the pairing decided."""
    root = _tree(tmp_path, {SITE: TWO_BUILDERS})
    out = run_cli("fix", "--unsafe-fixes", "--no-cache", ".", cwd=root)
    assert out.returncode == 1, out.stderr
    assert out.stdout.endswith("Found 3 errors (2 fixed, 1 remaining).\n")
    assert (root / SITE).read_text() == TWO_BUILDERS_FIXED


def test_a_tree_fixs_diff_shows_the_held_files_fixes_and_writes_nothing(tmp_path):
    root = _tree(tmp_path, {SITE: TWO_BUILDERS})
    out = run_cli("fix", "--unsafe-fixes", "--no-cache", "--diff", ".", cwd=root)
    assert out.returncode == 1, out.stderr
    added = [
        line
        for line in out.stdout.splitlines()
        if line.startswith("+") and not line.startswith("+++")
    ]
    assert added == [
        "+from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec",
        "+        return isinstance(self.kv_cache_spec, (MLAAttentionSpec, SlidingWindowMLASpec))",
        "+IS_MLA = isinstance(DEFAULT_SPEC, (MLAAttentionSpec, SlidingWindowMLASpec))",
    ]
    assert (root / SITE).read_text() == TWO_BUILDERS


def test_a_tree_check_caches_a_builders_file_like_any_other(tmp_path, monkeypatch):
    """Only a fix waits for the pairing; a check's results are all cached, so
    the next check analyses nothing."""
    from vllm_spec_lint.core.settings import Config
    from vllm_spec_lint.edges import runner

    root = _tree(tmp_path, {SITE: TWO_BUILDERS})
    config = Config(root=root)
    first = runner.run([root], config, jobs=1)

    def no_analysis(*args, **kwargs):
        raise AssertionError("a cached file analysed again")

    monkeypatch.setattr(runner, "analyze_file", no_analysis)
    again = runner.run([root], config, jobs=1)
    sites = [(Path(f.path).name, f.location) for f in again.findings]
    assert sites == [
        ("indexer.py", (21, 47)),
        ("indexer.py", (24, 35)),
        ("indexer.py", (25, 11)),
    ]
    assert [f.location for f in first.findings] == [(21, 47), (24, 35), (25, 11)]


def test_a_tree_check_reads_each_file_once_for_the_analysis_and_the_pass(
    tmp_path, monkeypatch
):
    """The pass takes the bytes the run read to screen the files."""

    from vllm_spec_lint.core.settings import Config
    from vllm_spec_lint.edges import runner

    root = _tree(tmp_path)
    opened = []
    real_open = os.open

    def open_and_count(path, *args, **kwargs):
        if str(path).endswith(".py"):
            opened.append(Path(path).resolve())
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_and_count)
    check_run = runner.run([root], Config(root=root), use_cache=False, jobs=1)
    assert [f.suppressed_by[:9] for f in check_run.suppressed] == ["pairing: "]
    assert sorted(opened) == sorted(p.resolve() for p in root.rglob("*.py"))


def test_a_tree_checks_verdicts_are_kept_and_a_no_cache_run_keeps_none(
    tmp_path, monkeypatch
):
    """The pass's verdict is cached with the results: the next check reads
    no file for it. A run without the cache writes none."""
    from vllm_spec_lint.core.settings import Config
    from vllm_spec_lint.edges import pairing, runner

    root = _tree(tmp_path)
    config = Config(root=root)
    unkept = runner.run([root], config, use_cache=False, jobs=1)
    assert not (root / ".vllm_spec_lint_cache").exists()
    first = runner.run([root], config, jobs=1)

    def no_reading(*args, **kwargs):
        raise AssertionError("the pass read a file again")

    monkeypatch.setattr(pairing, "summarize", no_reading)
    again = runner.run([root], config, jobs=1)
    for check_run in (unkept, first, again):
        assert check_run.findings == []
        assert [
            (Path(f.path).name, f.location, f.suppressed_by[:9])
            for f in check_run.suppressed
        ] == [("indexer.py", (15, 43), "pairing: ")]


@pytest.mark.parametrize(
    ("jobs", "events"), [(2, ["pass", "results"]), (1, ["results"])]
)
def test_the_pass_starts_while_the_workers_analyse(tmp_path, monkeypatch, jobs, events):
    """With workers, this process starts the pass on the guessed builders
    before it waits for their results; alone, it analyses first."""
    from vllm_spec_lint.core.settings import Config
    from vllm_spec_lint.edges import runner, workers

    seen = []
    real_start, real_results = runner.TreePairing.start, workers.Analyses.results

    def start(self):
        seen.append("pass")
        real_start(self)

    def results(self):
        seen.append("results")
        yield from real_results(self)

    monkeypatch.setattr(runner.TreePairing, "start", start)
    monkeypatch.setattr(workers.Analyses, "results", results)
    root = _tree(tmp_path)
    check_run = runner.run([root], Config(root=root), use_cache=False, jobs=jobs)
    assert seen == events
    assert [f.suppressed_by[:9] for f in check_run.suppressed] == ["pairing: "]


LATER = "vllm/v1/attention/backends/later.py"


def test_a_tree_fix_fixes_the_files_after_a_held_one(tmp_path):
    """A builder's file held for the pairing does not stop the files after
    it from being fixed and written."""
    from vllm_spec_lint.core.settings import Config
    from vllm_spec_lint.edges import runner

    bad = "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n\nOK = isinstance(S, MLAAttentionSpec)\n"
    root = _tree(tmp_path, {SITE: TWO_BUILDERS, LATER: bad})
    config = Config(root=root, fix_formatter="none")
    fixed = runner.run(
        [root], config, fix=True, unsafe=True, write=True, use_cache=False, jobs=1
    )
    assert (root / SITE).read_text() == TWO_BUILDERS_FIXED
    assert (root / LATER).read_text() == (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
        "\n"
        "OK = isinstance(S, (MLAAttentionSpec, SlidingWindowMLASpec))\n"
    )
    assert [(Path(r.path).name, r.fixed) for r in fixed.results if r.fixed] == [
        ("indexer.py", ("VSL001", "VSL001")),
        ("later.py", ("VSL001",)),
    ]


def test_a_held_files_write_that_fails_is_its_failure(tmp_path, monkeypatch):
    """The write after the pairing fails (an I/O error): the file says so,
    keeps its findings as they stand, and stays as it was."""
    from tests.conftest import failing_disk
    from vllm_spec_lint.core.settings import Config
    from vllm_spec_lint.edges import runner

    root = _tree(tmp_path, {SITE: TWO_BUILDERS})
    failing_disk(monkeypatch)
    config = Config(root=root, fix_formatter="none")
    fixed = runner.run(
        [root], config, fix=True, unsafe=True, write=True, use_cache=False, jobs=1
    )
    [held] = [r for r in fixed.results if r.failure]
    assert (Path(held.path).name, held.failure) == (
        "indexer.py",
        "not written: [Errno 5] Input/output error",
    )
    assert [(f.code, f.location) for f in held.findings] == [
        ("VSL001", (21, 47)),
        ("VSL001", (24, 35)),
        ("VSL005", (25, 11)),
    ]
    assert (root / SITE).read_text() == TWO_BUILDERS


# A plugin's stand-ins, and a builder's file whose last test only the tree's
# classes narrow: SlidingWindowMLASpec's test excludes the plugin's companion,
# its subclass (read from the tree, unknown to vLLM's own hierarchy).
PLUGIN_SPECS = """\
from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec


class XMLAAttentionSpec(MLAAttentionSpec):
    pass


class XSlidingWindowMLASpec(SlidingWindowMLASpec):
    pass
"""
WITH_STAND_INS = TWO_BUILDERS.replace(
    "import MLAAttentionSpec\n",
    "import MLAAttentionSpec, SlidingWindowMLASpec\n"
    "from vllm.plugin_specs import XMLAAttentionSpec\n",
) + (
    """

def is_plugin_mla(spec):
    if isinstance(spec, SlidingWindowMLASpec):
        return False
    return isinstance(spec, XMLAAttentionSpec)
"""
)


def _fixed_with_stand_ins(tmp_path):
    from vllm_spec_lint.core.settings import Config
    from vllm_spec_lint.edges import runner

    root = _tree(tmp_path, {SITE: WITH_STAND_INS, "vllm/plugin_specs.py": PLUGIN_SPECS})
    config = Config(root=root, fix_formatter="none")
    fixed = runner.run(
        [root], config, fix=True, unsafe=True, write=True, use_cache=False, jobs=1
    )
    return root, fixed


def test_a_held_file_is_fixed_again_with_the_trees_classes(tmp_path):
    """After the pairing, the held builder's file is analysed again with the
    hierarchy read from the tree: the test it narrows stays as written."""
    root, _ = _fixed_with_stand_ins(tmp_path)
    assert (root / SITE).read_text() == (
        WITH_STAND_INS.replace(
            "        return isinstance(self.kv_cache_spec, MLAAttentionSpec)\n",
            "        return isinstance(self.kv_cache_spec, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
        ).replace(
            "IS_MLA = isinstance(DEFAULT_SPEC, MLAAttentionSpec)\n",
            "IS_MLA = isinstance(DEFAULT_SPEC, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
        )
    )


def test_a_held_files_failed_write_reports_with_the_trees_classes(
    tmp_path, monkeypatch
):
    from tests.conftest import failing_disk

    failing_disk(monkeypatch)
    root, fixed = _fixed_with_stand_ins(tmp_path)
    [held] = [r for r in fixed.results if r.failure]
    assert [(f.code, f.location) for f in held.findings] == [
        ("VSL001", (22, 47)),
        ("VSL001", (25, 35)),
        ("VSL005", (26, 11)),
    ]
    assert (root / SITE).read_text() == WITH_STAND_INS


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
    "a classmethod of the builder called elsewhere": "the builder IndexerMetadataBuilder is used in a way not followed (attribute for_spec)",
    "a script no import can name keeping the backend": "the backend IndexerBackend is used in a way not followed (other)",
}


# Escapes in files CPython's parser or the reading's own walk cannot read:
# nothing is decided then (edges/pairing.py), so no chain says why.
UNREADABLE = {
    "a file naming the backend that does not parse",
    "a file naming the backend nested too deeply to read",
    "a file naming the backend too deeply for the parser",
    "a file naming a layer that does not parse",
    "a file naming the backend with a NUL byte",
}


def test_every_escape_says_why_or_is_unreadable():
    assert set(ESCAPES) == set(WHY) | UNREADABLE
    assert not set(WHY) & UNREADABLE


@pytest.mark.parametrize("escape", sorted(WHY))
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
    anchors = [b"MLAAttentionSpec", b"ChunkedMLASpec"]  # two families
    companions = [b"SlidingWindowMLASpec", b"ChunkedWindowSpec"]
    guessed = guess_builders("pkg.mod", source, anchors, companions)
    assert guessed == ["pkg.mod.Mine", "pkg.mod.Theirs"]
    assert (
        guess_builders("pkg.mod", b"x = kv_cache_spec\n", [b"MLAAttentionSpec"]) == []
    )
    assert guess_builders(None, source, [b"MLAAttentionSpec"]) == []


def test_a_builder_on_the_first_line_is_guessed_and_a_nested_class_is_its_own():
    from vllm_spec_lint.edges.pairing import guess_builders

    test = b"isinstance(self.kv_cache_spec, MLAAttentionSpec)"
    first = b"class First(Base):\n    def f(self):\n        return " + test + b"\n"
    nested = b"class Outer:\n    class Inner:\n        ok = " + test + b"\n"
    anchors = [b"MLAAttentionSpec"]
    assert guess_builders("pkg.mod", first, anchors) == ["pkg.mod.First"]
    assert guess_builders("pkg.mod", nested, anchors) == ["pkg.mod.Outer"]
    assert guess_builders("pkg.mod", b"x = 1\n" + first, anchors) == ["pkg.mod.First"]
    # A class on the first line ends where the next one starts.
    other = b"class Other:\n    pass\n"
    assert guess_builders("pkg.mod", other + first, anchors) == ["pkg.mod.First"]
    assert guess_builders("pkg.mod", first + other, anchors) == ["pkg.mod.First"]
    assert guess_builders("pkg.mod", b"classy = " + test + b"\n", anchors) == []


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_with_or_without_workers_the_verdicts_are_the_same(tmp_path, jobs):
    """With workers, the pass starts early on guessed builders."""
    escape = "a new layer subclass that builds the companion"
    kept = _tree(tmp_path / "kept", ESCAPES[escape])
    left = _tree(tmp_path / "left")
    assert _check(kept, "-j", jobs)[0] == [(SITE, SITE_ROW, "VSL001")]
    assert _check(left, "-j", jobs)[0] == []


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_guessed_builder_whose_chain_cannot_be_read_decides_nothing_else(
    tmp_path, jobs
):
    """With workers the pass starts on builders guessed from the text; one
    the analysis never asks about (its test is noqa'd) whose name a file that
    does not parse holds must not leave the asked builder undecided: the
    same verdict as without workers."""
    from vllm_spec_lint.core.settings import Config
    from vllm_spec_lint.edges import runner

    other = (
        INDEXER.replace("IndexerBackend", "OtherBackend")
        .replace("IndexerMetadataBuilder", "OtherMetadataBuilder")
        .replace(
            "        if isinstance(self.kv_cache_spec, MLAAttentionSpec):\n",
            "        if isinstance(self.kv_cache_spec, MLAAttentionSpec):  # noqa: VSL001\n",
        )
    )
    root = _tree(
        tmp_path,
        {
            "vllm/v1/attention/backends/other.py": other,
            "vllm/broken.py": "OtherMetadataBuilder(\n",
        },
    )
    check_run = runner.run([root], Config(root=root), use_cache=False, jobs=jobs)
    assert check_run.findings == []
    assert [
        (Path(f.path).name, f.location, f.suppressed_by[:9])
        for f in check_run.suppressed
    ] == [("indexer.py", (15, 43), "pairing: ")]


# -- which tests are on a builder's own spec (model/own_spec.py) ----------------

IMPORT = "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n\n\n"
SW_MLA = "vllm.v1.kv_cache_interface.SlidingWindowMLASpec"

OWN_SPEC_SITES = {
    "self.kv_cache_spec in a method": (
        "class B(Base):\n"
        "    def build(self):\n"
        "        return isinstance(self.kv_cache_spec, MLAAttentionSpec)\n",
        ("pkg.mod.B", SW_MLA),
    ),
    "the kv_cache_spec __init__ is given": (
        "class B(Base):\n"
        "    def __init__(self, kv_cache_spec, layer_names):\n"
        "        self.mla = isinstance(kv_cache_spec, MLAAttentionSpec)\n",
        ("pkg.mod.B", SW_MLA),
    ),
    "a keyword-only kv_cache_spec of __init__": (
        "class B(Base):\n"
        "    def __init__(self, *, kv_cache_spec):\n"
        "        self.mla = isinstance(kv_cache_spec, MLAAttentionSpec)\n",
        ("pkg.mod.B", SW_MLA),
    ),
    "a kv_cache_spec parameter of another method": (
        "class B(Base):\n"
        "    def build(self, kv_cache_spec):\n"
        "        return isinstance(kv_cache_spec, MLAAttentionSpec)\n",
        (),
    ),
    "kv_cache_spec rebound in __init__": (
        "class B(Base):\n"
        "    def __init__(self, kv_cache_spec):\n"
        "        kv_cache_spec = kv_cache_spec.inner\n"
        "        self.mla = isinstance(kv_cache_spec, MLAAttentionSpec)\n",
        (),
    ),
    "another parameter's kv_cache_spec": (
        "class B(Base):\n"
        "    def build(self, other):\n"
        "        return isinstance(other.kv_cache_spec, MLAAttentionSpec)\n",
        (),
    ),
    "another attribute of self": (
        "class B(Base):\n"
        "    def build(self):\n"
        "        return isinstance(self.spec, MLAAttentionSpec)\n",
        (),
    ),
    "a decorated method (cls, static)": (
        "class B(Base):\n"
        "    @classmethod\n"
        "    def build(self):\n"
        "        return isinstance(self.kv_cache_spec, MLAAttentionSpec)\n",
        (),
    ),
    "a lambda's own parameter": (
        "class B(Base):\n"
        "    def build(self):\n"
        "        f = lambda self: isinstance(self.kv_cache_spec, MLAAttentionSpec)\n"
        "        return f\n",
        (),
    ),
    "a module-level function": (
        "def build(self):\n"
        "    return isinstance(self.kv_cache_spec, MLAAttentionSpec)\n",
        (),
    ),
    "a class inside a function": (
        "def make():\n"
        "    class B(Base):\n"
        "        def build(self):\n"
        "            return isinstance(self.kv_cache_spec, MLAAttentionSpec)\n"
        "    return B\n",
        (),
    ),
    "a class inside a class": (
        "class Outer:\n"
        "    class B(Base):\n"
        "        def build(self):\n"
        "            return isinstance(self.kv_cache_spec, MLAAttentionSpec)\n",
        (),
    ),
    "another parameter of __init__ tested": (
        "class B(Base):\n"
        "    def __init__(self, spec):\n"
        "        self.mla = isinstance(spec, MLAAttentionSpec)\n",
        (),
    ),
    "a call's result in __init__": (
        "class B(Base):\n"
        "    def __init__(self, kv_cache_spec):\n"
        "        self.mla = isinstance(kv_cache_spec.inner(), MLAAttentionSpec)\n",
        (),
    ),
    "a function inside a function": (
        "def outer():\n"
        "    def build(self):\n"
        "        return isinstance(self.kv_cache_spec, MLAAttentionSpec)\n"
        "    return build\n",
        (),
    ),
    "self assigned in a method without parameters": (
        "class B(Base):\n"
        "    def build():\n"
        "        self = current()\n"
        "        return isinstance(self.kv_cache_spec, MLAAttentionSpec)\n",
        (),
    ),
    "a method without parameters": (
        "class B(Base):\n"
        "    def build():\n"
        "        return isinstance(self.kv_cache_spec, MLAAttentionSpec)\n",
        (),
    ),
}


@pytest.mark.parametrize("case", sorted(OWN_SPEC_SITES))
def test_which_tests_are_on_a_builders_own_spec(case):
    from vllm_spec_lint.core.analysis import analyze_source
    from vllm_spec_lint.core.settings import Config

    source, expected = OWN_SPEC_SITES[case]
    result = analyze_source(IMPORT + source, "mod.py", Config(), module_name="pkg.mod")
    assert [f.own_spec for f in result.findings] == [expected]


def test_an_exact_type_test_of_a_builders_own_spec_names_it_too():
    """VSL002's finding carries what backend pairing decides on, as VSL001's."""
    from vllm_spec_lint.core.analysis import analyze_source
    from vllm_spec_lint.core.settings import Config

    source = (
        "class B(Base):\n"
        "    def build(self):\n"
        "        return type(self.kv_cache_spec) is MLAAttentionSpec\n"
    )
    result = analyze_source(IMPORT + source, "mod.py", Config(), module_name="pkg.mod")
    assert [(f.code, f.own_spec) for f in result.findings] == [
        ("VSL002", ("pkg.mod.B", SW_MLA))
    ]


def test_a_package_names_its_builders_without_init():
    from vllm_spec_lint.core.analysis import analyze_source
    from vllm_spec_lint.core.settings import Config

    source, _ = OWN_SPEC_SITES["self.kv_cache_spec in a method"]
    result = analyze_source(
        IMPORT + source, "__init__.py", Config(), module_name="pkg.__init__"
    )
    assert [f.own_spec for f in result.findings] == [("pkg.B", SW_MLA)]


def test_a_file_without_a_module_name_has_no_builders():
    from vllm_spec_lint.core.analysis import analyze_source
    from vllm_spec_lint.core.settings import Config

    source, _ = OWN_SPEC_SITES["self.kv_cache_spec in a method"]
    result = analyze_source(IMPORT + source, "mod.py", Config(), module_name=None)
    assert [f.own_spec for f in result.findings] == [()]


def test_a_site_the_file_already_leaves_out_asks_no_pairing():
    from vllm_spec_lint.core.analysis import analyze_source
    from vllm_spec_lint.core.settings import Config

    source = (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec\n"
        "\n\nclass B(Base):\n"
        "    def build(self):\n"
        "        if isinstance(self.kv_cache_spec, SlidingWindowMLASpec):\n"
        "            return None\n"
        "        return isinstance(self.kv_cache_spec, MLAAttentionSpec)\n"
    )
    result = analyze_source(source, "mod.py", Config(), module_name="pkg.mod")
    assert result.findings == []
    assert [f.own_spec for f in result.suppressed] == [()]


def test_a_layers_base_in_a_file_naming_no_chain_class_is_read(tmp_path):
    """The layer inherits get_kv_cache_spec from its base's base, in files
    that name no builder, backend or layer: only lookups ask for them, the
    second after every name is read."""
    base = (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n\n\n"
        "class DeeperBase:\n"
        "    def get_kv_cache_spec(self, vllm_config):\n"
        "        return MLAAttentionSpec(block_size=64)\n"
    )
    middle = (
        "from vllm.model_executor.layers.deeper_base import DeeperBase\n\n\n"
        "class CacheBase(DeeperBase):\n"
        "    pass\n"
    )
    layer = (
        "from vllm.model_executor.layers.cache_base import CacheBase\n"
        "from vllm.v1.attention.backends.indexer import IndexerBackend\n\n\n"
        "class IndexerCache(CacheBase):\n"
        "    def get_attn_backend(self):\n"
        "        return IndexerBackend\n"
    )
    root = _tree(
        tmp_path,
        {
            "vllm/model_executor/layers/deeper_base.py": base,
            "vllm/model_executor/layers/cache_base.py": middle,
            "vllm/model_executor/layers/indexer_cache.py": layer,
        },
    )
    assert _check(root)[0] == []
    window = base.replace("MLAAttentionSpec", "SlidingWindowMLASpec")
    (root / "vllm/model_executor/layers/deeper_base.py").write_text(window)
    assert _check(root)[0] == [(SITE, SITE_ROW, "VSL001")]


def test_a_name_inside_another_is_looked_for_on_its_own(tmp_path):
    """``IndexerBackend`` and ``FastIndexerBackend``, found in the same file,
    are both looked for: a file that holds only the longer one is still
    read."""
    fast = "\n\nclass FastIndexerBackend(IndexerBackend):\n    pass\n"
    extra = {SITE: INDEXER + fast}
    assert _check(_tree(tmp_path / "left", extra))[0] == []
    extra["vllm/models/v4/registry.py"] = (
        "from vllm.v1.attention.backends.indexer import FastIndexerBackend\n\n"
        "BACKENDS = [FastIndexerBackend]\n"
    )
    kept = _tree(tmp_path / "kept", extra)
    assert _check(kept)[0] == [(SITE, SITE_ROW, "VSL001")]


OWN_SPEC = (BUILDER, "vllm.v1.kv_cache_interface.SlidingWindowMLASpec")


def _pass_decides(root: Path, files: list[str] | None = None, read=None) -> dict:
    """Backend pairing's pass over ``files`` (every file of ``root``), as a
    run's, on the builder's test leaving SlidingWindowMLASpec out (the
    command line's tests reach it too deep for mutation testing to count)."""
    from vllm_spec_lint.edges.discovery import forget_packages
    from vllm_spec_lint.edges.files import read_source
    from vllm_spec_lint.edges.pairing import Pairing
    from vllm_spec_lint.model.hierarchy import ClassHierarchy

    forget_packages()
    if files is None:
        files = sorted(str(p) for p in root.rglob("*.py"))
    pairing = Pairing(files, ClassHierarchy.default(), read or read_source)
    return pairing.decide([OWN_SPEC])


def test_a_file_that_cannot_be_read_is_left_to_the_analysis(tmp_path):
    root = _tree(tmp_path)
    # First: the search goes on past it.
    files = [str(root / "gone.py")] + sorted(str(p) for p in root.rglob("*.py"))

    def read(name: str) -> bytes:
        if name.endswith("gone.py"):
            raise FileNotFoundError(name)
        return Path(name).read_bytes()

    decided = _pass_decides(root, files, read)
    assert decided[OWN_SPEC].startswith("pairing: IndexerMetadataBuilder's spec")

    def read_no_base(name: str) -> bytes:
        if name.endswith("attention/backend.py"):  # where customize_spec is
            raise PermissionError(name)
        return read(name)

    assert _pass_decides(root, files, read_no_base) == {}


def _too_deep(self, name):
    raise RecursionError("maximum recursion depth exceeded")


def test_a_chain_too_deep_to_walk_while_exploring_leaves_the_pass_unreadable(
    tmp_path, monkeypatch
):
    """A statement the lazy walk cannot go down (CPython 3.10's parser takes
    deeper nesting than the walk can) stops the pass for good, as a file
    too deep to read does: no later builder is followed on half a chain."""
    from vllm_spec_lint.edges.pairing import Pairing
    from vllm_spec_lint.model.class_summaries import ModuleSummary
    from vllm_spec_lint.model.hierarchy import ClassHierarchy

    root = _tree(tmp_path)
    files = sorted(str(p) for p in root.rglob("*.py"))
    pairing = Pairing(files, ClassHierarchy.default())
    monkeypatch.setattr(ModuleSummary, "uses", _too_deep)
    pairing.explore([BUILDER])
    assert pairing.readable is False
    monkeypatch.undo()
    assert pairing.decide([OWN_SPEC]) == {}


def test_a_chain_too_deep_to_walk_while_deciding_decides_nothing(tmp_path, monkeypatch):
    from vllm_spec_lint.edges.pairing import Pairing
    from vllm_spec_lint.model.class_summaries import ModuleSummary
    from vllm_spec_lint.model.hierarchy import ClassHierarchy

    root = _tree(tmp_path)
    files = sorted(str(p) for p in root.rglob("*.py"))
    pairing = Pairing(files, ClassHierarchy.default())
    pairing.explore([BUILDER])
    assert pairing.readable is True
    monkeypatch.setattr(ModuleSummary, "uses", _too_deep)
    assert pairing.decide([OWN_SPEC]) == {}
    assert pairing.readable is False
    # The walk works again, but the pass is spent: nothing decided on it.
    monkeypatch.undo()
    assert pairing.decide([OWN_SPEC]) == {}


def test_a_file_read_in_a_later_round_is_found_past_those_read_before(tmp_path):
    """The layer (found by its backend's name, in the second round) comes
    after the builder's file, read in the first."""
    root = _tree(tmp_path, {"vllm/v1/worker/indexer_cache.py": LAYER})
    (root / CACHE).unlink()
    assert _pass_decides(root)[OWN_SPEC].startswith(
        "pairing: IndexerMetadataBuilder's spec"
    )


def test_each_file_is_read_once_however_many_rounds_the_pass_takes(tmp_path):
    """The layer is found in the second round; the builder's file, read in
    the first, is not read (nor summarized) again."""
    root = _tree(tmp_path, {"vllm/v1/worker/indexer_cache.py": LAYER})
    (root / CACHE).unlink()
    reads: dict[str, int] = {}

    def read(name: str) -> bytes:
        reads[name] = reads.get(name, 0) + 1
        return Path(name).read_bytes()

    assert _pass_decides(root, read=read)[OWN_SPEC].startswith("pairing: ")
    assert set(reads.values()) == {1}
    assert len(reads) == len(list(root.rglob("*.py")))


def test_a_table_of_other_classes_is_not_followed(tmp_path):
    """Only a table holding a chain class is looked for: a file naming a
    table of other classes is not read, so its not parsing decides nothing."""
    layer = LAYER + "\n\nOTHER_LAYERS = (int, str)\n"
    broken = (
        "from vllm.model_executor.layers.indexer_cache import OTHER_LAYERS\n"
        "def half(:\n"
    )
    root = _tree(tmp_path, {CACHE: layer, "vllm/models/v4/broken.py": broken})
    assert _pass_decides(root)[OWN_SPEC].startswith("pairing: ")
    # The same file naming a table of the chain's backend leaves it undecided.
    chain_table = LAYER + "\n\nBACKENDS = (IndexerBackend,)\n"
    named = broken.replace("OTHER_LAYERS", "BACKENDS")
    root = _tree(tmp_path, {CACHE: chain_table, "vllm/models/v4/broken.py": named})
    assert _pass_decides(root) == {}


def _subclass_chain(depth: int) -> dict[str, str]:
    """Builders deriving one from the next, each in its own file: the pass
    finds one more a round."""
    files, base = {}, "IndexerMetadataBuilder"
    module = "vllm.v1.attention.backends.indexer"
    for level in range(1, depth + 1):
        name = f"Level{level}MetadataBuilder"
        files[f"vllm/models/levels/level{level}.py"] = (
            f"from {module} import {base}\n\n\nclass {name}({base}):\n    pass\n"
        )
        base, module = name, f"vllm.models.levels.level{level}"
    return files


def test_a_chain_still_growing_after_the_last_round_is_undecided(tmp_path):
    assert _pass_decides(_tree(tmp_path / "a", _subclass_chain(3)))[
        OWN_SPEC
    ].startswith("pairing: ")
    assert _pass_decides(_tree(tmp_path / "b", _subclass_chain(12))) == {}


DEEPER_BASE = (
    "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n\n\n"
    "class DeeperBase:\n"
    "    def get_kv_cache_spec(self, vllm_config):\n"
    "        return MLAAttentionSpec(block_size=64)\n"
)
CACHE_ON_DEEPER_BASE = (
    "from vllm.model_executor.layers.deeper_base import DeeperBase\n"
    "from vllm.v1.attention.backends.indexer import IndexerBackend\n\n\n"
    "class IndexerCache(DeeperBase):\n"
    "    def get_attn_backend(self):\n"
    "        return IndexerBackend\n"
)


@pytest.mark.parametrize(
    "base_file",
    ["vllm/model_executor/layers/deeper_base.py",
     "vllm/model_executor/layers/deeper_base/__init__.py"],
    ids=["module", "package"],
)  # fmt: skip
def test_a_layers_base_is_read_from_its_module_or_package(tmp_path, base_file):
    root = _tree(tmp_path, {CACHE: CACHE_ON_DEEPER_BASE, base_file: DEEPER_BASE})
    assert _pass_decides(root)[OWN_SPEC].startswith(
        "pairing: IndexerMetadataBuilder's spec"
    )


def test_a_layers_base_that_does_not_parse_leaves_the_builder_undecided(tmp_path):
    base_file = "vllm/model_executor/layers/deeper_base.py"
    root = _tree(
        tmp_path, {CACHE: CACHE_ON_DEEPER_BASE, base_file: DEEPER_BASE + "def (:\n"}
    )
    assert _pass_decides(root) == {}


def test_a_run_given_files_keeps_reporting_and_fixes_them(tmp_path):
    """pre-commit hands over the changed files: no tree, no pairing."""
    root = _tree(tmp_path)
    files = [SITE, "vllm/model_executor/layers/indexer_cache.py"]
    out = run_cli("check", "--no-cache", "--output-format", "concise", *files, cwd=root)
    assert out.returncode == 1
    assert out.stdout.startswith(f"{SITE}:{SITE_ROW}:43: VSL001 ")
    out = run_cli("fix", "--no-cache", "--unsafe-fixes", *files, cwd=root)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "(MLAAttentionSpec, SlidingWindowMLASpec)" in (root / SITE).read_text()


@pytest.mark.parametrize(
    ("imports", "base"),
    [
        ("from abc import ABC\n", "ABC"),
        ("from typing import Generic, TypeVar\nT = TypeVar('T')\n", "Generic[T]"),
        ("from typing import Protocol\n", "Protocol"),
        ("", "object"),
    ],
)
def test_a_backend_base_from_the_standard_library_customizes_nothing(imports, base):
    from vllm_spec_lint.model.hierarchy import ClassHierarchy
    from vllm_spec_lint.model.pairing import verdict

    backend = imports + BACKEND_BASE.replace(
        "class AttentionBackend:\n    @classmethod\n"
        "    def customize_spec(cls, spec):\n        return spec\n",
        f"class AttentionBackend({base}):\n    pass\n",
    )
    tree = _summaries({"vllm/v1/attention/backend.py": backend})
    own_spec = (BUILDER, "vllm.v1.kv_cache_interface.SlidingWindowMLASpec")
    assert verdict(own_spec, tree, ClassHierarchy.default()).startswith("pairing: ")


def test_a_class_defined_after_an_import_of_its_name_is_the_module_s_own():
    from vllm_spec_lint.model.class_summaries import summarize
    from vllm_spec_lint.model.pairing import Tree

    tree = Tree(
        [
            summarize(
                b"from other import Thing\n\n\nclass Thing:\n    pass\n", "m", False
            )
        ]
    )
    assert tree.canonical("m.Thing") == "m.Thing"
    assert tree.canonical("m.Other") == "m.Other"


@pytest.mark.parametrize(
    "base",
    [
        # No class read defines the method super() reaches.
        "class CacheBase(ExternalLayer):\n    pass\n",
        # The base's method is computed.
        "class CacheBase:\n"
        "    def get_kv_cache_spec(self, vllm_config):\n"
        "        return self.spec\n",
    ],
)
def test_a_spec_from_super_that_cannot_be_read_is_unknown(base):
    from vllm_spec_lint.model.hierarchy import ClassHierarchy
    from vllm_spec_lint.model.pairing import verdict

    layer = LAYER.replace("class IndexerCache:", "class IndexerCache(CacheBase):")
    layer = layer.replace(
        "        return MLAAttentionSpec(block_size=64, num_kv_heads=1, head_size=128)",
        "        return super().get_kv_cache_spec(vllm_config)",
    )
    layer = "from external import ExternalLayer\n" + base + "\n\n" + layer
    tree = _summaries({"vllm/model_executor/layers/indexer_cache.py": layer})
    own_spec = (BUILDER, "vllm.v1.kv_cache_interface.SlidingWindowMLASpec")
    assert verdict(own_spec, tree, ClassHierarchy.default()) is None


def _verdict(extra: dict[str, str], missing=(SW_MLA,), hierarchy=None):
    from vllm_spec_lint.model.hierarchy import ClassHierarchy
    from vllm_spec_lint.model.pairing import verdict

    tree = _summaries(extra)
    return verdict((BUILDER, *missing), tree, hierarchy or ClassHierarchy.default())


CACHE = "vllm/model_executor/layers/indexer_cache.py"
MLA = "vllm.v1.kv_cache_interface.MLAAttentionSpec"


def test_cyclic_bases_end_the_lookup():
    layer = LAYER.replace("class IndexerCache:", "class IndexerCache(Loop):")
    layer += "\n\nclass Loop(IndexerCache):\n    pass\n"
    assert _verdict({CACHE: layer}).startswith("pairing: ")


def test_a_builder_not_defined_in_the_tree_is_unknown():
    from vllm_spec_lint.model.pairing import chain_of

    chain = chain_of("vllm.elsewhere.Builder", _summaries({}))
    assert chain.unknown == "Builder is not defined in the tree"
    assert chain.builders == set()


def test_a_computed_get_builder_cls_is_no_backend_of_the_builder():
    """Its class must come from somewhere that names it: an escape there."""
    extra = {
        "vllm/v1/attention/backends/other.py": (
            "class OtherBackend:\n"
            "    @staticmethod\n"
            "    def get_builder_cls():\n"
            "        return pick_builder()\n"
        ),
        "vllm/v1/attention/layers_other.py": (
            "class OtherCache:\n"
            "    def get_attn_backend(self):\n"
            "        return make_backend()\n"
        ),
    }
    assert _verdict(extra).startswith("pairing: ")


def test_the_reason_counts_the_backends_and_names_every_spec_built():
    extra = {
        "vllm/v1/attention/backends/fast.py": (
            "from vllm.v1.attention.backends.indexer import IndexerBackend\n\n\n"
            "class FastIndexerBackend(IndexerBackend):\n"
            "    pass\n"
        ),
        "vllm/model_executor/layers/full_cache.py": (
            "from vllm.v1.attention.backends.fast import FastIndexerBackend\n"
            "from vllm.v1.kv_cache_interface import FullAttentionSpec\n\n\n"
            "class FullCache:\n"
            "    def get_attn_backend(self):\n"
            "        return FastIndexerBackend\n\n"
            "    def get_kv_cache_spec(self, vllm_config):\n"
            "        return FullAttentionSpec(block_size=16)\n"
        ),
    }
    assert _verdict(extra) == (
        "pairing: IndexerMetadataBuilder's spec comes only from layers using "
        "FastIndexerBackend (+1); those layers build only FullAttentionSpec, "
        "MLAAttentionSpec; assumes no layer outside this tree uses these backends"
    )


# DEEPER_BASE's module, with a class that defines nothing beside it.
LAYER_BASE = DEEPER_BASE + "\n\nclass ReadMixin:\n    pass\n"
LAYER_ON_BASES = (
    "import torch.nn as nn\n"
    "from external import ExternalMixin\n"
    "from vllm.model_executor.layers.deeper_base import DeeperBase, ReadMixin\n"
    "from vllm.v1.attention.backends.indexer import IndexerBackend\n\n\n"
    "class IndexerCache({bases}):\n"
    "    def get_attn_backend(self):\n"
    "        return IndexerBackend\n"
)


@pytest.mark.parametrize(
    "bases, decided",
    [
        ("DeeperBase, ExternalMixin", True),
        # The mixin's get_kv_cache_spec, if it has one, is the layer's.
        ("ExternalMixin, DeeperBase", False),
        # torch's Module defines none of vLLM's methods.
        ("nn.Module, DeeperBase", True),
        # A class read that defines nothing is passed over to the next base.
        ("ReadMixin, DeeperBase", True),
    ],
)
def test_a_class_not_read_before_the_spec_it_builds_leaves_it_unknown(bases, decided):
    extra = {
        CACHE: LAYER_ON_BASES.format(bases=bases),
        "vllm/model_executor/layers/deeper_base.py": LAYER_BASE,
    }
    reason = _verdict(extra)
    assert (reason is not None) == decided
    if decided:
        assert reason.endswith(
            "those layers build only MLAAttentionSpec; assumes "
            "no layer outside this tree uses these backends"
        )


def test_a_class_not_read_before_a_backends_customize_spec_leaves_it_unknown():
    indexer = INDEXER.replace(
        "class IndexerBackend(AttentionBackend):",
        "class IndexerBackend(ExternalMixin, AttentionBackend):",
    )
    assert _verdict({SITE: "from external import ExternalMixin\n" + indexer}) is None
    after = indexer.replace(
        "(ExternalMixin, AttentionBackend)", "(AttentionBackend, ExternalMixin)"
    )
    assert _verdict({SITE: "from external import ExternalMixin\n" + after}).startswith(
        "pairing: "
    )


@pytest.mark.parametrize(
    "harmless",
    [
        "NAME = IndexerBackend.get_name()\n",  # an attribute read, sorted first
        "BACKENDS = (IndexerBackend,)\nok = backend in BACKENDS\n",
    ],
    ids=["attribute", "membership table"],
)
def test_a_harmless_use_does_not_hide_an_escape_after_it(harmless):
    uses = (
        "from vllm.v1.attention.backends.indexer import IndexerBackend\n\n"
        + harmless
        + "register(IndexerBackend)\n"
    )
    tree = _summaries({"vllm/models/v4/uses.py": uses})
    from vllm_spec_lint.model.pairing import chain_of

    assert chain_of(BUILDER, tree).unknown == (
        "the backend IndexerBackend is used in a way not followed (other)"
    )


def test_a_class_re_exported_by_its_package_is_found_there():
    from vllm_spec_lint.model.class_summaries import summarize
    from vllm_spec_lint.model.pairing import Tree

    tree = Tree(
        [
            summarize(b"from .builder import Builder\n", "vllm.pkg", True),
            summarize(b"class Builder:\n    pass\n", "vllm.pkg.builder", False),
        ]
    )
    assert tree.canonical("vllm.pkg.Builder") == "vllm.pkg.builder.Builder"
    assert tree.canonical("vllm.pkg.builder.Builder") == "vllm.pkg.builder.Builder"
    assert tree.canonical("vllm.elsewhere.Builder") == "vllm.elsewhere.Builder"


def test_a_builders_descendants_are_found_at_every_depth():
    tree = _summaries(_subclass_chain(2))
    assert tree.descendants(BUILDER) == {
        BUILDER,
        "vllm.models.levels.level1.Level1MetadataBuilder",
        "vllm.models.levels.level2.Level2MetadataBuilder",
    }


def test_a_backend_no_layer_uses_decides_nothing():
    layer = LAYER.replace("return IndexerBackend", "return OtherBackend")
    assert _verdict({CACHE: layer}) is None


def test_a_backends_own_customize_spec_needs_no_base_read():
    from vllm_spec_lint.model.hierarchy import ClassHierarchy

    base = "from plugin import PluginBackend\n\n\nclass AttentionBackend(PluginBackend):\n    pass\n\n\nclass AttentionMetadataBuilder:\n    pass\n"
    indexer = INDEXER.replace(
        "class IndexerBackend(AttentionBackend):\n",
        "class IndexerBackend(AttentionBackend):\n"
        "    @classmethod\n"
        "    def customize_spec(cls, spec):\n"
        "        return spec\n\n",
    )
    extra = {"vllm/v1/attention/backend.py": base, SITE: indexer}
    assert _verdict(extra, hierarchy=ClassHierarchy.default()).startswith("pairing: ")


def test_a_layer_building_through_a_helper_is_unknown():
    layer = "from vllm.utils.specs import make_indexer_spec\n" + LAYER.replace(
        "return MLAAttentionSpec(", "return make_indexer_spec("
    )
    assert _verdict({CACHE: layer}) is None


def test_other_builders_backends_and_their_layers_are_not_the_chain():
    """A window layer uses another backend, which returns another builder."""
    other = {
        "vllm/v1/attention/backends/window.py": (
            "from vllm.v1.kv_cache_interface import SlidingWindowMLASpec\n\n\n"
            "class WindowMetadataBuilder:\n    pass\n\n\n"
            "class WindowBackend:\n"
            "    @staticmethod\n"
            "    def get_builder_cls():\n"
            "        return WindowMetadataBuilder\n\n\n"
            "class WindowCache:\n"
            "    def get_attn_backend(self):\n"
            "        return WindowBackend\n\n"
            "    def get_kv_cache_spec(self, vllm_config):\n"
            "        return SlidingWindowMLASpec(block_size=64, sliding_window=8)\n"
        )
    }
    assert _verdict(other).startswith("pairing: ")


def test_a_layer_without_get_kv_cache_spec_anywhere_is_unknown():
    layer = LAYER.replace("def get_kv_cache_spec(", "def kv_cache_spec_of(")
    assert _verdict({CACHE: layer}) is None


def test_a_layer_building_a_subclass_of_the_companion_reaches_it():
    from vllm_spec_lint.model.hierarchy import ClassHierarchy

    hierarchy = ClassHierarchy.default().with_classes(
        {"vllm.models.v4.specs.V4WindowSpec": (SW_MLA,)}, "test", "test"
    )
    layer = LAYER.replace(
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec",
        "from vllm.models.v4.specs import V4WindowSpec",
    ).replace("return MLAAttentionSpec(", "return V4WindowSpec(")
    assert _verdict({CACHE: layer}, hierarchy=hierarchy) is None


def test_one_of_two_companions_left_out_being_built_is_enough():
    assert _verdict({}, missing=(SW_MLA, MLA)) is None


def test_a_table_imported_elsewhere_and_only_tested_there_is_no_escape():
    extra = {
        "vllm/models/v4/tables.py": (
            "from vllm.v1.attention.backends.indexer import IndexerMetadataBuilder\n\n"
            "READERS = frozenset({IndexerMetadataBuilder})\n"
        ),
        "vllm/models/v4/graphs.py": (
            "from vllm.models.v4.tables import READERS\n\n\n"
            "def reads(builder):\n"
            "    return type(builder) in READERS\n"
        ),
    }
    assert _verdict(extra).startswith("pairing: ")
    extra["vllm/models/v4/graphs.py"] += "\n\nALL = list(READERS)\n"
    assert _verdict(extra) is None


# The indexer cache written the ways vLLM writes layers; each builds only
# MLAAttentionSpec, so the site stays deliberate.
MLA_CALL = "MLAAttentionSpec(block_size=64, num_kv_heads=1, head_size=128)"
LAYER_FORMS = {
    "copy.copy of a spec": LAYER.replace(
        f"return {MLA_CALL}", f"import copy\n        return copy.copy({MLA_CALL})"
    ),
    "copy.deepcopy of a spec": "import copy\n"
    + LAYER.replace(f"return {MLA_CALL}", f"return copy.deepcopy({MLA_CALL})"),
    "the class imported under another name": LAYER.replace(
        "import MLAAttentionSpec", "import MLAAttentionSpec as MLA"
    ).replace(f"return {MLA_CALL}", "return MLA(block_size=64)"),
    "the module imported under a name": "import vllm.v1.kv_cache_interface as kci\n"
    + LAYER.replace(f"return {MLA_CALL}", "return kci.MLAAttentionSpec(block_size=64)"),
    "the module imported whole": "import vllm.v1.kv_cache_interface\n"
    + LAYER.replace(
        f"return {MLA_CALL}",
        "return vllm.v1.kv_cache_interface.MLAAttentionSpec(block_size=64)",
    ),
    "the backend imported inside get_attn_backend": LAYER.replace(
        "from vllm.v1.attention.backends.indexer import IndexerBackend\n", ""
    ).replace(
        "        return IndexerBackend",
        "        from vllm.v1.attention.backends.indexer import IndexerBackend\n\n"
        "        return IndexerBackend",
    ),
    "a spec kept in a local name": LAYER.replace(
        f"return {MLA_CALL}", f"spec = {MLA_CALL}\n        return spec"
    ),
}


@pytest.mark.parametrize("form", sorted(LAYER_FORMS))
def test_the_ways_a_layer_builds_its_spec_are_read(form):
    assert _verdict({CACHE: LAYER_FORMS[form]}).startswith("pairing: ")


# Layers whose spec the reading cannot tell: unknown, never a crash.
UNKNOWN_LAYERS = {
    "a spec from a table of factories": LAYER.replace(
        f"return {MLA_CALL}", 'return FACTORIES["mla"](vllm_config)'
    ),
    "a spec from a factory's result": LAYER.replace(
        f"return {MLA_CALL}", "return make_factory()(vllm_config)"
    ),
    "a local name bound twice": LAYER.replace(
        f"return {MLA_CALL}",
        f"spec = {MLA_CALL}\n        spec = widen(spec)\n        return spec",
    ),
    "a generator": LAYER.replace(f"return {MLA_CALL}", f"yield {MLA_CALL}"),
}


@pytest.mark.parametrize("form", sorted(UNKNOWN_LAYERS))
def test_a_layer_spec_the_reading_cannot_tell_is_unknown(form):
    assert _verdict({CACHE: UNKNOWN_LAYERS[form]}) is None


def test_a_builder_kept_in_an_object_or_set_through_setattr_escapes():
    kept = {
        "vllm/models/v4/holder.py": (
            "from vllm.v1.attention.backends.indexer import IndexerMetadataBuilder\n\n"
            "registry.builders = frozenset({IndexerMetadataBuilder})\n"
        )
    }
    assert _verdict(kept) is None
    rebinding = INDEXER.replace(
        "        self.compress_ratio = 1\n",
        '        setattr(self, "kv_cache_spec", self.kv_cache_spec.merged())\n'
        "        self.compress_ratio = 1\n",
    )
    assert _verdict({SITE: rebinding}) is None


def test_an_async_get_attn_backend_returns_no_backend():
    """It returns a coroutine; the backend named in it is used otherwise."""
    layer = LAYER.replace(
        "    def get_attn_backend(self):", "    async def get_attn_backend(self):"
    )
    assert _verdict({CACHE: layer}) is None


def test_an_unrelated_file_that_does_not_parse_changes_nothing(tmp_path):
    """It names no chain class (nor an anchor: the analysis skips it too)."""
    root = _tree(tmp_path, {"vllm/models/v4/broken.py": "def half(:\n"})
    assert _check(root)[0] == []


PACKAGE_BACKEND = """\
from vllm.v1.attention.backend import AttentionBackend

from .builder import IndexerMetadataBuilder


class IndexerBackend(AttentionBackend):
    @staticmethod
    def get_builder_cls():
        return IndexerMetadataBuilder
"""
PACKAGE_BUILDER = INDEXER.split("\n\n\nclass IndexerBackend")[0] + (
    "\n\n\nclass IndexerMetadataBuilder"
    + INDEXER.split("\n\n\nclass IndexerMetadataBuilder")[1]
)


@pytest.mark.parametrize("companion_layer", [False, True])
def test_a_backend_in_a_packages_init_finds_its_builder_relatively(
    tmp_path, companion_layer
):
    """The backend in ``indexer/__init__.py`` imports the builder from
    ``.builder``: relative to the package itself, not to its parent."""
    package = "vllm/v1/attention/backends/indexer"
    files = {
        SITE: None,
        f"{package}/__init__.py": PACKAGE_BACKEND,
        f"{package}/builder.py": PACKAGE_BUILDER,
    }
    if companion_layer:
        files["vllm/models/v4/cache.py"] = ESCAPES[
            "a new layer subclass that builds the companion"
        ]["vllm/models/v4/cache.py"]
    root = _tree(tmp_path, {k: v for k, v in files.items() if v is not None})
    (root / SITE).unlink()
    sites, _ = _check(root)
    expected = [(f"{package}/builder.py", 9, "VSL001")]
    assert sites == (expected if companion_layer else [])


def test_a_file_naming_the_chain_with_a_nul_byte_leaves_it_undecided(tmp_path):
    """CPython refuses a NUL byte (SyntaxError from 3.11, ValueError before):
    either way the chain is unreadable and nothing is decided."""
    root = _tree(tmp_path)
    (root / "vllm/registry.py").write_bytes(b"from x import IndexerMetadataBuilder\0\n")
    assert _pass_decides(root) == {}


def test_tree_pairing_answers_from_its_cache_the_second_time(tmp_path):
    from vllm_spec_lint.core.settings import Config
    from vllm_spec_lint.edges.cache import PairingCache
    from vllm_spec_lint.edges.discovery import forget_packages
    from vllm_spec_lint.edges.pairing import TreePairing
    from vllm_spec_lint.model.hierarchy import ClassHierarchy

    root = _tree(tmp_path / "tree")
    files = sorted(str(p) for p in root.rglob("*.py"))
    hierarchy = ClassHierarchy.default()
    own_spec = (BUILDER, "vllm.v1.kv_cache_interface.SlidingWindowMLASpec")
    forget_packages()

    def pairing() -> TreePairing:
        cache = PairingCache(tmp_path / "cache", Config(), hierarchy)
        return TreePairing(files, hierarchy, [b"MLAAttentionSpec"], cache=cache)

    first = pairing().decide([own_spec])
    assert first[own_spec].startswith("pairing: IndexerMetadataBuilder's spec")
    # The same files, unchanged: the answer comes from the cache, no pass runs.
    second = pairing()
    assert second.decide([own_spec]) == first
    assert second._pairing is None
    assert pairing().decide([]) == {}


def test_a_deliberate_test_joins_the_suppressed_in_order_of_place_and_code():
    from vllm_spec_lint.core.analysis import FileAnalysis
    from vllm_spec_lint.core.findings import Finding
    from vllm_spec_lint.edges.pairing import with_pairing

    own_spec = (BUILDER, "vllm.v1.kv_cache_interface.SlidingWindowMLASpec")
    at = ((3, 5), (3, 9))
    earlier = Finding("VSL002", "m", "x.py", *at, suppressed_by="narrowed")
    paired = Finding("VSL001", "m", "x.py", *at, own_spec=own_spec)
    other = Finding("VSL001", "m", "x.py", (1, 1), (1, 2))
    result = FileAnalysis([paired, other])
    result.suppressed = [earlier]
    with_pairing(result, {own_spec: "pairing: why"}, strict=False)
    assert result.findings == [other]
    assert [(f.code, f.suppressed_by) for f in result.suppressed] == [
        ("VSL001", "pairing: why"),
        ("VSL002", "narrowed"),
    ]


def test_pairing_runs_only_when_every_path_given_is_a_folder(tmp_path):
    """A folder and a file given together are a few files, as pre-commit
    gives them: no tree to pair across, the site stays reported."""
    root = _tree(tmp_path)
    assert _check(root)[0] == []  # the whole tree: deliberate
    # Every file of the tree among them (vllm/), the site named once more.
    out = run_cli(
        "check", "--no-cache", "--output-format", "concise", "vllm", SITE, cwd=root,
    )  # fmt: skip
    assert out.returncode == 1, out.stderr
    assert out.stdout.startswith(f"{SITE}:{SITE_ROW}:43: VSL001 ")


def test_a_base_lookup_reads_the_file_defining_the_module_and_no_other(
    tmp_path, monkeypatch
):
    from vllm_spec_lint.edges.pairing import _Reader

    files = {
        "pkg/__init__.py": "",
        "pkg/base.py": "class Base: ...\n",
        "other/base.py": "class Base: ...\n",
        "pkg/sub/__init__.py": "class Sub: ...\n",
        "pkg/sub/base.py": "class Base: ...\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    reader = _Reader(sorted(files), lambda name: Path(name).read_bytes())
    assert reader.read_modules({"pkg.base", "pkg.sub", "pkg.missing"})
    assert [s.module for s in reader.summaries] == ["pkg.base", "pkg.sub"]
    # A module's last names suffice (other/ is no package: its module is "base").
    assert reader.read_modules({"base"})
    assert [s.module for s in reader.summaries] == [
        "pkg.base", "pkg.sub", "base", "pkg.sub.base"
    ]  # fmt: skip
