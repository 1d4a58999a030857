"""`opgen check` on derivatives.yaml: found in a PyTorch-shaped tree or given, every output format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .test_check_cli import run

NATIVE = (
    "- func: foo(Tensor self, Tensor other, int dim=0) -> Tensor\n"
    "- func: bar(Tensor self) -> (Tensor values, Tensor indices)\n"
)
TAGS = "- tag: core\n  desc: core aten op\n"
GOOD = (
    "- name: foo(Tensor self, Tensor other, int dim=0) -> Tensor\n"
    "  self: grad * other\n"
    "  other: grad * self\n"
    "  result: self_t * other_p + self_p * other_t\n"
    "\n"
    "- name: bar(Tensor self) -> (Tensor values, Tensor indices)\n"
    "  self: grad.sum()\n"
    "  output_differentiability: [True, False]\n"
)
BAD = GOOD.replace("  other: grad * self\n", "  othr: grad * self\n").replace("bar(Tensor self)", "baz(Tensor self)")


def tree(root: Path, derivatives: str) -> Path:
    """A PyTorch-shaped checkout: tools/autograd/derivatives.yaml beside aten/src/ATen/native/."""
    native = root / "aten" / "src" / "ATen" / "native"
    native.mkdir(parents=True)
    (native / "native_functions.yaml").write_text(NATIVE)
    (native / "tags.yaml").write_text(TAGS)
    path = root / "tools" / "autograd" / "derivatives.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(derivatives)
    return path


def test_clean_tree_exits_0(tmp_path: Path, capsys) -> None:
    tree(tmp_path, GOOD)
    assert run(capsys, "check", str(tmp_path)) == (0, "no problems in 3 files, checked as torch 2.13 (default)\n", "")


def test_found_under_the_tree_and_resolved_against_its_native_functions(tmp_path: Path, capsys) -> None:
    path = tree(tmp_path, BAD)
    code, out, _ = run(capsys, "check", "-q", str(tmp_path))
    assert code == 1
    assert out == (
        f"{path}:3:3: error: 'othr' is neither an argument nor an output of foo; did you mean 'other'? [OPG711]\n"
        f"{path}:6:9: error: no schema of native_functions.yaml reads exactly 'baz(Tensor self) -> (Tensor values, "
        "Tensor indices)'; did you mean 'bar'? [OPG704]\n"
    )


def test_given_path_outside_a_tree_uses_native_functions_option(tmp_path: Path, capsys) -> None:
    (tmp_path / "native_functions.yaml").write_text(NATIVE)
    (tmp_path / "tags.yaml").write_text(TAGS)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    path = elsewhere / "my_derivatives.yaml"
    path.write_text(BAD)
    code, out, _ = run(capsys, "check", "-q", str(path), "--native-functions", str(tmp_path / "native_functions.yaml"))
    assert code == 1
    assert [line.split("; ")[-1] for line in out.splitlines()] == ["did you mean 'other'? [OPG711]",
                                                                    "did you mean 'bar'? [OPG704]"]


@pytest.mark.parametrize("fmt", ["json", "github", "sarif"])
def test_every_format(tmp_path: Path, capsys, fmt: str) -> None:
    path = tree(tmp_path, BAD)
    code, out, _ = run(capsys, "check", "--format", fmt, str(path))
    assert code == 1
    if fmt == "json":
        items = json.loads(out)
        assert [(i["code"], i["range"]["start"]) for i in items] == [
            ("OPG711", {"line": 2, "character": 2}), ("OPG704", {"line": 5, "character": 8})]
    elif fmt == "github":
        assert out.splitlines()[0].startswith(f"::error file={path},line=3,col=3,") and "title=OPG711" in out
    else:
        results = json.loads(out)["runs"][0]["results"]
        assert [r["ruleId"] for r in results] == ["OPG711", "OPG704"]


def test_deprecated_yaml_in_the_tree(tmp_path: Path, capsys) -> None:
    tree(tmp_path, GOOD)
    path = tmp_path / "tools" / "autograd" / "deprecated.yaml"
    path.write_text("- name: foo(Tensor other, Tensor self) -> Tensor\n  aten: foo(self, other)\n\n"
                    "- name: foo(Tensor self, int dim, Tensor other) -> Tensor\n  aten: foo(self, other, dim)\n\n"
                    "- name: foo(Tensor self, Tensor other) -> Tensor\n  aten: fooo(self, other)\n")
    code, out, _ = run(capsys, "check", "-q", str(tmp_path))
    assert code == 1
    assert out == (f"{path}:8:9: error: no native function with a Python binding is called 'fooo'; "
                   "did you mean 'foo'? [OPG743]\n")


def test_which_files_are_autograd_yamls() -> None:
    from opgen_lsp.analysis.check import DEPRECATED, DERIVATIVES, UNKNOWN, classify

    assert classify("/t/tools/autograd/derivatives.yaml", "") == DERIVATIVES
    assert classify("/t/my_formulas.yaml", "# formulas\n- name: add.Tensor(Tensor self) -> Tensor\n") == DERIVATIVES
    assert classify("/t/playbook.yaml", "- name: install a package\n") == UNKNOWN  # a list of named things
    assert classify("/t/tools/autograd/deprecated.yaml", "") == DEPRECATED
    assert classify("/t/docs/deprecated.yaml", "- name: add(Tensor self) -> Tensor\n") == UNKNOWN  # not PyTorch's


# ---- the torch release of the autograd yamls: that of their tree (version.txt), or --torch-version

NUMEL = "- func: numel(Tensor self) -> int\n  variants: method\n"
CALLS_NUMEL = "- name: numel(Tensor self) -> int\n  aten: numel(self)\n"


def release_tree(root: Path, version: str) -> Path:
    """A checkout of a release whose native_functions.yaml declares numel, and a deprecated.yaml calling it."""
    tree(root, GOOD)
    native = root / "aten" / "src" / "ATen" / "native" / "native_functions.yaml"
    native.write_text(NATIVE + NUMEL)
    (root / "version.txt").write_text(version + "\n")
    path = root / "tools" / "autograd" / "deprecated.yaml"
    path.write_text(CALLS_NUMEL)
    return path


@pytest.mark.parametrize("version, clean", [("2.11.0", True), ("2.12.0a0", False)])
def test_deprecated_yaml_follows_the_release_of_its_tree(tmp_path: Path, capsys, version: str, clean: bool) -> None:
    # torch 2.12 binds numel by hand (its Python binding generator skips it): deprecated.yaml cannot call it.
    path = release_tree(tmp_path, version)
    code, out, _ = run(capsys, "check", "-q", str(path))
    if clean:
        assert (code, out) == (0, "")
    else:
        assert code == 1 and "no Python binding" in out and "[OPG743]" in out


def test_torch_version_overrides_the_tree(tmp_path: Path, capsys) -> None:
    path = release_tree(tmp_path, "2.11.0")
    code, out, _ = run(capsys, "check", "-q", "--torch-version", "2.13", str(path))
    assert code == 1 and "torch 2.13's Python binding generator skips it" in out


def test_an_older_release_gets_one_error_naming_the_range(tmp_path: Path, capsys) -> None:
    path = release_tree(tmp_path, "1.12.0")
    derivatives = tmp_path / "tools" / "autograd" / "derivatives.yaml"
    derivatives.write_text(BAD)  # not checked: the release's rules are not known
    code, out, err = run(capsys, "check", "-q", str(path), str(derivatives))
    assert code == 1
    assert [line.split(" [")[-1] for line in out.splitlines()] == ["OPG951]", "OPG951]"]
    assert f"{path}:1:1: error: torch 1.12.0 (version.txt of {tmp_path}) is older" in out
    assert "pass --torch-version" in err


def test_a_newer_release_is_checked_as_the_newest_with_a_note(tmp_path: Path, capsys) -> None:
    path = release_tree(tmp_path, "2.16.0a0")
    code, out, _ = run(capsys, "check", str(path))
    assert code == 1 and "[OPG950]" in out and "[OPG743]" in out  # 2.15's skip list
