"""Completion in native_functions.yaml.

The context comes from the text around the cursor, not from the parsed
entry: while a user types, the entry is usually not valid YAML.

- entry keys (with what they do) at column 2 of an entry;
- dispatch keys inside a `dispatch:` mapping;
- tags from tags.yaml after `tags:` (inline, in a flow list, or as block list items);
- `function` / `method` after `variants:`;
- operator names (`name.overload`, with the schema as detail) after `structured_delegate:`;
- the names autogen can generate (`name.out`, `name.overload_out`) after `autogen:`;
- types inside `func:` (where an argument or a return begins).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..frozen import record
from ..index.native import NativeSnapshot, TagsSnapshot
from ..model.dispatch import SUPPORTED_KEY_NAMES
from ..model.lower import ENTRY_KEYS
from ..model.schema import BASE_TYPE_NAMES
from ..releases import Release
from ..text import Span
from .hover import dispatch_key_summary

KEY = "key"
DISPATCH_KEY = "dispatch-key"
TAG = "tag"
VARIANT = "variant"
OP = "op"
TYPE = "type"

# Types offered inside func:, beyond the base types: the forms native_functions.yaml uses most (a bool list has a
# size: gen.py fails on bool[]).
COMPOUND_TYPES = ("Tensor?", "Tensor[]", "Tensor?[]", "Tensor(a)", "Tensor(a!)", "Tensor(a!)[]", "Tensor(a)[]",
                  "int[]", "int[1]", "int[2]", "int?", "int[]?", "int[1]?", "SymInt[]", "SymInt[1]", "SymInt?",
                  "SymInt[]?", "float?", "float[]", "float[]?", "bool?", "bool[3]", "str?", "Scalar?",
                  "Scalar[]", "ScalarType?", "Layout?", "Device?", "MemoryFormat?", "Generator?", "Dimname",
                  "Dimname[]", "Dimname?", "Dimname[1]")


@record
class Candidate:
    label: str
    kind: str
    detail: str
    documentation: str
    insert_text: str
    replace: Span  # the text the candidate replaces (from the start of the word to the cursor)
    sort_text: str | None = None


_KEY_AT_COLUMN_2 = re.compile(r"(?:- |  )([A-Za-z_]*)\Z")
_KEY_WITH_VALUE = re.compile(r"(?:- |  )([A-Za-z_]\w*):(\s*)(.*)\Z")
_BLOCK_KEY = re.compile(r"(?:- |  )([A-Za-z_]\w*)\s*:\s*(?:#.*)?\Z")
_ENTRY_KEY = re.compile(r"(?:- |  )([A-Za-z_]\w*)\s*:")
_LIST_ITEM = re.compile(r"( +)- +([\w]*)\Z")
_FUNC_NAME = re.compile(r"- func:\s*['\"]?([\w.:]+)")
_SCAN_LIMIT = 2000  # lines; no real entry is longer


def _is_entry_start(text: str) -> bool:
    return text.startswith("-") and (len(text) == 1 or text[1] in " \t\r")


def _is_top_level(text: str) -> bool:
    return bool(text) and text[0] not in " \t\r#"


def _entry_bounds(lines: Sequence[str], line: int) -> tuple[int, int] | None:
    """First and last line of the entry holding `line`, from the text alone."""
    start = None
    for i in range(line, max(-1, line - _SCAN_LIMIT), -1):
        if _is_entry_start(lines[i]):
            start = i
            break
        if _is_top_level(lines[i]):
            return None
    if start is None:
        return None
    end = line
    for i in range(line + 1, min(len(lines), line + _SCAN_LIMIT)):
        if _is_top_level(lines[i]):
            break
        end = i
    return start, end


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def _parent_key(lines: Sequence[str], start: int, line: int) -> str | None:
    """The entry key whose block value holds `line` (a line indented deeper than the keys)."""
    item_indent = _indent(lines[line])
    for i in range(line - 1, start - 1, -1):
        text = lines[i]
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        if i != start and _indent(text) > 2:
            continue
        if i != start and text.lstrip().startswith("- ") and _indent(text) == item_indent:
            continue  # an earlier item of the same block list ("  tags:\n  - a\n  - b")
        m = _BLOCK_KEY.match(text)
        return m.group(1) if m else None
    return None


def _word_span(line: int, col: int, prefix: str, pattern: str) -> tuple[str, Span]:
    m = re.search(pattern + r"\Z", prefix)
    word = m.group(0) if m is not None else ""  # each pattern ends in *: it matches, if only the empty word
    return word, Span(line, col - len(word), line, col)


def _entry_keys(lines: Sequence[str], start: int, end: int, line: int, replace: Span) -> list[Candidate]:
    present = {m.group(1) for i in range(start, end + 1) if i != line and (m := _ENTRY_KEY.match(lines[i]))}
    return [Candidate(key, KEY, what, f"**{key}**: {what}", f"{key}: ", replace, f"{i:02d}")
            for i, (key, what) in enumerate(ENTRY_KEYS.items()) if key not in present]


def _dispatch_keys(replace: Span) -> list[Candidate]:
    out = []
    for i, name in enumerate(SUPPORTED_KEY_NAMES):
        summary = dispatch_key_summary(name) or ""
        first_sentence = summary.split(". ", 1)[0].rstrip(".")
        out.append(Candidate(name, DISPATCH_KEY, first_sentence, summary, name, replace, f"{i:02d}"))
    return out


def _tags(tags: TagsSnapshot | None, replace: Span, lead: str) -> list[Candidate]:
    if tags is None:
        return []
    return [Candidate(name, TAG, tag.desc.strip().split("\n", 1)[0], tag.desc, lead + name, replace)
            for name, tag in sorted(tags.tags.items())]


def _variants(replace: Span, lead: str) -> list[Candidate]:
    texts = {
        "function": "only at::op(...) (the default)",
        "method": "only Tensor::op(...)",
        "function, method": "both at::op(...) and Tensor::op(...)",
    }
    return [Candidate(v, VARIANT, what, what, lead + v, replace, f"{i}") for i, (v, what) in enumerate(texts.items())]


def _delegates(snapshot: NativeSnapshot | None, lines: Sequence[str], start: int, replace: Span,
               lead: str) -> list[Candidate]:
    """Structured out= operators, those of the entry's own base name first."""
    if snapshot is None:
        return []
    m = _FUNC_NAME.match(lines[start])
    own_base = m.group(1).split("::")[-1].split(".")[0].rstrip("_") if m else None
    out = []
    for op in snapshot.functions.ops:
        f = op.function
        if op.generated or not f.structured:
            continue
        name = str(f.func.name)
        rank = "0" if f.func.name.name.base == own_base else "1"
        out.append(Candidate(name, OP, str(f.func), f"`{f.func}`", lead + name, replace, rank + name))
    return out


_TYPE_WORD = r"[\w\[\]?]*"


def _type_position(value: str) -> str | None:
    """When the func: text before the cursor ends where a type is being written, that partial type."""
    value = value.lstrip("'\"")
    open_at = value.find("(")
    if open_at == -1:
        return None
    rest = value[open_at + 1:]
    arrow = rest.find(") -> ")
    if arrow == -1:
        piece = rest.rsplit(", ", 1)[-1]  # inside the arguments
    else:
        returns = rest[arrow + len(") -> "):]
        piece = returns.lstrip("(").rsplit(", ", 1)[-1]
    if " " in piece or piece == "*" or re.fullmatch(_TYPE_WORD, piece) is None:
        return None
    return piece


def _offered(name: str, release: Release | None) -> bool:
    """A type the release's native_functions.yaml can use: never ConstQuantizerPtr (gen.py has no C++ type for it
    until 2.5, and no such type after: OPG208, OPG203); Dimname while the release has named tensors (until 2.13;
    every release when none is known yet); SymBool from 2.5; DeviceIndex from 2.1."""
    if name == "ConstQuantizerPtr":
        return False
    if name.startswith("SymBool"):
        return release is None or release.symbool_type
    if name.startswith("DeviceIndex"):
        return release is None or release.device_index_type
    return not name.startswith("Dimname") or release is None or release.named_tensor_types


def _types(replace: Span, release: Release | None) -> list[Candidate]:
    out = [Candidate(t, TYPE, "type", f"`{t}`", t, replace, f"0{i:02d}") for i, t in enumerate(BASE_TYPE_NAMES)
           if _offered(t, release)]
    out += [Candidate(t, TYPE, "type", f"`{t}`", t, replace, f"1{i:02d}") for i, t in enumerate(COMPOUND_TYPES)
            if _offered(t, release)]
    return out


def autogen_names(func_name: str) -> list[str]:
    """The out= names an entry's autogen usually generates: `name.out`, or `name.overload_out`."""
    name = func_name.split("::")[-1]
    base, _, overload = name.partition(".")
    base = base.rstrip("_") if not base.startswith("__") else base
    if base.endswith("_functional"):
        base = base[:-len("_functional")]
    return [f"{base}.{overload}_out" if overload else f"{base}.out"] + ([f"{base}.out"] if overload else [])


def _autogen(lines: Sequence[str], start: int, replace: Span, lead: str) -> list[Candidate]:
    m = _FUNC_NAME.match(lines[start])
    if m is None:
        return []
    return [Candidate(n, OP, "generated out= variant", f"`{n}`: generated from this entry", lead + n, replace, f"{i}")
            for i, n in enumerate(autogen_names(m.group(1)))]


def complete(lines: Sequence[str], line: int, col: int, snapshot: NativeSnapshot | None,
             tags: TagsSnapshot | None) -> list[Candidate]:
    """Completion candidates at (line, col) of a native_functions.yaml text split into lines."""
    if not 0 <= line < len(lines):
        return []
    prefix = lines[line][:col]
    bounds = _entry_bounds(lines, line)
    if bounds is None:
        return []
    start, end = bounds

    if _KEY_AT_COLUMN_2.match(prefix):
        _, replace = _word_span(line, col, prefix, r"[A-Za-z_]*")
        return _entry_keys(lines, start, end, line, replace)

    m = _KEY_WITH_VALUE.match(prefix)
    if m is not None:
        key, space, value = m.groups()
        lead = "" if space else " "
        if key == "tags":
            _, replace = _word_span(line, col, prefix, r"\w*")
            return _tags(tags, replace, lead)
        if key == "variants":
            return _variants(Span(line, col - len(value), line, col), lead)
        if key == "structured_delegate":
            _, replace = _word_span(line, col, prefix, r"[\w.]*")
            return _delegates(snapshot, lines, start, replace, lead)
        if key == "autogen":
            _, replace = _word_span(line, col, prefix, r"[\w.]*")
            return _autogen(lines, start, replace, lead if not value else "")
        if key == "func":
            partial = _type_position(value)
            if partial is None:
                return []
            return _types(Span(line, col - len(partial), line, col), snapshot.release if snapshot else None)
        return []

    if line == start or not prefix.startswith(" "):
        return []
    parent = _parent_key(lines, start, line)
    item = _LIST_ITEM.match(prefix)
    if parent == "tags" and item is not None:
        _, replace = _word_span(line, col, prefix, r"\w*")
        return _tags(tags, replace, "")
    if parent == "dispatch" and _indent(prefix) > 2 and ":" not in prefix:
        _, replace = _word_span(line, col, prefix, r"\w*")
        return _dispatch_keys(replace)
    return []
