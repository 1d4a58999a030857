"""The JSON-RPC envelope checked before pygls (server/lsp/envelope.py), and answers that neither carry nor format
a traceback (protocol.py, log_format.py): issue 27."""

from __future__ import annotations

import ast
import logging
from concurrent.futures import Future

import pytest
from lsprotocol import types
from pygls.workspace import Workspace

from opgen_lsp.lsp import envelope, log_format
from opgen_lsp.lsp.convert import fs_path
from opgen_lsp.lsp.envelope import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, Answer, Deliver, Drop
from opgen_lsp.lsp.server import create_server
from opgen_lsp.serve import Codegen


def known(name: str) -> bool:
    return name in ("workspace/symbol", "initialized", "$/cancelRequest")


def request(msg_id: object, method: object = "workspace/symbol", **extra: object) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": {"query": ""}, **extra}


@pytest.mark.parametrize("msg_id", [[1], {"a": 1}, True, 1.5, None, [], {}])
def test_a_request_id_of_any_other_json_type_is_invalid_and_answered_with_a_null_id(msg_id: object):
    verdict = envelope.check(request(msg_id), known)
    assert isinstance(verdict, Answer) and len(verdict.errors) == 1
    answered_id, code, message = verdict.errors[0]
    assert (answered_id, code) == (None, INVALID_REQUEST) and "must be a string or an integer" in message


@pytest.mark.parametrize("params", [None, [1, 2], "x", 7, {"deep": [[[]]]}])
def test_an_unknown_method_is_method_not_found_whatever_its_params(params: object):
    message = {"jsonrpc": "2.0", "id": 3, "method": "no/such", "params": params}
    assert envelope.check(message, known).errors[0][:2] == (3, METHOD_NOT_FOUND)  # type: ignore[union-attr]
    del message["id"]
    assert isinstance(envelope.check(message, known), Drop)


def test_each_request_of_a_batch_is_answered():
    batch = [request(1), request("two"), {"jsonrpc": "2.0", "method": "initialized"}, request([3]), 5]
    verdict = envelope.check(batch, known)
    assert isinstance(verdict, Answer) and [e[:2] for e in verdict.errors] == [(1, INVALID_REQUEST),
                                                                              ("two", INVALID_REQUEST)]
    assert envelope.check([], known) == Answer(((None, INVALID_REQUEST, verdict.errors[0][2]),))


@pytest.mark.parametrize("message", [request(4, jsonrpc="1.0"), {"id": 4, "method": "workspace/symbol"},
                                     request(4, method=7), request(4, method=None), {"jsonrpc": "2.0", "id": 4}])
def test_a_broken_envelope_is_invalid_request(message: dict):
    assert envelope.check(message, known).errors[0][:2] == (4, INVALID_REQUEST)  # type: ignore[union-attr]


def test_cancel_needs_a_usable_id_and_responses_need_one_too():
    cancel = {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": [1]}}
    assert isinstance(envelope.check(cancel, known), Drop)
    assert envelope.check({**cancel, "id": 9}, known).errors[0][:2] == (9, INVALID_PARAMS)  # type: ignore[union-attr]
    assert envelope.check({**cancel, "params": {"id": 3}}, known) == Deliver(False)
    assert isinstance(envelope.check({"jsonrpc": "2.0", "id": {"a": 1}, "result": None}, known), Drop)
    assert envelope.check({"jsonrpc": "2.0", "id": 1, "result": None}, known) == Deliver(False)
    assert envelope.check(request(1), known) == Deliver(True)


@pytest.fixture
def no_ast_parse(monkeypatch):
    """ast.parse fails: Python 3.11 formats a traceback's ^^^ marks with it, and two overlapping calls raise
    SystemError (its AST constructor counts recursion per interpreter); nothing the server does may call it."""
    def refuse(*args, **kwargs):
        raise AssertionError("ast.parse was called")
    monkeypatch.setattr(ast, "parse", refuse)


def _raise_chained() -> BaseException:
    try:
        try:
            {}["key"]
        except KeyError as exc:
            raise ValueError("outer") from exc
    except ValueError as exc:
        return exc
    raise AssertionError


def test_the_log_formats_tracebacks_without_ast_parse(no_ast_parse):
    text = log_format.format_exception(_raise_chained())
    assert text.startswith("Traceback (most recent call last):") and "KeyError: 'key'" in text
    assert "direct cause" in text and text.rstrip().endswith("ValueError: outer") and "^^^" not in text
    record = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed", None, (ValueError, ValueError("v"), None))
    assert log_format.Formatter().format(record) == "failed\nValueError: v"


def test_a_failing_handler_is_answered_in_one_line_without_formatting_a_traceback(no_ast_parse):
    server = create_server(Codegen())
    sent: list[dict] = []
    server.protocol._send_data = lambda data: sent.append(server.protocol._serialize_message(data)
                                                          if not isinstance(data, dict) else data)
    future: Future = Future()
    try:
        {}["key"]
    except KeyError as exc:
        future.set_exception(exc)
    logging.disable(logging.CRITICAL)  # (pytest's own log capture formats with the traceback module)
    try:
        server.protocol._send_handler_result(future, msg_id=8)
        server.protocol._check_handler_result(future)
    finally:
        logging.disable(logging.NOTSET)
    [answer] = sent
    assert answer["id"] == 8 and answer["error"] == {"code": -32603, "message": "KeyError: 'key'"}


def test_a_change_to_a_document_that_is_not_open_is_ignored_without_a_message_box():
    server = create_server(Codegen())
    shown: list[object] = []
    server.window_show_message = shown.append  # type: ignore[method-assign]
    protocol = server.protocol
    protocol._workspace = Workspace(None)
    params = types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri="file:///nope", version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text="x")])
    assert list(protocol.lsp_text_document__did_change(params)) == []
    assert shown == []


@pytest.mark.parametrize("uri", ["file:///a%00b/native_functions.yaml", "file:///a\ud800b", "untitled:Untitled-1",
                                 "file:", "", "http://h/x"])
def test_a_uri_no_path_can_hold_is_a_document_without_a_file(uri: str):
    """`%00` in a uri gave "ValueError: embedded null byte" from each later analysis and workspace/symbol."""
    assert fs_path(uri) is None


def test_a_file_uri_is_its_path():
    assert fs_path("file:///tmp/a%20b/native_functions.yaml") == "/tmp/a b/native_functions.yaml"
    assert fs_path("file:///x%ffy") == "/x\ufffdy"  # (pygls decodes bytes that are not UTF-8 as U+FFFD)
