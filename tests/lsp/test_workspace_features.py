"""Backend yamls, cross-file re-checks, completion of types and autogen names, signature help, code actions,
semantic tokens, code lenses and the commands, end to end as VS Code and as Neovim."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from .helpers import NATIVE, TAGS, current_diagnostics, diagnostics, edit, open_document, pos, rng, uses_pull, write

pytestmark = pytest.mark.asyncio

# The test native_functions.yaml plus a composite op (no dispatch: CompositeImplicitAutograd) and a random one.
EXTRA = """
- func: soft_sign(Tensor self) -> Tensor
  variants: function

- func: rand_like_thing(Tensor self, *, Generator? generator=None) -> Tensor
  dispatch:
    CPU: rand_like_thing
  tags: core
"""
FULL_NATIVE = NATIVE + EXTRA

BACKEND = """\
# A backend for the tests.
backend: PrivateUse1
cpp_namespace: my_backend
supported:
- relu
- add.out
- soft_sign
autograd:
- _fused_thing
"""

KERNELS = """\
#include "PrivateUse1NativeFunctions.h"
namespace my_backend {
at::Tensor PrivateUse1NativeFunctions::relu(const at::Tensor & self) {
  return self;
}
}
"""


def tid(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


def apply(text: str, edits: list[types.TextEdit], client: LanguageClient) -> str:
    """Apply LSP text edits (ASCII test texts: code units are characters)."""
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)

    def at(p: types.Position) -> int:
        return offsets[p.line] + p.character
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:at(e.range.start)] + e.new_text + text[at(e.range.end):]
    return text


def setup_backend(client: LanguageClient, native: str = FULL_NATIVE, backend: str = BACKEND,
                  open_native: bool = False) -> tuple[str, str | None, Path]:
    native_path = write(client, "ops/native_functions.yaml", native)
    write(client, "ops/tags.yaml", TAGS)
    write(client, "ops/kernels.cpp", KERNELS)
    backend_path = write(client, "ops/my_backend.yaml", backend)
    native_uri = open_document(client, native_path) if open_native else None
    return open_document(client, backend_path), native_uri, native_path


async def hover_text(client: LanguageClient, uri: str, position: types.Position) -> str:
    hover = await client.text_document_hover_async(types.HoverParams(text_document=tid(uri), position=position))
    assert hover is not None
    return hover.contents.value  # type: ignore[union-attr]


# ---------------------------------------------------------------- backend yamls

async def test_backend_yaml_diagnostics_and_fix(client: LanguageClient):
    text = BACKEND.replace("- relu\n", "- reluu\n")
    uri, _, _ = setup_backend(client, backend=text)
    found = await diagnostics(client, uri, 1)
    codes = sorted(str(d.code) for d in found)
    assert "OPG509" in codes and "OPG521" in codes
    unknown = next(d for d in found if d.code == "OPG509")
    assert unknown.range == rng(client, text, "reluu")
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=tid(uri), range=unknown.range, context=types.CodeActionContext(diagnostics=[unknown])))
    titles = [a.title for a in actions]
    assert "Replace with 'relu'" in titles
    fix = next(a for a in actions if a.title == "Replace with 'relu'")
    assert apply(text, fix.edit.changes[uri], client) == BACKEND  # type: ignore[union-attr,index]


async def test_backend_hover_completion_definition(client: LanguageClient):
    uri, _, native_path = setup_backend(client)
    await diagnostics(client, uri, 1)
    shown = await hover_text(client, uri, pos(client, BACKEND, "- relu", 3))
    assert "PrivateUse1NativeFunctions::relu" in shown
    assert "kernels.cpp:3" in shown
    assert "static at::Tensor relu(const at::Tensor & self);" in shown
    shown = await hover_text(client, uri, pos(client, BACKEND, "- soft_sign", 3))
    assert "**Not defined**" in shown
    shown = await hover_text(client, uri, pos(client, BACKEND, "cpp_namespace", 2))
    assert "namespace" in shown

    location = await client.text_document_definition_async(types.DefinitionParams(
        text_document=tid(uri), position=pos(client, BACKEND, "- add.out", 4)))
    assert isinstance(location, types.Location)
    assert location.uri == native_path.as_uri()
    assert location.range.start == pos(client, FULL_NATIVE, "add.out(")
    assert location.range.end.character - location.range.start.character == len("add.out")

    # Completion of op names on a new item.
    edit(client, uri, 2, types.Range(start=pos(client, BACKEND, "autograd:"), end=pos(client, BACKEND, "autograd:")),
         "- ad\n")
    items = await client.text_document_completion_async(types.CompletionParams(
        text_document=tid(uri), position=types.Position(line=pos(client, BACKEND, "autograd:").line, character=4)))
    labels = {i.label: i for i in items.items}  # type: ignore[union-attr]
    assert {"add.Tensor", "add.out", "relu", "_fused_thing.out"} <= set(labels)
    assert labels["add.out"].detail == "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)"


async def test_editing_native_functions_rechecks_backend_yamls(client: LanguageClient):
    uri, native_uri, _ = setup_backend(client, open_native=True)
    assert native_uri is not None
    first = await diagnostics(client, uri, 1)
    assert "OPG509" not in {d.code for d in first}
    # Rename relu in the open native_functions.yaml: the backend yaml's 'relu' becomes unknown.
    where = pos(client, FULL_NATIVE, "relu(Tensor self)", 4)
    edit(client, native_uri, 2, types.Range(start=where, end=where), "_x")
    if uses_pull(client):
        await asyncio.sleep(0.3)
        found = await diagnostics(client, uri)
    else:
        found = await current_diagnostics(client, uri, lambda ds: any(d.code == "OPG509" for d in ds))
    assert any(d.code == "OPG509" and "relu" in d.message for d in found)


async def test_native_on_disk_is_watched(client: LanguageClient):
    uri, _, native_path = setup_backend(client)
    assert "OPG509" not in {d.code for d in await diagnostics(client, uri, 1)}
    native_path.write_text(FULL_NATIVE.replace("- func: soft_sign", "- func: soft_sign2"), encoding="utf-8")
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=native_path.as_uri(), type=types.FileChangeType.Changed)]))
    if uses_pull(client):
        await asyncio.sleep(0.3)
        found = await diagnostics(client, uri)
    else:
        found = await current_diagnostics(client, uri, lambda ds: any(d.code == "OPG509" for d in ds))
    assert any(d.code == "OPG509" and "soft_sign" in d.message for d in found)
    if client.capabilities.workspace.did_change_watched_files.dynamic_registration:  # type: ignore[union-attr]
        for _ in range(100):
            if client.registrations:  # type: ignore[attr-defined]
                break
            await asyncio.sleep(0.02)
        watched = [w["globPattern"] for r in client.registrations  # type: ignore[attr-defined]
                   if r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES for w in r.register_options["watchers"]]
        assert "**/native_functions.yaml" in watched


async def test_move_composite_op_to_autograd(client: LanguageClient):
    uri, _, _ = setup_backend(client)
    found = await diagnostics(client, uri, 1)
    composite = next(d for d in found if d.code == "OPG521")
    assert composite.range == rng(client, BACKEND, "soft_sign")
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=tid(uri), range=composite.range, context=types.CodeActionContext(diagnostics=[composite])))
    move = next(a for a in actions if a.title.startswith("Move 'soft_sign'"))
    assert apply(BACKEND, move.edit.changes[uri], client) == (  # type: ignore[union-attr,index]
        BACKEND.replace("- soft_sign\n", "") + "- soft_sign\n")


# ---------------------------------------------------------------- native_functions.yaml

def native_workspace(client: LanguageClient, text: str = FULL_NATIVE) -> str:
    path = write(client, "native/native_functions.yaml", text)
    write(client, "native/tags.yaml", TAGS)
    return open_document(client, path, text)


async def complete(client: LanguageClient, uri: str, position: types.Position) -> dict[str, types.CompletionItem]:
    items = await client.text_document_completion_async(types.CompletionParams(text_document=tid(uri), position=position))
    return {i.label: i for i in items.items}  # type: ignore[union-attr]


async def test_completion_of_types_and_autogen(client: LanguageClient):
    text = FULL_NATIVE + "\n- func: new_op(Tensor self, Sc\n  autogen: \n"
    uri = native_workspace(client, text)
    labels = await complete(client, uri, pos(client, text, "Sc\n", 2))
    assert "Scalar" in labels and "Scalar?" in labels and "Tensor(a!)" in labels
    start = pos(client, text, "Sc\n")
    assert labels["Scalar"].text_edit.range == types.Range(  # type: ignore[union-attr]
        start=start, end=types.Position(line=start.line, character=start.character + 2))
    labels = await complete(client, uri, pos(client, text, "autogen: \n", len("autogen: ")))
    assert list(labels) == ["new_op.out"]
    labels = await complete(client, uri, pos(client, text, "autogen: _fused_thing.out", len("autogen: ")))
    assert "_fused_thing.out" in labels


async def test_signature_help(client: LanguageClient):
    uri = native_workspace(client)
    marker = "Tensor other, *, Scalar alpha=1) -> Tensor"
    help_ = await client.text_document_signature_help_async(types.SignatureHelpParams(
        text_document=tid(uri), position=pos(client, FULL_NATIVE, marker, 3)))
    assert help_ is not None
    signature = help_.signatures[0]
    assert signature.label == "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
    assert help_.active_parameter == 1
    start, end = signature.parameters[1].label  # type: ignore[misc]
    assert signature.label[start:end] == "Tensor other"
    none = await client.text_document_signature_help_async(types.SignatureHelpParams(
        text_document=tid(uri), position=pos(client, FULL_NATIVE, "device_check")))
    assert none is None


async def fixes_at(client: LanguageClient, uri: str, diagnostic: types.Diagnostic) -> list[types.CodeAction]:
    return await client.text_document_code_action_async(types.CodeActionParams(
        text_document=tid(uri), range=diagnostic.range, context=types.CodeActionContext(diagnostics=[diagnostic])))


DID_YOU_MEAN = [
    ("CPU, CUDA: relu", "CPU, CUDAA: relu"),  # dispatch key
    ("  variants: function, method\n  dispatch:\n    CPU, CUDA: relu",
     "  variantz: function, method\n  dispatch:\n    CPU, CUDA: relu"),  # entry key
    ("tags: [core, pointwise]\n\n- func: add_", "tags: [core, pointwse]\n\n- func: add_"),  # tag
    ("relu(Tensor self)", "relu(Tensr self)"),  # type
]


async def test_did_you_mean_fixes(client: LanguageClient):
    for i, (right, wrong) in enumerate(DID_YOU_MEAN):
        text = FULL_NATIVE.replace(right, wrong, 1)
        assert text != FULL_NATIVE
        path = write(client, f"native{i}/native_functions.yaml", text)
        write(client, f"native{i}/tags.yaml", TAGS)
        uri = open_document(client, path, text)
        found = [d for d in await diagnostics(client, uri, 1) if d.data]
        assert found, f"a diagnostic with did-you-mean data for {wrong!r}"
        actions = await fixes_at(client, uri, found[0])
        fixed = [apply(text, a.edit.changes[uri], client) for a in actions]  # type: ignore[union-attr,index]
        assert FULL_NATIVE in fixed, wrong


ADD_TAG = [
    ("  tags: core\n", "  tags: [core, nondeterministic_seeded]\n"),
    ("  tags: [core]\n", "  tags: [core, nondeterministic_seeded]\n"),
    ("  tags:\n  - core  # the core set\n", "  tags:\n  - core  # the core set\n  - nondeterministic_seeded\n"),
    ("", "  tags: nondeterministic_seeded\n"),
]


async def test_add_nondeterministic_tag(client: LanguageClient):
    for i, (tags_before, tags_after) in enumerate(ADD_TAG):
        text = FULL_NATIVE.replace("  tags: core\n", tags_before)
        path = write(client, f"native{i}/native_functions.yaml", text)
        write(client, f"native{i}/tags.yaml", TAGS)
        uri = open_document(client, path, text)
        found = [d for d in await diagnostics(client, uri, 1) if d.code == "OPG122"]
        assert len(found) == 1
        actions = await fixes_at(client, uri, found[0])
        assert [a.title for a in actions] == ["Add the tag nondeterministic_seeded"]
        assert apply(text, actions[0].edit.changes[uri], client) == text.replace(  # type: ignore[union-attr,index]
            "    CPU: rand_like_thing\n" + tags_before, "    CPU: rand_like_thing\n" + tags_after)
    # torch 1.13 takes tags as one string of names separated by ", " (a list is refused): the fix keeps that form.
    write(client, "tree113/version.txt", "1.13.1\n")
    path = write(client, "tree113/aten/src/ATen/native/native_functions.yaml", FULL_NATIVE)
    write(client, "tree113/aten/src/ATen/native/tags.yaml", TAGS)
    uri = open_document(client, path, FULL_NATIVE)
    (found,) = [d for d in await diagnostics(client, uri, 1) if d.code == "OPG122"]
    actions = await fixes_at(client, uri, found)
    assert apply(FULL_NATIVE, actions[0].edit.changes[uri], client) == FULL_NATIVE.replace(  # type: ignore[union-attr,index]
        "    CPU: rand_like_thing\n  tags: core\n", "    CPU: rand_like_thing\n  tags: core, nondeterministic_seeded\n")


async def test_semantic_tokens(client: LanguageClient):
    uri = native_workspace(client)
    legend = client.init_result.capabilities.semantic_tokens_provider.legend  # type: ignore[attr-defined]
    tokens = await client.text_document_semantic_tokens_full_async(types.SemanticTokensParams(text_document=tid(uri)))
    data = tokens.data  # type: ignore[union-attr]
    lines = FULL_NATIVE.split("\n")
    decoded = []
    line = col = 0
    for i in range(0, len(data), 5):
        line += data[i]
        col = data[i + 1] if data[i] else col + data[i + 1]
        decoded.append((lines[line][col:col + data[i + 2]], legend.token_types[data[i + 3]]))
    first = decoded[:12]
    assert first == [("add", "function"), ("Tensor", "enumMember"), ("Tensor", "type"), ("self", "parameter"),
                     ("Tensor", "type"), ("other", "parameter"), ("Scalar", "type"), ("alpha", "parameter"),
                     ("1", "number"), ("Tensor", "type"), ("add_", "function"), ("Tensor", "enumMember")]
    assert ("a!", "decorator") in decoded and ("None", "keyword") in decoded


async def test_code_lenses(client: LanguageClient):
    path = write(client, "native/native_functions.yaml", FULL_NATIVE)
    write(client, "native/tags.yaml", TAGS)
    backend = write(client, "native/my_backend.yaml", BACKEND)
    uri = open_document(client, path)
    backend_uri = open_document(client, backend)
    await diagnostics(client, backend_uri, 1)
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(text_document=tid(uri)))
    by_line: dict[int, list[str]] = {}
    for lens in lenses:
        by_line.setdefault(lens.range.start.line, []).append(lens.command.title)  # type: ignore[union-attr]
    relu = pos(client, FULL_NATIVE, "relu(Tensor").line
    assert by_line[relu] == ["kernels: CPU, CUDA, PrivateUse1", "show generated code"]
    relu_lens = next(ln for ln in lenses if ln.range.start.line == relu)
    assert relu_lens.command.tooltip == "implemented by CPU, CUDA, PrivateUse1"  # type: ignore[union-attr]
    add = pos(client, FULL_NATIVE, "add.Tensor(").line
    assert by_line[add][0].startswith(("kernels: ", "through "))
    assert all(len(title) <= 40 for titles in by_line.values() for title in titles), by_line  # one long key at most
    show = next(ln for ln in lenses if ln.command.command == "opgen.showGenerated")  # type: ignore[union-attr]
    assert list(show.command.arguments) == [{"op": "add.Tensor", "uri": uri}]  # type: ignore[union-attr]


# ---------------------------------------------------------------- commands

async def test_show_generated_op_and_file(client: LanguageClient):
    uri = native_workspace(client, NATIVE)
    await diagnostics(client, uri, 1)
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="opgen.showGenerated", arguments=[{"op": "relu", "uri": uri}]))
    assert result["uri"] == "opgen:/generated/op/relu.md"
    assert "at::_ops" in result["text"] and "TORCH_API at::Tensor relu(const at::Tensor & self);" in result["text"]
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="opgen.showGenerated", arguments=[{"file": "Functions.h", "uri": uri}]))
    assert result["uri"] == "opgen:/generated/file/Functions.h"
    assert "inline at::Tensor relu(const at::Tensor & self)" in result["text"]
    missing = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="opgen.showGenerated", arguments=[{"op": "reluu", "uri": uri}]))
    assert "relu" in missing["error"]


async def test_generate_refuses_a_file_with_errors(client: LanguageClient):
    uri = native_workspace(client)  # rand_like_thing lacks its nondeterministic_seeded tag
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="opgen.generate", arguments=[{"uri": uri}]))
    assert result["written"] == 0 and "nondeterministic_seeded" in result["errors"][0]
    shown = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="opgen.showGenerated", arguments=[{"file": "Functions.h", "uri": uri}]))
    assert "nondeterministic_seeded" in shown["error"]


@pytest.mark.init_options({"debounceMs": 10, "outputDir": "out/gen"})
async def test_generate_writes_into_the_output_dir_with_progress(client: LanguageClient):
    uri = native_workspace(client, NATIVE)
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="opgen.generate", arguments=[{"uri": uri}]))
    out = client.root / "out" / "gen"  # type: ignore[attr-defined]
    assert result["errors"] == [] and not result["cancelled"]
    assert result["written"] > 50 and Path(result["outputDir"]) == out.resolve()
    assert (out / "Functions.h").is_file() and (out / "RegisterCPU_0.cpp").is_file() \
        or (out / "Functions.h").is_file()
    written = {p for p in client.root.rglob("*") if p.is_file()}  # type: ignore[attr-defined]
    assert all(out in p.parents or p.parent.name in ("native",) for p in written)
    if client.capabilities.window and client.capabilities.window.work_done_progress:
        (reports,) = client.progress_reports.values()
        assert isinstance(reports[0], types.WorkDoneProgressBegin) and reports[0].cancellable
        assert isinstance(reports[-1], types.WorkDoneProgressEnd)
        # The counts `opgen generate` shows on a terminal: files done of those planned, how many written.
        counts = [r.message for r in reports if isinstance(r, types.WorkDoneProgressReport)]
        planned = result["written"] + result["unchanged"]
        assert counts[0].startswith(f"0/{planned} files, 0 written: ")
        assert counts[-1] == f"{planned}/{planned} files, {result['written']} written"
    again = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="opgen.generate", arguments=[{"uri": uri}]))
    assert again["written"] == 0 and again["unchanged"] == result["written"]


async def test_two_native_functions_yaml_generate_into_folders_of_their_own(client: LanguageClient):
    """Without opgen.outputDir each native_functions.yaml has its own folder under build/: neither overwrites the
    other (they shared one before, and the second run rewrote the first's files)."""
    uris = {}
    for folder, op in (("aten/src/ATen", "add"), ("samples/aten", "relu")):
        text = NATIVE if op == "add" else "- func: only_in_samples(Tensor self) -> Tensor\n"
        path = write(client, f"{folder}/native/native_functions.yaml", text)
        write(client, f"{folder}/native/tags.yaml", TAGS)
        uris[folder] = open_document(client, path, text)
    results = {}
    for folder, uri in uris.items():
        results[folder] = await client.workspace_execute_command_async(types.ExecuteCommandParams(
            command="opgen.generate", arguments=[{"uri": uri}]))
        assert results[folder]["errors"] == [], results[folder]
    root = client.root  # type: ignore[attr-defined]
    real, sample = root / "build" / "aten" / "src" / "ATen", root / "build" / "samples" / "aten"
    assert Path(results["aten/src/ATen"]["outputDir"]) == real.resolve()
    assert Path(results["samples/aten"]["outputDir"]) == sample.resolve()
    assert "add_Tensor" in (real / "Functions.h").read_text() and "only_in_samples" not in (real / "Functions.h").read_text()
    assert "only_in_samples" in (sample / "Functions.h").read_text()
    # The AOTI shims are in each output folder too, not under the server's current directory.
    assert (real / "aoti" / "c_shim_cpu.h").is_file() and (sample / "aoti" / "c_shim_cpu.h").is_file()
    again = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="opgen.generate", arguments=[{"uri": uris["aten/src/ATen"]}]))
    assert again["written"] == 0 and again["unchanged"] == results["aten/src/ATen"]["written"]


@pytest.mark.testing_hooks({"generateDelayMs": 50})
@pytest.mark.init_options({"debounceMs": 10, "outputDir": "out"})
async def test_generate_can_be_cancelled(client: LanguageClient):
    if not (client.capabilities.window and client.capabilities.window.work_done_progress):
        pytest.skip("the client takes no server-initiated progress")
    uri = native_workspace(client, NATIVE)
    task = asyncio.ensure_future(client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="opgen.generate", arguments=[{"uri": uri}])))
    for _ in range(200):
        if client.progress_reports and len(next(iter(client.progress_reports.values()))) >= 2:
            break
        await asyncio.sleep(0.02)
    (token,) = client.progress_reports
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    result = await asyncio.wait_for(task, 30)
    assert result["cancelled"] and result["written"] < 20
    assert isinstance(client.progress_reports[token][-1], types.WorkDoneProgressEnd)


@pytest.mark.init_options({"debounceMs": 10, "outputDir": 7, "codeLens": "yes", "generateTarget": "both",
                           "implPaths": ["kernels"]})
async def test_bad_settings_fall_back_to_defaults(client: LanguageClient):
    uri = native_workspace(client)
    await diagnostics(client, uri, 1)
    messages = []
    for _ in range(100):
        messages = [m.message for m in client.log_messages]
        if sum("opgen: setting" in m for m in messages) >= 3:
            break
        await asyncio.sleep(0.02)
    for key in ("outputDir", "codeLens", "generateTarget"):
        assert any(f"setting '{key}'" in m and "using the default" in m for m in messages), key
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(text_document=tid(uri)))
    assert lenses  # codeLens fell back to true


# ---------------------------------------------------------------- samples/

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


async def test_samples_backend_yaml(client: LanguageClient):
    text = (SAMPLES / "my_backend.yaml").read_text(encoding="utf-8")
    uri = open_document(client, SAMPLES / "my_backend.yaml", text)
    await diagnostics(client, uri, 1)
    shown = await hover_text(client, uri, pos(client, text, "- clip_range.out", 3))
    assert "PrivateUse1NativeFunctions::clip_range_out" in shown and "my_backend_kernels.cpp:" in shown
    location = await client.text_document_definition_async(types.DefinitionParams(
        text_document=tid(uri), position=pos(client, text, "- jitter", 3)))
    assert location.uri == (SAMPLES / "native_functions.yaml").as_uri()  # type: ignore[union-attr]
