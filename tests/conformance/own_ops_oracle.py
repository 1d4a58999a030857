"""Run under one torch release's torchgen (PYTHONPATH=<its cache folder>), as a backend's own codegen runs it:

    python own_ops_oracle.py TAGS_YAML NATIVE_YAML...

For each operator file: torchgen's lists restored, then patched as such a backend documents it (PrivateUse1
appended to torchgen.model.dispatch_keys, every op whose overload name holds 'out' appended to
OUT_OPS_THAT_DONT_GET_GROUPED_PROPERLY), then parse_native_yaml alone (no generator runs after it). Prints, as
JSON, one verdict per file: null when the parse passes, else what it raised. One process for many files.
"""

from __future__ import annotations

import json
import re
import sys

# An op name with an overload that holds 'out' (`add.out`, `div.out_mode`, `gt.Scalar_out`).
OUT_NAME = re.compile(r"^\s*-\s*func:\s*([^.(\s]+\.[^(\s]*out[^(\s]*)\(", re.M)


def verdict(gen, model, generation, path: str, tags_path: str) -> str | None:
    keys, out_ops = list(model.dispatch_keys), list(generation.OUT_OPS_THAT_DONT_GET_GROUPED_PROPERLY)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        model.dispatch_keys.append(model.DispatchKey.PrivateUse1)
        generation.OUT_OPS_THAT_DONT_GET_GROUPED_PROPERLY.extend(OUT_NAME.findall(text))
        gen.parse_native_yaml(path, tags_path)
    except Exception as exc:  # noqa: BLE001  (any exception is a rejection)
        return " ".join(f"{type(exc).__name__}: {exc}".split())[:600]
    finally:
        model.dispatch_keys[:] = keys
        generation.OUT_OPS_THAT_DONT_GET_GROUPED_PROPERLY[:] = out_ops
    return None


def main(argv: list[str]) -> int:
    from torchgen import gen, model, native_function_generation

    tags_path, *paths = argv
    json.dump([verdict(gen, model, native_function_generation, p, tags_path) for p in paths], sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
