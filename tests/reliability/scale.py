"""Scale measurements (a synthetic native_functions.yaml N times the real one), shared with the benchmark."""

from __future__ import annotations

import gc
import os
import random
import tempfile
import time
from pathlib import Path

from opgen_lsp.analysis.check import check_paths
from opgen_lsp.index.native import NativeParser
from opgen_lsp.pieces.explain import Explainer
from opgen_lsp.releases import DEFAULT


def _timed(fn) -> tuple[float, object]:
    started = time.perf_counter()
    value = fn()
    return time.perf_counter() - started, value


def measure(text: str, tags_text: str, tags: frozenset[str], seed: int = 0) -> dict:
    """Seconds for: opgen check (cold), one edit re-checked (warm), explain (index + 200 ops)."""
    rng = random.Random(seed)
    figures: dict = {"chars": len(text), "lines": text.count("\n")}
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "native_functions.yaml").write_text(text, encoding="utf-8")
        Path(folder, "tags.yaml").write_text(tags_text, encoding="utf-8")
        figures["check_s"], result = _timed(lambda: check_paths([os.path.join(folder, "native_functions.yaml")]))
        figures["check_errors"] = sum(1 for i in result.items if i.diagnostic.is_error)  # type: ignore[attr-defined]
    parser = NativeParser(release=DEFAULT)
    snapshot = parser.parse(text, tags)
    figures["ops"] = len(snapshot.functions.ops)
    at = text.index("\n- func:", len(text) // 2) + 1
    edits = []
    for i in range(5):
        edited = text[:at] + f"- func: scale_probe_{i}(Tensor self) -> Tensor\n" + text[at:]
        seconds, _ = _timed(lambda edited=edited: parser.parse(edited, tags))
        edits.append(seconds)
    figures["edit_s"] = sorted(edits)[len(edits) // 2]
    # As the language server does after loading a large file: collect once and freeze the loaded heap,
    # so that the collector's passes over it are not counted against the work measured.
    gc.collect()
    gc.freeze()
    try:
        figures["explain_index_s"], explainer = _timed(lambda: Explainer(snapshot.functions, snapshot.release))
        names = rng.sample(explainer.names, 200)  # type: ignore[attr-defined]
        figures["explain_200_s"], _ = _timed(lambda: [explainer.explain(n) for n in names])  # type: ignore[attr-defined]
    finally:
        gc.unfreeze()
    return figures
