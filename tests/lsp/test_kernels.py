"""The kernel index in the server (issue 9) and a backend's missing kernels (issue 6), end to end.

One server per editor for the whole PyTorch-shaped workspace (aten/src/ATen/native with C++ sources),
so that the index is built once per session: missing-kernel warnings, $/progress, hover, go to
definition, the stub quick fix, re-indexing a changed file, the severity setting and the cache.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from .helpers import CLIENTS, NATIVE, SERVER, TAGS, make_client, open_document, pos, uses_pull
from .test_workspace_features import apply, tid

pytestmark = [pytest.mark.asyncio, pytest.mark.testing_hooks({"kernelWorkers": 2}), pytest.mark.slow]

KERNEL_NATIVE = NATIVE + """
- func: relu_(Tensor(a!) self) -> Tensor(a!)
  dispatch:
    CPU, CUDA: relu_

- func: _fused_other(Tensor self) -> Tensor
  dispatch:
    CompositeExplicitAutograd: _fused_other
"""

SOURCES = {
    "BinaryOps.cpp": """\
#include <ATen/native/BinaryOps.h>
namespace at {
namespace meta {
TORCH_META_FUNC2(add, Tensor) (const Tensor& self, const Tensor& other, const Scalar& alpha) {}
} // namespace meta
namespace native {
TORCH_IMPL_FUNC(add_out) (const Tensor& self, const Tensor& other, const Scalar& alpha, const Tensor& out) {}
} // namespace native
} // namespace at
""",
    "Activation.cpp": """\
namespace at::native {
// Tensor relu_(Tensor& self) { return self; }  (commented out: does not count)
Tensor relu(const Tensor& self) {
  return self.clamp_min(0);
}
} // namespace at::native
""",
    "Fused.cpp": """\
namespace at::native {
Tensor _fused_thing(const Tensor& self) { return self; }
} // namespace at::native
""",
}

NATIVE_DIR = "aten/src/ATen/native"
EXTRA_FILES = 70


def _workspace(root: Path) -> Path:
    native = root / NATIVE_DIR
    native.mkdir(parents=True, exist_ok=True)
    (native / "native_functions.yaml").write_text(KERNEL_NATIVE, encoding="utf-8")
    (native / "tags.yaml").write_text(TAGS, encoding="utf-8")
    for name, text in SOURCES.items():
        (native / name).write_text(text, encoding="utf-8")
    # Enough files for a cold index to scan them in worker processes (started from the server's thread).
    (native / "extra").mkdir(exist_ok=True)
    for i in range(EXTRA_FILES):
        (native / "extra" / f"Extra{i}.cpp").write_text(
            f"namespace at::native {{\nTensor extra_{i}(const Tensor& self) {{ return self; }}\n}}\n", encoding="utf-8")
    return native


@pytest.fixture(scope="module")
def cache_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, client_factory=make_client), params=CLIENTS)
async def editor(request: pytest.FixtureRequest, lsp_client: LanguageClient, tmp_path: Path):
    _workspace(tmp_path)
    lsp_client.set_configuration({"debounceMs": 10}, section="opgen")
    result = await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities(request.param),
        root_uri=tmp_path.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="ws")],
        initialization_options={"debounceMs": 10},
    ))
    lsp_client.init_result = result  # type: ignore[attr-defined]
    lsp_client.root = tmp_path  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


@pytest.fixture(autouse=True)
def _cache(monkeypatch: pytest.MonkeyPatch, cache_home: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache_home))  # inherited by the server process


async def until(client: LanguageClient, uri: str, expect, timeout: float = 30.0) -> list[types.Diagnostic]:
    """The document's diagnostics once expect(diagnostics) holds (pulling again and again, or the latest push)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    latest: list[types.Diagnostic] = []
    while loop.time() < deadline:
        if uses_pull(client):
            report = await client.text_document_diagnostic_async(
                types.DocumentDiagnosticParams(text_document=tid(uri)))
            latest = list(getattr(report, "items", None) or [])
        else:
            seen = client.published.get(uri, [])  # type: ignore[attr-defined]
            latest = list(seen[-1].diagnostics) if seen else []
        if expect(latest):
            return latest
        await asyncio.sleep(0.05)
    raise AssertionError(f"diagnostics never matched: {[(d.code, d.message[:60]) for d in latest]}")


def kernel_codes(ds: list[types.Diagnostic]) -> list[tuple[str, int]]:
    return sorted((str(d.code), d.range.start.line) for d in ds if str(d.code).startswith("OPG60"))


async def test_kernel_index_in_the_server(editor: LanguageClient, cache_home: Path):
    client = editor
    native = client.root / NATIVE_DIR  # type: ignore[attr-defined]
    text = KERNEL_NATIVE
    uri = open_document(client, native / "native_functions.yaml", text)

    # Missing kernels, once the index is built in the background: relu_ (CPU, CUDA share the line) and
    # _fused_other; the commented-out relu_ does not count.
    relu_line = pos(client, text, "CPU, CUDA: relu_").line
    other_line = pos(client, text, "CompositeExplicitAutograd: _fused_other").line
    found = await until(client, uri, lambda ds: len(kernel_codes(ds)) == 3)
    assert kernel_codes(found) == [("OPG600", relu_line), ("OPG600", relu_line), ("OPG600", other_line)]
    relu_ = next(d for d in found if d.range.start.line == relu_line)
    assert relu_.severity == types.DiagnosticSeverity.Warning
    assert relu_.range == types.Range(start=types.Position(line=relu_line, character=len("    CPU, CUDA: ")),
                                      end=types.Position(line=relu_line, character=len("    CPU, CUDA: relu_")))
    assert "at::native::relu_" in relu_.message and "at::Tensor & relu_(at::Tensor & self);" in relu_.message

    # $/progress for the index (clients that accept server-initiated progress).
    if client.capabilities.window and client.capabilities.window.work_done_progress:
        tokens = [t for t in client.progress_reports if str(t).startswith("opgen-kernels")]
        assert len(tokens) == 1
        reports = client.progress_reports[tokens[0]]
        assert isinstance(reports[0], types.WorkDoneProgressBegin) and isinstance(reports[-1], types.WorkDoneProgressEnd)
        assert f"{3 + EXTRA_FILES} files" in (reports[-1].message or "")

    # Hover on a kernel name: where it is defined and the declaration it must have.
    at_relu = pos(client, text, "CPU, CUDA: relu\n", len("CPU, CUDA: r"))
    hover = await client.text_document_hover_async(types.HoverParams(text_document=tid(uri), position=at_relu))
    shown = hover.contents.value  # type: ignore[union-attr]
    assert "**at::native::relu**" in shown and "`aten/src/ATen/native/Activation.cpp:3`" in shown
    assert "TORCH_API at::Tensor relu(const at::Tensor & self);" in shown
    at_add = pos(client, text, "CPU, CUDA: add_out", len("CPU, CUDA: ad"))
    hover = await client.text_document_hover_async(types.HoverParams(text_document=tid(uri), position=at_add))
    shown = hover.contents.value  # type: ignore[union-attr]
    assert "structured kernel (TORCH_IMPL_FUNC)" in shown and "BinaryOps.cpp:7" in shown
    assert "void impl(const at::Tensor & self, const at::Tensor & other, const at::Scalar & alpha, " \
           "const at::Tensor & out);" in shown
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=tid(uri), position=pos(client, text, "CompositeExplicitAutograd: _fused_other", 30)))
    # (the whole of aten/src/ATen is indexed in a checkout, not only native/)
    assert "**Not defined** in aten/src/ATen\n" in hover.contents.value  # type: ignore[union-attr]

    # Go to definition: from the kernel name to its C++ definition.
    found_def = await client.text_document_definition_async(types.DefinitionParams(text_document=tid(uri),
                                                                                   position=at_relu))
    assert isinstance(found_def, list) and len(found_def) == 1
    assert found_def[0].uri == (native / "Activation.cpp").as_uri()
    assert found_def[0].range.start == types.Position(line=2, character=7)
    assert found_def[0].range.end == types.Position(line=2, character=11)
    found_def = await client.text_document_definition_async(types.DefinitionParams(text_document=tid(uri),
                                                                                   position=at_add))
    assert [(ln.uri.rsplit("/", 1)[-1], ln.range.start.line) for ln in found_def] == [("BinaryOps.cpp", 6)]  # type: ignore[union-attr]

    # The quick fix: relu_ goes into Activation.cpp (where relu, of the same family, is defined).
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=tid(uri), range=relu_.range, context=types.CodeActionContext(diagnostics=[relu_])))
    (create,) = [a for a in actions if a.title.startswith("Create ")]
    assert create.title == "Create at::native::relu_ in aten/src/ATen/native/Activation.cpp"
    cpp_uri = (native / "Activation.cpp").as_uri()
    (stub_edit,) = create.edit.changes[cpp_uri]  # type: ignore[union-attr,index]
    fixed = apply(SOURCES["Activation.cpp"], [stub_edit], client)
    assert fixed.startswith(SOURCES["Activation.cpp"])
    assert fixed[len(SOURCES["Activation.cpp"]):] == (
        "\nnamespace at::native {\n\nat::Tensor & relu_(at::Tensor & self) {\n"
        "  TORCH_CHECK_NOT_IMPLEMENTED(false, \"relu_: the kernel of relu_ is not implemented yet\");\n}\n\n"
        "} // namespace at::native\n")
    # _fused_other has no family with kernels: no place to put it, so no fix.
    other = next(d for d in found if d.range.start.line == other_line)
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=tid(uri), range=other.range, context=types.CodeActionContext(diagnostics=[other])))
    assert not [a for a in actions if a.title.startswith("Create ")]

    # Apply the fix on disk and report the change: the file is re-indexed and the warnings go.
    (native / "Activation.cpp").write_text(fixed, encoding="utf-8")
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=cpp_uri, type=types.FileChangeType.Changed)]))
    found = await until(client, uri, lambda ds: len(kernel_codes(ds)) == 1)
    assert kernel_codes(found) == [("OPG600", other_line)]

    # A saved file counts too: define _fused_other in Fused.cpp.
    fused = native / "Fused.cpp"
    fused.write_text(SOURCES["Fused.cpp"].replace("} // namespace",
                                                  "Tensor _fused_other(const Tensor& self) { return self; }\n"
                                                  "} // namespace"), encoding="utf-8")
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=tid(fused.as_uri())))
    await until(client, uri, lambda ds: kernel_codes(ds) == [])

    # Severity is a setting ("off" turns the check off); delete a definition to see it.
    fused.write_text(SOURCES["Fused.cpp"], encoding="utf-8")
    client.set_configuration({"debounceMs": 10, "kernelSeverity": "error"}, section="opgen")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"opgen": {"debounceMs": 10, "kernelSeverity": "error"}}))
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=tid(fused.as_uri())))
    found = await until(client, uri, lambda ds: [d.severity for d in ds if d.code == "OPG600"]
                        == [types.DiagnosticSeverity.Error])
    assert kernel_codes(found) == [("OPG600", other_line)]
    client.set_configuration({"debounceMs": 10, "kernelSeverity": "off"}, section="opgen")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"opgen": {"debounceMs": 10, "kernelSeverity": "off"}}))
    await until(client, uri, lambda ds: kernel_codes(ds) == [])

    # The index was cached for the next start.
    assert list((cache_home / "opgen").glob("kernels-*.json"))


async def test_no_kernel_check_outside_a_pytorch_workspace(tmp_path: Path):
    """Outside a PyTorch-shaped workspace (and without kernelDirs) nothing is indexed: checked in-process."""
    from opgen_lsp.lsp.kernels import kernel_roots

    assert kernel_roots((), str(tmp_path)) == ()
    _workspace(tmp_path)
    assert kernel_roots((), str(tmp_path)) == (str(tmp_path / "aten/src/ATen"),)  # all of ATen, not only native/
    assert kernel_roots(("src", "/abs"), str(tmp_path)) == (str(tmp_path / "src"), "/abs")
    # a configured checkout root stands for its aten/src/ATen, as `opgen check --kernels ROOT` does
    assert kernel_roots((".",), str(tmp_path)) == (str(tmp_path / "aten/src/ATen"),)


# ---------------------------------------------------------------- a backend's missing kernels (issue 6)

from .helpers import diagnostics as first_diagnostics  # noqa: E402
from .test_workspace_features import BACKEND, KERNELS, setup_backend  # noqa: E402


async def test_backend_missing_kernels_stub_fix_recheck_and_generate(client: LanguageClient):
    uri, _, _ = setup_backend(client)
    impl = client.root / "ops" / "kernels.cpp"  # type: ignore[attr-defined]
    found = await first_diagnostics(client, uri, 1)
    missing = sorted((d.range.start.line, str(d.code)) for d in found if d.code == "OPG530")
    assert missing == [(pos(client, BACKEND, "- add.out").line, "OPG530"),
                       (pos(client, BACKEND, "- soft_sign").line, "OPG530"),
                       (pos(client, BACKEND, "- _fused_thing").line, "OPG530")]
    soft_sign = next(d for d in found if d.code == "OPG530"
                     and d.range.start.line == pos(client, BACKEND, "- soft_sign").line)
    assert "PrivateUse1NativeFunctions::soft_sign" in soft_sign.message

    # The quick fix inserts the stub into the implementation file (a namespace block at the end, since this
    # file closes its namespace with a bare brace).
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=tid(uri), range=soft_sign.range, context=types.CodeActionContext(diagnostics=[soft_sign])))
    (insert,) = [a for a in actions if a.title.startswith("Insert a stub")]
    assert insert.title == "Insert a stub of this kernel into kernels.cpp"
    (stub_edit,) = insert.edit.changes[impl.as_uri()]  # type: ignore[union-attr,index]
    fixed = apply(KERNELS, [stub_edit], client)
    assert fixed == KERNELS + (
        "\nnamespace my_backend {\n\nat::Tensor PrivateUse1NativeFunctions::soft_sign(const at::Tensor & self) {\n"
        "  TORCH_CHECK_NOT_IMPLEMENTED(false, \"soft_sign (soft_sign) is not implemented yet\");\n}\n\n"
        "} // namespace my_backend\n")

    # Saving the implementation file re-checks the backend yaml.
    impl.write_text(fixed, encoding="utf-8")
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=tid(impl.as_uri())))
    found = await until(client, uri, lambda ds: sum(d.code == "OPG530" for d in ds) == 2)
    assert all(d.range.start.line != soft_sign.range.start.line for d in found if d.code == "OPG530")

    # opgen.generate with target "backend": gen_backend_stubs' files, in the output directory only.
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="opgen.generate", arguments=[{"uri": uri, "target": "backend"}]))
    out = Path(result["outputDir"])
    assert result["errors"] == [] and result["written"] == 3, result
    # The backend yaml's own folder (ops/my_backend.yaml -> build/ops/my_backend).
    assert out == (client.root / "build" / "ops" / "my_backend").resolve()  # type: ignore[attr-defined]
    assert sorted(p.name for p in out.iterdir()) == ["PrivateUse1NativeFunctions.h", "RegisterAutogradPrivateUse1.cpp",
                                                     "RegisterPrivateUse1.cpp"]
    header = (out / "PrivateUse1NativeFunctions.h").read_text(encoding="utf-8")
    assert "static at::Tensor soft_sign(const at::Tensor & self);" in header


async def test_meta_function_stub_in_process(tmp_path: Path):
    """OPG601 (no TORCH_META_FUNC): the fix's stub is TORCH_META_FUNC2 with the meta signature, in at::meta."""
    from opgen_lsp.analysis import kernel_nav
    from opgen_lsp.analysis.kernel_nav import kernel_declaration
    from opgen_lsp.analysis.kernels import missing_kernels
    from opgen_lsp.index.kernels import KernelIndex
    from opgen_lsp.index.native import NativeParser, TagsParser
    from opgen_lsp.releases import DEFAULT

    native = _workspace(tmp_path)
    binary = native / "BinaryOps.cpp"
    binary.write_text(SOURCES["BinaryOps.cpp"].replace("TORCH_META_FUNC2(add, Tensor)", "// no meta"), encoding="utf-8")
    index = KernelIndex.build([str(native)], cache=None, workers=1)
    snapshot = NativeParser(release=DEFAULT).parse(KERNEL_NATIVE, TagsParser().parse(TAGS).names)
    (meta,) = [d for d in missing_kernels(snapshot, index) if d.code == "OPG601"]
    ref = kernel_nav.kernel_for_diagnostic(snapshot, meta.code, meta.span)
    assert ref is not None and ref.macro == "TORCH_META_FUNC2(add, Tensor)"
    assert kernel_nav.stub_for(ref, kernel_declaration(snapshot, ref)) == (
        "namespace at::meta {\n\nTORCH_META_FUNC2(add, Tensor) (const at::Tensor & self, const at::Tensor & other, "
        "const at::Scalar & alpha) {\n  TORCH_CHECK_NOT_IMPLEMENTED(false, \"add_Tensor: the meta function of add.out "
        "is not implemented yet\");\n}\n\n} // namespace at::meta\n")
    # It goes beside the family's other kernels (add_out's TORCH_IMPL_FUNC is in BinaryOps.cpp).
    assert kernel_nav.stub_file(index, snapshot, ref) == str(binary)


async def test_warm_up_parses_a_checkouts_native_functions_yaml_before_it_is_opened(tmp_path: Path):
    """In-process: the warmed parser is the one the document's analysis uses, and the result is the same."""
    from opgen_lsp.lsp.workspace import Workspace

    native = _workspace(tmp_path)
    path = native / "native_functions.yaml"
    uri = path.as_uri()
    warm = Workspace(str(tmp_path))
    assert warm.warm(uri, str(path)) is True
    parser = warm._native_parsers[uri]
    assert warm.warm(uri, str(path)) is False  # once
    edited = KERNEL_NATIVE.replace("variants: method\n", "variants: method, function\n", 1)
    warm.open(uri, str(path), edited, 1)
    cold = Workspace(str(tmp_path))
    cold.open(uri, str(path), edited, 1)
    assert warm.analyse(uri).diagnostics == cold.analyse(uri).diagnostics  # type: ignore[union-attr]
    assert warm._native_parsers[uri] is parser
