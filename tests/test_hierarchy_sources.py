"""Where the class hierarchy comes from, in order: --vllm-source, the
scanned tree, $VIRTUAL_ENV, the interpreter's vLLM, the built-in defaults;
and a plugin's own spec classes. vLLM is read, never imported."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.conftest import run_cli, run_flake8, write_covering_hierarchy
from vllm_spec_lint.core.settings import Config
from vllm_spec_lint.edges.hierarchy_sources import load_hierarchy
from vllm_spec_lint.model.hierarchy import Family

CONNECTOR = (
    "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
    "is_mla = isinstance(spec, MLAAttentionSpec)\n"
)
KCI = Path("vllm/v1/kv_cache_interface.py")


def plugin_tree(root: Path) -> Path:
    """A plugin repository: no family module, one connector with a finding."""
    (root / "my_plugin").mkdir(parents=True)
    (root / "my_plugin" / "__init__.py").write_text("")
    (root / "my_plugin" / "connector.py").write_text(CONNECTOR)
    return root


def site_packages(environment: Path) -> Path:
    return environment / "lib" / "python3.11" / "site-packages"


def findings(*args: str, cwd: Path, env: dict | None = None) -> list[str]:
    result = run_cli(
        "check",
        "--output-format",
        "concise",
        "--no-cache",
        "--output-format",
        "json",
        *args,
        cwd=cwd,
        env=env,
    )
    assert result.returncode in (0, 1), result.stderr
    return [f["code"] for f in json.loads(result.stdout)]


def hierarchy_line(cwd: Path, *args: str, env: dict | None = None) -> str:
    result = run_cli("families", *args, ".", cwd=cwd, env=env)
    assert result.returncode == 0, result.stderr
    [line] = [x for x in result.stdout.splitlines() if x.startswith("hierarchy")]
    return line


# Without VIRTUAL_ENV and with no vLLM importable, only the tree counts.
NO_ENV = {"VIRTUAL_ENV": None}


def test_a_plugin_tree_without_vllm_gets_the_built_in_defaults(tmp_path):
    tree = plugin_tree(tmp_path)
    assert hierarchy_line(tree, env=NO_ENV) == "hierarchy (from built-in defaults):"
    assert findings(".", cwd=tree, env=NO_ENV) == ["VSL001"]


def test_vllm_source_is_read_first(tmp_path):
    tree = plugin_tree(tmp_path / "plugin")
    checkout = tmp_path / "vllm-checkout"
    write_covering_hierarchy(checkout)
    # The tree's own family module would report; --vllm-source wins.
    (tree / KCI).parent.mkdir(parents=True)
    (tree / KCI).write_text("class MLAAttentionSpec: ...\n")
    assert findings("--vllm-source", str(checkout), ".", cwd=tree, env=NO_ENV) == []
    assert hierarchy_line(tree, "--vllm-source", str(checkout), env=NO_ENV) == (
        f"hierarchy (from vllm-source: {checkout / KCI}):"
    )


def test_vllm_source_in_the_configuration_is_relative_to_it(tmp_path):
    tree = plugin_tree(tmp_path / "plugin")
    write_covering_hierarchy(tmp_path / "vllm-checkout")
    (tree / "pyproject.toml").write_text(
        '[tool.vllm-spec-lint]\nvllm-source = "../vllm-checkout"\n'
    )
    sub = tree / "my_plugin"
    assert findings(".", cwd=sub, env=NO_ENV) == []


def test_a_vllm_source_without_the_family_module_is_an_error(tmp_path):
    tree = plugin_tree(tmp_path / "plugin")
    empty = tmp_path / "not-vllm"
    empty.mkdir()
    result = run_cli(
        "check",
        "--output-format",
        "concise",
        "--vllm-source",
        str(empty),
        ".",
        cwd=tree,
    )
    assert result.returncode == 2
    assert result.stderr == (
        f"error: {empty}: no vllm/v1/kv_cache_interface.py there "
        "(expected a vLLM checkout or a site-packages folder)\n"
    )


def test_the_scanned_tree_comes_before_the_virtual_environment(tmp_path):
    tree = plugin_tree(tmp_path / "plugin")
    write_covering_hierarchy(site_packages(tmp_path / "venv"))
    (tree / KCI).parent.mkdir(parents=True)
    (tree / KCI).write_text(
        "class KVCacheSpec: ...\n"
        "class MLAAttentionSpec(KVCacheSpec): ...\n"
        "class SlidingWindowMLASpec(KVCacheSpec): ...\n"
    )
    env = {"VIRTUAL_ENV": str(tmp_path / "venv")}
    assert findings(".", cwd=tree, env=env) == ["VSL001"]
    assert hierarchy_line(tree, env=env) == (
        f"hierarchy (from scanned tree: {tree / KCI}):"
    )


def test_a_family_module_below_the_root_is_found_among_the_scanned_files(tmp_path):
    # A src layout: no vllm/ at the root or above it, one among the files.
    tree = plugin_tree(tmp_path / "plugin")
    kci = write_covering_hierarchy(tree / "src")
    assert findings(".", cwd=tree, env=NO_ENV) == []
    assert hierarchy_line(tree, env=NO_ENV) == (
        f"hierarchy (from scanned tree: {kci}):"
    )


def test_the_virtual_environments_vllm_is_read(tmp_path):
    tree = plugin_tree(tmp_path / "plugin")
    write_covering_hierarchy(site_packages(tmp_path / "venv"))
    env = {"VIRTUAL_ENV": str(tmp_path / "venv")}
    assert findings(".", cwd=tree, env=env) == []
    assert hierarchy_line(tree, env=env) == (
        f"hierarchy (from VIRTUAL_ENV: {site_packages(tmp_path / 'venv') / KCI}):"
    )


def test_a_windows_virtual_environments_vllm_is_read(tmp_path):
    """Windows venvs keep packages in ``Lib/site-packages``."""
    tree = plugin_tree(tmp_path / "plugin")
    packages = tmp_path / "venv" / "Lib" / "site-packages"
    write_covering_hierarchy(packages)
    env = {"VIRTUAL_ENV": str(tmp_path / "venv")}
    assert findings(".", cwd=tree, env=env) == []
    assert hierarchy_line(tree, env=env) == (
        f"hierarchy (from VIRTUAL_ENV: {packages / KCI}):"
    )


def test_a_virtual_environment_without_vllm_falls_through(tmp_path):
    tree = plugin_tree(tmp_path / "plugin")
    site_packages(tmp_path / "venv").mkdir(parents=True)
    env = {"VIRTUAL_ENV": str(tmp_path / "venv")}
    assert hierarchy_line(tree, env=env) == "hierarchy (from built-in defaults):"
    assert findings(".", cwd=tree, env=env) == ["VSL001"]


def test_the_interpreters_vllm_is_found_by_its_top_level_package(tmp_path, monkeypatch):
    # In this process (the command line test below runs another interpreter).
    kci = write_covering_hierarchy(tmp_path / "path")
    (tmp_path / "path" / "vllm" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path / "path"))
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    tree = plugin_tree(tmp_path / "plugin")
    hierarchy = load_hierarchy([tree], [], Config(), [])
    assert (hierarchy.sources, hierarchy.origins) == ((str(kci),), ("interpreter",))


def test_the_interpreters_vllm_is_read_and_never_imported(tmp_path):
    tree = plugin_tree(tmp_path / "plugin")
    # A vLLM stand-in on the interpreter's path: importing it would leave a
    # marker file behind.
    stand_in = tmp_path / "path"
    kci = write_covering_hierarchy(stand_in)
    marker = tmp_path / "imported"
    for package in (stand_in / "vllm", stand_in / "vllm" / "v1"):
        (package / "__init__.py").write_text(
            f"open({str(marker)!r}, 'w').write('imported')\n"
        )
    kci.write_text(f"open({str(marker)!r}, 'w').write('imported')\n" + kci.read_text())
    env = {"VIRTUAL_ENV": None, "PYTHONPATH": str(stand_in)}
    assert findings(".", cwd=tree, env=env) == []
    assert hierarchy_line(tree, env=env) == f"hierarchy (from interpreter: {kci}):"
    assert (
        run_cli(
            "fix",
            "--output-format",
            "concise",
            "--unsafe-fixes",
            ".",
            cwd=tree,
            env=env,
        ).returncode
        == 0
    )
    assert not marker.exists()


PLUGIN_SPECS = textwrap.dedent(
    """\
    from vllm.v1.kv_cache_interface import FullAttentionSpec, SlidingWindowMLASpec


    class PluginFullSpec(FullAttentionSpec):
        pass


    class PluginWindowMLASpec(SlidingWindowMLASpec):
        pass
    """
)
GUARDED = textwrap.dedent(
    """\
    from my_plugin.specs import {guard}
    from vllm.v1.kv_cache_interface import MLAAttentionSpec


    def uses_mla(spec) -> bool:
        if not isinstance(spec, {guard}):
            return False
        return isinstance(spec, MLAAttentionSpec)
    """
)


@pytest.mark.parametrize(
    "guard, reported",
    [
        # A plugin spec that is not a SlidingWindowMLASpec rules it out.
        ("PluginFullSpec", []),
        # One that is a SlidingWindowMLASpec does not.
        ("PluginWindowMLASpec", ["VSL001"]),
    ],
)
def test_a_plugins_own_spec_classes_join_the_hierarchy(tmp_path, guard, reported):
    tree = plugin_tree(tmp_path)
    (tree / "my_plugin" / "connector.py").unlink()
    (tree / "my_plugin" / "specs.py").write_text(PLUGIN_SPECS)
    (tree / "my_plugin" / "layers.py").write_text(GUARDED.format(guard=guard))
    assert findings(".", cwd=tree, env=NO_ENV) == reported
    result = run_cli("families", ".", cwd=tree, env=NO_ENV)
    assert "  PluginFullSpec <- FullAttentionSpec\n" in result.stdout
    assert "  PluginWindowMLASpec <- SlidingWindowMLASpec\n" in result.stdout
    assert (
        "hierarchy (from built-in defaults, scanned files: 2 classes):" in result.stdout
    )


def test_one_plugin_spec_class_is_counted_in_the_singular(tmp_path):
    (tmp_path / "specs.py").write_text(
        "from vllm.v1.kv_cache_interface import FullAttentionSpec\n"
        "class PluginFullSpec(FullAttentionSpec): ...\n"
    )
    result = run_cli("families", ".", cwd=tmp_path, env=NO_ENV)
    assert (
        "hierarchy (from built-in defaults, scanned files: 1 class):" in result.stdout
    )


def test_flake8_honours_vsl_vllm_source(tmp_path):
    tree = plugin_tree(tmp_path / "plugin")
    checkout = tmp_path / "vllm-checkout"
    write_covering_hierarchy(checkout)

    def flake8(*args: str):
        return run_cli_flake8(tree, *args)

    assert "VSL001" in flake8().stdout
    assert flake8(f"--vsl-vllm-source={checkout}").stdout == ""
    broken = flake8(f"--vsl-vllm-source={tmp_path}")
    assert broken.returncode != 0
    assert f"vllm-spec-lint: {tmp_path}: no vllm/v1/kv_cache_interface.py" in (
        broken.stderr
    )


def run_cli_flake8(cwd: Path, *args: str):
    return run_flake8("--select", "VSL", *args, ".", cwd=cwd, env=NO_ENV)


def test_a_member_not_found_or_of_unknown_bases_is_warned_about(tmp_path):
    """Narrowing takes no parent test to exclude such a member: the warning
    says which, and why (the module read and the class not in it, a base
    no module read defines, or no module read at all)."""
    specs = tmp_path / "vllm_plugin" / "specs.py"
    specs.parent.mkdir()
    specs.write_text(
        "from elsewhere import Base\n\n\nclass PluginMLASpec(Base):\n    pass\n"
    )
    members = ("PluginMLASpec", "PluginSWMLASpec", "OtherSpec")
    modules = ("vllm_plugin.specs", "vllm_plugin.specs", "other")
    family = Family("plugin", "vllm_plugin.specs", members, member_modules=modules)
    # Another family's module, whose file name ends in "other.py".
    another = tmp_path / "another.py"
    another.write_text("class AnotherSpec: ...\nclass AnotherSWSpec: ...\n")
    more = Family("more", "another", ("AnotherSpec", "AnotherSWSpec"))
    warnings: list[str] = []
    config = Config(families=(family, more), root=tmp_path)
    load_hierarchy([tmp_path], [str(specs), str(another)], config, warnings)
    unknown = "its bases are unknown, so no test against a parent class is taken to exclude it"
    assert warnings == [
        f"family plugin: PluginMLASpec derives from elsewhere.Base, which no module "
        f"read defines; {unknown}",
        f"family plugin: PluginSWMLASpec not found in {specs}; {unknown}",
        f"family plugin: OtherSpec not found: no other.py was read; {unknown}",
    ]


def test_vllm_source_without_a_plugins_family_module_looks_for_it_elsewhere(tmp_path):
    """--vllm-source must hold vLLM's family module; a plugin's is looked
    for where it is, here in the scanned tree."""
    from tests.conftest import SPEC_CLASSES, write_family_module
    from vllm_spec_lint.model.hierarchy import DEFAULT_FAMILIES

    vllm = tmp_path / "vllm-checkout"
    kci = write_family_module(vllm, SPEC_CLASSES)
    specs = tmp_path / "plugin" / "vllm_plugin" / "specs.py"
    specs.parent.mkdir(parents=True)
    specs.write_text("class PluginMLASpec: ...\nclass PluginSWMLASpec: ...\n")
    plugin = Family("plugin", "vllm_plugin.specs", ("PluginMLASpec", "PluginSWMLASpec"))
    config = Config(
        families=(*DEFAULT_FAMILIES, plugin), vllm_source=vllm, root=tmp_path
    )
    warnings: list[str] = []
    hierarchy = load_hierarchy([tmp_path / "plugin"], [str(specs)], config, warnings)
    assert (hierarchy.sources, hierarchy.origins) == (
        (str(kci), str(specs)),
        ("vllm-source", "scanned tree"),
    )
    assert warnings == []
