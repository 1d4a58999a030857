"""Run by test_vendor_codegen.py through the reference cache, with a torch release's torchgen on PYTHONPATH:

    python mlu_codegen_oracle.py JOB.json

JOB is {"root": a folder holding torch_mlu's `codegen/` package (Cambricon/torch_mlu, fetched for the test),
"cases": [{"name", "path": an mlu_functions.yaml}]}. For each case, the steps of `codegen/gen_mlu_stubs.py`'s run()
that read the file: `parse_mlu_aten_yaml` (the aten entries against the release's grouped native functions),
then `parse_mlu_custom_yaml` for `vision`, `audio` and `custom` (torchgen's NativeFunction.from_yaml on each new
op), with the options its command line defaults to (no bang, no mlu-ops). The code generation after it is not
run (it writes into the vendor's tree). The release's native_functions.yaml is parsed once. Prints {name: null
when the codegen accepts the file, else "ExceptionType: message" (its first line)} as JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    with open(argv[0], encoding="utf-8") as f:
        job = json.load(f)
    sys.path.insert(0, str(Path(job["root"]).resolve()))
    import torchgen
    from codegen import gen_mlu_stubs as stubs
    from torchgen.gen import get_grouped_native_functions, parse_native_yaml

    packaged = Path(torchgen.__file__).parent / "packaged" / "ATen" / "native"
    tags = str(packaged / "tags.yaml")
    parsed = parse_native_yaml(str(packaged / "native_functions.yaml"), tags)
    grouped = get_grouped_native_functions(parsed.native_functions)
    options = argparse.Namespace(use_bang=False, use_mluop=False, dry_run=False)
    found: dict[str, str | None] = {}
    with contextlib.redirect_stdout(sys.stderr):
        for case in job["cases"]:
            try:
                stubs.parse_mlu_aten_yaml(case["path"], parsed.backend_indices, grouped, options)
                for key in ("vision", "audio", "custom"):
                    stubs.parse_mlu_custom_yaml(case["path"], tags, key, options)
                found[case["name"]] = None
            except Exception as exc:  # noqa: BLE001 - the codegen asserts, torchgen raises what it raises
                found[case["name"]] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    json.dump(found, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
