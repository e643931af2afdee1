"""What the excluder answers for one entry, in this process: folder-only
patterns, patterns that stop at their own folder, and a nested
``.gitignore`` read from where it lies (as git reads it)."""

from __future__ import annotations

from vllm_spec_lint.core.settings import Config
from vllm_spec_lint.edges.discovery import Excluder


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
