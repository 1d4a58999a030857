#!/usr/bin/env python3
"""Time opgen's check of native_functions.yaml against torchgen's parse of the same file.

One run measures:

1. torchgen: ``torchgen.gen.parse_native_yaml(path, tags)`` in a fresh process per
   repetition (torchgen caches parses globally), the call alone and the whole process;
2. opgen, cold: ``NativeParser().parse(text, tags)`` in a fresh process per repetition,
   the call alone, and the wall time of ``opgen check PATH --tags TAGS``;
3. opgen, incremental: one ``NativeParser`` kept across edits of single entries, as the
   language server uses it; median and p95 of the re-check;
4. the peak resident memory of each of those processes.

It prints a Markdown table and writes the results as JSON (see README.md beside this file).
Only the standard library, opgen_lsp and torchgen are used.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import importlib.metadata
import importlib.util
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import torch_release

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_JSON = HERE / "results" / "check.json"

DEFAULT_REPEAT = 5
DEFAULT_EDITS = 50
QUICK_REPEAT = 2
QUICK_EDITS = 10
# How many entries, spread through the file, the incremental edits go round.
EDIT_SITES = 5

# The goals.
CHECK_RATIO_GOAL = 0.5  # opgen's whole-file check takes at most this fraction of torchgen's parse
INCREMENTAL_GOAL_MS = 20.0  # median re-check after a one-entry edit

# Each child reads its inputs, times only the call, and prints one JSON line.
TORCHGEN_CHILD = r"""
import json, sys, time
from torchgen.gen import parse_native_yaml
path, tags_path = sys.argv[1], sys.argv[2]
start = time.perf_counter()
parsed = parse_native_yaml(path, tags_path)
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "functions": len(parsed.native_functions)}))
"""

OPGEN_CHILD = r"""
import json, sys, time
from opgen_lsp.index.native import NativeParser, TagsParser
from opgen_lsp.releases import DEFAULT, resolve
path, tags_path = sys.argv[1], sys.argv[2]
release = resolve(sys.argv[3], "--torch-release").release if len(sys.argv) > 3 else DEFAULT
with open(tags_path, encoding="utf-8") as f:
    tags = TagsParser().parse(f.read())
with open(path, encoding="utf-8") as f:
    text = f.read()
parser = NativeParser(release=release)
start = time.perf_counter()
snapshot = parser.parse(text, tags.names)
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "functions": len(snapshot.functions.ops),
                  "diagnostics": len(snapshot.diagnostics)}))
"""


class BenchError(Exception):
    """A measurement could not be made; the message says why."""


def paired_ratio(opgen: list[float], torchgen: list[float]) -> float:
    """The median over repetitions of opgen's timed call over torchgen's, the two run one after the other in the
    same repetition (measure_processes): a drift of a shared machine's speed, which lasts minutes, hits both of a
    pair, where a ratio of the two medians takes each tool's calls from different minutes."""
    return statistics.median(o / t for o, t in zip(opgen, torchgen, strict=True))


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- inputs


def find_torchgen() -> Path | None:
    """torchgen's package folder, found without importing it (nor torch)."""
    try:
        spec = importlib.util.find_spec("torchgen")
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return Path(list(spec.submodule_search_locations)[0])
    if spec.origin:
        return Path(spec.origin).parent
    return None


def resolve_inputs(args: argparse.Namespace, torchgen_dir: Path) -> tuple[Path, Path]:
    packaged = torchgen_dir / "packaged" / "ATen" / "native"
    native = Path(args.native_functions) if args.native_functions else packaged / "native_functions.yaml"
    if args.tags:
        tags = Path(args.tags)
    elif args.native_functions and (native.parent / "tags.yaml").is_file():
        tags = native.parent / "tags.yaml"
    else:
        tags = packaged / "tags.yaml"
    for what, path in (("native_functions.yaml", native), ("tags.yaml", tags)):
        if not path.is_file():
            raise BenchError(f"{what} not found: {path}")
    return native.resolve(), tags.resolve()


def opgen_command() -> list[str]:
    """The `opgen` console script of this interpreter, else the one on PATH, else `python -m`.

    The script beside sys.executable comes first: a shim on PATH (pyenv, asdf) would add
    its own start-up time to the measurement.
    """
    bin_dir = Path(sys.executable).parent
    for name in ("opgen", "opgen.exe"):
        candidate = bin_dir / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return [str(candidate)]
    found = shutil.which("opgen")
    if found:
        return [found]
    return [sys.executable, "-m", "opgen_lsp.cli"]


# --------------------------------------------------------------------------- subprocesses


@dataclass
class ChildRun:
    wall: float  # seconds, from start to reaped
    maxrss: int | None  # bytes; None where os.wait4 does not exist
    returncode: int
    stdout: str
    stderr: str
    cpu: float | None = None  # seconds of user and system time; None where os.wait4 does not exist


def _maxrss_bytes(ru_maxrss: int) -> int:
    # Kilobytes on Linux and the BSDs, bytes on macOS.
    return ru_maxrss if sys.platform == "darwin" else ru_maxrss * 1024


def run_child(command: list[str], env: dict[str, str] | None = None) -> ChildRun:
    """Run one process to the end; its peak RSS comes from wait4 on that very process.

    (RUSAGE_CHILDREN reports the largest of all children so far, so it cannot tell
    the processes apart once a bigger one has run.)
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env)
        maxrss: int | None = None
        cpu: float | None = None
        if hasattr(os, "wait4"):
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - start
            proc.returncode = os.waitstatus_to_exitcode(status)
            maxrss = _maxrss_bytes(usage.ru_maxrss)
            cpu = usage.ru_utime + usage.ru_stime
        else:
            proc.wait()
            wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        return ChildRun(wall, maxrss, proc.returncode,
                        out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace"), cpu)


def _child_json(run: ChildRun, what: str) -> dict:
    if run.returncode != 0:
        raise BenchError(f"{what} failed (exit {run.returncode}):\n{run.stderr.strip()[-2000:]}")
    lines = run.stdout.strip().splitlines()
    try:
        return json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        raise BenchError(f"{what} printed no result:\n{run.stdout[-1000:]}\n{run.stderr[-2000:]}") from None


@dataclass
class Series:
    """Repeated measurements of one kind of process."""

    seconds: list[float]  # the timed call (empty for the CLI)
    wall: list[float]
    maxrss: list[int]
    extra: dict

    def as_json(self) -> dict:
        out: dict = {}
        if self.seconds:
            out["call_seconds"] = self.seconds
            out["call_seconds_median"] = statistics.median(self.seconds)
        out["wall_seconds"] = self.wall
        out["wall_seconds_median"] = statistics.median(self.wall)
        out["peak_rss_bytes"] = self.maxrss
        out["peak_rss_bytes_median"] = statistics.median(self.maxrss) if self.maxrss else None
        out.update(self.extra)
        return out


def measure_processes(native: Path, tags: Path, repeat: int, release: str | None = None,
                      release_folder: Path | None = None) -> tuple[Series, Series, Series]:
    """torchgen's parse, opgen's parse and `opgen check`, interleaved so drift hits all three alike (release:
    that torch release's torchgen, from release_folder, and opgen held to that release)."""
    torchgen = Series([], [], [], {})
    opgen = Series([], [], [], {})
    cli_cmd = opgen_command() + ["check", "--no-cache", str(native), "--tags", str(tags),
                                 *torch_release.opgen_flags(release)]  # (a full check: bench_check_cache.py has the cache)
    cli = Series([], [], [], {"command": cli_cmd})
    for rep in range(1, repeat + 1):
        progress(f"  repetition {rep}/{repeat}: torchgen parse_native_yaml ...")
        run = run_child([sys.executable, "-c", TORCHGEN_CHILD, str(native), str(tags)],
                        torch_release.torchgen_env(release_folder))
        result = _child_json(run, "torchgen's parse_native_yaml")
        torchgen.seconds.append(result["seconds"])
        torchgen.wall.append(run.wall)
        if run.maxrss is not None:
            torchgen.maxrss.append(run.maxrss)
        torchgen.extra["functions"] = result["functions"]

        progress(f"  repetition {rep}/{repeat}: opgen NativeParser().parse ...")
        run = run_child([sys.executable, "-c", OPGEN_CHILD, str(native), str(tags), *([release] if release else [])])
        result = _child_json(run, "opgen's NativeParser().parse")
        opgen.seconds.append(result["seconds"])
        opgen.wall.append(run.wall)
        if run.maxrss is not None:
            opgen.maxrss.append(run.maxrss)
        opgen.extra["functions"] = result["functions"]
        opgen.extra["diagnostics"] = result["diagnostics"]

        progress(f"  repetition {rep}/{repeat}: opgen check (CLI) ...")
        run = run_child(cli_cmd)
        # 1 only means the file has errors, which is still a complete check.
        if run.returncode not in (0, 1):
            raise BenchError(f"`{' '.join(cli_cmd)}` failed (exit {run.returncode}):\n{run.stderr.strip()[-2000:]}")
        cli.wall.append(run.wall)
        if run.maxrss is not None:
            cli.maxrss.append(run.maxrss)
        cli.extra["returncode"] = run.returncode
    return torchgen, opgen, cli


# --------------------------------------------------------------------------- incremental

_INT_DEFAULT = re.compile(r"\b(?:int|SymInt) \w+=(-?\d+)")


def pick_edit_sites(lines: list[str], count: int) -> list[int]:
    """Func lines of `count` entries spread evenly through the file.

    Entries with an integer default are preferred, so that some edits can change a
    default value; without enough of those any entry's func line will do.
    """
    func_lines = [i for i, line in enumerate(lines) if line.startswith("- func:")]
    if not func_lines:
        raise BenchError("no '- func:' lines found; is this a native_functions.yaml?")
    with_default = [i for i in func_lines if _INT_DEFAULT.search(lines[i])]
    pool = with_default if len(with_default) >= count else func_lines
    count = min(count, len(pool))
    return sorted({pool[int((k + 0.5) * len(pool) / count)] for k in range(count)})


def edited_line(original: str, edit: int, visit: int) -> tuple[str, str]:
    """The func line for one edit, made from the original line; unique for each edit number.

    Visits to an entry alternate between adding a trailing comment and changing an
    integer default (where the line has one).
    """
    match = _INT_DEFAULT.search(original)
    if visit % 2 == 1 and match is not None:
        value = int(match.group(1)) + 1 + edit
        return original[:match.start(1)] + str(value) + original[match.end(1):], "default"
    return f"{original}  # opgen-bench edit {edit}", "comment"


def nearest_rank(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


def measure_incremental(native: Path, tags_path: Path, edits: int, release: str | None = None) -> dict:
    """Re-check after one-entry edits with a single, long-lived NativeParser (in this process)."""
    import opgen_lsp.index.native as native_module
    from opgen_lsp.index.native import NativeParser, TagsParser
    from opgen_lsp.releases import DEFAULT, resolve

    profile = resolved.release if release and (resolved := resolve(release, "--torch-release")) else DEFAULT
    tags = TagsParser().parse(tags_path.read_text(encoding="utf-8")).names
    text = native.read_text(encoding="utf-8")
    lines = text.split("\n")
    sites = pick_edit_sites(lines, EDIT_SITES)

    # Count how many entries each parse lowers, to confirm that only the edited one is.
    lowered = [0]
    original_lower = getattr(native_module, "lower_native_function", None)
    if original_lower is not None:
        def counting_lower(*a, **k):
            lowered[0] += 1
            return original_lower(*a, **k)
        native_module.lower_native_function = counting_lower
    try:
        parser = NativeParser(release=profile)
        start = time.perf_counter()
        first = parser.parse(text, tags)
        first_seconds = time.perf_counter() - start
        entries = len(first.document.entries)
        first_lowered = lowered[0]
        # A long-lived process (the language server) moves what it loaded out of the collector's
        # reach once, so later collections do not walk ~200k objects that never die.
        gc.collect()
        gc.freeze()

        unchanged: list[float] = []
        for _ in range(3):
            start = time.perf_counter()
            parser.parse(text, tags)
            unchanged.append(time.perf_counter() - start)

        current = list(lines)
        times: list[float] = []
        per_edit_lowered: list[int] = []
        kinds = {"comment": 0, "default": 0}
        most_diagnostics = len(first.diagnostics)
        for edit in range(edits):
            site = sites[edit % len(sites)]
            current[site], kind = edited_line(lines[site], edit, edit // len(sites))
            kinds[kind] += 1
            edited_text = "\n".join(current)
            lowered[0] = 0
            start = time.perf_counter()
            snapshot = parser.parse(edited_text, tags)
            times.append(time.perf_counter() - start)
            per_edit_lowered.append(lowered[0])
            most_diagnostics = max(most_diagnostics, len(snapshot.diagnostics))
            if len(snapshot.document.entries) != entries:
                raise BenchError(f"edit {edit} at line {site + 1} changed the number of entries "
                                 f"({entries} -> {len(snapshot.document.entries)})")
    finally:
        if original_lower is not None:
            native_module.lower_native_function = original_lower

    ms = [t * 1000 for t in times]
    return {
        "edits": edits,
        "edit_kinds": kinds,
        "edit_sites_lines": [s + 1 for s in sites],
        "entries": entries,
        "first_parse_seconds": first_seconds,
        "first_parse_entries_lowered": first_lowered if original_lower is not None else None,
        "unchanged_recheck_ms": [t * 1000 for t in unchanged],
        "unchanged_recheck_ms_median": statistics.median(unchanged) * 1000,
        "recheck_ms": ms,
        "recheck_ms_median": statistics.median(ms),
        "recheck_ms_p95": nearest_rank(ms, 0.95),
        "recheck_ms_max": max(ms),
        "entries_lowered_per_edit": per_edit_lowered if original_lower is not None else None,
        "most_diagnostics": most_diagnostics,
    }


# --------------------------------------------------------------------------- report


def machine_info() -> dict:
    info: dict = {
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "machine": platform.machine(),
    }
    if hasattr(os, "sched_getaffinity"):
        info["cpus_usable"] = len(os.sched_getaffinity(0))
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu_model"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    for package in ("torch", "opgen-lsp"):
        try:
            info[f"{package}_version"] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            info[f"{package}_version"] = None
    return info


def git_info() -> dict | None:
    try:
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if head.returncode != 0:
        return None
    return {"commit": head.stdout.strip(), "dirty": bool(dirty.stdout.strip())}


def _seconds(value: float) -> str:
    return f"{value:.3f} s"


def _ms(value: float) -> str:
    return f"{value:.1f} ms"


def _mib(value: float | None) -> str:
    return "n/a" if value is None else f"{value / (1024 * 1024):.0f} MiB"


def _ratio(opgen: float | None, torchgen: float | None) -> str:
    if opgen is None or not torchgen:
        return "—"
    return f"{opgen / torchgen:.2f}"


def _met(ok: bool) -> str:
    return "yes" if ok else "**no**"


def build_table(results: dict) -> tuple[str, list[dict]]:
    tg, og, cli, inc = results["torchgen"], results["opgen"], results["opgen_cli"], results["incremental"]
    repeat, edits = results["settings"]["repeat"], results["settings"]["edits"]

    tg_call, og_call = tg["call_seconds_median"], og["call_seconds_median"]
    paired = paired_ratio(og["call_seconds"], tg["call_seconds"])
    check_met = paired <= CHECK_RATIO_GOAL
    inc_met = inc["recheck_ms_median"] < INCREMENTAL_GOAL_MS
    goals = [
        {"name": "whole-file check time", "goal": f"opgen <= {CHECK_RATIO_GOAL} x torchgen parse time",
         "value": paired, "met": check_met},
        {"name": "incremental re-check", "goal": f"median < {INCREMENTAL_GOAL_MS:g} ms",
         "value": inc["recheck_ms_median"], "met": inc_met},
    ]

    rows = [
        (f"whole-file parse, timed call only (median of {repeat} fresh processes; ratio: median of the {repeat} pairs "
         f"run one after the other, of the medians {og_call / tg_call:.2f})",
         _seconds(tg_call), _seconds(og_call), f"{paired:.2f}",
         f"≤ {CHECK_RATIO_GOAL:g} × torchgen", _met(check_met)),
        (f"whole process: `python -c parse_native_yaml` vs `opgen check` (median of {repeat})",
         _seconds(tg["wall_seconds_median"]), _seconds(cli["wall_seconds_median"]),
         _ratio(cli["wall_seconds_median"], tg["wall_seconds_median"]), "—", "—"),
        (f"whole process: `python -c parse_native_yaml` vs `python -c NativeParser().parse` (median of {repeat})",
         _seconds(tg["wall_seconds_median"]), _seconds(og["wall_seconds_median"]),
         _ratio(og["wall_seconds_median"], tg["wall_seconds_median"]), "—", "—"),
        (f"incremental re-check after a one-entry edit, median ({edits} edits)",
         "—", _ms(inc["recheck_ms_median"]), "—", f"< {INCREMENTAL_GOAL_MS:g} ms", _met(inc_met)),
        (f"incremental re-check after a one-entry edit, p95 ({edits} edits)",
         "—", _ms(inc["recheck_ms_p95"]), "—", "—", "—"),
        ("re-check of unchanged text, median (split + cross-entry checks only)",
         "—", _ms(inc["unchanged_recheck_ms_median"]), "—", "—", "—"),
        (f"peak RSS: parse process vs `python -c NativeParser().parse` (median of {repeat})",
         _mib(tg["peak_rss_bytes_median"]), _mib(og["peak_rss_bytes_median"]),
         _ratio(og["peak_rss_bytes_median"], tg["peak_rss_bytes_median"]), "—", "—"),
        (f"peak RSS: parse process vs `opgen check` (median of {repeat})",
         _mib(tg["peak_rss_bytes_median"]), _mib(cli["peak_rss_bytes_median"]),
         _ratio(cli["peak_rss_bytes_median"], tg["peak_rss_bytes_median"]), "—", "—"),
    ]
    header = ("measurement", "torchgen", "opgen", "ratio opgen/torchgen", "goal", "met?")
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["---:"] * 3 + ["---"] * 2) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines), goals


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Benchmark opgen's check of native_functions.yaml against torchgen's parse_native_yaml.")
    parser.add_argument("--native-functions", metavar="F",
                        help="native_functions.yaml to use (default: the one packaged with torchgen)")
    parser.add_argument("--tags", metavar="F",
                        help="tags.yaml to use (default: beside --native-functions, else torchgen's)")
    parser.add_argument("--repeat", type=int, metavar="N",
                        help=f"fresh processes per whole-file measurement (default {DEFAULT_REPEAT}; "
                             f"{QUICK_REPEAT} with --quick)")
    parser.add_argument("--edits", type=int, metavar="N",
                        help=f"one-entry edits for the incremental measurement (default {DEFAULT_EDITS}; "
                             f"{QUICK_EDITS} with --quick)")
    torch_release.add_argument(parser)
    parser.add_argument("--json", metavar="PATH", default=str(DEFAULT_JSON),
                        help=f"where to write the results (default {DEFAULT_JSON.relative_to(REPO)})")
    parser.add_argument("--quick", action="store_true",
                        help=f"fewer repetitions: --repeat {QUICK_REPEAT} --edits {QUICK_EDITS} unless given")
    args = parser.parse_args(argv)
    if args.repeat is None:
        args.repeat = QUICK_REPEAT if args.quick else DEFAULT_REPEAT
    if args.edits is None:
        args.edits = QUICK_EDITS if args.quick else DEFAULT_EDITS
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.edits < 1:
        parser.error("--edits must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)

    release_folder = None
    if args.torch_release:
        try:
            release_folder = torch_release.folder(args.torch_release)
        except (RuntimeError, OSError) as exc:
            print(f"bench_check: torch {args.torch_release}'s torchgen cannot be had: {exc}", file=sys.stderr)
            return 2
    torchgen_dir = release_folder / "torchgen" if release_folder else find_torchgen()
    if torchgen_dir is None:
        print("bench_check: torchgen is not importable, so there is nothing to compare opgen with.\n"
              "torchgen ships inside the torch wheel; install the reference with\n"
              "    pip install 'torch==2.13.0'\n"
              "(or `pip install -e '.[conformance]'` at the repository root) and run again.", file=sys.stderr)
        return 2
    if importlib.util.find_spec("opgen_lsp") is None:
        print("bench_check: opgen_lsp is not importable; install it with `pip install -e .` at the "
              "repository root.", file=sys.stderr)
        return 2

    try:
        native, tags = resolve_inputs(args, torchgen_dir)
    except BenchError as exc:
        print(f"bench_check: {exc}", file=sys.stderr)
        return 2

    try:
        progress(f"bench_check: {native}\n             {tags}")
        progress(f"whole-file measurements, {args.repeat} fresh processes each:")
        torchgen, opgen, cli = measure_processes(native, tags, args.repeat, args.torch_release, release_folder)
        progress(f"incremental measurement, {args.edits} edits:")
        incremental = measure_incremental(native, tags, args.edits, args.torch_release)
    except BenchError as exc:
        print(f"bench_check: {exc}", file=sys.stderr)
        return 1

    results: dict = {
        "timestamp": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": machine_info(),
        "git": git_info(),
        "inputs": {
            "native_functions": str(native),
            "tags": str(tags),
            "native_functions_lines": native.read_text(encoding="utf-8").count("\n"),
        },
        "settings": {"repeat": args.repeat, "edits": args.edits, "edit_sites": EDIT_SITES,
                     "torch_release": args.torch_release},
        "torchgen": torchgen.as_json(),
        "opgen": opgen.as_json(),
        "opgen_cli": cli.as_json(),
        "incremental": incremental,
    }
    table, goals = build_table(results)
    results["goals"] = goals

    machine = results["machine"]
    against = f" (torch {args.torch_release}'s own)" if args.torch_release else ""
    print(f"## opgen check vs torchgen parse_native_yaml{against}\n")
    print(f"`{native}` ({results['inputs']['native_functions_lines']} lines, {incremental['entries']} entries; "
          f"torchgen {torchgen.extra['functions']} functions, opgen {opgen.extra['functions']}); "
          f"Python {machine['python']}, {machine['cpu_count']} CPUs, torch {machine.get('torch_version')}\n")
    print(table)
    lowered = incremental["entries_lowered_per_edit"]
    if lowered is not None:
        print(f"\nEntries lowered per edit: {min(lowered)}–{max(lowered)} "
              f"(first parse: {incremental['first_parse_entries_lowered']}).")
    if torchgen.extra["functions"] != opgen.extra["functions"]:
        print(f"\nNote: torchgen found {torchgen.extra['functions']} functions and opgen "
              f"{opgen.extra['functions']}.")

    json_path = Path(args.json)
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    progress(f"results written to {json_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
