"""codegen/runs.py's checks of a run's outputs on their own: which outputs keep their digest (racy ones)."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pytest

from opgen_lsp.codegen import runs


def test_an_output_with_whole_second_times_keeps_its_digest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a filesystem of whole-second timestamps a same-size edit within the second keeps every stat field: an
    output whose times have no sub-second part has its bytes checked, however old it is."""
    path = tmp_path / "Functions.h"
    path.write_bytes(b"#pragma once\n")
    expected = hashlib.sha256(path.read_bytes()).hexdigest()
    now = time.time_ns
    monkeypatch.setattr(runs.time, "time_ns", lambda: now() + 3600 * 10**9)  # an hour on: not racy by age
    fine = runs.verified(str(path), expected)
    assert fine is not None and fine.digest == ""  # nanosecond times, an hour old: its stat is enough
    whole = (int(time.time()) - 10) * 10**9
    os.utime(path, ns=(whole, whole))
    coarse = runs.verified(str(path), expected)
    assert coarse is not None and coarse.digest == expected
    # and then a same-size edit that keeps the whole-second times is found from the bytes
    path.write_bytes(b"#pragma twice")
    os.utime(path, ns=(whole, whole))
    assert not runs._unchanged(runs.Output(coarse.path, runs._stat_of(str(path)) or (), coarse.digest))


def test_an_output_not_as_the_run_left_it_is_not_verified(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Other bytes, a link or a FIFO in its place, no file, or a file written while it is read back: not the run's
    output (None), and never a hang."""
    path = tmp_path / "Functions.h"
    path.write_bytes(b"#pragma once\n" * 1000)
    expected = hashlib.sha256(path.read_bytes()).hexdigest()
    good = runs.verified(str(path), expected)
    assert good is not None and good.stat == runs._stat_of(str(path))
    assert runs.verified(str(path), hashlib.sha256(b"other").hexdigest()) is None
    (tmp_path / "link.h").symlink_to(path)
    assert runs.verified(str(tmp_path / "link.h"), expected) is None
    os.mkfifo(tmp_path / "fifo.h")
    assert runs.verified(str(tmp_path / "fifo.h"), expected) is None
    assert runs.verified(str(tmp_path / "missing.h"), expected) is None
    (tmp_path / "empty.h").write_bytes(b"")
    assert runs.verified(str(tmp_path / "empty.h"), hashlib.sha256(b"").hexdigest()) is not None
    read_at_most = runs.read_at_most

    def read_then_written(fd: int, limit: int) -> bytes:
        data = read_at_most(fd, limit)
        with open(path, "ab") as f:  # (the same bytes kept, one more line: the stat after the read differs)
            f.write(b"// edited\n")
        return data
    monkeypatch.setattr(runs, "read_at_most", read_then_written)
    assert runs.verified(str(path), expected) is None
