"""Fresh-process runs of two code generators, timed and compared (bench_generate_backend / bench_generate_lazy).

Each repetition runs every command once, in order (interleaved, so that drift in the machine's speed hits
all alike), in its own empty temporary folder, and records the wall time and the CPU time (user + system,
what the load of a shared machine disturbs least) of the whole process. The files each writes into `out`
are kept from its first run and compared byte for byte.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import torch_release


@dataclass(frozen=True)
class Timing:
    wall: float
    cpu: float


def run_once(cmd: list[str], env: Mapping[str, str] | None = None) -> tuple[Timing, dict[str, bytes]]:
    with tempfile.TemporaryDirectory() as tmp:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(cmd, cwd=tmp, capture_output=True, env=env)
        elapsed = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        out = Path(tmp) / "out"
        return Timing(elapsed, cpu), {p.name: p.read_bytes() for p in sorted(out.iterdir())}


def run_all(cmds: Mapping[str, list[str]], repeat: int, envs: Mapping[str, Mapping[str, str]] | None = None
            ) -> tuple[dict[str, list[Timing]], dict[str, dict[str, bytes]]]:
    """Timings and first outputs of each command (raises RuntimeError when a run fails)."""
    times: dict[str, list[Timing]] = {name: [] for name in cmds}
    outputs: dict[str, dict[str, bytes]] = {}
    for i in range(repeat):
        for name, cmd in cmds.items():
            timing, files = run_once(cmd, (envs or {}).get(name))
            times[name].append(timing)
            outputs.setdefault(name, files)
        print(f"bench: repetition {i + 1}/{repeat} done", file=sys.stderr)
    return times, outputs


def print_table(title: str, times: Mapping[str, list[Timing]], outputs: Mapping[str, dict[str, bytes]],
                goal: float) -> bool:
    """A Markdown table of medians, with the ratio of the second command to the first in wall and in CPU
    time; True when the outputs are byte-identical."""
    same = len({tuple(sorted(o.items())) for o in outputs.values()}) == 1
    print(f"| {title} | median wall time | min | max | median CPU time | min |")
    print("|---|---|---|---|---|---|")
    for name, values in times.items():
        wall, cpu = [v.wall for v in values], [v.cpu for v in values]
        print(f"| {name} | {statistics.median(wall):.3f} s | {min(wall):.3f} s | {max(wall):.3f} s "
              f"| {statistics.median(cpu):.3f} s | {min(cpu):.3f} s |")
    theirs, ours = times.values()
    ratios = [statistics.median(v.wall for v in ours) / statistics.median(v.wall for v in theirs),
              statistics.median(v.cpu for v in ours) / statistics.median(v.cpu for v in theirs)]
    shown = [f"{r:.2f} (goal <= {goal}: {'met' if r <= goal else 'not met'})" for r in ratios]
    print(f"| {' / '.join(reversed(list(times)))} | {shown[0]} | | | {shown[1]} | |")
    files = ", ".join(sorted(next(iter(outputs.values()))))
    print(f"| outputs | {'byte-identical' if same else 'DIFFER'} ({files}) | | | | |")
    return same


def bench_arguments(doc: str, default_yaml: Path, argv: list[str] | None) -> argparse.Namespace | None:
    """--repeat, --yaml and --torch-release, once torchgen and opgen_lsp import, the release's torchgen is there
    (args.release_folder; None for the installed torch's) and the yaml exists; None (said why) if not."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="fresh-process runs of each tool (default 5)")
    parser.add_argument("--yaml", type=Path, default=default_yaml, help="backend yaml (default: torch_xla's)")
    torch_release.add_argument(parser)
    args = parser.parse_args(argv)
    try:
        import torchgen  # noqa: F401

        import opgen_lsp  # noqa: F401
    except ImportError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return None
    args.release_folder = None
    if args.torch_release:
        try:
            args.release_folder = torch_release.folder(args.torch_release)
        except (RuntimeError, OSError) as exc:
            print(f"bench: torch {args.torch_release}'s torchgen cannot be had: {exc}", file=sys.stderr)
            return None
    if not args.yaml.is_file():
        print(f"bench: no such file {args.yaml}", file=sys.stderr)
        return None
    return args


def release_inputs(yaml: Path, version: str | None, release_folder: Path | None, tmp: Path
                   ) -> tuple[Path, list[str], Path]:
    """For a release's own torchgen: the backend yaml fitted to the release (in tmp), opgen's flags for the
    release's inputs, and the PYTHONPATH folder of a PyTorch-shaped tree around its torchgen (in tmp)."""
    fitted = tmp / yaml.name
    fitted.write_text(torch_release.fit_backend_yaml(yaml.read_text(encoding="utf-8"), version), encoding="utf-8")
    aten = torch_release.torchgen_package(release_folder) / "packaged" / "ATen"
    flags = ["--native-functions", str(aten / "native" / "native_functions.yaml"), "--templates", str(aten / "templates"),
             *torch_release.opgen_flags(version)] if version else []
    return fitted, flags, torch_release.pytorch_shaped(release_folder, tmp / "oracle")


def leave_out_refused(fitted: Path, opgen_cmd: list[str]) -> list[str]:
    """For an older release: the ops its generators fail on, which opgen refuses naming each (OPG514, OPG513;
    tests/release_fit.py), left out of the fitted yaml as the release matrix leaves them out. Runs `opgen_cmd`
    once, untimed; returns the ops left out (none when opgen takes the yaml). Whether that was enough, the
    release's own torchgen then says."""
    import release_fit

    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(opgen_cmd, cwd=tmp, capture_output=True, text=True)
    found = release_fit.refusals(done.stdout + done.stderr)
    if done.returncode == 0 or not found:
        return []
    fitted.write_text(release_fit.without_refused(fitted.read_text(encoding="utf-8"), found), encoding="utf-8")
    return found.names()


def measure(title: str, cmds: Mapping[str, list[str]], repeat: int, goal: float,
            envs: Mapping[str, Mapping[str, str]] | None = None, fitted: Path | None = None) -> int:
    """Run and print the table: 0 when measured (goal met or not), 1 when a run failed or the outputs differ.
    fitted: the yaml fitted to an older release (release_inputs), less the ops opgen refuses for it."""
    if fitted is not None and (left_out := leave_out_refused(fitted, list(cmds.values())[1])):
        print(f"bench: without {', '.join(left_out)} (the release's generators fail on them)", file=sys.stderr)
    try:
        times, outputs = run_all(cmds, repeat, envs)
    except RuntimeError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 1
    return 0 if print_table(title, times, outputs, goal) else 1
