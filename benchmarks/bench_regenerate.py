"""The build loop, side by side with torchgen in one run: generate with nothing changed, and regenerate after a
one-entry edit, each tool as a whole process.

    python benchmarks/bench_regenerate.py [--layouts plain,per-operator]

For each layout, on a copy of the installed torchgen's packaged ATen folder: torchgen.gen writes its files, and
opgen generate (--implemented-only, its persistent cache in a fresh folder) writes its own (cold); opgen runs again
with nothing changed (warm: the run record); then one entry is edited (abs's CompositeExplicitAutograd kernel) and
both tools run again into their folders, then another (a tag added to relu) and both run again. Reported per run:
wall and CPU seconds, files rewritten (mtime changed), and after each edit how many of opgen's files are
byte-identical with torchgen's. Ratios are of the same run: opgen with nothing changed over torchgen's first run
(torchgen has no shortcut: its rerun is a full run), opgen after an edit over torchgen after the same edit.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

from bench_generate import Reference, Run, run

LAYOUTS = {"plain": [], "per-operator": ["--per-operator-headers"]}
# abs's CompositeExplicitAutograd kernel renamed, then a tag added to relu (the edit loop's next run)
_RELU = "    SparseCsrCPU, SparseCsrCUDA, SparseCsrMeta: relu_sparse_csr\n  tags: [core, pointwise"
EDITS = (("    CompositeExplicitAutograd: abs\n", "    CompositeExplicitAutograd: abs_edited\n"),
         (_RELU + "]\n", _RELU + ", nondeterministic_seeded]\n"))


def stamps(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


def rewritten(before: dict[str, int], root: Path) -> int:
    after = stamps(root)
    return sum(1 for name, stamp in after.items() if before.get(name) != stamp)


def bench_layout(layout: str, tmp: Path) -> None:
    src = tmp / layout / "ATen"
    shutil.copytree(Reference().aten, src)
    tg, og, cache = tmp / layout / "torchgen", tmp / layout / "opgen", tmp / layout / "cache"

    def flags(out: Path) -> list[str]:
        return ["-s", str(src), "-d", str(out / "aten"), "--headeronly-install-dir", str(out / "headeronly"),
                "--aoti-install-dir", str(out / "aoti"), *LAYOUTS[layout]]
    torchgen = [sys.executable, "-m", "torchgen.gen", *flags(tg)]
    opgen = [sys.executable, "-m", "opgen_lsp.cli", "generate", "--implemented-only", "--cache-dir", str(cache),
             *flags(og)]
    rows: list[tuple[str, Run | None, int | None]] = []
    for out in (tg, og):
        out.mkdir(parents=True)
    rows.append(("torchgen.gen", run("torchgen", torchgen, str(tg)), None))
    rows.append(("opgen generate, cold (empty cache)", run("opgen", opgen, str(og)), None))
    before = stamps(og)
    rows.append(("opgen generate, nothing changed", run("opgen", opgen, str(og)), rewritten(before, og)))
    native = src / "native" / "native_functions.yaml"
    for n, edit in enumerate(EDITS):
        text = native.read_text(encoding="utf-8")
        assert edit[0] in text
        native.write_text(text.replace(*edit, 1), encoding="utf-8")
        before_tg, before_og = stamps(tg), stamps(og)
        which = "a one-entry edit" if n == 0 else "a second edit"
        rows.append((f"torchgen.gen after {which}", run("torchgen", torchgen, str(tg)), rewritten(before_tg, tg)))
        rows.append((f"opgen generate after {which}", run("opgen", opgen, str(og)), rewritten(before_og, og)))
        ours = {p.relative_to(og): p.read_bytes() for p in og.rglob("*") if p.is_file()}
        same = sum(1 for name, data in ours.items() if (tg / name).is_file() and (tg / name).read_bytes() == data)
        rows.append((f"  byte-identical with torchgen: {same} of {len(ours)}", None, None))
    print(f"\n== {layout} (load average {' '.join(f'{x:.1f}' for x in os.getloadavg())})")
    print(f"{'run':44} {'wall s':>7} {'CPU s':>7} {'rewritten':>9} {'status':>6}")
    for name, r, files in rows:
        if r is None:
            print(name)
            continue
        print(f"{name:44} {r.wall:7.2f} {r.cpu:7.2f} {'' if files is None else files:>9} {r.status:6d}")
    timed = [row for row in rows if row[1] is not None]
    # torchgen has no shortcut for a rerun: a rerun with nothing changed costs it its full run
    pairs = [(timed[2], timed[0])] + [(timed[i + 1], timed[i]) for i in range(3, len(timed), 2)]
    for (name, r, _), (against, ref, _) in pairs:
        assert r is not None and ref is not None
        print(f"  {name}: {r.wall / ref.wall:.3f}x the wall of {against}, {r.cpu / ref.cpu:.3f}x its CPU")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layouts", default="plain,per-operator", help="comma-separated: plain, per-operator")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for layout in filter(None, args.layouts.split(",")):
            bench_layout(layout, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
