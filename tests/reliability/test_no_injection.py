"""No injected C++: every value the codegen copies into C++ as it is (a backend yaml's cpp_namespace and
class_name, the output folder of #include lines, the header paths, class names and registration name of the
generate-backend / generate-lazy flags) is checked to be what it claims; a line break in any of them is an
error in `opgen check` and every generate command, and nothing is written."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import reference

from opgen_lsp.cli import main
from opgen_lsp.model.cpp_names import header_path_problem, identifier_problem, qualified_name_problem

INJECTED = "x\n#error INJECTED"
BACKEND = "backend: XLA\ncpp_namespace: {namespace}\nclass_name: {class_name}\nsupported:\n- abs\n"
LAZY = "backend: XLA\ncpp_namespace: my_lazy\nfull_codegen:\n- relu\n"
SHAPES = ("#pragma once\nnamespace torch {\nnamespace lazy {\nTORCH_API std::vector<torch::lazy::Shape> "
          "compute_shape_relu(const at::Tensor & self);\n}\n}\n")


@pytest.mark.parametrize("key", ["cpp_namespace", "class_name"])
def test_a_line_break_in_a_yaml_name_is_an_error_in_check_and_generate(tmp_path: Path, aten, capsys, key: str):
    values = {"namespace": "torch_xla", "class_name": "XLANativeFunctions"}
    values["namespace" if key == "cpp_namespace" else "class_name"] = '"x\\n#error INJECTED"'
    yaml = tmp_path / "xla_native_functions.yaml"
    yaml.write_text(BACKEND.format(**values))
    assert main(["check", str(yaml)]) == 1
    out = capsys.readouterr().out
    assert f"xla_native_functions.yaml:{2 if key == 'cpp_namespace' else 3}:" in out and "[OPG540]" in out
    assert "has a line break, which no C++ identifier has" in out
    assert main(["generate-backend", "-s", str(yaml), "-o", str(tmp_path / "out")]) == 1
    assert "[OPG540]" in capsys.readouterr().out and not (tmp_path / "out").exists()


def test_odd_but_legal_names_stay_warnings(tmp_path: Path, aten, capsys):
    yaml = tmp_path / "xla_native_functions.yaml"
    yaml.write_text(BACKEND.format(namespace='" torch_xla"', class_name="XLA$Functions"))
    assert main(["check", str(yaml)]) == 0
    out = capsys.readouterr().out
    assert out.count("warning:") == 2 and out.count("[OPG524]") == 2


@pytest.mark.parametrize("flags, named", [
    (["-o", INJECTED], "the output folder (-o)"),
    (["-o", "out", "--deferred-registration", INJECTED], "the backend name (--deferred-registration)"),
])
def test_a_line_break_in_a_generate_backend_flag_is_an_error(tmp_path: Path, aten, capsys, monkeypatch, flags,
                                                             named: str):
    monkeypatch.chdir(tmp_path)
    yaml = tmp_path / "xla_native_functions.yaml"
    yaml.write_text(BACKEND.format(namespace="torch_xla", class_name="XLANativeFunctions"))
    assert main(["generate-backend", "-s", str(yaml), *flags]) == 2
    err = capsys.readouterr().err
    assert f"opgen: {named} {INJECTED!r} has a line break" in err and "copied into the generated C++" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["xla_native_functions.yaml"]


@pytest.mark.parametrize("flag, named", [
    ("-o", "the output folder (-o)"),
    ("--node-base-hdr", "the header --node-base-hdr"),
    ("--tensor-class-hdr", "the header --tensor-class-hdr"),
    ("--shape-inference-hdr", "the header --shape-inference-hdr"),
    ("--node-base", "the class --node-base"),
    ("--tensor-class", "the class --tensor-class"),
])
def test_a_line_break_in_a_generate_lazy_flag_is_an_error(tmp_path: Path, aten, capsys, monkeypatch, flag: str,
                                                          named: str):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lazy.yaml").write_text(LAZY)
    (tmp_path / "shape_inference.h").write_text(SHAPES)
    values = {"-o": "out", "--shape-inference-hdr": "shape_inference.h", flag: INJECTED}
    assert main(["generate-lazy", "-s", "lazy.yaml", *[x for kv in values.items() for x in kv]]) == 2
    err = capsys.readouterr().err
    assert f"opgen: {named} {INJECTED!r}" in err and "a line break" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lazy.yaml", "shape_inference.h"]


@pytest.mark.parametrize("value, problem", [
    ("at", None), (" at ", None), ("a$b", None), ("ä", None),
    ("a-b", "name 'a-b' has '-', which no C++ identifier has"),
    ("1a", "name '1a' does not start with a letter or '_'"),
    ("", "the name is empty"),
    ("a;b", "name 'a;b' has ';', which no C++ identifier has"),
    ("a\0b", "name 'a\\x00b' has a NUL byte, which no C++ identifier has"),
])
def test_identifiers(value: str, problem: str | None):
    assert identifier_problem(value) == problem


def test_qualified_names_and_header_paths():
    assert qualified_name_problem("torch::lazy::LazyTensor") is None
    assert qualified_name_problem("torch::") == "name 'torch::': the name is empty"
    assert qualified_name_problem("a::b\nc") == "name 'a::b\\nc': name 'b\\nc' has a line break, which no C++ " \
                                                "identifier has"
    assert header_path_problem("torch/csrc/lazy/core/tensor.h") is None
    assert header_path_problem("my dir/x.h") is None
    for bad, shown in (('a".h', "'\"'"), ("a>.h", "'>'"), ("a\r.h", "a line break"),
                       ("a\t.h", "the control character '\\t'")):
        assert header_path_problem(bad) == f"header path {bad!r} has {shown}, which an #include line cannot hold"


CXX = shutil.which("g++") or shutil.which("clang++")


@pytest.mark.skipif(CXX is None, reason="no C++ compiler (g++ or clang++) to compile the names with")
@pytest.mark.parametrize("namespace, class_name, accepted, compiles", [
    ("torch_xla", "XLANativeFunctions", True, True),
    (" torch_xla ", "XLA$Functions", True, True),  # odd but legal: OPG524 warnings, generated as torchgen does
    ("at::native", "Fns", True, True), ("ä", "Fns", True, True),
    ("torch-xla", "Fns", False, False), ("at\n#error INJECTED", "Fns", False, False), ("1at", "Fns", False, False),
    ("torch_xla", "My-Functions", False, False), ("torch_xla", "", False, False),
    # Compile, and still errors: code of the yaml's own, and an anonymous namespace (each .cpp gets its own, so
    # the backend's kernels never link with the registrations).
    ("torch_xla", "Fns {}; int injected; struct Y", False, True), ("at::", "Fns", False, True),
])
def test_names_against_the_cpp_torchgen_writes_with_them(tmp_path: Path, namespace: str, class_name: str,
                                                         accepted: bool, compiles: bool):
    """The shapes gen_backend_stubs pastes the two names into: its header's namespace blocks and struct."""
    opened = "".join(f"namespace {part} {{\n" for part in namespace.split("::"))
    closed = "".join(f"}} // namespace {part}\n" for part in reversed(namespace.split("::")))
    source = tmp_path / "names.cpp"
    source.write_text(f"{opened}struct {class_name} {{\nstatic int abs();\n}};\n{closed}")
    assert (subprocess.run([CXX, "-fsyntax-only", str(source)], capture_output=True).returncode == 0) == compiles
    errors = [p for p in (qualified_name_problem(namespace), identifier_problem(class_name)) if p is not None]
    assert (not errors) == accepted, errors


NATIVE_ENTRY = "- func: {name}(Tensor self) -> Tensor\n  variants: function\n  dispatch:\n    CPU: {kernel}\n"
STRUCTURED = ("- func: {name}.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
              "  structured_inherits: {inherits}\n  dispatch:\n    CPU: {name}_out\n"
              "- func: {name}(Tensor self) -> Tensor\n  structured_delegate: {name}.out\n")
UFUNC = ("- func: {name}.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
         "  structured_inherits: TensorIteratorBase\n  ufunc_inner_loop:\n    Generic: {loop}\n"
         "- func: {name}(Tensor self) -> Tensor\n  structured_delegate: {name}.out\n")


@pytest.mark.parametrize("what, entry", [
    ("a dispatch kernel", NATIVE_ENTRY.format(name="abs2", kernel='"abs2_cpu\\n#error INJECTED"')),
    ("structured_inherits", STRUCTURED.format(name="abs2", inherits='"TensorIteratorBase\\n#error INJECTED\\n"')),
    ("a ufunc inner loop", UFUNC.format(name="abs2", loop='"abs2\\n#error INJECTED (Float)"')),
    ("an overload name", '- func: "abs2.x\\n#error INJECTED(Tensor self) -> Tensor"\n  variants: function\n'
                         '  dispatch:\n    CPU: abs2_cpu\n'),
])
def test_a_line_break_in_a_native_functions_name_is_an_error_where_gen_py_pastes_it(tmp_path: Path, aten, capsys,
                                                                                      what: str, entry: str):
    source = tmp_path / "aten"
    (source / "native").mkdir(parents=True)
    (source / "templates").symlink_to(aten / "templates", target_is_directory=True)
    (source / "native" / "tags.yaml").write_bytes((aten / "native" / "tags.yaml").read_bytes())
    (source / "native" / "native_functions.yaml").write_text(entry)
    ran = reference.run(["-m", "torchgen.gen", "-s", str(source), "-d", str(tmp_path / "tg"),
                         "--aoti-install-dir", str(tmp_path / "tg" / "aoti")], cwd=tmp_path, outputs=[tmp_path / "tg"],
                        timeout=300)
    pasted = ran.returncode == 0 and any(
        "\n#error INJECTED" in p.read_text() for p in (tmp_path / "tg").rglob("*") if p.is_file())
    assert pasted or ran.returncode != 0, ran.stderr[-2000:]  # torchgen pastes it (or stops on it)
    assert main(["check", str(source / "native" / "native_functions.yaml")]) == 1
    out = capsys.readouterr().out
    assert "has a line break, which no C++ identifier has" in out and "pastes it into the generated C++" in out \
        or "a schema must be on one line: torchgen accepts this line break" in out
