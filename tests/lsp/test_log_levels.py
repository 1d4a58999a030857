"""The server's log says what happened at its level: a late $/cancelRequest is routine (DEBUG), not a warning."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

EXCHANGE = [
    {"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None, "capabilities": {}}},
    {"method": "initialized", "params": {}},
    # A request the server never had (or has already answered): what VS Code sends after a quick hover.
    {"method": "$/cancelRequest", "params": {"id": 12345}},
    {"id": 2, "method": "shutdown"},
    {"method": "exit"},
]


def _framed(messages: list[dict]) -> bytes:
    out = b""
    for message in messages:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        out += b"Content-Length: %d\r\n\r\n" % len(body) + body
    return out


def _stderr_of_a_session(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "opgen_lsp.serve", "--stdio", *args], input=_framed(EXCHANGE),
                          capture_output=True, timeout=120)
    assert b'"id": 2' in done.stdout or b'"id":2' in done.stdout, done.stdout[-2000:]
    return done.stderr.decode()


@pytest.mark.parametrize("level", ["WARNING", "INFO"])
def test_a_late_cancel_is_not_logged_above_debug(level):
    stderr = _stderr_of_a_session("--log-level", level)
    assert "Cancel notification" not in stderr, stderr


def test_a_late_cancel_is_a_debug_record_when_asked_for():
    lines = [line for line in _stderr_of_a_session("--log-level", "DEBUG").splitlines() if "Cancel notification" in line]
    assert lines and all(" DEBUG pygls.protocol.json_rpc: " in line for line in lines), lines
