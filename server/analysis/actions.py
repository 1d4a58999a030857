"""Quick fixes, as minimal text edits that keep the file's comments and layout.

- did-you-mean: a diagnostic whose data offers ("replace", candidate) gets one fix per
  candidate (keys, dispatch keys, tags, types, op names, backend keys);
- OPG122: add the nondeterministic_seeded tag to the entry (flow list, scalar, block
  list or no tags: yet, each written the way the entry already writes it);
- OPG521 (backend yaml): move a CompositeImplicitAutograd op from `supported:` to
  `autograd:` (the item's line goes; a line joins the autograd list, or the list is made).

Edits are (span, new text) in the document's coordinates; a fix's edits never overlap.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..diagnostics import Diagnostic
from ..frozen import record
from ..index.backend import BackendSnapshot
from ..index.documents import Document
from ..syntax.nodes import YScalar, YSeq
from ..text import Span
from .cursor import content_end, entry_at

QUICKFIX = "quickfix"
NONDETERMINISTIC = "nondeterministic_seeded"


@record
class Fix:
    title: str
    edits: tuple[tuple[Span, str], ...]
    diagnostic: Diagnostic
    preferred: bool = False


def _overlaps(a: Span, b: Span) -> bool:
    return (a.start_line, a.start_col) <= (b.end_line, b.end_col) and (b.start_line, b.start_col) <= (a.end_line, a.end_col)


def _text_of(lines: Sequence[str], span: Span) -> str | None:
    if span.start_line != span.end_line or not 0 <= span.start_line < len(lines):
        return None
    return lines[span.start_line][span.start_col:span.end_col]


_QUOTED = re.compile(r"'([^']+)'")


def replace_fixes(lines: Sequence[str], d: Diagnostic) -> list[Fix]:
    candidates = [value for kind, value in d.data if kind == "replace"]
    if not candidates:
        return []
    written = _text_of(lines, d.span)
    target = d.span
    if written is not None:
        # The span may hold more than the misspelt word (an unknown type inside 'Tensr?'): the message quotes it.
        m = _QUOTED.search(d.message)
        if m is not None and m.group(1) != written and written.count(m.group(1)) == 1:
            at = d.span.start_col + written.index(m.group(1))
            target = Span(d.span.start_line, at, d.span.start_line, at + len(m.group(1)))
    return [Fix(f"Replace with '{c}'", ((target, c),), d, preferred=i == 0 and len(candidates) == 1)
            for i, c in enumerate(candidates)]


def add_tag_fix(lines: Sequence[str], document: Document, d: Diagnostic, tag: str = NONDETERMINISTIC) -> Fix | None:
    entry = entry_at(document, d.span.start_line)
    if entry is None or entry.result.mapping is None:
        return None
    mapping = entry.result.mapping
    title = f"Add the tag {tag}"
    pair = mapping.get("tags")
    if pair is None:
        end_line, end_col = content_end(entry)
        return Fix(title, ((Span.point(end_line, end_col), f"\n  tags: {tag}"),), d, True)
    key, node = pair
    node_span = node.span.shifted(entry.line)
    if isinstance(node, YSeq):
        flow = _text_of(lines, Span(node_span.start_line, node_span.start_col, node_span.start_line,
                                    node_span.start_col + 1)) == "["
        if flow:
            close = Span.point(node_span.end_line, node_span.end_col - 1)
            return Fix(title, ((close, (", " if node.items else "") + tag),), d, True)
        if not node.items:
            return None
        last = node.items[-1].span.shifted(entry.line)
        line_text = lines[last.start_line]
        dash = line_text.rfind("-", 0, last.start_col)
        if dash < 0:
            return None
        indent = line_text[:dash]
        return Fix(title, ((Span.point(last.end_line, len(lines[last.end_line])), f"\n{indent}- {tag}"),), d, True)
    if isinstance(node, YScalar):
        if node.value is None or node.value == "":
            key_span = key.span.shifted(entry.line)
            line_end = len(lines[key_span.end_line].split("#", 1)[0].rstrip())
            return Fix(title, ((Span(key_span.end_line, key_span.end_col, key_span.end_line, line_end),
                                f": {tag}"),), d, True)
        written = _text_of(lines, node_span)
        if written is None:
            return None
        # torch 1.13 takes one string of names separated by ", " (its torchgen refuses a list).
        if ("tags-form", "comma-separated") in d.data:
            return Fix(title, ((node_span, f"{written}, {tag}"),), d, True)
        return Fix(title, ((node_span, f"[{written}, {tag}]"),), d, True)
    return None


def move_to_autograd_fix(lines: Sequence[str], backend: BackendSnapshot, d: Diagnostic) -> Fix | None:
    yaml = backend.yaml
    if yaml is None:
        return None
    item = next((i for i in yaml.supported if i.span == d.span), None)
    if item is None or item.text is None:
        return None
    line = item.span.start_line
    if lines[line].strip() not in (f"- {item.text}", f"-   {item.text}") and \
            not re.fullmatch(rf"\s*-\s+{re.escape(item.text)}\s*(#.*)?", lines[line]):
        return None  # not a block item on a line of its own (a flow list): no minimal edit
    title = f"Move '{item.text}' to autograd:"
    last_line = len(lines) - 1
    remove = (Span(line, 0, line + 1, 0) if line < last_line else Span(line - 1, len(lines[line - 1]), line,
                                                                        len(lines[line])))
    indent = lines[line][:lines[line].index("-")]
    if yaml.autograd:
        last = yaml.autograd[-1].span
        text = lines[last.start_line]
        if not re.match(r"\s*-", text):  # a flow list: append inside the brackets
            close = text.rfind("]")
            if close < 0:
                return None
            add = (Span.point(last.start_line, close), f", {item.text}")
        else:
            item_indent = text[:text.index("-")]
            add = (Span.point(last.end_line, len(lines[last.end_line])), f"\n{item_indent}- {item.text}")
    else:
        key = yaml.key_span("autograd")
        if key is not None:
            rest = lines[key.end_line][key.end_col:]
            if "[]" in rest:
                at = key.end_col + rest.index("[]") + 1
                add = (Span.point(key.end_line, at), item.text)
            else:
                add = (Span.point(key.end_line, len(lines[key.end_line])), f"\n{indent}- {item.text}")
        else:
            end = last_line
            while end > 0 and not lines[end].strip():
                end -= 1
            add = (Span.point(end, len(lines[end])), f"\nautograd:\n{indent}- {item.text}")
    if _overlaps(add[0], remove):
        return None
    return Fix(title, ((remove, ""), add), d, True)


def fixes(lines: Sequence[str], diagnostics: Sequence[Diagnostic], span: Span, *,
          native: Document | None = None, backend: BackendSnapshot | None = None) -> list[Fix]:
    """The fixes for the diagnostics that overlap `span`."""
    out: list[Fix] = []
    for d in diagnostics:
        if not _overlaps(d.span, span):
            continue
        out.extend(replace_fixes(lines, d))
        if d.code == "OPG122" and native is not None:
            tag = next((v for k, v in d.data if k == "add-tag"), NONDETERMINISTIC)
            fix = add_tag_fix(lines, native, d, tag)
            if fix is not None:
                out.append(fix)
        if d.code == "OPG521" and backend is not None:
            fix = move_to_autograd_fix(lines, backend, d)
            if fix is not None:
                out.append(fix)
    return out
