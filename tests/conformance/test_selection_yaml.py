"""Operator selection yamls (gen.py's --op-selection-yaml-path): `opgen check` takes them by content, under any
name, and accepts and refuses exactly what torchgen 2.13's SelectiveBuilder does, each error at its place; what an
accepted one selects is what SelectiveBuilder selects; `opgen generate` refuses a bad one with its line, exit 1."""

from __future__ import annotations

from pathlib import Path

import pytest

from opgen_lsp.analysis.check import SELECTION, check_paths, classify
from opgen_lsp.cli import main
from opgen_lsp.model.selection import read_selection

pytestmark = pytest.mark.conformance

ACCEPTED = {
    "operators": "operators:\n  aten::add.Tensor:\n    is_root_operator: true\n    include_all_overloads: false\n"
                 "  aten::mul: {}\n",
    "all": "include_all_operators: true\n",
    "no-operators": "operators: {}\n",
    "iterables": "custom_classes: abc\nbuild_features: []\nkernel_metadata:\n  k: [Float, Int]\n  j: Float\n",
    "key-twice": "include_all_operators: 1\ninclude_all_operators: true\n",
    "comment-first": "# a selection\ninclude_all_operators: false\noperators:\n  aten::add: {name: aten::add}\n",
    "debug-info": "debug_info: [a, 1]\noperators:\n  aten::add:\n    debug_info: [x]\n",
    "overloads-only": "operators:\n  aten::add.out:\n    include_all_overloads: true\n  aten::sub:\n"
                      "    include_all_overloads: false\n",
}
# name -> (text, where the first error starts)
REFUSED = {
    "unknown-key": ("include_all_operators: true\nextra: 1\n", "extra"),
    "not-a-bool": ("include_all_operators: yes please\n", "yes please"),
    "operators-a-list": ("operators: [aten::add]\n", "[aten::add]"),
    "operators-null": ("operators:\ninclude_all_operators: true\n", None),
    "operator-not-a-mapping": ("operators:\n  aten::add: true\n", "true"),
    "operator-unknown-key": ("operators:\n  aten::add:\n    is_root: true\n", "is_root"),
    "operator-name-mismatch": ("operators:\n  aten::add:\n    name: aten::mul\n", "aten::mul"),
    "operator-not-a-bool": ("operators:\n  aten::add:\n    include_all_overloads: 0\n", "0"),
    "operator-debug-info": ("operators:\n  aten::add:\n    debug_info: x\n", "x\n"),
    "debug-info": ("debug_info: x\n", "x\n"),
    "kernel-metadata-a-list": ("kernel_metadata: [a]\n", "[a]"),
    "kernel-metadata-value": ("kernel_metadata:\n  k: 3\n", "3"),
    "custom-classes-null": ("custom_classes:\nbuild_features: []\n", None),
    "custom-classes-int": ("custom_classes: 3\n", "3"),
    "custom-classes-unhashable": ("custom_classes: [[a]]\n", "[a]]"),
    "et-kernel-metadata": ("et_kernel_metadata: 1\n", "1"),
    "non-op-selectives": ("include_all_non_op_selectives: null\n", "null"),
    "yaml-syntax": ("operators: {aten::add: [}\n", None),
    "python-tag": ("include_all_operators: !!python/name:os.system true\n", "!!python"),
    "second-error-too": ("include_all_operators: true\noperators:\n  aten::add:\n    name: x\n  aten::mul: 1\n", "x\n"),
}
NAMES = ("aten::add", "aten::add.Tensor", "aten::add.out", "aten::mul", "aten::mul.out", "aten::sub", "aten::sub.Tensor",
         "aten::div")


def _torchgen(text: str):
    from torchgen.selective_build.selector import SelectiveBuilder

    try:
        return SelectiveBuilder.from_yaml_str(text)
    except Exception:  # noqa: BLE001  (torchgen refuses with Exception, AssertionError, AttributeError, TypeError...)
        return None


def _checked(tmp_path: Path, text: str) -> list:
    path = tmp_path / "any_name.yaml"  # not a name opgen knows: recognised by content
    path.write_text(text, encoding="utf-8")
    assert classify(str(path), text) == SELECTION
    return check_paths([str(path)]).items


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted_as_torchgen_accepts_and_selecting_the_same(name: str, tmp_path: Path) -> None:
    text = ACCEPTED[name]
    builder = _torchgen(text)
    assert builder is not None
    assert [i for i in _checked(tmp_path, text) if i.diagnostic.is_error] == []
    selection, _ = read_selection(text)
    assert selection is not None
    assert [selection.is_operator_selected(n) for n in NAMES] == [builder.is_operator_selected(n) for n in NAMES]


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_as_torchgen_refuses_at_the_place(name: str, tmp_path: Path) -> None:
    text, marker = REFUSED[name]
    assert _torchgen(text) is None
    errors = [i.diagnostic for i in _checked(tmp_path, text) if i.diagnostic.is_error]
    assert errors
    if marker is not None:
        offset = text.index(marker)
        at = (text.count("\n", 0, offset), offset - (text.rfind("\n", 0, offset) + 1))
        assert (errors[0].span.start_line, errors[0].span.start_col) == at, errors[0].message


def test_every_error_is_reported_at_once(tmp_path: Path) -> None:
    codes = sorted(i.diagnostic.code for i in _checked(tmp_path, REFUSED["second-error-too"][0]))
    assert codes == ["OPG804", "OPG805"]


def test_a_key_given_twice_is_a_warning(tmp_path: Path) -> None:
    assert [(i.diagnostic.code, i.diagnostic.span.start_line) for i in _checked(tmp_path, ACCEPTED["key-twice"])] \
        == [("OPG806", 0)]


def test_check_exit_statuses(tmp_path: Path, capsys) -> None:
    good, bad = tmp_path / "sel.yaml", tmp_path / "bad.txt"
    good.write_text(ACCEPTED["operators"], encoding="utf-8")
    bad.write_text(REFUSED["operator-name-mismatch"][0], encoding="utf-8")
    assert main(["check", str(good)]) == 0
    assert main(["check", str(bad)]) == 1
    assert f"{bad}:3:11: error: " in capsys.readouterr().out


@pytest.mark.parametrize("name", ["operator-name-mismatch", "yaml-syntax"])
def test_generate_refuses_a_bad_one_with_its_line(name: str, aten: Path, tmp_path: Path, capsys) -> None:
    path = tmp_path / "selection.yaml"
    path.write_text(REFUSED[name][0], encoding="utf-8")
    code = main(["generate", "-s", str(aten), "-d", str(tmp_path / "out"), "--aoti-install-dir", str(tmp_path / "aoti"),
                 "--op-selection-yaml-path", str(path), "-j", "1"])
    err = capsys.readouterr().err
    line = 3 if name == "operator-name-mismatch" else 1
    assert code == 1 and f"{path}:{line}:" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.cpp"))
