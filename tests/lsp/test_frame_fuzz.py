"""Hostile frames against the real `opgen-lsp --stdio` (issue 27): a fixed seed, a bounded count.

Every request gets one well-formed answer with the error code its shape calls for, no answer or message
carries a Python traceback, no message box tells the user of an error in the server, and the server still
answers a normal hover at the end. OPGEN_FUZZ_FRAMES and OPGEN_FUZZ_SEED run it longer or otherwise.
"""

from __future__ import annotations

import json
import os
import random
import urllib.parse
from collections.abc import Callable
from pathlib import Path

from .test_protocol import RawClient, answers_hover

SEED = int(os.environ.get("OPGEN_FUZZ_SEED", "27"))
FRAMES = int(os.environ.get("OPGEN_FUZZ_FRAMES", "240"))
INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, PARSE_ERROR = -32600, -32601, -32602, -32700
RESULT = "result"  # the request is answered with a result (or, for params that do not fit, InvalidParams)
QUERIES = ["textDocument/hover", "textDocument/definition", "textDocument/documentSymbol",
           "textDocument/completion", "textDocument/references", "textDocument/codeAction",
           "textDocument/semanticTokens/full", "textDocument/foldingRange", "workspace/symbol"]


def _any_json(rng: random.Random, depth: int = 0) -> object:
    kind = rng.randrange(8 if depth < 4 else 5)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.choice([0, -1, 2**31, 2**63, -(2**70), 1.5, 1e300])
    if kind in (3, 4):
        return "".join(rng.choice("ab/%\0\u2028\ud800é\"\\{}[]") for _ in range(rng.randrange(8)))
    if kind in (5, 6):
        return [_any_json(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(["uri", "textDocument", "position", "id", "x"]): _any_json(rng, depth + 1)
            for _ in range(rng.randrange(4))}


def _odd_uri(rng: random.Random) -> str:
    tail = urllib.parse.quote(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 6))), safe="")
    return rng.choice(["file:///tmp/x", "file:///", "untitled:", "file:", "", "http://h/", "file://host/"]) \
        + rng.choice(["%00", tail, "\ud800", "a/../../b", "native_functions.yaml", "%2e%2e/"]) \
        + rng.choice(["", "/native_functions.yaml", "/tags.yaml", "/x.cpp"])


class Fuzzer:
    """Makes frames, remembering what each request must be answered with."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.expected: dict[object, object] = {}  # request id -> code, or RESULT
        self.null_answers = 0  # answers due with a null id (no usable id)
        self._ids = iter(range(10_000, 10**9))

    def new_id(self, expect: object) -> int | str:
        msg_id: int | str = next(self._ids)
        if self.rng.random() < 0.3:
            msg_id = f"s{msg_id}"
        self.expected[msg_id] = expect
        return msg_id

    def _body(self, message: dict) -> bytes:
        return json.dumps(message).encode()

    def deep(self) -> bytes:
        levels = self.rng.choice([65, 200, 999, 1000, 5000])
        msg_id = self.new_id(INVALID_REQUEST)
        nested = "[" * levels + "]" * levels if self.rng.random() < 0.5 else '{"a":' * levels + "1" + "}" * levels
        return f'{{"jsonrpc":"2.0","id":{json.dumps(msg_id)},"method":"workspace/symbol","params":{nested}}}'.encode()

    def odd_id(self) -> bytes:
        self.null_answers += 1
        bad = self.rng.choice([[1], {"a": 1}, True, False, 1.5, None, [], {}])
        return self._body({"jsonrpc": "2.0", "id": bad, "method": self.rng.choice(QUERIES + ["no/such"]),
                           "params": {"query": ""}})

    def unknown_method(self) -> bytes:
        name = self.rng.choice(["no/such", "$/unknown", "textDocument/moniker", "workspace/x", "", "initialize2"])
        return self._body({"jsonrpc": "2.0", "id": self.new_id(METHOD_NOT_FOUND), "method": name,
                           "params": _any_json(self.rng)})

    def batch(self) -> bytes:
        items = [{"jsonrpc": "2.0", "id": self.new_id(INVALID_REQUEST), "method": "workspace/symbol",
                  "params": {"query": ""}} for _ in range(self.rng.randrange(1, 4))]
        return self._body(items + [{"jsonrpc": "2.0", "method": "initialized"}])

    def empty_batch(self) -> bytes:
        self.null_answers += 1
        return b"[]"

    def change_unopened(self) -> bytes:
        method = self.rng.choice(["textDocument/didChange", "textDocument/didClose", "textDocument/didSave"])
        return self._body({"jsonrpc": "2.0", "method": method, "params": {
            "textDocument": {"uri": _odd_uri(self.rng), "version": 2},
            "contentChanges": [{"text": "x"}]}})

    def open_odd(self) -> bytes:
        return self._body({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": _odd_uri(self.rng), "languageId": "yaml", "version": 1,
            "text": "- func: f(Tensor self) -> Tensor\n"}}})

    def query_odd_uri(self) -> bytes:
        method = self.rng.choice(QUERIES)
        return self._body({"jsonrpc": "2.0", "id": self.new_id(RESULT), "method": method, "params": {
            "textDocument": {"uri": _odd_uri(self.rng)}, "position": {"line": 0, "character": 0},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}},
            "context": {"diagnostics": [], "includeDeclaration": True}, "query": ""}})

    def random_params(self) -> bytes:
        return self._body({"jsonrpc": "2.0", "id": self.new_id(RESULT), "method": self.rng.choice(QUERIES),
                           "params": _any_json(self.rng)})

    def bad_envelope(self) -> bytes:
        msg_id = self.new_id(INVALID_REQUEST)
        return self._body(self.rng.choice([
            {"jsonrpc": "1.0", "id": msg_id, "method": "workspace/symbol", "params": {"query": ""}},
            {"id": msg_id, "method": "workspace/symbol", "params": {"query": ""}},
            {"jsonrpc": "2.0", "id": msg_id, "method": self.rng.choice([7, None, [], {}]), "params": {}},
            {"jsonrpc": "2.0", "id": msg_id}]))

    def not_json(self) -> bytes:
        choice = self.rng.randrange(3)
        if choice == 0:
            msg_id = self.new_id(PARSE_ERROR)
            return f'{{"jsonrpc":"2.0","id":{json.dumps(msg_id)},"method":"workspace/symbol","params":NaN}}'.encode()
        self.null_answers += 1
        return bytes(self.rng.randrange(256) for _ in range(self.rng.randrange(1, 40))).replace(b"{", b"(") \
            if choice == 1 else b'{"jsonrpc": "2.0", "method": "x", "params": {'

    def cancel(self) -> bytes:
        return self._body({"jsonrpc": "2.0", "method": "$/cancelRequest",
                           "params": {"id": self.rng.choice([[1], {"a": 1}, None, 1.5, 3, "x"])}})

    def frame(self) -> bytes:
        makers: list[Callable[[], bytes]] = [
            self.deep, self.odd_id, self.unknown_method, self.batch, self.empty_batch, self.change_unopened,
            self.open_odd, self.query_odd_uri, self.random_params, self.bad_envelope, self.not_json, self.cancel]
        body = self.rng.choice(makers)()
        return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _check_answer(msg_id: object, answer: dict, expect: object) -> None:
    assert answer.get("jsonrpc") == "2.0" and ("result" in answer) != ("error" in answer), answer
    if "error" in answer:
        error = answer["error"]
        assert isinstance(error.get("code"), int) and isinstance(error.get("message"), str), answer
        assert "data" not in error, answer
        wanted = {RESULT: {INVALID_PARAMS}}.get(expect, {expect})  # type: ignore[arg-type]
        assert error["code"] in wanted, (msg_id, expect, answer)
    else:
        assert expect == RESULT, (msg_id, expect, answer)


def test_hostile_frames_each_get_a_well_formed_answer_and_the_server_goes_on(tmp_path: Path):
    raw = RawClient(tmp_path)
    try:
        raw.answer(0)
        fuzzer = Fuzzer(random.Random(SEED))
        for _ in range(FRAMES):
            raw.send_raw(fuzzer.frame())
        answers_hover(raw, 1)  # after every frame above: the server goes on
        for msg_id, expect in fuzzer.expected.items():
            _check_answer(msg_id, raw.answer(msg_id), expect)
        with raw.arrived:
            seen = list(raw.everything)
        nulls = [m for m in seen if "id" in m and m["id"] is None and "method" not in m]
        assert len(nulls) == fuzzer.null_answers, nulls[:5]
        assert all(m["error"]["code"] in (INVALID_REQUEST, PARSE_ERROR) for m in nulls)
        text = json.dumps(seen)
        assert "Traceback" not in text and "File \\\"" not in text and "Error in server" not in text
        assert not [m for m in seen if m.get("method") == "window/showMessage"]
        failures = [m["params"]["message"] for m in seen if m.get("method") == "window/logMessage"
                    and m["params"]["type"] == 1]  # an error: a handler failed (e.g. on a uri holding %00)
        assert not failures, failures[:5]
        assert raw.proc.poll() is None
    finally:
        raw.close()
