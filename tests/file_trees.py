"""Folders as data: an ATen source folder made from a text, and output folders to compare what two generators
(or two runs) wrote."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Protocol


def files_under(folder: Path) -> dict[str, bytes]:
    """Every file below `folder`, by its path relative to it, with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


class Digested(Protocol):
    """A file known by its sha256, its bytes read on demand (reference.Output)."""

    @property
    def digest(self) -> str: ...

    @property
    def read(self) -> Callable[[], bytes]: ...


def assert_same_files(expected: Mapping[str, Digested], got: Mapping[str, bytes]) -> None:
    """Every file of the reference's output (by digest) is in `got` with the same bytes, and nothing more; the
    first differing file's bytes are read for the message."""
    assert sorted(set(expected) - set(got)) == [], "files opgen does not write"
    assert sorted(set(got) - set(expected)) == [], "files gen.py does not write"
    different = [name for name in expected if hashlib.sha256(got[name]).hexdigest() != expected[name].digest]
    if different:
        first = different[0]
        raise AssertionError(f"{len(different)} differ; {first}: {first_difference(expected[first].read(), got[first])}")


def first_difference(torchgen: bytes, opgen: bytes) -> str:
    """Where two texts first differ, line by line, for an assertion message."""
    la, lb = torchgen.decode().splitlines(), opgen.decode().splitlines()
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return f"line {i + 1}:\n  torchgen: {x!r}\n  opgen:    {y!r}"
    return f"lengths differ: {len(la)} vs {len(lb)} lines"


def aten_source(root: Path, aten: Path, native_text: str) -> Path:
    """An ATen folder (gen.py's -s) at root: this native_functions.yaml, the reference's tags.yaml and templates."""
    (root / "native").mkdir(parents=True)
    (root / "native" / "native_functions.yaml").write_text(native_text, encoding="utf-8")
    (root / "native" / "tags.yaml").write_text((aten / "native" / "tags.yaml").read_text(encoding="utf-8"),
                                               encoding="utf-8")
    (root / "templates").symlink_to(aten / "templates")
    return root
