"""PyTorch's format of native_functions.yaml: the round trip its NATIVEFUNCTIONS lint requires.

PyTorch's lint loads the file with ruamel.yaml (round-trip mode, quotes preserved, lines up to 1000
characters, booleans written False/True), dumps it again and, when the text differs, offers the dump as the
file's replacement (`lintrunner -a` applies it). Formatting here is that round trip, nothing more: what
ruamel keeps (comments, blank lines, most spacing) stays as written.

The comparison is on the text as Python reads a file (universal newlines), as the lint reads it; the
replacement ends lines with "\\n".

ruamel.yaml is imported on first use: `opgen check` never pays for it.
"""

from __future__ import annotations

import difflib
import io
from typing import Any

from ..diagnostics import Diagnostic, diag
from ..frozen import record
from ..text import Span

# What the lint calls the check; the diagnostic's message and the CLI's report name it.
LINT_NAME = "NATIVEFUNCTIONS"


@record
class LoadFailure:
    """ruamel could not read the text: the lint fails the file without a replacement."""

    message: str
    line: int | None  # 0-based, where ruamel says the problem is
    column: int | None


@record
class TextEdit:
    """Replace lines [start_line, end_line) of the old text by `new_text` (whole lines, each with its newline)."""

    start_line: int
    end_line: int
    new_text: str


def _yaml() -> Any:
    import ruamel.yaml  # imported here: loading ruamel costs every command that never formats

    yaml = ruamel.yaml.YAML()
    yaml.preserve_quotes = True
    yaml.width = 1000
    yaml.boolean_representation = ["False", "True"]  # type: ignore[attr-defined]  # the representer reads it off the YAML object
    return yaml


def normalize_newlines(text: str) -> str:
    """The text as `open(path).read()` gives it (universal newlines), which is what the lint compares."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def round_trip(text: str) -> str | LoadFailure:
    """The replacement the lint would offer for `text` (the text itself when it round-trips)."""
    yaml = _yaml()
    try:
        data = yaml.load(text)
    except Exception as err:  # the lint reports any failure of the load the same way, and so do we
        mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
        return LoadFailure(f"{type(err).__name__}: {err}", getattr(mark, "line", None), getattr(mark, "column", None))
    stream = io.StringIO()
    try:
        yaml.dump(data, stream)
    except Exception as err:  # a document ruamel reads but cannot write back: the lint would crash; we say so
        return LoadFailure(f"{type(err).__name__}: {err}", None, None)
    return stream.getvalue()


def first_difference(old: str, new: str) -> int:
    """The 0-based line of `old` where `new` first differs."""
    old_lines = old.splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    for line, (a, b) in enumerate(zip(old_lines, new_lines)):
        if a != b:
            return line
    return min(len(old_lines), len(new_lines))


def text_edits(old: str, new: str) -> tuple[TextEdit, ...]:
    """The fewest whole-line replacements that turn `old` into `new` (line-level diff)."""
    old_lines = old.splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    return tuple(TextEdit(i1, i2, "".join(new_lines[j1:j2]))
                 for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal")


def unified_diff(old: str, new: str, path: str) -> str:
    """`--diff`: what formatting would change, as a unified diff (as `ruff format --diff` prints it)."""
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        fromfile=path, tofile=path))


def _line_span(text: str, line: int) -> Span:
    lines = text.splitlines()
    width = len(lines[line]) if line < len(lines) else 0
    return Span(line, 0, line, width)


def format_diagnostic(text: str, formatted: str | LoadFailure) -> Diagnostic | None:
    """OPG009 at the first line the lint would change (or where ruamel stops reading), or None when it round-trips."""
    if isinstance(formatted, LoadFailure):
        line = formatted.line or 0
        return diag("OPG009", _line_span(text, line),
                    f"PyTorch's {LINT_NAME} lint cannot read this file with ruamel.yaml: {formatted.message}")
    current = normalize_newlines(text)
    if formatted == current:
        return None
    line = first_difference(current, formatted)
    return diag("OPG009", _line_span(text, line),
                f"the file does not round-trip through ruamel.yaml as PyTorch's {LINT_NAME} lint requires: "
                f"{len(text_edits(current, formatted))} place(s) would change, the first here "
                "(format the document, or run `opgen format`)")
