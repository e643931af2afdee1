"""`fix`, `--diff` and the fix engine: every form, imports, layout, files."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import REPO, interpreter_without_tools, run_cli
from vllm_spec_lint.core.analysis import analyze_source
from vllm_spec_lint.core.fixing import fix_source
from vllm_spec_lint.core.settings import Config
from vllm_spec_lint.edges.files import WriteRefused, write_atomically
from vllm_spec_lint.repair.formatting import find_ruff, formatter_for

pytestmark = pytest.mark.fast

KCI = "from vllm.v1.kv_cache_interface import "


def fixed(source: str, *, unsafe: bool = True, module: str | None = None) -> str:
    source = textwrap.dedent(source)
    outcome = fix_source(
        source,
        "example.py",
        Config(),
        unsafe=unsafe,
        module_name=module,
        formatter=formatter_for("example.py", 88),
    )
    assert outcome.failure is None, outcome.failure
    return outcome.text


def d(text: str) -> str:
    return textwrap.dedent(text)


@pytest.mark.parametrize(
    "before, after",
    [
        (
            "ok = isinstance(s, MLAAttentionSpec)",
            "ok = isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))",
        ),
        (
            "ok = isinstance(s, (FullAttentionSpec, MLAAttentionSpec, MambaSpec))",
            "ok = isinstance(\n    s, (FullAttentionSpec, MLAAttentionSpec, SlidingWindowMLASpec, MambaSpec)\n)",
        ),
        (
            "ok = isinstance(s, (MLAAttentionSpec,))",
            "ok = isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))",
        ),
        (
            "ok = isinstance(s, (MambaSpec, (MLAAttentionSpec,)))",
            "ok = isinstance(s, (MambaSpec, (MLAAttentionSpec, SlidingWindowMLASpec)))",
        ),
        (
            "ok = isinstance(s, MambaSpec | MLAAttentionSpec)",
            "ok = isinstance(s, MambaSpec | MLAAttentionSpec | SlidingWindowMLASpec)",
        ),
        (
            "ok = not isinstance(s, (MLAAttentionSpec))",
            # ruff drops the now redundant parentheses.
            "ok = not isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))",
        ),
    ],
)
def test_vsl001_forms(before, after):
    header = KCI + "FullAttentionSpec, MambaSpec, MLAAttentionSpec\n\n"
    # Too long for one line: ruff wraps the import, as vLLM's would be.
    new_header = (
        KCI + "(\n    FullAttentionSpec,\n    MambaSpec,\n    MLAAttentionSpec,\n"
        "    SlidingWindowMLASpec,\n)\n\n"
    )
    assert fixed(header + before + "\n") == new_header + after + "\n"


def test_one_per_line_tuple_keeps_layout_and_comments():
    source = d(
        """\
        from vllm.v1.kv_cache_interface import FullAttentionSpec, MLAAttentionSpec

        ok = isinstance(
            spec,
            (
                FullAttentionSpec,  # full attention
                # latent layers
                MLAAttentionSpec,  # the MLA layout
            ),
        )
        """
    )
    assert fixed(source) == d(
        """\
        from vllm.v1.kv_cache_interface import (
            FullAttentionSpec,
            MLAAttentionSpec,
            SlidingWindowMLASpec,
        )

        ok = isinstance(
            spec,
            (
                FullAttentionSpec,  # full attention
                # latent layers
                MLAAttentionSpec,  # the MLA layout
                SlidingWindowMLASpec,
            ),
        )
        """
    )


def test_one_per_line_tuple_anchor_in_the_middle():
    source = d(
        """\
        from vllm.v1.kv_cache_interface import FullAttentionSpec, MambaSpec, MLAAttentionSpec

        SPECS = (
            FullAttentionSpec,
            MLAAttentionSpec,  # latent
            MambaSpec,
        )
        """
    )
    assert fixed(source).split("\n\n")[1] == d(
        """\
        SPECS = (
            FullAttentionSpec,
            MLAAttentionSpec,  # latent
            SlidingWindowMLASpec,
            MambaSpec,
        )
        """
    )


def test_module_attribute_needs_no_import():
    source = "from vllm.v1 import kv_cache_interface as kci\n\nok = isinstance(s, kci.MLAAttentionSpec)\n"
    assert fixed(source) == (
        "from vllm.v1 import kv_cache_interface as kci\n\n"
        "ok = isinstance(s, (kci.MLAAttentionSpec, kci.SlidingWindowMLASpec))\n"
    )


def test_vsl002_fix_is_unsafe():
    source = (
        KCI
        + "MLAAttentionSpec\n\nok = type(spec) is MLAAttentionSpec\nno = type(spec) != MLAAttentionSpec\n"
    )
    assert fixed(source, unsafe=False) == source  # safe fixes only
    assert fixed(source, unsafe=True) == (
        KCI + "MLAAttentionSpec, SlidingWindowMLASpec\n\n"
        "ok = type(spec) in (MLAAttentionSpec, SlidingWindowMLASpec)\n"
        "no = type(spec) not in (MLAAttentionSpec, SlidingWindowMLASpec)\n"
    )


def test_vsl002_membership_and_reversed():
    source = (
        KCI
        + "MLAAttentionSpec\n\na = MLAAttentionSpec is type(s)\nb = type(s) in [MLAAttentionSpec]\n"
    )
    assert fixed(source, unsafe=True) == (
        KCI + "MLAAttentionSpec, SlidingWindowMLASpec\n\n"
        "a = type(s) in (MLAAttentionSpec, SlidingWindowMLASpec)\n"
        "b = type(s) in [MLAAttentionSpec, SlidingWindowMLASpec]\n"
    )


def test_vsl003_fix_only_without_sub_patterns():
    source = d(
        """\
        from vllm.v1.kv_cache_interface import MLAAttentionSpec

        match spec:
            case MLAAttentionSpec() as mla:
                pass
            case MLAAttentionSpec(block_size=16):
                pass
        """
    )
    after = fixed(source)
    assert "case MLAAttentionSpec() | SlidingWindowMLASpec() as mla:" in after
    assert "case MLAAttentionSpec(block_size=16):" in after


def test_vsl004_forms():
    source = d(
        """\
        from vllm.v1.kv_cache_interface import FullAttentionSpec, MLAAttentionSpec

        A = (MLAAttentionSpec,)
        B = FullAttentionSpec | MLAAttentionSpec
        C = frozenset({MLAAttentionSpec})
        """
    )
    assert fixed(source) == d(
        """\
        from vllm.v1.kv_cache_interface import (
            FullAttentionSpec,
            MLAAttentionSpec,
            SlidingWindowMLASpec,
        )

        A = (MLAAttentionSpec, SlidingWindowMLASpec)
        B = FullAttentionSpec | MLAAttentionSpec | SlidingWindowMLASpec
        C = frozenset({MLAAttentionSpec, SlidingWindowMLASpec})
        """
    )


# -- imports ------------------------------------------------------------------


@pytest.mark.parametrize(
    "names, expected",
    [
        ("MLAAttentionSpec", "MLAAttentionSpec, SlidingWindowMLASpec"),
        (
            "MLAAttentionSpec, UniformTypeKVCacheSpecs",
            "MLAAttentionSpec, SlidingWindowMLASpec, UniformTypeKVCacheSpecs",
        ),
        # Case-insensitive: "slidingwindowma" < "slidingwindowml", though
        # "M" < "a" in a case-sensitive sort (which ruff's I001 rejects).
        (
            "MLAAttentionSpec, SlidingWindowMambaSpec",
            "MLAAttentionSpec, SlidingWindowMambaSpec, SlidingWindowMLASpec",
        ),
        (
            "MLAAttentionSpec, SlidingWindowlegacySpec",
            "MLAAttentionSpec, SlidingWindowlegacySpec, SlidingWindowMLASpec",
        ),
        (
            "MambaSpec, MLAAttentionSpec",
            "MambaSpec, MLAAttentionSpec, SlidingWindowMLASpec",
        ),
        # "_" sorts before letters once lowercased.
        (
            "MLAAttentionSpec, SlidingWindow_Spec",
            "MLAAttentionSpec, SlidingWindow_Spec, SlidingWindowMLASpec",
        ),
        # Names equal but for case: uppercase first, as ruff sorts them.
        (
            "MLAAttentionSpec, SlidingWindowMlaSpec",
            "MLAAttentionSpec, SlidingWindowMLASpec, SlidingWindowMlaSpec",
        ),
        # One capital letter is a class; two or more make a constant.
        ("MLAAttentionSpec, Z", "MLAAttentionSpec, SlidingWindowMLASpec, Z"),
        ("TP, MLAAttentionSpec", "TP, MLAAttentionSpec, SlidingWindowMLASpec"),
        (
            "TP_SIZE, MLAAttentionSpec",
            "TP_SIZE, MLAAttentionSpec, SlidingWindowMLASpec",
        ),
        # ruff's order-by-type: CONSTANTS, Classes, functions.
        (
            "KV_LAYOUT, MLAAttentionSpec, get_kv_quant_mode",
            "KV_LAYOUT, MLAAttentionSpec, SlidingWindowMLASpec, get_kv_quant_mode",
        ),
    ],
)
def test_import_goes_to_its_sorted_position(names, expected, tmp_path):
    source = KCI + names + "\n\nok = isinstance(s, MLAAttentionSpec)\n"
    result = fixed(source)
    header = result.split("\n\n")[0]
    imported = header.removeprefix(KCI).strip("()\n").replace("\n", " ")
    assert [n.strip() for n in imported.split(",") if n.strip()] == expected.split(", ")
    # ruff's import sorting (I001) agrees.
    (tmp_path / "w.py").write_text(result)
    ruff = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--isolated", "--select", "I001",
         "--output-format", "concise", "w.py"],
        cwd=tmp_path, capture_output=True, text=True,
    )  # fmt: skip
    assert (ruff.returncode, ruff.stdout) == (0, "All checks passed!\n")


def test_function_local_import():
    source = d(
        """\
        def is_mla(spec):
            from vllm.v1.kv_cache_interface import MLAAttentionSpec

            return isinstance(spec, MLAAttentionSpec)
        """
    )
    assert fixed(source) == d(
        """\
        def is_mla(spec):
            from vllm.v1.kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec

            return isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec))
        """
    )


def test_aliased_anchor_gets_a_separate_import_line():
    source = d(
        """\
        import os
        from vllm.v1.kv_cache_interface import MLAAttentionSpec as MLA
        from vllm.v1.kv_cache_interface import FullAttentionSpec

        ok = isinstance(s, MLA)
        """
    )
    assert fixed(source) == d(
        """\
        import os
        from vllm.v1.kv_cache_interface import MLAAttentionSpec as MLA
        from vllm.v1.kv_cache_interface import SlidingWindowMLASpec
        from vllm.v1.kv_cache_interface import FullAttentionSpec

        ok = isinstance(s, (MLA, SlidingWindowMLASpec))
        """
    )


def test_companion_already_imported_or_aliased_is_reused():
    source = (
        KCI
        + "MLAAttentionSpec, SlidingWindowMLASpec\n\nok = isinstance(s, MLAAttentionSpec) and f(SlidingWindowMLASpec)\n"
    )
    after = fixed(source)
    assert (
        after.count("import") == 1 and after.splitlines()[0] == source.splitlines()[0]
    )
    source = (
        KCI
        + "MLAAttentionSpec\n"
        + KCI
        + "SlidingWindowMLASpec as SWMLA\n\nok = isinstance(s, MLAAttentionSpec)\n"
    )
    assert fixed(source).endswith("ok = isinstance(s, (MLAAttentionSpec, SWMLA))\n")


def test_several_findings_get_one_import():
    source = (
        KCI
        + "MLAAttentionSpec\n\na = isinstance(s, MLAAttentionSpec)\nb = isinstance(t, MLAAttentionSpec)\nC = (MLAAttentionSpec,)\n"
    )
    after = fixed(source)
    assert after.count("SlidingWindowMLASpec") == 4
    assert after.splitlines()[0] == KCI + "MLAAttentionSpec, SlidingWindowMLASpec"


def test_relative_and_star_imports():
    source = "from ..kv_cache_interface import MLAAttentionSpec\n\nok = isinstance(s, MLAAttentionSpec)\n"
    assert fixed(source, module="vllm.v1.core.x").splitlines()[0] == (
        "from ..kv_cache_interface import MLAAttentionSpec, SlidingWindowMLASpec"
    )
    source = KCI + "*\n\nok = isinstance(s, MLAAttentionSpec)\n"
    assert (
        fixed(source)
        == KCI + "*\n\nok = isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))\n"
    )


def test_name_taken_by_something_else_gets_no_fix():
    source = (
        KCI
        + "MLAAttentionSpec\nSlidingWindowMLASpec = None\n\nok = isinstance(s, MLAAttentionSpec)\n"
    )
    out = fix_source(source, "x.py", Config(), unsafe=True)
    assert out.text == source and out.remaining and out.remaining[0].fix is None


def test_in_the_family_module_itself_no_import_is_added():
    source = d(
        """\
        class MLAAttentionSpec:
            def merge(self, other):
                return isinstance(other, MLAAttentionSpec)


        class SlidingWindowMLASpec:
            pass
        """
    )
    after = fixed(source, module="vllm.v1.kv_cache_interface")
    assert "isinstance(other, (MLAAttentionSpec, SlidingWindowMLASpec))" in after
    assert "import" not in after


# -- engine guarantees ----------------------------------------------------------


def test_fix_is_idempotent_and_check_after_fix_is_clean(tmp_path):
    target = tmp_path / "examples"
    import shutil

    shutil.copytree(REPO / "examples", target)
    first = run_cli(
        "fix", "--output-format", "concise", "--unsafe-fixes", ".", cwd=target
    )
    assert first.returncode == 0, first.stdout + first.stderr
    snapshot = {p: p.read_bytes() for p in target.rglob("*.py")}
    second = run_cli(
        "fix", "--output-format", "concise", "--unsafe-fixes", ".", cwd=target
    )
    assert second.returncode == 0
    assert {p: p.read_bytes() for p in target.rglob("*.py")} == snapshot
    assert second.stdout == "All checks passed!\n"
    assert (
        run_cli("check", "--output-format", "concise", ".", cwd=target).returncode == 0
    )


def test_a_fix_that_does_not_parse_is_not_written():
    source = KCI + "MLAAttentionSpec\n\nok = isinstance(s, MLAAttentionSpec)\n"
    broken = fix_source(
        source,
        "x.py",
        Config(),
        formatter=lambda text, spans, before: text + "def (:\n",
        unsafe=True,
    )
    assert broken.text == source and "does not parse" in broken.failure


def test_crlf_bom_and_mode_are_kept(tmp_path):
    path = tmp_path / "w.py"
    source = (
        "\ufeff"
        + KCI
        + "MLAAttentionSpec\r\n\r\nok = isinstance(s, MLAAttentionSpec)\r\n"
    )
    path.write_bytes(source.encode("utf-8"))
    path.chmod(0o640)
    assert (
        run_cli(
            "fix", "--output-format", "concise", "--unsafe-fixes", "w.py", cwd=tmp_path
        ).returncode
        == 0
    )
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    assert data.count(b"\r\n") == 3 and b"\n" not in data.replace(b"\r\n", b"")
    assert b"(MLAAttentionSpec, SlidingWindowMLASpec)" in data
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert not [p for p in tmp_path.iterdir() if p.name != "w.py"]  # no temp left


def test_latin1_file_with_cookie(tmp_path):
    path = tmp_path / "l1.py"
    source = (
        "# -*- coding: latin-1 -*-\n# café\n"
        + KCI
        + "MLAAttentionSpec\n\nok = isinstance(s, MLAAttentionSpec)\n"
    )
    path.write_bytes(source.encode("latin-1"))
    assert (
        run_cli(
            "fix", "--output-format", "concise", "--unsafe-fixes", "l1.py", cwd=tmp_path
        ).returncode
        == 0
    )
    data = path.read_bytes()
    assert b"caf\xe9" in data
    assert data.decode("latin-1").endswith(
        "isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))\n"
    )


def test_read_only_file_is_refused_and_untouched(tmp_path):
    path = tmp_path / "ro.py"
    source = (
        KCI + "MLAAttentionSpec\n\nok = isinstance(s, MLAAttentionSpec)\n"
    ).encode()
    path.write_bytes(source)
    path.chmod(0o444)
    out = run_cli(
        "fix", "--output-format", "concise", "--unsafe-fixes", "ro.py", cwd=tmp_path
    )
    assert out.returncode == 1
    assert "ro.py: not written: the file is read-only" in out.stderr
    assert path.read_bytes() == source
    assert "ro.py:3:20: VSL001" in out.stdout  # still reported


def test_file_changed_between_read_and_write_is_refused(tmp_path):
    path = tmp_path / "w.py"
    path.write_bytes(b"original\n")
    with pytest.raises(WriteRefused, match="changed on disk"):
        write_atomically(path, b"what we read earlier\n", b"fixed\n")
    assert path.read_bytes() == b"original\n"
    assert os.listdir(tmp_path) == ["w.py"]


def test_nothing_written_when_nothing_changes(tmp_path):
    path = tmp_path / "ok.py"
    path.write_text(KCI + "MLAAttentionSpec, SlidingWindowMLASpec\n")
    before = path.stat().st_mtime_ns
    os.utime(path, ns=(before - 10**9, before - 10**9))
    run_cli("fix", "--output-format", "concise", "--unsafe-fixes", ".", cwd=tmp_path)
    assert path.stat().st_mtime_ns == before - 10**9


def test_diff_writes_nothing_and_exits_1(tmp_path):
    path = tmp_path / "w.py"
    source = KCI + "MLAAttentionSpec\n\nok = isinstance(s, MLAAttentionSpec)\n"
    path.write_text(source)
    for command in (("check", "--diff"), ("fix", "--diff")):
        safe_only = run_cli(*command, ".", cwd=tmp_path)
        assert (safe_only.returncode, safe_only.stdout) == (
            0,
            "No errors would be fixed (1 fix available with `--unsafe-fixes`).\n",
        )
        out = run_cli(*command, "--unsafe-fixes", ".", cwd=tmp_path)
        assert out.returncode == 1
        assert "-ok = isinstance(s, MLAAttentionSpec)\n" in out.stdout
        assert (
            "+ok = isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))\n"
            in out.stdout
        )
        assert out.stdout.endswith("\nWould fix 1 error.\n")
        assert path.read_text() == source


def test_json_carries_the_fix(tmp_path):
    (tmp_path / "w.py").write_text(
        KCI + "MLAAttentionSpec\n\nok = type(s) is MLAAttentionSpec\n"
    )
    [finding] = json.loads(
        run_cli(
            "check", "--output-format", "concise", "--format", "json", ".", cwd=tmp_path
        ).stdout
    )
    assert finding["fix"]["applicability"] == "unsafe"
    edits = finding["fix"]["edits"]
    assert {
        "content": "type(s) in (MLAAttentionSpec, SlidingWindowMLASpec)",
        "location": {"row": 3, "column": 6},
        "end_location": {"row": 3, "column": 33},
    } in edits
    assert any(
        "SlidingWindowMLASpec" in e["content"] and e["location"]["row"] == 1
        for e in edits
    )


def test_without_ruff_the_fix_applies_unwrapped_and_says_so_once(tmp_path):
    # A `ruff` package that cannot be imported, no ruff beside the
    # interpreter, and none on PATH.
    fake = tmp_path / "fake"
    (fake / "ruff").mkdir(parents=True)
    (fake / "ruff" / "__init__.py").write_text("raise ImportError('not installed')\n")
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(
            KCI
            + "MLAAttentionSpec\n\nis_mla_region = isinstance(layer_spec_with_long_name, MLAAttentionSpec)\n"
        )
    import subprocess

    python, env = interpreter_without_tools(tmp_path)
    env = {
        **os.environ, **env, "PATH": "/nonexistent",
        "PYTHONPATH": f"{fake}{os.pathsep}{env['PYTHONPATH']}",
    }  # fmt: skip
    out = subprocess.run(
        [python, "-m", "vllm_spec_lint", "fix", "--unsafe-fixes", "a.py", "b.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    assert out.stderr.count("ruff is not installed") == 1
    assert (
        "isinstance(layer_spec_with_long_name, (MLAAttentionSpec, SlidingWindowMLASpec))"
        in (tmp_path / "a.py").read_text()
    )


def test_ruff_is_available_for_these_tests():
    assert find_ruff() is not None


ONE_LINE_IMPORT = (
    "from vllm.v1.kv_cache_interface import FullAttentionSpec, MLAAttentionSpec\n\n"
)


@pytest.mark.parametrize(
    "before, after",
    [
        (
            "from vllm.v1.kv_cache_interface import (\n"
            "    FullAttentionSpec,\n    MLAAttentionSpec\n)\n\n"
            "ok = isinstance(s, (FullAttentionSpec, SlidingWindowMLASpec))\n"
            "ok = isinstance(s, MLAAttentionSpec)\n",
            "from vllm.v1.kv_cache_interface import (\n"
            "    FullAttentionSpec,\n    MLAAttentionSpec,\n    SlidingWindowMLASpec\n)\n\n"
            "ok = isinstance(s, (FullAttentionSpec, SlidingWindowMLASpec))\n"
            "ok = isinstance(s, (MLAAttentionSpec, SlidingWindowMLASpec))\n",
        ),
        (
            ONE_LINE_IMPORT
            + "_SPECS = frozenset({\n    FullAttentionSpec,\n    MLAAttentionSpec\n})\n",
            ONE_LINE_IMPORT.replace(
                "MLAAttentionSpec\n", "MLAAttentionSpec, SlidingWindowMLASpec\n"
            )
            + "_SPECS = frozenset({\n    FullAttentionSpec,\n    MLAAttentionSpec,\n"
            "    SlidingWindowMLASpec\n})\n",
        ),
        (
            ONE_LINE_IMPORT
            + "_SPECS = frozenset([\n    FullAttentionSpec,\n    MLAAttentionSpec\n])\n",
            ONE_LINE_IMPORT.replace(
                "MLAAttentionSpec\n", "MLAAttentionSpec, SlidingWindowMLASpec\n"
            )
            + "_SPECS = frozenset([\n    FullAttentionSpec,\n    MLAAttentionSpec,\n"
            "    SlidingWindowMLASpec\n])\n",
        ),
        (
            ONE_LINE_IMPORT
            + "ok = isinstance(s, ((\n    FullAttentionSpec,\n    MLAAttentionSpec\n)))\n",
            ONE_LINE_IMPORT.replace(
                "MLAAttentionSpec\n", "MLAAttentionSpec, SlidingWindowMLASpec\n"
            )
            + "ok = isinstance(s, ((\n    FullAttentionSpec,\n    MLAAttentionSpec,\n"
            "    SlidingWindowMLASpec\n)))\n",
        ),
    ],
    ids=["import", "set", "list", "double-parenthesised-tuple"],
)
def test_multi_line_container_without_a_trailing_comma_keeps_its_closer(before, after):
    # Unformatted: the edit alone, as `fix-formatter = "none"` would make it.
    outcome = fix_source(before, "example.py", Config(), unsafe=True)
    assert (outcome.failure, outcome.text) == (None, after)


def test_fix_edit_keeps_the_indentation_of_the_blocks_around_it():
    source = (
        ONE_LINE_IMPORT + "class Worker:\n"
        "    def is_mla(self, spec):\n"
        "        return isinstance(spec, (\n"
        "            FullAttentionSpec,\n"
        "            MLAAttentionSpec  # the anchor\n"
        "        ))\n"
    )
    outcome = fix_source(source, "example.py", Config(), unsafe=True)
    assert outcome.text == (
        ONE_LINE_IMPORT.replace(
            "MLAAttentionSpec\n", "MLAAttentionSpec, SlidingWindowMLASpec\n"
        )
        + "class Worker:\n"
        "    def is_mla(self, spec):\n"
        "        return isinstance(spec, (\n"
        "            FullAttentionSpec,\n"
        "            MLAAttentionSpec,  # the anchor\n"
        "            SlidingWindowMLASpec\n"
        "        ))\n"
    )


def test_no_fix_where_the_companions_name_means_something_else():
    source = (
        "from vllm.v1.kv_cache_interface import MLAAttentionSpec\n\n\n"
        "def is_latent(spec, SlidingWindowMLASpec=None):\n"
        "    return isinstance(spec, MLAAttentionSpec)\n\n\n"
        "def is_mla(spec):\n"
        "    return isinstance(spec, MLAAttentionSpec)\n"
    )
    findings = analyze_source(source, "example.py", Config()).findings
    assert [(f.location[0], f.fix is not None) for f in findings] == [
        (5, False),
        (9, True),
    ]


def test_fix_edit_follows_a_block_indented_unlike_the_module():
    source = (
        ONE_LINE_IMPORT + "class Worker:\n"
        "    def is_mla(self, spec):\n"
        "      return isinstance(spec, (\n"
        "          FullAttentionSpec,\n"
        "          MLAAttentionSpec\n"
        "      ))\n"
    )
    outcome = fix_source(source, "example.py", Config(), unsafe=True)
    assert outcome.text.endswith(
        "      return isinstance(spec, (\n"
        "          FullAttentionSpec,\n"
        "          MLAAttentionSpec,\n"
        "          SlidingWindowMLASpec\n"
        "      ))\n"
    )
