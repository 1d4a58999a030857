"""`opgen bc --base REF FILE`: a git revision or a torch release as the base, the allow-list, the exit status."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from release_files import release_native

from opgen_lsp.cli import main
from opgen_lsp.index.base_text import git_show

BASE = """\
- func: f(Tensor self, int dim) -> Tensor
  variants: function

- func: g(Tensor self) -> Tensor

- func: h(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
"""
# f gains a defaulted argument (compatible both ways), g a required one (breaks both), h is gone.
CURRENT = """\
- func: f(Tensor self, int dim, bool keepdim=False) -> Tensor
  variants: function

- func: g(Tensor self, Tensor other) -> Tensor
"""

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(folder: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True,
                   capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    folder = tmp_path / "aten"
    folder.mkdir()
    (folder / "native_functions.yaml").write_text(BASE)
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "base")
    (folder / "native_functions.yaml").write_text(CURRENT)
    return folder / "native_functions.yaml"


@needs_git
def test_against_git_head(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bc", "--base", "HEAD", str(repo), "--format", "json"]) == 1
    found = [(d["code"], d["range"]["start"]["line"], d["message"].split(" ", 1)[0]) for d in json.loads(capsys.readouterr().out)]
    assert found == [("OPG209", 3, "aten::g"), ("OPG210", 3, "aten::g"), ("OPG209", 3, "aten::h"), ("OPG210", 3, "aten::h")]


@needs_git
def test_the_allow_list_skips_what_it_names(repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    allow = tmp_path / "allow.py"
    allow.write_text('ALLOW_LIST = [\n    ("aten::g", datetime.date(2999, 1, 1)),\n    ("aten::h", datetime.date(2020, 1, 1)),\n]\n')
    assert main(["bc", "--base", "HEAD", str(repo), "--allow-list", str(allow)]) == 1
    out = capsys.readouterr()
    assert "aten::g" not in out.out and "aten::h was removed" in out.out and "1 allow-listed" in out.err
    allow.write_text('("aten::[gh]", datetime.date(2999, 1, 1))\n')
    assert main(["bc", "--base", "HEAD", str(repo), "--allow-list", str(allow)]) == 0


def test_no_repository_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "native_functions.yaml"
    path.write_text(CURRENT)
    assert main(["bc", "--base", "HEAD", str(path)]) == 2
    assert "no base to compare with" in capsys.readouterr().err


@pytest.mark.versions
def test_against_a_release(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """2.9.1 -> 2.10.0 made tril/triu's diagonal a SymInt: a change c10 accepts both ways (same TorchScript type)."""
    release_native("2.9.1")
    path = tmp_path / "native_functions.yaml"
    text = release_native("2.10.0").read_text(encoding="utf-8")
    path.write_text(text.replace("- func: tril(Tensor self, SymInt diagonal=0) -> Tensor",
                                 "- func: tril(Tensor self, SymInt diagonal=1) -> Tensor"))
    assert main(["bc", "--base", "2.9.1", str(path)]) == 1
    out, err = capsys.readouterr()
    line = next(i for i, t in enumerate(path.read_text().splitlines()) if t.startswith("- func: tril(")) + 1
    assert out.splitlines() == [
        f"{path}:{line}:9: warning: aten::tril changed since 2.9.1 and breaks backward compatibility: 'diagonal' changed "
        "its default (was: tril(Tensor self, int diagonal=0) -> Tensor) [OPG209]",
        f"{path}:{line}:9: information: aten::tril changed since 2.9.1 and breaks forward compatibility: 'diagonal' "
        "changed its default [OPG210]"]
    assert "since torch 2.9.1: 1 break backward compatibility, 1 break forward" in err


def test_a_revision_is_never_an_option_to_git(tmp_path: Path) -> None:
    shown = git_show(str(tmp_path / "native_functions.yaml"), "--output=" + str(tmp_path / "x"))
    assert shown.text is None and "not a revision" in shown.origin and not (tmp_path / "x").exists()


def test_a_release_not_at_hand_says_how_to_fetch_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "native_functions.yaml"
    path.write_text(CURRENT)
    assert main(["bc", "--base", "1.99.0", str(path)]) == 2
    assert "tools/torchgen_release.py 1.99.0" in capsys.readouterr().err
