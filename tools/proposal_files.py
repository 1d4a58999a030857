#!/usr/bin/env python3
"""Obtain the test inputs and outputs of pytorch#172539's proposed gen_backend_stubs into a cache.

    python3 tools/proposal_files.py          # prints the cache folder

pytorch#172539 ("Enable Structured Kernels and Out-as-Primary Wrappers for PrivateUse1", not merged) runs its
generator on two backend yamls and commits what it wrote beside them, on the branch it links to
(voidbag/pytorch, commit COMMIT): `new_privateuse1_native_functions.yaml` (structured kernels, out= as primary)
into `new_generated/`, and `existing_privateuse1_native_functions.yaml` (a backend yaml of today) into
`existing_generated/`. `opgen generate-backend --experimental` must write the same bytes
(tests/conformance/test_structured_privateuse1.py). They are read from GitHub at that commit into
``$XDG_CACHE_HOME/opgen/proposals/pytorch-172539`` (default ``~/.cache/opgen/...``), and each file's SHA-256 is
checked. Stdlib only; exit status 1 names what failed. The files are the proposal author's, so they are not
kept in this repository.
"""

from __future__ import annotations

import hashlib
import os
import sys
import urllib.request
from pathlib import Path

REPOSITORY = "voidbag/pytorch"
COMMIT = "3d3b42c7744247ad04044e29d6ae8a5eb614b007"
FILES = {
    "new_privateuse1_native_functions.yaml": "9d835a173210f8add70d78f9e4bb0400a3c54da082264668ec6076f34aa9e221",
    "new_generated/PrivateUse1NativeFunctions.h": "3b15fa73ed86032186cd66c2ddf20589750a4adc7c068b248f513ab050b29cca",
    "new_generated/RegisterPrivateUse1.cpp": "03a03c842bceadb826e76d6055fe8d16e191aa3962b347e87384259855b0c00c",
    "existing_privateuse1_native_functions.yaml": "59a0de74b9af345c57c888c716543cb062a18a551ebd716f54cede922e5f41f7",
    "existing_generated/PrivateUse1NativeFunctions.h":
        "b01018fba0e9bb020fc4838fb30e89621e9395023732d7f5fc671955cc9eabd4",
    "existing_generated/RegisterPrivateUse1.cpp": "228a98d813f6658cee929f4a3a5139b8490522f3493b89074c6368b2c1eab85a",
}


def folder() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "opgen" / "proposals" / "pytorch-172539"


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def cached() -> Path | None:
    """The folder when every file is there with its SHA-256."""
    root = folder()
    return root if all(_digest(root / name) == digest for name, digest in FILES.items()) else None


def obtain() -> Path:
    root = folder()
    for name, digest in FILES.items():
        target = root / name
        if _digest(target) == digest:
            continue
        url = f"https://raw.githubusercontent.com/{REPOSITORY}/{COMMIT}/{name}"
        with urllib.request.urlopen(url, timeout=60) as response:  # noqa: S310 (a fixed https URL)
            data = response.read()
        if hashlib.sha256(data).hexdigest() != digest:
            raise RuntimeError(f"{url}: not the file the tests were written against (SHA-256 differs)")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return root


def main() -> int:
    try:
        print(obtain())
    except (OSError, RuntimeError) as exc:
        print(f"proposal_files: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
