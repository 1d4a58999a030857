"""Reliability figures: fuzzing, incremental-equals-full, a didChange burst, and scale.

Usage: python3 benchmarks/bench_reliability.py [--inputs N] [--sequences N] [--burst N] [--copies N]
                                               [--seed S] [--json FILE]
Needs torch 2.13 (for the real native_functions.yaml). Prints a Markdown table (issue 8):
inputs fuzzed, edit sequences checked, burst size held, largest file handled, crashes, differences.
Each run is bounded: the defaults take about two to three minutes on a 2-core machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from reliability import drive, fuzz, scale  # noqa: E402

from opgen_lsp.analysis.check import BACKEND, NATIVE, TAGS  # noqa: E402
from opgen_lsp.index import documents  # noqa: E402
from opgen_lsp.index.native import NativeParser  # noqa: E402
from opgen_lsp.releases import DEFAULT  # noqa: E402


def run_fuzz(inputs: fuzz.Inputs, native: str, tags: str, backends: list[str], count: int, seed: int) -> dict:
    rng = random.Random(seed)
    entries = fuzz.entries_of(native)
    crashes, slow, total_s, chars = [], 0, 0.0, 0
    for i in range(count):
        if i % 10 < 6:
            picked = sorted(rng.sample(range(len(entries)), rng.randint(1, 25)))
            text, kind = "".join(entries[j] for j in picked), NATIVE
        elif i % 10 < 7:
            text, kind = tags, TAGS
        else:
            text, kind = rng.choice(backends), BACKEND
        text = fuzz.mutate(text, rng)
        started = time.perf_counter()
        try:
            fuzz.run_layers(text, inputs, rng, kind=kind)
        except Exception:
            crashes.append((kind, text[:200], traceback.format_exc(limit=3)))
        elapsed = time.perf_counter() - started
        slow += elapsed > fuzz.time_bound(text)
        total_s += elapsed
        chars += len(text)
    return {"inputs": count, "crashes": len(crashes), "over_time_bound": slow, "seconds": total_s,
            "chars": chars, "first_crashes": crashes[:3]}


def run_differential(inputs: fuzz.Inputs, native: str, count: int, seed: int) -> dict:
    rng = random.Random(seed)
    entries = fuzz.entries_of(native)
    differences, edits_total, started = 0, 0, time.perf_counter()
    for _ in range(count):
        start = rng.randrange(len(entries) - 60)
        text = "".join(entries[start:start + 60])
        parser = NativeParser(release=DEFAULT)
        parser.parse(text, inputs.tags.names)
        for edit in fuzz.random_edits(text, rng, 20, entries):
            text = fuzz.apply(text, edit)
            incremental = parser.parse(text, inputs.tags.names)
            edits_total += 1
        fresh = NativeParser(release=DEFAULT).parse(text, inputs.tags.names)
        probes = fuzz.sample_positions(text, rng, 12)
        if fuzz.state(incremental, inputs.tags, text, probes) != fuzz.state(fresh, inputs.tags, text, probes):
            differences += 1
    return {"sequences": count, "edits": edits_total, "differences": differences,
            "seconds": time.perf_counter() - started}


async def run_burst(native: str, tags: str, burst: int, seed: int, folder: Path) -> dict:
    """The real file open in the server; `burst` didChange notifications; a hover in the middle."""
    from lsprotocol import types

    sys.path.insert(0, str(ROOT))
    from reliability.test_lsp import burst_edits

    (folder / "tags.yaml").write_text(tags, encoding="utf-8")
    client = drive.make_client()
    await client.start_io(*drive.SERVER)
    try:
        await drive.initialize(client, folder)
        uri = drive.open_text(client, folder / "native_functions.yaml", native)
        started = time.perf_counter()
        initial = await drive.published(client, uri, 1, timeout=300)
        open_s = time.perf_counter() - started
        baseline = drive.rss_kb(drive.server_pid(client))
        first = next(i for i, line in enumerate(native.split("\n")) if line.startswith("- func:"))
        text, version, hover_task, hover_sent = native, 1, None, 0.0
        started = time.perf_counter()
        for i, edit in enumerate(burst_edits(native, random.Random(seed), burst)):
            version += 1
            drive.change(client, uri, version, text, edit)
            text = fuzz.apply(text, edit)
            if i == burst // 2:
                hover_sent = time.perf_counter()
                hover_task = asyncio.ensure_future(client.text_document_hover_async(types.HoverParams(
                    text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=first, character=10))))
            if i % 50 == 0:
                await asyncio.sleep(0)
        sent_s = time.perf_counter() - started
        hover = await asyncio.wait_for(hover_task, 300)  # type: ignore[arg-type]
        hover_s = time.perf_counter() - hover_sent
        final = drive.summary(await drive.published(client, uri, version, timeout=300))
        settled_s = time.perf_counter() - started
        expected = drive.expected_diagnostics(text, str(folder / "tags.yaml"))
        version += 1
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=native)]))
        back = await drive.published(client, uri, version, timeout=300)
        await asyncio.sleep(1.0)
        after = drive.rss_kb(drive.server_pid(client))
        return {"burst": burst, "open_s": open_s, "initial_diagnostics": len(initial), "send_s": sent_s,
                "hover_answered": hover is not None, "hover_latency_s": hover_s, "settled_s": settled_s,
                "final_matches": final == expected, "undo_clean": back == [],
                "rss_baseline_mb": baseline / 1024, "rss_after_mb": after / 1024}
    finally:
        await client.shutdown_session()
        await client.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--inputs", type=int, default=2000, help="fuzzed inputs (default 2000)")
    parser.add_argument("--sequences", type=int, default=200, help="edit sequences of 20 edits (default 200)")
    parser.add_argument("--burst", type=int, default=1000, help="didChange notifications in the burst")
    parser.add_argument("--copies", type=int, default=10, help="size of the synthetic file, in real files")
    parser.add_argument("--seed", type=int, default=fuzz.env_seed())
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()

    inputs = fuzz.load_inputs()
    if inputs is None:
        print("torch 2.13 (torchgen's native_functions.yaml) is needed", file=sys.stderr)
        return 2
    native = (fuzz.aten_native() / "native_functions.yaml").read_text(encoding="utf-8")  # type: ignore[operator]
    tags = (fuzz.aten_native() / "tags.yaml").read_text(encoding="utf-8")  # type: ignore[operator]
    backends = [p.read_text(encoding="utf-8") for p in fuzz.corpus_backends()]

    figures: dict = {"seed": args.seed}
    figures["fuzz"] = run_fuzz(inputs, native, tags, backends, args.inputs, args.seed)
    figures["differential"] = run_differential(inputs, native, args.sequences, args.seed)
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        figures["burst"] = asyncio.run(run_burst(native, tags, args.burst, args.seed, Path(folder)))
    big = fuzz.synthetic(native, args.copies, inputs.tags.names)
    # Real-shaped text costs about 30 times its size to read: lift the memory budget's floor for the copies.
    documents.MIN_MEMORY_BUDGET = max(documents.MIN_MEMORY_BUDGET, 40 * len(big))
    figures["scale"] = {"x1": scale.measure(native, tags, inputs.tags.names),
                        f"x{args.copies}": scale.measure(big, tags, inputs.tags.names)}

    f, d, b, s = figures["fuzz"], figures["differential"], figures["burst"], figures["scale"]
    one, many = s["x1"], s[f"x{args.copies}"]
    ratio = many["chars"] / one["chars"]
    rows = [
        ("inputs fuzzed (every layer, mutated real entries / tags / corpus backend yamls)",
         f"{f['inputs']:,} ({f['chars'] / 1e6:.1f} M chars, {f['seconds']:.0f} s)"),
        ("crashes (an exception out of any layer)", f"{f['crashes']}"),
        ("inputs over the time bound (2 s + 20 µs a char)", f"{f['over_time_bound']}"),
        ("edit sequences checked (incremental vs fresh: diagnostics, model, hovers, symbols)",
         f"{d['sequences']:,} ({d['edits']:,} edits)"),
        ("differences", f"{d['differences']}"),
        ("burst size held (didChange on the real file)",
         f"{b['burst']:,} in {b['send_s']:.1f} s; hover in the middle answered in {b['hover_latency_s']:.1f} s; "
         f"final diagnostics {'match' if b['final_matches'] else 'DIFFER'}"),
        ("server RSS before / after the burst", f"{b['rss_baseline_mb']:.0f} MB / {b['rss_after_mb']:.0f} MB"),
        ("largest file handled", f"{many['chars'] / 1e6:.1f} M chars, {many['lines']:,} lines, {many['ops']:,} ops "
                                 f"({ratio:.1f}x the real file), {many['check_errors']} errors"),
        (f"check x1 / x{args.copies}", f"{one['check_s']:.2f} s / {many['check_s']:.2f} s "
                                       f"({many['check_s'] / one['check_s']:.1f}x)"),
        (f"edit re-check x1 / x{args.copies}", f"{one['edit_s'] * 1000:.0f} ms / {many['edit_s'] * 1000:.0f} ms "
                                               f"({many['edit_s'] / one['edit_s']:.1f}x)"),
        (f"explain index x1 / x{args.copies}", f"{one['explain_index_s'] * 1000:.0f} ms / "
                                               f"{many['explain_index_s'] * 1000:.0f} ms"),
        (f"explain 200 ops x1 / x{args.copies}", f"{one['explain_200_s'] * 1000:.0f} ms / "
                                                 f"{many['explain_200_s'] * 1000:.0f} ms"),
    ]
    print("| figure | value |\n|---|---|")
    for name, value in rows:
        print(f"| {name} | {value} |")
    for kind, text, trace in f["first_crashes"]:
        print(f"\ncrash ({kind}): {text!r}\n{trace}", file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2, default=str) + "\n", encoding="utf-8")
    ok = not f["crashes"] and not d["differences"] and b["final_matches"] and b["hover_answered"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
