"""Run by test_backend_corpus.py under torch 2.13's torchgen, through the reference cache:

    python backend_oracle.py JOB.json

JOB is {"cases": [{"name", "path", "out": a folder for what gen_backend_stubs writes or null, "parse": bool}]}.
For each backend yaml, gen_backend_stubs.run (as its command line does, against the packaged
native_functions.yaml, parsed once) gives the verdict: null when it accepts the file, else what it raised; for
an accepted case asked to, parse_backend_yaml's indices in tests/conformance/canonical.py's form. Prints
{name: {"rejection", "parsed"}} as JSON. One process for every file of a module: torchgen is imported and the
native functions parsed once.
"""

from __future__ import annotations

import contextlib
import json
import sys
import tempfile
from pathlib import Path

import canonical  # beside this script (a reference-cache input of the batch)


class Torchgen:
    """gen_backend_stubs against the packaged native_functions.yaml, parsed once."""

    def __init__(self) -> None:
        import torchgen.gen_backend_stubs as stubs
        from torchgen.gen import get_grouped_native_functions, parse_native_yaml

        # The paths gen_backend_stubs.run computes, so that its cached parse is the one we hold.
        root = Path(stubs.__file__).absolute().parent.parent
        common = root / "aten" / "src"
        if not common.exists():
            common = root / "torchgen" / "packaged"
        native = str(common / "ATen" / "native" / "native_functions.yaml")
        tags = str(common / "ATen" / "native" / "tags.yaml")
        self.stubs = stubs
        self.parsed = parse_native_yaml(native, tags)
        self.grouped = get_grouped_native_functions(self.parsed.native_functions)
        # run() adds the backend's indices to torchgen's cached dict; restore it after each run.
        self.saved = dict(self.parsed.backend_indices)

    def run(self, path: str, out: str) -> str | None:
        """None if torchgen accepts the file, else its error."""
        original = self.stubs.get_grouped_native_functions

        def grouped(functions):
            # A pure function of the cached parse, and half of run()'s time: compute it once.
            return self.grouped if functions is self.parsed.native_functions else original(functions)

        self.stubs.get_grouped_native_functions = grouped
        try:
            self.stubs.run(path, out, False)
        except Exception as exc:  # noqa: BLE001 - torchgen rejects with AssertionError, or crashes with anything
            return f"{type(exc).__name__}: {exc}"
        finally:
            self.stubs.get_grouped_native_functions = original
            self.parsed.backend_indices.clear()
            self.parsed.backend_indices.update(self.saved)
        return None

    def parse(self, path: str) -> dict:
        """parse_backend_yaml's result for an accepted file, in a comparable form."""
        theirs = self.stubs.parse_backend_yaml(path, self.grouped, dict(self.saved))
        indices = theirs.backend_indices
        return {
            "backend_key": str(theirs.backend_key),
            "autograd_key": None if theirs.autograd_key is None else str(theirs.autograd_key),
            "cpp_namespace": theirs.cpp_namespace,
            "class_name": theirs.class_name or indices[theirs.backend_key].native_function_class_name(),
            "backend_index": canonical.backend_index(indices[theirs.backend_key]),
            "autograd_index": None if theirs.autograd_key is None else canonical.backend_index(indices[theirs.autograd_key]),
        }


def main(argv: list[str]) -> int:
    with open(argv[0], encoding="utf-8") as f:
        job = json.load(f)
    torchgen = Torchgen()
    found = {}
    # What torchgen prints goes to stderr: stdout is the verdicts' JSON.
    with tempfile.TemporaryDirectory() as scratch, contextlib.redirect_stdout(sys.stderr):
        for i, case in enumerate(job["cases"]):
            rejection = torchgen.run(case["path"], case["out"] or str(Path(scratch, str(i))))
            parsed = torchgen.parse(case["path"]) if case["parse"] and rejection is None else None
            found[case["name"]] = {"rejection": rejection, "parsed": parsed}
    json.dump(found, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
