"""opgen generate-lazy against torchgen's gen_lazy_tensor on torch_xla's backend yaml (TorchScript settings).

gen_lazy_tensor's main() looks for native_functions.yaml and the templates at
`<its file>.parents[2]/aten/src/ATen`, which an installed wheel does not have,
so the reference runs from a temporary tree shaped like that (ROOT/lib/torchgen
-> the installed torchgen, ROOT/aten/src/ATen -> its packaged ATen, PYTHONPATH=ROOT/lib).
Each repetition runs both tools in fresh processes, interleaved, each into its own empty
temporary folder with the same arguments (`-o out --gen-ts-lowerings --node-base TsNode
--node-base-hdr ... --shape-inference-hdr <the wheel's shape_inference.h>`), and records the
wall time and the CPU time (user + system) of the whole process. The outputs are compared byte for byte. Prints a Markdown table
of medians; goal: opgen <= 0.3 x torchgen.

    python3 benchmarks/bench_generate_lazy.py [--repeat N] [--yaml F]

Exit status: 0 when measured (goal met or not), 1 when a run failed or the outputs differ,
2 when torch (torchgen) or opgen_lsp is not importable or the yaml is missing.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_YAML = ROOT.parent / "shared" / "corpus" / "pytorch-xla__xla_native_functions.yaml"
GOAL = 0.3


@dataclass(frozen=True)
class Timing:
    wall: float
    cpu: float  # user + system time of the process: what the load of a shared machine disturbs least


def oracle_tree(tmp: Path) -> Path:
    import torchgen

    package = Path(torchgen.__file__).parent
    (tmp / "lib").mkdir()
    (tmp / "lib" / "torchgen").symlink_to(package)
    (tmp / "aten" / "src").mkdir(parents=True)
    (tmp / "aten" / "src" / "ATen").symlink_to(package / "packaged" / "ATen")
    return tmp / "lib"


def commands(yaml: Path) -> dict[str, list[str]]:
    import torch

    header = Path(torch.__file__).parent / "include" / "torch" / "csrc" / "lazy" / "core" / "shape_inference.h"
    flags = ["-s", str(yaml), "-o", "out", "--gen-ts-lowerings", "--node-base", "TsNode", "--node-base-hdr",
             "torch/csrc/lazy/ts_backend/ts_node.h", "--shape-inference-hdr", str(header)]
    return {
        "torchgen gen_lazy_tensor": [sys.executable, "-m", "torchgen.gen_lazy_tensor", *flags],
        "opgen generate-lazy": [sys.executable, "-m", "opgen_lsp.cli", "generate-lazy", *flags],
    }


def run_once(cmd: list[str], env: dict[str, str]) -> tuple[Timing, dict[str, bytes]]:
    with tempfile.TemporaryDirectory() as tmp:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(cmd, cwd=tmp, capture_output=True, env=env)
        elapsed = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
        out = Path(tmp) / "out"
        return Timing(elapsed, cpu), {p.name: p.read_bytes() for p in sorted(out.iterdir())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="fresh-process runs of each tool (default 5)")
    parser.add_argument("--yaml", type=Path, default=DEFAULT_YAML, help="backend yaml (default: torch_xla's)")
    args = parser.parse_args(argv)
    try:
        import opgen_lsp  # noqa: F401
        import torchgen  # noqa: F401
    except ImportError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 2
    if not args.yaml.is_file():
        print(f"bench: no such file {args.yaml}", file=sys.stderr)
        return 2
    cmds = commands(args.yaml)
    times: dict[str, list[Timing]] = {name: [] for name in cmds}
    outputs: dict[str, dict[str, bytes]] = {}
    with tempfile.TemporaryDirectory() as tree:
        lib = oracle_tree(Path(tree))
        envs = {"torchgen gen_lazy_tensor": {**os.environ, "PYTHONPATH": str(lib)},
                "opgen generate-lazy": dict(os.environ)}
        try:
            for i in range(args.repeat):
                for name, cmd in cmds.items():
                    elapsed, files = run_once(cmd, envs[name])
                    times[name].append(elapsed)
                    outputs.setdefault(name, files)
                print(f"bench: repetition {i + 1}/{args.repeat} done", file=sys.stderr)
        except RuntimeError as exc:
            print(f"bench: {exc}", file=sys.stderr)
            return 1
    same = len({tuple(sorted(o.items())) for o in outputs.values()}) == 1
    print(f"| `{args.yaml.name}`, TorchScript settings ({os.cpu_count()} CPUs, {args.repeat} runs each) "
          "| median wall time | min | max | median CPU time | min |")
    print("|---|---|---|---|---|---|")
    for name, values in times.items():
        wall, cpu = [v.wall for v in values], [v.cpu for v in values]
        print(f"| {name} | {statistics.median(wall):.3f} s | {min(wall):.3f} s | {max(wall):.3f} s "
              f"| {statistics.median(cpu):.3f} s | {min(cpu):.3f} s |")
    theirs, ours = (times[n] for n in cmds)
    ratios = [statistics.median(v.wall for v in ours) / statistics.median(v.wall for v in theirs),
              statistics.median(v.cpu for v in ours) / statistics.median(v.cpu for v in theirs)]
    print("| opgen / torchgen | " + " | | | ".join(f"{r:.2f} (goal <= {GOAL}: {'met' if r <= GOAL else 'not met'})"
                                                    for r in ratios) + " | |")
    print(f"| outputs | {'byte-identical' if same else 'DIFFER'} ({', '.join(sorted(outputs[next(iter(cmds))]))}) "
          "| | | | |")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
