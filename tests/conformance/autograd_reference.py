"""torch 2.13's readers of the autograd yamls on edited copies, for the mutation tests: every file of a test module
read by one process of autograd_release_oracle.py under the installed torchgen, through the reference cache."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import reference

ORACLE = Path(__file__).with_name("autograd_release_oracle.py")


def verdicts(kind: str, cases: Sequence[tuple[str, Path]], tags: Path, folder: Path,
             reads: Sequence[Path] = ()) -> list[str | None]:
    """torchgen's verdict on each (text, native_functions.yaml) of `kind` ("derivatives" or "deprecated"): None when
    it accepts the text, else what it raised (it rejects with assertions, RuntimeErrors and crashes alike).

    Each text is written to a file of its own in `folder` (the loaders cache by path; the folder is the batch's
    input as a whole); `reads` names what the cases read outside it (the real native_functions.yaml)."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for i, (text, native) in enumerate(cases):
        path = folder / f"{kind}_{i}.yaml"
        path.write_text(text, encoding="utf-8")
        rows.append([str(path), str(native), str(tags)])
    job = {"derivatives": [], "deprecated": [], "functions_h": None, kind: rows}
    found: list[str | None] = reference.run_json(ORACLE, job, folder, inputs=[tags, *reads])[kind]
    return found
