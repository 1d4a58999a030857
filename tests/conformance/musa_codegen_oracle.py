"""Run by test_vendor_codegen.py through the reference cache, with a torch release's torchgen on PYTHONPATH:

    python musa_codegen_oracle.py JOB.json

JOB is {"tools": a folder holding torch_musa's `codegen/` package (MooreThreads/torch_musa's `tools/codegen`,
fetched for the test), "native": the release's native_functions.yaml with torch_musa's patch applied, "tags":
the release's tags.yaml, "cases": [{"name", "path": a musa_functions.yaml}]}. For each case, the step of
`gen_torch_musa.codegen()` that reads the file: its `parse_native_yaml` (each op matched with upstream's entry or
an autogen variant, the schema compared, torchgen's NativeFunction.from_yaml and error checks). The code generation
after it is not run. Prints {name: null when the codegen accepts the file, else "ExceptionType: message" (its
first line)} as JSON.
"""

from __future__ import annotations

import contextlib
import json
import sys
import traceback
from pathlib import Path


def _said(exc: Exception) -> str:
    """The exception's type and first line; a bare assert by where it is (`at model.py: assert ...`)."""
    if str(exc):
        return f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
    frame = traceback.extract_tb(exc.__traceback__)[-1]
    return f"{type(exc).__name__}: at {Path(frame.filename).name}: {(frame.line or '').strip()}"


def main(argv: list[str]) -> int:
    with open(argv[0], encoding="utf-8") as f:
        job = json.load(f)
    sys.path.insert(0, str(Path(job["tools"]).resolve()))
    from codegen import gen_torch_musa as musa

    found: dict[str, str | None] = {}
    with contextlib.redirect_stdout(sys.stderr):
        for case in job["cases"]:
            try:
                musa.parse_native_yaml(job["native"], job["tags"], case["path"])  # cached by the case's path
                found[case["name"]] = None
            except Exception as exc:  # noqa: BLE001 - the codegen asserts, torchgen raises what it raises
                found[case["name"]] = _said(exc)
    json.dump(found, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
