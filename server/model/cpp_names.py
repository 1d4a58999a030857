"""Values the codegen pastes into C++ as they are (a backend's cpp_namespace and class_name, dispatch kernel
and structured_inherits names, the header paths and class names of generate-backend / generate-lazy flags):
are they what they claim to be?

Each check returns None when the value is fine, else what is wrong with it, as the end of a sentence.
"Odd but legal" values torchgen turns into working C++ (spaces around a name, `$` or non-ASCII letters,
which GCC and Clang take in identifiers) are told apart by `is_plain_identifier`, so that they can stay
warnings while anything that breaks out of the name (a line break, a quote, `;`, `{`, ...) is an error.
"""

from __future__ import annotations

import re

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# Characters a header path in `#include "..."` / `<...>` cannot hold without ending the line or the string.
_NOT_IN_HEADER_PATHS = re.compile(r'[\x00-\x1f\x7f"<>]')


def is_plain_identifier(name: str) -> bool:
    return _PLAIN.match(name) is not None


def _identifier_like(name: str) -> bool:
    """What GCC and Clang take as an identifier: letters (Unicode too), digits, `_` and `$`, not first a digit."""
    name = name.replace("$", "_")
    return name.isidentifier() and name.isprintable()


def _shown(char: str) -> str:
    if char in "\n\r":
        return "a line break"
    if char == "\0":
        return "a NUL byte"
    if not char.isprintable() or (char.isspace() and char not in " \t"):
        return f"the control character {char!r}"
    return f"'{char}'"


def identifier_problem(value: str, what: str = "name") -> str | None:
    """Why `value` (spaces and tabs around it allowed) is not a C++ identifier; None when it is one."""
    name = value.strip(" \t")
    if not name:
        return f"the {what} is empty"
    if _identifier_like(name):
        return None
    bad = next((c for c in name if not _identifier_like("a" + c)), None)
    if bad is None:  # every character may be in an identifier: the first may not start one
        return f"{what} '{name}' does not start with a letter or '_'"
    return f"{what} {value!r} has {_shown(bad)}, which no C++ identifier has"


def qualified_name_problem(value: str, what: str = "name") -> str | None:
    """Why `value` is not `::`-separated C++ identifiers (such as `torch::lazy::LazyTensor`); None when it is."""
    if "::" not in value:
        return identifier_problem(value, what)
    for part in value.split("::"):
        problem = identifier_problem(part)
        if problem is not None:
            return f"{what} {value!r}: {problem}"
    return None


def header_path_problem(value: str, what: str = "header path") -> str | None:
    """Why `value` cannot be pasted into an #include line (a line break, a quote, `<` or `>`); None when it can."""
    if not value:
        return f"the {what} is empty"
    m = _NOT_IN_HEADER_PATHS.search(value)
    if m is None:
        return None
    return f"{what} {value!r} has {_shown(m.group())}, which an #include line cannot hold"
