"""Time the kernel index, and the server with it, on real PyTorch trees (issue 18).

    python3 benchmarks/bench_kernel_trees.py [TREE ...] [--repeat N] [--json OUT]

Without a tree named, each tree in $OPGEN_PYTORCH_TREES (default ~/.cache/opgen/trees; docs/kernels.md
says how to get them). Every figure is taken on a temporary copy of the tree's aten/src/ATen and c10:

- cold index (no cache, all cores; with the CPU time of every process), warm start from the cache
  (median), one-file update (median: a kernel appended to native/BinaryOps.cpp; and an edit of the
  X-macro list AT_FORALL_SCALAR_TYPES_AND3 in c10/core/ScalarType.h, whose users are scanned again);
- the language server's open-to-diagnostics of native_functions.yaml: without kernels (the yaml and
  its tags.yaml alone in a folder: nothing to index), and with them, to the push carrying the one
  missing-kernel warning of the copy (one kernel renamed in it), index cache warm and cold. Server
  start and initialize are not counted.

Goals: cold < 5 s, warm < 0.5 s, one-file update < 50 ms. Figures on a loaded machine vary; the CPU time
of the cold index varies less than its wall time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from kernel_accuracy import NATIVE, choose_mutations, copy_tree, known_trees, load_needs, yaml_paths

from opgen_lsp.index.kernels import KernelIndex


def cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def index_figures(copy: Path, cache: Path, repeat: int) -> dict:
    start, cpu_start = time.perf_counter(), cpu_seconds()
    index = KernelIndex.build([str(copy)], cache=cache)
    cold, cold_cpu = time.perf_counter() - start, cpu_seconds() - cpu_start
    warm = []
    for _ in range(5):
        start = time.perf_counter()
        KernelIndex.build([str(copy)], cache=cache)
        warm.append(time.perf_counter() - start)
    figures = {"files": len(index.files), "cold_s": cold, "cold_cpu_s": cold_cpu, "warm_s": statistics.median(warm)}

    def add_kernel(text: str, i: int) -> str:
        return text + f"\nnamespace at::native {{ Tensor added_{i}(const Tensor& s) {{ return s; }} }}\n"

    def touch_list(text: str, i: int) -> str:  # the list's body gets i more blanks: a changed macro
        return re.sub(r"(#define AT_FORALL_SCALAR_TYPES_AND3\([^)]*\))", lambda m: m.group(1) + " " * (i + 1), text,
                      count=1)

    for name, path, change in (("update_source_s", copy / NATIVE / "BinaryOps.cpp", add_kernel),
                               ("update_c10_header_s", copy / "c10" / "core" / "ScalarType.h", touch_list)):
        if not path.is_file():
            continue
        original = path.read_text(encoding="utf-8", errors="replace")
        if change(original, 0) == original:
            continue
        times = []
        for i in range(repeat):
            path.write_text(change(original, i), encoding="utf-8")
            start = time.perf_counter()
            index.update(str(path))
            times.append(time.perf_counter() - start)
        path.write_text(original, encoding="utf-8")
        index.update(str(path))
        figures[name] = statistics.median(times)
    return figures


async def open_to_diagnostics(root: Path, kernels_on: bool, cache_home: Path) -> float:
    """Seconds from didOpen of native_functions.yaml to its first push (kernels off), or to the push carrying a
    missing-kernel warning (kernels on)."""
    from lsprotocol import types
    from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

    os.environ["XDG_CACHE_HOME"] = str(cache_home)  # (the server inherits it)
    client: LanguageClient = await ClientServerConfig(
        server_command=[sys.executable, "-m", "opgen_lsp.serve", "--stdio"]).start()
    try:
        settings = {"debounceMs": 10}
        client.set_configuration(settings, section="opgen")
        await client.initialize_session(types.InitializeParams(
            capabilities=client_capabilities("neovim"), root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="tree")],
            initialization_options=settings))
        path = root / NATIVE / "native_functions.yaml" if kernels_on else root / "native_functions.yaml"
        start = time.perf_counter()
        client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=path.as_uri(), language_id="yaml", version=1, text=path.read_text(encoding="utf-8"))))
        while time.perf_counter() - start < 120:  # (pushes are kept in client.diagnostics, polled every 2 ms)
            diagnostics = client.diagnostics.get(path.as_uri())
            if diagnostics is not None and (not kernels_on or any(str(d.code) == "OPG600" for d in diagnostics)):
                return time.perf_counter() - start
            await asyncio.sleep(0.002)
        raise RuntimeError("no diagnostics in 120 s")
    finally:
        await client.shutdown_session()
        await client.stop()


def server_figures(copy: Path, tmp: Path) -> dict:
    cache_home = tmp / "server-cache"
    alone = tmp / "yaml-alone"
    alone.mkdir()
    for name in ("native_functions.yaml", "tags.yaml"):
        shutil.copyfile(copy / NATIVE / name, alone / name)
    off = asyncio.run(open_to_diagnostics(alone, False, cache_home))
    cold = asyncio.run(open_to_diagnostics(copy, True, cache_home))  # (the cache is written here)
    warm = asyncio.run(open_to_diagnostics(copy, True, cache_home))
    return {"open_off_s": off, "open_on_cold_s": cold, "open_on_warm_s": warm}


def measure(tree: Path, repeat: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="kernel-trees-") as tmp:
        copy = copy_tree(tree, Path(tmp) / "tree")
        figures = {"tree": tree.name, **index_figures(copy, Path(tmp) / "index.json", repeat)}
        # One kernel renamed, so that the server has one warning to push.
        index = KernelIndex.build([str(copy)], cache=Path(tmp) / "index.json")
        needs = load_needs(*yaml_paths(copy, None))
        mutation = choose_mutations(copy, index, needs, 2, seed=18)[1]
        target = copy / mutation.path
        target.write_text(mutation.apply(target.read_text(encoding="utf-8", errors="replace")), encoding="utf-8")
        figures.update(server_figures(copy, Path(tmp)))
    return figures


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms" if seconds >= 0.1 else f"{seconds * 1000:.1f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trees", nargs="*", metavar="TREE")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--json", metavar="OUT")
    args = parser.parse_args()
    trees = [Path(t) for t in args.trees] or known_trees()
    if not trees:
        print("no tree given and none in $OPGEN_PYTORCH_TREES (docs/kernels.md says how to get them)", file=sys.stderr)
        return 2
    results = [measure(tree, args.repeat) for tree in trees]
    print(f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f}\n")
    print("| tree | files | cold index (CPU) | warm start | update: .cpp / c10 header | open-to-diagnostics: "
          "kernels off / on (warm cache) / on (cold) |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in results:
        print(f"| {r['tree']} | {r['files']:,} | {r['cold_s']:.2f} s ({r['cold_cpu_s']:.1f} s) | {ms(r['warm_s'])} | "
              f"{ms(r.get('update_source_s', 0))} / {ms(r.get('update_c10_header_s', 0))} | "
              f"{ms(r['open_off_s'])} / {ms(r['open_on_warm_s'])} / {ms(r['open_on_cold_s'])} |")
    goals = all(r["cold_s"] < 5 and r["warm_s"] < 0.5 and r.get("update_source_s", 0) < 0.05 for r in results)
    print(f"\ngoals (cold < 5 s, warm < 0.5 s, one-file update < 50 ms): {'met' if goals else 'NOT met'}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0 if goals else 1


if __name__ == "__main__":
    sys.exit(main())
