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

import os
import sys
import tempfile
from pathlib import Path

from tool_runs import bench_arguments, measure

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
    args = bench_arguments(__doc__, DEFAULT_YAML, argv)
    if args is None:
        return 2
    title = f"`{args.yaml.name}`, TorchScript settings ({os.cpu_count()} CPUs, {args.repeat} runs each)"
    with tempfile.TemporaryDirectory() as tree:
        lib = oracle_tree(Path(tree))
        envs = {"torchgen gen_lazy_tensor": {**os.environ, "PYTHONPATH": str(lib)}}
        return measure(title, commands(args.yaml), args.repeat, GOAL, envs)


if __name__ == "__main__":
    sys.exit(main())
