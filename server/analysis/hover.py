"""Hover texts (Markdown) for native_functions.yaml: entry keys, dispatch keys, tags, schemas.

A hover fits on a screen (MAX_LINES), with the answer to what is under the cursor first: on a func:
line the at:: signature and the native kernel declarations, on a dispatch key that key's kernel
declaration and registration. The rest of what torchgen generates for the op is one command away
(opgen.showGenerated). The generated pieces are the snapshot's (`NativeSnapshot.explainer`, the per-op pieces
of the layer below).
"""

from __future__ import annotations

import json
import re
import shlex
import urllib.parse
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..frozen import record
from ..index.native import NativeSnapshot, TagsSnapshot
from ..model import dispatch as dk
from ..model.lower import ENTRY_KEYS
from ..model.native_function import NativeFunction
from ..model.schema import Argument, FunctionSchema, SchemaKind, SchemaKindError
from ..text import Span
from . import cursor
from .definition import find_op

if TYPE_CHECKING:
    from ..pieces.explain import Snippet


@record
class HoverText:
    markdown: str
    span: Span


# A hover is at most this many lines (about a screen of an editor's hover box), and this many up to the
# end of its answer.
MAX_LINES = 40
ANSWER_LINES = 15
# Kernel declarations shown on a func: line; the others are counted.
MAX_DECLARATIONS = 6


_KIND_TEXT = {
    SchemaKind.functional: "functional: returns new values and mutates no argument",
    SchemaKind.inplace: "in-place: mutates `self` and returns it",
    SchemaKind.out: "out=: writes its results into the `out` arguments",
    SchemaKind.mutable: "mutable: mutates arguments other than `self`",
    SchemaKind.scratch: "scratch: an out= variant with scratch buffers",
}

_COMPOSITE_TEXT = {
    "CompositeImplicitAutograd": "a composite kernel for every backend, written with other operators; autograd "
                                 "comes from the operators it calls. It is the default for an entry without a "
                                 "dispatch table.",
    "CompositeImplicitAutogradNestedTensor": "a composite kernel (implicit autograd, like "
                                             "CompositeImplicitAutograd) used for nested tensors.",
    "CompositeExplicitAutograd": "one kernel for every backend; autograd needs an explicit formula in "
                                 "derivatives.yaml.",
    "CompositeExplicitAutogradNonFunctional": "like CompositeExplicitAutograd, but the kernel calls non-functional "
                                              "(in-place or out=) operators, so backends that need functional "
                                              "kernels do not use it.",
}

_FUNCTIONALITY_TEXT = {  # prefix of a per-backend key -> what its kernels handle, on backend {}
    "Quantized": "quantized tensors on {}",
    "Sparse": "sparse COO tensors on {}",
    "SparseCsr": "sparse compressed (CSR/CSC/BSR/BSC) tensors on {}",
    "NestedTensor": "nested tensors on {}",
    "Autograd": "autograd of {} tensors",
}

_OTHER_TEXT = {
    "MkldnnCPU": "a backend key for MKLDNN (oneDNN) tensors on CPU.",
    "ZeroTensor": "a functionality key for efficient all-zero tensors.",
    "Meta": "the Meta backend: shape and dtype inference without data.",
}


def dispatch_key_summary(name: str) -> str | None:
    """What kind of dispatch key `name` is, in one or two sentences; None if it is no dispatch key."""
    if dk.parse_dispatch_key(name) is None:
        return None
    if name in _COMPOSITE_TEXT:
        text = "Composite key: " + _COMPOSITE_TEXT[name]
    elif name in _OTHER_TEXT:
        text = _OTHER_TEXT[name]
    elif name in dk.BACKEND_COMPONENTS:
        text = f"a backend key: kernels for dense tensors on {name}."
    else:
        text = "a runtime dispatch key."
        for functionality, what in _FUNCTIONALITY_TEXT.items():
            backend = name[len(functionality):]
            if name.startswith(functionality) and backend in dk.BACKEND_COMPONENTS:
                text = f"a per-backend functionality key: {what.format(backend)}."
                break
    text = text[0].upper() + text[1:]
    key = dk.parse_dispatch_key(name)
    notes = []
    if name in dk.SUPPORTED_KEY_NAMES:
        notes.append("native_functions.yaml may use it")
    else:
        notes.append("native_functions.yaml may not use it")
    if key in dk.STRUCTURED_DISPATCH_KEYS:
        notes.append("structured kernels get generated meta/impl code for it")
    if key in dk.UFUNC_DISPATCH_KEYS:
        notes.append("ufunc_inner_loop generates its kernel")
    return f"{text} ({'; '.join(notes)}.)"


def _argument_line(argument: Argument, note: str = "") -> str:
    return f"- `{argument}`" + (f" ({note})" if note else "")


def _kind_text(func: FunctionSchema) -> str:
    try:
        return _KIND_TEXT[func.kind()]
    except SchemaKindError as exc:
        return f"none ({exc})"


def schema_summary(func: FunctionSchema, namespace: str = "aten") -> str:
    """Markdown: the operator's name, overload, kind, arguments and returns."""
    name = func.name
    kind = _kind_text(func)
    lines = [
        f"**{namespace}::{name}**",
        "",
        f"- name: `{name.name}`",
        f"- overload: `{name.overload_name}`" if name.overload_name else "- overload: (none)",
        f"- kind: {kind}",
        "",
        "**Arguments**",
        "",
    ]
    args = func.arguments
    if not args.flat_all:
        lines.append("- (none)")
    lines.extend(_argument_line(a) for a in args.flat_positional)
    lines.extend(_argument_line(a, "keyword-only") for a in args.flat_kwarg_only)
    lines.extend(_argument_line(a, "out") for a in args.out)
    returns = ", ".join(f"`{r}`" for r in func.returns) or "(nothing)"
    lines += ["", f"**Returns** {returns}"]
    return "\n".join(lines)


def _facts(f: NativeFunction) -> list[str]:
    """What the entry says beyond its schema: structured, its delegate, its variants."""
    facts = []
    if f.structured:
        facts.append("structured (the out= kernel of a structured group)")
    if f.structured_delegate is not None:
        facts.append(f"structured delegate: `{f.structured_delegate}`")
    variants = ", ".join(sorted(v.name for v in f.variants))
    if variants:
        facts.append(f"variants: {variants}")
    return facts


def function_summary(f: NativeFunction) -> str:
    text = schema_summary(f.func, f.namespace)
    extra = _facts(f)
    if extra:
        text += "\n\n" + "\n".join(f"- {e}" for e in extra)
    return text


# How a hover points at all of an op's generated code: show_generated_link for a client that runs command links
# (the VS Code extension), explain_command for the others.
MoreCode = Callable[[str], str]


def show_generated_link(op: str) -> str:
    """A Markdown link to the VS Code extension's command that opens all of an op's generated code."""
    query = urllib.parse.quote(json.dumps([op]))
    return f"[opgen: Show generated code](command:opgenLsp.showGenerated?{query})"


def explain_command(path: str | None) -> MoreCode:
    """For a client that cannot run a command link (a plain-text or another Markdown client): the CLI command that
    prints the same code, for the yaml at path."""
    native = f" --native-functions {shlex.quote(path)}" if path else ""
    return lambda op: f"`opgen explain {op}{native}`"


def _cpp(lines: list[str]) -> list[str]:
    return ["```cpp", *lines, "```"]


def at_signatures(pieces: Sequence[Snippet]) -> list[str]:
    """The at:: function declarations of Functions.h's inline definitions (`inline T f(...) {` -> `T f(...);`)."""
    out: list[str] = []
    for piece in pieces:
        if piece.file == "Functions.h":
            out.extend(line.removeprefix("inline ").removesuffix(" {") + ";"
                       for line in piece.code.splitlines() if line.startswith("inline ") and line.endswith(" {"))
    return out


def kernel_declarations(pieces: Sequence[Snippet]) -> list[tuple[list[str], str]]:
    """[(dispatch keys, declaration)] of NativeFunctions.h, one per distinct declaration, in torchgen's order."""
    by_code: dict[str, list[str]] = {}
    for piece in pieces:
        if piece.title.endswith(" kernel declaration"):
            by_code.setdefault(piece.code.rstrip(), []).append(piece.title.removesuffix(" kernel declaration"))
    return [(keys, code) for code, keys in by_code.items()]


def function_hover(f: NativeFunction, pieces: Sequence[Snippet], release: object,
                   more: MoreCode = show_generated_link) -> str:
    """The func: line: what the op is, its at:: signature and its native kernel declarations, then the op's facts
    (and the torch release it is read as)."""
    name = str(f.func.name)
    lines = [f"**{f.namespace}::{name}** ({_kind_text(f.func)})", ""]
    signatures = at_signatures(pieces)
    declarations = kernel_declarations(pieces)
    if signatures:
        lines += ["at:: (Functions.h)", *_cpp(signatures)]
    if declarations:
        shown = declarations[:MAX_DECLARATIONS]
        code = [f"// {', '.join(keys)}\n{declaration}" for keys, declaration in shown]
        lines += ["Native kernels (NativeFunctions.h)", *_cpp("\n".join(code).splitlines())]
        if len(declarations) > len(shown):
            lines.append(f"and {len(declarations) - len(shown)} more declarations")
    elif f.structured_delegate is not None:
        lines.append(f"No kernel of its own: the structured kernels of `{f.structured_delegate}` implement it.")
    returns = ", ".join(f"`{r}`" for r in f.func.returns) or "(nothing)"
    facts = [*_facts(f), f"returns {returns}", f"read as {release}"]
    lines += ["", *(f"- {fact}" for fact in facts)]
    if pieces:
        lines += ["", f"All {len(pieces)} generated pieces: {more(name)}"]
    return "\n".join(_fit(lines))


def dispatch_key_hover(name: str, f: NativeFunction | None, pieces: Sequence[Snippet],
                       more: MoreCode = show_generated_link) -> str:
    """A dispatch key: what kind of key it is (a line), then its kernel declaration and registration for this op."""
    lines = [f"**{name}** (dispatch key): {dispatch_key_summary(name) or 'not a dispatch key'}"]
    mine = [p for p in pieces if p.title.startswith(name + " ")]
    # The declaration and the m.impl line answer "what does this key register"; the wrapper is the longest.
    order = {"kernel declaration": 0, "registration": 1, "registration wrapper": 2}
    mine.sort(key=lambda p: order.get(p.title.removeprefix(name + " "), 3))
    for piece in mine:
        lines += ["", f"{piece.title} ({piece.file})", *_cpp(piece.code.rstrip().splitlines())]
    if mine and f is not None:
        lines += ["", f"All the generated code of {f.func.name}: {more(str(f.func.name))}"]
    return "\n".join(_fit(lines))


def _fit(lines: list[str]) -> list[str]:
    """At most MAX_LINES: the last code block that crosses the limit is cut (its fence closed), the last line kept."""
    if len(lines) <= MAX_LINES:
        return lines
    last = lines[-1]
    kept = lines[:MAX_LINES - 2]
    if sum(line.startswith("```") for line in kept) % 2 == 1:  # inside a code block: close it
        kept[-1] = "```"
    cut = len(lines) - 1 - len(kept)
    return [*kept, f"({cut} more lines)", last]


_BACKTICKS = re.compile(r"`+")
_FENCE = re.compile(r"(`{3,})[^`]*$")  # a fence line: 3 or more backticks, an info string without any


def code_block(text: str, info: str = "") -> str:
    """text as a Markdown code block whose fence is longer than any run of backticks in it, so that no line of
    the text (say a message quoting ``` itself) closes it early (CommonMark: a closing fence is at least as long)."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_STRONG = re.compile(r"\*\*([^*]+)\*\*")
_CODE = re.compile(r"`([^`]+)`")


def as_plain_text(markdown: str) -> str:
    """The same text for a client that takes no Markdown: no fences, emphasis, backticks or link targets
    (code lines are kept as they are)."""
    out, fence = [], ""  # fence: the open code block's, which only a line of as many backticks or more closes
    for line in markdown.splitlines():
        opening = _FENCE.match(line)
        if not fence and opening is not None:
            fence = opening.group(1)
            continue
        if fence and line.rstrip().startswith(fence) and not line.rstrip().strip("`"):
            fence = ""
            continue
        out.append(line if fence else _CODE.sub(r"\1", _STRONG.sub(r"\1", _LINK.sub(r"\1", line))))
    return "\n".join(out)


def generated_pieces(snapshot: NativeSnapshot, function: NativeFunction) -> Sequence[Snippet]:
    """Every piece torchgen generates for the function (opgen explain), for the hover to pick from."""
    return snapshot.explainer.explain(str(function.func.name))


def hover(snapshot: NativeSnapshot, tags: TagsSnapshot | None, line: int, col: int,
          release_label: str | None = None, more: MoreCode = show_generated_link) -> HoverText | None:
    """release_label: the release the file is read as and how it was found ('torch 2.15 (from its content)');
    without it, the snapshot's release. more: how the hover offers the rest of the generated code."""
    hit = cursor.hit_at(snapshot.document, line, col)
    if hit is None:
        return None
    if hit.kind == cursor.ENTRY_KEY:
        what = ENTRY_KEYS.get(hit.text)
        if what is None:
            return HoverText(f"`{hit.text}`: not a key of native_functions.yaml entries", hit.span)
        return HoverText(f"**{hit.text}**: {what}", hit.span)
    if hit.kind == cursor.DISPATCH_KEY:
        function = getattr(hit.entry.result.value, "function", None)
        pieces = generated_pieces(snapshot, function) if function is not None else ()
        return HoverText(dispatch_key_hover(hit.text, function, pieces, more), hit.span)
    if hit.kind == cursor.TAG:
        tag = tags.tags.get(hit.text) if tags is not None else None
        if tag is None:
            return HoverText(f"**{hit.text}** (tag): not defined in tags.yaml", hit.span)
        return HoverText(f"**{hit.text}** (tag)\n\n{tag.desc}", hit.span)
    if hit.kind == cursor.FUNC:
        function = getattr(hit.entry.result.value, "function", None)
        if function is None:
            return None
        pieces = generated_pieces(snapshot, function)
        return HoverText(function_hover(function, pieces, release_label or snapshot.release, more), hit.span)
    if hit.kind == cursor.OP_REFERENCE:
        op = find_op(snapshot, hit.text)
        if op is None:
            return HoverText(f"**{hit.text}**: no such operator", hit.span)
        note = f"\n\n(generated by the codegen from the entry on line {op.line + 1})" if op.generated else ""
        return HoverText(function_summary(op.function) + note, hit.span)
    return None
