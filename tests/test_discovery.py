"""What the excluder answers for one entry, in this process: folder-only
patterns, patterns that stop at their own folder, and a nested
``.gitignore`` read from where it lies (as git reads it)."""

from __future__ import annotations

import os
from pathlib import Path

from vllm_spec_lint.core.settings import Config
from vllm_spec_lint.edges.discovery import Excluder, iter_python_files, module_name_for


def test_a_folder_pattern_excludes_a_folder_not_a_file_of_that_name(tmp_path):
    excluder = Excluder(
        Config(root=tmp_path, exclude=("generated/",), respect_gitignore=False)
    )
    assert excluder.excludes(tmp_path / "generated", is_dir=True)
    assert not excluder.excludes(tmp_path / "generated", is_dir=False)
    assert excluder.excludes(tmp_path / "generated" / "a.py", is_dir=False)


def test_a_file_pattern_excludes_files_and_folders_alike(tmp_path):
    excluder = Excluder(
        Config(root=tmp_path, exclude=("legacy",), respect_gitignore=False)
    )
    assert excluder.excludes(tmp_path / "legacy", is_dir=True)
    assert excluder.excludes(tmp_path / "legacy", is_dir=False)
    assert not excluder.excludes(tmp_path / "legacy.py", is_dir=False)


def test_patterns_do_not_reach_outside_their_folder(tmp_path):
    excluder = Excluder(
        Config(root=tmp_path / "sub", exclude=("*.py",), respect_gitignore=False)
    )
    assert excluder.excludes(tmp_path / "sub" / "a.py", is_dir=False)
    assert not excluder.excludes(tmp_path / "other" / "a.py", is_dir=False)
    assert not excluder.excludes(tmp_path / "a.py", is_dir=False)
    # Inside, though its folder's name starts with "..".
    assert excluder.excludes(tmp_path / "sub" / "..data" / "a.py", is_dir=False)
    # The folder above is outside too, for a pattern that would match "..".
    hidden = Excluder(Config(root=tmp_path / "sub", exclude=(".*",)))
    assert hidden.excludes(tmp_path / "sub" / ".cache", is_dir=True)
    assert not hidden.excludes(tmp_path, is_dir=True)


# ruff's default exclusions (its documented `exclude`) less a few, plus
# "build" and our own cache, written out.
DEFAULT_EXCLUDED = [
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".mypy_cache",
    ".nox", ".pants.d", ".pytype", ".ruff_cache", ".svn", ".tox", ".venv",
    ".vllm_spec_lint_cache", "__pypackages__", "_build", "buck-out", "build",
    "dist", "node_modules", "venv",
]  # fmt: skip


def test_each_default_exclusion_leaves_its_folder_out(tmp_path, monkeypatch):
    for folder in [*DEFAULT_EXCLUDED, "src", ".github"]:
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "a.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    found = list(iter_python_files([Path(".")], Config(root=tmp_path)))
    assert sorted(found) == [".github/a.py", "src/a.py"]


def test_a_nested_gitignore_matches_from_its_own_folder(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    package = tmp_path / "pkg"
    package.mkdir()
    (package / ".gitignore").write_text("/gen.py\nout/\n")
    monkeypatch.chdir(tmp_path)  # not where the .gitignore lies
    excluder = Excluder(Config(root=tmp_path))
    assert excluder.excludes(package / "gen.py", is_dir=False)
    assert not excluder.excludes(package / "sub" / "gen.py", is_dir=False)
    assert not excluder.excludes(tmp_path / "gen.py", is_dir=False)
    assert excluder.excludes(package / "out", is_dir=True)
    assert not excluder.excludes(package / "out", is_dir=False)


def test_a_gitignore_outside_a_git_checkout_is_not_read(tmp_path):
    (tmp_path / ".gitignore").write_text("*.py\n")
    excluder = Excluder(Config(root=tmp_path))
    assert not excluder.excludes(tmp_path / "a.py", is_dir=False)


def test_an_excluded_folder_is_never_listed(tmp_path, monkeypatch):
    # Excluded by a folder pattern, by .gitignore and by name (as ruff's
    # defaults): the walk must not even list them (a node_modules can hold
    # a million files). One level down, so that a folder's name alone is
    # not its path.
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("out/\n")
    for folder in ("generated", "out", "node_modules", "src"):
        (tmp_path / "pkg" / folder / "deeper").mkdir(parents=True)
        (tmp_path / "pkg" / folder / "deeper" / "a.py").write_text("x = 1\n")
    listed = []
    scandir = os.scandir

    def recorded(path):
        listed.append(os.path.relpath(path, tmp_path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", recorded)
    monkeypatch.chdir(tmp_path)
    config = Config(root=tmp_path, exclude=("pkg/generated/",))
    files = list(iter_python_files([Path("pkg")], config))
    assert files == ["pkg/src/deeper/a.py"]
    assert sorted(listed) == ["pkg", "pkg/src", "pkg/src/deeper"]


def test_a_folder_only_pattern_leaves_a_file_of_a_matching_name(tmp_path, monkeypatch):
    (tmp_path / "gen_specs.py").write_text("x = 1\n")
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated" / "a.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    config = Config(root=tmp_path, exclude=("gen*/",), respect_gitignore=False)
    assert list(iter_python_files([Path(".")], config)) == ["gen_specs.py"]


def test_overlapping_roots_give_each_file_once(tmp_path, monkeypatch):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    (tmp_path / "pkg" / "sub" / "b.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    roots = [Path("pkg/sub"), Path("pkg"), Path("pkg")]
    assert list(iter_python_files(roots, Config(root=tmp_path))) == [
        "pkg/sub/b.py",
        "pkg/a.py",
    ]


def test_a_file_link_into_another_root_given_is_taken(tmp_path, monkeypatch):
    """Inside one of the roots is inside: only a link leading out of every
    root given is left out (without --follow-links)."""
    for folder in ("a", "b", "elsewhere"):
        (tmp_path / folder).mkdir()
    (tmp_path / "b" / "real.py").write_text("x = 1\n")
    (tmp_path / "elsewhere" / "out.py").write_text("x = 1\n")
    os.symlink(tmp_path / "b" / "real.py", tmp_path / "a" / "to_b.py")
    os.symlink(tmp_path / "elsewhere" / "out.py", tmp_path / "a" / "to_out.py")
    monkeypatch.chdir(tmp_path)
    found = list(iter_python_files([Path("a"), Path("b")], Config(root=tmp_path)))
    assert found == ["a/to_b.py", "b/real.py"]


def test_following_links_through_a_loop_lists_each_folder_once(tmp_path, monkeypatch):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    os.symlink(tmp_path / "pkg", tmp_path / "pkg" / "loop")
    monkeypatch.chdir(tmp_path)
    files = iter_python_files([Path("pkg")], Config(root=tmp_path), follow_links=True)
    assert list(files) == ["pkg/a.py"]


def test_a_linked_folder_is_walked_only_when_links_are_followed(tmp_path, monkeypatch):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "b.py").write_text("y = 2\n")
    os.symlink(tmp_path / "shared", tmp_path / "pkg" / "linked")
    monkeypatch.chdir(tmp_path)
    config = Config(root=tmp_path)
    followed = iter_python_files([Path("pkg")], config, follow_links=True)
    assert sorted(followed) == ["pkg/a.py", "pkg/linked/b.py"]
    assert list(iter_python_files([Path("pkg")], config)) == ["pkg/a.py"]


def test_a_files_module_name_comes_from_the_packages_above_it(tmp_path):
    package = tmp_path / "vllm" / "v1"
    package.mkdir(parents=True)
    for folder in (tmp_path / "vllm", package):
        (folder / "__init__.py").write_text("")
    assert [
        module_name_for(package / "kv_cache_interface.py"),
        module_name_for(package / "__init__.py"),
        module_name_for(tmp_path / "specs.py"),  # outside any package
        module_name_for(tmp_path / "my-specs.py"),  # no module can be named so
    ] == ["vllm.v1.kv_cache_interface", "vllm.v1.__init__", "specs", None]


def test_a_folder_named_is_walked_though_excluded_as_in_ruff(tmp_path, monkeypatch):
    """ruff checks a folder named on the command line even when its
    configuration or a .gitignore excludes it; inside, what a pattern
    excludes by itself stays out. --force-exclude leaves the folder out."""
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("ignored/\nout/\n")
    files = [
        "sub/m.py", "sub/a_pb2.py", "sub/gen/g.py", "sub/deep/sub/d.py",
        "ignored/i.py", "ignored/out/o.py", "keep/k.py",
    ]  # fmt: skip
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x = 1\n")
    config = Config(root=tmp_path, exclude=("sub", "*_pb2.py", "sub/gen"))
    monkeypatch.chdir(tmp_path)

    def found(*paths: str, force_exclude: bool = False) -> list[str]:
        named = [Path(p) for p in paths]
        return list(iter_python_files(named, config, force_exclude=force_exclude))

    assert found("sub") == ["sub/m.py"]
    assert found("ignored") == ["ignored/i.py"]
    assert found("sub", "ignored", force_exclude=True) == []
    assert found(".") == ["keep/k.py"]
