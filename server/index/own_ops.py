"""A backend's own operator file: a native_functions.yaml of only the ops one out-of-tree backend implements,
with kernels under a PrivateUse key, that the backend parses with torchgen after patching it (docs/backends.md).

It is recognised by its content, whatever its name: its dispatch tables name a key of the PrivateUse1-3 family
(the keys PyTorch keeps for out-of-tree backends, which upstream's file never uses), it holds far fewer
entries than upstream's file (over 2,000 in every release known), and its entries are schemas (a vendor's list of
bare op names with PrivateUse1 kernels, torch_musa's musa_functions.yaml, is another format). Each op is compared with the pinned release's
own native_functions.yaml, read here once per release.
"""

from __future__ import annotations

import functools
import re

from ..frozen import record
from ..model import dispatch as dk
from ..releases import resolve
from .base_text import release_native_path
from .native import NativeParser, TagsParser

# More entries than this and the file is upstream's own (a PrivateUse key in it is then a mistake, OPG105).
OWN_FILE_MAX_ENTRIES = 1000

# The dispatch keys of out-of-tree backends: PrivateUse1-3 and their per-functionality keys.
_PRIVATE_USE = frozenset(name for name in dk.K if re.fullmatch(r"(Autograd|Sparse|SparseCsr|Quantized|NestedTensor)?"
                                                              r"PrivateUse[123]", name))
# An indented mapping key (a dispatch table's key list, 'PrivateUse1' or 'CPU, PrivateUse1').
# An entry whose func: is a schema (`- func: add.out(Tensor self, ...`), not a bare op name.
_SCHEMA_ENTRY = re.compile(r"^- func:[ \t]*['\"]?[^\s('\"]+\(", re.M)
_INDENTED_KEY = re.compile(r"^[ \t]+([A-Za-z0-9_]+(?:[ \t]*,[ \t]*[A-Za-z0-9_]+)*)[ \t]*:", re.M)


def own_backend_keys(text: str) -> frozenset[str]:
    """The PrivateUse keys the file's dispatch tables name when it is a backend's own operator file; empty for
    any other file (upstream's, or one that names no such key)."""
    # Cheap tests first (asked on every re-check of every native_functions.yaml): no PrivateUse key, or upstream's size.
    if "PrivateUse" not in text or text.count("\n- func:") + text.startswith("- func:") > OWN_FILE_MAX_ENTRIES:
        return frozenset()
    entries, schemas = text.count("\n- func:") + text.startswith("- func:"), len(_SCHEMA_ENTRY.findall(text))
    if schemas * 2 <= entries:  # mostly bare op names: a vendor's list (torch_musa's musa_functions.yaml), not this
        return frozenset()
    return frozenset(name.strip() for found in _INDENTED_KEY.finditer(text) for name in found[1].split(",")
                     if name.strip() in _PRIVATE_USE)


@record
class UpstreamOps:
    """A torch release's own ops: each schema as torchgen prints it, by 'name.overload'."""

    version: str
    schemas: dict[str, str]


@functools.lru_cache(maxsize=4)  # a few releases per session; each table is ~2,500 short strings
def upstream_ops(version: str) -> UpstreamOps | None:
    """Release `version`'s ops (its torchgen in opgen's cache, or the installed torch's); None when its
    native_functions.yaml is not at hand."""
    path = release_native_path(version)
    resolved = resolve(version, "--torch-version")
    if path is None or resolved is None:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        with open(path[: -len("native_functions.yaml")] + "tags.yaml", encoding="utf-8") as f:
            tags = TagsParser().parse(f.read()).names
    except (OSError, UnicodeDecodeError):
        return None
    snapshot = NativeParser(release=resolved.release).parse(text, tags)
    # Generated ops too: a backend may declare an autogen out= op of upstream's by hand.
    return UpstreamOps(version, {str(op.function.func.name): str(op.function.func) for op in snapshot.functions.ops})
