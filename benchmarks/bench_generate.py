"""opgen generate vs python -m torchgen.gen on the same input and flags: wall time and peak RSS.

    python benchmarks/bench_generate.py [--runs N] [--layouts plain,per-operator] [--torch-release X.Y.Z]
                                        [extra gen.py flags ...]

For each layout (the default file set, and --per-operator-headers), each tool runs
as its own process, into its own temporary folder, on torchgen's packaged
native_functions.yaml (with --torch-release, that release's torchgen on its own packaged
native_functions.yaml, and opgen with --torch-version). torchgen writes its whole file set; opgen writes the files
it implements (--implemented-only); the report says how many are byte-identical to
torchgen's. A second opgen run into the same folder shows the no-change cost
(nothing rewritten). Before each run the script calls sync(), so that the writeback of
the previous run's files (60 MB) does not land in the next run's time.

Per run: wall time; CPU time (user + system of the process and the children it
waited for, from os.wait4); peak RSS of the largest single process (os.wait4); and
the peak memory of the whole process tree, sampled every 10 ms as the sum of PSS
(/proc/<pid>/smaps_rollup: each shared page counted once, split between the
processes sharing it) over the process and its descendants. opgen forks worker
processes (OPGEN_PROCESSES, default 2 on a 2-core machine), so the tree PSS is
the figure to compare with torchgen's.

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
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import torch_release

if TYPE_CHECKING:
    from opgen_lsp.releases import Release


@dataclass(frozen=True)
class Reference:
    """The torchgen compared with: the installed torch's, or a release's own (its cache folder)."""

    version: str | None = None
    folder: Path | None = None

    @property
    def aten(self) -> str:
        if self.folder is not None:
            return str(self.folder / "torchgen" / "packaged" / "ATen")
        import torchgen

        return os.path.join(os.path.dirname(torchgen.__file__), "packaged", "ATen")

    @property
    def headeronly(self) -> bool:
        """gen.py before 2.12 has no --headeronly-install-dir."""
        return "--headeronly-install-dir" in self._gen_py()

    @property
    def aoti(self) -> bool:
        """gen.py before 2.4 has no --aoti-install-dir (its shims go to a fixed folder under the current one)."""
        return "--aoti-install-dir" in self._gen_py()

    def _gen_py(self) -> str:
        return Path(self.aten, "..", "..", "gen.py").read_text(encoding="utf-8")


def descendants(pid: int) -> list[int]:
    """pid and every process below it (Linux /proc; just pid elsewhere)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except OSError:
            pass
    return out


def pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            return next((int(line.split()[1]) for line in f if line.startswith("Pss:")), 0)
    except OSError:  # gone, or no smaps_rollup
        return 0


class TreePss:
    """Samples the sum of PSS over a process tree every `interval` seconds, in a thread; keeps the peak."""

    def __init__(self, pid: int, interval: float = 0.01) -> None:
        self.pid, self.interval, self.peak_kb = pid, interval, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak_kb = max(self.peak_kb, sum(pss_kb(p) for p in descendants(self.pid)))
            self._stop.wait(self.interval)

    def stop(self) -> float:
        """The peak in MB."""
        self._stop.set()
        self._thread.join()
        return self.peak_kb / 1024


@dataclass(frozen=True)
class Run:
    tool: str
    wall: float  # seconds
    cpu: float  # user + system seconds, with the children waited for
    # of it, system seconds: on a file system with many inodes freed in the last minutes, making files costs
    # seconds of it (both tools make 7,151 per-operator)
    system: float
    rss: float  # MB, the largest single process
    tree_pss: float  # MB, the peak of the tree's summed PSS
    status: int


def run(tool: str, cmd: list[str], cwd: str, env: dict[str, str] | None = None) -> Run:
    os.sync()  # the previous run's files go to disk now, not during this run's time
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    sampler = TreePss(proc.pid)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    tree_pss = sampler.stop()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.stderr is not None:
        proc.stderr.close()
    return Run(tool, wall, usage.ru_utime + usage.ru_stime, usage.ru_stime, usage.ru_maxrss / 1024, tree_pss,
               proc.returncode)


def flags(ref: Reference, out: Path, extra: list[str]) -> list[str]:
    headeronly = ["--headeronly-install-dir", str(out / "headeronly")] if ref.headeronly else []
    aoti = ["--aoti-install-dir", str(out / "aoti")] if ref.aoti else []
    return ["-s", ref.aten, "-d", str(out / "aten"), *headeronly, *aoti, *extra]


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


LAYOUTS = {"plain": [], "per-operator": ["--per-operator-headers"]}


@dataclass(frozen=True)
class LayoutResult:
    """One layout's runs: each tool's rows, and how opgen's first output compares with torchgen's."""

    layout: str
    flags: list[str]
    rows: list[Run]
    torchgen_files: int
    torchgen_bytes: int
    opgen_files: int
    opgen_bytes: int
    identical: int
    # of the identical files, those compared modulo the order inside each tag list (tests/release_fit.py: gen.py
    # before 2.1 writes a set's order, which changes from run to run; opgen writes them sorted), as the matrix does
    modulo_tag_order: tuple[str, ...] = ()

    def best(self, tool: str, measure: str) -> float:
        return min(getattr(r, measure) for r in self.rows if r.tool == tool)

    def ratio(self, measure: str) -> float:
        """opgen's best over torchgen's best (wall, cpu or tree_pss)."""
        return self.best("opgen generate", measure) / self.best("torchgen.gen", measure)

    @property
    def opgen_status(self) -> int:
        return max(r.status for r in self.rows if r.tool == "opgen generate")


def measure_layout(reference: Reference, layout: str, extra: list[str], runs: int, tmp: str) -> LayoutResult:
    torchgen_cmd = [sys.executable, "-m", "torchgen.gen"]
    # --no-cache: the generator's own cost, every run (bench_regenerate.py measures the persistent cache)
    opgen_cmd = [sys.executable, "-m", "opgen_lsp.cli", "generate", "--implemented-only", "--no-cache",
                 *torch_release.opgen_flags(reference.version)]
    env = torch_release.torchgen_env(reference.folder)
    extra = LAYOUTS[layout] + extra
    rows = []
    for i in range(runs):
        tg, og = Path(tmp, f"{layout}-torchgen{i}"), Path(tmp, f"{layout}-opgen{i}")
        tg.mkdir()
        og.mkdir()
        rows.append(run("torchgen.gen", torchgen_cmd + flags(reference, tg, extra), str(tg), env))
        rows.append(run("opgen generate", opgen_cmd + flags(reference, og, extra), str(og)))
        rows.append(run("opgen generate (again, no change)", opgen_cmd + flags(reference, og, extra), str(og)))
    ref, ours = files(Path(tmp, f"{layout}-torchgen0")), files(Path(tmp, f"{layout}-opgen0"))
    same, modulo = identical(ref, ours, torch_release.release(reference.version))
    return LayoutResult(layout, extra, rows, len(ref), sum(map(len, ref.values())), len(ours),
                        sum(map(len, ours.values())), same, modulo)


def identical(theirs: dict[str, bytes], ours: dict[str, bytes], release: Release | None) -> tuple[int, tuple[str, ...]]:
    """How many of opgen's files are gen.py's, and which of those were compared modulo tag order (with a release's
    profile: release_fit.same_file, as the release matrix compares them; else byte for byte)."""
    import release_fit

    same = [name for name, data in ours.items() if name in theirs and (
        theirs[name] == data if release is None else release_fit.same_file(name, theirs[name], data, release))]
    modulo = tuple(n for n in same if release is not None and release_fit.modulo_tag_order(n, release)
                   and theirs[n] != ours[n])
    return len(same), modulo


def bench_layout(reference: Reference, layout: str, extra: list[str], runs: int, tmp: str) -> None:
    result = measure_layout(reference, layout, extra, runs, tmp)
    against = f"torch {reference.version}'s own torchgen" if reference.version else "the installed torchgen"
    print(f"\n== {layout} layout ({' '.join(result.flags) or 'default flags'}; against {against}; load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())})")
    print(f"{'tool':36} {'wall s':>7} {'CPU s':>7} {'RSS MB':>7} {'tree PSS MB':>12} {'status':>6}")
    for r in result.rows:
        print(f"{r.tool:36} {r.wall:7.2f} {r.cpu:7.2f} {r.rss:7.1f} {r.tree_pss:12.1f} {r.status:6d}")
    ratios = ", ".join(f"{m} {result.ratio(m):.2f}" for m in ("wall", "cpu", "tree_pss"))
    print(f"torchgen wrote {result.torchgen_files} files ({result.torchgen_bytes / 1e6:.1f} MB); opgen wrote "
          f"{result.opgen_files} ({result.opgen_bytes / 1e6:.1f} MB), {result.identical} identical to "
          f"torchgen's{modulo_note(result)}; opgen/torchgen (best of {runs}): {ratios}")


def modulo_note(result: LayoutResult) -> str:
    """What the identical count took modulo tag order, said."""
    if not result.modulo_tag_order:
        return " (byte for byte)"
    return (f" ({', '.join(result.modulo_tag_order)} modulo the order inside each tag list, which gen.py takes "
            "from a set; the rest byte for byte)")


def bench_incremental(ref: Reference, runs: int) -> None:
    from opgen_lsp.codegen.files.context import GenerateOptions
    from opgen_lsp.codegen.generate import Engine
    from opgen_lsp.releases import DEFAULT, resolve

    aten = ref.aten
    resolved = resolve(ref.version, "--torch-release") if ref.version else None
    with open(os.path.join(aten, "native", "native_functions.yaml"), encoding="utf-8") as f:
        text = f.read()
    engine = Engine(GenerateOptions(source_path=aten, release=resolved.release if resolved else DEFAULT))
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
    torch_release.add_argument(parser)
    args, extra = parser.parse_known_args()
    ref = Reference()
    if args.torch_release:
        try:
            ref = Reference(args.torch_release, torch_release.folder(args.torch_release))
        except (RuntimeError, OSError) as exc:
            print(f"bench_generate: torch {args.torch_release}'s torchgen cannot be had: {exc}", file=sys.stderr)
            return 2
    with tempfile.TemporaryDirectory() as tmp:
        for layout in filter(None, args.layouts.split(",")):
            bench_layout(ref, layout, extra, args.runs, tmp)
    if not args.no_incremental:
        bench_incremental(ref, max(args.runs, 3))
    return 0


if __name__ == "__main__":
    sys.exit(main())
