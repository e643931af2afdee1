"""The result cache on its own: what an entry keeps, what its key depends on,
and that a warm run is served from it rather than analysing again."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from tests.conftest import run_cli
from vllm_spec_lint.core.findings import Finding
from vllm_spec_lint.core.settings import Config
from vllm_spec_lint.edges import cache, runner
from vllm_spec_lint.model.hierarchy import ClassHierarchy, Family
from vllm_spec_lint.repair.text import Edit, Fix

FINDING = Finding(
    "VSL001",
    "isinstance() check against MLAAttentionSpec leaves out SlidingWindowMLASpec",
    "pkg/w.py",
    (2, 40),
    (2, 56),
    Fix(
        "safe",
        "Add SlidingWindowMLASpec",
        (
            Edit("(MLAAttentionSpec, SlidingWindowMLASpec)", (2, 40), (2, 56)),
            Edit("MLAAttentionSpec, SlidingWindowMLASpec", (1, 40), (1, 56)),
        ),
    ),
    line_text="is_mla_region = isinstance(layer_spec, MLAAttentionSpec)",
)
SUPPRESSED = replace(
    FINDING, location=(7, 9), end_location=(7, 25), fix=None, suppressed_by="loud: x"
)


def _cache(tmp_path: Path, config: Config | None = None, hierarchy=None):
    return cache.ResultCache(
        tmp_path, config or Config(), hierarchy or ClassHierarchy.default()
    )


def test_an_entry_gives_back_what_was_put_under_the_asked_path(tmp_path):
    results = _cache(tmp_path)
    key = results.key("pkg/w.py", "pkg.w", b"source")
    results.put(key, [FINDING], [SUPPRESSED])
    findings, suppressed = results.get(key, "elsewhere/w.py")
    assert findings == [replace(FINDING, path="elsewhere/w.py")]
    assert findings[0].fix.edits == FINDING.fix.edits
    assert findings[0].line_text == FINDING.line_text  # not compared by ==
    assert suppressed == [replace(SUPPRESSED, path="elsewhere/w.py")]
    assert suppressed[0].suppressed_by == "loud: x"


def test_a_missing_or_corrupt_entry_is_a_miss(tmp_path):
    results = _cache(tmp_path)
    key = results.key("w.py", None, b"source")
    assert results.get(key, "w.py") is None
    results.put(key, [FINDING], [])
    entry = next((tmp_path / cache.CACHE_DIR).rglob(f"{key}.json"))
    for corrupt in ("{not json", '{"findings": [{}], "suppressed": []}', "[]"):
        entry.write_text(corrupt)
        assert results.get(key, "w.py") is None, corrupt


def test_the_key_depends_on_path_module_source_and_settings(tmp_path):
    base = _cache(tmp_path).key("a/w.py", "a.w", b"x = 1\n")
    assert _cache(tmp_path).key("a/w.py", "a.w", b"x = 1\n") == base
    assert len({
        base,
        _cache(tmp_path).key("b/w.py", "a.w", b"x = 1\n"),
        _cache(tmp_path).key("a/w.py", "b.w", b"x = 1\n"),
        _cache(tmp_path).key("a/w.py", None, b"x = 1\n"),
        _cache(tmp_path).key("a/w.py", "a.w", b"x = 2\n"),
        _cache(tmp_path, Config(strict=True)).key("a/w.py", "a.w", b"x = 1\n"),
    }) == 6  # fmt: skip


@pytest.mark.parametrize(
    "other",
    [
        Config(select=("VSL001",)),
        Config(ignore=("VSL004",)),
        Config(per_file_ignores=(("a/*", ("VSL001",)),)),
        Config(strict=True),
        Config(extend_safe_fixes=("VSL001",)),
        Config(extend_unsafe_fixes=("VSL001",)),
        Config(
            families=(
                Family(
                    "mamba",
                    "vllm.v1.kv_cache_interface",
                    ("MambaSpec", "ShortConvSpec"),
                ),
            )
        ),
    ],
)
def test_every_setting_that_changes_findings_changes_the_fingerprint(other):
    hierarchy = ClassHierarchy.default()
    assert cache.fingerprint(other, hierarchy) != cache.fingerprint(Config(), hierarchy)


def test_the_hierarchy_changes_the_fingerprint():
    default = ClassHierarchy.default()
    changed = default.with_module(
        "vllm.v1.kv_cache_interface",
        {"SlidingWindowMLASpec": ("MLAAttentionSpec",)},
        "kv_cache_interface.py",
        "scanned tree",
    )
    assert cache.fingerprint(Config(), changed) != cache.fingerprint(Config(), default)


def test_settings_that_do_not_change_findings_keep_the_fingerprint(tmp_path):
    hierarchy = ClassHierarchy.default()
    assert cache.fingerprint(Config(line_length=100), hierarchy) == cache.fingerprint(
        Config(), hierarchy
    )


BAD = (
    "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
    "is_mla_region = isinstance(layer_spec, MLAAttentionSpec)\n"
)


def test_a_warm_run_is_served_from_the_cache(tmp_path, monkeypatch):
    (tmp_path / "w.py").write_text(BAD)
    config = Config(root=tmp_path)
    monkeypatch.chdir(tmp_path)
    cold = runner.run([Path("w.py")], config, jobs=1)
    assert [(f.code, f.location) for f in cold.findings] == [("VSL001", (2, 40))]

    def no_analysis(*args, **kwargs):
        raise AssertionError("a warm run analysed a cached file again")

    monkeypatch.setattr(runner, "analyze_file", no_analysis)
    warm = runner.run([Path("w.py")], config, jobs=1)
    assert warm.findings == cold.findings
    assert warm.findings[0].fix == cold.findings[0].fix


def test_the_family_module_is_read_once_by_its_content(tmp_path, monkeypatch):
    bases = cache.ClassBasesCache(tmp_path)
    source = b"class KVCacheSpec: ...\nclass MLAAttentionSpec(KVCacheSpec): ...\n"
    first = bases(source)
    assert first == {"KVCacheSpec": (), "MLAAttentionSpec": ("KVCacheSpec",)}

    def no_read(source):
        raise AssertionError("read again")

    monkeypatch.setattr(cache, "read_class_bases", no_read)
    assert bases(source) == first
    for entry in (tmp_path / cache.CACHE_DIR).rglob("*.json"):
        entry.write_text('{"MLAAttentionSpec": "KVCacheSpec"}')  # not a list
    monkeypatch.undo()
    assert bases(source) == first  # corrupt: read again


def test_the_cache_folder_is_marked_as_a_cache(tmp_path):
    results = _cache(tmp_path)
    results.put(results.key("w.py", None, b""), [], [])
    top = tmp_path / cache.CACHE_DIR
    assert (top / ".gitignore").read_text() == "# Created by vllm-spec-lint.\n*\n"
    assert (top / "CACHEDIR.TAG").read_text() == (
        "Signature: 8a477f597d28d172789f06886806bc55\n"
        "# This file is a cache directory tag created by vllm-spec-lint.\n"
    )


def test_files_known_clean_are_read_again_when_the_families_change(tmp_path):
    # ShortConvSpec is no anchor at first: the file is recorded as clean.
    (tmp_path / "w.py").write_text(
        "from vllm.v1.kv_cache_interface import ShortConvSpec\n"
        "ok = isinstance(spec, ShortConvSpec)\n"
    )
    first = run_cli(
        "check",
        "--output-format",
        "concise",
        "--output-format",
        "concise",
        ".",
        cwd=tmp_path,
    )
    assert first.returncode == 0, first.stdout + first.stderr
    (tmp_path / "pyproject.toml").write_text(
        "[tool.vllm-spec-lint]\nextend-families = [\n"
        '  { name = "conv", module = "vllm.v1.kv_cache_interface", '
        'members = ["ShortConvSpec", "MambaSpec"] },\n]\n'
    )
    second = run_cli(
        "check",
        "--output-format",
        "concise",
        "--output-format",
        "concise",
        ".",
        cwd=tmp_path,
    )
    assert second.stdout.splitlines()[0] == (
        "w.py:2:23: VSL001 isinstance() check against ShortConvSpec leaves out "
        "MambaSpec"
    )


def test_a_file_name_that_is_not_utf8_is_cached_by_its_bytes(tmp_path):
    # Linux file names are bytes; Python hands this one over with a surrogate.
    name = os.fsdecode(b"worker_\xff.py")
    (tmp_path / name).write_text(
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n"
        "ok = isinstance(spec, MLAAttentionSpec)\n"
    )
    cold = run_cli(
        "check",
        "--output-format",
        "concise",
        "--output-format",
        "json",
        ".",
        cwd=tmp_path,
    )
    warm = run_cli(
        "check",
        "--output-format",
        "concise",
        "--output-format",
        "json",
        ".",
        cwd=tmp_path,
    )
    assert cold.returncode == warm.returncode == 1, cold.stderr + warm.stderr
    assert warm.stdout == cold.stdout
    assert [f["code"] for f in json.loads(warm.stdout)] == ["VSL001"]


MAMBA = Family("mamba", "vllm.v1.kv_cache_interface", ("MambaSpec", "ShortConvSpec"))
MAMBA_CHECK = (
    "from vllm.v1.kv_cache_interface import MambaSpec\n"
    "is_mamba = isinstance(layer_spec, MambaSpec)\n"
)


def test_a_file_clean_for_some_families_is_read_again_for_others(tmp_path, monkeypatch):
    """Which files are clean depends on the names the families screen for:
    a file without the MLA family's names still holds MambaSpec."""
    monkeypatch.setattr(cache.CleanFiles, "_RECENT_NS", 0)
    (tmp_path / "m.py").write_text(MAMBA_CHECK)
    mla_only = Config(root=tmp_path)
    assert runner.run([tmp_path], mla_only, jobs=1).findings == []
    with_mamba = replace(mla_only, families=mla_only.families + (MAMBA,))
    found = runner.run([tmp_path], with_mamba, jobs=1).findings
    assert [(f.code, f.location) for f in found] == [("VSL001", (2, 35))]


def test_a_clean_list_that_is_not_a_table_is_started_again(tmp_path, monkeypatch):
    import marshal

    monkeypatch.setattr(cache.CleanFiles, "_RECENT_NS", 0)
    (tmp_path / "plain.py").write_text("x = 1\n")
    config = Config(root=tmp_path)
    runner.run([tmp_path], config, jobs=1)
    [index] = (tmp_path / cache.CACHE_DIR).rglob("clean-*.marshal")
    index.write_bytes(marshal.dumps(["plain.py"]))
    assert runner.run([tmp_path], config, jobs=1).results[0].findings == []
    clean = cache.CleanFiles(tmp_path, config, ClassHierarchy.default())
    assert list(clean.entries) == [str(tmp_path / "plain.py")]


def test_a_file_the_screen_reports_is_not_marked_clean(tmp_path):
    """A file the screen answers with a finding (a NUL byte) is not marked
    clean, so a warm run reads it again; a file without the names is."""
    binary, plain = tmp_path / "binary.py", tmp_path / "plain.py"
    binary.write_bytes(b"x = 1\0\n")
    plain.write_text("x = 1\n")
    config = Config(root=tmp_path)
    hierarchy = ClassHierarchy.default()
    clean = cache.CleanFiles(tmp_path, config, hierarchy)
    clean._RECENT_NS = -(10**18)  # every file counts as written long ago
    read = runner._read(str(binary), config, hierarchy, clean)
    assert [f.code for f in read.findings] == ["VSL900"]
    assert not clean.is_clean(str(binary), os.stat(binary))
    assert runner._read(str(plain), config, hierarchy, clean).findings == []
    assert clean.is_clean(str(plain), os.stat(plain))


def test_an_entry_keeps_what_a_finding_follows_its_own_spec_and_line(tmp_path):
    results = _cache(tmp_path)
    key = results.key("pkg/w.py", "pkg.w", b"source")
    taken = replace(FINDING, code="VSL008", follows=("VSL001",), own_spec=("a.B",))
    results.put(key, [taken], [])
    [found], _ = results.get(key, "pkg/w.py")
    assert (found.follows, found.own_spec, found.line_text) == (
        ("VSL001",),
        ("a.B",),
        FINDING.line_text,
    )


def test_an_entry_without_the_newer_fields_reads_them_as_empty(tmp_path):
    results = _cache(tmp_path)
    key = results.key("pkg/w.py", "pkg.w", b"source")
    results.put(key, [FINDING], [])
    entry = next((tmp_path / cache.CACHE_DIR).rglob(f"{key}.json"))
    data = json.loads(entry.read_text())
    for field in ("follows", "own_spec", "line_text"):
        del data["findings"][0][field]
    entry.write_text(json.dumps(data))
    [found], _ = results.get(key, "pkg/w.py")
    assert (found.follows, found.own_spec, found.line_text) == ((), (), "")


def test_a_gitignore_the_user_wrote_in_the_cache_folder_is_kept(tmp_path):
    top = tmp_path / cache.CACHE_DIR
    top.mkdir()
    (top / ".gitignore").write_text("# mine\n*\n!keep.txt\n")
    results = _cache(tmp_path)
    results.put(results.key("w.py", None, b""), [], [])
    assert (top / ".gitignore").read_text() == "# mine\n*\n!keep.txt\n"
    assert [p.name for p in top.rglob("*tmp")] == []  # none left behind


def test_a_preview_key_depends_on_the_fixes_and_every_settings_file_above(tmp_path):
    previews = cache.PreviewCache(tmp_path)
    package = tmp_path / "project" / "pkg"
    package.mkdir(parents=True)
    path = str(package / "w.py")
    fix = Fix("safe", "Add it", (Edit("x", (1, 1), (1, 2)),))

    def key(fixes=(fix,)):
        return cache.PreviewCache(tmp_path).key(path, "text", list(fixes), "ruff")

    first = key()
    assert key() == first
    assert key([None]) != first
    assert previews.key(path, "other", [fix], "ruff") != first
    assert previews.key(path, "text", [fix], "black") != first
    seen = {first}
    # The last name looked for, in the file's folder; then above it.
    for where in (package, package.parent, tmp_path):
        (where / ".editorconfig").write_text(f"# {where.name}\n")
        seen.add(key())
    assert len(seen) == 4


def test_a_preview_entry_keeps_the_places_that_have_no_fix(tmp_path):
    previews = cache.PreviewCache(tmp_path)
    fix = Fix("unsafe", "Add it", (Edit("x", (1, 1), (1, 2)),))
    previews.put("ab" * 32, [None, fix])
    assert previews.get("ab" * 32) == [None, fix]


@pytest.mark.parametrize(
    "name",
    [
        "pyproject.toml",
        "ruff.toml",
        ".ruff.toml",
        "setup.cfg",
        "tox.ini",
        ".style.yapf",
        ".pre-commit-config.yaml",
        ".editorconfig",
    ],
)
def test_a_preview_key_depends_on_each_formatter_settings_file(tmp_path, name):
    (tmp_path / "pkg").mkdir()
    path = str(tmp_path / "pkg" / "w.py")
    fix = Fix("safe", "Add it", (Edit("x", (1, 1), (1, 2)),))

    def key():
        return cache.PreviewCache(tmp_path).key(path, "text", [fix], "ruff")

    before = key()
    (tmp_path / name).write_text("# line-length = 100\n")
    assert key() != before


@pytest.mark.parametrize("corrupt", ["{not json", "[{}]", "[5]"])
def test_a_corrupt_preview_entry_is_a_miss(tmp_path, corrupt):
    previews = cache.PreviewCache(tmp_path)
    previews.put("ab" * 32, [None])
    [entry] = (tmp_path / cache.CACHE_DIR).rglob(f"{'ab' * 32}.json")
    entry.write_text(corrupt)
    assert previews.get("ab" * 32) is None


@pytest.mark.parametrize(
    "corrupt",
    ["[]", '{"MLAAttentionSpec": ["KVCacheSpec"], "KVCacheSpec": "x"}', '{"A": [1]}'],
    ids=["not-a-table", "one-entry-not-a-list", "a-base-not-a-string"],
)
def test_a_corrupt_class_bases_entry_is_read_again(tmp_path, corrupt):
    bases = cache.ClassBasesCache(tmp_path)
    source = b"class KVCacheSpec: ...\nclass MLAAttentionSpec(KVCacheSpec): ...\n"
    first = bases(source)
    [entry] = (tmp_path / cache.CACHE_DIR).rglob("*.json")
    entry.write_text(corrupt)
    assert bases(source) == {"KVCacheSpec": (), "MLAAttentionSpec": ("KVCacheSpec",)}
    assert bases(source) == first


@pytest.mark.parametrize("damaged", [b"", b"\xff\x00"], ids=["empty", "not-marshal"])
def test_a_damaged_clean_list_is_started_again(tmp_path, monkeypatch, damaged):
    monkeypatch.setattr(cache.CleanFiles, "_RECENT_NS", 0)
    (tmp_path / "plain.py").write_text("x = 1\n")
    config = Config(root=tmp_path)
    runner.run([tmp_path], config, jobs=1)
    [index] = (tmp_path / cache.CACHE_DIR).rglob("clean-*.marshal")
    index.write_bytes(damaged)
    assert cache.CleanFiles(tmp_path, config, ClassHierarchy.default()).entries == {}
    assert runner.run([tmp_path], config, jobs=1).results[0].findings == []


def test_the_pairing_cache_gives_back_what_was_put(tmp_path):
    pairing = cache.PairingCache(tmp_path, Config(), ClassHierarchy.default())
    verdicts = {("FlashMLABuilder", "kv_cache_spec"): "pairing: x", ("other",): None}
    pairing.put("k" * 64, verdicts)
    assert pairing.get("k" * 64) == verdicts


@pytest.mark.parametrize("corrupt", ["{not json", "5"])
def test_a_corrupt_pairing_entry_is_a_miss(tmp_path, corrupt):
    pairing = cache.PairingCache(tmp_path, Config(), ClassHierarchy.default())
    pairing.put("k" * 64, {("a",): None})
    [entry] = (tmp_path / cache.CACHE_DIR).rglob(f"{'k' * 64}.json")
    entry.write_text(corrupt)
    assert pairing.get("k" * 64) is None


def test_a_tree_holds_results_once_a_run_has_cached_any(tmp_path):
    (tmp_path / "w.py").write_text(BAD)
    assert not cache.holds_results(tmp_path)
    runner.run([tmp_path], Config(root=tmp_path), jobs=1)
    assert cache.holds_results(tmp_path)
