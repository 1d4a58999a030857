"""`opgen scaffold`: a new op's edits, applied to a small PyTorch-shaped tree, leave `opgen check --kernels` with
nothing to report; the stubs' declarations are the ones the missing-kernel check asks for."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import reference
from autograd_tree import KERNELS, KERNELS_PATH, write_tree

from opgen_lsp.analysis.scaffold import inplace_schema, out_schema, parse_functional
from opgen_lsp.cli import main

BACKEND = "backend: PrivateUse1\ncpp_namespace: my_backend\nsupported: []\nautograd: []\n"
SCHEMA = "my_op.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"


@pytest.fixture
def tree(tmp_path, monkeypatch):
    write_tree(tmp_path)
    (tmp_path / KERNELS_PATH).write_text(KERNELS)
    (tmp_path / "my_backend.yaml").write_text(BACKEND)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _check_clean(tree: Path, capsys, backend: bool = True) -> str:
    capsys.readouterr()
    assert main(["check", ".", "--kernels", "."]) == 0
    assert not backend or main(["check", "my_backend.yaml", "--native-functions", "aten/src/ATen/native/native_functions.yaml",
                                "--impl-path", "my_backend_kernels.cpp"]) == 0
    out = capsys.readouterr().out
    assert "warning" not in out.replace("0 warnings", "") and "[OPG" not in out, out
    return out


@pytest.mark.parametrize("structured", [False, True], ids=["plain", "structured"])
def test_applied_scaffold_checks_clean(tree, capsys, structured):
    _check_clean(tree, capsys, backend=False)  # the tree before (its backend yaml lists nothing yet)
    args = ["scaffold", SCHEMA, "--tags", "core", "--derivatives", "--backend-yaml", "my_backend.yaml",
            "--backend-kernel-file", "my_backend_kernels.cpp", "--apply"]
    assert main(args + (["--structured"] if structured else [])) == 0
    native = (tree / "aten/src/ATen/native/native_functions.yaml").read_text()
    assert "- func: my_op_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)\n" in native
    assert "- func: my_op.Tensor_out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)\n" \
        in native
    assert native.count("  tags: core\n") == 3
    assert native.count("  structured_delegate: my_op.Tensor_out\n") == (2 if structured else 0)
    code = (tree / "aten/src/ATen/native/my_op.cpp").read_text()
    if structured:
        assert "TORCH_META_FUNC2(my_op, Tensor) (const at::Tensor & self, const at::Tensor & other, " \
               "const at::Scalar & alpha) {" in code
        assert "TORCH_IMPL_FUNC(my_op_Tensor_out) (const at::Tensor & self, const at::Tensor & other, " \
               "const at::Scalar & alpha, const at::Tensor & out) {" in code
    else:
        assert "at::Tensor & my_op__Tensor(at::Tensor & self, const at::Tensor & other, const at::Scalar & alpha) {" \
            in code
    assert "- name: my_op.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\n" \
           "  self: not_implemented(\"my_op.Tensor\")\n" in (tree / "tools/autograd/derivatives.yaml").read_text()
    assert (tree / "my_backend_kernels.cpp").read_text() == (
        "namespace my_backend {\n\nat::Tensor PrivateUse1NativeFunctions::my_op(const at::Tensor & self, "
        "const at::Tensor & other, const at::Scalar & alpha) {\n  TORCH_CHECK_NOT_IMPLEMENTED(false, "
        "\"my_op (my_op.Tensor) is not implemented yet\");\n}\n\n} // namespace my_backend\n")
    assert (tree / "my_backend.yaml").read_text() == BACKEND.replace("supported: []\n", "supported:\n- my_op.Tensor\n")
    _check_clean(tree, capsys)


def test_stubs_have_the_declarations_the_kernel_check_asks_for(tree, capsys):
    """Without the kernel file, OPG600 names the declaration each kernel must have: the stubs define exactly those."""
    schema = "pair_op(Tensor self, int dim=-1) -> (Tensor values, Tensor indices)"
    assert main(["scaffold", schema, "--kernel-file", "elsewhere.cpp", "--apply"]) == 0
    capsys.readouterr()
    main(["check", ".", "--kernels", "."])
    wanted = re.findall(r"must be declared as:\nTORCH_API (.*);", capsys.readouterr().out)
    assert len(wanted) == 2
    code = (tree / "elsewhere.cpp").read_text()
    for declaration in wanted:
        assert declaration.replace("=-1", "") + " {" in code
    (tree / "aten/src/ATen/native/pair_op.cpp").write_text(code)
    _check_clean(tree, capsys, backend=False)


def test_printed_by_default_and_nothing_written(tree, capsys):
    before = (tree / "aten/src/ATen/native/native_functions.yaml").read_text()
    assert main(["scaffold", "neg2(Tensor self) -> Tensor"]) == 0
    out = capsys.readouterr().out
    assert "+- func: neg2_(Tensor(a!) self) -> Tensor(a!)\n" in out and "+++ aten/src/ATen/native/neg2.cpp" in out
    assert (tree / "aten/src/ATen/native/native_functions.yaml").read_text() == before
    assert not (tree / "aten/src/ATen/native/neg2.cpp").exists()


@pytest.mark.parametrize("schema,args,message", [
    ("mul.Tensor(Tensor self, Tensor other) -> Tensor", [], "already has mul.Tensor"),
    ("my_op.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", [], "is not functional"),
    ("my_op(Tensor self) -> int", ["--structured"], "cannot be structured"),
    ("my_op(int n, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) "
     "-> Tensor", ["--structured"], "cannot be structured"),
    ("my_op(Tensor self) -> Tensor", ["--tags", "no_such_tag"], "OPG"),
    ("my_op(Tensor self -> Tensor", [], "not a schema"),
])
def test_refused_with_the_reason(tree, capsys, schema, args, message):
    assert main(["scaffold", schema, "--apply", *args]) == 1
    assert message in capsys.readouterr().err
    assert not (tree / "aten/src/ATen/native/my_op.cpp").exists()


def test_variants():
    assert inplace_schema(parse_functional("f(Tensor self, int[] dim) -> Tensor")) == \
        "f_(Tensor(a!) self, int[] dim) -> Tensor(a!)"
    assert inplace_schema(parse_functional("f(Tensor x, Tensor self) -> Tensor")) is None  # self is not first
    assert inplace_schema(parse_functional("f(Tensor self) -> Tensor[]")) is None
    assert out_schema(parse_functional("f(*, int n) -> Tensor")) == "f.out(*, int n, Tensor(a!) out) -> Tensor(a!)"
    assert out_schema(parse_functional("f.dim(Tensor self) -> (Tensor a, Tensor b)")) == \
        "f.dim_out(Tensor self, *, Tensor(a!) a, Tensor(b!) b) -> (Tensor(a!) a, Tensor(b!) b)"
    assert out_schema(parse_functional("f(Tensor self) -> Tensor[]")) is None
    factory = "f(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, " \
              "bool? pin_memory=None) -> Tensor"
    assert out_schema(parse_functional(factory)) == "f.out(SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)"


def test_other_shapes_check_clean(tree, capsys):
    """A factory (its out= variant without tensor options), a list input, an optional input with a SymInt, two
    returns: each scaffolded with its derivatives entry, the tree still checks clean."""
    for schema in ("make_ramp2(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
                   "bool? pin_memory=None) -> Tensor",
                   "cat_like(Tensor[] tensors, int dim=0) -> Tensor",
                   "opt_in(Tensor self, Tensor? weight=None, SymInt n=1) -> Tensor",
                   "split_two(Tensor self) -> (Tensor low, Tensor high)"):
        assert main(["scaffold", schema, "--derivatives", "--apply"]) == 0, capsys.readouterr().err
    native = (tree / "aten/src/ATen/native/native_functions.yaml").read_text()
    assert "- func: make_ramp2.out(SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)\n" in native
    assert "- func: split_two.out(Tensor self, *, Tensor(a!) low, Tensor(b!) high) -> (Tensor(a!) low, " \
           "Tensor(b!) high)\n" in native
    assert "at::Tensor make_ramp2(at::IntArrayRef size, ::std::optional<at::ScalarType> dtype" in \
        (tree / "aten/src/ATen/native/make_ramp2.cpp").read_text()
    _check_clean(tree, capsys, backend=False)


# torchgen's reading of native_functions.yaml: every entry parsed, the groups formed; prints the structured groups.
TORCHGEN_GROUPS = """\
import sys
from torchgen.gen import get_grouped_native_functions, parse_native_yaml
from torchgen.model import NativeFunctionsGroup
parsed = parse_native_yaml(sys.argv[1], sys.argv[2])
groups = get_grouped_native_functions(parsed.native_functions)
print(sorted(str(g.out.func.name) for g in groups if isinstance(g, NativeFunctionsGroup) and g.structured))
"""


@pytest.mark.conformance
def test_torchgen_reads_the_scaffolded_entries(tree, capsys):
    """The reference decides: torchgen parses the scaffolded file and groups each structured op with its out=."""
    pytest.importorskip("torchgen")
    for schema, extra in (("plain_op(Tensor self, Scalar s) -> Tensor", []),
                          ("struct_op.Tensor(Tensor self, Tensor other) -> Tensor", ["--structured"]),
                          ("pair_struct(Tensor self) -> (Tensor low, Tensor high)", ["--structured", "--tags", "core"]),
                          ("ramp3(SymInt n, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
                           "bool? pin_memory=None) -> Tensor", [])):
        assert main(["scaffold", schema, "--apply", *extra]) == 0, capsys.readouterr().err
    native = tree / "aten/src/ATen/native"
    done = reference.run(["-c", TORCHGEN_GROUPS, native / "native_functions.yaml", native / "tags.yaml"], cwd=tree)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "['pair_struct.out', 'struct_op.Tensor_out']"
