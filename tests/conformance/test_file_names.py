"""Operator names that cannot be file names (NUL, a line break, '/'): torchgen 2.13's gen.py
--per-operator-headers stops on them or writes files no #include names; `opgen check` gives a located error
(OPG140) and `opgen generate` refuses the input. A name that is only not an identifier stays a warning."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import reference

from opgen_lsp.cli import main

ENTRY = '- func: "{name}(Tensor self) -> Tensor"\n  variants: function\n  dispatch:\n    CPU: foo\n'


def _aten(tmp_path: Path, aten: Path, name_in_yaml: str) -> Path:
    source = tmp_path / "aten"
    (source / "native").mkdir(parents=True)
    (source / "templates").symlink_to(aten / "templates", target_is_directory=True)
    (source / "native" / "tags.yaml").write_bytes((aten / "native" / "tags.yaml").read_bytes())
    (source / "native" / "native_functions.yaml").write_text(ENTRY.format(name=name_in_yaml), encoding="utf-8")
    return source


def _torchgen(source: Path, out: Path) -> subprocess.CompletedProcess:
    return reference.run(["-m", "torchgen.gen", "-s", str(source), "-d", str(out), "--per-operator-headers",
                          "--aoti-install-dir", str(out / "aoti"), "--generate", "headers"],
                         cwd=out.parent, outputs=[out], timeout=300)


@pytest.mark.parametrize("name_in_yaml, name, column", [
    (r"a\0b", "a\0b", 9),  # escapes in a quoted scalar: the error is placed at the scalar
    (r"a\nb", "a\nb", 9),
    (r"a\rb", "a\rb", 9),
    ("a/b", "a/b", 11),
])
def test_a_name_that_cannot_be_a_file_name_is_an_error_where_gen_py_breaks(tmp_path: Path, aten: Path, capsys,
                                                                          name_in_yaml: str, name: str, column: int):
    source = _aten(tmp_path, aten, name_in_yaml)
    ran = _torchgen(source, tmp_path / "torchgen")
    ops = tmp_path / "torchgen" / "ops"
    if "\0" in name:
        assert ran.returncode != 0 and "embedded null byte" in ran.stderr
    else:  # gen.py exits 0, and writes the op's headers under a name no #include <ATen/ops/NAME.h> means
        assert ran.returncode == 0, ran.stderr[-2000:]
        assert (ops / f"{name}.h").is_file()
        assert "/" not in name or (ops / name.split("/")[0]).is_dir()

    assert main(["check", str(source / "native" / "native_functions.yaml")]) == 1
    out = capsys.readouterr().out
    assert f"native_functions.yaml:1:{column}: error: operator name {name!r} cannot be a file name" in out
    assert "[OPG140]" in out
    assert main(["generate", "-s", str(source), "-d", str(tmp_path / "opgen"), "--aoti-install-dir",
                 str(tmp_path / "opgen" / "aoti"), "--per-operator-headers", "--implemented-only"]) == 1
    assert "cannot be a file name" in capsys.readouterr().err
    assert not (tmp_path / "opgen").exists()


def test_a_name_outside_the_name_grammar_is_an_error_though_gen_py_writes_it(tmp_path: Path, aten: Path, capsys):
    """gen.py writes `ops/a b.h` and pastes `a b` into the C++ as it is: the C++ breaks, so opgen refuses the name
    before generating anything (the one name grammar, docs/cli.md), where torchgen's verdict is to accept it."""
    source = _aten(tmp_path, aten, "a b")
    assert _torchgen(source, tmp_path / "torchgen").returncode == 0
    assert (tmp_path / "torchgen" / "ops" / "a b.h").is_file()
    assert main(["check", str(source / "native" / "native_functions.yaml")]) == 1
    assert "error: operator name 'a b' has ' ', which no C++ identifier has" in capsys.readouterr().out
