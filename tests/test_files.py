"""Writing user files and reports, in this process: where a fix run can be
stopped, and what a written report looks like on disk."""

from __future__ import annotations

import os
import stat

import pytest

from vllm_spec_lint.edges import files
from vllm_spec_lint.edges.files import (
    ReportNotWritten,
    WriteRefused,
    write_atomically,
    write_report,
)


class Paused(Exception):
    pass


def _pause_instead_of_waiting():
    raise Paused


@pytest.mark.parametrize(
    ("phase", "content"),
    [("read", b"x = 1\n"), ("temp-written", b"x = 1\n"), ("replaced", b"x = 2\n")],
)
def test_a_write_stops_where_the_test_hook_says(tmp_path, monkeypatch, phase, content):
    # What tests/test_reliability.py kills a fix run at, one phase each.
    target = tmp_path / "a.py"
    target.write_bytes(b"x = 1\n")
    marker = tmp_path / "paused:at"  # the marker's path may hold a colon
    monkeypatch.setenv("VSL_TEST_PAUSE", f"{phase}:a.py:{marker}")
    seen = []

    def pause():
        seen.append({p.name for p in tmp_path.iterdir()})
        raise Paused

    monkeypatch.setattr(files, "_wait_to_be_killed", pause)
    with pytest.raises(Paused):
        write_atomically(target, b"x = 1\n", b"x = 2\n")
    assert marker.exists()
    assert target.read_bytes() == content
    if phase == "temp-written":  # beside the file, named after it
        (temporary,) = seen[0] - {"a.py", "paused:at"}
        assert temporary.startswith(".a.py.") and temporary.endswith(".vsl-tmp")
    # An exception (unlike the kill tests/test_reliability.py sends) lets the
    # temporary file be removed.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py", "paused:at"]


def test_a_write_of_another_file_does_not_stop(tmp_path, monkeypatch):
    target = tmp_path / "a.py"
    target.write_bytes(b"x = 1\n")
    monkeypatch.setenv("VSL_TEST_PAUSE", f"read:b.py:{tmp_path / 'paused'}")
    monkeypatch.setattr(files, "_wait_to_be_killed", _pause_instead_of_waiting)
    write_atomically(target, b"x = 1\n", b"x = 2\n")
    assert target.read_bytes() == b"x = 2\n"
    assert not (tmp_path / "paused").exists()


def test_a_file_changed_since_it_was_read_is_left_alone(tmp_path):
    target = tmp_path / "a.py"
    target.write_bytes(b"x = 3\n")
    with pytest.raises(WriteRefused) as caught:
        write_atomically(target, b"x = 1\n", b"x = 2\n")
    assert str(caught.value) == "the file changed on disk since it was read"
    assert target.read_bytes() == b"x = 3\n"


def test_a_file_changed_while_the_new_content_was_written_is_left_alone(
    tmp_path, monkeypatch
):
    target = tmp_path / "a.py"
    target.write_bytes(b"x = 1\n")
    reads = []
    read_source = files.read_source

    def read_then_edit(path):
        # Another program saves the file between our two reads.
        reads.append(path)
        if len(reads) == 2:
            target.write_bytes(b"x = 3\n")
        return read_source(path)

    monkeypatch.setattr(files, "read_source", read_then_edit)
    with pytest.raises(WriteRefused) as caught:
        write_atomically(target, b"x = 1\n", b"x = 2\n")
    assert str(caught.value) == "the file changed on disk since it was read"
    assert target.read_bytes() == b"x = 3\n"
    assert len(reads) == 2
    assert [p.name for p in tmp_path.iterdir()] == ["a.py"]  # no temporary left


@pytest.fixture
def umask_022():
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def test_a_report_gets_the_mode_a_new_file_gets(tmp_path, umask_022):
    report = tmp_path / "report.txt"
    write_report(report, "VSL001\n")
    assert stat.S_IMODE(report.stat().st_mode) == 0o644


def test_a_report_error_without_an_errno_text_still_says_why(tmp_path, monkeypatch):
    def refuse(**_):
        raise OSError("quota exceeded on the share")

    monkeypatch.setattr("tempfile.mkstemp", refuse)
    with pytest.raises(ReportNotWritten) as caught:
        write_report(tmp_path / "report.txt", "x")
    assert str(caught.value) == (
        f"{tmp_path / 'report.txt'}: cannot write the report: "
        "quota exceeded on the share"
    )


def test_a_file_that_grew_since_its_size_was_taken_is_read_whole(tmp_path, monkeypatch):
    """Read up to the size fstat gave plus one byte; more means it grew, and
    the rest is read in chunks (here three of 1 MiB and a part)."""
    data = bytes(range(256)) * (13 * 2**12)  # 3.25 MiB
    path = tmp_path / "grown.py"
    path.write_bytes(data)
    real_fstat = os.fstat

    def fstat_before_it_grew(fd):
        info = real_fstat(fd)
        return os.stat_result((*info[:6], 100, *info[7:10]))

    monkeypatch.setattr(files.os, "fstat", fstat_before_it_grew)
    assert files.read_source(path) == data


def test_a_pipe_is_refused_not_waited_on(tmp_path):
    """Opened without waiting for a writer; in a thread, so that a reader
    that does wait fails this test instead of hanging the suite."""
    import threading

    pipe = tmp_path / "pipe.py"
    os.mkfifo(pipe)
    raised = []

    def read():
        try:
            files.read_source(pipe)
        except OSError as e:
            raised.append(str(e))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=60)
    assert raised == [f"not a regular file: {pipe}"]


@pytest.mark.parametrize(
    ("path", "folder", "within"),
    [
        ("/a/b", "/a/b", True),
        ("/a/b/c.py", "/a/b", True),
        ("/a/b/c.py", "/a/b/", True),
        ("/a/b/..x/c.py", "/a/b", True),  # a name starting with ".."
        ("/a/bc/d.py", "/a/b", False),  # a prefix of the name only
        ("/a/c.py", "/a/b", False),
        ("/a", "/a/b", False),
        ("/a/b.py", "/", True),  # everything is within the root
    ],
)
def test_a_path_is_within_a_folder_by_whole_names(path, folder, within):
    assert files.is_within(path, folder) is within


@pytest.mark.parametrize(
    ("path", "tail", "ends"),
    [
        ("vllm/v1/kv.py", "vllm/v1/kv.py", True),  # the whole path
        ("/src/vllm/v1/kv.py", "vllm/v1/kv.py", True),
        ("/src/myvllm/v1/kv.py", "vllm/v1/kv.py", False),  # a name's end only
        ("/src/another.py", "other.py", False),
        ("/src/vllm/v1/kv.py", "v1/kv.py", True),
    ],
)
def test_a_path_ends_with_a_tail_of_whole_names(path, tail, ends):
    assert files.ends_with_path(path, tail) is ends


def test_a_whole_write_goes_through_a_temporary_file_named_after_it(
    tmp_path, replaced_files
):
    """Beside the file (``os.replace`` cannot cross file systems), in folders
    made for it, named as every write of ours is: a leftover says whose."""
    replaced = replaced_files
    target = tmp_path / "new" / "folder" / "code.marshal"
    files.replace_whole(target, b"data")
    [(temporary, to)] = replaced
    assert (to, temporary.parent, target.read_bytes()) == (
        target,
        target.parent,
        b"data",
    )
    assert temporary.name.startswith(".code.marshal.")
    assert temporary.name.endswith(".vsl-tmp")
    assert sorted(p.name for p in target.parent.iterdir()) == ["code.marshal"]


@pytest.mark.parametrize(
    "source, expected",
    [
        ("x = 'é'\n".encode(), ("x = 'é'\n", "utf-8")),
        (
            "# -*- coding: latin-1 -*-\nx = 'é'\n".encode("latin-1"),
            ("# -*- coding: latin-1 -*-\nx = 'é'\n", "iso-8859-1"),
        ),
        (  # the cookie on the second line, under a shebang
            "#!/usr/bin/env python\n# coding=latin-1\nx = 'é'\n".encode("latin-1"),
            ("#!/usr/bin/env python\n# coding=latin-1\nx = 'é'\n", "iso-8859-1"),
        ),
        # A cookie on the third line is none: the bytes are not UTF-8.
        ("\n\n# coding: latin-1\nx = 'é'\n".encode("latin-1"), UnicodeDecodeError),
        ("\ufeffx = 'é'\n".encode(), ("x = 'é'\n", "utf-8-sig")),
        ("x = 'é'\n".encode("latin-1"), UnicodeDecodeError),
        ("# coding: nonsense\nx = 1\n".encode(), SyntaxError),
        (
            "# encoding is utf-8 here\nx = 'é'\n".encode(),
            ("# encoding is utf-8 here\nx = 'é'\n", "utf-8"),
        ),
        (b"x = 1", ("x = 1", "utf-8")),
        (b"", ("", "utf-8")),
    ],
)
def test_a_source_is_decoded_as_python_reads_a_source_file(source, expected):
    from vllm_spec_lint.edges.files import decode_source

    if isinstance(expected, type):
        with pytest.raises(expected):
            decode_source(source)
    else:
        assert decode_source(source) == expected
