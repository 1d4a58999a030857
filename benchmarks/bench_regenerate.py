"""The build loop, side by side with torchgen in one run: generate cold, with nothing changed, and after a one-entry
edit, each tool as a whole process.

    python benchmarks/bench_regenerate.py [--layouts plain,per-operator] [--cold-runs 2]

For each layout, on a copy of the installed torchgen's packaged ATen folder: torchgen.gen writes its files, and
opgen generate (--implemented-only, its persistent cache in a fresh folder) writes its own (cold, empty cache), as
many times as --cold-runs says, each pair into fresh folders; opgen runs again with nothing changed (warm: the run
record); then one entry is edited at a time (abs's CompositeExplicitAutograd kernel renamed, a tag added to relu,
_assert_async's CPU kernel renamed) and both tools run again into their folders after each. Reported per run: wall
and CPU seconds (and the system part of the CPU's), the peak of the process tree's summed PSS, files rewritten
(mtime changed), and after each edit how many of opgen's files are byte-identical with torchgen's. Ratios are of
the same pair, run back to back (the machine is shared: its speed drifts): opgen cold over the torchgen run before
it, opgen with nothing changed over torchgen's first run (torchgen has no shortcut: its rerun is a full run), opgen
after an edit over torchgen after the same edit; then the median of each kind.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from bench_generate import Reference, Run, run

LAYOUTS = {"plain": [], "per-operator": ["--per-operator-headers"]}
# abs's CompositeExplicitAutograd kernel renamed, then a tag added to relu (the edit loop's next run)
_RELU = "    SparseCsrCPU, SparseCsrCUDA, SparseCsrMeta: relu_sparse_csr\n  tags: [core, pointwise"
EDITS = (("    CompositeExplicitAutograd: abs\n", "    CompositeExplicitAutograd: abs_edited\n"),
         (_RELU + "]\n", _RELU + ", nondeterministic_seeded]\n"),
         ("    CPU: _assert_async_cpu\n", "    CPU: _assert_async_cpu_edited\n"))
_EDIT_NAMES = ("a one-entry edit", "a second edit", "a third edit")


def stamps(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


def rewritten(before: dict[str, int], root: Path) -> int:
    after = stamps(root)
    return sum(1 for name, stamp in after.items() if before.get(name) != stamp)


def bench_layout(layout: str, tmp: Path, cold_runs: int) -> None:
    src = tmp / layout / "ATen"
    shutil.copytree(Reference().aten, src)

    def commands(n: int) -> tuple[Path, Path, list[str], list[str]]:
        tg, og, cache = tmp / layout / f"torchgen{n}", tmp / layout / f"opgen{n}", tmp / layout / f"cache{n}"

        def flags(out: Path) -> list[str]:
            return ["-s", str(src), "-d", str(out / "aten"), "--headeronly-install-dir", str(out / "headeronly"),
                    "--aoti-install-dir", str(out / "aoti"), *LAYOUTS[layout]]
        for out in (tg, og):
            out.mkdir(parents=True)
        return (tg, og, [sys.executable, "-m", "torchgen.gen", *flags(tg)],
                [sys.executable, "-m", "opgen_lsp.cli", "generate", "--implemented-only", "--cache-dir", str(cache),
                 *flags(og)])
    rows: list[tuple[str, Run | None, int | None]] = []
    pairs: dict[str, list[float]] = {"cold": [], "nothing changed": [], "after an edit": []}
    kept: tuple[Path, Path, list[str], list[str]] | None = None  # the first pair's folders and commands
    reference: Run | None = None
    # Each pair into fresh folders, with an empty cache; the first pair's are the ones edited. Nothing is deleted
    # before the end: on ext4 without a journal, making files costs more while many inodes were freed in the last
    # minutes (the kernel skips each of them), so deleting a pair's 7,151 files would slow the next pair's writes.
    for n in range(cold_runs):
        tg, og, torchgen, opgen = commands(n)
        first = run("torchgen", torchgen, str(tg))
        cold = run("opgen", opgen, str(og))
        rows += [("torchgen.gen", first, None), ("opgen generate, cold (empty cache)", cold, None)]
        pairs["cold"].append(cold.wall / first.wall)
        if kept is None:
            kept, reference = (tg, og, torchgen, opgen), first
    assert kept is not None and reference is not None
    tg, og, torchgen, opgen = kept
    before = stamps(og)
    again = run("opgen", opgen, str(og))
    rows.append(("opgen generate, nothing changed", again, rewritten(before, og)))
    pairs["nothing changed"].append(again.wall / reference.wall)
    native = src / "native" / "native_functions.yaml"
    for edit, which in zip(EDITS, _EDIT_NAMES, strict=True):
        text = native.read_text(encoding="utf-8")
        assert edit[0] in text
        native.write_text(text.replace(*edit, 1), encoding="utf-8")
        before_tg, before_og = stamps(tg), stamps(og)
        theirs = run("torchgen", torchgen, str(tg))
        rows.append((f"torchgen.gen after {which}", theirs, rewritten(before_tg, tg)))
        ours_run = run("opgen", opgen, str(og))
        rows.append((f"opgen generate after {which}", ours_run, rewritten(before_og, og)))
        pairs["after an edit"].append(ours_run.wall / theirs.wall)
        ours = {p.relative_to(og): p.read_bytes() for p in og.rglob("*") if p.is_file()}
        same = sum(1 for name, data in ours.items() if (tg / name).is_file() and (tg / name).read_bytes() == data)
        rows.append((f"  byte-identical with torchgen: {same} of {len(ours)}", None, None))
    print(f"\n== {layout} (load average {' '.join(f'{x:.1f}' for x in os.getloadavg())})")
    print(f"{'run':44} {'wall s':>7} {'CPU s':>7} {'of it sys':>9} {'tree PSS MB':>11} {'rewritten':>9} "
          f"{'status':>6}")
    for name, r, files in rows:
        if r is None:
            print(name)
            continue
        print(f"{name:44} {r.wall:7.2f} {r.cpu:7.2f} {r.system:9.2f} {r.tree_pss:11.0f} "
              f"{'' if files is None else files:>9} {r.status:6d}")
    for kind, ratios in pairs.items():
        print(f"  opgen {kind} / torchgen, wall, pair by pair: {', '.join(f'{r:.3f}' for r in ratios)}; "
              f"median {statistics.median(ratios):.3f}")
    edited = [r.wall for name, r, _ in rows if r is not None and name.startswith("opgen generate after")]
    print(f"  opgen after an edit, wall: {min(edited):.2f}-{max(edited):.2f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layouts", default="plain,per-operator", help="comma-separated: plain, per-operator")
    parser.add_argument("--cold-runs", type=int, default=2, help="cold pairs (torchgen, then opgen with an empty "
                                                                   "cache), each into fresh folders")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for layout in filter(None, args.layouts.split(",")):
            bench_layout(layout, Path(tmp), max(1, args.cold_runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
