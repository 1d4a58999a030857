"""Kernels the yaml names that no C++ source under aten/src/ATen/native is expected to define."""

from __future__ import annotations

from pathlib import Path

from opgen_lsp.analysis.kernels import missing_kernels
from opgen_lsp.index.kernels import KernelIndex
from opgen_lsp.index.native import NativeParser, TagsParser
from opgen_lsp.releases import DEFAULT

TAGS = "- tag: view_copy\n  desc: copy variant of a view\n- tag: pt2_compliant_tag\n  desc: compliant\n"
OPS = """\
- func: twist(Tensor(a) self, int dim) -> Tensor(a)
  variants: function
  dispatch:
    CompositeExplicitAutograd: twist
- func: twist_copy(Tensor self, int dim) -> Tensor
  variants: function
  dispatch:
    CompositeExplicitAutogradNonFunctional: twist_copy
  tags: view_copy
  autogen: twist_copy.out
- func: spin(Tensor self) -> Tensor
  dispatch:
    CPU: spin_cpu
    MTIA: spin_mtia
"""


def test_generated_view_copy_and_mtia_kernels_are_not_required(tmp_path: Path) -> None:
    snapshot = NativeParser(release=DEFAULT).parse(OPS, TagsParser().parse(TAGS).names)
    assert [d.message for d in snapshot.diagnostics] == []
    index = KernelIndex.build([str(tmp_path)], workers=1)
    missing = {d.message.split(" of ")[0].split()[-1] for d in missing_kernels(snapshot, index)}
    # twist_copy: written by the codegen (CompositeViewCopyKernels.cpp); spin_mtia: built outside PyTorch's tree
    assert missing == {"at::native::twist", "at::native::spin_cpu"}


def test_the_servers_per_op_check_leaves_them_out_too(tmp_path: Path) -> None:
    from opgen_lsp.diagnostics import Severity
    from opgen_lsp.lsp.kernels import MissingKernels

    snapshot = NativeParser(release=DEFAULT).parse(OPS, TagsParser().parse(TAGS).names)
    index = KernelIndex.build([str(tmp_path)], workers=1)
    check = MissingKernels()
    for _ in range(2):  # the second call answers from its per-op memory
        found = check(snapshot, index, 0, Severity.WARNING, None)
        assert {d.message.split(" of ")[0].split()[-1] for d in found} == {"at::native::twist",
                                                                            "at::native::spin_cpu"}


def test_a_kernel_defined_only_where_the_codegen_cannot_call_it_says_so(tmp_path: Path) -> None:
    (tmp_path / "Spin.cpp").write_text("namespace at::native {\nstatic Tensor spin_cpu(const Tensor& s) { return s; }\n}\n")
    snapshot = NativeParser(release=DEFAULT).parse(OPS, TagsParser().parse(TAGS).names)
    index = KernelIndex.build([str(tmp_path)], workers=1)
    message = next(d.message for d in missing_kernels(snapshot, index) if "spin_cpu" in d.message)
    assert f"is not defined (the one in {tmp_path / 'Spin.cpp'}:2 is static)" in message


# torch 1.13's view copy: a CompositeExplicitAutograd kernel of its native name, which 1.13's
# CompositeViewCopyKernels.cpp defines (from 2.0 only a CompositeExplicitAutogradNonFunctional kernel is generated).
OPS_1_13 = OPS.replace("CompositeExplicitAutogradNonFunctional: twist_copy", "CompositeExplicitAutograd: twist_copy")


def test_a_1_13_view_copy_kernel_of_its_native_name_is_generated_there_only(tmp_path: Path) -> None:
    from opgen_lsp.diagnostics import Severity
    from opgen_lsp.lsp.kernels import MissingKernels
    from opgen_lsp.releases import release_at

    index = KernelIndex.build([str(tmp_path)], workers=1)
    for series, expected in (("1.13", set()), ("2.0", {"at::native::twist_copy"})):
        release = release_at(series)
        snapshot = NativeParser(release=release).parse(OPS_1_13, TagsParser().parse(TAGS).names)
        by_cli = missing_kernels(snapshot, index, copies_by_native_name=not release.view_copy_kernels_by_backend_index)
        by_server = MissingKernels()(snapshot, index, 0, Severity.WARNING, None)
        for found in (by_cli, by_server):
            assert {d.message.split(" of ")[0].split()[-1] for d in found} == {"at::native::twist",
                                                                                "at::native::spin_cpu"} | expected
