"""Run by the release matrix under one torch release's torchgen (PYTHONPATH=<its cache folder>):

    python release_oracle.py TAGS_YAML NATIVE_YAML...

prints, as JSON, one verdict per native_functions.yaml: null when that torchgen reads and groups it,
else what it raised (as gen.py does before generating: parse, 2.15's check of its list of CUDA kernels
defined in torch_cpu, group, group by view). One process for many files: the release's torchgen is
imported once.
"""

from __future__ import annotations

import json
import sys


def verdict(gen, yaml, path: str, valid_tags) -> str | None:
    try:
        with open(path, encoding="utf-8") as f:
            entries = yaml.load(f, Loader=gen.LineLoader)
        parsed = gen.parse_native_yaml_struct(entries, valid_tags, path=path)
        validate = getattr(gen.dest.native_functions, "validate_cpu_dll_cuda_kernels", None)  # from 2.15
        if validate is not None:
            validate(parsed.backend_indices)
        gen.get_grouped_native_functions(parsed.native_functions)
        gen.get_grouped_by_view_native_functions(parsed.native_functions)
    except Exception as exc:  # noqa: BLE001  (any exception is a rejection)
        return " ".join(f"{type(exc).__name__}: {exc}".split())[:600]
    return None


def main(argv: list[str]) -> int:
    import yaml
    from torchgen import gen

    tags_path, *paths = argv
    valid_tags = gen.parse_tags_yaml(tags_path)
    json.dump([verdict(gen, yaml, p, valid_tags) for p in paths], sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
