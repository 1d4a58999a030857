"""Time and peak memory of `opgen check` and of the language server on the inputs that cost the most memory per
byte (issue 16): the 50 MB entry `tags: [core, core, ...]`, 500,000 lines `- func: a`, and every kind in
tests/reliability/costly.py (dense flow and block lists, distinct short entries, autogen functions, stray lines,
...) at 8 MB, over the 6 MB from which the memory budget's bound of 16 bytes a character applies.

Each input is written into a temporary folder as native_functions.yaml beside a one-tag tags.yaml. The CLI runs as
`opgen check FILE` in a fresh process (wall time, its VmHWM as it exits); the server is `opgen-lsp --stdio` in a
fresh process, driven over stdio by a minimal client here: initialize, didOpen with the whole text, then the
wall time until its first publishDiagnostics for the file, the number of diagnostics in it, and the server's
peak resident memory then (VmHWM). Memory is given above the baseline (the same run on a one-entry file: the
interpreter and its imports) and as a multiple of the input's size.

    python3 benchmarks/bench_bounded.py            # every input, CLI and server: a few minutes
    python3 benchmarks/bench_bounded.py --quick    # the two inputs of issue 16, a tenth of the size
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
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from reliability import costly  # noqa: E402

TAGS_YAML = "- tag: core\n  desc: Core ATen ops.\n"
BASELINE = "- func: f(Tensor self) -> Tensor\n"
MB = 1024 * 1024


# The CLI reports its own peak (VmHWM, which exec resets) as it exits: the ru_maxrss of os.wait4 would count what
# the child had from this process before exec.
_CLI = ("import atexit, sys\n"
        "def report():\n"
        "    with open('/proc/self/status') as f:\n"
        "        sys.stderr.write(next(line for line in f if line.startswith('VmHWM')))\n"
        "atexit.register(report)\n"
        "from opgen_lsp.cli import main\n"
        "sys.exit(main(['check', sys.argv[1]]))\n")


def run_cli(path: Path) -> dict:
    start = time.perf_counter()
    process = subprocess.run([sys.executable, "-c", _CLI, str(path)], capture_output=True, check=False)
    peak_kb = int(process.stderr.decode().rsplit("VmHWM:", 1)[1].split()[0])
    return {"seconds": time.perf_counter() - start, "peak_mb": peak_kb / 1024,
            "diagnostics": process.stdout.count(b"\n"), "status": process.returncode}


class Client:
    """Just enough LSP over stdio: requests and notifications out, messages in on a thread."""

    def __init__(self) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "opgen_lsp.serve", "--stdio"],
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


def run(make: Callable[[], str], timeout: float) -> tuple[int, dict, dict]:
    """(size, CLI figures, server figures)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "native_functions.yaml"
        size = path.write_text(make())
        (Path(tmp) / "tags.yaml").write_text(TAGS_YAML)
        cli = run_cli(path)
        return size, cli, run_server(path, path.read_text(), timeout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="the two inputs of issue 16, a tenth of the size")
    parser.add_argument("--timeout", type=float, default=300, help="seconds to wait for the server")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    cases: dict[str, Callable[[], str]] = {
        "one entry `tags: [core, core, ...]`": partial(costly.tags_list, 50 * MB // scale),
        "lines `- func: a`": partial(costly.many_entries, 10 * 500_000 // scale)}
    if not args.quick:
        cases.update({f"8 MB of {name}": partial(make, 8 * MB) for name, make in costly.CLASSES.items()})
    _, base_cli, base_server = run(lambda: BASELINE, args.timeout)
    print(f"baseline (one entry): opgen check {base_cli['peak_mb']:.0f} MB, server {base_server['peak_mb']:.0f} MB; "
          "memory below is above these")
    print("| input | size | opgen check: time, peak memory (x input), lines printed | "
          "server: open-to-diagnostics, peak memory (x input), diagnostics published |")
    print("|---|---:|---|---|")
    for name, make in cases.items():
        size, cli, server = run(make, args.timeout)
        size_mb = size / MB
        cli_mb, server_mb = cli["peak_mb"] - base_cli["peak_mb"], server["peak_mb"] - base_server["peak_mb"]
        served = (f"{server['seconds']:.1f} s" if server["seconds"] is not None else "no answer") + \
            f", {server_mb:.0f} MB ({server_mb / size_mb:.1f}x), {server['diagnostics']}"
        print(f"| {name} | {size_mb:.1f} MB | {cli['seconds']:.1f} s, {cli_mb:.0f} MB "
              f"({cli_mb / size_mb:.1f}x), {cli['diagnostics']:,} | {served} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
