"""torch 2.6's Register<Key>.cpp, against gen.py 2.6.0 on its own yaml with ops of a second namespace added.

gen.py 2.6 writes one Register<Key>.cpp with one definitions block per kernel namespace over all groups (later
releases shard it, a block per group). Two of its ways show only with ops outside aten: a block's registrations
start over at each new op namespace, so the m.impl lines of the ops before it are lost; and a kernel namespace
other than at::native gets a block of its own, after the first. Both tools run on the same input in one test.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from file_trees import files_under, first_difference

from opgen_lsp.cli import main
from opgen_lsp.index.native import NativeParser, TagsParser

from .test_release_matrix import _aten, _torchgen, release, release_folder

pytestmark = [pytest.mark.versions, pytest.mark.slow]

# Put before abs (an early aten op with a CPU kernel): an op of namespace custom with its kernel in at::native,
# then one with its kernels in custom::native.
_CUSTOM_OPS = """\
- func: custom::my_op(Tensor self) -> Tensor
  dispatch:
    CPU: my_op_cpu

- func: custom::my_other(Tensor self) -> Tensor
  dispatch:
    CPU: custom::native::my_other_cpu
    CUDA: custom::native::my_other_cuda

"""
_BEFORE = "- func: abs(Tensor self) -> Tensor\n"


def _source(folder: Path, root: Path) -> Path:
    """An ATen folder: the release's yaml with the custom ops, its tags.yaml and templates."""
    native = _aten(folder) / "native"
    text = (native / "native_functions.yaml").read_text()
    assert text.count(_BEFORE) == 1, "2.6's yaml changed"
    (root / "native").mkdir(parents=True)
    (root / "native" / "native_functions.yaml").write_text(text.replace(_BEFORE, _CUSTOM_OPS + _BEFORE))
    (root / "native" / "tags.yaml").write_text((native / "tags.yaml").read_text())
    (root / "templates").symlink_to(_aten(folder) / "templates")
    return root


def test_registrations_of_several_namespaces_match_gen_py_2_6(tmp_path: Path) -> None:
    folder = release_folder("2.6.0")
    source = _source(folder, tmp_path / "src")
    outputs = {}
    for tool in ("torchgen", "opgen"):
        root = tmp_path / tool
        root.mkdir()
        args = ["-s", str(source), "-d", str(root / "aten"), "--aoti-install-dir", str(root / "aoti"),
                "--generate", "sources"]
        if tool == "torchgen":
            done = _torchgen(folder, "torchgen.gen", args, root, ["aten", "aoti"])
            assert done.returncode == 0, done.stderr[-2000:]
        else:
            assert main(["generate", *args, "--torch-version", "2.6.0", "--implemented-only"]) == 0
        outputs[tool] = files_under(root / "aten")
    expected, got = outputs["torchgen"], outputs["opgen"]
    cpu = expected["RegisterCPU.cpp"].decode()
    # What the input is for: gen.py lost the m.impl of the aten ops before my_op and of my_op itself, and
    # wrote a block for kernel namespace custom.
    assert 'm.impl("my_op"' not in cpu and 'm.impl("_assert_async"' not in cpu and "TORCH_LIBRARY_IMPL(custom, CPU" in cpu
    assert sorted(got) == sorted(expected)
    # opgen check warns where gen.py drops them: at my_op (the aten ops before it; 6 m.impl lines of RegisterCPU.cpp,
    # _assert_async's first) and at abs (my_op's); my_other's kernels, in custom::native, are kept.
    text = (source / "native" / "native_functions.yaml").read_text()
    lines = text.splitlines()
    my_op, abs_ = lines.index(_CUSTOM_OPS.splitlines()[0]), lines.index(_BEFORE.rstrip("\n"))
    tags = TagsParser().parse((source / "native" / "tags.yaml").read_text()).names
    warned = [d for d in NativeParser(release=release("2.6.0")).parse(text, tags).diagnostics if d.code == "OPG954"]
    assert [d.span.start_line for d in warned] == [my_op, abs_]
    assert ", 6 under CPU," in warned[0].message and "losing those of 1 under CPU op group(s)" in warned[1].message
    later = NativeParser(release=release("2.7.1")).parse(text, tags).diagnostics  # sharded: nothing is dropped
    assert not any(d.code == "OPG954" for d in later)
    different = [name for name in expected if got[name] != expected[name]]
    assert different == [], f"{different[0]}: {first_difference(expected[different[0]], got[different[0]])}"
