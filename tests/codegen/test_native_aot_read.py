"""Native-AOT declarations (torch/_native/ops/<op>/aot.py) read without running them, as gen.py 2.15's loader
validates them: what the syntax settles is read or refused; what only running the module tells is left unread."""

from __future__ import annotations

from pathlib import Path

import pytest

from opgen_lsp.model.native_aot import NONE, NativeAotDeclaration, read_native_aot

# A declaration shaped as torch 2.15's topk/aot.py is (its constants, the functions' arities, a grid display).
DECLARATION = '''"""Native-AOT declaration."""

ATEN_OP = "topk"
DISPATCH_KEY = "CUDA"
KERNEL_MODULE = "kernels.py"
ARCHS = ("sm_90", "sm_100a")
_KS = (64, 128)


def _helper(k):
    return k * 4


def kernel_precompile_grid():
    return [
        *({"kernel": "radix", "K": k} for k in _KS),
        {"kernel": "register", "K": 16},
    ]


def covered_axes(self, k, dim=-1):
    import torch
    return {"K": k}


def cpp_covers():
    return "return true;"


def cpp_dispatch(spec):
    return f"k == {spec['K']}"


def cpp_launch(spec, launch_fn):
    return f"{launch_fn}(self);"
'''


def _ops(tmp_path: Path, **modules: str) -> Path:
    for name, text in modules.items():
        (tmp_path / "ops" / name).mkdir(parents=True)
        (tmp_path / "ops" / name / "aot.py").write_text(text)
    return tmp_path / "ops"


def test_a_declaration_is_read(tmp_path: Path) -> None:
    folder = _ops(tmp_path, topk=DECLARATION, gt=DECLARATION.replace('"topk"', '"gt.Tensor"') + "UNCONDITIONAL = True\n")
    (folder / "norm").mkdir()  # an op folder without aot.py: skipped
    read = read_native_aot(str(folder))
    assert read.unread == "" and read.errors == ()
    assert read.declarations == (NativeAotDeclaration("gt.Tensor", "CUDA", True), NativeAotDeclaration("topk", "CUDA"))
    assert read.declarations[0].stub_name == "gt_Tensor_aot_stub"
    assert read.declarations[1].path == str(folder / "topk" / "aot.py")


def test_no_folder_and_an_empty_name_declare_nothing(tmp_path: Path) -> None:
    assert read_native_aot("") == NONE
    assert read_native_aot(str(tmp_path / "absent")) == NONE


@pytest.mark.parametrize("edit,why", [
    (('ATEN_OP = "topk"', 'ATEN_OP = "to" + "pk"'), "ATEN_OP is not a literal"),
    (('ATEN_OP = "topk"', 'from names import ATEN_OP'), "ATEN_OP is not a literal"),
    (('_KS = (64, 128)', 'from helpers import *'), "star import"),
    (('_KS = (64, 128)', 'globals()["ATEN_OP"] = "topk"'), "may bind names"),
    (('def kernel_precompile_grid():\n    return [', 'def kernel_precompile_grid():\n    grid = []\n    return ['),
     "computes its grid"),
    (('def cpp_covers', 'def declarations():\n    return []\n\n\ndef cpp_covers'), "family module"),
])
def test_what_only_running_it_tells_is_left_unread(tmp_path: Path, edit: tuple[str, str], why: str) -> None:
    read = read_native_aot(str(_ops(tmp_path, topk=DECLARATION.replace(*edit))))
    assert read.declarations == () and read.errors == ()
    assert why in read.unread and str(tmp_path / "ops" / "topk" / "aot.py") in read.unread


@pytest.mark.parametrize("edit,message,line", [
    (('KERNEL_MODULE = "kernels.py"\n', ''), "missing or non-str constant KERNEL_MODULE", 1),
    (('DISPATCH_KEY = "CUDA"', 'DISPATCH_KEY = 3'), "missing or non-str constant DISPATCH_KEY", 4),
    (('DISPATCH_KEY = "CUDA"', 'DISPATCH_KEY = "CUDAA"'), "unknown dispatch key 'CUDAA'", 4),
    (('def cpp_launch(spec, launch_fn)', 'def cpp_launch(spec)'),
     "cpp_launch must be per-point (spec-taking), expected 2 positional parameter(s), got 1", 34),
    (('def cpp_covers():', 'def cpp_covers(spec):'),
     "cpp_covers must be per-op (no-arg), expected 0 positional parameter(s), got 1", 26),
    (('def covered_axes', 'def not_covered_axes'), "missing required function covered_axes()", 1),
    (('ARCHS = ("sm_90", "sm_100a")', 'ARCHS = ("sm_9",)'), "ARCHS entry 'sm_9'", 6),
    (('ARCHS = ("sm_90", "sm_100a")', 'ARCHS = "sm_90"'), "ARCHS must be a non-empty sequence of sm strings", 6),
    (('ARCHS = ("sm_90", "sm_100a")', 'UNCONDITIONAL = 1'), "UNCONDITIONAL must be a bool, got 1", 6),
    (('    return [\n        *({"kernel": "radix", "K": k} for k in _KS),\n        {"kernel": "register", "K": 16},\n'
      '    ]', '    return []'), "kernel_precompile_grid() must return a non-empty list", 15),
    (('ATEN_OP = "topk"\n', 'ATEN_OP = "topk"\nif True\n'), "expected ':'", 4),
])
def test_what_gen_py_refuses_is_an_error_at_its_line(tmp_path: Path, edit: tuple[str, str], message: str,
                                                     line: int) -> None:
    path = str(tmp_path / "ops" / "topk" / "aot.py")
    read = read_native_aot(str(_ops(tmp_path, topk=DECLARATION.replace(*edit))))
    assert read.declarations == () and read.unread == ""
    ((where, d),) = read.errors
    assert (where, d.code, d.span.start_line + 1) == (path, "OPG967", line)
    assert message in d.message, d.message


def test_a_duplicate_declaration_is_refused(tmp_path: Path) -> None:
    read = read_native_aot(str(_ops(tmp_path, a=DECLARATION, b=DECLARATION)))
    ((where, d),) = read.errors
    assert where.endswith("b/aot.py") and d.message == "duplicate declaration for topk@CUDA"
