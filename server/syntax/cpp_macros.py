"""Function-like C++ macros: collected from #defines, and expanded in a statement head as the preprocessor does.

Only what finding kernel definitions needs: arguments substituted (`##` pasting done, `#` left as written),
the result rescanned with the macro itself disabled (so `#define f(x) f(x)` stops, and an X-macro such as
`AT_FORALL_SCALAR_TYPES_AND3(Bool, Half, BFloat16, DEFINE_CAST_OP)` expands its list, then each item), and a
map from the expanded text back to where each piece was written. Object-like macros are expanded only where
a function-like macro's expansion names them (`const Tensor& mod EXTRA_##N` pastes EXTRA_1, which adds a
parameter), and only a file's own (collect_object_macros): elsewhere they are left as written.
Works on code whose comments and literals are blanked already (cpp_scan does that).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass

from ..frozen import record

_MACRO_DEF = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\(([^)]*)\)((?:[^\n\\]|\\\n|\\.)*)", re.MULTILINE)
_OBJECT_DEF = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(?![\w(])((?:[^\n\\]|\\\n|\\.)*)", re.MULTILINE)
_IDENT = re.compile(r"(?<![\w])[A-Za-z_]\w*")
_INVOCATION = re.compile(r"(?<![\w])([A-Za-z_]\w*)\s*\(")
_PASTE = re.compile(r"\s*##\s*")

# Bounds on one statement's expansion, beyond which the rest is left as written (never an endless or
# exponential expansion). The three real trees measured need at most 332 expansions and 163 KB in one statement.
MAX_EXPANSIONS = 5_000
MAX_LENGTH = 2_000_000
MAX_NESTING = 64


@record
class Macro:
    name: str
    params: tuple[str, ...]
    body: str
    offset: int = 0  # of the #define in its file
    object_like: bool = False  # `#define NAME body`: no parameter list, replaced without parentheses

    @property
    def may_define_functions(self) -> bool:
        return not self.object_like and ("{" in self.body or "##" in self.body)


def collect_macros(code: str) -> dict[str, Macro]:
    """The function-like macros code (comments and literals blanked) defines; a later #define wins."""
    macros = {}
    for m in _MACRO_DEF.finditer(code):
        params = tuple(p.strip() for p in m.group(2).split(",") if p.strip())
        body = m.group(3).replace("\\\n", " ")
        macros[m.group(1)] = Macro(m.group(1), params, body, m.start(1))
    return macros


def collect_object_macros(code: str) -> dict[str, Macro]:
    """The object-like macros code (comments and literals blanked) defines; a later #define wins."""
    return {m.group(1): Macro(m.group(1), (), m.group(2).replace("\\\n", " ").strip(), m.start(1), object_like=True)
            for m in _OBJECT_DEF.finditer(code)}


def split_top_level(text: str, openers: str = "([{", closers: str = ")]}") -> list[str]:
    """Split at the commas outside brackets (macro arguments, parameter lists)."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in text:
        if ch in openers:
            depth += 1
        elif ch in closers:
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


def matching(code: str, start: int, open_ch: str, close_ch: str) -> int:
    """Index just past the bracket matching code[start], or -1 when it never closes."""
    depth = 0
    for k in range(start, len(code)):
        ch = code[k]
        if ch == open_ch:
            depth += 1
        elif ch == close_ch:
            depth -= 1
            if depth == 0:
                return k + 1
    return -1


def expand(macro: Macro, args: list[str]) -> str:
    """Substitute arguments into the macro body and paste the `##` pieces (one step, no rescanning)."""
    values = dict(zip(macro.params, (a.strip() for a in args)))
    if macro.params and macro.params[-1] == "...":  # variadic: __VA_ARGS__ is the rest, commas kept
        values["__VA_ARGS__"] = ",".join(args[len(macro.params) - 1:]).strip()

    def substitute(m: re.Match[str]) -> str:
        return values.get(m.group(0), m.group(0))

    body = _IDENT.sub(substitute, macro.body)
    return _PASTE.sub("", body) if "##" in body else body


@record
class Expansion:
    """A statement head with its macro invocations expanded; each piece of text knows where it was written:
    a verbatim piece offset for offset, an expanded one at its invocation."""

    text: str
    starts: tuple[int, ...]  # where each piece begins in text
    origins: tuple[int, ...]  # where it was written in the head
    verbatim: tuple[bool, ...]

    def origin(self, offset: int) -> int:
        k = bisect.bisect_right(self.starts, offset) - 1
        return self.origins[k] + (offset - self.starts[k] if self.verbatim[k] else 0)


@dataclass(slots=True)
class _Budget:
    expansions: int = MAX_EXPANSIONS
    length: int = MAX_LENGTH


def invoked(head: str, macros: dict[str, Macro], skip: frozenset[str] = frozenset()) -> bool:
    """Whether head invokes one of macros (skip: names never to expand)."""
    return any(m.group(1) in macros and not macros[m.group(1)].object_like and m.group(1) not in skip
               for m in _INVOCATION.finditer(head))


def expand_invocations(head: str, macros: dict[str, Macro], skip: frozenset[str] = frozenset()) -> Expansion:
    """head with every invocation of a macro of macros (other than skip) expanded, recursively."""
    budget = _Budget()
    pieces: list[tuple[str, int, bool]] = []
    _expand(head, macros, skip, budget, 0, lambda text, at, verbatim: pieces.append((text, at, verbatim)))
    starts, total = [], 0
    for text, _, _ in pieces:
        starts.append(total)
        total += len(text)
    return Expansion("".join(p[0] for p in pieces), tuple(starts), tuple(p[1] for p in pieces),
                     tuple(p[2] for p in pieces))


def _expand(text: str, macros: dict[str, Macro], disabled: frozenset[str], budget: _Budget, nesting: int,
            emit: Callable[[str, int, bool], None]) -> None:
    """Emit text's pieces: (verbatim text, its offset, True) and (an invocation's expansion, its offset, False)."""
    done = 0
    for m in _INVOCATION.finditer(text):
        name = m.group(1)
        macro = macros.get(name)
        if macro is None or macro.object_like or name in disabled or m.start() < done or budget.expansions <= 0 \
                or nesting >= MAX_NESTING:
            continue
        close = matching(text, m.end() - 1, "(", ")")
        if close < 0:
            continue
        body = _replace_objects(expand(macro, split_top_level(text[m.end():close - 1]) if macro.params else []),
                                macros, disabled | {name}, budget)
        budget.expansions -= 1
        budget.length -= len(body)
        if budget.length < 0:
            break
        if m.start() > done:
            emit(text[done:m.start()], done, True)
        inner: list[str] = []
        _expand(body, macros, disabled | {name}, budget, nesting + 1, lambda t, _at, _v: inner.append(t))  # noqa: B023 (called during the call)
        emit(" " + "".join(inner) + " ", m.start(), False)  # (blanks: a pasted neighbour stays apart)
        done = close
    if done < len(text):
        emit(text[done:], done, True)


def _replace_objects(body: str, macros: dict[str, Macro], disabled: frozenset[str], budget: _Budget) -> str:
    """body with the object-like macros of macros it names replaced, rescanned as the preprocessor does (a
    replacement naming another is replaced in turn; one naming itself, or one disabled, stays)."""
    for _ in range(MAX_NESTING):
        named = [m for m in _IDENT.finditer(body)
                 if (macro := macros.get(m.group(0))) is not None and macro.object_like and m.group(0) not in disabled]
        if not named or budget.expansions <= 0:
            return body
        budget.expansions -= len(named)
        pieces, done = [], 0
        for m in named:
            pieces += [body[done:m.start()], " ", macros[m.group(0)].body, " "]
            done = m.end()
        body = "".join([*pieces, body[done:]])
        disabled = disabled | {m.group(0) for m in named}
    return body
