"""The part of native_functions.yaml a backend yaml needs, for generating its files quickly.

gen_backend_stubs' output depends only on the op groups that hold a listed op
(and on whether the backend key already has kernels). Every member of a group,
generated variants included, shares the base name of its functional op (`add`
for `add.Tensor`, `add_.Tensor` and `add.out`), so the entries whose base name
is one of the listed ops' give the same groups, in the same relative order, as
the whole file. Parsing only those is what makes `opgen generate-backend` fast;
any error found this way is re-checked against the whole file by the caller
(the did-you-mean of an unknown op needs every name).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from ...frozen import PER_OP_MEMO
from ...syntax.entries import split_chunks

_FUNC_NAME = re.compile(r"-\s*func:\s*([\w.]+)\s*\(")
_LISTED = re.compile(r"^\s*-\s*['\"]?([\w.]+)['\"]?\s*(?:#.*)?$", re.MULTILINE)
_BACKEND = re.compile(r"^backend:\s*['\"]?(\w+)", re.MULTILINE)


def families(name: str) -> frozenset[str]:
    """The base names an op name may belong to: no overload, no in-place `_`, no `_functional`, no dunder."""
    return _base_families(name.split(".", 1)[0])


@functools.lru_cache(maxsize=PER_OP_MEMO)  # per op base name: frozen.PER_OP_MEMO says why the bound fits
def _base_families(base: str) -> frozenset[str]:
    # Overloads share their base name: each one is worked out once per run.
    out = {base}
    if base.startswith("__") and base.endswith("__") and len(base) > 4:
        inner = base[2:-2]
        out |= {inner, inner[1:]} if inner.startswith("i") else {inner}
    for b in list(out):
        if b.endswith("_functional"):
            out.add(b[: -len("_functional")])
        if b.endswith("_") and not b.endswith("__"):
            out.add(b[:-1])
    # A view op and its `_copy` twin are checked together (view groups).
    for b in list(out):
        out.add(b[: -len("_copy")] if b.endswith("_copy") else b + "_copy")
    return frozenset(out)


def listed_names(backend_text: str) -> set[str]:
    """Every plain list item of the backend yaml (supported, autograd, full_codegen, symint, ...)."""
    return {m.group(1) for m in _LISTED.finditer(backend_text)}


def backend_key(backend_text: str) -> str | None:
    m = _BACKEND.search(backend_text)
    return m.group(1) if m else None


def _dispatch_key_pattern(key: str) -> re.Pattern[str]:
    """A dispatch line naming key, alone or among others (`    CPU, CUDA: kernel`)."""
    return re.compile(rf"^\s+(?:\w+\s*,\s*)*{re.escape(key)}\s*(?:,\s*\w+\s*)*:", re.MULTILINE)


def subset_text(native_text: str, names: Iterable[str], key: str | None, kernels: Iterable[str] = ()) -> str:
    """The entries of native_functions.yaml in the listed ops' families, plus the family of one entry with a
    kernel for the backend key (so that a key already in use is still found), plus the families of the entries
    that name one of `kernels` (the release's list of CUDA kernels defined in torch_cpu: every entry that could
    register one is there, so OPG953 says of the subset what it says of the whole file)."""
    wanted: set[str] = set()
    for name in names:
        wanted |= families(name)
    chunks = [(chunk.text, _FUNC_NAME.match(chunk.text)) for chunk in split_chunks(native_text)]
    named = sorted(kernels)
    if named:
        mentions = re.compile("|".join(map(re.escape, named)))
        wanted.update(*(families(m.group(1)) for text, m in chunks if m is not None and mentions.search(text)))
    if key:
        keyed = _dispatch_key_pattern(key)
        for text, m in chunks:
            if m is not None and key in text and "dispatch:" in text and keyed.search(text):
                wanted |= families(m.group(1))
                break
    picked = [text for text, m in chunks if m is not None and families(m.group(1)) & wanted]
    return "".join(t if t.endswith("\n") else t + "\n" for t in picked)
