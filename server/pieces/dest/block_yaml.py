"""PyYAML's block-style dump of plain data, written directly (Declarations.yaml spends most of its time in
PyYAML's Python representer otherwise).

It covers what Declarations.yaml holds: lists, mappings (an OrderedDict keeps its order, a dict is sorted by
key, as the dumper's sort_keys does), str, bool, int, float and None. A string is written plain when that is
certain (printable ASCII, no YAML indicator where the emitter looks for one, and it reads back as a string);
every other scalar is written by PyYAML itself, once per distinct value. Anything else (a list directly inside
a list, a scalar that would span lines) raises Unsupported, and the caller dumps that data with PyYAML.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable

from ...frozen import PER_TEXT_MEMO

_STR_TAG = "tag:yaml.org,2002:str"
# First characters that make the emitter quote a scalar in block context; '?', ':' and '-' only when a space
# (or the end) follows.
_FIRST_INDICATORS = frozenset("#,[]{}&*!|>'\"%@`")
_PRINTABLE_ASCII = frozenset(chr(c) for c in range(0x20, 0x7F))
# A longer mapping key is no simple key to the emitters (libyaml: over 128 characters; PyYAML's own emitter
# from fewer): they write it as a complex key, `? <key>` then `: <value>` on the next line.
_MAX_SIMPLE_KEY = 100


class Unsupported(ValueError):
    """Data this emitter does not write byte-identically to PyYAML; dump it with PyYAML instead."""


@functools.lru_cache(maxsize=PER_TEXT_MEMO)  # per string: frozen.PER_TEXT_MEMO says why the bound fits
def is_certainly_plain(s: str) -> bool:
    """Whether PyYAML writes s as a plain scalar in block context (False also means: not sure). Cached: the
    same names and types come back in every entry."""
    if not s or s[0] == " " or s[-1] == " " or not _PRINTABLE_ASCII.issuperset(s):
        return False
    if s[0] in _FIRST_INDICATORS or s.startswith(("---", "...")):
        return False
    if s[0] in "?:-" and (len(s) == 1 or s[1] == " "):
        return False
    if ": " in s or s.endswith(":") or " #" in s:
        return False
    return _resolver()(s) == _STR_TAG


@functools.lru_cache(maxsize=1)  # (one value: made once, on first use)
def _resolver() -> Callable[[str], str]:
    """PyYAML's implicit resolver for plain scalars (loaded on first use: a run that dumps nothing needs no PyYAML)."""
    from yaml.nodes import ScalarNode  # noqa: PLC0415
    from yaml.resolver import Resolver  # noqa: PLC0415

    resolver = Resolver()  # type: ignore[no-untyped-call]
    return lambda s: str(resolver.resolve(ScalarNode, s, (True, False)))  # type: ignore[no-untyped-call]


@functools.lru_cache(maxsize=PER_TEXT_MEMO, typed=True)  # per value: frozen.PER_TEXT_MEMO says why the bound fits
def _dumped_scalar(value: object, dump: Callable[[object], str], spelling: str | None = None) -> str:
    """spelling: a float's repr, part of the cache key (0.0 == -0.0, but PyYAML writes each its own way)."""
    text = dump([value])  # "- <scalar>\n"
    if not text.startswith("- ") or text.count("\n") != 1:
        raise Unsupported(f"scalar {value!r} is not written on one line")
    return text[2:-1]


def scalar_text(value: object, dump: Callable[[object], str]) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if type(value) is int:
        return str(value)
    if type(value) is str and is_certainly_plain(value):
        return value
    if isinstance(value, (str, int, float)):
        return _dumped_scalar(value, dump, repr(value) if isinstance(value, float) else None)
    raise Unsupported(f"value of type {type(value).__name__}")


def _pairs(mapping: dict) -> list[tuple[object, object]]:
    if isinstance(mapping, OrderedDict):
        return list(mapping.items())
    try:
        return sorted(mapping.items())
    except TypeError:  # keys of several types (PyYAML then keeps the dict's order): not written here
        raise Unsupported(f"mapping keys {list(mapping)!r}") from None


def _inline_text(value: object, dump: Callable[[object], str]) -> str | None:
    """What follows the key or the dash on its line: a scalar or an empty collection; None for a non-empty
    list or mapping (written on the lines below)."""
    if type(value) is str and is_certainly_plain(value):  # most values: names and C++ types
        return value
    if isinstance(value, (list, dict)):
        return None if value else ("[]" if isinstance(value, list) else "{}")
    return scalar_text(value, dump)


def _mapping(mapping: dict, indent: int, first_prefix: str, out: list[str], dump: Callable[[object], str]) -> None:
    """A non-empty mapping whose keys sit at column `indent`; the first line starts with first_prefix."""
    pad = " " * indent
    head = first_prefix
    for key, value in _pairs(mapping):
        if type(key) is not str or len(key) > _MAX_SIMPLE_KEY or not is_certainly_plain(key):
            raise Unsupported(f"mapping key {key!r}")
        text = _inline_text(value, dump)
        if text is not None:
            out.append(f"{head}{key}: {text}")
        else:
            out.append(f"{head}{key}:")
            if isinstance(value, list):
                _sequence(value, indent, out, dump)  # a list inside a mapping is not indented further
            elif isinstance(value, dict):  # _inline_text leaves only non-empty lists and mappings
                _mapping(value, indent + 2, pad + "  ", out, dump)
        head = pad


def _sequence(items: list, indent: int, out: list[str], dump: Callable[[object], str]) -> None:
    """A non-empty list whose dashes sit at column `indent`."""
    dash = " " * indent + "- "
    for item in items:
        text = _inline_text(item, dump)
        if text is not None:
            out.append(dash + text)
        elif isinstance(item, dict):
            _mapping(item, indent + 2, dash, out, dump)
        else:
            raise Unsupported("a list directly inside a list")


def block_yaml(items: list, dump: Callable[[object], str]) -> str:
    """The text `dump(items)` gives for a non-empty top-level list (dump: PyYAML with the caller's settings,
    used for the scalars this module does not write itself)."""
    if not items:
        raise Unsupported("an empty top-level list")
    out: list[str] = []
    _sequence(items, 0, out, dump)
    return "\n".join(out) + "\n"
