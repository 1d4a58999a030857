"""`opgen upgrade`'s and `opgen coverage`'s analyses on small native_functions.yaml pairs, in-process."""

from __future__ import annotations

from opgen_lsp.analysis.coverage import FREE, IMPLEMENTED, TO_IMPLEMENT, coverage
from opgen_lsp.analysis.upgrade import ChangeKind, upgrade_diagnostics, upgrade_report
from opgen_lsp.index.native import NativeParser, NativeSnapshot
from opgen_lsp.releases import resolve

OLD = """\
- func: gone(Tensor self) -> Tensor
  dispatch:
    CPU: gone

- func: widen(Tensor self, int k) -> Tensor
  dispatch:
    CPU: widen

- func: moved.old(Tensor self, Scalar other) -> Tensor
  dispatch:
    CPU: moved

- func: fill_it_(Tensor(a!) self, Scalar value) -> Tensor(a!)
  dispatch:
    CPU: fill_it_

- func: same(Tensor self) -> Tensor
  dispatch:
    CPU: same
"""
# gone is removed, widen's k becomes a SymInt, moved.old becomes moved.new (same schema), fill_it_'s kernel takes
# its mutable tensor by const reference (same schema, another C++ signature), same stays the same.
NEW = """\
- func: widen(Tensor self, SymInt k) -> Tensor
  dispatch:
    CPU: widen

- func: moved.new(Tensor self, Scalar other) -> Tensor
  dispatch:
    CPU: moved

- func: fill_it_(Tensor(a!) self, Scalar value) -> Tensor(a!)
  use_const_ref_for_mutable_tensors: True
  dispatch:
    CPU: fill_it_

- func: same(Tensor self) -> Tensor
  dispatch:
    CPU: same

- func: helper(Tensor self) -> Tensor
"""
BACKEND = """\
backend: PrivateUse1
cpp_namespace: my_backend
supported:
- gone
- widen
- moved.old
- fill_it_
- same
autograd:
- helper
"""


def _native(text: str, version: str) -> NativeSnapshot:
    resolved = resolve(version, "test")
    assert resolved is not None
    return NativeParser(release=resolved.release).parse(text, frozenset())


def test_each_kind_of_change_is_reported_on_its_line_with_both_declarations() -> None:
    report = upgrade_report(BACKEND, _native(OLD, "2.6"), _native(NEW, "2.7"))
    found = {c.op: c for c in report.changes}
    assert {op: c.kind for op, c in found.items()} == {
        "gone": ChangeKind.REMOVED, "widen": ChangeKind.SCHEMA, "moved.old": ChangeKind.RENAMED,
        "fill_it_": ChangeKind.SIGNATURE}
    assert (report.old_release, report.new_release, report.compared, report.not_in_old) == ("2.6.0", "2.7.1", 5,
                                                                                             ("helper",))
    gone = found["gone"]
    assert gone.span.start_line == BACKEND.splitlines().index("- gone")
    assert (gone.old_declaration, gone.new_declaration) == ("static at::Tensor gone(const at::Tensor & self);", "")
    assert found["moved.old"].renamed_to == "moved.new"
    assert found["moved.old"].new_declaration == \
        "static at::Tensor moved(const at::Tensor & self, const at::Scalar & other);"
    widen = found["widen"]
    assert (widen.old_schema, widen.new_schema) == ("widen(Tensor self, int k) -> Tensor",
                                                    "widen(Tensor self, SymInt k) -> Tensor")
    fill = found["fill_it_"]
    assert fill.old_schema == fill.new_schema
    assert fill.old_declaration == "static at::Tensor & fill_it_(at::Tensor & self, const at::Scalar & value);"
    assert fill.new_declaration == "static const at::Tensor & fill_it_(const at::Tensor & self, const at::Scalar & value);"


def test_a_symint_listing_names_the_kernel_in_each_release() -> None:
    backend = BACKEND + "symint:\n- widen\n"
    widen = next(c for c in upgrade_report(backend, _native(OLD, "2.6"), _native(NEW, "2.7")).changes
                 if c.op == "widen")
    # No SymInt in the old schema: the codegen declares no _symint kernel (the yaml's own error, OPG513).
    assert (widen.old_declaration, widen.new_declaration) == (
        "", "static at::Tensor widen_symint(const at::Tensor & self, c10::SymInt k);")


def test_a_rename_is_found_by_schema_under_a_close_name_and_never_guessed() -> None:
    old = "- func: frobnicate_all(Tensor self, int dim) -> Tensor\n  dispatch:\n    CPU: f\n"
    renamed = "- func: _frobnicate_all(Tensor self, int dim) -> Tensor\n  dispatch:\n    CPU: f\n"
    unrelated = "- func: other_op(Tensor self, int dim) -> Tensor\n  dispatch:\n    CPU: f\n"
    backend = "backend: PrivateUse1\ncpp_namespace: b\nsupported:\n- frobnicate_all\n"
    [change] = upgrade_report(backend, _native(old, "2.13"), _native(renamed + unrelated, "2.14")).changes
    assert (change.kind, change.renamed_to) == (ChangeKind.RENAMED, "_frobnicate_all")
    assert change.new_declaration == "static at::Tensor _frobnicate_all(const at::Tensor & self, int64_t dim);"
    # The same schema under a name that is not close: removed, not renamed.
    [change] = upgrade_report(backend, _native(old, "2.13"), _native(unrelated, "2.14")).changes
    assert (change.kind, change.renamed_to, change.new_declaration) == (ChangeKind.REMOVED, "", "")


def test_the_diagnostics_say_what_changes_and_show_both_declarations() -> None:
    report = upgrade_report(BACKEND, _native(OLD, "2.6"), _native(NEW, "2.7"))
    by_op = {d.message.split("'")[1]: d for d in upgrade_diagnostics(report)}
    assert all(d.code == "OPG975" and d.severity.label == "information" for d in by_op.values())
    assert by_op["fill_it_"].message.splitlines() == [
        "'fill_it_' C++ signature changed from torch 2.6.0 to 2.7.1",
        "kernel in 2.6.0: static at::Tensor & fill_it_(at::Tensor & self, const at::Scalar & value);",
        "kernel in 2.7.1: static const at::Tensor & fill_it_(const at::Tensor & self, const at::Scalar & value);"]
    assert "schema in 2.7.1: (none)" in by_op["gone"].message


def test_a_file_that_cannot_be_compared_says_why() -> None:
    old, new = _native(OLD, "2.6"), _native(NEW, "2.7")
    report = upgrade_report("- just a list\n", old, new)
    assert (report.changes, report.compared) == ((), 0)
    assert report.problem.startswith("not a backend yaml (gen_backend_stubs' format) nor a vendor file")
    assert "lists no upstream op" in upgrade_report("backend: XLA\ncpp_namespace: x\nsupported: []\n", old,
                                                    new).problem
    assert "none of its 1 listed op(s) is declared by torch 2.6.0" in upgrade_report(
        "backend: XLA\ncpp_namespace: x\nsupported:\n- helper\n", old, new).problem
    mlu = upgrade_report("aten:\n- func: gone\n", old, new, "mlu_functions.yaml")
    assert mlu.problem.startswith("torch_mlu's format is not compared yet")
    assert not upgrade_report(BACKEND, old, new).problem


# torch_npu's dialect: upstream ops under supported (a name, or a map torchnpugen registers), symint, and the
# file's own new ops under custom (one listed again under supported).
NPU = """\
backend: NPU
cpp_namespace: at_npu::native
supported:
  - gone
  - func: widen
    op_api: True
  - func: same
    exposed: True
  - moved.old
  - my_op
custom:
  - func: my_op(Tensor self) -> Tensor
symint:
  - widen
"""


def test_torch_npu_upstream_ops_are_compared_and_its_own_ops_left_out_with_why() -> None:
    report = upgrade_report(NPU, _native(OLD, "2.6"), _native(NEW, "2.7"), "torch_npu/csrc/aten/npu_native_functions.yaml")
    assert report.problem == ""
    found = {c.op: c for c in report.changes}
    assert {op: c.kind for op, c in found.items()} == {
        "gone": ChangeKind.REMOVED, "widen": ChangeKind.SCHEMA, "moved.old": ChangeKind.RENAMED}
    assert report.compared == 3
    assert report.left_out == (("same", "not registered by torchnpugen (a map without op_api, device_check, "
                                        "impl_ns)"), ("my_op", "new op(s) of its own (custom:)"))
    widen = found["widen"]
    # on the line of its name; its kernel is widen_symint (listed under symint:), gen_backend_stubs' declaration
    assert (widen.span.start_line, widen.section) == (NPU.splitlines().index("  - func: widen"), "supported")
    assert (widen.old_declaration, widen.new_declaration) == (
        "", "static at::Tensor widen_symint(const at::Tensor & self, c10::SymInt k);")
    assert found["gone"].old_declaration == "static at::Tensor gone(const at::Tensor & self);"
    # the same file under another name is not known as torch_npu's by its name, but by its keys
    assert upgrade_report(NPU, _native(OLD, "2.6"), _native(NEW, "2.7")).left_out == report.left_out


COVERAGE_NATIVE = """\
- func: add.Tensor(Tensor self, Tensor other) -> Tensor
  structured_delegate: add.out

- func: add_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
  structured_delegate: add.out

- func: add.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  dispatch:
    CPU: add_out

- func: decomposed(Tensor self) -> Tensor

- func: explicit(Tensor self) -> Tensor
  dispatch:
    CompositeExplicitAutograd: explicit

- func: cpu_only(Tensor self) -> Tensor
  dispatch:
    CPU, CUDA: cpu_only
"""


def test_coverage_sorts_every_op_into_one_category() -> None:
    found = coverage("backend: PrivateUse1\ncpp_namespace: b\nsupported:\n- add.Tensor\n- gone_op\n",
                     _native(COVERAGE_NATIVE, "2.13"))
    assert found.unknown == ("gone_op",)
    assert {(o.op, o.category, o.how) for o in found.ops} == {
        ("add.Tensor", IMPLEMENTED, "supported"),
        ("add_.Tensor", FREE, "generated around add.Tensor's kernel"),
        ("add.out", FREE, "generated around add.Tensor's kernel"),
        ("decomposed", FREE, "CompositeImplicitAutograd"),
        ("explicit", FREE, "CompositeExplicitAutograd"),
        ("cpu_only", TO_IMPLEMENT, "kernels: CPU, CUDA")}
    assert (found.backend, found.release, found.counts()) == ("PrivateUse1", "2.13.0",
                                                              {IMPLEMENTED: 1, FREE: 4, TO_IMPLEMENT: 1})
    # With use_out_as_primary the variants are not generated: the delegate is all the release has for them.
    primary = coverage("backend: PrivateUse1\ncpp_namespace: b\nuse_out_as_primary: true\nsupported:\n- add.Tensor\n",
                       _native(COVERAGE_NATIVE, "2.13"))
    assert {o.op: o.how for o in primary.of(TO_IMPLEMENT)} == {
        "add_.Tensor": "structured_delegate: add.out", "add.out": "kernels: CPU", "cpu_only": "kernels: CPU, CUDA"}
