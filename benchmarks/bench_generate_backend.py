"""opgen generate-backend against torchgen's gen_backend_stubs on torch_xla's backend yaml.

Each repetition runs both tools in fresh processes (torchgen first, then opgen, interleaved so
that drift in machine speed hits both alike), each into its own empty temporary folder with
the same `-o out` spelling, and records the wall time and the CPU time (user + system) of the
whole process (interpreter start, imports, parsing native_functions.yaml, generating, writing;
tool_runs.py). The outputs are compared byte for byte once. Prints a Markdown table of medians; goal: opgen <= 0.3 x torchgen.

    python3 benchmarks/bench_generate_backend.py [--repeat N] [--yaml F]

Exit status: 0 when measured (goal met or not), 1 when a run failed or the outputs differ,
2 when torch (torchgen) or opgen_lsp is not importable or the yaml is missing.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tool_runs import bench_arguments, measure

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_YAML = ROOT.parent / "shared" / "corpus" / "pytorch-xla__xla_native_functions.yaml"
GOAL = 0.3


def commands(yaml: Path) -> dict[str, list[str]]:
    return {
        "torchgen gen_backend_stubs": [sys.executable, "-m", "torchgen.gen_backend_stubs", "-s", str(yaml), "-o", "out"],
        "opgen generate-backend": [sys.executable, "-m", "opgen_lsp.cli", "generate-backend", "-s", str(yaml),
                                   "-o", "out"],
    }


def main(argv: list[str] | None = None) -> int:
    args = bench_arguments(__doc__, DEFAULT_YAML, argv)
    if args is None:
        return 2
    title = f"`{args.yaml.name}` ({os.cpu_count()} CPUs, {args.repeat} runs each)"
    return measure(title, commands(args.yaml), args.repeat, GOAL)


if __name__ == "__main__":
    sys.exit(main())
