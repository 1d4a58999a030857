"""The seam between the connection and pygls' protocol: our reader in place of pygls' (issue 15).

pygls 2's reader (pygls.io_.run_async) reads a Content-Length's bytes whatever it says (a huge one
is a MemoryError), and loses its place for good on a length that is wrong; a request whose params do
not fit their type is logged and never answered. Here:
- frames are read by framing.Framer (bounded, resynchronising);
- a message's envelope is checked first (envelope.py: ids of any JSON type, batches, unknown methods,
  "jsonrpc" other than "2.0"), then it is structured apart from being handled, so that a request with
  invalid params (a negative position, params null or a list) gets the JSON-RPC error InvalidParams;
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
from pygls.exceptions import JsonRpcException
from pygls.io_ import StdoutWriter

from . import envelope, framing
from . import protocol as protocol_module

logger = logging.getLogger(__name__)

READ_SIZE = 65536


def _respond_error(protocol: Any, msg_id: int | str | None, code: int, message: str) -> None:
    if msg_id is None:  # pygls leaves a null id out; JSON-RPC 2.0 says "id": null
        protocol._send_data({"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}})
        return
    protocol._send_response(msg_id, error=types.ResponseError(code=code, message=message))


def _has_method(protocol: Any, name: str) -> bool:
    features = protocol.fm
    return name in features.builtin_features or name in features.features or name == envelope.CANCEL_REQUEST


def deliver(protocol: Any, event: framing.Event) -> None:
    """Hand one framing event to the pygls protocol; whatever goes wrong, a request is answered (once), with
    no traceback, and the server goes on."""
    try:
        _deliver(protocol, event)
    except (SystemExit, KeyboardInterrupt):
        raise
    except Exception as exc:  # a bug of ours or of pygls: the request (if one) still gets an answer
        data = event.value if isinstance(event, framing.Message) else None
        logger.error("opgen-lsp: cannot handle a message: %s", protocol_module.one_line(exc), exc_info=exc)
        msg_id = envelope.usable_id(data)
        if isinstance(data, dict) and "method" in data and msg_id is not None:
            _respond_error(protocol, msg_id, types.ErrorCodes.InternalError, protocol_module.one_line(exc))


def _deliver(protocol: Any, event: framing.Event) -> None:
    if isinstance(event, framing.Refused):
        msg_id = framing.request_id(event.data)
        logger.warning("opgen-lsp: refused %s%s", event.reason,
                       f" (request {msg_id!r} answered with an error)" if msg_id is not None else "")
        # JSON-RPC answers bytes whose id cannot be read with a null id; bytes that never were a frame, not at all.
        if msg_id is not None or event.reason != framing.NOT_A_FRAME:
            _respond_error(protocol, msg_id, event.code, f"opgen-lsp refused {event.reason}")
        return
    data = event.value
    verdict = envelope.check(data, lambda name: _has_method(protocol, name))
    if isinstance(verdict, envelope.Answer):
        for msg_id, code, message in verdict.errors:
            logger.warning("opgen-lsp: answered %s to request %.40r: %s", code, msg_id, message)
            _respond_error(protocol, msg_id, code, message)
        return
    if isinstance(verdict, envelope.Drop):
        logger.warning("opgen-lsp: ignored %s", verdict.why)
        return
    assert isinstance(data, dict)  # the envelope checked it
    is_request = verdict.is_request
    try:
        message = protocol.structure_message(data)
    except JsonRpcException:
        if is_request:
            _respond_error(protocol, data["id"], types.ErrorCodes.InvalidParams,
                           f"invalid params for {data['method']}")
        return
    if is_request and protocol._shutdown:  # pygls drops them unanswered; the LSP says InvalidRequest
        _respond_error(protocol, data["id"], types.ErrorCodes.InvalidRequest, "the server is shutting down")
        return
    protocol.handle_message(message)


async def serve(read: Callable[[], Awaitable[bytes]], protocol: Any, limit: int = framing.DEFAULT_LIMIT) -> None:
    """Read and deliver messages until the connection ends (an empty read)."""
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
