"""The name grammar: what a value the codegen pastes into C++ as it is may be. Stated once, here, as allow-lists;
`opgen check`, every generator and the server apply it alike.

- An identifier (op, overload, argument, return, kernel, tag and class names, each part of a namespace): a letter
  (any Unicode letter, as GCC and Clang take them), `_` or `$`, then letters, digits, `_` or `$` (Unicode's
  XID_Start / XID_Continue, as `str.isidentifier` reads them). A qualified name is identifiers joined by `::`.
- An operator's name (without overload) is also Latin-1: gen.py hashes it as Latin-1 to shard its files
  (torchgen's string_stable_hash) and dies on any other letter.
- A path pasted into an `#include` line (an output folder, a header): letters, marks, digits, punctuation, symbols
  and spaces (Unicode categories L, M, N, P, S and Zs), except `"`, `<` and `>`, which end the include. So no
  control character, no line break of any kind (LF, CR, VT, FF, U+0085, U+2028, U+2029, ...) and no
  format character (the bidirectional overrides that make code read otherwise than it compiles).

Each check returns None when the value is fine, else what is wrong with it, as the end of a sentence.
"Odd but legal" values torchgen turns into working C++ (spaces around a name, `$` or non-ASCII letters,
which GCC and Clang take in identifiers) are told apart by `is_plain_identifier`, so that they can stay
warnings while anything that breaks out of the name (a line break, a quote, `;`, `{`, ...) is an error.
"""

from __future__ import annotations

import re
import unicodedata

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# Every character str.splitlines breaks a line on (and torchgen's code templates with it): none of them is in a
# name or path of the grammar, so a test of the grammar can say "a line break" for each.
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
# The Unicode categories a path in an #include line may hold; and what ends the include in either form.
_PATH_CATEGORIES = frozenset(("Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps",
                              "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs"))
_ENDS_AN_INCLUDE = '"<>'


def is_plain_identifier(name: str) -> bool:
    return _PLAIN.match(name) is not None


def is_identifier(name: str) -> bool:
    """What GCC and Clang take as an identifier: letters (Unicode too), digits, `_` and `$`, not first a digit."""
    name = name.replace("$", "_")
    return name.isidentifier() and name.isprintable()


def _shown(char: str) -> str:
    if char in "\n\r":
        return "a line break"
    if char in LINE_BREAKS:
        return f"a line break (U+{ord(char):04X})"
    if char == "\0":
        return "a NUL byte"
    if unicodedata.category(char) == "Cf":
        return f"the invisible format character U+{ord(char):04X}"
    if not char.isprintable() or (char.isspace() and char not in " \t"):
        return f"the control character {char!r}"
    return f"'{char}'"


def identifier_problem(value: str, what: str = "name") -> str | None:
    """Why `value` (spaces and tabs around it allowed) is not a C++ identifier; None when it is one."""
    name = value.strip(" \t")
    if not name:
        return f"the {what} is empty"
    if is_identifier(name):
        return None
    bad = next((c for c in name if not is_identifier("a" + c)), None)
    if bad is None:  # every character may be in an identifier: the first may not start one
        return f"{what} '{name}' does not start with a letter or '_'"
    return f"{what} {value!r} has {_shown(bad)}, which no C++ identifier has"


def latin1_problem(value: str, what: str = "operator name") -> str | None:
    """Why gen.py dies on an operator name (a letter outside Latin-1, which it cannot hash); None when it does not."""
    bad = next((c for c in value if ord(c) > 0xFF), None)
    if bad is None:
        return None
    return (f"{what} {value!r} has '{bad}', which is not Latin-1: gen.py hashes operator names as Latin-1 to "
            "shard its files, and dies on it (UnicodeEncodeError)")


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
    """Why `value` cannot be pasted into an #include line (a character outside the path grammar: a line break,
    a control or format character, a quote, `<` or `>`); None when it can."""
    if not value:
        return f"the {what} is empty"
    bad = next((c for c in value if c in _ENDS_AN_INCLUDE or unicodedata.category(c) not in _PATH_CATEGORIES), None)
    if bad is None:
        return None
    return f"{what} {value!r} has {_shown(bad)}, which an #include line cannot hold"
