"""C++ parameter lists reduced to what tells overloads apart: one canonical spelling per parameter type.

Two definitions of a kernel name are two functions to the linker when their parameter types differ, so the
kernel index keeps each definition's types, and the check compares them with the native declaration's. The
spelling of a type varies (`const Tensor& self`, `Tensor const &`, `const at::Tensor &`, `IntArrayRef`,
`c10::ArrayRef<int64_t>`): names, namespaces and default values are dropped, `const` is kept only where it is
part of the type (before a reference or a pointer; a by-value parameter's own `const` is not), and the aliases
ATen declares (`IntArrayRef`, `TensorList`, `SparseTensor`, ...) are spelled out.
"""

from __future__ import annotations

import functools
import re

from .cpp_macros import split_top_level

_TOKEN = re.compile(r"(?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*|&&|\S")
# Type names only a typedef apart: the same parameter type to the compiler.
_ALIASES = {
    "SparseTensor": "Tensor",
    "SparseCsrTensor": "Tensor",
    "IntArrayRef": "ArrayRef<int64_t>",
    "SymIntArrayRef": "ArrayRef<SymInt>",
    "TensorList": "ArrayRef<Tensor>",
    "DimnameList": "ArrayRef<Dimname>",
    "OptionalIntArrayRef": "OptionalArrayRef<int64_t>",
    "OptionalSymIntArrayRef": "OptionalArrayRef<SymInt>",
    "ITensorListRef": "IListRef<Tensor>",
    "IOptTensorListRef": "IListRef<OptionalTensorRef>",
}
_ATTRIBUTES = re.compile(r"\[\[.*?\]\]|__attribute__\s*\(\(.*?\)\)")
_NAME = re.compile(r"[A-Za-z_]\w*")
_ARRAY = re.compile(r"\[[^\]]*\]\s*$")
_QUALIFIERS = frozenset({"const", "volatile"})
# Words that end a type without a parameter name after them (`int64_t` alone is a type; `unsigned int` too).
_BUILTIN = frozenset({"bool", "char", "short", "int", "long", "float", "double", "signed", "unsigned", "void",
                      "auto"})
_IGNORED = frozenset({"C10_UNUSED", "__restrict__", "__restrict", "restrict", "register", "typename", "struct",
                      "class", "enum"})


def _without_default(param: str) -> str:
    """A parameter without its default value (`= {}`, `= std::nullopt`)."""
    if "=" not in param:
        return param
    depth = 0
    for k, ch in enumerate(param):
        if ch in "(<[{":
            depth += 1
        elif ch in ")>]}":
            depth -= 1
        elif ch == "=" and depth == 0:
            return param[:k]
    return param


def _tokens(param: str) -> list[str]:
    """A parameter's tokens, qualified names whole (`::std::optional` is one), attributes left out."""
    if "[[" in param or "__attribute__" in param:
        param = _ATTRIBUTES.sub(" ", param)
    return [t for t in _TOKEN.findall(param) if t not in _IGNORED]


def _unqualified(token: str) -> str:
    name = token.rsplit("::", 1)[-1]
    return _ALIASES.get(name, name)


@functools.lru_cache(maxsize=1 << 16)  # (most parameters are spelled alike: `const Tensor& self`)
def normalized_type(param: str) -> str:
    """The canonical spelling of one parameter's type (its name and default dropped)."""
    param = _without_default(param).strip()
    array = _ARRAY.search(param)  # an array parameter is a pointer
    tokens = _tokens(param[:array.start()] if array is not None else param)
    words = [t for t in tokens if t not in _QUALIFIERS]
    if len(words) > 1 and tokens[-1] == words[-1] and _NAME.fullmatch(words[-1]) and words[-1] not in _BUILTIN:
        tokens = tokens[:-1]  # the parameter's name
    while tokens and tokens[-1] in _QUALIFIERS:
        tokens = tokens[:-1]  # `T* const p`: the pointer's own const
    if array is not None:
        tokens.append("*")
    indirect = bool(tokens) and tokens[-1] in ("&", "&&", "*")
    # `const T&` and `T const&` are one type; a by-value parameter's own const is not part of its type.
    const = indirect and "const" in tokens[:-1]
    text = ""
    for t in tokens:
        if t in _QUALIFIERS:
            continue
        word = _NAME.match(t) is not None or t.startswith("::")
        text += f" {_unqualified(t)}" if word and text[-1:].isalnum() | text.endswith("_") else \
            _unqualified(t) if word else t
    return f"const {text}" if const else text


def parameter_key(params: str) -> str:
    """The normalized types of a parameter list's text (between the parentheses), comma-separated;
    `(void)` is no parameter."""
    parts = split_top_level(params, "(<[{", ")>]}") if "<" in params or "(" in params else params.split(",")
    types = [normalized_type(p.strip()) for p in parts if p.strip()]
    return "" if types == ["void"] else ",".join(types)


def types_key(types: tuple[str, ...] | list[str]) -> str:
    """The same key for a list of parameter types (a native signature's)."""
    return ",".join(normalized_type(t) for t in types)


# (a literal first: a 30x faster search than with `\b` before it; the word boundary is checked apart)
_USING = re.compile(r"using\s+([A-Za-z_]\w*)\s*=\s*([^;{}()]+);")
_TYPEDEF = re.compile(r"typedef\s+([^;{}()]*[^;{}()\w])([A-Za-z_]\w*)\s*;")


def _words(pattern: re.Pattern[str], code: str) -> list[re.Match[str]]:
    """The matches of pattern that start a word."""
    return [m for m in pattern.finditer(code) if not m.start() or not (code[m.start() - 1].isalnum()
                                                                     or code[m.start() - 1] == "_")]


def type_aliases(code: str) -> dict[str, str]:
    """The type aliases code (comments blanked) declares: `using name = type;`, `typedef type name;`, each
    normalized (a file's own spelling of a parameter type, such as RNN.cpp's `simple_hx_type`)."""
    found: dict[str, str] = {}
    if "using" in code:
        found.update((m.group(1), normalized_type(m.group(2))) for m in _words(_USING, code))
    if "typedef" in code:
        found.update((m.group(2), normalized_type(m.group(1))) for m in _words(_TYPEDEF, code))
    return found


def with_aliases(key: str, aliases: dict[str, str]) -> str:
    """A parameter key with the aliases spelled out."""
    if not aliases:
        return key
    pattern = re.compile(r"(?<![\w:])(" + "|".join(map(re.escape, aliases)) + r")(?!\w)")
    if pattern.search(key) is None:
        return key
    types = split_top_level(key, "(<[{", ")>]}")
    return ",".join(normalized_type(pattern.sub(lambda m: aliases[m.group(1)], t)) for t in types)
