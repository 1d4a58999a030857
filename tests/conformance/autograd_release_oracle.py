"""Run under one torch release's torchgen (PYTHONPATH=<its cache folder>) by the autograd release tests:

    python autograd_release_oracle.py JOB.json

JOB is {"derivatives": [[DERIVATIVES, NATIVE, TAGS], ...], "deprecated": [[DEPRECATED, NATIVE, TAGS], ...],
"functions_h": [DERIVATIVES, NATIVE, TAGS, TEMPLATES, OUT] or null, "autograd": the package of the autograd
generators (default torchgen.packaged.autograd, as a wheel ships them; tools.autograd in a PyTorch checkout)}.
Prints, as JSON, one verdict per file (null when that release's autograd loader, or its Python binding
generator's deprecated.yaml reader, accepts it, else what it raised), and writes Functions.h into OUT when
asked. One process for many files: the release's torchgen is imported once.
"""

from __future__ import annotations

import json
import sys


def _verdict(read) -> str | None:
    try:
        read()
    except Exception as exc:  # noqa: BLE001  (any exception is a rejection, as the loaders reject with asserts)
        return " ".join(f"{type(exc).__name__}: {exc}".split())[:600] or type(exc).__name__
    return None


def main(argv: list[str]) -> int:
    import importlib

    from torchgen.gen import parse_native_yaml

    with open(argv[0], encoding="utf-8") as f:
        job = json.load(f)
    package = job.get("autograd") or "torchgen.packaged.autograd"
    load_derivatives = importlib.import_module(f"{package}.load_derivatives").load_derivatives
    python_functions = importlib.import_module(f"{package}.gen_python_functions")
    load_signatures, should_generate_py_binding = python_functions.load_signatures, python_functions.should_generate_py_binding
    bound: dict[tuple[str, str], list] = {}

    def deprecated(path: str, native: str, tags: str) -> None:
        if (native, tags) not in bound:
            bound[native, tags] = [f for f in parse_native_yaml(native, tags).native_functions
                                   if should_generate_py_binding(f)]
        load_signatures(bound[native, tags], path, method=False)

    out = {"derivatives": [_verdict(lambda d=d: load_derivatives(*d)) for d in job["derivatives"]],
           "deprecated": [_verdict(lambda d=d: deprecated(*d)) for d in job["deprecated"]]}
    if job.get("functions_h"):
        derivatives, native, tags, templates, target = job["functions_h"]
        infos, _ = load_derivatives(derivatives, native, tags)
        importlib.import_module(f"{package}.gen_autograd_functions").gen_autograd_functions_lib(target, infos, templates)
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
