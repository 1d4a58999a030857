"""pygls' LanguageServerProtocol with answers that carry no traceback and formats none (issue 27).

pygls answers a handler's exception with InternalError whose `data` is the Python traceback, and logs a
formatted traceback for every message it cannot structure. Python 3.11 formats a traceback with
`ast.parse` (the ^^^ marks under each line), and 3.11's AST constructor keeps its recursion count per
interpreter, not per call: two formattings that overlap (another thread, or a finalizer that logs an
error during a garbage collection in the middle of one) make the outer one raise "SystemError: AST
constructor recursion depth mismatch", which then became the answer to whatever request was being
handled (workspace/symbol, under fuzzing). So here:
- a message that does not fit its method's params is InvalidParams, logged in one line;
- a request whose handler raised is answered InternalError with one line (the exception's type and
  message), and logged in one line; a notification's failure is logged, never shown as a message box;
- a document change or close for a document that is not open is logged and ignored (pygls raised
  KeyError and showed "Error in server: KeyError" to the user);
- a handler's future leaves `_request_futures` when it is done: pygls 2 files the future of every notification
  (and of every step of a generator handler) there under a fresh id and never takes it out, so each didOpen or
  didClose kept a future (with its lock and condition) for the life of the process.
Tracebacks still reach the server log, formatted without `ast.parse` (log_format.py).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator
from concurrent.futures import Future
from typing import Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams, JsonRpcRequestCancelled
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage
from pygls.protocol.language_server import lsp_method

logger = logging.getLogger(__name__)


def one_line(exc: BaseException) -> str:
    """An exception as the client is told it: its type and first line, no traceback."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:200]}" if text else type(exc).__name__


class OpgenProtocol(LanguageServerProtocol):
    def structure_message(self, data: dict[str, Any]) -> Any:
        if "jsonrpc" not in data:
            return data
        try:
            if "method" in data:
                fallback = JsonRPCRequestMessage if "id" in data else JsonRPCNotification
                return self._converter.structure(data, self.get_message_type(data["method"]) or fallback)
            if "error" in data:
                return self._converter.structure(data, types.ResponseErrorMessage)
            kind = self._result_types.pop(data["id"], None) or JsonRPCResponseMessage
            return self._converter.structure(data, kind)
        except Exception as exc:  # cattrs' errors: the params (or result) do not fit the method's types
            logger.warning("opgen-lsp: cannot read a %r message: %s", data.get("method"), one_line(exc))
            raise JsonRpcInvalidParams() from exc

    def _execute_handler(self, msg_id: Any, handler: Callable[..., Any], callback: Callable[[Future[Any]], None],
                         args: tuple[Any, ...] | None = None, kwargs: dict[str, Any] | None = None) -> None:
        futures = self._request_futures

        def done(future: Future[Any]) -> None:
            # A request's is taken out by its answer already; a cancelled one by whoever cancelled it (pygls'
            # shutdown cancels them while it walks the dict); the others here.
            if not future.cancelled() and futures.get(msg_id) is future:
                futures.pop(msg_id, None)
            callback(future)

        super()._execute_handler(msg_id, handler, done, args, kwargs)

    def _send_handler_result(self, future: Future[Any], *, msg_id: Any) -> None:
        self._request_futures.pop(msg_id, None)
        if future.cancelled():
            error: JsonRpcException = JsonRpcRequestCancelled(f"request {msg_id!r} was cancelled")
        elif (exc := future.exception()) is None:
            self._send_response(msg_id, result=future.result())
            return
        elif isinstance(exc, JsonRpcException):
            error = exc
        else:
            logger.error("opgen-lsp: request %r failed: %s", msg_id, one_line(exc), exc_info=exc)
            error = JsonRpcInternalError(message=one_line(exc))
        self._send_response(msg_id, error=types.ResponseError(code=error.code, message=error.message))

    def _check_handler_result(self, future: Future[Any]) -> None:
        if not future.cancelled() and (exc := future.exception()) is not None:
            logger.error("opgen-lsp: a notification failed: %s", one_line(exc), exc_info=exc)

    def _is_open(self, method: str, uri: str) -> bool:
        if unquote(uri) in self.workspace.text_documents:
            return True
        logger.warning("opgen-lsp: %s of a document that is not open is ignored: %.200s", method, uri)
        return False

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams
                                      ) -> Generator[Any, Any, None]:
        if self._is_open("didChange", params.text_document.uri):
            yield from super().lsp_text_document__did_change(params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams
                                     ) -> Generator[Any, Any, None]:
        if self._is_open("didClose", params.text_document.uri):
            yield from super().lsp_text_document__did_close(params)
