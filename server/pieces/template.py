"""A code template: `$name` / `${name}` placeholders filled from an environment.

The substitution rules are the ones torchgen's generated files depend on:

- `$name` or `${name}` is replaced by the value's text.
- A placeholder that only has whitespace before it on its line ("block
  position") takes a list (or a single value) and writes each element's lines
  on their own line, every line indented like the placeholder, trailing
  whitespace removed from each line and from the end of the block (until
  torch 2.7: every line indented, empty ones too, and only the block's end
  stripped: `strip_lines=False`). Lines are broken on `\\n` only.
- Elsewhere a list is joined with ", "; `${,name}` puts ", " before a non-empty
  list and `${name,}` puts one after it; an empty list gives nothing.
- Anything else is written with str().
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import field

from ..frozen import record

# Optional leading whitespace on the line (block position), then `$ident`, `${ident}`, `${,ident}`, `${ident,}`.
_PLACEHOLDER = re.compile(r"(^[^\n\S]*)?\$([^\W\d]\w*|\{,?[^\W\d]\w*,?\})", re.MULTILINE)


class TemplateError(ValueError):
    """A placeholder has no value in the environment."""


def _lines(text: str) -> list[str]:
    """The lines of `text` split on `\\n` only (no trailing empty line, as str.splitlines): a C++ compiler breaks
    lines on LF and CR, never on U+2028, U+0085, VT or FF, so neither may the template (a name holding one must not
    become a line of C++ of its own)."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def _block(indent: str, value: object, strip_lines: bool) -> str:
    items = value if isinstance(value, list) else [value]
    lines: list[str] = []
    for item in items:
        lines.extend(_lines(str(item)))
    if not strip_lines:
        return "".join(f"{indent}{line}\n" for line in lines).rstrip()
    if indent:
        # Indentation goes on lines with content only (textwrap.indent semantics), then strip each line.
        return "\n".join([indent + text if (text := line.rstrip()) else "" for line in lines]).rstrip()
    return "\n".join([line.rstrip() for line in lines]).rstrip()


def _inline(value: object, before: str, after: str) -> str:
    if isinstance(value, list):
        if not value:
            return ""
        return before + ", ".join(str(v) for v in value) + after
    return str(value)


@record
class Template:
    text: str
    name: str = field(default="", compare=False)

    def substitute(self, env: Mapping[str, object], strip_lines: bool = True) -> str:
        literals, holes = _parsed(self.text)
        out = [literals[0]]
        for (indent, key, before, after), literal in zip(holes, literals[1:], strict=True):
            if key not in env:
                raise TemplateError(f"{self.name or 'template'}: no value for ${key}")
            value = env[key]
            out.append(_block(indent, value, strip_lines) if indent is not None else _inline(value, before, after))
            out.append(literal)
        return "".join(out)

    def placeholders(self) -> frozenset[str]:
        return frozenset(key for _, key, _, _ in _parsed(self.text)[1])


_Hole = tuple[str | None, str, str, str]  # block indent (None: inline), name, text before and after a list


@functools.lru_cache(maxsize=256)  # per template text: a run fills a few dozen templates, thousands of times
def _parsed(text: str) -> tuple[tuple[str, ...], tuple[_Hole, ...]]:
    """The text between the placeholders (one more than them) and each placeholder: scanned once per template,
    not once per file."""
    literals: list[str] = []
    holes: list[_Hole] = []
    end = 0
    for match in _PLACEHOLDER.finditer(text):
        literals.append(text[end:match.start()])
        end = match.end()
        key, before, after = match.group(2), "", ""
        if key.startswith("{"):
            key = key[1:-1]
            if key.startswith(","):
                before, key = ", ", key[1:]
            if key.endswith(","):
                after, key = ", ", key[:-1]
        holes.append((match.group(1), key, before, after))
    literals.append(text[end:])
    return tuple(literals), tuple(holes)
