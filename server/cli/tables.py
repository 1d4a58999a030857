"""The tables `opgen upgrade` and `opgen coverage` print: plain text with aligned columns, and Markdown."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

REPORT_FORMATS = ("text", "json", "markdown")


def add_report_arguments(parser: argparse.ArgumentParser) -> None:
    """The backend yaml and --format of the report commands (upgrade, coverage)."""
    parser.add_argument("file", metavar="BACKEND_YAML", help="the backend yaml (backend:, supported:, autograd: ...)")
    parser.add_argument("--format", choices=REPORT_FORMATS, default="text", help="how to print the report")


def text_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Columns padded to their widest cell (the last one left as it is), a rule under the headers."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        padded = [c.ljust(w) for c, w in zip(cells[:-1], widths[:-1])] + [cells[-1]]
        return "  ".join(padded).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, rows)]) + "\n"


def _cell(text: str) -> str:
    """A Markdown table cell: code in backticks, a | escaped, lines joined with <br>."""
    if not text:
        return ""
    return "<br>".join(f"`{part}`" for part in text.replace("|", "\\|").splitlines())


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]], code_columns: frozenset[int]) -> str:
    """A GitHub-flavoured Markdown table; the cells of `code_columns` are shown as code."""
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for row in rows:
        cells = [_cell(c) if i in code_columns else c.replace("|", "\\|") for i, c in enumerate(row)]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"
