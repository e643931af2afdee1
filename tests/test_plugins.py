"""A plugin with its own spec classes (issue 41): stand-ins, a subclass that
is something else, configured plugin classes keeping their bases, and the
two more forms plugins write. The plugin is ours, written the way hardware
plugins write theirs (a mirrored pair in their own kv_cache_interface,
line length 120 in [tool.ruff])."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.conftest import run_cli

SPECS = '''\
from dataclasses import dataclass

from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec


@dataclass(frozen=True, kw_only=True)
class AcmeMLAAttentionSpec(MLAAttentionSpec):
    """MLA layers on Acme cards: the latent cache packed by 64 rows."""

    pack_rows: int = 64


@dataclass(frozen=True, kw_only=True)
class AcmeSlidingWindowMLASpec(SlidingWindowMLASpec):
    """DeepSeek-V4's compressed layers on Acme cards."""

    pack_rows: int = 64


@dataclass(frozen=True, kw_only=True)
class AcmeIndexerCacheSpec(MLAAttentionSpec):
    """The sparse indexer's key cache: MLA's page code, its own contents."""

    index_head_dim: int = 128
'''

WORKER = """\
from vllm.v1.kv_cache_interface import AttentionSpec, KVCacheSpecRegistry, MLAAttentionSpec

from vllm_acme.core.kv_cache_interface import AcmeIndexerCacheSpec, AcmeMLAAttentionSpec, AcmeSlidingWindowMLASpec


def register_kv_caches(kv_caches, kv_cache_config):
    for group in kv_cache_config.kv_cache_groups:
        layer_spec = group.kv_cache_spec
        use_mla = isinstance(layer_spec, AcmeMLAAttentionSpec)
        yield use_mla


def bytes_per_block(spec):
    if not isinstance(spec, AttentionSpec):
        return 0
    if isinstance(spec, AcmeMLAAttentionSpec):
        return spec.pack_rows * spec.head_size
    return spec.page_size_bytes


def uses_packed_layout(spec):
    return isinstance(spec, (AcmeMLAAttentionSpec, AcmeSlidingWindowMLASpec))


def indexer_head_dim(spec):
    if isinstance(spec, AcmeIndexerCacheSpec):
        return spec.index_head_dim
    return 0


def layout_of(spec):
    names = {klass.__name__ for klass in type(spec).__mro__}
    return "latent" if "MLAAttentionSpec" in names else "paged"


KVCacheSpecRegistry.register(kvcache_spec_cls=MLAAttentionSpec, manager="acme-latent")
"""

PYPROJECT = """\
[project]
name = "vllm-acme"
version = "0.1.0"

[tool.ruff]
line-length = 120
"""

# Every line the default mode reports on the plugin, written out.
DEFAULT = [
    "vllm_acme/worker/kv_transfer.py:9:42: VSL001 isinstance() check against AcmeMLAAttentionSpec "
    "leaves out AcmeSlidingWindowMLASpec",
    "vllm_acme/worker/kv_transfer.py:16:25: VSL001 isinstance() check against AcmeMLAAttentionSpec "
    "leaves out AcmeSlidingWindowMLASpec",
    "vllm_acme/worker/kv_transfer.py:33:24: VSL005 MRO test against MLAAttentionSpec leaves out SlidingWindowMLASpec",
    "vllm_acme/worker/kv_transfer.py:36:47: VSL006 registry KVCacheSpecRegistry registers MLAAttentionSpec "
    "and leaves out SlidingWindowMLASpec",
]
INDEXER = (
    "vllm_acme/worker/kv_transfer.py:26:25: VSL001 isinstance() check against AcmeIndexerCacheSpec "
    "leaves out AcmeSlidingWindowMLASpec [strict; not a stand-in: AcmeIndexerCacheSpec subclasses "
    "MLAAttentionSpec under a name of its own (a different cache reusing its code?)]"
)


@pytest.fixture
def plugin(tmp_path) -> Path:
    root = tmp_path / "vllm-acme"
    for relative, text in {
        "pyproject.toml": PYPROJECT,
        "vllm_acme/__init__.py": "",
        "vllm_acme/core/__init__.py": "",
        "vllm_acme/core/kv_cache_interface.py": SPECS,
        "vllm_acme/worker/__init__.py": "",
        "vllm_acme/worker/kv_transfer.py": WORKER,
    }.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    return root


def _lines(*args: str, cwd: Path) -> list[str]:
    result = run_cli(
        "check", "--no-cache", "--output-format", "concise", *args, cwd=cwd
    )
    assert result.returncode == 1, result.stderr
    return [
        line for line in result.stdout.splitlines() if line.startswith("vllm_acme/")
    ]


def test_tests_against_a_stand_in_are_checked_like_tests_against_the_anchor(plugin):
    assert _lines(".", cwd=plugin) == DEFAULT


def test_stand_ins_are_found_with_vllm_source_too(plugin, tmp_path):
    # vLLM's classes read from a checkout: the plugin's still join them.
    source = _vllm_source(tmp_path)
    assert _lines("--vllm-source", str(source), ".", cwd=plugin) == DEFAULT


def test_a_subclass_that_is_no_stand_in_is_reported_only_with_strict_and_its_reason(
    plugin,
):
    strict = _lines("--strict", ".", cwd=plugin)
    assert INDEXER in strict
    assert not any(":26:" in line for line in _lines(".", cwd=plugin))


def test_a_test_naming_both_stand_ins_is_quiet_even_with_strict(plugin):
    assert not any(":23:" in line for line in _lines("--strict", ".", cwd=plugin))


def test_a_parent_test_that_admits_the_stand_ins_companion_narrows_nothing(plugin):
    # Line 16 follows `if not isinstance(spec, AttentionSpec): return`:
    # AcmeSlidingWindowMLASpec is an AttentionSpec, so it still gets there.
    assert DEFAULT[1] in _lines(".", cwd=plugin)


CONFIGURED = """
[tool.vllm-spec-lint]
extend-families = [
  { name = "acme", module = "vllm_acme.core.kv_cache_interface", members = ["AcmeMLAAttentionSpec", "AcmeSlidingWindowMLASpec"] },
]
"""


def _vllm_source(tmp_path: Path) -> Path:
    """A vLLM tree holding only the family module, as vLLM declares it."""
    from tests.conftest import write_family_module

    source = tmp_path / "vllm-checkout"
    write_family_module(source, _KCI)
    return source


_KCI = """\
class KVCacheSpec:
    pass


class AttentionSpec(KVCacheSpec):
    pass


class FullAttentionSpec(AttentionSpec):
    pass


class MLAAttentionSpec(FullAttentionSpec):
    pass


class SlidingWindowSpec(AttentionSpec):
    pass


class SlidingWindowMLASpec(SlidingWindowSpec):
    pass
"""


def test_configured_plugin_classes_keep_their_bases_with_and_without_vllm_source(
    plugin, tmp_path
):
    with (plugin / "pyproject.toml").open("a") as f:
        f.write(CONFIGURED)
    source = _vllm_source(tmp_path)
    strict = sorted([*DEFAULT, INDEXER], key=lambda line: int(line.split(":")[1]))
    assert _lines(".", cwd=plugin) == DEFAULT
    assert _lines("--strict", ".", cwd=plugin) == strict
    assert _lines("--vllm-source", str(source), ".", cwd=plugin) == DEFAULT
    assert _lines("--vllm-source", str(source), "--strict", ".", cwd=plugin) == strict
    families = run_cli("families", "--vllm-source", str(source), ".", cwd=plugin)
    assert families.returncode == 0, families.stderr
    assert "  AcmeMLAAttentionSpec <- MLAAttentionSpec\n" in families.stdout
    assert "  AcmeSlidingWindowMLASpec <- SlidingWindowMLASpec\n" in families.stdout
    assert families.stderr == ""


def test_a_configured_class_whose_module_is_not_found_is_a_warning_naming_it(plugin):
    (plugin / "vllm_acme/core/kv_cache_interface.py").unlink()
    with (plugin / "pyproject.toml").open("a") as f:
        f.write(CONFIGURED)
    result = run_cli(
        "check", "--no-cache", "--output-format", "concise", ".", cwd=plugin
    )
    assert (
        "warning: family acme: AcmeSlidingWindowMLASpec not found: no "
        "vllm_acme/core/kv_cache_interface.py was read; its bases are unknown, so no test "
        "against a parent class is taken to exclude it"
    ) in result.stderr.splitlines()
    # Unknown bases: the AttentionSpec guard is not taken to exclude it.
    assert DEFAULT[1] in result.stdout.splitlines()


def test_families_shows_the_stand_ins_and_the_configuration_that_checks_them(plugin):
    result = run_cli("families", ".", cwd=plugin)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    start = text.index("stand-in ")
    assert text[start : text.index("hierarchy (from")] == textwrap.dedent(
        """\
        stand-in mla:AcmeMLAAttentionSpec (vllm_acme.core.kv_cache_interface)
          anchor: AcmeMLAAttentionSpec
          companion: AcmeSlidingWindowMLASpec
          from: AcmeMLAAttentionSpec stands in for MLAAttentionSpec (its name extends MLAAttentionSpec's); AcmeSlidingWindowMLASpec for the companion
        subclass mla:AcmeIndexerCacheSpec (vllm_acme.core.kv_cache_interface)
          anchor: AcmeIndexerCacheSpec
          companion: AcmeSlidingWindowMLASpec
          from: AcmeIndexerCacheSpec subclasses MLAAttentionSpec under a name of its own
          reported with --strict only
        To check the stand-ins when files are checked a few at a time (pre-commit, flake8, an editor), add to [tool.vllm-spec-lint]:
        extend-families = [
          { name = "mla:AcmeMLAAttentionSpec", module = "vllm_acme.core.kv_cache_interface", members = ["AcmeMLAAttentionSpec", "AcmeSlidingWindowMLASpec"] },
          # { name = "mla:AcmeIndexerCacheSpec", module = "vllm_acme.core.kv_cache_interface", members = ["AcmeIndexerCacheSpec", "AcmeSlidingWindowMLASpec"] },
        ]
        """
    )


def test_the_printed_configuration_checks_a_single_file_as_the_whole_tree_does(plugin):
    """pre-commit passes only the changed files: the stand-ins' module is
    not among them, so the configuration `families` prints carries them."""
    alone = run_cli(
        "check",
        "--no-cache",
        "--output-format",
        "concise",
        "vllm_acme/worker/kv_transfer.py",
        cwd=plugin,
    )
    assert DEFAULT[0] not in alone.stdout.splitlines()
    text = run_cli("families", ".", cwd=plugin).stdout
    block = text[
        text.index("extend-families = [") : text.index(
            "]\n", text.index("extend-families = [")
        )
        + 2
    ]
    with (plugin / "pyproject.toml").open("a") as f:
        f.write("\n[tool.vllm-spec-lint]\n" + block)
    assert _lines("vllm_acme/worker/kv_transfer.py", cwd=plugin) == DEFAULT


def test_families_as_json_says_which_family_stands_in(plugin):
    result = run_cli("families", "--output-format", "json", ".", cwd=plugin)
    families = {f["name"]: f for f in json.loads(result.stdout)["families"]}
    acme = families["mla:AcmeMLAAttentionSpec"]
    assert acme["anchor"] == "vllm_acme.core.kv_cache_interface.AcmeMLAAttentionSpec"
    assert acme["companions"] == [
        "vllm_acme.core.kv_cache_interface.AcmeSlidingWindowMLASpec"
    ]
    assert acme["quiet"] is None
    assert families["mla:AcmeIndexerCacheSpec"]["quiet"].startswith("not a stand-in: ")


def test_a_stand_ins_fix_adds_the_companions_stand_in_in_the_projects_layout(plugin):
    import shutil
    import subprocess
    import sys

    result = run_cli("check", "--fix", "--unsafe-fixes", "--no-cache", ".", cwd=plugin)
    assert result.returncode == 1, result.stderr  # VSL005/VSL006 have no fix
    worker = (plugin / "vllm_acme/worker/kv_transfer.py").read_text()
    assert (
        "        use_mla = isinstance(layer_spec, (AcmeMLAAttentionSpec, AcmeSlidingWindowMLASpec))\n"
        in worker
    )
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent))
    formatted = subprocess.run(
        [ruff, "format", "--check", "."], cwd=plugin, capture_output=True, text=True
    )
    assert formatted.returncode == 0, formatted.stdout


def test_a_stand_in_beside_vllms_companion_is_fixed_only_where_the_companion_is_bound(
    tmp_path,
):
    """The anchor's module is not the companion's: the companion is named
    where a name is bound to it, and otherwise the finding has no fix."""
    root = tmp_path / "plugin"
    (root / "tkv").mkdir(parents=True)
    (root / "tkv/__init__.py").write_text("")
    (root / "tkv/spec.py").write_text(
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n\n\n"
        "class TkvMLAAttentionSpec(MLAAttentionSpec):\n    pass\n"
    )
    (root / "tkv/use.py").write_text(
        "from vllm.v1.kv_cache_interface import SlidingWindowMLASpec\n\n"
        "from tkv.spec import TkvMLAAttentionSpec\n\n"
        "a = isinstance(s, TkvMLAAttentionSpec)\n"
    )
    (root / "tkv/other.py").write_text(
        "from tkv.spec import TkvMLAAttentionSpec\n\nb = isinstance(s, TkvMLAAttentionSpec)\n"
    )
    result = run_cli(
        "check",
        "--fix",
        "--unsafe-fixes",
        "--no-cache",
        "--output-format",
        "concise",
        ".",
        cwd=root,
    )
    assert result.stdout.splitlines()[0] == (
        "tkv/other.py:3:19: VSL001 isinstance() check against TkvMLAAttentionSpec leaves out SlidingWindowMLASpec"
    )
    assert (
        (root / "tkv/use.py")
        .read_text()
        .endswith("a = isinstance(s, (TkvMLAAttentionSpec, SlidingWindowMLASpec))\n")
    )
    assert (
        (root / "tkv/other.py")
        .read_text()
        .endswith("b = isinstance(s, TkvMLAAttentionSpec)\n")
    )


def _usage_blocks() -> dict[str, str]:
    """The fenced blocks of docs/usage.md's plugin section, by language."""
    from tests.conftest import REPO

    text = (REPO / "docs/usage.md").read_text()
    section = text[text.index("#### A plugin with its own spec classes") :]
    section = section[: section.index("\n## ")] if "\n## " in section else section
    blocks = {}
    for part in section.split("```")[1::2]:
        language, _, body = part.partition("\n")
        blocks.setdefault(language, body)
    return blocks


def test_the_plugin_section_of_the_usage_docs_works_as_written(plugin):
    blocks = _usage_blocks()
    for line in blocks["sh"].splitlines():
        program, *args = line.split()
        assert program == "vllm-spec-lint"
        result = run_cli(*args, cwd=plugin)
        assert result.returncode in (0, 1), result.stderr
        if args[0] == "families":
            printed = result.stdout
    # What `families` prints is the configuration the docs show.
    toml = blocks["toml"]
    entries = [line for line in toml.splitlines() if line.startswith("  { ")]
    assert entries and set(entries) <= set(printed.splitlines())
    with (plugin / "pyproject.toml").open("a") as f:
        f.write("\n" + toml)
    assert _lines("vllm_acme/worker/kv_transfer.py", cwd=plugin) == DEFAULT


def test_the_pictures_draw_the_stand_ins_pairs(plugin):
    result = run_cli("families", "--output-format", "mermaid", ".", cwd=plugin)
    lines = result.stdout.splitlines()
    assert (
        '    AcmeMLAAttentionSpec -.-|"stand-in mla:AcmeMLAAttentionSpec"| AcmeSlidingWindowMLASpec'
        in lines
    )
    assert (
        '    AcmeIndexerCacheSpec -.-|"subclass mla:AcmeIndexerCacheSpec, --strict only"| AcmeSlidingWindowMLASpec'
        in lines
    )
    assert "    SlidingWindowMLASpec --> AcmeSlidingWindowMLASpec" in lines


def test_discovery_shows_the_stand_ins_beside_the_twins(plugin):
    result = run_cli("families", "--discover", ".", cwd=plugin)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    # The pair shares one field: no structural twin, but a stand-in.
    assert lines[1:4] == [
        "  none",
        "",
        "stand-in mla:AcmeMLAAttentionSpec (vllm_acme.core.kv_cache_interface)",
    ]


def test_flake8_with_the_stand_ins_configured_reports_what_check_reports(plugin):
    from tests.conftest import run_flake8

    (plugin / "setup.cfg").write_text(
        "[flake8]\nselect = VSL\nvsl-extend-families =\n"
        "    vllm_acme.core.kv_cache_interface: AcmeMLAAttentionSpec, AcmeSlidingWindowMLASpec\n"
    )
    result = run_flake8("vllm_acme/worker/kv_transfer.py", cwd=plugin)
    assert result.stdout.splitlines() == DEFAULT


@pytest.mark.parametrize(
    "plugin_class, listed",
    [
        (
            "TkvMLAAttentionSpec",
            "stand-in mla:TkvMLAAttentionSpec (p.specs)\n"
            "  anchor: TkvMLAAttentionSpec\n"
            "  companion: SlidingWindowMLASpec (vllm.v1.kv_cache_interface)\n"
            "  from: TkvMLAAttentionSpec stands in for MLAAttentionSpec (its name "
            "extends MLAAttentionSpec's)\n"
            "To check the stand-ins when files are checked a few at a time "
            "(pre-commit, flake8, an editor), add to [tool.vllm-spec-lint]:\n"
            "extend-families = [\n"
            '  { name = "mla:TkvMLAAttentionSpec", module = "p.specs", members = '
            '["TkvMLAAttentionSpec", "vllm.v1.kv_cache_interface.SlidingWindowMLASpec"]'
            " },\n"
            "]\n",
        ),
        (
            # A subclass under a name of its own: quiet, nothing to add.
            "AIndexerSpec",
            "subclass mla:AIndexerSpec (p.specs)\n"
            "  anchor: AIndexerSpec\n"
            "  companion: SlidingWindowMLASpec (vllm.v1.kv_cache_interface)\n"
            "  from: AIndexerSpec subclasses MLAAttentionSpec under a name of its own\n"
            "  reported with --strict only\n",
        ),
    ],
)
def test_families_lists_a_plugins_stand_in_once_with_what_to_configure(
    tmp_path, plugin_class, listed
):
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "__init__.py").write_text("")
    # A base the hierarchy does not know beside the spec class: passed over.
    (tmp_path / "p" / "specs.py").write_text(
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n\n"
        "from p.mixins import Packed\n\n\n"
        f"class {plugin_class}(MLAAttentionSpec, Packed): ...\n"
    )
    text = run_cli("families", ".", cwd=tmp_path).stdout
    assert text.startswith(
        "family mla (vllm.v1.kv_cache_interface)\n"
        "  anchor: MLAAttentionSpec\n"
        "  companion: SlidingWindowMLASpec\n" + listed + "hierarchy (from "
    )
    report = json.loads(
        run_cli("families", "--format", "json", ".", cwd=tmp_path).stdout
    )
    [stand_in] = [f for f in report["families"] if f["module"] == "p.specs"]
    assert stand_in["stand_in"] == listed.split("  from: ")[1].split("\n")[0]
