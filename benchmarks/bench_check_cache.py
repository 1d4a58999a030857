#!/usr/bin/env python3
"""`opgen check` with its persistent cache, side by side with torchgen's parse, each as a whole process.

    python benchmarks/bench_check_cache.py [--repeat N]

On a copy of the installed torchgen's packaged native_functions.yaml and tags.yaml (its folder also holds a copy of
the installed torch's version.py, so both are read as that release), interleaved, N times each (default 7):

- torchgen: `python -c "from torchgen.gen import parse_native_yaml; parse_native_yaml(NF, TAGS)"`;
- opgen check, --no-cache (today's run, no cache read or written);
- opgen check, cold: an empty cache folder of its own each time (the verdicts are computed and written);
- opgen check, nothing changed: the warm cache, the file as the last run saw it;
- opgen check after a one-entry edit: the warm cache, one entry's func: line given a new trailing comment each
  time (an entry never seen before, in a different entry each time), so the file's verdict is computed again.

Every run's stdout and exit status is compared with the --no-cache run of the same text (a difference stops the
benchmark). Reported: median wall and CPU time of each, their ratios to torchgen's, and the load average before and
after (on a loaded machine the CPU time is the steadier figure). Every run imports opgen from its byte-compiled
files: with PYTHONDONTWRITEBYTECODE set and none written (a fresh worktree), each process compiles every module
again (about 45 ms more), so the benchmark says so and stops; `python3 -m compileall -q server` writes them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from bench_check import REPO, BenchError, find_torchgen, opgen_command, run_child

DEFAULT_REPEAT = 7
GOAL_EDIT_RATIO = 0.15  # issue 32: a check after a one-entry edit, warm cache, at most 0.15x torchgen's parse process
DEFAULT_JSON = REPO / "benchmarks" / "results" / "check_cache.json"


def edit_lines(text: str) -> list[int]:
    """The func: lines of entries spread through the file, to edit in turn."""
    lines = [i for i, line in enumerate(text.splitlines()) if line.startswith("- func:")]
    return lines[:: max(1, len(lines) // 40)]


def edited(text: str, line: int, n: int) -> str:
    lines = text.splitlines(keepends=True)
    lines[line] = lines[line].rstrip("\n") + f"  # edit {n}\n"
    return "".join(lines)


def _not_byte_compiled() -> str | None:
    """A module of opgen's check path whose byte-compiled file is missing or older than its source, else None."""
    import importlib.util

    for name in ("opgen_lsp.cli.main", "opgen_lsp.analysis.check_edit", "opgen_lsp.index.native", "opgen_lsp.model.lower"):
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            return name
        cached = importlib.util.cache_from_source(spec.origin)
        if not os.path.exists(cached) or os.path.getmtime(cached) < os.path.getmtime(spec.origin):
            return name
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=DEFAULT_REPEAT)
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args()
    stale = _not_byte_compiled()
    if stale:
        raise BenchError(f"{stale} has no byte-compiled file (PYTHONDONTWRITEBYTECODE?): every run would compile it; "
                         "run `python3 -m compileall -q server` first")
    torchgen = find_torchgen()
    if torchgen is None:
        raise BenchError("torchgen is not installed (pip install -e '.[conformance]')")
    packaged = torchgen / "packaged" / "ATen" / "native"
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-check-cache-") as tmp:
        folder = Path(tmp) / "native"
        folder.mkdir()
        for name in ("native_functions.yaml", "tags.yaml"):
            shutil.copyfile(packaged / name, folder / name)
        native, tags = folder / "native_functions.yaml", folder / "tags.yaml"
        original = native.read_text(encoding="utf-8")
        spots = edit_lines(original)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        opgen = [*opgen_command(), "check"]
        torchgen_run = [sys.executable, "-c", "import sys; from torchgen.gen import parse_native_yaml; "
                        "parse_native_yaml(sys.argv[1], sys.argv[2])", str(native), str(tags)]
        warm = str(Path(tmp) / "warm")
        times: dict[str, list[float]] = {k: [] for k in ("torchgen", "no cache", "cold", "nothing changed", "edit")}
        cpu: dict[str, list[float]] = {k: [] for k in times}

        def timed(what: str, command: list[str], expected: tuple[int, str] | None) -> tuple[int, str]:
            done = run_child(command, env)
            if what == "torchgen" and done.returncode != 0:
                raise BenchError(f"torchgen failed: {done.stderr[-2000:]}")
            if expected is not None and (done.returncode, done.stdout) != expected:
                raise BenchError(f"{what}: not the output of --no-cache:\n{done.stdout[-2000:]}\n{expected[1][-2000:]}")
            times[what].append(done.wall)
            if done.cpu is not None:
                cpu[what].append(done.cpu)
            return done.returncode, done.stdout

        native.write_text(original, encoding="utf-8")
        plain = timed("no cache", [*opgen, "--no-cache", str(native)], None)
        run_child([*opgen, "--cache-dir", warm, str(native)], env)  # the warm cache, for the first "nothing changed"
        for n in range(args.repeat):
            print(f"round {n + 1}/{args.repeat}", file=sys.stderr, flush=True)
            native.write_text(original, encoding="utf-8")
            timed("torchgen", torchgen_run, None)
            if n:
                timed("no cache", [*opgen, "--no-cache", str(native)], plain)
            timed("cold", [*opgen, "--cache-dir", str(Path(tmp) / f"cold{n}"), str(native)], plain)
            timed("nothing changed", [*opgen, "--cache-dir", warm, str(native)], plain)
            native.write_text(edited(original, spots[n % len(spots)], n), encoding="utf-8")
            expected = run_child([*opgen, "--no-cache", str(native)], env)
            timed("edit", [*opgen, "--cache-dir", warm, str(native)], (expected.returncode, expected.stdout))
    load_after = os.getloadavg()
    medians = {k: statistics.median(v) for k, v in times.items()}
    cpu_medians = {k: statistics.median(v) for k, v in cpu.items() if v}
    reference = medians["torchgen"]
    cpu_reference = cpu_medians.get("torchgen")
    print(f"\n`opgen check` with the persistent cache, whole processes, median of {args.repeat} "
          f"({os.cpu_count()} CPUs; load average before {' '.join(f'{x:.2f}' for x in load_before)}, after "
          f"{' '.join(f'{x:.2f}' for x in load_after)})\n")
    print("| run | wall (s) | ratio to torchgen's parse | CPU (s) | CPU ratio |")
    print("|---|---:|---:|---:|---:|")
    for what, seconds in medians.items():
        used = cpu_medians.get(what)
        cpu_cells = f"{used:.3f} | {used / cpu_reference:.2f}" if used is not None and cpu_reference else "- | -"
        print(f"| {what} | {seconds:.3f} | {seconds / reference:.2f} | {cpu_cells} |")
    ratio = medians["edit"] / reference
    print(f"\none-entry edit, warm cache: {ratio:.2f}x torchgen's parse (goal <= {GOAL_EDIT_RATIO}: "
          f"{'met' if ratio <= GOAL_EDIT_RATIO else 'NOT met'}); every cached run's output equals --no-cache's")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"medians": medians, "runs": times, "cpu_medians": cpu_medians, "cpu_runs": cpu,
                                     "load_before": load_before,
                                     "load_after": load_after, "repeat": args.repeat}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as exc:
        print(f"bench_check_cache: {exc}", file=sys.stderr)
        sys.exit(1)
