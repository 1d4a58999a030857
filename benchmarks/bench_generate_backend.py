"""opgen generate-backend against torchgen's gen_backend_stubs on torch_xla's backend yaml.

Each repetition runs both tools in fresh processes (torchgen first, then opgen, interleaved so
that drift in machine speed hits both alike), each into its own empty temporary folder with
the same `-o out` spelling, and records the wall time and the CPU time (user + system) of the
whole process (interpreter start, imports, parsing native_functions.yaml, generating, writing;
tool_runs.py). The outputs are compared byte for byte once. Prints a Markdown table of medians; goal: opgen <= 0.3 x torchgen.

    python3 benchmarks/bench_generate_backend.py [--repeat N] [--yaml F] [--torch-release X.Y.Z]

With --torch-release, that release's own gen_backend_stubs (from tools/torchgen_release.py's cache, in a tree
shaped like PyTorch's) and opgen held to the release, on its native_functions.yaml and templates; the yaml less
the ops the release lacks and those its generators fail on (opgen names them; the release matrix leaves them
out too).

Exit status: 0 when measured (goal met or not), 1 when a run failed or the outputs differ,
2 when torch (torchgen) or opgen_lsp is not importable or the yaml is missing.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from tool_runs import bench_arguments, measure, release_inputs

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_YAML = Path(os.environ.get("OPGEN_CORPUS") or ROOT.parent / "shared" / "corpus") / "pytorch-xla__xla_native_functions.yaml"
GOAL = 0.3


def commands(yaml: Path, opgen_flags: list[str]) -> dict[str, list[str]]:
    return {
        "torchgen gen_backend_stubs": [sys.executable, "-m", "torchgen.gen_backend_stubs", "-s", str(yaml), "-o", "out"],
        "opgen generate-backend": [sys.executable, "-m", "opgen_lsp.cli", "generate-backend", "-s", str(yaml),
                                   "-o", "out", *opgen_flags],
    }


def main(argv: list[str] | None = None) -> int:
    args = bench_arguments(__doc__, DEFAULT_YAML, argv)
    if args is None:
        return 2
    against = f", torch {args.torch_release}'s own torchgen" if args.torch_release else ""
    title = f"`{args.yaml.name}` ({os.cpu_count()} CPUs, {args.repeat} runs each{against})"
    with tempfile.TemporaryDirectory() as tmp:
        yaml, flags, lib = release_inputs(args.yaml, args.torch_release, args.release_folder, Path(tmp))
        envs = {"torchgen gen_backend_stubs": {**os.environ, "PYTHONPATH": str(lib)}}
        return measure(title, commands(yaml, flags), args.repeat, GOAL, envs,
                       yaml if args.torch_release else None)


if __name__ == "__main__":
    sys.exit(main())
