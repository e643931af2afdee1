"""Oracles that do not come from the code under test: behaviours whose
expected value differs from the default or fallback, and findings written
out where other tests compare the tool with itself (MUTATION.md: the three
one-line bugs that went through the whole suite)."""

from __future__ import annotations

import pytest

from tests.conftest import SPEC_CLASSES, run_cli
from vllm_spec_lint.repair.formatting import detect

pytestmark = pytest.mark.fast

KCI = "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
CHECK = "is_mla = isinstance(spec, MLAAttentionSpec)\n"


def test_a_stub_file_is_checked(tmp_path):
    (tmp_path / "layers.pyi").write_text(KCI + CHECK)
    out = run_cli(
        "check", "--output-format", "concise", "--no-cache", ".", cwd=tmp_path
    )
    assert out.returncode == 1
    assert out.stdout.splitlines()[0] == (
        "layers.pyi:2:27: VSL001 isinstance() check against MLAAttentionSpec "
        "leaves out SlidingWindowMLASpec"
    )
    assert run_cli("check", "--show-files", ".", cwd=tmp_path).stdout == "layers.pyi\n"


FAMILY_MODULE = (
    SPEC_CLASSES + "\n\n"
    "def uses_mla(spec):\n"
    "    return isinstance(spec, MLAAttentionSpec)\n"
)


def test_a_package_change_is_seen_through_the_cache(tmp_path):
    """The module a file is decides what its classes are: outside a package,
    ``vllm/v1/kv_cache_interface.py``'s MLAAttentionSpec is a class of its
    own (nothing reported); with the ``__init__.py`` files it is the
    family's anchor. A warm run must see the change."""
    module = tmp_path / "vllm" / "v1" / "kv_cache_interface.py"
    module.parent.mkdir(parents=True)
    module.write_text(FAMILY_MODULE)
    cold = run_cli("check", "--output-format", "concise", ".", cwd=tmp_path)
    assert (cold.returncode, cold.stdout) == (0, "All checks passed!\n")
    for folder in ("vllm", "vllm/v1"):
        (tmp_path / folder / "__init__.py").write_text("")
    warm = run_cli("check", "--output-format", "concise", ".", cwd=tmp_path)
    assert warm.returncode == 1
    assert warm.stdout.splitlines()[0] == (
        "vllm/v1/kv_cache_interface.py:10:29: VSL001 isinstance() check against "
        "MLAAttentionSpec leaves out SlidingWindowMLASpec"
    )


@pytest.mark.parametrize(
    "name, text",
    [
        ("ruff.toml", "line-length = 88\n"),
        (".ruff.toml", "line-length = 88\n"),
        ("pyproject.toml", "[tool.ruff]\nline-length = 88\n"),
        ("pyproject.toml", "[tool.ruff.lint]\nselect = ['E']\n"),
    ],
)
def test_each_ruff_configuration_is_detected_over_a_yapf_one_above(
    tmp_path, name, text
):
    """A yapf configuration in the folder above makes a missed ruff
    configuration show (yapf would be found instead)."""
    (tmp_path / ".style.yapf").write_text("[style]\nbased_on_style = pep8\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / name).write_text(text)
    assert detect(project / "module.py") == "ruff"
    (project / name).unlink()
    assert detect(project / "module.py") == "yapf"
