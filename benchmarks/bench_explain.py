"""Time `opgen explain`: one operator warm, and every operator from a cold start.

Usage: python3 benchmarks/bench_explain.py [--native-functions F] [--repeat N]
Prints a Markdown table; goals from the issue: warm explain of one op under 5 ms.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

COLD_ALL = r"""
import json, sys, time
t0 = time.perf_counter()
from opgen_lsp.pieces.explain import Explainer
from opgen_lsp.index.inputs import load_native
from opgen_lsp.codegen.options import CodegenOptions
from opgen_lsp.releases import DEFAULT
inputs = load_native(sys.argv[1] or None, None, CodegenOptions(DEFAULT).ignore_keys, release=DEFAULT)
t1 = time.perf_counter()
explainer = Explainer(inputs.snapshot.functions, DEFAULT)
count = sum(len(explainer.explain(name)) for name in explainer.names)
t2 = time.perf_counter()
print(json.dumps({"load": t1 - t0, "explain_all": t2 - t1, "snippets": count, "ops": len(explainer.names)}))
"""


def warm_one(native: str | None, op: str, repeat: int) -> dict:
    from opgen_lsp.codegen.options import CodegenOptions
    from opgen_lsp.index.inputs import load_native
    from opgen_lsp.pieces.explain import Explainer
    from opgen_lsp.releases import DEFAULT

    explainer = Explainer(load_native(native, None, CodegenOptions(DEFAULT).ignore_keys, release=DEFAULT).snapshot.functions,
                          DEFAULT)
    first = time.perf_counter()
    explainer.explain(op)
    first = time.perf_counter() - first
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        explainer.explain(op)
        times.append(time.perf_counter() - start)
    return {"op": op, "first_ms": first * 1000, "median_ms": statistics.median(times) * 1000}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--native-functions", default="")
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--op", action="append", default=None)
    args = parser.parse_args()
    ops = args.op or ["add.Tensor", "empty.memory_format", "topk.values", "convolution"]
    warm = [warm_one(args.native_functions or None, op, args.repeat) for op in ops]
    cold = json.loads(subprocess.run([sys.executable, "-c", COLD_ALL, args.native_functions], check=True,
                                     capture_output=True, text=True).stdout)
    print("| measurement | time | goal | met? |")
    print("|---|---:|---|---|")
    for w in warm:
        print(f"| explain `{w['op']}`, first call / warm median | {w['first_ms']:.2f} ms / {w['median_ms']:.3f} ms "
              f"| < 5 ms warm | {'yes' if w['median_ms'] < 5 else 'no'} |")
    print(f"| cold: load native_functions.yaml | {cold['load']:.2f} s | | |")
    print(f"| cold: explain all {cold['ops']} ops ({cold['snippets']} snippets) | {cold['explain_all']:.2f} s | | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
