"""Document links of native_functions.yaml: each dispatch kernel to the C++ file defining it (the kernel index's
first definition), and the files its comments name (C++ sources, headers, templates, Python, yaml) that exist
in the tree."""

from __future__ import annotations

import os
import re
from collections.abc import Callable

from ..frozen import record
from ..index.kernels import KernelIndex
from ..index.native import NativeSnapshot
from ..syntax.nodes import YMap, YScalar
from ..text import Span
from . import kernel_nav

_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.(?:cpp|cc|cu|cuh|h|hpp|mm|py|yaml|md))\b")


@record
class Link:
    span: Span
    path: str
    line: int | None = None  # 0-based, for a link into the file
    tooltip: str = ""


def tree_root(path: str | None) -> str | None:
    """The PyTorch checkout (or packaged torchgen) holding a native_functions.yaml: the folder above aten/src/ATen."""
    if path is None:
        return None
    here = os.path.dirname(os.path.abspath(path))
    while True:
        if os.path.basename(here) == "ATen":
            parent = os.path.dirname(here)
            return os.path.dirname(os.path.dirname(parent)) if parent.endswith(os.path.join("aten", "src")) else parent
        up = os.path.dirname(here)
        if up == here:
            return None
        here = up


def comment_links(text: str, path: str | None, exists: Callable[[str], bool] = os.path.isfile) -> list[Link]:
    """The file names written in the document's comments that name files of its tree."""
    if path is None:
        return []
    folder = os.path.dirname(os.path.abspath(path))
    root = tree_root(path)
    bases = [folder, os.path.dirname(folder)]
    if root is not None:
        bases += [root, os.path.join(root, "aten", "src"), os.path.join(root, "aten", "src", "ATen"),
                  os.path.join(root, "aten", "src", "ATen", "native")]
    out: list[Link] = []
    for number, line in enumerate(text.split("\n")):
        hash_at = line.find("#")
        if hash_at < 0:
            continue
        for m in _PATH.finditer(line, hash_at):
            target = next((c for c in (os.path.normpath(os.path.join(b, m.group(1))) for b in bases) if exists(c)),
                          None)
            if target is not None:
                out.append(Link(Span.on_line(number, m.start(1), m.end(1)), target))
    return out


def kernel_links(snapshot: NativeSnapshot, index: KernelIndex) -> list[Link]:
    """Each dispatch kernel's name to its first C++ definition."""
    out: list[Link] = []
    for entry in snapshot.document.entries:
        mapping = entry.result.mapping
        table = mapping.value("dispatch") if mapping is not None else None
        if not isinstance(table, YMap):
            continue
        for _key, value in table.pairs:
            if not isinstance(value, YScalar):
                continue
            span = value.span.shifted(entry.line)
            ref = kernel_nav.kernel_at(snapshot, span.start_line, span.start_col)
            if ref is None:
                continue
            definitions, _ = kernel_nav.places(index, ref, kernel_nav.kernel_parameters(snapshot, ref))
            if definitions:
                first = definitions[0]
                out.append(Link(ref.span, first.path, first.symbol.line, f"{ref.qualified} in {first.path}"))
    return out
