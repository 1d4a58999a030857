"""A careful scanner for kernel definitions in C++/CUDA/ObjC++ sources.

Not a C++ parser: it blanks comments and literals (keeping offsets), tracks
namespaces by braces, expands simple function-like macros, and recognises
function definitions and declarations at namespace scope plus
TORCH_IMPL_FUNC / TORCH_META_FUNC / TORCH_META_FUNC2. That is what is needed
to tell whether a kernel named in native_functions.yaml is defined.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

DEFINITION = "definition"
DECLARATION = "declaration"
IMPL = "impl"  # TORCH_IMPL_FUNC(kernel)
META = "meta"  # TORCH_META_FUNC(name) / TORCH_META_FUNC2(name, overload)


@dataclass(frozen=True, slots=True)
class CppSymbol:
    name: str
    kind: str
    namespace: str  # e.g. "at::native"; "" at global scope
    line: int  # 0-based
    col: int


_COMMENT_OR_LITERAL = re.compile(
    r'//[^\n]*'                                  # line comment
    r'|/\*.*?(?:\*/|\Z)'                          # block comment (maybe unterminated)
    r'|(?<![\w])R"([^()\\\s]{0,16})\(.*?\)\1"'  # raw string literal
    r'|"(?:\\.|[^"\\\n])*"?'                     # string literal
    r"|(?<![\w])'(?:\\.|[^'\\\n])*'?",             # char literal (not a digit separator)
    re.DOTALL,
)


def _blank(m: re.Match[str]) -> str:
    return "\n".join(" " * len(part) for part in m.group(0).split("\n"))


def blank_comments_and_literals(text: str) -> str:
    """Replace comments and string/char literals by spaces, keeping every newline and offset."""
    return _COMMENT_OR_LITERAL.sub(_blank, text)


_MACRO_DEF = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\(([^)]*)\)((?:[^\n\\]|\\\n|\\.)*)", re.MULTILINE)
_PREPROCESSOR = re.compile(r"^[ \t]*#(?:[^\n\\]|\\\n|\\.)*", re.MULTILINE)  # with continuation lines
_IDENT = re.compile(r"[A-Za-z_]\w*")

_NOT_FUNCTIONS = frozenset({
    "if", "for", "while", "switch", "return", "sizeof", "decltype", "catch", "static_assert", "alignas", "alignof",
    "operator", "defined", "TORCH_CHECK", "TORCH_INTERNAL_ASSERT", "AT_DISPATCH_ALL_TYPES", "namespace", "template",
    "typename", "new", "delete", "throw", "noexcept",
})


@dataclass(frozen=True, slots=True)
class Macro:
    name: str
    params: tuple[str, ...]
    body: str


def collect_macros(code: str) -> dict[str, Macro]:
    macros = {}
    for m in _MACRO_DEF.finditer(code):
        params = tuple(p.strip() for p in m.group(2).split(",") if p.strip())
        body = m.group(3).replace("\\\n", " ")
        macros[m.group(1)] = Macro(m.group(1), params, body)
    return macros


def expand(macro: Macro, args: list[str]) -> str:
    """Substitute arguments (with ## pasting and # stringizing removed) into the macro body."""
    values = dict(zip(macro.params, (a.strip() for a in args)))

    def substitute(m: re.Match[str]) -> str:
        return values.get(m.group(0), m.group(0))

    body = _IDENT.sub(substitute, macro.body)
    return re.sub(r"\s*##\s*", "", body)


def split_top_level(text: str, openers: str = "([{", closers: str = ")]}") -> list[str]:
    """Split at the commas outside brackets (macro arguments, parameter lists)."""
    parts, depth, current = [], 0, []
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


def split_parameters(text: str) -> list[str]:
    """The parameters of a C++ declaration, template arguments kept whole, blanks dropped."""
    return [p for p in (part.strip() for part in split_top_level(text, "(<[{", ")>]}")) if p]


def _split_args(text: str) -> list[str]:
    return split_top_level(text)


def _matching(code: str, start: int, open_ch: str, close_ch: str) -> int:
    """Index just past the bracket matching code[start] (or len(code)); for short heads."""
    depth = 0
    for k in range(start, len(code)):
        ch = code[k]
        if ch == open_ch:
            depth += 1
        elif ch == close_ch:
            depth -= 1
            if depth == 0:
                return k + 1
    return len(code)


_BRACES = re.compile(r"[{}]")
_STRUCTURAL = re.compile(r"[{};]")


def brace_pairs(code: str) -> dict[int, int]:
    """Each '{' offset mapped to the offset just past its '}' (unbalanced: the end of the code)."""
    pairs: dict[int, int] = {}
    stack: list[int] = []
    for m in _BRACES.finditer(code):
        if m.group(0) == "{":
            stack.append(m.start())
        elif stack:
            pairs[stack.pop()] = m.end()
    for open_at in stack:
        pairs[open_at] = len(code)
    return pairs


_NAMESPACE = re.compile(r"\bnamespace\s+((?:[A-Za-z_]\w*)(?:\s*::\s*[A-Za-z_]\w*)*)?\s*\{")
_CALL = re.compile(r"(~?[A-Za-z_][\w:]*)\s*\(")
_STRUCTURED = re.compile(r"\b(TORCH_IMPL_FUNC|TORCH_META_FUNC2?)\s*\(")


def blank_preprocessor(code: str) -> str:
    """Blank preprocessor lines (with their continuations) of code whose comments are blanked already."""
    return _PREPROCESSOR.sub(_blank, code)


def scan(text: str, known_macros: dict[str, Macro] | None = None) -> tuple[CppSymbol, ...]:
    """Every kernel-like symbol the source defines or declares, with its namespace.

    known_macros: function-like macros defined elsewhere (headers); the file's own win.
    """
    code = blank_comments_and_literals(text)
    macros = {**(known_macros or {}), **collect_macros(code)}
    # Preprocessor lines are not code at namespace scope (but their macros were collected above).
    code = blank_preprocessor(code)
    starts = [0] + [m.end() for m in re.finditer("\n", code)]

    def position(offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(starts, offset) - 1
        return line, offset - starts[line]

    symbols: list[CppSymbol] = []
    _scan_scope(code, 0, len(code), [], macros, symbols, position, depth=0)
    return tuple(symbols)


def _scan_scope(code: str, start: int, end: int, namespace: list[str], macros: dict[str, Macro],
                symbols: list[CppSymbol], position, depth: int, pairs: dict[int, int] | None = None) -> None:
    """Walk one namespace-level region: nested namespaces recurse, other bodies are skipped."""
    pairs = brace_pairs(code) if pairs is None else pairs
    statement_start = start
    i = start
    while True:
        m = _STRUCTURAL.search(code, i, end)
        if m is None:
            break
        at, ch = m.start(), m.group(0)
        if ch == "{":
            close = pairs.get(at, end)
            ns = _NAMESPACE.search(code, statement_start, at + 1)
            if ns is not None and ns.end() == at + 1:
                names = [p.strip() for p in ns.group(1).split("::")] if ns.group(1) else []
                _scan_scope(code, at + 1, min(close - 1, end), namespace + names, macros, symbols, position, depth,
                            pairs)
            else:
                _definition(code, statement_start, code[statement_start:at], DEFINITION, namespace, macros, symbols,
                            position, depth)
            i = statement_start = close
            continue
        if ch == ";":
            _definition(code, statement_start, code[statement_start:at], DECLARATION, namespace, macros, symbols,
                        position, depth)
        statement_start = i = at + 1
    _definition(code, statement_start, code[statement_start:end], DECLARATION, namespace, macros, symbols, position,
                depth)


def _definition(code: str, at: int, head: str, kind: str, namespace: list[str], macros: dict[str, Macro],
                symbols: list[CppSymbol], position, depth: int) -> None:
    """Find what a statement head (the text before '{' or ';') defines or declares."""
    if not head.strip():
        return
    ns = "::".join(namespace)
    structured = _STRUCTURED.search(head)
    if structured is not None:
        open_at = structured.end() - 1
        args = _split_args(head[open_at + 1:_matching(head, open_at, "(", ")") - 1])
        what = IMPL if structured.group(1) == "TORCH_IMPL_FUNC" else META
        name = "_".join(a.strip() for a in args) if structured.group(1) == "TORCH_META_FUNC2" else args[0].strip()
        symbols.append(CppSymbol(name, what, ns, *position(at + structured.start())))
        return
    offset = 0
    while True:
        call = _CALL.search(head, offset)
        if call is None:
            return
        base = call.group(1).rsplit("::", 1)[-1]
        macro = macros.get(base)
        if macro is None or depth >= 4 or head[offset:call.start()].strip():
            break
        # A known macro invocation at the start of the statement: scan what it expands to.
        open_at = call.end() - 1
        close = _matching(head, open_at, "(", ")")
        expansion = expand(macro, _split_args(head[open_at + 1:close - 1]))
        where = position(at + call.start())
        _scan_scope(expansion, 0, len(expansion), namespace, macros, symbols, lambda _o, w=where: w, depth + 1)
        offset = close
    if offset:
        # What follows the macro invocations is a statement of its own (or the rest of one).
        rest = head[offset:]
        if rest.strip():
            _definition(code, at + offset, rest, kind, namespace, macros, symbols, position, depth + 1)
        return
    name = call.group(1)
    prefix = head[:call.start()]
    if base in _NOT_FUNCTIONS or "=" in prefix or "(" in prefix or not prefix.strip():
        return  # a call, an initialisation or a constructor-like expression, not a declaration
    if re.search(r"\b(return|using|typedef|friend|class|struct|enum|union)\b", prefix):
        return
    qualified = name.split("::")
    full_ns = "::".join([*namespace, *qualified[:-1]]) if len(qualified) > 1 else ns
    symbols.append(CppSymbol(qualified[-1], kind, full_ns, *position(at + call.start() + len(name) - len(base))))
