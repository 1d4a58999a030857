"""Kernel names with several definitions (issue 18): C++ overloads serving different ops, and the branches of
one preprocessor conditional. Each deleted definition is reported on the dispatch line of the op it served:
by missing_kernels, by `opgen check --kernels` and by the language server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from lsp.helpers import SERVER, make_client, open_document  # (tests/lsp: a top-level package under pytest)
from lsprotocol import types
from pytest_lsp import ClientServerConfig, client_capabilities

from opgen_lsp.analysis import kernel_nav
from opgen_lsp.analysis.kernel_nav import kernel_parameters
from opgen_lsp.analysis.kernels import missing_kernels
from opgen_lsp.cli import main
from opgen_lsp.index.kernels import KernelIndex
from opgen_lsp.index.native import NativeParser, TagsParser
from opgen_lsp.pieces.dest.native_declarations import kernel_parameter_types
from opgen_lsp.releases import DEFAULT
from opgen_lsp.syntax.cpp_scan import DEFINITION, Branch, scan

BITAND_TENSOR = "Tensor bitand(const Tensor& self, const Tensor& other) { return self; }\n"
BITAND_SCALAR = "Tensor bitand(const Tensor& self, const Scalar& other) { return self; }\n"
BITAND_TENSOR_OUT = "Tensor& bitand_out(const Tensor& self, const Tensor& other, Tensor& out) { return out; }\n"
BITAND_SCALAR_OUT = ("Tensor& bitand_out(const at::Tensor & self, at::Scalar const& other, Tensor &out) "
                     "{ return out; }\n")
BINARY = ("namespace at::native {\n" + BITAND_TENSOR + BITAND_SCALAR + BITAND_TENSOR_OUT + BITAND_SCALAR_OUT
          + "using hx_type = const Tensor&;\nTensor cell(const Tensor& input, hx_type hx) { return input; }\n}\n")
ENABLED = "Tensor mkldnn_thing(const Tensor& self) { return self; }\n"
PLACEHOLDER = "Tensor mkldnn_thing(const Tensor& self) { TORCH_CHECK(false, \"not compiled\"); }\n"
CONDITIONAL = f"""\
namespace at::native {{
#if AT_MKLDNN_ENABLED()
{ENABLED}Tensor mkldnn_other(const Tensor& self) {{ return self; }}
#else
{PLACEHOLDER}Tensor mkldnn_other(const Tensor& self) {{ TORCH_CHECK(false, "not compiled"); }}
#endif
#if defined(USE_VENDOR)
Tensor vendor_only(const Tensor& self) {{ return self; }}
#else
static_assert(0, "USE_VENDOR is required");
#endif
}}
"""
SOURCES = {"native/BinaryOps.cpp": BINARY, "native/mkldnn/Conditional.cpp": CONDITIONAL}

TAGS = "- tag: pt2_compliant_tag\n  desc: compliant\n"
OPS = """\
- func: bitand.Tensor(Tensor self, Tensor other) -> Tensor
  dispatch:
    CPU: bitand
- func: bitand.Scalar(Tensor self, Scalar other) -> Tensor
  dispatch:
    CPU: bitand
- func: bitand.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CPU: bitand_out
- func: bitand.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CPU: bitand_out
- func: cell(Tensor input, Tensor hx) -> Tensor
  dispatch:
    CPU: cell
- func: mkldnn_thing(Tensor self) -> Tensor
  dispatch:
    MkldnnCPU: mkldnn_thing
- func: mkldnn_other(Tensor self) -> Tensor
  dispatch:
    MkldnnCPU: mkldnn_other
- func: vendor_only(Tensor self) -> Tensor
  dispatch:
    CPU: vendor_only
"""
LINES = OPS.split("\n")


def dispatch_line(op: str) -> int:
    """The 0-based line of the (one) kernel under op's dispatch table."""
    return LINES.index(f"- func: {op}") + 2


def write_sources(folder: Path, yaml_folder: Path) -> None:
    for name, text in SOURCES.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (yaml_folder / "native_functions.yaml").write_text(OPS)
    (yaml_folder / "tags.yaml").write_text(TAGS)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    write_sources(tmp_path / "src", tmp_path)
    return tmp_path / "src"


def warnings(tree: Path) -> list[tuple[str, int, str]]:
    index = KernelIndex.build([str(tree)], workers=1)
    snapshot = NativeParser(release=DEFAULT).parse(OPS, TagsParser().parse(TAGS).names)
    found = missing_kernels(snapshot, index,
                            parameters=lambda f, b: kernel_parameter_types(f, b, DEFAULT.cpp_spelling))
    return sorted((d.code, d.span.start_line, d.message) for d in found)


def without(tree: Path, name: str, text: str) -> None:
    path = tree / name
    source = path.read_text()
    assert text in source
    path.write_text(source.replace(text, "\n" * text.count("\n")))  # (lines kept)


def test_the_definitions_record_their_parameter_types_and_branches() -> None:
    bitand = [s for s in scan(BINARY) if s.name == "bitand_out"]
    assert [s.params for s in bitand] == ["const Tensor&,const Tensor&,Tensor&", "const Tensor&,const Scalar&,Tensor&"]
    (cell,) = [s for s in scan(BINARY) if s.name == "cell"]
    assert cell.params == "const Tensor&,const Tensor&"  # the file's own alias spelled out
    things = [s for s in scan(CONDITIONAL) if s.name == "mkldnn_thing"]
    assert [s.branches for s in things] == [(Branch((1, 4), 0),), (Branch((1, 4), 1),)]
    # A branch that stops the build (static_assert(0), #error) is no configuration: one branch is left.
    (vendor,) = [s for s in scan(CONDITIONAL) if s.name == "vendor_only"]
    assert vendor.kind == DEFINITION and vendor.branches == ()


def test_nested_conditionals_if_0_and_unbalanced_branches() -> None:
    source = """\
namespace at::native {
#ifdef A
#if B
Tensor f(const Tensor& s) { return s; }
#endif
#else
Tensor f(const Tensor& s) { return s; }
#endif
#if 0
Tensor g(const Tensor& s) { return s; }
#else
Tensor g(const Tensor& s) { return s; }
#endif
#ifdef C
Tensor h(const Tensor& s, int64_t a) {
#else
Tensor h(const Tensor& s, int64_t b) {
#endif
  return s;
}
}
"""
    found = {(s.name, s.line): s.branches for s in scan(source) if s.kind == DEFINITION}
    # (#if B has one branch: no other configuration of it to compare with)
    assert found == {("f", 3): (Branch((1, 5), 0),), ("f", 6): (Branch((1, 5), 1),),
                     ("g", 11): (),  # `#if 0` code is never compiled, its #else always is
                     ("h", 14): ()}  # branches leaving braces open: only the first is read


def test_no_warning_when_every_overload_and_branch_is_there(tree: Path) -> None:
    assert warnings(tree) == []


@pytest.mark.parametrize(("text", "op"), [
    (BITAND_SCALAR, "bitand.Scalar(Tensor self, Scalar other) -> Tensor"),
    (BITAND_TENSOR, "bitand.Tensor(Tensor self, Tensor other) -> Tensor"),
    (BITAND_TENSOR_OUT, "bitand.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)"),
])
def test_a_deleted_overload_is_reported_on_the_op_it_served_only(tree: Path, text: str, op: str) -> None:
    without(tree, "native/BinaryOps.cpp", text)
    ((code, line, message),) = warnings(tree)
    assert (code, line) == ("OPG600", dispatch_line(op))
    assert "is not defined with its parameters" in message and "the definitions of that name take others" in message


def test_a_renamed_overload_is_reported_too(tree: Path) -> None:
    path = tree / "native/BinaryOps.cpp"
    path.write_text(BINARY.replace(BITAND_SCALAR_OUT, BITAND_SCALAR_OUT.replace("bitand_out", "bitand_out_renamed")))
    assert [(c, line) for c, line, _ in warnings(tree)] == [
        ("OPG600", dispatch_line("bitand.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)"))]


@pytest.mark.parametrize("text", [ENABLED, PLACEHOLDER])
def test_a_kernel_deleted_from_one_branch_is_reported_for_that_configuration(tree: Path, text: str) -> None:
    without(tree, "native/mkldnn/Conditional.cpp", text)
    ((code, line, message),) = warnings(tree)
    assert (code, line) == ("OPG602", dispatch_line("mkldnn_thing(Tensor self) -> Tensor"))
    kept, gone = (6, 2) if text == ENABLED else (3, 5)  # (1-based lines: the definition kept, the empty branch)
    assert f"is defined only in some branches of the preprocessor conditional at {tree}/native/mkldnn/" \
           f"Conditional.cpp:2: the branch at line {gone} defines none (the one at line {kept} " in message


def test_a_kernel_deleted_from_both_branches_is_missing(tree: Path) -> None:
    without(tree, "native/mkldnn/Conditional.cpp", ENABLED)
    without(tree, "native/mkldnn/Conditional.cpp", PLACEHOLDER)
    assert [(c, line) for c, line, _ in warnings(tree)] == [
        ("OPG600", dispatch_line("mkldnn_thing(Tensor self) -> Tensor"))]


def test_parameters_and_branches_survive_the_cache(tree: Path, tmp_path: Path) -> None:
    cache = tmp_path / "kernels.json"
    first = KernelIndex.build([str(tree)], cache=cache, workers=1)
    again = KernelIndex.build([str(tree)], cache=cache, workers=1)
    assert again.linked == first.linked and any(s.branches for f in again.linked.values() for s in f)


def check_json(capsys: pytest.CaptureFixture[str], tree: Path) -> list[tuple[str, int]]:
    capsys.readouterr()
    main(["check", "--kernels", str(tree), str(tree.parent / "native_functions.yaml"), "--format", "json"])
    found = json.loads(capsys.readouterr().out)
    return sorted((d["code"], d["range"]["start"]["line"]) for d in found if d["code"].startswith("OPG60"))


def test_opgen_check_reports_a_deleted_overload_and_branch(tree: Path, capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tree.parent / "cache"))
    assert check_json(capsys, tree) == []
    without(tree, "native/BinaryOps.cpp", BITAND_SCALAR_OUT)
    without(tree, "native/mkldnn/Conditional.cpp", PLACEHOLDER)
    assert check_json(capsys, tree) == sorted([
        ("OPG600", dispatch_line("bitand.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)")),
        ("OPG602", dispatch_line("mkldnn_thing(Tensor self) -> Tensor"))])


async def _until(client, uri: str, expect, timeout: float = 60.0) -> list[tuple[str, int]]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    latest: list[tuple[str, int]] = []
    while loop.time() < deadline:
        pushes = client.published.get(uri, [])
        latest = sorted((str(d.code), d.range.start.line) for d in (pushes[-1].diagnostics if pushes else [])
                        if str(d.code).startswith("OPG60"))
        if expect(latest):
            return latest
        await asyncio.sleep(0.05)
    raise AssertionError(f"diagnostics never matched: {latest}")


@pytest.mark.slow  # (over a second: the quick suite's budget; the full run has it)
@pytest.mark.asyncio
async def test_the_server_reports_a_deleted_overload_and_branch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # (the server inherits it)
    native = tmp_path / "aten" / "src" / "ATen" / "native"
    write_sources(native.parent, native)
    without(native, "BinaryOps.cpp", BITAND_SCALAR)  # (before the server indexes the folder)
    client = await ClientServerConfig(server_command=SERVER, client_factory=make_client).start()
    try:
        await client.initialize_session(types.InitializeParams(
            capabilities=client_capabilities("neovim"), root_uri=tmp_path.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="ws")],
            initialization_options={"debounceMs": 10}))
        uri = open_document(client, native / "native_functions.yaml", OPS)
        scalar = ("OPG600", dispatch_line("bitand.Scalar(Tensor self, Scalar other) -> Tensor"))
        assert await _until(client, uri, lambda found: found == [scalar]) == [scalar]
        without(native, "mkldnn/Conditional.cpp", ENABLED)
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[types.FileEvent(
            uri=(native / "mkldnn/Conditional.cpp").as_uri(), type=types.FileChangeType.Changed)]))
        branch = ("OPG602", dispatch_line("mkldnn_thing(Tensor self) -> Tensor"))
        assert await _until(client, uri, lambda found: len(found) == 2) == sorted([scalar, branch])
    finally:
        await client.shutdown_session()
        await client.stop()


def test_hover_and_go_to_definition_take_the_overload_of_the_op(tree: Path) -> None:
    index = KernelIndex.build([str(tree)], workers=1)
    snapshot = NativeParser(release=DEFAULT).parse(OPS, TagsParser().parse(TAGS).names)
    line = dispatch_line("bitand.Scalar(Tensor self, Scalar other) -> Tensor")
    ref = kernel_nav.kernel_at(snapshot, line, LINES[line].index("bitand") + 1)
    assert ref is not None
    params = kernel_parameters(snapshot, ref)
    assert params == "const Tensor&,const Scalar&"
    definitions, _ = kernel_nav.places(index, ref, params)
    assert [h.symbol.line for h in definitions] == [2]  # BinaryOps.cpp's second line of code: the Scalar overload
    shown = kernel_nav.hover_markdown(ref, index, "", str(tree), params=params)
    assert "Defined in:\n- `native/BinaryOps.cpp:3`\n" in shown
    assert "other ops' kernels):\n- `native/BinaryOps.cpp:2` (const Tensor&,const Tensor&)" in shown
