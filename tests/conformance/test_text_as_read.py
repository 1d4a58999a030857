"""torchgen 2.13 reads the real native_functions.yaml behind a UTF-8 byte order mark (3,101 functions); so does
opgen, to the same functions."""

from __future__ import annotations

from pathlib import Path

import pytest
import reference

from opgen_lsp.cli import main
from opgen_lsp.index.inputs import load_native
from opgen_lsp.releases import DEFAULT

pytestmark = pytest.mark.conformance

_COUNT = ("import sys; from torchgen.gen import parse_native_yaml; "
          "print(len(parse_native_yaml(sys.argv[1], sys.argv[2]).native_functions))")


@pytest.mark.slow  # (over a second: the quick loop keeps inside its 2 minutes)
def test_a_byte_order_mark_before_the_real_file(aten: Path, tmp_path: Path, capsys) -> None:
    real = aten / "native" / "native_functions.yaml"
    marked = tmp_path / "native_functions.yaml"
    marked.write_bytes(b"\xef\xbb\xbf" + real.read_bytes())
    (tmp_path / "tags.yaml").write_bytes((aten / "native" / "tags.yaml").read_bytes())
    ran = reference.run(["-c", _COUNT, str(marked), str(tmp_path / "tags.yaml")], cwd=tmp_path, check=True)
    assert ran.stdout.strip() == "3101"
    assert main(["check", str(marked)]) == 0
    assert capsys.readouterr().out == "no problems in 1 file, checked as torch 2.13 (from its content)\n"
    ours = load_native(str(marked), None, release=DEFAULT).snapshot.functions
    plain = load_native(str(real), None, release=DEFAULT).snapshot.functions
    assert len(ours.ops) == 3101
    assert [op.function.func for op in ours.ops] == [op.function.func for op in plain.ops]
