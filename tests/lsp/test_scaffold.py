"""The scaffold in the editor (issue 31, item 3): the code actions on a func: entry without kernels and the
opgen.scaffold command, end to end with one server for the module's single test. The edits it sends through
workspace/applyEdit, applied to the files, leave `opgen check --kernels` with nothing to report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from autograd_tree import KERNELS, KERNELS_PATH, NATIVE, NATIVE_PATH, write_tree
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from opgen_lsp.cli import main

from .helpers import SERVER, capabilities, make_client, open_document
from .test_workspace_features import apply

pytestmark = [pytest.mark.asyncio]

NEW_ENTRY = "\n- func: soft_clip(Tensor self, Scalar limit=1) -> Tensor\n  variants: function, method\n  tags: core\n"
BACKEND = "backend: PrivateUse1\ncpp_namespace: my_backend\nsupported: []\n"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, client_factory=make_client),
                    params=["visual-studio-code"])
async def editor(request: pytest.FixtureRequest, lsp_client: LanguageClient, tmp_path: Path):
    write_tree(tmp_path)
    (tmp_path / KERNELS_PATH).write_text(KERNELS)
    (tmp_path / "my_backend.yaml").write_text(BACKEND)
    lsp_client.applied = []  # type: ignore[attr-defined]
    _read_code_actions_as_editors_do(lsp_client)

    @lsp_client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        lsp_client.applied.append(params.edit)  # type: ignore[attr-defined]
        return types.ApplyWorkspaceEditResult(applied=True)

    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=capabilities(request.param), root_uri=tmp_path.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="ws")],
        initialization_options={"debounceMs": 10, "pytorchFormatCheck": False, "compatibilityBase": "off"}))
    lsp_client.root = tmp_path  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


def _read_code_actions_as_editors_do(client: LanguageClient) -> None:
    """lsprotocol's client-side hook reads every answer with a `command` key as a Command, also a CodeAction whose
    command is an object; editors tell them apart by the type of `command`, and so does this client."""
    converter = client.protocol._converter

    def structure(value: Any, _: type) -> types.Command | types.CodeAction:
        is_command = isinstance(value.get("command"), str)
        return converter.structure(value, types.Command if is_command else types.CodeAction)
    converter.register_structure_hook(types.Command | types.CodeAction, structure)


def _actions(client: LanguageClient, uri: str, line: int):
    where = types.Range(start=types.Position(line=line, character=3), end=types.Position(line=line, character=3))
    return client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=where, context=types.CodeActionContext(diagnostics=[])))


def _write_edit(root: Path, edit: types.WorkspaceEdit, client: LanguageClient) -> None:
    """Apply a WorkspaceEdit to the files on disk (a CreateFile makes an empty file)."""
    for change in edit.document_changes or []:
        if isinstance(change, types.CreateFile):
            path = Path(change.uri.removeprefix("file://"))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
            continue
        assert isinstance(change, types.TextDocumentEdit)
        path = Path(change.text_document.uri.removeprefix("file://"))
        path.write_text(apply(path.read_text(), list(change.edits), client))  # type: ignore[arg-type]


def _check_clean(root: Path, capsys) -> None:
    capsys.readouterr()
    assert main(["check", str(root), "--kernels", str(root)]) == 0
    out = capsys.readouterr().out
    assert "[OPG" not in out, out


async def test_scaffold_action_and_command(editor: LanguageClient, capsys):
    client = editor
    root: Path = client.root  # type: ignore[attr-defined]
    text = NATIVE + NEW_ENTRY
    native = root / NATIVE_PATH
    native.write_text(text)
    uri = open_document(client, native, text)
    new_line = text.split("\n").index("- func: soft_clip(Tensor self, Scalar limit=1) -> Tensor")

    # Offered on the entry without kernels (plain and structured: it has an out= variant); not on mul.Tensor,
    # whose in-place variant is already there.
    actions = await _actions(client, uri, new_line)
    scaffolds = [a for a in actions or [] if a.kind == types.CodeActionKind.RefactorRewrite]
    assert [a.title for a in scaffolds] == ["Scaffold kernels...", "Scaffold structured kernels..."]
    assert not [a for a in await _actions(client, uri, 0) or [] if a.kind == types.CodeActionKind.RefactorRewrite]

    # The structured action's command: the entry keeps its keys and gets structured_delegate, the in-place and
    # out= entries follow it, and the stubs go to a new file named after the op.
    command = scaffolds[1].command
    assert command is not None
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=command.command, arguments=command.arguments))
    assert result["applied"] is True and result["entries"] == ["soft_clip", "soft_clip_", "soft_clip.out"], result
    (edit,) = client.applied  # type: ignore[attr-defined]
    _write_edit(root, edit, client)
    written = native.read_text()
    assert written == text.rstrip("\n") + (
        "\n  structured_delegate: soft_clip.out\n\n"
        "- func: soft_clip_(Tensor(a!) self, Scalar limit=1) -> Tensor(a!)\n"
        "  structured_delegate: soft_clip.out\n  tags: core\n\n"
        "- func: soft_clip.out(Tensor self, Scalar limit=1, *, Tensor(a!) out) -> Tensor(a!)\n"
        "  structured: True\n  dispatch:\n    CPU: soft_clip_out\n  tags: core\n")
    code = (root / "aten/src/ATen/native/soft_clip.cpp").read_text()
    assert "TORCH_META_FUNC(soft_clip) (const at::Tensor & self, const at::Scalar & limit) {" in code
    assert "TORCH_IMPL_FUNC(soft_clip_out) (const at::Tensor & self, const at::Scalar & limit, " \
           "const at::Tensor & out) {" in code
    _check_clean(root, capsys)

    # The workspace command with a schema string, answered without applying: the edit holds the entries, a new
    # kernel file, the derivatives.yaml entry and the backend yaml's line.
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="opgen.scaffold", arguments=[{"schema": "twice(Tensor self) -> Tensor", "apply": False,
                                              "derivatives": True, "backendYaml": "my_backend.yaml"}]))
    assert result["applied"] is False and result["entries"] == ["twice", "twice_", "twice.out"], result
    assert len(client.applied) == 1  # type: ignore[attr-defined]
    changes = result["edit"]["documentChanges"]
    assert [c.get("kind") for c in changes] == [None, "create", None, None, None]
    assert changes[1]["uri"].endswith("/aten/src/ATen/native/twice.cpp")
    texts = {c["textDocument"]["uri"].rsplit("/", 1)[1]: c["edits"][0]["newText"] for c in changes if "edits" in c}
    assert "- func: twice_(Tensor(a!) self) -> Tensor(a!)\n  dispatch:\n    CPU: twice_\n" in texts["native_functions.yaml"]
    assert "at::Tensor & twice_(at::Tensor & self) {" in texts["twice.cpp"]
    assert texts["derivatives.yaml"] == "\n- name: twice(Tensor self) -> Tensor\n  self: not_implemented(\"twice\")\n"
    assert texts["my_backend.yaml"] == "supported:\n- twice"

    # A request that cannot be scaffolded answers why and the server goes on.
    refused = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="opgen.scaffold", arguments=["soft_clip(Tensor self, Scalar limit=1) -> Tensor"]))
    assert "already has soft_clip" in refused["error"]
    assert await _actions(client, uri, new_line) is not None
