"""Time and peak memory of `opgen check` and of the language server on the two inputs that once took gigabytes or
half a million diagnostics (issue 16): a 50 MB entry `tags: [core, core, ...]` and 500,000 lines `- func: a`.

Each input is written into a temporary folder as native_functions.yaml beside a real tags.yaml. The CLI runs as
`opgen check FILE` in a fresh process (wall time, ru_maxrss from os.wait4); the server is `opgen-lsp --stdio` in a
fresh process, driven over stdio by a minimal client here: initialize, didOpen with the whole text, then the
wall time until its first publishDiagnostics for the file, the number of diagnostics in it, and the server's
peak resident memory then (VmHWM). Memory is also given as a multiple of the input's size.

    python3 benchmarks/bench_bounded.py            # both inputs, CLI and server: about a minute
    python3 benchmarks/bench_bounded.py --quick    # inputs a tenth of the size
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

TAGS_YAML = "- tag: core\n  desc: Core ATen ops.\n"


def tags_list(size: int) -> str:
    head = "- func: f(Tensor self) -> Tensor\n  tags: ["
    return head + ", ".join(["core"] * ((size - len(head)) // len("core, "))) + "]\n"


def many_entries(count: int) -> str:
    return "- func: a\n" * count


def run_cli(path: Path) -> dict:
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "opgen_lsp.cli", "check", str(path)],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = process.stdout.read()  # type: ignore[union-attr]
    _, status, usage = os.wait4(process.pid, 0)
    return {"seconds": time.perf_counter() - start, "peak_mb": usage.ru_maxrss / 1024,
            "diagnostics": out.count(b"\n"), "status": os.waitstatus_to_exitcode(status)}


class Client:
    """Just enough LSP over stdio: requests and notifications out, messages in on a thread."""

    def __init__(self) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "opgen_lsp.lsp.main", "--stdio"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.messages: list[dict] = []
        self.arrived = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.process.stdout
        while True:
            header = b""
            while not header.endswith(b"\r\n\r\n"):
                byte = stream.read(1)  # type: ignore[union-attr]
                if not byte:
                    return
                header += byte
            length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
            message = json.loads(stream.read(length))  # type: ignore[union-attr]
            if message.get("method") == "workspace/configuration":
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": [None]})
            elif "id" in message and "method" in message:
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            with self.arrived:
                self.messages.append(message)
                self.arrived.notify_all()

    def send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)  # type: ignore[union-attr]
        self.process.stdin.flush()  # type: ignore[union-attr]

    def wait_for(self, match, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        with self.arrived:
            while True:
                found = next((m for m in self.messages if match(m)), None)
                if found is not None or time.monotonic() > deadline:
                    return found  # type: ignore[return-value]
                self.arrived.wait(1)

    def peak_mb(self) -> float:
        with open(f"/proc/{self.process.pid}/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmHWM")) / 1024

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


def run_server(path: Path, text: str, timeout: float) -> dict:
    client = Client()
    try:
        client.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": os.getpid(), "rootUri": path.parent.as_uri(), "capabilities": {}}})
        client.wait_for(lambda m: m.get("id") == 1, timeout)
        client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        uri = path.as_uri()
        start = time.perf_counter()
        client.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "yaml", "version": 1, "text": text}}})
        published = client.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                                    and m["params"]["uri"] == uri, timeout)
        seconds = time.perf_counter() - start
        return {"seconds": seconds if published else None, "peak_mb": client.peak_mb(),
                "diagnostics": len(published["params"]["diagnostics"]) if published else None}
    finally:
        client.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="inputs a tenth of the size")
    parser.add_argument("--timeout", type=float, default=300, help="seconds to wait for the server")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    cases = {"50 MB `tags: [core, core, ...]`": tags_list(50 * 1024 * 1024 // scale),
             "500,000 lines `- func: a`": many_entries(500_000 // scale)}
    print("| input | size | opgen check: time, peak memory (x input), lines printed | "
          "server: open-to-diagnostics, peak memory (x input), diagnostics published |")
    print("|---|---:|---|---|")
    for name, text in cases.items():
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "native_functions.yaml"
            path.write_text(text)
            (Path(tmp) / "tags.yaml").write_text(TAGS_YAML)
            size_mb = len(text) / (1024 * 1024)
            cli = run_cli(path)
            server = run_server(path, text, args.timeout)
            served = (f"{server['seconds']:.1f} s" if server["seconds"] is not None else "no answer") + \
                f", {server['peak_mb']:.0f} MB ({server['peak_mb'] / size_mb:.0f}x), {server['diagnostics']}"
            print(f"| {name} | {size_mb:.1f} MB | {cli['seconds']:.1f} s, {cli['peak_mb']:.0f} MB "
                  f"({cli['peak_mb'] / size_mb:.0f}x), {cli['diagnostics']:,} | {served} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
