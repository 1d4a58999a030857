"""A careful scanner for kernel definitions in C++/CUDA/ObjC++ sources.

Not a C++ parser: it blanks comments and literals (keeping offsets), tracks
namespaces by braces, expands the function-like macros a statement invokes (the
file's own, and those an index hands over from headers: cpp_macros), and recognises
function definitions and declarations at namespace scope plus TORCH_IMPL_FUNC /
TORCH_META_FUNC(2) / TORCH_PRECOMPUTE_META_FUNC(2). Functions the codegen could not
call as a kernel (internal linkage, templates, CUDA device code) get a marker in
their namespace. That is what is needed to tell whether a kernel named in
native_functions.yaml is defined.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import replace
from itertools import pairwise

from ..frozen import record

# (Macro and split_top_level are also taken from here by the index and the codegen.)
from .cpp_macros import Macro, collect_macros, collect_object_macros, expand_invocations, invoked, matching, split_top_level
from .cpp_types import parameter_key, type_aliases, with_aliases

# An offset in the scanned code -> its (line, column) in the file.
Position = Callable[[int], tuple[int, int]]

DEFINITION = "definition"
DECLARATION = "declaration"
IMPL = "impl"  # TORCH_IMPL_FUNC(kernel)
META = "meta"  # TORCH_META_FUNC(name) / TORCH_META_FUNC2(name, overload)
MACRO = "macro"  # a function-like #define that may define functions (its body has '{' or '##')
MACRO_USE = "macro use"  # an invocation, at namespace scope, of a macro the file does not define


@record
class Branch:
    """Where a definition sits in a preprocessor conditional of several branches (#if ... #else ... #endif)."""

    directives: tuple[int, ...]  # the 0-based lines of the conditional's #if, #elif and #else
    taken: int  # which of them opens the branch holding the definition


@record
class CppSymbol:
    name: str
    kind: str
    namespace: str  # e.g. "at::native"; "" at global scope
    line: int  # 0-based
    col: int
    params: str | None = None  # a definition's or declaration's parameter types (cpp_types.parameter_key)
    branches: tuple[Branch, ...] = ()  # a definition's conditionals of several branches, outermost first


_COMMENT_OR_LITERAL = re.compile(
    r'(?=[/"\'R])(?:'                              # (the lookahead: a 3x faster scan between them)
    r'//[^\n\\]*(?:\\.[^\n\\]*)*'                 # line comment (a backslash at its end continues it)
    r'|/\*.*?(?:\*/|\Z)'                          # block comment (maybe unterminated)
    r'|(?<![\w])R"([^()\\\s]{0,16})\(.*?\)\1"'  # raw string literal
    r'|"(?:\\.|[^"\\\n])*"?'                     # string literal
    r"|(?<![\w])'(?:\\.|[^'\\\n])*'?)",            # char literal (not a digit separator)
    re.DOTALL,
)


def _blank(m: re.Match[str]) -> str:
    text = m.group(0)
    if "\n" not in text:  # most comments: one line
        return " " * len(text)
    return "\n".join(" " * len(part) for part in text.split("\n"))


def _blank_keeping_splices(m: re.Match[str]) -> str:
    """_blank, but a backslash ending a line stays: it is a line splice, done before comments are, so a
    #define with a comment over several lines goes on after it."""
    text = m.group(0)
    if "\\\n" not in text:
        return _blank(m)
    return "\n".join(" " * (len(part) - 1) + "\\" if part.endswith("\\") else " " * len(part)
                     for part in text.split("\n"))


def blank_comments_and_literals(text: str) -> str:
    """Replace comments and string/char literals by spaces, keeping every newline and offset (and line splices)."""
    return _COMMENT_OR_LITERAL.sub(_blank_keeping_splices, text)


_PREPROCESSOR = re.compile(r"^[ \t]*#(?:[^\n\\]|\\\n|\\.)*", re.MULTILINE)  # with continuation lines

_NOT_FUNCTIONS = frozenset({
    "if", "for", "while", "switch", "return", "sizeof", "decltype", "catch", "static_assert", "alignas", "alignof",
    "operator", "defined", "TORCH_CHECK", "TORCH_INTERNAL_ASSERT", "AT_DISPATCH_ALL_TYPES", "namespace", "template",
    "typename", "new", "delete", "throw", "noexcept",
})


def split_parameters(text: str) -> list[str]:
    """The parameters of a C++ declaration, template arguments kept whole, blanks dropped."""
    return [p for p in (part.strip() for part in split_top_level(text, "(<[{", ")>]}")) if p]


def _matching(code: str, start: int, open_ch: str, close_ch: str) -> int:
    """Index just past the bracket matching code[start] (or len(code)); for short heads."""
    end = matching(code, start, open_ch, close_ch)
    return len(code) if end < 0 else end


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
_EXTERN_BLOCK = re.compile(r"\bextern\s*\{")  # extern "C" { (the literal is blanked)
_CALL = re.compile(r"(~?[A-Za-z_][\w:]*)\s*\(")
_STRUCTURED = {"TORCH_IMPL_FUNC": IMPL, "TORCH_META_FUNC": META, "TORCH_META_FUNC2": META,
               "TORCH_PRECOMPUTE_META_FUNC": META, "TORCH_PRECOMPUTE_META_FUNC2": META}
STRUCTURED_MACROS = frozenset(_STRUCTURED)
_ATTRIBUTE = re.compile(r"\[\[.*?\]\]", re.DOTALL)  # [[nodiscard]], [[deprecated(...)]]
# Calls that are not the declarator: macros (C10_LAUNCH_BOUNDS_1(...), C10_DIAGNOSTIC_PUSH...()),
# __attribute__((...)), __declspec(...), __launch_bounds__(...), alignas(...). (Not every dunder:
# __and__ and __lshift__ are kernels.)
_NOT_DECLARATOR = re.compile(
    r"[A-Z_][A-Z0-9_]*|__attribute__|__declspec|__launch_bounds__|__align__|alignas|_Pragma|__pragma")
_MACRO_NAME = re.compile(r"[A-Z][A-Z0-9_]*")
# Macros of the framework itself (dispatch stubs, library registration, diagnostics): no kernel comes from them.
_FRAMEWORK_MACRO = re.compile(r"(?:C10|CAFFE2|TORCH|REGISTER|DEFINE_DISPATCH|DECLARE_DISPATCH|CUDA|AT_DISPATCH)")
_NOT_A_DECLARATION = re.compile(r"\b(return|using|typedef|friend|class|struct|enum|union)\b")
_TEMPLATE = re.compile(r"\btemplate\s*<")
ANONYMOUS = "(anonymous)"  # an anonymous namespace's part of a namespace: internal linkage
STATIC = "(static)"  # a static function's: internal linkage too, so never a kernel the codegen can call
# The codegen declares each kernel as a plain host function: a function template, or a CUDA __device__ or
# __global__ function, of the same name does not define it (UpSample.cuh's device min/max, for one).
TEMPLATE = "(template)"
DEVICE = "(device)"
_DEVICE_ONLY = re.compile(r"\b(__device__|__global__|C10_DEVICE)\b")  # (C10_HOST_DEVICE is callable)
_CONDITIONAL = re.compile(r"#[ \t]*(ifn?def|if|elif|else|endif)\b")  # comments are blanked: '#' starts directives
# A branch written to stop the build when it is taken (`#error`, `static_assert(0)`): no configuration to build.
_FAILS_THE_BUILD = re.compile(r"^[ \t]*#[ \t]*error\b|\bstatic_assert\s*\(\s*(?:0|false)\s*[,)]", re.MULTILINE)
# Whether a file has anything keep_balanced_branches acts on: an #else/#elif or an #if 0 ('# else' too).
_BRANCH_OR_IF_0 = re.compile(r"#[ \t]*(?:el|if[ \t]+0)")


def blank_preprocessor(code: str) -> str:
    """Blank preprocessor lines (with their continuations) of code whose comments are blanked already."""
    return _PREPROCESSOR.sub(_blank, code)


def _brace_delta(text: str, start: int, end: int) -> int:
    part = text[start:end]
    return part.count("{") - part.count("}")


@record
class _Conditional:
    starts: tuple[int, ...]  # the offsets of its #if, #elif and #else directives
    end: int  # of its #endif
    disabled: bool  # `#if 0`
    balanced: bool  # every branch closes the braces it opens
    failing: tuple[bool, ...]  # per branch: does it stop the build on purpose (#error, static_assert(0))?

    @property
    def scanned_whole(self) -> bool:
        """Whether every branch is read as code (and is a configuration of its own): keep_balanced_branches."""
        return not self.disabled and len(self.starts) > 1 and self.balanced


def _conditionals(code: str) -> list[_Conditional]:
    """The preprocessor conditionals of code (comments blanked), inner ones before the ones holding them."""
    out: list[_Conditional] = []
    stack: list[list[int]] = []  # per open group: the offsets where its branches start
    disabled: list[bool] = []  # per open group: is it `#if 0`?
    for m in _CONDITIONAL.finditer(code):
        if code[code.rfind("\n", 0, m.start()) + 1:m.start()].strip():
            continue  # not at the start of a line: a '#' in a macro body (stringizing)
        word = m.group(1)
        if word.startswith("if"):
            stack.append([m.start()])
            disabled.append(word == "if" and code[m.end():code.find("\n", m.end())].strip() == "0")
        elif word.startswith("el") and stack:
            stack[-1].append(m.start())
        elif word == "endif" and stack:
            starts, zero = stack.pop(), disabled.pop()
            bounds = starts + [m.start()]
            pairs = list(pairwise(bounds))
            balanced = not any(_brace_delta(code, a, b) for a, b in pairs)
            failing = tuple(_fails_the_build(code, a, b) for a, b in pairs)
            out.append(_Conditional(tuple(starts), m.start(), zero, balanced, failing))
    return out


def _fails_the_build(code: str, start: int, end: int) -> bool:
    return (code.find("error", start, end) >= 0 or code.find("static_assert", start, end) >= 0) \
        and _FAILS_THE_BUILD.search(code, start, end) is not None


def _has_branches(code: str) -> bool:
    return "#" in code and _BRANCH_OR_IF_0.search(code) is not None


def keep_balanced_branches(code: str, conditionals: list[_Conditional]) -> str:
    """Blank the preprocessor branches (of code's conditionals) that would mislead a scan of every branch.

    Scanning every branch is right when each is complete (two definitions of a kernel), but
    `#ifdef X  f(int a) {  #else  f(long a) {  #endif` would open two bodies for one close and hide
    everything after it: when a branch leaves braces open (or closes more), only the first is kept.
    And `#if 0` code is never compiled, so a kernel there is no definition.
    """
    blanks: list[tuple[int, int]] = []
    for group in conditionals:
        if group.disabled:
            blanks.append((group.starts[0], group.starts[1] if len(group.starts) > 1 else group.end))
        elif len(group.starts) > 1 and not group.balanced:
            blanks.append((group.starts[1], group.end))
    return _blank_ranges(code, blanks) if blanks else code


def _with_branches(symbols: list[CppSymbol], conditionals: list[_Conditional], line_of: Callable[[int], int]
                   ) -> list[CppSymbol]:
    """The definitions given the conditionals of several branches, all read, that hold them (outermost first).
    A branch that stops the build on purpose is no configuration: only the others count."""
    groups = []
    for g in conditionals:
        live = tuple(line_of(a) for a, fails in zip(g.starts, g.failing) if not fails)
        if g.scanned_whole and len(live) > 1:
            groups.append((line_of(g.starts[0]), line_of(g.end), tuple(line_of(a) for a in g.starts), live))
    if not groups:
        return symbols
    groups.sort()

    def branches(line: int) -> tuple[Branch, ...]:
        out = []
        for first, last, lines, live in groups:
            if first < line < last:
                opener = lines[bisect.bisect_right(lines, line) - 1]
                if opener in live:
                    out.append(Branch(live, live.index(opener)))
        return tuple(out)

    out = []
    for s in symbols:
        held = branches(s.line) if s.kind == DEFINITION else ()
        out.append(replace(s, branches=held) if held else s)
    return out


def _blank_ranges(code: str, ranges: list[tuple[int, int]]) -> str:
    chars = list(code)
    for start, end in ranges:
        for k in range(start, end):
            if chars[k] != "\n":
                chars[k] = " "
    return "".join(chars)


def _lf(text: str) -> str:
    """CRLF (a Windows checkout) made LF, offsets kept. A continuation (backslash, CR, LF) becomes
    space, backslash, LF: backslash, space, LF would end the #define at its first line."""
    if "\r" not in text:
        return text
    return text.replace("\\\r\n", " \\\n").replace("\r\n", " \n")


def file_macros(text: str) -> dict[str, Macro]:
    """The function-like macros a source file defines."""
    return collect_macros(blank_comments_and_literals(_lf(text)))


def scan(text: str, known_macros: dict[str, Macro] | None = None) -> tuple[CppSymbol, ...]:
    """Every kernel-like symbol the source defines or declares, with its namespace.

    known_macros: function-like macros defined elsewhere (headers); the file's own win. Invocations of
    macros neither defines are MACRO_USE symbols, so that an index can scan again with the right headers.
    """
    return scan_with_macros(text, known_macros)[0]


def scan_with_macros(text: str, known_macros: dict[str, Macro] | None = None
                     ) -> tuple[tuple[CppSymbol, ...], dict[str, Macro]]:
    """scan(text), and the function-like macros the file defines (one pass over the text for both)."""
    code = blank_comments_and_literals(_lf(text))
    own = collect_macros(code)
    # The file's object-like macros too, for what its function-like macros paste (never another file's).
    macros = {**(known_macros or {}), **collect_object_macros(code), **own}
    # Preprocessor lines are not code at namespace scope (but their macros were collected above).
    conditionals = _conditionals(code) if _has_branches(code) else []
    code = blank_preprocessor(keep_balanced_branches(code, conditionals))
    starts = [0] + [m.end() for m in re.finditer("\n", code)]

    def line_of(offset: int) -> int:
        return bisect.bisect_right(starts, offset) - 1

    def position(offset: int) -> tuple[int, int]:
        line = line_of(offset)
        return line, offset - starts[line]

    symbols = [CppSymbol(m.name, MACRO, "", *position(m.offset)) for m in own.values() if m.may_define_functions]
    _scan_scope(code, 0, len(code), [], macros, symbols, position, expanded=False)
    aliases = type_aliases(code)
    if aliases:
        symbols = [replace(s, params=with_aliases(s.params, aliases)) if s.params else s for s in symbols]
    return tuple(_with_branches(symbols, conditionals, line_of)), own


def _namespace_names(code: str, statement_start: int, ns: re.Match[str]) -> list[str]:
    """The names a namespace block adds: none for an inline namespace (its members belong to the
    enclosing one), ANONYMOUS for an anonymous one."""
    if not ns.group(1):
        return [ANONYMOUS]
    if code[statement_start:ns.start()].rstrip().endswith("inline"):
        return []
    return [p.strip() for p in ns.group(1).split("::")]


def _scan_scope(code: str, start: int, end: int, namespace: list[str], macros: dict[str, Macro],
                symbols: list[CppSymbol], position: Position, expanded: bool, pairs: dict[int, int] | None = None,
                tail: str = DECLARATION) -> None:
    """Walk one namespace-level region: nested namespaces recurse, other bodies are skipped.

    expanded: the region is a macro expansion (its invocations are expanded already); tail: the kind of what
    its last statement declares when it ends without ';' or a body (a macro expanding to the head of a
    definition whose body follows the invocation)."""
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
            if code.count("(", statement_start, at) > code.count(")", statement_start, at):
                i = close  # braces inside parentheses (a default argument `= {}`): still the same statement
                continue
            # (the find()s spare a regex search at most braces, which open function bodies)
            ns = _NAMESPACE.search(code, statement_start, at + 1) \
                if code.find("namespace", statement_start, at) >= 0 else None
            extern = _EXTERN_BLOCK.search(code, statement_start, at + 1) \
                if code.find("extern", statement_start, at) >= 0 else None
            opener = ns if ns is not None and ns.end() == at + 1 else \
                extern if extern is not None and extern.end() == at + 1 else None
            if opener is not None:
                # What precedes the block in the same statement (macro invocations without ';') comes first.
                _definition(code, statement_start, code[statement_start:opener.start()], DECLARATION, namespace,
                            macros, symbols, position, expanded)
                names = _namespace_names(code, statement_start, ns) if ns is not None and opener is ns else []
                _scan_scope(code, at + 1, min(close - 1, end), namespace + names, macros, symbols, position,
                            expanded, pairs)
            else:
                _definition(code, statement_start, code[statement_start:at], DEFINITION, namespace, macros, symbols,
                            position, expanded)
            i = statement_start = close
            continue
        if ch == ";":
            _definition(code, statement_start, code[statement_start:at], DECLARATION, namespace, macros, symbols,
                        position, expanded)
        statement_start = i = at + 1
    _definition(code, statement_start, code[statement_start:end], tail, namespace, macros, symbols, position,
                expanded)


def _without_templates(prefix: str) -> str:
    """prefix with its `template <...>` heads removed (`template <class T>` is no class declaration)."""
    while (m := _TEMPLATE.search(prefix)) is not None:
        close = _matching(prefix, m.end() - 1, "<", ">")
        prefix = prefix[:m.start()] + prefix[close:]
    return prefix


def _definition(code: str, at: int, head: str, kind: str, namespace: list[str], macros: dict[str, Macro],
                symbols: list[CppSymbol], position: Position, expanded: bool) -> None:
    """Find what a statement head (the text before '{' or ';') defines or declares.

    A head invoking known macros is expanded and scanned as code (what comes before an invocation, such as
    `static`, then belongs to the first function of its expansion only, as after the preprocessor); other
    macro-like calls and attributes before the declarator are passed over; TORCH_IMPL_FUNC(name) and the like
    are structured kernels.
    """
    if not head.strip():
        return
    if not expanded and macros and invoked(head, macros, STRUCTURED_MACROS):
        expansion = expand_invocations(head, macros, STRUCTURED_MACROS)

        def where(offset: int) -> tuple[int, int]:
            return position(at + expansion.origin(offset))

        _scan_scope(expansion.text, 0, len(expansion.text), namespace, macros, symbols, where, expanded=True,
                    tail=kind)
        return
    if "[[" in head:
        head = _ATTRIBUTE.sub(_blank, head)
    ns = "::".join(namespace)
    skipped: list[str] = []  # the prefix text, without the calls passed over
    offset = 0
    while True:
        call = _CALL.search(head, offset)
        if call is None:
            return
        base = call.group(1).rsplit("::", 1)[-1]
        leading = not head[offset:call.start()].strip()
        only_macros_before = leading and not "".join(skipped).strip()
        if base in _STRUCTURED and only_macros_before:
            _structured(head, at, call, _STRUCTURED[base], ns, symbols, position)
            return
        if _NOT_DECLARATOR.fullmatch(base) or (base == "decltype" and leading):
            # A macro no header handed over yet: the index scans again with the tree's definition of it.
            if base not in macros and _MACRO_NAME.fullmatch(base) and not _FRAMEWORK_MACRO.match(base):
                symbols.append(CppSymbol(base, MACRO_USE, ns, *position(at + call.start())))
            skipped.append(head[offset:call.start()])
            offset = _matching(head, call.end() - 1, "(", ")")
            continue
        break
    name = call.group(1)
    prefix = "".join(skipped) + head[offset:call.start()]
    plain = _without_templates(prefix) if "template" in prefix else prefix
    if base in _NOT_FUNCTIONS or "=" in plain or "(" in plain or not plain.strip():
        return  # a call, an initialisation or a constructor-like expression, not a declaration
    if _NOT_A_DECLARATION.search(plain):
        return
    qualified = name.split("::")
    full_ns = "::".join([*namespace, *qualified[:-1]]) if len(qualified) > 1 else ns
    marker = _not_a_kernel(prefix)
    if marker:
        full_ns = f"{full_ns}::{marker}" if full_ns else marker
    close = head.find(")", call.end())  # (most parameter lists have no parentheses inside)
    if close < 0 or head.find("(", call.end(), close) >= 0:
        close = _matching(head, call.end() - 1, "(", ")") - 1
    params = parameter_key(head[call.end():close])
    line, col = position(at + call.start() + len(name) - len(base))
    symbols.append(CppSymbol(qualified[-1], kind, full_ns, line, col, params))


def _not_a_kernel(prefix: str) -> str | None:
    """Why a function with this prefix cannot be the kernel the codegen declares (a namespace marker), if so."""
    if re.search(r"\bstatic\b", prefix):
        return STATIC
    if "template" in prefix and _TEMPLATE.search(prefix):
        return TEMPLATE
    if _DEVICE_ONLY.search(prefix) and "__host__" not in prefix:
        return DEVICE
    return None


def _structured(head: str, at: int, call: re.Match[str], what: str, ns: str, symbols: list[CppSymbol],
                position: Position) -> None:
    """TORCH_IMPL_FUNC(kernel), TORCH_META_FUNC(name), TORCH_META_FUNC2(name, overload) and the precomputed ones."""
    close = _matching(head, call.end() - 1, "(", ")")
    args = [a.strip() for a in split_top_level(head[call.end():close - 1])]
    name = "_".join(args) if call.group(1).endswith("2") else args[0]
    symbols.append(CppSymbol(name, what, ns, *position(at + call.start())))
