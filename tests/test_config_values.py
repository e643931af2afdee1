"""Settings values: what each bad one is told, word for word (the file,
the key and the reason), and the spellings setup.cfg's text values take."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli
from vllm_spec_lint.core.settings import ConfigError
from vllm_spec_lint.edges.config import (
    find_config,
    load_config,
    parse_settings,
    read_config_file,
)

pytestmark = pytest.mark.fast

CODES = "VSL001, VSL002, VSL003, VSL004, VSL005, VSL006, VSL007, VSL008, VSL900"


@pytest.mark.parametrize(
    "name, text, reason",
    [
        (
            "pyproject.toml",
            'families = ["x"]',
            "invalid value for 'families[0]': expected a table",
        ),
        (
            "pyproject.toml",
            "families = 3",
            "invalid value for 'families': expected a list of tables",
        ),
        (
            "pyproject.toml",
            'families = [{ module = "a", members = ["A", "B"], size = 2, colour = 1 }]',
            "invalid value for 'families[0]': unknown field(s): ['colour', 'size']",
        ),
        (
            "pyproject.toml",
            'families = [{ module = "a-b", members = ["A", "B"] }]',
            "invalid value for 'families[0].module': expected a dotted module name",
        ),
        (
            "pyproject.toml",
            'families = [{ module = "a", members = [1, 2] }]',
            "invalid value for 'families[0].members': expected a list of strings",
        ),
        (
            "pyproject.toml",
            'families = [{ module = "a", members = ["A"] }]',
            "invalid value for 'families[0].members': expected two or more class names (dotted for another module)",
        ),
        (
            "pyproject.toml",
            'per-file-ignores = ["x"]',
            "invalid value for 'per-file-ignores': expected a table of pattern = "
            "[codes]",
        ),
        (
            "setup.cfg",
            "per-file-ignores =\n    bad.py VSL001",
            "invalid value for 'per-file-ignores': expected 'pattern: codes': "
            "'bad.py VSL001'",
        ),
        (
            "pyproject.toml",
            'select = ["VSL9", "X1", "E"]',
            f"invalid value for 'select': unknown rule selector 'X1', 'E' (codes: "
            f"{CODES})",
        ),
        (
            "pyproject.toml",
            "line-length = 'long'",
            "invalid value for 'line-length': expected an integer from 1 to 320",
        ),
        (
            "pyproject.toml",
            "line-length = 0",
            "invalid value for 'line-length': expected an integer from 1 to 320",
        ),
        (
            "pyproject.toml",
            "line-length = 321",
            "invalid value for 'line-length': expected an integer from 1 to 320",
        ),
        (
            "pyproject.toml",
            "max-file-size = 'big'",
            "invalid value for 'max-file-size': expected a size in MiB",
        ),
        (
            "pyproject.toml",
            "extend-families = [{ module = 'a-b', members = ['A', 'B'] }]",
            "invalid value for 'families[0].module': expected a dotted module name",
        ),
        # A prefix of a code shorter than VSL, or nothing, selects no rule.
        (
            "pyproject.toml",
            'select = ["VS", ""]',
            f"invalid value for 'select': unknown rule selector 'VS', '' (codes: "
            f"{CODES})",
        ),
        (
            "pyproject.toml",
            "extend-select = ['X1']",
            f"invalid value for 'extend-select': unknown rule selector 'X1' (codes: "
            f"{CODES})",
        ),
        (
            "pyproject.toml",
            "extend-safe-fixes = ['X1']",
            f"invalid value for 'extend-safe-fixes': unknown rule selector 'X1' "
            f"(codes: {CODES})",
        ),
        (
            "pyproject.toml",
            "exclude = [1]",
            "invalid value for 'exclude': expected a list of strings",
        ),
        # One element that is not a string is enough to refuse the list.
        (
            "pyproject.toml",
            'exclude = ["docs", 1]',
            "invalid value for 'exclude': expected a list of strings",
        ),
        (
            "pyproject.toml",
            'families = [{ module = "a", members = ["A", 2] }]',
            "invalid value for 'families[0].members': expected a list of strings",
        ),
        (
            "setup.cfg",
            "strict = on",
            "invalid value for 'strict': expected true or false",
        ),
        # TOML values carry their types: a string is no list and no number.
        (
            "pyproject.toml",
            'exclude = "docs"',
            "invalid value for 'exclude': expected a list of strings",
        ),
        (
            "pyproject.toml",
            "select = 5",
            "invalid value for 'select': expected a list of strings",
        ),
        (
            "pyproject.toml",
            'per-file-ignores = "a.py: VSL001"',
            "invalid value for 'per-file-ignores': expected a table of pattern = "
            "[codes]",
        ),
        (
            "pyproject.toml",
            'line-length = "88"',
            "invalid value for 'line-length': expected an integer from 1 to 320",
        ),
        (
            "pyproject.toml",
            'max-file-size = "5"',
            "invalid value for 'max-file-size': expected a size in MiB",
        ),
        # A boolean is no number, though Python's bool is an int.
        (
            "pyproject.toml",
            "line-length = true",
            "invalid value for 'line-length': expected an integer from 1 to 320",
        ),
        (
            "pyproject.toml",
            "max-file-size = true",
            "invalid value for 'max-file-size': expected a size in MiB",
        ),
        # setup.cfg's text that is no number.
        (
            "setup.cfg",
            "line-length = long",
            "invalid value for 'line-length': expected an integer from 1 to 320",
        ),
        (
            "setup.cfg",
            "max-file-size = big",
            "invalid value for 'max-file-size': expected a size in MiB",
        ),
        (
            "pyproject.toml",
            'families = [{ module = 5, members = ["A", "B"] }]',
            "invalid value for 'families[0].module': expected a dotted module name",
        ),
        # One member that is no class name is enough to refuse the family.
        (
            "pyproject.toml",
            'families = [{ module = "a", members = ["A", "not a name"] }]',
            "invalid value for 'families[0].members': expected two or more class "
            "names (dotted for another module)",
        ),
        (
            "pyproject.toml",
            'families = [{ module = "a", members = ["A", "plugin.2nd"] }]',
            "invalid value for 'families[0].members': expected two or more class "
            "names (dotted for another module)",
        ),
        (
            "pyproject.toml",
            'per-file-ignores = { "[z-a].py" = ["VSL001"] }',
            "invalid value for 'per-file-ignores.[z-a].py': not a glob: the range "
            "'z-a' runs backwards",
        ),
        (
            "pyproject.toml",
            'strict = "yes"',
            "invalid value for 'strict': expected true or false",
        ),
    ],
)
def test_a_bad_value_is_told_by_file_key_and_reason(tmp_path, name, text, reason):
    section = "[tool.vllm-spec-lint]" if name.endswith(".toml") else "[vllm-spec-lint]"
    (tmp_path / name).write_text(f"{section}\n{text}\n")
    out = run_cli("check", "--no-cache", ".", cwd=tmp_path)
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == f"error: {tmp_path / name}: {reason}\n"


@pytest.mark.parametrize(
    "text, where, reason",
    [
        ("line-length = \n", ":2:15", "Invalid value"),
        ("line-length = [\n", "", "Invalid value at the end of the file"),
        ("line-length = 88\nline-length = 89\n", ":3:17", "Cannot overwrite a value"),
    ],
)
def test_a_file_that_is_not_toml_is_told_where_and_why(tmp_path, text, where, reason):
    (tmp_path / "pyproject.toml").write_text(f"[tool.vllm-spec-lint]\n{text}")
    out = run_cli("check", "--no-cache", ".", cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr == (
        f"error: {tmp_path / 'pyproject.toml'}{where}: invalid TOML: {reason}\n"
    )


@pytest.mark.parametrize(
    "text, strict",
    [
        ("true", True),
        (" TRUE ", True),
        ("1", True),
        ("False", False),
        (" 0", False),
        ("false", False),
    ],
)
def test_setup_cfg_booleans_in_any_case_and_spacing(text, strict):
    assert parse_settings({"strict": text}, "setup.cfg", Path(".")).strict is strict


def test_a_toml_boolean_stays_what_it_is():
    assert parse_settings({"strict": True}, "p", Path(".")).strict is True
    assert parse_settings({"strict": False}, "p", Path(".")).strict is False
    with pytest.raises(ConfigError) as raised:
        parse_settings({"strict": 1}, "pyproject.toml", Path("."))
    assert str(raised.value) == (
        "pyproject.toml: invalid value for 'strict': expected true or false"
    )


def test_a_family_is_named_after_its_anchor_unless_named(tmp_path):
    config = parse_settings(
        {
            "families": [
                {"module": "vllm.x", "members": ["Anchor", "Companion"]},
                {"name": "pair", "module": "vllm.y", "members": ["A", "B"]},
            ]
        },
        "pyproject.toml",
        tmp_path,
    )
    assert [(f.name, f.module) for f in config.families] == [
        ("Anchor", "vllm.x"),
        ("pair", "vllm.y"),
    ]


def test_a_family_keeps_its_layout_property_and_its_members_modules(tmp_path):
    config = parse_settings(
        {
            "families": [
                {
                    "module": "vllm.x",
                    "members": ["Anchor", "plugin.specs.Companion"],
                    "layout-property": "uses_anchor_layout",
                },
                {"module": "vllm.y", "members": ["A", "B"]},
            ]
        },
        "pyproject.toml",
        tmp_path,
    )
    first, second = config.families
    assert (first.layout_property, first.member_modules) == (
        "uses_anchor_layout",
        ("vllm.x", "plugin.specs"),
    )
    assert (second.layout_property, second.member_modules) == ("", ())


@pytest.mark.parametrize("value", ["'uses layout'", "'2nd'", "3", "''", "'class'"])
def test_a_layout_property_that_is_no_identifier_is_refused(tmp_path, value):
    (tmp_path / "pyproject.toml").write_text(
        "[tool.vllm-spec-lint]\n"
        f'families = [{{ module = "a", members = ["A", "B"], '
        f"layout-property = {value} }}]\n"
    )
    out = run_cli("check", "--no-cache", ".", cwd=tmp_path)
    assert (out.returncode, out.stdout) == (2, "")
    assert out.stderr == (
        f"error: {tmp_path / 'pyproject.toml'}: invalid value for "
        "'families[0].layout-property': expected a Python identifier\n"
    )


@pytest.mark.parametrize("length", [1, 88, 320])
def test_line_length_takes_1_to_320_spelled_either_way(length):
    for key in ("line-length", "line_length"):
        config = parse_settings({key: length}, "pyproject.toml", Path("."))
        assert config.line_length == length


# -- reading a settings file, in this process --------------------------------


@pytest.mark.parametrize(
    "name, data, reason",
    [
        ("setup.cfg", b"select = VSL001\n", ":1: not a valid INI file: a setting "
         "before the first [section] header"),
        ("tox.ini", b"[vllm-spec-lint]\nselect\n", ":2: not a valid INI file: a line "
         "that is not a [section] header, a setting or a comment"),
        ("setup.cfg", b"[vllm-spec-lint]\nselect = A\nselect = B\n",
         ":3: not a valid INI file: 'select' given twice in [vllm-spec-lint]"),
        ("setup.cfg", b"[vllm-spec-lint]\n[vllm-spec-lint]\n",
         ":2: not a valid INI file: [vllm-spec-lint] given twice"),
        ("setup.cfg", b"[vllm-spec-lint]\nselect = \xff\n", ": cannot read: 'utf-8' "
         "codec can't decode byte 0xff in position 26: invalid start byte"),
        ("pyproject.toml", b"[tool.vllm-spec-lint]\nstrict = \xff\n",
         ": cannot read: 'utf-8' codec can't decode byte 0xff in position 31: "
         "invalid start byte"),
    ],
    ids=["no-header", "not-a-setting", "option-twice", "section-twice",
         "not-utf8-ini", "not-utf8-toml"],
)  # fmt: skip
def test_a_settings_file_that_cannot_be_read_is_told_where_and_why(
    tmp_path, name, data, reason
):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(ConfigError) as raised:
        read_config_file(path)
    assert str(raised.value) == f"{path}{reason}"


@pytest.mark.parametrize("name", ["loop.cfg", "loop.toml"])
def test_a_settings_file_the_system_cannot_open_is_told_in_its_words(tmp_path, name):
    path = tmp_path / name
    path.symlink_to(path)  # a link to itself
    with pytest.raises(ConfigError) as raised:
        read_config_file(path)
    assert str(raised.value) == (
        f"{path}: cannot read: Too many levels of symbolic links"
    )


@pytest.mark.parametrize("name", ["other.cfg", "other.toml"])
def test_a_missing_settings_file_is_not_found_whatever_its_kind(tmp_path, name):
    with pytest.raises(ConfigError) as raised:
        load_config(tmp_path, tmp_path / name)
    assert str(raised.value) == f"{tmp_path / name}: not found"


@pytest.mark.parametrize("name", ["conf.cfg", "conf.toml"])
def test_a_folder_given_as_settings_is_refused_whatever_its_name(tmp_path, name):
    (tmp_path / name).mkdir()
    with pytest.raises(ConfigError) as raised:
        load_config(tmp_path, tmp_path / name)
    assert str(raised.value) == f"{tmp_path / name}: is a folder, not a settings file"


@pytest.mark.parametrize(
    "name, text",
    [
        ("pyproject.toml", "[project]\nname = 'x'\n"),
        ("pyproject.toml", "[tool.ruff]\nline-length = 88\n"),
        ("setup.cfg", "[flake8]\nmax-line-length = 88\n"),
    ],
    ids=["toml-without-tool", "toml-other-tool", "ini-other-section"],
)
def test_a_file_without_the_tools_section_has_no_settings(tmp_path, name, text):
    (tmp_path / name).write_text(text, encoding="utf-8")
    assert read_config_file(tmp_path / name) is None


@pytest.mark.parametrize(
    "files, found",
    [
        ({"tox.ini": "[vllm-spec-lint]\nignore = VSL001\n"}, "tox.ini"),
        (
            {
                "setup.cfg": "[vllm-spec-lint]\nignore = VSL001\n",
                "tox.ini": "[vllm-spec-lint]\nignore = VSL002\n",
            },
            "setup.cfg",
        ),
        (
            {
                "pyproject.toml": "[tool.ruff]\nline-length = 88\n",
                "tox.ini": "[vllm-spec-lint]\nignore = VSL002\n",
            },
            "tox.ini",
        ),
        (
            {
                "pyproject.toml": "[tool.vllm-spec-lint]\nignore = ['VSL003']\n",
                "setup.cfg": "[vllm-spec-lint]\nignore = VSL001\n",
            },
            "pyproject.toml",
        ),
    ],
    ids=[
        "tox-ini",
        "setup-cfg-first",
        "pyproject-without-the-section",
        "pyproject-first",
    ],
)
def test_the_settings_file_found_from_a_file_below_it(tmp_path, files, found):
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("")
    assert find_config(tmp_path / "pkg" / "mod.py") == tmp_path / found


@pytest.mark.parametrize(
    "name, section",
    [("conf.toml", "[tool.vllm-spec-lint]"), ("conf.cfg", "[vllm-spec-lint]")],
)
def test_a_named_settings_file_without_the_section_says_which_it_lacks(
    tmp_path, name, section
):
    (tmp_path / name).write_text("", encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_config(tmp_path, tmp_path / name)
    assert str(raised.value) == f"{tmp_path / name}: has no {section} section"


def test_settings_files_are_read_as_utf8(tmp_path):
    (tmp_path / "setup.cfg").write_bytes(
        b"[vllm-spec-lint]\nexclude = caf\xc3\xa9.py\n"
    )
    (tmp_path / "pyproject.toml").write_bytes(
        b"[tool.vllm-spec-lint]\nexclude = ['caf\xc3\xa9.py']\n"
    )
    assert read_config_file(tmp_path / "setup.cfg") == {"exclude": "caf\u00e9.py"}
    assert read_config_file(tmp_path / "pyproject.toml") == {
        "exclude": ["caf\u00e9.py"]
    }


@pytest.mark.parametrize(
    "raw, reason",
    [
        ({"max-file-size": 0},
         "invalid value for 'max-file-size': expected a size in MiB (1 or more)"),
        ({"vllm-source": "  "}, "invalid value for 'vllm-source': expected a path"),
        ({"vllm-source": 3}, "invalid value for 'vllm-source': expected a path"),
        ({"colour": "auto"}, "unknown setting 'colour'"),
    ],
    ids=["size-0", "blank-path", "number-path", "unknown"],
)  # fmt: skip
def test_a_settings_table_error_names_the_file_key_and_reason(raw, reason):
    with pytest.raises(ConfigError) as raised:
        parse_settings(raw, "pyproject.toml", Path("/project"))
    assert str(raised.value) == f"pyproject.toml: {reason}"


def test_settings_are_read_under_either_spelling_and_keep_their_source():
    config = parse_settings(
        {
            "vllm_source": " ../vllm ",
            "respect-gitignore": False,
            "extend-select": ["VSL002"],
        },
        "setup.cfg",
        Path("/project"),
    )
    assert config.vllm_source == Path("/project/../vllm")
    assert config.respect_gitignore is False
    assert config.select == ("VSL", "VSL002")
    assert config.source == "setup.cfg"


def test_select_and_extend_select_add_up():
    config = parse_settings(
        {"select": ["VSL001"], "extend_select": ["VSL002"]}, "p", Path(".")
    )
    assert config.select == ("VSL001", "VSL002")


def test_ignore_and_extend_ignore_add_up():
    config = parse_settings(
        {"ignore": ["VSL001"], "extend-ignore": ["VSL002"]}, "p", Path(".")
    )
    assert config.ignore == ("VSL001", "VSL002")
