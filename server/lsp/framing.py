"""The LSP base protocol's framing (`Content-Length: N` headers, a blank line, N bytes of JSON), read
so that no input wedges the reader (issue 15). Pure: bytes in, events out; no IO, nothing of pygls.

- A frame larger than `limit` is refused from its header, and its bytes are skipped as they come,
  never held in memory.
- A frame whose length is wrong resynchronises on the next header: a body too long that holds a
  complete JSON value followed by the next frame's start is cut after the value; bytes that are not
  a frame (the rest of a body too short, a body after a negative or garbage length) are skipped up to
  the next header. A header can be found reliably in such bytes because `Content-Length: N` followed
  by a raw line break never occurs inside valid JSON (line breaks in strings are escaped).
- A body nested deeper than MAX_DEPTH (LSP messages nest a dozen levels) or holding NaN or Infinity
  (not JSON) is refused like one that is not JSON: a deep one would exhaust the stack of whatever reads
  it next (json itself raises RecursionError at about 1,000 levels).
- Every refusal is an event carrying the first bytes concerned, from which the transport recovers the
  id of a request (`request_id`) so that the request still gets an error response.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

# The largest frame accepted. The real native_functions.yaml, JSON-escaped in a didOpen, is about 0.7 MB.
DEFAULT_LIMIT = 64 * 1024 * 1024
# Header blocks are short; bytes without a blank line for this long are not a header.
MAX_HEADERS = 8192
# How much of a refused frame is kept for its event (enough to find a request's id).
HEAD_KEPT = 4096
_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*([^\r\n]*)", re.I)
# The start of a frame inside bytes that are not one (see above); its value may be anything.
_FRAME_START = re.compile(rb"content-length[ \t]*:[^\r\n]*\r\n", re.I)
_HEADER_LINE = re.compile(rb"^[A-Za-z][A-Za-z0-9-]*:[^\r\n]*\r\n", re.M)
# The reason of a refusal of bytes that were never a frame (no header): nothing is answered for them.
NOT_A_FRAME = "bytes that are not a frame"
# JSON-RPC error codes of refusals: bytes that are not JSON, and JSON that is refused (too large, too deep).
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
# The deepest nesting of arrays and objects accepted in a message.
MAX_DEPTH = 64


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_no_constant)


@dataclass(frozen=True)
class Message:
    """A frame's body, parsed as JSON."""

    value: object


@dataclass(frozen=True)
class Refused:
    """Bytes that are not a usable frame, and why; `data` is (the start of) them."""

    reason: str
    data: bytes
    code: int = PARSE_ERROR  # the error a request found in `data` is answered with


Event = Message | Refused


def _length(block: bytes) -> tuple[int | None, str]:
    """The length a header block gives (its last Content-Length), or None and why not."""
    found = list(_LENGTH.finditer(block))
    if not found:
        return None, "a header without Content-Length"
    value = found[-1].group(1).strip()
    if not value.isdigit():
        return None, f"Content-Length {value[:40].decode('latin-1')!r} is not a length"
    return int(value), ""


class Framer:
    """Feed it the bytes read, in any chunks; it returns the events they complete."""

    def __init__(self, limit: int = DEFAULT_LIMIT) -> None:
        self.limit = limit
        self._buffer = bytearray()
        self._length: int | None = None  # a header was read: the body's length
        self._skip = 0  # bytes of a refused (too large) frame still to skip

    def feed(self, data: bytes) -> list[Event]:
        self._buffer += data
        events: list[Event] = []
        while self._step(events):
            pass
        return events

    def _step(self, events: list[Event]) -> bool:
        """One step of reading; False when more bytes are needed."""
        buffer = self._buffer
        if self._skip:
            return self._skip_some()
        if self._length is None:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(buffer) > MAX_HEADERS:  # not a header: skip to a frame's start, if one is there
                    found = _FRAME_START.search(buffer)
                    cut = found.start() if found is not None and found.start() > 0 else len(buffer) - 64
                    events.append(Refused(NOT_A_FRAME, bytes(buffer[:min(cut, HEAD_KEPT)])))
                    del buffer[:cut]
                    return True
                return False
            block = bytes(buffer[:end])
            del buffer[:end + 4]
            start = _LENGTH.search(block)
            # Bytes before the header other than header lines (Content-Type): the rest of a broken frame.
            before = _HEADER_LINE.sub(b"", block[:start.start()]) if start is not None else b""
            if before:
                events.append(Refused(NOT_A_FRAME, before[:HEAD_KEPT]))
            length, why = _length(block)
            if length is None:
                events.append(Refused(why, block[:HEAD_KEPT]))
            elif length > self.limit:
                events.append(Refused(f"a frame of {length} bytes (more than {self.limit})",
                                      bytes(buffer[:HEAD_KEPT]), INVALID_REQUEST))
                self._skip = length
            else:
                self._length = length
            return True
        if len(buffer) < self._length:
            return False
        body = bytes(buffer[:self._length])
        del buffer[:self._length]
        self._length = None
        events.extend(self._body(body))
        return True

    def _skip_some(self) -> bool:
        """Drop the bytes of a refused frame as they come, unless a frame starts among them (a length that lied)."""
        buffer = self._buffer
        # A little past the end too: a length that lied by a few bytes cuts into the next frame's header.
        window = bytes(buffer[:self._skip + 80])
        found = _FRAME_START.search(window)
        if found is not None and found.start() < self._skip:
            del buffer[:found.start()]
            self._skip = 0
            return True
        if len(buffer) >= self._skip:
            del buffer[:self._skip]
            self._skip = 0
            return True
        keep = min(len(buffer), 64)  # a frame's start may be cut between two reads
        dropped = len(buffer) - keep
        del buffer[:dropped]
        self._skip -= dropped
        return False

    def _body(self, body: bytes) -> list[Event]:
        try:
            return [_message(json.loads(body, parse_constant=_no_constant), body)]
        except RecursionError:
            return [Refused(f"a frame nested deeper than {MAX_DEPTH} levels", body[:HEAD_KEPT], INVALID_REQUEST)]
        except ValueError:
            pass
        try:  # a length too long: one JSON value, then the start of the next frame
            text = body.decode("utf-8")
            value, end = _DECODER.raw_decode(text, len(text) - len(text.lstrip()))
        except RecursionError:
            return [Refused(f"a frame nested deeper than {MAX_DEPTH} levels", body[:HEAD_KEPT], INVALID_REQUEST)]
        except ValueError:
            found = _FRAME_START.search(body)
            if found is None:
                return [Refused("a frame that is not JSON", body[:HEAD_KEPT])]
            self._buffer[:0] = body[found.start():]
            return [Refused("a frame that is not JSON", body[:found.start()][:HEAD_KEPT])]
        rest = text[end:].encode("utf-8")
        self._buffer[:0] = rest  # read again as what follows a frame
        return [_message(value, body)]


def depth(value: object, limit: int) -> int:
    """How deep arrays and objects nest in `value` (a scalar is 0), counted up to limit + 1 (no recursion)."""
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            level += 1
            deepest = max(deepest, level)
            if deepest > limit:
                return deepest
            stack.extend((child, level) for child in item if isinstance(child, (list, dict)))
    return deepest


def _message(value: object, body: bytes) -> Event:
    if depth(value, MAX_DEPTH) > MAX_DEPTH:
        return Refused(f"a frame nested deeper than {MAX_DEPTH} levels", body[:HEAD_KEPT], INVALID_REQUEST)
    return Message(value)


def request_id(data: bytes) -> int | str | None:
    """The id of the request whose (maybe truncated) JSON `data` starts with: the "id" member of the first
    object, outside nested ones; None when there is none or the object is a response (result/error)."""
    text = data.decode("utf-8", "replace")
    i = text.find("{")
    if i < 0:
        return None
    depth, found, keys = 0, None, set()
    while i < len(text):
        c = text[i]
        if c == '"':
            end = i + 1
            while end < len(text) and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            after = text[end + 1:].lstrip()
            if depth == 1 and after.startswith(":"):
                try:
                    key = json.loads(text[i:end + 1])
                except ValueError:
                    return None
                keys.add(key)
                if key == "id":
                    try:
                        value, _ = _DECODER.raw_decode(after[1:].lstrip())
                    except ValueError:
                        value = None
                    found = value if isinstance(value, (int, str)) and not isinstance(value, bool) else None
            i = end + 1
            continue
        if c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth == 0:
                break
        i += 1
    return None if keys & {"result", "error"} else found
