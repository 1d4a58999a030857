"""`opgen check`, `explain` and `generate` read a file as torchgen does: a byte order mark before the first
entry, and lines ended by '\\r\\n' or a lone '\\r', give what the plain text gives. (The server: tests/lsp.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from opgen_lsp.cli import main

NATIVE = ("- func: abs(Tensor self) -> Tensor\n  variants: function, method\n  dispatch:\n    CPU: abs\n\n"
          "- func: abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n    CPU: abs_out\n")
BAD = NATIVE + "\n- func: neg(Tensor self) -> Tensor\n  dispatch:\n    CPUU: neg\n"
TAGS = "- tag: core\n  desc: core aten\n"
VARIANTS = {"bom": lambda t: "\ufeff" + t, "cr": lambda t: t.replace("\n", "\r"),
            "crlf": lambda t: t.replace("\n", "\r\n"), "bom-cr": lambda t: "\ufeff" + t.replace("\n", "\r")}


def _folder(root: Path, text: str) -> Path:
    (root / "native").mkdir(parents=True)
    (root / "native" / "native_functions.yaml").write_bytes(text.encode("utf-8"))
    (root / "native" / "tags.yaml").write_bytes(TAGS.encode("utf-8"))
    return root / "native" / "native_functions.yaml"


def _check(path: Path, capsys) -> tuple[int, list]:
    code = main(["check", str(path), "--format", "json"])
    return code, [(d["code"], d["range"]) for d in json.loads(capsys.readouterr().out)]


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_check_gives_what_the_plain_text_gives(variant: str, tmp_path: Path, capsys) -> None:
    plain = _check(_folder(tmp_path / "plain", BAD), capsys)
    assert plain[0] == 1 and [c for c, _ in plain[1]] == ["OPG104"]
    assert _check(_folder(tmp_path / variant, VARIANTS[variant](BAD)), capsys) == plain
    assert _check(_folder(tmp_path / f"{variant}-clean", VARIANTS[variant](NATIVE)), capsys) == (0, [])


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_explain_reads_it(variant: str, tmp_path: Path, capsys) -> None:
    path = _folder(tmp_path, VARIANTS[variant](NATIVE))
    assert main(["explain", "abs", "--native-functions", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["op"] == "abs"


@pytest.mark.parametrize("variant", ["bom", "cr"])
def test_generate_writes_what_the_plain_text_gives(variant: str, aten: Path, tmp_path: Path) -> None:
    trees = []
    for name, text in (("plain", NATIVE), (variant, VARIANTS[variant](NATIVE))):
        path = _folder(tmp_path / name, text)
        (path.parent.parent / "templates").symlink_to(aten / "templates")
        out = tmp_path / name / "out"
        assert main(["generate", "-s", str(path.parent.parent), "-d", str(out / "aten"), "--aoti-install-dir",
                     str(out / "aoti"), "--generate", "headers", "-j", "1"]) == 0
        trees.append({p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()})
    assert len(trees[0]) > 20 and trees[0] == trees[1]
