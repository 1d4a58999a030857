"""The base protocol's framing (server/lsp/framing.py): bounded, and resynchronising on every malformed frame."""

from __future__ import annotations

import json
import random

import pytest

from opgen_lsp.lsp.framing import Framer, Message, Refused, request_id


def body(msg_id: int, method: str = "textDocument/hover", **extra) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method,
                       "params": {"textDocument": {"uri": "file:///é.yaml"}, **extra}}).encode()


def frame(data: bytes, length: int | str | None = None) -> bytes:
    return f"Content-Length: {len(data) if length is None else length}\r\n\r\n".encode() + data


def feed_all(framer: Framer, data: bytes, chunk: int | None = None) -> list:
    if chunk is None:
        return framer.feed(data)
    out = []
    for i in range(0, len(data), chunk):
        out.extend(framer.feed(data[i:i + chunk]))
    return out


def messages(events) -> list:
    return [e.value["id"] for e in events if isinstance(e, Message)]


@pytest.mark.parametrize("chunk", [None, 1, 7, 4096])
def test_well_formed_frames_in_any_chunks(chunk):
    data = b"".join(frame(body(i)) for i in range(5))
    data += b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n" + frame(body(5))
    events = feed_all(Framer(), data, chunk)
    assert messages(events) == [0, 1, 2, 3, 4, 5] and len(events) == 6  # nothing refused


@pytest.mark.parametrize("chunk", [None, 3, 1000])
def test_a_length_too_short_loses_that_frame_only_and_names_its_request(chunk):
    bad = body(1)
    events = feed_all(Framer(), frame(bad, len(bad) - 10) + frame(body(2)), chunk)
    assert messages(events) == [2]
    refused = [e for e in events if isinstance(e, Refused)]
    assert refused and request_id(refused[0].data) == 1


@pytest.mark.parametrize("extra", [5, 40])
def test_a_length_too_long_keeps_both_frames(extra):
    first = body(1)
    events = Framer().feed(frame(first, len(first) + extra) + frame(body(2)) + frame(body(3)))
    assert messages(events) == [1, 2, 3]


@pytest.mark.parametrize("length", ["-5", "abc", "", "1e3"])
def test_a_length_that_is_not_one_is_refused_and_the_next_frame_read(length):
    events = Framer().feed(frame(body(1), length) + frame(body(2)))
    assert messages(events) == [2]
    refused = [e for e in events if isinstance(e, Refused)]
    assert any(request_id(e.data) == 1 for e in refused), refused  # the request behind it can be answered


def test_a_frame_too_large_is_refused_from_its_header_and_skipped_without_being_held():
    framer = Framer(limit=1000)
    big = body(7, blob="x" * 5000)
    events = framer.feed(frame(big)[:600])
    assert [type(e) for e in events] == [Refused] and "5" in events[0].reason
    assert request_id(events[0].data) == 7
    for i in range(600, len(frame(big)), 256):
        assert framer.feed(frame(big)[i:i + 256]) == []
        assert len(framer._buffer) <= 256 + 64  # never the whole frame
    assert messages(framer.feed(frame(body(8)))) == [8]


def test_a_length_that_lies_big_resynchronises_on_the_next_frame():
    events = Framer().feed(frame(body(1), 99999999999) + frame(body(2)))
    assert messages(events) == [2]


def test_garbage_between_frames_and_without_headers_is_skipped():
    rng = random.Random(3)
    noise = bytes(rng.randrange(256) for _ in range(20000)).replace(b"\r\n\r\n", b"")
    events = Framer().feed(frame(body(1)) + noise + frame(body(2)) + b"\r\n\r\n" + frame(body(3)))
    assert messages(events) == [1, 2, 3]


def test_not_json_and_not_utf8():
    events = Framer().feed(frame(b"\xff\xfe{{{") + frame(b"[1, 2]") + frame(body(4)))
    assert [type(e) for e in events] == [Refused, Message, Message]
    assert events[1].value == [1, 2]


def test_random_damage_never_stops_the_reader():
    """Random frames with random wrong lengths, then good ones: the good ones always come through."""
    rng = random.Random(15)
    for _ in range(200):
        framer = Framer(limit=2000)
        data = b""
        for i in range(rng.randint(1, 4)):
            b = body(i, blob="y" * rng.randint(0, 3000))
            data += frame(b, max(0, len(b) + rng.randint(-60, 60)) if rng.random() < 0.5 else None)
        framer.feed(data)
        assert messages(framer.feed(frame(body(100)) + frame(body(101))))[-2:] == [100, 101]


def test_request_id():
    assert request_id(body(5)[:30]) == 5
    assert request_id(b'{"jsonrpc": "2.0", "id": "a\\"b", "method": "x"}') == 'a"b'
    assert request_id(b'{"method": "$/cancelRequest", "params": {"id": 3}}') is None  # nested: not the request's
    assert request_id(b'{"jsonrpc": "2.0", "id": 3, "result": null}') is None  # a response
    assert request_id(b"garbage") is None
    assert request_id(b'{"id": true}') is None


@pytest.mark.parametrize("levels", [65, 1000, 100_000])
def test_a_frame_nested_too_deep_is_refused_with_its_id_and_the_next_frame_read(levels: int):
    """A 2 KB body nested 1,000 deep raised RecursionError out of the reader and ended the server (issue 27)."""
    deep = b'{"jsonrpc":"2.0","id":5,"method":"x","params":' + b"[" * levels + b"]" * levels + b"}"
    events = Framer().feed(frame(deep) + frame(body(6)))
    refused = [e for e in events if isinstance(e, Refused)]
    assert len(refused) == 1 and "nested deeper than 64" in refused[0].reason
    assert refused[0].code == -32600 and request_id(refused[0].data) == 5
    assert messages(events) == [6]


def test_nesting_up_to_the_limit_is_read():
    ok = b'{"jsonrpc":"2.0","id":5,"method":"x","params":' + b"[" * 63 + b"]" * 63 + b"}"
    assert messages(Framer().feed(frame(ok))) == [5]


@pytest.mark.parametrize("constant", [b"NaN", b"Infinity", b"-Infinity"])
def test_nan_and_infinity_are_not_json(constant: bytes):
    events = Framer().feed(frame(b'{"jsonrpc":"2.0","id":5,"method":"x","params":' + constant + b"}"))
    assert [(type(e), e.code, request_id(e.data)) for e in events] == [(Refused, -32700, 5)]
