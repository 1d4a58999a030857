"""The language server under edits and load: incremental sync equals a fresh open, bursts, cancels, failures."""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from . import drive, fuzz

pytestmark = pytest.mark.asyncio
SEED = fuzz.env_seed()
CONFIG = ClientServerConfig(server_command=drive.SERVER, client_factory=drive.make_client)
BURST = 1000


@pytest_lsp.fixture(config=CONFIG)
async def server(lsp_client: LanguageClient, tmp_path: Path):
    await drive.initialize(lsp_client, tmp_path)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=CONFIG)
async def failing_server(lsp_client: LanguageClient, tmp_path: Path):  # (the test is marked testing_hooks failHover)
    await drive.initialize(lsp_client, tmp_path)
    yield
    await lsp_client.shutdown_session()


def _workspace(root: Path, tags_text: str, name: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tags.yaml").write_text(tags_text, encoding="utf-8")
    return folder / "native_functions.yaml"


def _tid(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


async def _hover(client: LanguageClient, uri: str, pos: types.Position):
    return await client.text_document_hover_async(types.HoverParams(text_document=_tid(uri), position=pos))


async def _symbols(client: LanguageClient, uri: str):
    return await client.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=_tid(uri)))


def _hover_view(h, folder: Path | None = None):
    """The hover's text and range; the document's own folder (named in the `opgen explain` line a client without
    command links gets) written as FOLDER, so that two documents with the same text compare equal."""
    if h is None:
        return None
    text = h.contents.value  # type: ignore[union-attr]
    return (text.replace(str(folder), "FOLDER") if folder is not None else text, h.range)


async def run_lsp_sequence(client: LanguageClient, root: Path, tags_text: str, base: str, edits, index: int) -> None:
    path = _workspace(root, tags_text, f"seq{index}/a")
    uri = drive.open_text(client, path, base)
    text, version = base, 1
    for edit in edits:
        edit = drive.client_edit(text, edit)
        version += 1
        drive.change(client, uri, version, text, edit)
        text = fuzz.apply(text, edit)
    fresh_path = _workspace(root, tags_text, f"seq{index}/b")
    fresh_uri = drive.open_text(client, fresh_path, text)
    got = drive.summary(await drive.published(client, uri, version))
    fresh = drive.summary(await drive.published(client, fresh_uri, 1))
    assert got == fresh == drive.expected_diagnostics(text, str(path.parent / "tags.yaml"))
    assert await _symbols(client, uri) == await _symbols(client, fresh_uri)
    rng = random.Random(index)
    for line, col in fuzz.sample_positions(text, rng, 6):
        pos = types.Position(line=line, character=col)
        assert _hover_view(await _hover(client, uri, pos), path.parent) == \
            _hover_view(await _hover(client, fresh_uri, pos), fresh_path.parent)


async def test_incremental_sync_equals_a_fresh_open(server: LanguageClient, tmp_path: Path, native_entries, tags_text):
    rng = random.Random(SEED)
    for index in range(6):
        start = rng.randrange(len(native_entries) - 40)
        base = "".join(native_entries[start:start + 40])
        await run_lsp_sequence(server, tmp_path, tags_text, base, fuzz.random_edits(base, rng, 12, native_entries),
                               index)


@pytest.mark.slow
async def test_more_incremental_sequences(server: LanguageClient, tmp_path: Path, native_entries, tags_text):
    rng = random.Random(SEED + 1)
    for index in range(30):
        start = rng.randrange(len(native_entries) - 80)
        base = "".join(native_entries[start:start + 80])
        await run_lsp_sequence(server, tmp_path, tags_text, base, fuzz.random_edits(base, rng, 25, native_entries),
                               index)


def burst_edits(text: str, rng: random.Random, count: int) -> list[fuzz.Edit]:
    """Typing: a character in, and mostly out again; some stay."""
    edits: list[fuzz.Edit] = []
    while len(edits) < count:
        at = rng.randrange(len(text))
        if drive.inside_crlf(text, at):
            continue
        edits.append(fuzz.Edit(at, at, "x"))
        if rng.random() < 0.9 and len(edits) < count:
            edits.append(fuzz.Edit(at, at + 1, ""))
        else:
            text = text[:at] + "x" + text[at:]
    return edits


@pytest.mark.slow
async def test_burst_of_changes_on_the_real_file(server: LanguageClient, tmp_path: Path, native_text, tags_text):
    path = _workspace(tmp_path, tags_text, "real")
    uri = drive.open_text(server, path, native_text)
    assert await drive.published(server, uri, 1, timeout=120) == []
    first_func = next(i for i, line in enumerate(native_text.split("\n")) if line.startswith("- func:"))
    on_func = types.Position(line=first_func, character=10)
    assert await _hover(server, uri, on_func) is not None
    pid = drive.server_pid(server)
    baseline = drive.rss_kb(pid)

    rng = random.Random(SEED)
    text, version = native_text, 1
    hover_task = None
    started = time.perf_counter()
    for i, edit in enumerate(burst_edits(native_text, rng, BURST)):
        version += 1
        drive.change(server, uri, version, text, edit)
        text = fuzz.apply(text, edit)
        if i == BURST // 2:
            hover_sent = time.perf_counter()
            hover_task = asyncio.ensure_future(_hover(server, uri, on_func))
        if i % 50 == 0:
            await asyncio.sleep(0)  # let the client's writer run
    sent = time.perf_counter() - started
    hover = await asyncio.wait_for(hover_task, 120)  # type: ignore[arg-type]
    hover_latency = time.perf_counter() - hover_sent
    final = drive.summary(await drive.published(server, uri, version, timeout=120))
    assert final == drive.expected_diagnostics(text, str(path.parent / "tags.yaml"))
    assert hover is not None or text.split("\n")[first_func] != native_text.split("\n")[first_func]

    # Back to the original text in one full change: memory returns to where it was.
    version += 1
    server.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=native_text)]))
    assert await drive.published(server, uri, version, timeout=120) == []
    await asyncio.sleep(1.0)
    after = drive.rss_kb(pid)
    FIGURES.update(burst=BURST, send_s=sent, hover_latency_s=hover_latency, rss_baseline_mb=baseline / 1024,
                   rss_after_mb=after / 1024)
    print(FIGURES)
    assert after < baseline * 1.25 + 30 * 1024, (baseline, after)


FIGURES: dict = {}


async def test_cancelled_requests_leave_no_damage(server: LanguageClient, tmp_path: Path, native_entries, tags_text):
    base = "".join(native_entries[:200])
    path = _workspace(tmp_path, tags_text, "cancel")
    uri = drive.open_text(server, path, base)
    await drive.published(server, uri, 1)
    lines = base.split("\n")
    funcs = [i for i, line in enumerate(lines) if line.startswith("- func:")]
    # Requests cancelled right after they are sent, interleaved with edits.
    text, version = base, 1
    rng = random.Random(SEED)
    futures = []
    for i in range(40):
        pos = types.Position(line=rng.choice(funcs), character=10)
        future = server.protocol.send_request(types.TEXT_DOCUMENT_HOVER, types.HoverParams(
            text_document=_tid(uri), position=pos), msg_id=f"cancel-{i}")
        server.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=f"cancel-{i}"))
        futures.append(asyncio.wrap_future(future))
        if i % 4 == 0:
            version += 1
            edit = fuzz.Edit(len(text), len(text), f"- func: cancel_probe_{i}(Tensor self) -> Tensor\n")
            drive.change(server, uri, version, text, edit)
            text = fuzz.apply(text, edit)
    # Each cancelled request is answered (a result or a RequestCancelled error), none is left hanging.
    answers = await asyncio.wait_for(asyncio.gather(*futures, return_exceptions=True), 60)
    assert len(answers) == 40
    got = drive.summary(await drive.published(server, uri, version))
    assert got == drive.expected_diagnostics(text, str(path.parent / "tags.yaml"))
    hover = await _hover(server, uri, types.Position(line=funcs[0], character=10))
    assert hover is not None
    assert await _symbols(server, uri)


@pytest.mark.testing_hooks({"failHover": True})
async def test_a_failing_handler_is_logged_answered_empty_and_the_server_carries_on(
        failing_server: LanguageClient, tmp_path: Path, native_entries, tags_text):
    client = failing_server
    path = _workspace(tmp_path, tags_text, "fail")
    base = "".join(native_entries[:20])
    uri = drive.open_text(client, path, base)
    await drive.published(client, uri, 1)
    for _ in range(3):
        assert await _hover(client, uri, types.Position(line=0, character=10)) is None
    assert any("hover failed" in m.message and m.type == types.MessageType.Error for m in client.log_messages)
    assert await _symbols(client, uri)
    drive.change(client, uri, 2, base, fuzz.Edit(0, 0, "- func: after_failure(Tensor self) -> Tensor\n"))
    assert drive.summary(await drive.published(client, uri, 2)) == drive.expected_diagnostics(
        "- func: after_failure(Tensor self) -> Tensor\n" + base, str(path.parent / "tags.yaml"))
