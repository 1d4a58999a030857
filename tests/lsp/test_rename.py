"""Rename, references and highlights of operators, overloads and kernels across a PyTorch-shaped tree, end to end;
then inlay hints, selection ranges and document links.

One server for the module (its kernel index is built once): native_functions.yaml, tags.yaml, derivatives.yaml,
deprecated.yaml, a backend yaml and a C++ source. A rename's WorkspaceEdit is applied to a copy of the tree and
`opgen check` (in-process) of the copy reports nothing the original did not.
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from opgen_lsp.cli.main import main
from opgen_lsp.lsp import rename as rename_lsp
from opgen_lsp.lsp.convert import UTF16
from opgen_lsp.lsp.workspace import Workspace

from .helpers import SERVER, make_client, open_document, pos

pytestmark = pytest.mark.asyncio(loop_scope="module")

NATIVE = """\
- func: scale.Tensor(Tensor self, Tensor other) -> Tensor
  variants: function, method
  structured_delegate: scale.out

- func: scale_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
  variants: method
  structured_delegate: scale.out

- func: scale.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  dispatch:
    CPU: scale_out

- func: shrink(Tensor self) -> Tensor
  dispatch:
    CPU: shrink_cpu
  autogen: shrink.out

- func: blend(Tensor self, Tensor other) -> Tensor
# The kernels are in Scale.cpp (aten/src/ATen/native/Scale.cpp); missing.cpp is not there.
"""

DERIVATIVES = """\
- name: scale.Tensor(Tensor self, Tensor other) -> Tensor
  self: grad * other
  other: grad * self

- name: shrink(Tensor self) -> Tensor
  self: grad
"""

DEPRECATED = """\
- name: scale(Tensor self, Tensor other) -> Tensor
  aten: scale(self, other)
"""

BACKEND = """\
backend: XLA
cpp_namespace: torch_xla
supported:
- scale.Tensor
- shrink
"""

CPP = """\
namespace at {
namespace meta {
TORCH_META_FUNC2(scale, Tensor) (const Tensor& self, const Tensor& other) {}
} // namespace meta
namespace native {
TORCH_IMPL_FUNC(scale_out) (const Tensor& self, const Tensor& other, const Tensor& out) {}
Tensor shrink_cpu(const Tensor& self) { return self; }
Tensor blend(const Tensor& self, const Tensor& other) {
  // native::shrink_cpu in a comment is not a call
  return at::scale(at::native::shrink_cpu(self), other);
}
} // namespace native
} // namespace at
"""

XLA_CPP = """\
namespace torch_xla {
at::Tensor XLANativeFunctions::scale(const at::Tensor& self, const at::Tensor& other) { return self; }
at::Tensor XLANativeFunctions::shrink(const at::Tensor& self) { return self; }
} // namespace torch_xla
"""

TREE = {
    "aten/src/ATen/native/native_functions.yaml": NATIVE,
    "aten/src/ATen/native/tags.yaml": "- tag: core\n  desc: Core ATen operators.\n",
    "aten/src/ATen/native/Scale.cpp": CPP,
    "tools/autograd/derivatives.yaml": DERIVATIVES,
    "tools/autograd/deprecated.yaml": DEPRECATED,
    "xla/xla_native_functions.yaml": BACKEND,
    "xla/aten_xla_type.cpp": XLA_CPP,  # the backend's kernels (the C++ files beside its yaml)
}
NATIVE_PATH = "aten/src/ATen/native/native_functions.yaml"


def write_tree(root: Path) -> Path:
    for relative, text in TREE.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tree(tmp_path_factory.mktemp("tree"))


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, client_factory=make_client), scope="module")
async def client(lsp_client: LanguageClient, tree: Path, tmp_path_factory: pytest.TempPathFactory):
    # The kernel index's cache goes to a folder of this module's own (inherited by the server process).
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
        patch.delenv("OPGEN_LSP_TESTING", raising=False)
        capabilities = client_capabilities("visual-studio-code")  # (which refreshes inlay hints: not in this set)
        capabilities.workspace.inlay_hint = types.InlayHintWorkspaceClientCapabilities(  # type: ignore[union-attr]
            refresh_support=True)
        result = await lsp_client.initialize_session(types.InitializeParams(
            capabilities=capabilities, root_uri=tree.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=tree.as_uri(), name="ws")],
            initialization_options={"debounceMs": 10, "pytorchFormatCheck": False, "compatibilityBase": "off"}))
    lsp_client.init_result = result  # type: ignore[attr-defined]
    lsp_client.root = tree  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


def tid(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


def relative(root: Path, uri: str) -> str:
    return os.path.relpath(unquote(urlparse(uri).path), root)


def places(root: Path, locations) -> list[tuple[str, int, int, int]]:
    return sorted((relative(root, loc.uri), loc.range.start.line, loc.range.start.character, loc.range.end.character)
                  for loc in locations)


async def references(client: LanguageClient, uri: str, at: types.Position, declaration: bool = True,
                     cpp: bool = True) -> list[tuple[str, int, int, int]]:
    """The references, once the kernel index is there (a place in its C++ among them) when `cpp`."""
    for _ in range(200):
        found = await client.text_document_references_async(types.ReferenceParams(
            text_document=tid(uri), position=at, context=types.ReferenceContext(include_declaration=declaration)))
        shown = places(client.root, found or [])  # type: ignore[attr-defined]
        if not cpp or any(p[0].startswith("aten/") and p[0].endswith(".cpp") for p in shown):
            return shown
        await asyncio.sleep(0.05)
    raise AssertionError(f"no C++ reference came: {shown}")


def native_uri(client: LanguageClient) -> str:
    return open_document(client, client.root / NATIVE_PATH)  # type: ignore[attr-defined]


async def test_capabilities_are_advertised(client: LanguageClient):
    caps = client.init_result.capabilities  # type: ignore[attr-defined]
    assert caps.rename_provider == types.RenameOptions(prepare_provider=True)
    assert caps.references_provider and caps.document_highlight_provider
    assert caps.inlay_hint_provider == types.InlayHintOptions(resolve_provider=False)
    assert caps.selection_range_provider and caps.document_link_provider == types.DocumentLinkOptions(
        resolve_provider=False)


async def test_references_of_an_operator_across_files(client: LanguageClient):
    uri = native_uri(client)
    # From a structured_delegate value: every scale.* name in the yamls and the names C++ derives from it.
    found = await references(client, uri, pos(client, NATIVE, "delegate: scale.out", len("delegate: sc")))
    assert found == [
        ("aten/src/ATen/native/Scale.cpp", 2, 17, 22),  # TORCH_META_FUNC2(scale, Tensor)
        ("aten/src/ATen/native/Scale.cpp", 9, 13, 18),  # at::scale(...)
        (NATIVE_PATH, 0, 8, 13), (NATIVE_PATH, 2, 23, 28), (NATIVE_PATH, 4, 8, 13), (NATIVE_PATH, 6, 23, 28),
        (NATIVE_PATH, 8, 8, 13),
        ("tools/autograd/deprecated.yaml", 0, 8, 13), ("tools/autograd/deprecated.yaml", 1, 8, 13),
        ("tools/autograd/derivatives.yaml", 0, 8, 13),
        ("xla/aten_xla_type.cpp", 1, 31, 36),  # XLANativeFunctions::scale
        ("xla/xla_native_functions.yaml", 3, 2, 7),
    ]
    # Without the declaration: the func: of scale.Tensor is left out.
    without = await references(client, uri, pos(client, NATIVE, "scale.Tensor"), declaration=False)
    assert (NATIVE_PATH, 0, 8, 13) not in without and len(without) == len(found) - 1


async def test_references_of_an_overload_and_a_kernel(client: LanguageClient):
    uri = native_uri(client)
    found = await references(client, uri, pos(client, NATIVE, "scale_.Tensor", len("scale_.T")))
    assert found == [
        ("aten/src/ATen/native/Scale.cpp", 2, 24, 30),  # TORCH_META_FUNC2(scale, Tensor)
        (NATIVE_PATH, 0, 14, 20), (NATIVE_PATH, 4, 15, 21),
        ("tools/autograd/derivatives.yaml", 0, 14, 20), ("xla/xla_native_functions.yaml", 3, 8, 14),
    ]
    kernel = await references(client, uri, pos(client, NATIVE, "CPU: shrink_cpu", len("CPU: shr")))
    assert kernel == [("aten/src/ATen/native/Scale.cpp", 6, 7, 17),  # the definition
                      ("aten/src/ATen/native/Scale.cpp", 9, 31, 41),  # at::native::shrink_cpu(self)
                      (NATIVE_PATH, 15, 9, 19)]
    structured = await references(client, uri, pos(client, NATIVE, "CPU: scale_out", len("CPU: s")))
    assert structured == [("aten/src/ATen/native/Scale.cpp", 5, 16, 25), (NATIVE_PATH, 11, 9, 18)]
    # From the backend yaml and from derivatives.yaml: the same operator.
    backend = open_document(client, client.root / "xla/xla_native_functions.yaml")  # type: ignore[attr-defined]
    shrink = await references(client, uri, pos(client, NATIVE, "func: shrink", 7), cpp=False)
    assert shrink == [(NATIVE_PATH, 13, 8, 14), (NATIVE_PATH, 16, 11, 17), ("tools/autograd/derivatives.yaml", 4, 8, 14),
                      ("xla/aten_xla_type.cpp", 2, 31, 37), ("xla/xla_native_functions.yaml", 4, 2, 8)]
    assert await references(client, backend, pos(client, BACKEND, "- shrink", 3), cpp=False) == shrink
    derivatives = open_document(client, client.root / "tools/autograd/derivatives.yaml")  # type: ignore[attr-defined]
    assert await references(client, derivatives, pos(client, DERIVATIVES, "shrink(", 2), cpp=False) == shrink


async def test_highlights_in_the_document(client: LanguageClient):
    uri = native_uri(client)
    found = await client.text_document_document_highlight_async(types.DocumentHighlightParams(
        text_document=tid(uri), position=pos(client, NATIVE, "autogen: shrink.out", len("autogen: s"))))
    assert [(h.range.start.line, h.range.start.character, h.kind) for h in found] == [
        (13, 8, types.DocumentHighlightKind.Write), (16, 11, types.DocumentHighlightKind.Read)]
    nothing = await client.text_document_document_highlight_async(types.DocumentHighlightParams(
        text_document=tid(uri), position=pos(client, NATIVE, "variants: function")))
    assert not nothing


async def test_prepare_rename_and_refusals(client: LanguageClient):
    uri = native_uri(client)
    ready = await client.text_document_prepare_rename_async(types.PrepareRenameParams(
        text_document=tid(uri), position=pos(client, NATIVE, "scale_.Tensor", 5)))
    assert ready == types.PrepareRenamePlaceholder(range=types.Range(start=types.Position(line=4, character=8),
                                                                     end=types.Position(line=4, character=13)),
                                                   placeholder="scale")
    with pytest.raises(JsonRpcException, match="put the cursor on one"):
        await client.text_document_prepare_rename_async(types.PrepareRenameParams(
            text_document=tid(uri), position=pos(client, NATIVE, "variants: function")))

    async def refused(marker: str, offset: int, new: str) -> str:
        with pytest.raises(JsonRpcException) as caught:
            await client.text_document_rename_async(types.RenameParams(
                text_document=tid(uri), position=pos(client, NATIVE, marker, offset), new_name=new))
        assert caught.value.code == types.LSPErrorCodes.RequestFailed
        return str(caught.value)

    assert "collide with the existing operator shrink.out" in await refused("scale.Tensor", 1, "shrink")
    assert "'9lives' does not start with a letter" in await refused("scale.Tensor", 1, "9lives")
    assert "reads as the in-place variant" in await refused("scale.Tensor", 1, "grow_")
    assert "collide with the existing operator scale.out" in await refused("scale.Tensor", 7, "out")
    assert "shrink_cpu already exists (a dispatch table names it on line 16)" in await refused(
        "CPU: scale_out", 6, "shrink_cpu")
    assert "at::native::blend is already defined in C++ (" in await refused("CPU: scale_out", 6, "blend")


def check(root: Path, capsys: pytest.CaptureFixture[str]) -> collections.Counter[tuple[str, str]]:
    """What `opgen check --kernels` reports of the tree: (code, file name) counted."""
    capsys.readouterr()
    main(["check", "--format", "json", "--kernels", str(root), "--native-functions", str(root / NATIVE_PATH),
          "--impl-path", str(root / "xla" / "aten_xla_type.cpp"), str(root / "aten"), str(root / "tools"),
          str(root / "xla")])
    found = json.loads(capsys.readouterr().out)
    return collections.Counter((d["code"], os.path.basename(d["path"])) for d in found)


def applied(root: Path, edit: types.WorkspaceEdit, into: Path) -> Path:
    """The tree copied to `into` with the edit applied (ASCII texts: code units are characters)."""
    shutil.copytree(root, into)
    for uri, edits in (edit.changes or {}).items():
        path = into / relative(root, uri)
        lines = path.read_text(encoding="utf-8").split("\n")
        for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
            assert e.range.start.line == e.range.end.line
            line = lines[e.range.start.line]
            lines[e.range.start.line] = line[:e.range.start.character] + e.new_text + line[e.range.end.character:]
        path.write_text("\n".join(lines), encoding="utf-8")
    return into


async def test_rename_leaves_the_check_as_it_was(client: LanguageClient, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]):
    root: Path = client.root  # type: ignore[attr-defined]
    uri = native_uri(client)
    await references(client, uri, pos(client, NATIVE, "scale.Tensor"))  # (the kernel index is there)
    before = check(root, capsys)
    assert before == collections.Counter()  # (the tree is clean: a rename must keep it so)

    async def rename(marker: str, offset: int, new: str) -> types.WorkspaceEdit:
        found = await client.text_document_rename_async(types.RenameParams(
            text_document=tid(uri), position=pos(client, NATIVE, marker, offset), new_name=new))
        assert found is not None
        return found

    # The operator, from its in-place variant: every file, C++ too.
    edit = await rename("scale_.Tensor", 2, "rescale")
    renamed = applied(root, edit, tmp_path / "operator")
    assert (renamed / NATIVE_PATH).read_text().count("rescale") == 5
    assert "- func: rescale_.Tensor(" in (renamed / NATIVE_PATH).read_text()
    assert "TORCH_META_FUNC2(rescale, Tensor)" in (renamed / "aten/src/ATen/native/Scale.cpp").read_text()
    assert "aten: rescale(self, other)" in (renamed / "tools/autograd/deprecated.yaml").read_text()
    assert "- rescale.Tensor\n" in (renamed / "xla/xla_native_functions.yaml").read_text()
    assert "XLANativeFunctions::rescale(" in (renamed / "xla/aten_xla_type.cpp").read_text()
    assert check(renamed, capsys) == before
    # (the check sees a rename left half done: the backend, derivatives and deprecated yamls and the meta
    # function that still name scale)
    half = types.WorkspaceEdit(changes={u: e for u, e in (edit.changes or {}).items() if u.endswith(NATIVE_PATH)})
    assert {code for code, _ in check(applied(root, half, tmp_path / "half"), capsys)} == {"OPG509", "OPG601", "OPG704", "OPG743"}

    # An overload: its in-place sibling, derivatives.yaml, the backend yaml and the meta function follow.
    edit = await rename("scale.Tensor", 8, "Other")
    renamed = applied(root, edit, tmp_path / "overload")
    assert "TORCH_META_FUNC2(scale, Other)" in (renamed / "aten/src/ATen/native/Scale.cpp").read_text()
    assert "- name: scale.Other(" in (renamed / "tools/autograd/derivatives.yaml").read_text()
    assert check(renamed, capsys) == before

    # A kernel: the dispatch value, its definition and a qualified call (not the comment).
    edit = await rename("CPU: shrink_cpu", 6, "shrink_kernel")
    renamed = applied(root, edit, tmp_path / "kernel")
    cpp = (renamed / "aten/src/ATen/native/Scale.cpp").read_text()
    assert cpp.count("shrink_kernel") == 2 and "// native::shrink_cpu in a comment" in cpp
    assert check(renamed, capsys) == before

    # The operator whose kernel is named after it (no dispatch table): its C++ definition follows.
    edit = await rename("func: blend", 7, "mix")
    renamed = applied(root, edit, tmp_path / "implicit")
    assert "Tensor mix(const Tensor& self" in (renamed / "aten/src/ATen/native/Scale.cpp").read_text()
    assert check(renamed, capsys) == before


# ---------------------------------------------------------------- inlay hints, selection ranges, document links

def whole(text: str) -> types.Range:
    return types.Range(start=types.Position(line=0, character=0),
                       end=types.Position(line=text.count("\n"), character=0))


async def test_selection_ranges(client: LanguageClient):
    uri = native_uri(client)
    found = await client.text_document_selection_range_async(types.SelectionRangeParams(
        text_document=tid(uri), positions=[pos(client, NATIVE, "scale_.Tensor", 9)]))
    chain = []
    at: types.SelectionRange | None = found[0]
    while at is not None:
        chain.append((at.range.start.line, at.range.start.character, at.range.end.line, at.range.end.character))
        at = at.parent
    func = len("- func: scale_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)")
    assert chain == [(4, 15, 4, 21),  # the overload
                     (4, 8, 4, func),  # the func: value
                     (4, 2, 4, func),  # the key and its value
                     (4, 0, 6, len("  structured_delegate: scale.out")),  # the entry
                     (0, 0, NATIVE.count("\n"), 0)]  # the document


async def test_document_links(client: LanguageClient):
    uri = native_uri(client)
    found = await client.text_document_document_link_async(types.DocumentLinkParams(text_document=tid(uri)))
    cpp = (client.root / "aten/src/ATen/native/Scale.cpp").as_uri()  # type: ignore[attr-defined]
    comment = NATIVE.split("\n")[-2]
    bare, full = comment.index("Scale.cpp"), comment.index("aten/src")
    line = NATIVE.count("\n") - 1
    assert [(link.range.start.line, link.range.start.character, link.range.end.character, link.target)
            for link in found] == [
        (11, 9, 18, f"{cpp}#L6"),  # scale_out: its TORCH_IMPL_FUNC
        (15, 9, 19, f"{cpp}#L7"),  # shrink_cpu: its definition
        (line, bare, bare + 9, cpp), (line, full, full + 30, cpp),  # the comment's files that exist (not missing.cpp)
    ]


async def test_inlay_hints(client: LanguageClient):
    uri = native_uri(client)
    delegate = len("  structured_delegate: scale.out")
    hints = await client.text_document_inlay_hint_async(types.InlayHintParams(text_document=tid(uri),
                                                                              range=whole(NATIVE)))
    assert [(h.position.line, h.position.character, h.label) for h in hints] == [
        (2, delegate, "→ CPU: scale_out"), (6, delegate, "→ CPU: scale_out"),
        (11, len("    CPU: scale_out"), "Scale.cpp:6"), (15, len("    CPU: shrink_cpu"), "Scale.cpp:7")]
    assert hints[2].tooltip == "at::native::structured_scale_out::impl: aten/src/ATen/native/Scale.cpp:6"
    # Only the asked lines; a kernel nobody defined reads "missing" (the document as edited, not saved).
    text = NATIVE + "- func: lost(Tensor self) -> Tensor\n  dispatch:\n    CPU: lost_cpu\n"
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
    asked = types.Range(start=types.Position(line=12, character=0), end=whole(text).end)
    hints = await client.text_document_inlay_hint_async(types.InlayHintParams(text_document=tid(uri), range=asked))
    assert [(h.position.line, h.label) for h in hints] == [(15, "Scale.cpp:7"), (text.count("\n") - 1, "missing")]
    # A C++ file defining it comes (a watched-file change): the client is asked to refresh its hints, which now
    # say where the kernel is.
    refreshes = client.inlay_hint_refreshes  # type: ignore[attr-defined]
    lost = client.root / "aten/src/ATen/native/Lost.cpp"  # type: ignore[attr-defined]
    lost.write_text("namespace at::native {\nTensor lost_cpu(const Tensor& self) { return self; }\n}\n")
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=lost.as_uri(), type=types.FileChangeType.Created)]))
    for _ in range(200):
        if client.inlay_hint_refreshes > refreshes:  # type: ignore[attr-defined]
            break
        await asyncio.sleep(0.02)
    assert client.inlay_hint_refreshes > refreshes  # type: ignore[attr-defined]
    hints = await client.text_document_inlay_hint_async(types.InlayHintParams(text_document=tid(uri), range=asked))
    assert [h.label for h in hints] == ["Scale.cpp:7", "Lost.cpp:2"]


async def test_a_document_without_an_analysis_gets_empty_answers(client: LanguageClient):
    uri = (client.root / "not-open.yaml").as_uri()  # type: ignore[attr-defined]
    at = types.Position(line=0, character=0)
    # (an empty list comes back from the client's converter as an empty tuple; None would fail)
    assert await client.text_document_references_async(types.ReferenceParams(
        text_document=tid(uri), position=at, context=types.ReferenceContext(include_declaration=True))) == ()
    assert await client.text_document_document_highlight_async(types.DocumentHighlightParams(
        text_document=tid(uri), position=at)) == ()
    assert await client.text_document_prepare_rename_async(types.PrepareRenameParams(
        text_document=tid(uri), position=at)) is None
    assert await client.text_document_inlay_hint_async(types.InlayHintParams(
        text_document=tid(uri), range=types.Range(start=at, end=at))) == ()
    assert await client.text_document_document_link_async(types.DocumentLinkParams(text_document=tid(uri))) == ()
    assert await client.text_document_selection_range_async(types.SelectionRangeParams(
        text_document=tid(uri), positions=[at])) == ()


async def test_no_rename_while_the_kernel_index_is_being_built(tree: Path):
    """In-process: with kernel roots but no index yet, a rename would leave the C++ behind, so it waits."""
    workspace = Workspace(root=str(tree))
    workspace.kernels.roots = (str(tree / "aten/src/ATen"),)
    native = tree / NATIVE_PATH
    workspace.open(native.as_uri(), str(native), NATIVE, 1)
    analysis = workspace.analyse(native.as_uri())
    assert analysis is not None
    with pytest.raises(rename_lsp.Refused, match="still being built"):
        rename_lsp.rename(workspace, analysis, types.Position(line=0, character=9), "rescale", UTF16)
