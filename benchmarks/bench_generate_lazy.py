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

    python3 benchmarks/bench_generate_lazy.py [--repeat N] [--yaml F] [--torch-release X.Y.Z]

With --torch-release, that release's own gen_lazy_tensor and shape-inference header (from
tools/torchgen_release.py's cache) and opgen held to the release, on its own inputs; the yaml less the ops the
release lacks and the ops its generators fail on (opgen names them; the release matrix leaves them out too), the
flags spelled as that release takes them (1.13: --gen_ts_lowerings, ...).

Exit status: 0 when measured (goal met or not), 1 when a run failed or the outputs differ,
2 when torch (torchgen) or opgen_lsp is not importable or the yaml is missing.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import torch_release
from tool_runs import bench_arguments, measure, release_inputs

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_YAML = Path(os.environ.get("OPGEN_CORPUS") or ROOT.parent / "shared" / "corpus") / "pytorch-xla__xla_native_functions.yaml"
GOAL = 0.3

if TYPE_CHECKING:
    from opgen_lsp.releases import Release


def commands(yaml: Path, header: Path, opgen_flags: list[str], release: Release | None = None
             ) -> dict[str, list[str]]:
    """Both tools' command lines, the flags spelled as the release's gen_lazy_tensor takes them (1.13: underscores
    only; opgen takes either)."""
    flags = ["-s", str(yaml), "-o", "out", "--gen-ts-lowerings", "--node-base", "TsNode", "--node-base-hdr",
             "torch/csrc/lazy/ts_backend/ts_node.h", "--shape-inference-hdr", str(header)]
    if release is not None:
        import release_fit

        flags = release_fit.spelled(flags, release)
    return {
        "torchgen gen_lazy_tensor": [sys.executable, "-m", "torchgen.gen_lazy_tensor", *flags],
        "opgen generate-lazy": [sys.executable, "-m", "opgen_lsp.cli", "generate-lazy", *flags, *opgen_flags],
    }


def main(argv: list[str] | None = None) -> int:
    args = bench_arguments(__doc__, DEFAULT_YAML, argv)
    if args is None:
        return 2
    header = torch_release.shape_inference_header(args.release_folder)
    if not header.is_file():
        print(f"bench: no shape-inference header at {header}", file=sys.stderr)
        return 2
    against = f", torch {args.torch_release}'s own torchgen" if args.torch_release else ""
    title = f"`{args.yaml.name}`, TorchScript settings ({os.cpu_count()} CPUs, {args.repeat} runs each{against})"
    with tempfile.TemporaryDirectory() as tmp:
        yaml, flags, lib = release_inputs(args.yaml, args.torch_release, args.release_folder, Path(tmp))
        envs = {"torchgen gen_lazy_tensor": {**os.environ, "PYTHONPATH": str(lib)}}
        cmds = commands(yaml, header, flags, torch_release.release(args.torch_release))
        return measure(title, cmds, args.repeat, GOAL, envs, yaml if args.torch_release else None)


if __name__ == "__main__":
    sys.exit(main())
