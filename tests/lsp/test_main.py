"""`opgen-lsp` itself: arguments, and the TCP transport."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import pytest

from opgen_lsp.lsp.main import parse_args


def test_arguments():
    args = parse_args([])
    assert (args.stdio, args.tcp, args.host, args.port, args.log_level) == (False, False, "127.0.0.1", 2087, "WARNING")
    args = parse_args(["--tcp", "--host", "0.0.0.0", "--port", "9000", "--log-level", "debug"])
    assert (args.tcp, args.host, args.port, args.log_level) == (True, "0.0.0.0", 9000, "DEBUG")
    with pytest.raises(SystemExit):
        parse_args(["--stdio", "--tcp"])
    with pytest.raises(SystemExit):
        parse_args(["--tcp", "--port", "70000"])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _send(sock: socket.socket, message: dict) -> None:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)


def _receive(stream) -> dict:
    length = 0
    while True:
        line = stream.readline()
        assert line, "the server closed the connection"
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(stream.read(length))


def test_tcp_transport():
    port = _free_port()
    process = subprocess.Popen([sys.executable, "-m", "opgen_lsp.serve", "--tcp", "--port", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=30)
                break
            except OSError:
                assert process.poll() is None, process.stderr.read().decode()
                assert time.monotonic() < deadline, "the server did not listen"
                time.sleep(0.05)
        with sock, sock.makefile("rb") as stream:
            _send(sock, {"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None,
                                                                      "capabilities": {}}})
            reply = _receive(stream)
            assert reply["id"] == 1
            assert reply["result"]["serverInfo"]["name"] == "opgen-lsp"
            assert reply["result"]["serverInfo"]["version"] .startswith("0.1.0 (torch 1.13-")
            assert reply["result"]["capabilities"]["textDocumentSync"]["change"] == 2
            _send(sock, {"method": "initialized", "params": {}})
            _send(sock, {"id": 2, "method": "shutdown"})
            while (reply := _receive(stream)).get("id") != 2:
                pass
            assert reply["result"] is None
            _send(sock, {"method": "exit"})
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stderr.close()


def test_the_server_starts_without_loading_a_generator():
    """`opgen-lsp` gives the server codegen's generators (opgen_lsp.serve), loaded on the first generation only."""
    exchange = [{"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None, "capabilities": {}}},
                {"method": "initialized", "params": {}}, {"id": 2, "method": "shutdown"}, {"method": "exit"}]
    framed = b"".join(b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
                      for body in (json.dumps({"jsonrpc": "2.0", **m}).encode() for m in exchange))
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "opgen_lsp.serve", "--stdio"], input=framed,
                          capture_output=True, timeout=120)
    assert b'"id": 2' in done.stdout or b'"id":2' in done.stdout, done.stdout[-2000:]
    names = {line.rsplit("|", 1)[1].strip() for line in done.stderr.decode().splitlines()
             if line.startswith("import time:")}
    assert {"opgen_lsp.lsp.server", "opgen_lsp.lsp.commands", "opgen_lsp.lsp.generators"} <= names
    assert sorted(n for n in names if n.startswith("opgen_lsp.codegen")) == []
