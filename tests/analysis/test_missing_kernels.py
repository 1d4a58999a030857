"""Missing kernels of a backend yaml (`--impl-path`): torchgen's verdicts, opgen's places and declarations.

Each case is a backend yaml and an implementation file of our own. torchgen's
`error_on_missing_kernels` runs on the same pair (in-process, with the
full_codegen ops left out as torch_xla's gen_lazy_tensor does) and opgen must
reach the same verdict; opgen must also put each missing kernel on the line of
its op, with the C++ definition it needs, and a stub in the diagnostic's data.
The last test pastes the stubs into the file, compiles it with g++ against
torch 2.13's headers and the generated header, and finds the diagnostics gone.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from opgen_lsp.analysis.backend_kernels import ImplFile, find_definitions, normalize_type
from opgen_lsp.cli import main
from opgen_lsp.codegen.backend.run import BackendOptions, check_backend_files, generate_backend, load_native_snapshot
from opgen_lsp.releases import DEFAULT

pytestmark = pytest.mark.slow  # (kernel indexes built over C++ trees: CI runs them; the not-slow loop does not)

HEAD = "backend: PrivateUse1\ncpp_namespace: my_backend\n"
C = "PrivateUse1NativeFunctions"
INCLUDE = '#include "out/PrivateUse1NativeFunctions.h"\n\nnamespace my_backend {\n'

ADD_TENSOR = f"at::Tensor {C}::add(const at::Tensor & self, const at::Tensor & other, const at::Scalar & alpha) {{\n" \
             "  return self;\n}\n"
ADD_SCALAR = f"at::Tensor {C}::add(const at::Tensor& self, const at::Scalar& other, const at::Scalar& alpha) {{\n" \
             "  return self;\n}\n"
ABS = f"at::Tensor {C}::abs(const at::Tensor & self) {{ return self; }}\n"
ABS_CALL = f"at::Tensor helper(const at::Tensor & t) {{ return my_backend::{C}::abs(t); }}\n"
EMPTY_STRIDED = (f"at::Tensor {C}::empty_strided_symint(c10::SymIntArrayRef size, c10::SymIntArrayRef stride, "
                 "::std::optional<at::ScalarType> dtype, ::std::optional<at::Layout> layout, "
                 "::std::optional<at::Device> device, ::std::optional<bool> pin_memory) {\n  return {};\n}\n")
MUL = f"at::Tensor {C}::mul(const at::Tensor & self, const at::Tensor & other) {{ return self; }}\n"
NEG_TYPO = f"at::Tensor {C}::abss(const at::Tensor & self) {{ return self; }}\n"


def impl(*parts: str) -> str:
    return INCLUDE + "\n".join(parts) + "\n} // namespace my_backend\n"


# name, yaml, impl text, {op text: expected code on its line}, {impl definition name: code}
CASES = [
    ("all-defined", HEAD + "supported:\n- abs\n- add.Tensor\n", impl(ABS, ADD_TENSOR), {}, {}),
    ("one-missing", HEAD + "supported:\n- abs\n- add.Tensor\n", impl(ADD_TENSOR), {"abs": "OPG530"}, {}),
    ("a-call-is-not-a-definition", HEAD + "supported:\n- abs\n", impl(ABS_CALL), {"abs": "OPG530"}, {}),
    ("overload-missing", HEAD + "supported:\n- add.Tensor\n- add.Scalar\n", impl(ADD_TENSOR),
     {"add.Scalar": "OPG530"}, {}),
    ("overloads-defined", HEAD + "supported:\n- add.Tensor\n- add.Scalar\n", impl(ADD_SCALAR, ADD_TENSOR), {}, {}),
    ("defined-twice", HEAD + "supported:\n- abs\n", impl(ABS, ABS), {"abs": "OPG531"}, {}),
    ("unused-definition", HEAD + "supported:\n- abs\n", impl(ABS, MUL), {}, {"mul": "OPG532"}),
    ("misspelt-definition", HEAD + "supported:\n- abs\n", impl(NEG_TYPO), {"abs": "OPG530"}, {"abss": "OPG532"}),
    ("symint-kernel", HEAD + "supported:\n- empty_strided\nsymint:\n- empty_strided\n", impl(EMPTY_STRIDED), {}, {}),
    ("symint-kernel-missing", HEAD + "supported:\n- empty_strided\nsymint:\n- empty_strided\n", impl(ABS),
     {"empty_strided": "OPG530"}, {"abs": "OPG532"}),
    ("autograd-kernel-missing", HEAD + "supported:\n- abs\nautograd:\n- add.Tensor\n", impl(ABS),
     {"add.Tensor": "OPG530"}, {}),
    ("full-codegen-excluded", HEAD + "supported:\n- abs\nfull_codegen:\n- add.Tensor\n", impl(ABS), {}, {}),
    ("full-codegen-defined-anyway", HEAD + "supported:\n- abs\nfull_codegen:\n- add.Tensor\n",
     impl(ABS, ADD_TENSOR), {}, {"add": "OPG532"}),
]


@pytest.fixture(scope="module")
def native(aten):
    return load_native_snapshot(str(aten / "native" / "native_functions.yaml"), DEFAULT)


def _torchgen_verdict(yaml_path: Path, impl_path: Path) -> str | None:
    """torchgen's error_on_missing_kernels on the pair (None: no error), full_codegen left out as gen_lazy_tensor does."""
    import torchgen
    import yaml as pyyaml
    from torchgen.gen import get_grouped_native_functions, parse_native_yaml
    from torchgen.gen_backend_stubs import error_on_missing_kernels, parse_backend_yaml
    from torchgen.model import OperatorName

    packaged = Path(torchgen.__file__).parent / "packaged" / "ATen" / "native"
    parsed = parse_native_yaml(str(packaged / "native_functions.yaml"), str(packaged / "tags.yaml"))
    grouped = get_grouped_native_functions(parsed.native_functions)
    backend = parse_backend_yaml(str(yaml_path), grouped, dict(parsed.backend_indices))
    class_name = backend.class_name or backend.backend_indices[backend.backend_key].native_function_class_name()
    full_codegen = [OperatorName.parse(op) for op in pyyaml.safe_load(yaml_path.read_text()).get("full_codegen", [])]
    try:
        error_on_missing_kernels(parsed.native_functions, backend.backend_indices, backend.backend_key,
                                 backend.autograd_key, class_name, str(impl_path), full_codegen)
    except AssertionError as exc:
        return str(exc)
    return None


def _line_of(text: str, start: str) -> int:
    return next(i for i, line in enumerate(text.splitlines()) if line == start)


def _check(native, yaml_text: str, impl_text: str, tmp_path: Path):
    yaml_path, impl_path = tmp_path / "backend.yaml", tmp_path / "kernels.cpp"
    yaml_path.write_text(yaml_text)
    impl_path.write_text(impl_text)
    _, found = check_backend_files(str(yaml_path), yaml_text, native, (ImplFile(str(impl_path), impl_text),),
                                   experimental=False)
    return yaml_path, impl_path, found


@pytest.mark.conformance
@pytest.mark.parametrize("name,yaml_text,impl_text,on_yaml,on_impl", CASES, ids=[c[0] for c in CASES])
def test_case(native, name, yaml_text, impl_text, on_yaml, on_impl, tmp_path):
    yaml_path, impl_path, found = _check(native, yaml_text, impl_text, tmp_path)
    kernel_codes = [f for f in found if f.diagnostic.code in ("OPG530", "OPG531", "OPG532")]
    errors = [f for f in kernel_codes if f.diagnostic.is_error]
    theirs = _torchgen_verdict(yaml_path, impl_path)
    assert (theirs is not None) == bool(errors), f"torchgen: {theirs}\nopgen: {[f.diagnostic for f in errors]}"

    got_yaml = {(f.diagnostic.span.start_line, f.diagnostic.code) for f in kernel_codes if f.path == str(yaml_path)}
    assert got_yaml == {(_line_of(yaml_text, f"- {op}"), code) for op, code in on_yaml.items()}
    got_impl = sorted((f.diagnostic.span.start_line, f.diagnostic.code) for f in kernel_codes
                      if f.path == str(impl_path))
    expected_impl = []
    for kernel, code in on_impl.items():
        lines = [i for i, line in enumerate(impl_text.splitlines()) if f"{C}::{kernel}(" in line]
        expected_impl.extend((i, code) for i in lines)
    assert got_impl == sorted(expected_impl)


@pytest.mark.conformance
def test_message_names_the_declaration_and_data_holds_a_stub(native, tmp_path):
    yaml_text = HEAD + "supported:\n- abs\n- add.Tensor\n- empty_strided\nsymint:\n- empty_strided\n"
    _, _, found = _check(native, yaml_text, impl(ADD_TENSOR), tmp_path)
    by_line = {f.diagnostic.span.start_line: f.diagnostic for f in found if f.diagnostic.code == "OPG530"}
    abs_diag = by_line[_line_of(yaml_text, "- abs")]
    assert f"at::Tensor {C}::abs(const at::Tensor & self)" in abs_diag.message
    data = dict(abs_diag.data)
    assert data["declaration"] == "at::Tensor abs(const at::Tensor & self)"
    assert data["stub"].startswith("namespace my_backend {")
    assert f"at::Tensor {C}::abs(const at::Tensor & self) {{" in data["definition"]
    assert "TORCH_CHECK_NOT_IMPLEMENTED(false" in data["definition"]
    strided = by_line[_line_of(yaml_text, "- empty_strided")]
    assert f"{C}::empty_strided_symint(c10::SymIntArrayRef size, c10::SymIntArrayRef stride" in strided.message


@pytest.mark.conformance
def test_check_cli_takes_impl_path(aten, tmp_path, capsys):
    yaml_path = tmp_path / "my_functions.yaml"
    yaml_path.write_text(HEAD + "supported:\n- abs\n")
    impl_path = tmp_path / "kernels.cpp"
    impl_path.write_text(impl(MUL))
    assert main(["check", str(yaml_path), "--impl-path", str(impl_path)]) == 1
    out = capsys.readouterr().out
    assert f"{yaml_path}:4:3: error:" in out and "[OPG530]" in out
    assert f"{impl_path}:" in out and "[OPG532]" in out
    impl_path.write_text(impl(ABS))
    assert main(["check", str(yaml_path), "--impl-path", str(impl_path)]) == 0


@pytest.mark.conformance
def test_generate_backend_refuses_missing_kernels(aten, tmp_path, monkeypatch):
    yaml_path = tmp_path / "backend.yaml"
    yaml_path.write_text(HEAD + "supported:\n- abs\n")
    impl_path = tmp_path / "kernels.cpp"
    impl_path.write_text(impl(MUL))
    monkeypatch.chdir(tmp_path)
    assert main(["generate-backend", "-s", str(yaml_path), "-o", "out", "--impl-path", str(impl_path)]) == 1
    assert not (tmp_path / "out").exists()  # like torchgen, nothing is written
    assert main(["generate-backend", "-s", str(yaml_path), "-o", "out", "--impl-path", "missing.cpp"]) == 2


def test_counting_rule():
    text = (f"at::Tensor {C}::abs(const at::Tensor & self) {{}}\n"
            f"at::Tensor x = my_backend::{C}::abs(t);\n"  # a call: ':' just before the class name
            f"at::Tensor {C}::\n  add(const at::Tensor& a, const at::Tensor &b, const at::Scalar& alpha = 1) {{}}\n"
            f"auto y = {C}::mul(a, b);\n")  # counted, as torchgen does
    found = find_definitions(ImplFile("k.cpp", text), C)
    assert [(d.name, d.span.start_line) for d in found] == [("abs", 0), ("add", 3), ("mul", 4)]
    assert found[1].params == ("constTensor&", "constTensor&", "constScalar&")
    assert normalize_type("const ::std::optional<at::Scalar> & min") == "constoptional<Scalar>&"
    assert normalize_type("int64_t") == "int64_t"


@pytest.mark.conformance
@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_pasted_stubs_compile_and_clear_the_diagnostics(native, tmp_path, monkeypatch):
    import torch

    yaml_text = HEAD + "supported:\n- abs\n- add.Tensor\n- add.Scalar\n- max.dim_max\n- empty_strided\n" \
                       "symint:\n- empty_strided\n"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "backend.yaml").write_text(yaml_text)
    result = generate_backend(BackendOptions(str(tmp_path / "backend.yaml"), "out", release=DEFAULT, experimental=False), native)
    assert not result.has_errors and (tmp_path / "out" / "PrivateUse1NativeFunctions.h").exists()
    text = impl(ADD_TENSOR)
    _, impl_path, found = _check(native, yaml_text, text, tmp_path)
    missing = [f.diagnostic for f in found if f.diagnostic.code == "OPG530"]
    assert len(missing) == 4
    text += "\n" + "\n".join(dict(d.data)["stub"] for d in missing)
    impl_path.write_text(text)
    include = Path(torch.__file__).parent / "include"
    done = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-I", str(include),
                           "-I", str(include / "torch" / "csrc" / "api" / "include"), "-I", str(tmp_path),
                           str(impl_path)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    _, _, found = _check(native, yaml_text, text, tmp_path)
    assert not [f for f in found if f.diagnostic.code in ("OPG530", "OPG531", "OPG532")]
