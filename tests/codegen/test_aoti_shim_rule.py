"""OPG960 without torch: a fallback op (aoti/fallback_ops.py beside the ATen folder) with a list of Device is an
error of `opgen check` at the argument, and `opgen generate` stops on it before writing anything; an op that gets
no shim (not listed, no kernel for a shim device, or an argument without a C form before it) is fine.
tests/conformance/test_generate_aoti_releases.py compares the same with gen.py 2.6, 2.7 and 2.13."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from opgen_lsp.cli import main

TAGS = "- tag: core\n  desc: core aten\n"
# Before 2.8 a set of names; from 2.8 a dict of versions (and from 2.9 the aten_shimified_ops too).
FALLBACK_OPS = {
    "2.7": 'inductor_fallback_ops = {"aten.foo.default"}\n',
    "2.13": 'inductor_fallback_ops = {"aten.foo.default": {}}\naten_shimified_ops = {}\n',
}


def _tree(tmp_path: Path, release: str, entry: str) -> Path:
    aten = tmp_path / "ATen"
    for folder in ("native", "aoti", "templates"):
        (aten / folder).mkdir(parents=True)
    (aten / "native" / "native_functions.yaml").write_text(entry)
    (aten / "native" / "tags.yaml").write_text(TAGS)
    (aten / "aoti" / "fallback_ops.py").write_text(FALLBACK_OPS[release])
    return aten


def _run(aten: Path, release: str, tmp_path: Path, capsys) -> tuple[list[dict], int, str]:
    native = aten / "native" / "native_functions.yaml"
    checked = main(["check", str(native), "--torch-version", release, "--format", "json"])
    found = json.loads(capsys.readouterr().out)
    assert checked == (1 if found else 0)
    generated = main(["generate", "-s", str(aten), "-d", str(tmp_path / "out"), "--torch-version", release,
                      "--implemented-only", "-j", "1"])
    return found, generated, capsys.readouterr().err


@pytest.mark.parametrize("release", sorted(FALLBACK_OPS))
@pytest.mark.parametrize("argument", ["Device[] devices", "Device?[] devices"])
def test_a_listed_op_with_a_device_list_is_an_error_at_the_argument(release: str, argument: str, tmp_path: Path,
                                                                    capsys) -> None:
    entry = f"- func: foo(Tensor self, {argument}) -> Tensor\n  dispatch:\n    CPU: foo\n"
    aten = _tree(tmp_path, release, entry)
    found, generated, err = _run(aten, release, tmp_path, capsys)
    col = entry.index(argument)
    assert [(d["code"], d["range"]["start"]["line"], d["range"]["start"]["character"]) for d in found] == [
        ("OPG960", 0, col)]
    assert "'aten.foo.default' is an AOTI fallback op" in found[0]["message"]
    assert "argument 'devices'" in found[0]["message"]
    assert generated == 1 and f"native_functions.yaml:1:{col + 1}: error: " in err and "Traceback" not in err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.cpp"))


@pytest.mark.parametrize("release", sorted(FALLBACK_OPS))
@pytest.mark.parametrize("entry", [
    # not listed
    "- func: bar(Tensor self, Device[] devices) -> Tensor\n  dispatch:\n    CPU: bar\n",
    # no kernel of a device that gets shims (CPU, CUDA, a composite one)
    "- func: foo(Tensor self, Device[] devices) -> Tensor\n  dispatch:\n    MPS: foo\n",
    # an argument without a C form first: the op gets no shim
    "- func: foo(Tensor self, Stream s, Device[] devices) -> Tensor\n  dispatch:\n    CPU: foo\n",
], ids=["not-listed", "no-shim-device", "no-c-form-first"])
def test_an_op_without_a_shim_is_fine(release: str, entry: str, tmp_path: Path, capsys) -> None:
    aten = _tree(tmp_path, release, entry)
    found, _, err = _run(aten, release, tmp_path, capsys)
    assert found == []
    assert "OPG960" not in err and "Traceback" not in err
