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
import sys
import tempfile
from pathlib import Path

from tool_runs import print_table, run_all

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_YAML = ROOT.parent / "shared" / "corpus" / "pytorch-xla__xla_native_functions.yaml"
GOAL = 0.3


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
    with tempfile.TemporaryDirectory() as tree:
        lib = oracle_tree(Path(tree))
        envs = {"torchgen gen_lazy_tensor": {**os.environ, "PYTHONPATH": str(lib)}}
        try:
            times, outputs = run_all(cmds, args.repeat, envs)
        except RuntimeError as exc:
            print(f"bench: {exc}", file=sys.stderr)
            return 1
    title = f"`{args.yaml.name}`, TorchScript settings ({os.cpu_count()} CPUs, {args.repeat} runs each)"
    return 0 if print_table(title, times, outputs, GOAL) else 1


if __name__ == "__main__":
    sys.exit(main())
