"""Hover texts (Markdown) for native_functions.yaml: entry keys, dispatch keys, tags, schemas.

On a func: line the hover can also show what torchgen generates for the
operator; the caller passes that in (`generated`), since code generation is a
layer above analysis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..index.native import NativeSnapshot, TagsSnapshot
from ..model import dispatch as dk
from ..model.lower import ENTRY_KEYS
from ..model.native_function import NativeFunction
from ..model.schema import Argument, FunctionSchema, SchemaKind, SchemaKindError
from ..text import Span
from . import cursor
from .definition import find_op


@dataclass(frozen=True, slots=True)
class HoverText:
    markdown: str
    span: Span


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


def schema_summary(func: FunctionSchema, namespace: str = "aten") -> str:
    """Markdown: the operator's name, overload, kind, arguments and returns."""
    name = func.name
    try:
        kind = _KIND_TEXT[func.kind()]
    except SchemaKindError as exc:
        kind = f"none ({exc})"
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


def function_summary(f: NativeFunction) -> str:
    text = schema_summary(f.func, f.namespace)
    extra = []
    if f.structured:
        extra.append("structured (the out= kernel of a structured group)")
    if f.structured_delegate is not None:
        extra.append(f"structured delegate: `{f.structured_delegate}`")
    variants = ", ".join(sorted(v.name for v in f.variants))
    if variants:
        extra.append(f"variants: {variants}")
    if extra:
        text += "\n\n" + "\n".join(f"- {e}" for e in extra)
    return text


def hover(snapshot: NativeSnapshot, tags: TagsSnapshot | None, line: int, col: int,
          generated: Callable[[NativeSnapshot, NativeFunction], str] | None = None) -> HoverText | None:
    hit = cursor.hit_at(snapshot.document, line, col)
    if hit is None:
        return None
    if hit.kind == cursor.ENTRY_KEY:
        what = ENTRY_KEYS.get(hit.text)
        if what is None:
            return HoverText(f"`{hit.text}`: not a key of native_functions.yaml entries", hit.span)
        return HoverText(f"**{hit.text}**: {what}", hit.span)
    if hit.kind == cursor.DISPATCH_KEY:
        summary = dispatch_key_summary(hit.text)
        return HoverText(f"**{hit.text}** (dispatch key): {summary or 'not a dispatch key'}", hit.span)
    if hit.kind == cursor.TAG:
        tag = tags.tags.get(hit.text) if tags is not None else None
        if tag is None:
            return HoverText(f"**{hit.text}** (tag): not defined in tags.yaml", hit.span)
        return HoverText(f"**{hit.text}** (tag)\n\n{tag.desc}", hit.span)
    if hit.kind == cursor.FUNC:
        function = getattr(hit.entry.result.value, "function", None)
        if function is None:
            return None
        code = generated(snapshot, function) if generated is not None else ""
        release = f"\n\n*Read as {snapshot.release}.*"
        return HoverText(function_summary(function) + release + ("\n\n" + code if code else ""), hit.span)
    if hit.kind == cursor.OP_REFERENCE:
        op = find_op(snapshot, hit.text)
        if op is None:
            return HoverText(f"**{hit.text}**: no such operator", hit.span)
        note = f"\n\n(generated by the codegen from the entry on line {op.line + 1})" if op.generated else ""
        return HoverText(function_summary(op.function) + note, hit.span)
    return None
