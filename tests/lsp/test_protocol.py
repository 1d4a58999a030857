"""The real server under malformed frames, invalid params and a vanishing client (issue 15), over raw stdio.

Each case leaves a server that answers the next hover (or one that has exited cleanly), and every
request is answered. Bounds are generous (a loaded 2-core machine); they are not timings.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from .helpers import NATIVE, SERVER, TAGS

ANSWER_S = 30.0
EXIT_WITHIN_S = 5.0


class RawClient:
    """The server as a subprocess, spoken to in bytes; answers collected on a thread."""

    def __init__(self, root: Path, process_id: int | None = None) -> None:
        self.proc = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.answers: dict[object, dict] = {}
        self.everything: list[dict] = []  # every message the server sent, in order
        self.arrived = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        self.stderr: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=lambda: [self.stderr.put(line) for line in self.proc.stderr], daemon=True).start()
        self.root = root
        (root / "tags.yaml").write_text(TAGS, encoding="utf-8")
        self.uri = (root / "native_functions.yaml").as_uri()
        self.request(0, "initialize", {"processId": os.getpid() if process_id is None else process_id,
                                       "rootUri": root.as_uri(), "capabilities": {},
                                       "initializationOptions": {"debounceMs": 10}})
        self.notify("initialized", {})
        self.notify("textDocument/didOpen", {"textDocument": {"uri": self.uri, "languageId": "yaml", "version": 1,
                                                              "text": NATIVE}})

    def _read(self) -> None:
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
                if line == b"\r\n":
                    break
            message = json.loads(out.read(length))
            with self.arrived:
                self.everything.append(message)
            if "id" in message and "method" not in message:
                with self.arrived:
                    self.answers[message["id"]] = message
                    self.arrived.notify_all()

    def send_raw(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict, length: int | str | None = None) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.send_raw(f"Content-Length: {len(body) if length is None else length}\r\n\r\n".encode() + body)

    def request(self, msg_id, method: str, params, length: int | str | None = None) -> None:
        self.send({"id": msg_id, "method": method, "params": params}, length)

    def notify(self, method: str, params) -> None:
        self.send({"method": method, "params": params})

    def answer(self, msg_id, timeout: float = ANSWER_S) -> dict:
        deadline = time.monotonic() + timeout
        with self.arrived:
            while msg_id not in self.answers:
                left = deadline - time.monotonic()
                assert left > 0 and self.proc.poll() is None, \
                    f"no answer to request {msg_id!r} (server exit status {self.proc.poll()})"
                self.arrived.wait(min(left, 0.2))
            return self.answers[msg_id]

    def hover(self, msg_id) -> dict:
        self.request(msg_id, "textDocument/hover", {"textDocument": {"uri": self.uri},
                                                    "position": {"line": 1, "character": 10}})
        return self.answer(msg_id)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)


@pytest.fixture
def raw(tmp_path: Path):
    client = RawClient(tmp_path)
    assert "capabilities" in client.answer(0)["result"]
    yield client
    client.close()


def answers_hover(client: RawClient, msg_id) -> None:
    hover = client.hover(msg_id)
    assert "add.Tensor" in json.dumps(hover["result"]), hover


def test_a_huge_content_length_is_refused_without_reading_it(raw: RawClient):
    raw.request(1, "textDocument/hover", {"textDocument": {"uri": raw.uri}, "position": {"line": 1, "character": 10}},
                length=99999999999)
    assert raw.answer(1)["error"]["code"] == -32600  # InvalidRequest, not a MemoryError
    answers_hover(raw, 2)


@pytest.mark.parametrize("off", [-10, 40])
def test_a_content_length_short_or_long(raw: RawClient, off: int):
    params = {"textDocument": {"uri": raw.uri}, "position": {"line": 1, "character": 10}}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "textDocument/hover", "params": params}).encode()
    raw.request(1, "textDocument/hover", params, length=len(body) + off)
    answers_hover(raw, 2)
    first = raw.answer(1)  # too short: a ParseError for it; too long: the request itself was read
    assert ("error" in first and first["error"]["code"] == -32700) if off < 0 else "add.Tensor" in json.dumps(first)


@pytest.mark.parametrize("length", ["-5", "abc"])
def test_a_content_length_that_is_not_a_length(raw: RawClient, length: str):
    raw.request(1, "textDocument/hover", {"textDocument": {"uri": raw.uri}, "position": {"line": 1, "character": 10}},
                length=length)
    answers_hover(raw, 2)
    # Its body is known not to be a frame once the next frame's header has come: then it is answered.
    assert raw.answer(1)["error"]["code"] == -32700


@pytest.mark.parametrize("params", [
    {"textDocument": {"uri": "file:///x"}, "position": {"line": -1, "character": 0}},
    {"textDocument": {"uri": "file:///x"}, "position": {"line": 0, "character": -3}},
    None, [1, 2], "text", {"textDocument": {"uri": "file:///x"}}])
def test_invalid_params_get_an_invalid_params_error(raw: RawClient, params):
    raw.request(7, "textDocument/hover", params)
    assert raw.answer(7)["error"]["code"] == -32602
    answers_hover(raw, 8)


def test_garbage_and_messages_that_are_not_requests(raw: RawClient):
    raw.send_raw(b"hello\r\n\r\n" + os.urandom(3000).replace(b"\r\n\r\n", b"") + b"\r\n\r\n")
    raw.send_raw(b"Content-Length: 6\r\n\r\n[1, 2]")
    raw.send({"id": 3, "method": "textDocument/didChange", "params": None})  # a notification's params, as a request
    raw.notify("textDocument/didChange", None)  # invalid: no answer is due, none must be needed
    raw.request(4, "no/such/method", {})
    assert raw.answer(4)["error"]["code"] == -32601
    answers_hover(raw, 5)


def test_every_request_of_a_mixed_stream_is_answered(raw: RawClient):
    params = {"textDocument": {"uri": raw.uri}, "position": {"line": 1, "character": 10}}
    cases = [None, -10, 40, "-1", "x"]
    for i, length in enumerate(cases):
        body = json.dumps({"jsonrpc": "2.0", "id": 100 + i, "method": "textDocument/hover",
                           "params": params}).encode()
        raw.request(100 + i, "textDocument/hover", params,
                    length=len(body) + length if isinstance(length, int) else length)
        raw.request(200 + i, "textDocument/hover", {"position": None} if i % 2 else params)
    raw.request(300, "textDocument/hover", params)
    for msg_id in [100 + i for i in range(len(cases))] + [200 + i for i in range(len(cases))] + [300]:
        raw.answer(msg_id)


def test_a_request_after_shutdown_is_answered_and_exit_ends_the_server(raw: RawClient):
    raw.request(1, "shutdown", None)
    assert raw.answer(1)["result"] is None
    raw.request(2, "textDocument/hover", {"textDocument": {"uri": raw.uri}, "position": {"line": 1, "character": 10}})
    assert raw.answer(2)["error"]["code"] == -32600
    raw.notify("exit", None)
    assert raw.proc.wait(EXIT_WITHIN_S) == 0


def test_the_server_exits_when_stdin_closes(raw: RawClient):
    answers_hover(raw, 1)
    raw.proc.stdin.close()
    raw.proc.wait(EXIT_WITHIN_S)


@pytest.mark.slow  # (a server process waited for: 1.5-2.5 s)
def test_the_server_exits_when_the_client_process_is_killed_during_a_burst(tmp_path: Path):
    client_process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    raw = RawClient(tmp_path, process_id=client_process.pid)
    try:
        raw.answer(0)
        killed = None
        for version in range(2, 300):
            edit = f"- func: burst_{version}(Tensor self) -> Tensor\n"
            try:
                raw.notify("textDocument/didChange", {
                    "textDocument": {"uri": raw.uri, "version": version},
                    "contentChanges": [{"range": {"start": {"line": 0, "character": 0},
                                                  "end": {"line": 0, "character": 0}}, "text": edit}]})
                if version % 20 == 0:
                    raw.request(version, "textDocument/hover", {"textDocument": {"uri": raw.uri},
                                                                "position": {"line": 0, "character": 10}})
            except BrokenPipeError:  # the server already went, as it should once the client has
                assert killed is not None, "the server went before its client did"
                break
            if version == 150:
                client_process.kill()
                client_process.wait()  # reaped: the pid is gone
                killed = time.monotonic()
        assert killed is not None
        raw.proc.wait(EXIT_WITHIN_S)  # stdin stays open: only the watchdog ends it
        assert time.monotonic() - killed < EXIT_WITHIN_S
        assert raw.proc.returncode == 1  # no shutdown request came
    finally:
        client_process.kill()
        raw.close()


@pytest.mark.slow  # (a server process waited for: 1.5-2.5 s)
def test_a_client_that_is_a_zombie_counts_as_gone(tmp_path: Path):
    client_process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    raw = RawClient(tmp_path, process_id=client_process.pid)
    try:
        answers_hover(raw, 1)
        os.kill(client_process.pid, signal.SIGKILL)  # not reaped yet: a zombie until wait()
        raw.proc.wait(EXIT_WITHIN_S)
    finally:
        client_process.wait()
        raw.close()


@pytest.mark.slow  # (a server process waited for: 1.5-2.5 s)
def test_a_process_id_that_cannot_be_seen_is_not_taken_for_gone(tmp_path: Path):
    raw = RawClient(tmp_path, process_id=2 ** 22 + 12345)  # above Linux' pid_max by default
    try:
        answers_hover(raw, 1)
        time.sleep(1.5)
        answers_hover(raw, 2)
    finally:
        raw.close()


def test_the_watchdog_ends_a_process_whose_event_loop_is_stuck(tmp_path: Path):
    client_process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    stuck = subprocess.Popen([sys.executable, "-c", (
        "import sys; from opgen_lsp.lsp import watchdog\n"
        f"assert watchdog.watch({client_process.pid}, poll=0.2)\n"
        "print('watching', flush=True)\n"
        "while True: pass  # a loop that never yields\n")], stdout=subprocess.PIPE)
    try:
        assert stuck.stdout.readline() == b"watching\n"
        client_process.kill()
        client_process.wait()
        assert stuck.wait(EXIT_WITHIN_S) == 1
    finally:
        for p in (client_process, stuck):
            if p.poll() is None:
                p.kill()
                p.wait()


def _exits_within(code: str, stdin_close: bool = False) -> int:
    process = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert process.stdout.readline() == b"ready\n"
        if stdin_close:
            process.stdin.close()
        return process.wait(EXIT_WITHIN_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_stdin_closing_ends_a_process_whose_event_loop_is_stuck():
    assert _exits_within(
        "import asyncio, sys\n"
        "from opgen_lsp.lsp import transport, watchdog\n"
        "async def main():\n"
        "    transport.thread_reader(sys.stdin.buffer, on_end=lambda: watchdog.exit_after(0.5, code=1))\n"
        "    print('ready', flush=True)\n"
        "    while True: pass  # the loop never yields\n"
        "asyncio.run(main())\n", stdin_close=True) == 1


def test_an_analysis_thread_that_never_ends_does_not_keep_the_process_alive():
    assert _exits_within(
        "import threading, time\n"
        "from opgen_lsp.lsp import watchdog\n"
        "threading.Thread(target=time.sleep, args=(600,)).start()  # not a daemon: the interpreter waits for it\n"
        "watchdog.exit_after(0.5, code=0)\n"
        "print('ready', flush=True)\n") == 0
