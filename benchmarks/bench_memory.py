"""The server's memory over a session: many documents opened then closed, and fuzzed JSON-RPC frames.

Usage: python3 benchmarks/bench_memory.py [--copies N] [--frames N] [--rounds N] [--seed S] [--json FILE]

Drives a real `opgen-lsp --stdio` process (python3 -m opgen_lsp.serve --stdio) over a pipe and reads its
RSS from /proc (Linux). Needs torch 2.13 (the real native_functions.yaml and tags.yaml).

- documents: `--copies` copies of the real native_functions.yaml (each in its own folder, beside a tags.yaml)
  are opened one after another, each waited for until its diagnostics are published; then all are closed.
  RSS before the first open, with all open, and after the last close once it has stopped falling (the server
  releases memory a second after the last close; on a loaded machine that takes a while); `--rounds` rounds.
- frames: `--frames` fuzzed frames (well framed; bodies random JSON, broken JSON, requests with odd ids,
  unknown methods, didOpen/didChange/didClose/hover of small documents); RSS after the first 1,000 and at the end.

Defaults are the figures of issue 27: 300 copies, 2 rounds, 18,000 frames (about 15 to 30 minutes on a
loaded 2-core machine).
"""

from __future__ import annotations

import argparse
import json
import queue
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SERVER = [sys.executable, "-m", "opgen_lsp.serve", "--stdio"]


def aten_native() -> Path:
    import torchgen

    return Path(torchgen.__file__).parent / "packaged" / "ATen" / "native"


class Server:
    """A server process spoken to over stdio; a reader thread collects what it sends."""

    def __init__(self, root: Path) -> None:
        self.process = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL)
        self.published: dict[str, int] = {}  # uri -> times diagnostics were published
        self.answers: queue.Queue = queue.Queue()
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()
        self._next_id = 0
        threading.Thread(target=self._read, daemon=True).start()
        self.request("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {},
                                    "initializationOptions": {"debounceMs": 10}})
        self.notify("initialized", {})

    def _read(self) -> None:
        out = self.process.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii", "replace").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            body = json.loads(out.read(length or 0))
            if body.get("method") == "textDocument/publishDiagnostics":
                uri = body["params"]["uri"]
                with self._lock:
                    self.published[uri] = self.published.get(uri, 0) + 1
            elif "id" in body and "method" in body:  # a request of the server's: answer it
                self.send({"jsonrpc": "2.0", "id": body["id"], "result": None})
            elif "id" in body:
                self.answers.put(body)

    def send_raw(self, body: bytes) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        with self._send_lock:  # the reader thread answers the server's requests: frames must not interleave
            stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            stdin.flush()

    def send(self, message: dict) -> None:
        self.send_raw(json.dumps(message).encode("utf-8"))

    def notify(self, method: str, params: dict) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: dict, timeout: float = 600.0) -> dict:
        self._next_id += 1
        ident = f"bench-{self._next_id}"
        self.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while True:
            answer = self.answers.get(timeout=max(0.1, deadline - time.monotonic()))
            if answer.get("id") == ident:
                return answer

    def times_published(self, uri: str) -> int:
        with self._lock:
            return self.published.get(uri, 0)

    def wait_published(self, uri: str, before: int, timeout: float = 600.0) -> None:
        deadline = time.monotonic() + timeout
        while self.times_published(uri) <= before:
            if time.monotonic() > deadline:
                raise TimeoutError(f"no diagnostics for {uri}")
            time.sleep(0.01)

    def rss_mb(self) -> float:
        with open(f"/proc/{self.process.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def settle(self, seconds: float = 3.0) -> float:
        """RSS once the server has answered a request and had a few seconds to finish what it was doing."""
        self.request("opgen/settle", {})  # an unknown method: answered at once, once what came before is read
        time.sleep(seconds)
        return self.rss_mb()

    def steady(self, seconds: float = 5.0, most: float = 60.0) -> float:
        """RSS once it has stopped falling (settle, then readings a second apart until five agree within 1 MB, at
        most `most` seconds): on a loaded machine the server's release after the last close can take longer."""
        readings = [self.settle(seconds)]
        deadline = time.monotonic() + most
        while time.monotonic() < deadline and not (len(readings) >= 5 and max(readings[-5:]) - min(readings[-5:]) < 1):
            time.sleep(1.0)
            readings.append(self.rss_mb())
        return readings[-1]

    def stop(self) -> None:
        try:
            self.request("shutdown", {}, timeout=30)
            self.notify("exit", {})
            self.process.wait(timeout=30)
        except Exception:
            self.process.kill()
            self.process.wait()


def documents_round(server: Server, root: Path, native: str, copies: int, tag: int) -> dict:
    before = server.settle()
    uris = []
    started = time.perf_counter()
    open_s = []
    for i in range(copies):
        path = root / f"copy{i:03d}" / "native_functions.yaml"
        uri = path.as_uri()
        seen = server.times_published(uri)
        t0 = time.perf_counter()
        server.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "yaml", "version": tag, "text": native}})
        server.wait_published(uri, seen)
        open_s.append(time.perf_counter() - t0)
        uris.append(uri)
        if (i + 1) % 50 == 0:
            print(f"  opened {i + 1}: {server.rss_mb():.0f} MB", file=sys.stderr, flush=True)
    all_open = server.settle()
    for uri in uris:
        server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    closed = server.steady()
    print(f"  before {before:.0f} MB, all open {all_open:.0f} MB, all closed {closed:.0f} MB", file=sys.stderr, flush=True)
    return {"copies": copies, "rss_before_mb": before, "rss_all_open_mb": all_open, "rss_closed_mb": closed,
            "open_to_diagnostics_median_s": sorted(open_s)[len(open_s) // 2],
            "seconds": time.perf_counter() - started}


JSON_VALUES = [None, True, 0, -1, 2**70, 1.5, "", "x", "file:///a%00b", [], {}, [[[]]], {"a": {"b": []}}]
METHODS = ["initialize", "shutdown", "textDocument/hover", "textDocument/definition", "textDocument/completion",
           "textDocument/documentSymbol", "workspace/symbol", "textDocument/didChange", "$/cancelRequest",
           "opgen/unknown", "", "textDocument/semanticTokens/full", "textDocument/codeLens"]
SMALL_DOC = "- func: add(Tensor self, Tensor other) -> Tensor\n  variants: function\n"


def fuzzed_frame(rng: random.Random, i: int) -> bytes:
    roll = rng.random()
    if roll < 0.15:  # bytes that are not JSON
        return bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
    if roll < 0.25:  # JSON of any shape
        return json.dumps(rng.choice(JSON_VALUES)).encode()
    uri = f"file:///fuzz/{rng.randrange(50)}/native_functions.yaml"
    if roll < 0.45:  # a small document's life
        step = rng.randrange(3)
        if step == 0:
            message = {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": uri, "languageId": "yaml", "version": i, "text": SMALL_DOC * rng.randint(1, 5)}}}
        elif step == 1:
            message = {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": {"uri": uri, "version": i}, "contentChanges": [{"text": SMALL_DOC}]}}
        else:
            message = {"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": {"uri": uri}}}
        return json.dumps(message).encode()
    message = {"jsonrpc": "2.0", "method": rng.choice(METHODS)}
    if rng.random() < 0.7:
        message["id"] = rng.choice([i, f"f{i}", rng.choice(JSON_VALUES)])
    params = rng.choice([rng.choice(JSON_VALUES), {"textDocument": {"uri": uri},
                                                   "position": {"line": rng.randrange(5), "character": 3}},
                         {"query": "add"}])
    if params is not None:
        message["params"] = params
    if message["method"] in ("initialize", "shutdown"):
        message["method"] = "opgen/" + message["method"]  # the session stays as it is
    return json.dumps(message).encode()


def frames_run(server: Server, count: int, seed: int) -> dict:
    rng = random.Random(seed)
    started = time.perf_counter()
    marks = {}
    for i in range(count):
        server.send_raw(fuzzed_frame(rng, i))
        if (i + 1) % 1000 == 0:
            rss = server.settle(1.0)
            marks[i + 1] = rss
            print(f"  frames {i + 1}: {rss:.0f} MB", file=sys.stderr, flush=True)
    first = marks.get(1000, 0.0)
    last = marks[max(marks)] if marks else 0.0
    return {"frames": count, "rss_after_1000_mb": first, "rss_end_mb": last, "growth_after_1000_mb": last - first,
            "alive": server.process.poll() is None, "seconds": time.perf_counter() - started, "marks": marks}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--copies", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--frames", type=int, default=18000)
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()

    native = (aten_native() / "native_functions.yaml").read_text(encoding="utf-8")
    tags = (aten_native() / "tags.yaml").read_text(encoding="utf-8")
    figures: dict = {"copies": args.copies, "frames": args.frames, "seed": args.seed}
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for i in range(args.copies):
            (root / f"copy{i:03d}").mkdir()
            (root / f"copy{i:03d}" / "tags.yaml").write_text(tags, encoding="utf-8")
        if args.copies:
            server = Server(root)
            try:
                figures["rss_start_mb"] = server.settle()
                figures["rounds"] = []
                for r in range(args.rounds):
                    print(f"round {r + 1}", file=sys.stderr, flush=True)
                    figures["rounds"].append(documents_round(server, root, native, args.copies, r + 1))
            finally:
                server.stop()
        if args.frames:
            server = Server(root)
            try:
                figures["fuzz"] = frames_run(server, args.frames, args.seed)
            finally:
                server.stop()

    print("| figure | value |\n|---|---|")
    print(f"| server RSS at start | {figures.get('rss_start_mb', 0):.0f} MB |")
    for n, r in enumerate(figures.get("rounds", []), 1):
        print(f"| round {n}: {r['copies']} copies, RSS before / all open / all closed | "
              f"{r['rss_before_mb']:.0f} / {r['rss_all_open_mb']:.0f} / {r['rss_closed_mb']:.0f} MB "
              f"(open to diagnostics, median {r['open_to_diagnostics_median_s']:.2f} s; {r['seconds']:.0f} s) |")
    if "fuzz" in figures:
        f = figures["fuzz"]
        print(f"| {f['frames']:,} fuzzed frames: RSS after 1,000 / at the end | {f['rss_after_1000_mb']:.0f} / "
              f"{f['rss_end_mb']:.0f} MB (growth {f['growth_after_1000_mb']:+.1f} MB; "
              f"{'alive' if f['alive'] else 'DEAD'}; {f['seconds']:.0f} s) |")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
