#!/usr/bin/env python3
"""The import cost of `opgen check native_functions.yaml` beside torchgen's `import torchgen.gen`.

Each repetition runs, interleaved so that drift in machine speed hits both alike:

1. `python -X importtime -m opgen_lsp.cli check PATH`: every module the check imports, on the way and inside it;
2. `python -X importtime -c "import torchgen.gen"`: what torchgen's gen.py needs before it reads anything.

For each it sums the self time of every import (what `-X importtime` reports per module: the interpreter's own
start-up imports, such as `site`, count for both), and takes the CPU time of the whole process (user + system, from
`os.wait4`). It prints the medians, their ratio, and which of opgen's generator modules (`opgen_lsp.codegen`) the
check imported (none: a check loads no generator).

Both read their modules' bytecode as an installed package does: from a cache written by one untimed run of each
first (in a folder of its own, PYTHONPYCACHEPREFIX). Without it, a shell with PYTHONDONTWRITEBYTECODE=1 would
compile an editable opgen from source on every run, while torchgen's wheel came with its bytecode.

    python3 benchmarks/bench_check_imports.py [--native PATH] [--repeat N] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass

IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|\s*(\S+)")


@dataclass(frozen=True)
class Run:
    imports_s: float  # the sum of every import's self time
    modules: tuple[str, ...]


def bytecode_env(cache: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return env | {"PYTHONPYCACHEPREFIX": cache}


def measure(argv: list[str], env: dict[str, str]) -> Run:
    with tempfile.TemporaryFile("w+", encoding="utf-8") as err:
        subprocess.run([sys.executable, "-X", "importtime", *argv], stdout=subprocess.DEVNULL, stderr=err, check=False,
                       env=env)
        err.seek(0)
        rows = [(int(m[1]), m[3]) for line in err if (m := IMPORT_LINE.match(line))]
    return Run(sum(us for us, _ in rows) / 1e6, tuple(name for _, name in rows))


def measure_cpu(argv: list[str], env: dict[str, str]) -> float:
    """The CPU time of the process, measured without -X importtime's own overhead."""
    proc = subprocess.Popen([sys.executable, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, _, usage = os.wait4(proc.pid, 0)
    return usage.ru_utime + usage.ru_stime


def default_native() -> str:
    import importlib.util

    spec = importlib.util.find_spec("torchgen")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("torchgen is not installed: pass --native")
    return os.path.join(spec.submodule_search_locations[0], "packaged", "ATen", "native", "native_functions.yaml")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--native", default=None, help="native_functions.yaml (default: torchgen's packaged one)")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--json", default=None, help="write the figures here too")
    args = parser.parse_args()
    native = args.native or default_native()
    check = ["-m", "opgen_lsp.cli", "check", "-q", "--no-cache", native]  # (a full check: no verdict kept)
    torchgen = ["-c", "import torchgen.gen"]
    opgen_runs, torchgen_runs, opgen_cpu, torchgen_cpu = [], [], [], []
    with tempfile.TemporaryDirectory(prefix="opgen-bytecode-") as cache:
        env = bytecode_env(cache)
        measure(check, env), measure(torchgen, env)  # (writes the bytecode both read from here on)
        for _ in range(args.repeat):
            opgen_runs.append(measure(check, env))
            torchgen_runs.append(measure(torchgen, env))
            opgen_cpu.append(measure_cpu(check, env))
            torchgen_cpu.append(measure_cpu(torchgen, env))
    generators = sorted({m for run in opgen_runs for m in run.modules if m.startswith("opgen_lsp.codegen")})
    result = {
        "native": native,
        "repeat": args.repeat,
        "opgen_check_imports_s": statistics.median(r.imports_s for r in opgen_runs),
        "torchgen_gen_imports_s": statistics.median(r.imports_s for r in torchgen_runs),
        "opgen_check_cpu_s": statistics.median(opgen_cpu),
        "torchgen_import_cpu_s": statistics.median(torchgen_cpu),
        "opgen_modules": len(set(opgen_runs[0].modules)),
        "generator_modules_imported": generators,
    }
    ratio = result["opgen_check_imports_s"] / result["torchgen_gen_imports_s"]
    print("| | opgen check (imports) | import torchgen.gen | ratio |\n|---|---|---|---|")
    print(f"| -X importtime, sum of self times (median of {args.repeat}) | {result['opgen_check_imports_s']:.3f} s "
          f"| {result['torchgen_gen_imports_s']:.3f} s | {ratio:.2f} |")
    print(f"| CPU of the whole process (median; opgen's includes the check itself) | {result['opgen_check_cpu_s']:.3f} s "
          f"| {result['torchgen_import_cpu_s']:.3f} s | "
          f"{result['opgen_check_cpu_s'] / result['torchgen_import_cpu_s']:.2f} |")
    print(f"generator modules the check imported: {generators or 'none'}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(result, out, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
