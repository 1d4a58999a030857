"""opgen generate vs python -m torchgen.gen on the same input and flags: wall time and peak RSS.

    python benchmarks/bench_generate.py [--runs N] [--per-operator-headers ...]

Each tool runs as its own process (peak RSS from os.wait4's rusage), into its own
temporary folder, on torchgen's packaged native_functions.yaml. torchgen writes
its whole file set; opgen writes the files it implements (--implemented-only),
listed at the end with how many of them are byte-identical to torchgen's. A
second opgen run into the same folder shows the no-change cost (nothing rewritten).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def aten_dir() -> str:
    import torchgen

    return os.path.join(os.path.dirname(torchgen.__file__), "packaged", "ATen")


def run(cmd: list[str], cwd: str) -> tuple[float, float, int]:
    """(wall seconds, peak RSS in MB, exit status) of one child process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.stderr is not None:
        proc.stderr.close()
    return wall, usage.ru_maxrss / 1024, proc.returncode


def flags(out: Path, extra: list[str]) -> list[str]:
    return ["-s", aten_dir(), "-d", str(out / "aten"), "--headeronly-install-dir", str(out / "headeronly"),
            "--aoti-install-dir", str(out / "aoti"), *extra]


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    args, extra = parser.parse_known_args()
    torchgen_cmd = [sys.executable, "-m", "torchgen.gen"]
    opgen_cmd = [sys.executable, "-m", "opgen_lsp.cli", "generate", "--implemented-only"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.runs):
            tg, og = Path(tmp, f"torchgen{i}"), Path(tmp, f"opgen{i}")
            tg.mkdir()
            og.mkdir()
            rows.append(("torchgen.gen", *run(torchgen_cmd + flags(tg, extra), str(tg))))
            rows.append(("opgen generate", *run(opgen_cmd + flags(og, extra), str(og))))
            rows.append(("opgen generate (again, no change)", *run(opgen_cmd + flags(og, extra), str(og))))
        ref, ours = files(Path(tmp, "torchgen0")), files(Path(tmp, "opgen0"))
        same = sum(1 for name, data in ours.items() if ref.get(name) == data)
        print(f"{'tool':36} {'wall s':>8} {'peak MB':>8} {'status':>6}")
        for name, wall, rss, status in rows:
            print(f"{name:36} {wall:8.2f} {rss:8.1f} {status:6d}")
        print(f"torchgen wrote {len(ref)} files ({sum(map(len, ref.values())) / 1e6:.1f} MB); opgen wrote "
              f"{len(ours)} ({sum(map(len, ours.values())) / 1e6:.1f} MB), {same} byte-identical to torchgen's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
