"""The seam between the connection and pygls' protocol: our reader in place of pygls' (issue 15).

pygls 2's reader (pygls.io_.run_async) reads a Content-Length's bytes whatever it says (a huge one
is a MemoryError), and loses its place for good on a length that is wrong; a request whose params do
not fit their type is logged and never answered. Here:
- frames are read by framing.Framer (bounded, resynchronising);
- a message is structured apart from being handled, so that a request with invalid params (a negative
  position, params null or a list) gets the JSON-RPC error InvalidParams;
- a refused frame whose request id can be found gets an error response too (ParseError, or
  InvalidRequest for a frame too large), so that the client is never left waiting;
- stdin is read on a thread of its own, so that its end is seen even when the event loop is stuck
  (the watchdog then ends the process).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any, BinaryIO

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.io_ import StdoutWriter

from . import framing

logger = logging.getLogger(__name__)

READ_SIZE = 65536


class _QuietDeserializeErrors(logging.Filter):
    """pygls logs a full traceback for every message it cannot structure; we log one line (and answer)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Unable to deserialize message")


_QUIET = _QuietDeserializeErrors()


def _respond_error(protocol: Any, msg_id: int | str | None, code: int, message: str) -> None:
    protocol._send_response(msg_id, error=types.ResponseError(code=code, message=message))


def deliver(protocol: Any, event: framing.Event) -> None:
    """Hand one framing event to the pygls protocol; whatever goes wrong, a request is answered."""
    if isinstance(event, framing.Refused):
        msg_id = framing.request_id(event.data)
        logger.warning("opgen-lsp: refused %s%s", event.reason,
                       f" (request {msg_id!r} answered with an error)" if msg_id is not None else "")
        if msg_id is not None:
            too_large = event.reason.startswith("a frame of")
            _respond_error(protocol, msg_id,
                           types.ErrorCodes.InvalidRequest if too_large else types.ErrorCodes.ParseError,
                           f"opgen-lsp refused {event.reason}")
        return
    data = event.value
    if not isinstance(data, dict):
        logger.warning("opgen-lsp: a message that is not a JSON object: %.80r", data)
        _respond_error(protocol, None, types.ErrorCodes.InvalidRequest, "a message must be a JSON object")
        return
    is_request = "id" in data and "method" in data
    try:
        message = protocol.structure_message(data)
    except JsonRpcException as exc:
        method = data.get("method")
        logger.warning("opgen-lsp: invalid params for %r: %s", method, type(exc).__name__)
        if is_request:
            code = types.ErrorCodes.InvalidParams if isinstance(exc, JsonRpcInvalidParams) \
                else types.ErrorCodes.InternalError
            _respond_error(protocol, data["id"], code, f"invalid params for {method}")
        return
    if not hasattr(message, "jsonrpc"):  # a dict without "jsonrpc": not a JSON-RPC message
        logger.warning("opgen-lsp: a message without \"jsonrpc\": %.80r", data)
        if is_request:
            _respond_error(protocol, data["id"], types.ErrorCodes.InvalidRequest, "not a JSON-RPC 2.0 message")
        return
    if is_request and protocol._shutdown:  # pygls drops them unanswered; the LSP says InvalidRequest
        _respond_error(protocol, data["id"], types.ErrorCodes.InvalidRequest, "the server is shutting down")
        return
    try:
        protocol.handle_message(message)
    except (SystemExit, KeyboardInterrupt):
        raise
    except Exception as exc:  # pygls answers requests itself; this is what slips through
        logger.error("opgen-lsp: cannot handle %r: %s", data.get("method"), exc, exc_info=True)
        if is_request:
            _respond_error(protocol, data["id"], types.ErrorCodes.InternalError, f"{type(exc).__name__}: {exc}")


async def serve(read: Callable[[], Awaitable[bytes]], protocol: Any, limit: int = framing.DEFAULT_LIMIT) -> None:
    """Read and deliver messages until the connection ends (an empty read)."""
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_QUIET)  # once: the same filter is not added twice
    framer = framing.Framer(limit)
    while True:
        data = await read()
        if not data:
            logger.info("opgen-lsp: the client closed the connection")
            return
        for event in framer.feed(data):
            deliver(protocol, event)


def thread_reader(stream: BinaryIO, on_end: Callable[[], None]) -> Callable[[], Awaitable[bytes]]:
    """Read `stream` on a daemon thread of its own; `on_end` runs on that thread when it ends (also when the
    event loop is too stuck to notice)."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes] = asyncio.Queue()

    def run() -> None:
        try:  # the file descriptor, unbuffered: a daemon thread blocked in a buffered read aborts the interpreter's exit
            read: Callable[[int], bytes] = functools.partial(os.read, stream.fileno())
        except (AttributeError, OSError, ValueError):  # not a real file (tests)
            read = getattr(stream, "read1", stream.read)
        try:
            while True:
                chunk = read(READ_SIZE)
                loop.call_soon_threadsafe(queue.put_nowait, chunk)
                if not chunk:
                    break
        except (OSError, ValueError, RuntimeError) as exc:  # closed under us, or the loop is gone
            logger.info("opgen-lsp: reading stdin ended: %s", exc)
            try:
                loop.call_soon_threadsafe(queue.put_nowait, b"")
            except RuntimeError:
                pass
        finally:
            on_end()

    threading.Thread(target=run, name="opgen-stdin", daemon=True).start()
    return queue.get


def start_io(server: Any, stdin: BinaryIO | None, stdout: BinaryIO | None, on_end: Callable[[], None]) -> None:
    """pygls' JsonRPCServer.start_io with our reader."""
    server.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))

    async def main() -> None:
        await serve(thread_reader(stdin or sys.stdin.buffer, on_end), server.protocol)

    try:
        asyncio.run(main())
    except BrokenPipeError:
        logger.error("opgen-lsp: the connection to the client is lost; shutting down")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()


def start_tcp(server: Any, host: str, port: int) -> None:
    """pygls' JsonRPCServer.start_tcp with our reader: one client; the server ends with its connection."""
    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        server.protocol.set_writer(writer)
        try:
            await serve(lambda: reader.read(READ_SIZE), server.protocol)
        finally:
            server.shutdown()

    async def main() -> None:
        server._server = await asyncio.start_server(connection, host, port)
        logger.info("opgen-lsp: serving on %s:%s", host, port)
        async with server._server:
            try:
                await server._server.serve_forever()
            except asyncio.CancelledError:
                pass

    try:
        asyncio.run(main())
    except (KeyboardInterrupt, SystemExit):
        pass
