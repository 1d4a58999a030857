#!/usr/bin/env python3
"""Time opgen's check of derivatives.yaml against torchgen's autograd loader on the same file.

One run measures, on the derivatives.yaml packaged with torchgen (and its native_functions.yaml):

1. torchgen: ``load_derivatives(derivatives, native, tags)`` in a fresh process per repetition, the
   native_functions.yaml parse done first (it is cached) so that the clock sees the loader alone;
2. opgen, cold: ``DerivativesChecker().check(DerivativesParser().parse(text), native, release)`` in a fresh
   process per repetition, native_functions.yaml parsed first, the clock on the check alone (reading
   the entries, resolving them, every rule, the node classes);
3. opgen, incremental: one parser and checker kept across edits of single formulas, as the language
   server keeps them; median and p95 of the re-check;
4. opgen, after a native_functions.yaml edit: the same checker re-checks the unchanged derivatives.yaml
   against the re-parsed native functions (one op's entry edited, as the server does when it changes);
5. hover on a `name:` line (the schema and the node struct of Functions.h), median over entries.

The three whole-file processes run interleaved so that drift in machine speed hits them alike. It prints
a Markdown table and writes the results as JSON. Only the standard library, opgen_lsp and torchgen are used.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_JSON = HERE / "results" / "derivatives.json"

CHECK_RATIO_GOAL = 0.5  # opgen's cold check takes at most this fraction of torchgen's loader
INCREMENTAL_GOAL_MS = 20.0  # median re-check after a one-formula edit
HOVER_GOAL_MS = 20.0  # median hover on a name: line

TORCHGEN_CHILD = r"""
import json, sys, time
from torchgen.gen import parse_native_yaml
from torchgen.packaged.autograd.load_derivatives import load_derivatives
derivatives, native, tags = sys.argv[1:4]
parse_native_yaml(native, tags)
start = time.perf_counter()
infos, _ = load_derivatives(derivatives, native, tags)
print(json.dumps({"seconds": time.perf_counter() - start, "functions": len(infos)}))
"""

OPGEN_CHILD = r"""
import json, sys, time
from opgen_lsp.analysis.autograd.load import DerivativesChecker
from opgen_lsp.index.derivatives import DerivativesParser
from opgen_lsp.index.native import NativeParser, TagsParser
from opgen_lsp.releases import DEFAULT
derivatives, native, tags = sys.argv[1:4]
names = TagsParser().parse(open(tags, encoding="utf-8").read()).names
snapshot = NativeParser(release=DEFAULT).parse(open(native, encoding="utf-8").read(), names)
text = open(derivatives, encoding="utf-8").read()
start = time.perf_counter()
check = DerivativesChecker().check(DerivativesParser().parse(text), snapshot.functions, DEFAULT)
print(json.dumps({"seconds": time.perf_counter() - start, "nodes": len(check.nodes),
                  "diagnostics": len(check.diagnostics)}))
"""


def packaged() -> tuple[Path, Path, Path]:
    import importlib.util

    spec = importlib.util.find_spec("torchgen")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("torchgen is not installed (pip install -e '.[conformance]')")
    root = Path(list(spec.submodule_search_locations)[0]) / "packaged"
    return (root / "autograd" / "derivatives.yaml", root / "ATen" / "native" / "native_functions.yaml",
            root / "ATen" / "native" / "tags.yaml")


def child(code: str, *args: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def in_process(derivatives: Path, native: Path, tags: Path, edits: int, hovers: int) -> dict:
    from opgen_lsp.analysis import derivatives as query
    from opgen_lsp.analysis.autograd.functions_h import node_declaration
    from opgen_lsp.analysis.autograd.load import DerivativesChecker, cpp_arguments
    from opgen_lsp.index.derivatives import DerivativesParser
    from opgen_lsp.index.native import NativeParser, TagsParser
    from opgen_lsp.releases import DEFAULT

    snapshot = NativeParser(release=DEFAULT).parse(native.read_text(), TagsParser().parse(tags.read_text()).names)
    text = derivatives.read_text()
    parser, checker = DerivativesParser(), DerivativesChecker()
    check = checker.check(parser.parse(text), snapshot.functions, DEFAULT)
    lines = text.splitlines(keepends=True)
    sites = [i for i, line in enumerate(lines) if line.startswith("  self: grad")]
    times = []
    for n in range(edits):
        site = sites[(n * 37) % len(sites)]
        edited = lines[:site] + [lines[site].rstrip("\n") + f" * {n + 2}\n"] + lines[site + 1:]
        start = time.perf_counter()
        checker.check(parser.parse("".join(edited)), snapshot.functions, DEFAULT)
        times.append(time.perf_counter() - start)
    check = checker.check(parser.parse(text), snapshot.functions, DEFAULT)
    native_times = native_edit_times(native, tags, derivatives, edits)

    def arguments(f):
        return [(a.name, a.type) for a in cpp_arguments(f)]

    step = max(1, len(check.analyses) // hovers)
    hover_times = []
    for line, entry, _ in check.analyses[::step][:hovers]:
        span = entry.name_node.span.shifted(line)
        start = time.perf_counter()
        found = query.hover(check, span.start_line, span.start_col + 1, lambda node: node_declaration(node, DEFAULT), arguments)
        hover_times.append(time.perf_counter() - start)
        assert found is not None
    return {"incremental_ms": {"median": statistics.median(times) * 1e3, "p95": p95(times) * 1e3, "edits": edits},
            "native_edit_ms": {"median": statistics.median(native_times) * 1e3, "p95": p95(native_times) * 1e3,
                               "edits": edits},
            "hover_ms": {"median": statistics.median(hover_times) * 1e3, "p95": p95(hover_times) * 1e3,
                         "hovers": len(hover_times)}}


def native_edit_times(native: Path, tags: Path, derivatives: Path, edits: int) -> list[float]:
    """Seconds of each derivatives.yaml re-check after an edit of one op of native_functions.yaml (the native
    re-parse itself not timed: bench_incremental measures it)."""
    from opgen_lsp.analysis.autograd.load import DerivativesChecker
    from opgen_lsp.index.derivatives import DerivativesParser
    from opgen_lsp.index.native import NativeParser, TagsParser
    from opgen_lsp.releases import DEFAULT

    names = TagsParser().parse(tags.read_text()).names
    text = native.read_text()
    native_parser, checker = NativeParser(release=DEFAULT), DerivativesChecker()
    document = DerivativesParser().parse(derivatives.read_text())
    checker.check(document, native_parser.parse(text, names).functions, DEFAULT)
    lines = text.splitlines(keepends=True)
    sites = [i for i, line in enumerate(lines) if line.startswith("- func: ")]
    times = []
    for n in range(edits):
        site = sites[(n * 37) % len(sites)]
        edited = lines[:site + 1] + [f"  # edit {n}\n"] + lines[site + 1:]
        functions = native_parser.parse("".join(edited), names).functions
        start = time.perf_counter()
        checker.check(document, functions, DEFAULT)
        times.append(time.perf_counter() - start)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="fresh processes per whole-file measurement")
    parser.add_argument("--edits", type=int, default=50, help="one-formula edits for the incremental measurement")
    parser.add_argument("--hovers", type=int, default=40, help="entries hovered")
    parser.add_argument("--quick", action="store_true", help="--repeat 2 --edits 10 --hovers 10")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help="where to write the results")
    args = parser.parse_args()
    if args.quick:
        args.repeat, args.edits, args.hovers = 2, 10, 10
    derivatives, native, tags = packaged()
    torch_runs, opgen_runs = [], []
    for i in range(args.repeat):
        print(f"repetition {i + 1}/{args.repeat}", file=sys.stderr)
        torch_runs.append(child(TORCHGEN_CHILD, derivatives, native, tags))
        opgen_runs.append(child(OPGEN_CHILD, derivatives, native, tags))
    torch_s = statistics.median(r["seconds"] for r in torch_runs)
    opgen_s = statistics.median(r["seconds"] for r in opgen_runs)
    warm = in_process(derivatives, native, tags, args.edits, args.hovers)
    results = {
        "torchgen_loader_s": torch_s, "opgen_check_s": opgen_s, "ratio": opgen_s / torch_s,
        "nodes": opgen_runs[0]["nodes"], "diagnostics": opgen_runs[0]["diagnostics"], **warm,
        "goals": {"check_ratio": opgen_s / torch_s <= CHECK_RATIO_GOAL,
                  "incremental": warm["incremental_ms"]["median"] < INCREMENTAL_GOAL_MS,
                  "native_edit": warm["native_edit_ms"]["median"] < INCREMENTAL_GOAL_MS,
                  "hover": warm["hover_ms"]["median"] < HOVER_GOAL_MS},
        "repeat": args.repeat, "cpus": os.cpu_count(),
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    print("| measurement | value | goal |\n|---|---|---|")
    print(f"| torchgen's autograd loader (load_derivatives) | {torch_s * 1e3:.0f} ms | |")
    print(f"| opgen's check, cold | {opgen_s * 1e3:.0f} ms ({opgen_s / torch_s:.2f}x) | ≤ {CHECK_RATIO_GOAL}x |")
    inc = warm["incremental_ms"]
    print(f"| opgen's re-check after a one-formula edit | {inc['median']:.1f} ms median, {inc['p95']:.1f} ms p95 "
          f"| < {INCREMENTAL_GOAL_MS:.0f} ms |")
    nat = warm["native_edit_ms"]
    print(f"| opgen's re-check after a native_functions.yaml edit | {nat['median']:.1f} ms median, "
          f"{nat['p95']:.1f} ms p95 | < {INCREMENTAL_GOAL_MS:.0f} ms |")
    hov = warm["hover_ms"]
    print(f"| hover on a name: line (schema + node struct) | {hov['median']:.2f} ms median, {hov['p95']:.2f} ms p95 "
          f"| < {HOVER_GOAL_MS:.0f} ms |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
