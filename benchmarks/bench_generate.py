"""opgen generate vs python -m torchgen.gen on the same input and flags: wall time and peak RSS.

    python benchmarks/bench_generate.py [--runs N] [--layouts plain,per-operator] [extra gen.py flags ...]

For each layout (the default file set, and --per-operator-headers), each tool runs
as its own process (peak RSS from os.wait4's rusage), into its own temporary
folder, on torchgen's packaged native_functions.yaml. torchgen writes its whole
file set; opgen writes the files it implements (--implemented-only); the report
says how many are byte-identical to torchgen's. A second opgen run into the same
folder shows the no-change cost (nothing rewritten).

Then the incremental case, in this process: an Engine (the server's long-lived
NativeParser and memoized per-op pieces) builds every file once, one entry is
edited (a kernel name), and the time to rebuild every file's bytes is reported.
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


LAYOUTS = {"plain": [], "per-operator": ["--per-operator-headers"]}


def bench_layout(layout: str, extra: list[str], runs: int, tmp: str) -> None:
    torchgen_cmd = [sys.executable, "-m", "torchgen.gen"]
    opgen_cmd = [sys.executable, "-m", "opgen_lsp.cli", "generate", "--implemented-only"]
    extra = LAYOUTS[layout] + extra
    rows = []
    for i in range(runs):
        tg, og = Path(tmp, f"{layout}-torchgen{i}"), Path(tmp, f"{layout}-opgen{i}")
        tg.mkdir()
        og.mkdir()
        rows.append(("torchgen.gen", *run(torchgen_cmd + flags(tg, extra), str(tg))))
        rows.append(("opgen generate", *run(opgen_cmd + flags(og, extra), str(og))))
        rows.append(("opgen generate (again, no change)", *run(opgen_cmd + flags(og, extra), str(og))))
    ref, ours = files(Path(tmp, f"{layout}-torchgen0")), files(Path(tmp, f"{layout}-opgen0"))
    same = sum(1 for name, data in ours.items() if ref.get(name) == data)
    print(f"\n== {layout} layout ({' '.join(extra) or 'default flags'})")
    print(f"{'tool':36} {'wall s':>8} {'peak MB':>8} {'status':>6}")
    for name, wall, rss, status in rows:
        print(f"{name:36} {wall:8.2f} {rss:8.1f} {status:6d}")
    tg_wall = min(w for n, w, _, _ in rows if n == "torchgen.gen")
    og_wall = min(w for n, w, _, _ in rows if n == "opgen generate")
    print(f"torchgen wrote {len(ref)} files ({sum(map(len, ref.values())) / 1e6:.1f} MB); opgen wrote "
          f"{len(ours)} ({sum(map(len, ours.values())) / 1e6:.1f} MB), {same} byte-identical to torchgen's; "
          f"opgen/torchgen wall time {og_wall / tg_wall:.2f}")


def bench_incremental(runs: int) -> None:
    from opgen_lsp.codegen.files.context import GenerateOptions
    from opgen_lsp.codegen.generate import Engine

    aten = aten_dir()
    with open(os.path.join(aten, "native", "native_functions.yaml"), encoding="utf-8") as f:
        text = f.read()
    engine = Engine(GenerateOptions(source_path=aten))
    start = time.perf_counter()
    before = engine.files(text)
    cold = time.perf_counter() - start
    times = []
    for i in range(runs):
        edited = text.replace("    CompositeExplicitAutograd: abs\n", f"    CompositeExplicitAutograd: abs_v{i}\n", 1)
        start = time.perf_counter()
        after = engine.files(edited)
        times.append(time.perf_counter() - start)
    changed = sum(a.data != b.data for a, b in zip(before, after))
    print(f"\n== incremental (Engine, {len(before)} files): first build {cold:.2f} s; after editing one entry "
          f"(abs's kernel) {min(times):.2f} s (best of {runs}), {changed} files' bytes changed")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--layouts", default="plain,per-operator", help="comma-separated: plain, per-operator")
    parser.add_argument("--no-incremental", action="store_true")
    args, extra = parser.parse_known_args()
    with tempfile.TemporaryDirectory() as tmp:
        for layout in filter(None, args.layouts.split(",")):
            bench_layout(layout, extra, args.runs, tmp)
    if not args.no_incremental:
        bench_incremental(max(args.runs, 3))
    return 0


if __name__ == "__main__":
    sys.exit(main())
