#!/usr/bin/env python3
"""Every cached torch release against its own torchgen, in one run, as one Markdown table of ratios.

For each release (default: every one complete in tools/torchgen_release.py's cache, ~/.cache/opgen/torchgen):

- check: opgen's whole-file check against the release's parse_native_yaml, timed calls in fresh processes
  (bench_check.py's children), and the re-check after one-entry edits (bench_check.py's incremental run);
- generate, plain layout: `opgen generate` against the release's `python -m torchgen.gen` (bench_generate.py),
  wall and CPU time of the whole process trees, and how many files are identical (as the release matrix compares
  them: before 2.1, RegisterSchema.cpp modulo the order inside each tag list, which gen.py takes from a set);
- generate-backend and generate-lazy on torch_xla's yaml, less the ops the release lacks and those its generators
  fail on (opgen names them, and the matrix leaves them out too), flags spelled as the release takes them
  (bench_generate_backend.py, bench_generate_lazy.py), where the yaml is there (the project's ../shared/corpus, or
  --yaml); lazy also needs the release's shape-inference header, which the cache keeps.

What opgen cannot do for a release yet (it exits non-zero) is shown in its cell, not measured. The load average is
printed before and after: the ratios are only as good as the machine was quiet.

    python3 benchmarks/bench_releases.py --quick                      # every cached release: about 6 minutes
    python3 benchmarks/bench_releases.py --releases 2.6.0,2.15.0

Writes the figures as JSON (default benchmarks/results/releases.json). Exit status 0 when every cell was measured
or explained, 2 when a release named is not in the cache and cannot be fetched.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import bench_check
import bench_generate
import bench_generate_backend
import bench_generate_lazy
import tool_runs
import torch_release

HERE = Path(__file__).resolve().parent
DEFAULT_JSON = HERE / "results" / "releases.json"
DEFAULT_YAML = Path(os.environ.get("OPGEN_CORPUS") or HERE.parent.parent / "shared" / "corpus") \
    / "pytorch-xla__xla_native_functions.yaml"

GOALS = {"check": bench_check.CHECK_RATIO_GOAL, "recheck_ms": bench_check.INCREMENTAL_GOAL_MS, "generate": 0.2,
         "backend": bench_generate_backend.GOAL, "lazy": bench_generate_lazy.GOAL}


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def bench_check_release(version: str, folder: Path, repeat: int, edits: int) -> dict[str, Any]:
    native_dir = folder / "torchgen" / "packaged" / "ATen" / "native"
    native, tags = native_dir / "native_functions.yaml", native_dir / "tags.yaml"
    torchgen, opgen, _ = bench_check.measure_processes(native, tags, repeat, version, folder)
    incremental = bench_check.measure_incremental(native, tags, edits, version)
    tg, og = statistics.median(torchgen.seconds), statistics.median(opgen.seconds)
    return {"torchgen_seconds": torchgen.seconds, "opgen_seconds": opgen.seconds, "torchgen_median": tg,
            "opgen_median": og, "ratio": bench_check.paired_ratio(opgen.seconds, torchgen.seconds),
            "ratio_of_medians": og / tg, "recheck_ms_median": incremental["recheck_ms_median"],
            "recheck_ms_p95": incremental["recheck_ms_p95"],
            "functions": [torchgen.extra["functions"], opgen.extra["functions"]]}


def bench_generate_release(version: str, folder: Path, runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        result = bench_generate.measure_layout(bench_generate.Reference(version, folder), "plain", [], runs, tmp)
    out: dict[str, Any] = {"runs": [vars(r) for r in result.rows], "torchgen_files": result.torchgen_files,
                           "opgen_files": result.opgen_files, "identical": result.identical,
                           "opgen_status": result.opgen_status, "modulo_tag_order": list(result.modulo_tag_order)}
    if result.opgen_status != 0:
        out["failed"] = f"opgen exit {result.opgen_status}"
    else:
        out.update(wall_ratio=result.ratio("wall"), cpu_ratio=result.ratio("cpu"),
                   pss_ratio=result.ratio("tree_pss"))
    return out


def _tool_pair(version: str, folder: Path, yaml: Path, repeat: int,
               commands: Callable[[Path, list[str]], dict[str, list[str]]]) -> dict[str, Any]:
    """Both tools of a backend benchmark, fresh processes, interleaved: medians, ratios, byte-identity."""
    with tempfile.TemporaryDirectory() as tmp:
        fitted, flags, lib = tool_runs.release_inputs(yaml, version, folder, Path(tmp))
        cmds = commands(fitted, flags)
        theirs, ours = cmds
        left_out = {"without": tool_runs.leave_out_refused(fitted, cmds[ours])}
        try:
            times, outputs = tool_runs.run_all(cmds, repeat, {theirs: {**os.environ, "PYTHONPATH": str(lib)}})
        except RuntimeError as exc:
            return {"failed": _reason(str(exc)), **left_out}
    medians = {name: {"wall": statistics.median(t.wall for t in ts), "cpu": statistics.median(t.cpu for t in ts)}
               for name, ts in times.items()}
    tg, og = medians.values()  # torchgen's, then opgen's
    return {"medians": medians, "wall_ratio": og["wall"] / tg["wall"], "cpu_ratio": og["cpu"] / tg["cpu"],
            "identical": len({tuple(sorted(o.items())) for o in outputs.values()}) == 1, **left_out}


def _reason(failure: str) -> str:
    """`exit N: <the last line the tool printed>` from tool_runs' 'CMD failed (N): STDERR'."""
    match = re.search(r" failed \((-?\d+)\): (.*)\Z", failure, re.S)
    if match is None:
        return failure.strip().splitlines()[-1][:200] if failure.strip() else "failed"
    said = [line for line in match.group(2).strip().splitlines() if line.strip()]
    return f"exit {match.group(1)}" + (f": {said[-1][:200]}" if said else "")


def bench_backend_release(version: str, folder: Path, yaml: Path, repeat: int) -> dict[str, Any]:
    return _tool_pair(version, folder, yaml, repeat, bench_generate_backend.commands)


def bench_lazy_release(version: str, folder: Path, yaml: Path, repeat: int) -> dict[str, Any]:
    header = torch_release.shape_inference_header(folder)
    if not header.is_file():
        return {"skipped": "no shape-inference header in the cache"}
    return _tool_pair(version, folder, yaml, repeat,
                      lambda fitted, flags: bench_generate_lazy.commands(fitted, header, flags,
                                                                         torch_release.release(version)))


# --------------------------------------------------------------------------- the table


def _met(value: float, goal: float, strict: bool = False) -> str:
    ok = value < goal if strict else value <= goal
    return "" if ok else " (**no**)"


def _cell_check(c: dict[str, Any]) -> str:
    return (f"{c['ratio']:.2f}{_met(c['ratio'], GOALS['check'])} "
            f"({c['opgen_median']:.3f} / {c['torchgen_median']:.3f} s; of the medians {c['ratio_of_medians']:.2f})")


def _cell_recheck(c: dict[str, Any]) -> str:
    return f"{c['recheck_ms_median']:.1f}{_met(c['recheck_ms_median'], GOALS['recheck_ms'], True)}"


def _cell_generate(g: dict[str, Any]) -> str:
    if "failed" in g:
        return f"not generated ({g['failed']})"
    # The goal is of the wall time (README, bench_generate.py); the CPU ratio is for information.
    modulo = g.get("modulo_tag_order")
    return (f"{g['wall_ratio']:.2f}{_met(g['wall_ratio'], GOALS['generate'])} / {g['cpu_ratio']:.2f}; "
            f"{g['identical']}/{g['torchgen_files']} identical" + (f" ({', '.join(modulo)} modulo tag order)"
                                                                   if modulo else ""))


def _cell_pair(b: dict[str, Any], goal: float) -> str:
    without = f" (without {', '.join(b['without'])})" if b.get("without") else ""
    if "failed" in b:
        return f"not generated ({b['failed']}){without}"
    if "skipped" in b:
        return f"— ({b['skipped']})"
    same = "identical" if b["identical"] else "**differ**"
    return f"{b['wall_ratio']:.2f}{_met(b['wall_ratio'], goal)} / {b['cpu_ratio']:.2f}; {same}{without}"


def table(results: dict[str, dict[str, Any]]) -> str:
    header = ["release", f"check: opgen / torchgen, timed call (goal <= {GOALS['check']})",
              f"re-check ms (goal < {GOALS['recheck_ms']:g})",
              f"generate plain: wall (goal <= {GOALS['generate']}) / CPU",
              f"generate-backend: wall (goal <= {GOALS['backend']}) / CPU",
              f"generate-lazy: wall (goal <= {GOALS['lazy']}) / CPU"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for version, r in results.items():
        cells = [version]
        cells.append(_cell_check(r["check"]) if "check" in r else "—")
        cells.append(_cell_recheck(r["check"]) if "check" in r else "—")
        cells.append(_cell_generate(r["generate"]) if "generate" in r else "—")
        cells.append(_cell_pair(r["backend"], GOALS["backend"]) if "backend" in r else "— (no torch_xla yaml)")
        cells.append(_cell_pair(r["lazy"], GOALS["lazy"]) if "lazy" in r else "— (no torch_xla yaml)")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


NOTES = ("Files are compared as the release matrix compares them (tests/release_fit.py): byte for byte, but "
         "RegisterSchema.cpp of a release before 2.1 modulo the order inside each tag list (its gen.py takes it from a "
         "set, so it changes from run to run; opgen writes the tags sorted): a generate cell names it where that was "
         "needed. Backend and lazy use torch_xla's yaml less the ops the release lacks and, as the matrix, less those "
         "its generators fail on (opgen refuses them naming each, OPG514/OPG513; the cell lists them), with the flags "
         "spelled as the release takes them (1.13: underscores only).")


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--releases", help="comma-separated X.Y.Z (default: every release in the cache)")
    parser.add_argument("--quick", action="store_true",
                        help="2 check processes and 10 edits, 1 generate run, 2 backend and lazy runs per release")
    parser.add_argument("--yaml", type=Path, default=DEFAULT_YAML,
                        help="torch_xla's backend yaml (default: ../shared/corpus's, or $OPGEN_CORPUS's)")
    parser.add_argument("--skip", default="", help="comma-separated parts to leave out: check, generate, backend, lazy")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help="where to write the figures")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    versions = args.releases.split(",") if args.releases else torch_release.cached_releases()
    if not versions:
        print("bench_releases: no release in the cache; fetch one with tools/torchgen_release.py X.Y.Z",
              file=sys.stderr)
        return 2
    repeat, edits, runs, pair_repeat = (2, 10, 1, 2) if args.quick else (5, 50, 2, 5)
    skip = set(filter(None, args.skip.split(",")))
    started = load()
    progress(f"bench_releases: {', '.join(versions)}; load average {started}")
    results: dict[str, dict[str, Any]] = {}
    for version in versions:
        try:
            folder = torch_release.folder(version)
        except (RuntimeError, OSError) as exc:
            print(f"bench_releases: torch {version}'s torchgen cannot be had: {exc}", file=sys.stderr)
            return 2
        r: dict[str, Any] = results.setdefault(version, {"load_before": load()})
        if "check" not in skip:
            progress(f"{version}: check")
            try:
                r["check"] = bench_check_release(version, folder, repeat, edits)
            except bench_check.BenchError as exc:
                r["check_failed"] = str(exc)[:300]
        if "generate" not in skip:
            progress(f"{version}: generate (plain)")
            r["generate"] = bench_generate_release(version, folder, runs)
        if args.yaml.is_file():
            if "backend" not in skip:
                progress(f"{version}: generate-backend")
                r["backend"] = bench_backend_release(version, folder, args.yaml, pair_repeat)
            if "lazy" not in skip:
                progress(f"{version}: generate-lazy")
                r["lazy"] = bench_lazy_release(version, folder, args.yaml, pair_repeat)
        r["load_after"] = load()
    finished = load()
    print(f"## opgen against each release's own torchgen ({'quick' if args.quick else 'full'} run; "
          f"{os.cpu_count()} CPUs; load average {started} at the start, {finished} at the end)\n")
    print(table(results))
    print("\nRatios are opgen / torchgen: check, the median over repetitions of opgen's timed call in a fresh process "
          "over torchgen's run just before it (a drift of the machine's speed hits both of a pair; the ratio of the two "
          "tools' medians follows); generate, best of "
          f"{runs} (wall and CPU of the whole process trees); backend and lazy, medians of {pair_repeat} "
          "(wall and CPU of the whole processes). (**no**): the goal is not met.")
    print(NOTES)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    record = {"timestamp": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
              "machine": bench_check.machine_info(), "git": bench_check.git_info(), "quick": args.quick,
              "load_average": {"start": started, "end": finished}, "goals": GOALS, "releases": results}
    args.json.write_text(json.dumps(record, indent=2, default=str) + "\n", encoding="utf-8")
    progress(f"results written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
