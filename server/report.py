"""Render diagnostics for people and tools: text, JSON, GitHub annotations, SARIF 2.1.0."""

from __future__ import annotations

from collections.abc import Sequence

from . import __version__
from .diagnostics import CODES, MAX_DIAGNOSTICS_PER_FILE, Diagnostic, Severity, cap_diagnostics
from .frozen import record


@record
class FileDiagnostic:
    path: str
    diagnostic: Diagnostic


def capped_per_file(items: list[FileDiagnostic]) -> list[FileDiagnostic]:
    """At most MAX_DIAGNOSTICS_PER_FILE diagnostics of each file and one that counts the rest (files in order)."""
    by_path: dict[str, list[Diagnostic]] = {}
    for item in items:
        by_path.setdefault(item.path, []).append(item.diagnostic)
    if all(len(ds) <= MAX_DIAGNOSTICS_PER_FILE for ds in by_path.values()):
        return items
    return [FileDiagnostic(path, d) for path, ds in by_path.items() for d in cap_diagnostics(ds)]


def render_text(items: list[FileDiagnostic]) -> str:
    lines = []
    for item in items:
        d = item.diagnostic
        lines.append(f"{item.path}:{d.span.start_line + 1}:{d.span.start_col + 1}: "
                     f"{d.severity.label}: {d.message} [{d.code}]")
    return "".join(line + "\n" for line in lines)


def _lsp_range(d: Diagnostic) -> dict:
    s = d.span
    return {"start": {"line": s.start_line, "character": s.start_col},
            "end": {"line": s.end_line, "character": s.end_col}}


def render_json(items: list[FileDiagnostic]) -> str:
    out = [{"path": i.path, "range": _lsp_range(i.diagnostic), "severity": i.diagnostic.severity.label,
            "code": i.diagnostic.code, "message": i.diagnostic.message} for i in items]
    import json  # noqa: PLC0415  (--format json only: not the text report's start-up)

    return json.dumps(out, indent=2) + "\n"


_GITHUB_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFORMATION: "notice",
                 Severity.HINT: "notice"}


def _github_escape(text: str, *, property_value: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if property_value:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def render_github(items: list[FileDiagnostic]) -> str:
    lines = []
    for item in items:
        d = item.diagnostic
        s = d.span
        props = (f"file={_github_escape(item.path, property_value=True)},line={s.start_line + 1},"
                 f"col={s.start_col + 1},endLine={s.end_line + 1},endColumn={s.end_col + 1},"
                 f"title={_github_escape(d.code, property_value=True)}")
        lines.append(f"::{_GITHUB_LEVEL[d.severity]} {props}::{_github_escape(d.message)}")
    return "".join(line + "\n" for line in lines)


_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFORMATION: "note",
                Severity.HINT: "note"}


def render_sarif(items: list[FileDiagnostic]) -> str:
    used = sorted({i.diagnostic.code for i in items})
    rules = [{"id": c, "name": CODES[c].name, "shortDescription": {"text": CODES[c].summary},
              "defaultConfiguration": {"level": _SARIF_LEVEL[CODES[c].severity]}} for c in used if c in CODES]
    results = []
    for item in items:
        d = item.diagnostic
        s = d.span
        results.append({
            "ruleId": d.code,
            "level": _SARIF_LEVEL[d.severity],
            "message": {"text": d.message},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": item.path},
                "region": {"startLine": s.start_line + 1, "startColumn": s.start_col + 1,
                           "endLine": s.end_line + 1, "endColumn": s.end_col + 1},
            }}],
        })
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "opgen", "version": __version__, "rules": rules}},
                  "results": results}],
    }
    import json  # noqa: PLC0415  (--format sarif only)

    return json.dumps(log, indent=2) + "\n"


def _counted(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def summary_line(items: list[FileDiagnostic], files: int, releases: Sequence[str] = ()) -> str:
    """The closing line of a text report, as linters print it: `2 errors, 1 warning in 3 files`, or
    `no problems in 3 files` (information and hints are counted only when there are some), and the torch
    releases the files were checked as (`, checked as torch 2.15 (from its content)`)."""
    where = f" in {_counted(files, 'file')}" + (f", checked as {' and '.join(releases)}" if releases else "")
    if not items:
        return "no problems" + where + "\n"
    count = {severity: 0 for severity in Severity}
    for item in items:
        d = item.diagnostic
        if d.code == "OPG008":  # "N more": count what it stands for (the rest of a capped list), not itself
            hidden = dict(d.data)
            count[Severity.ERROR] += int(hidden["hidden_errors"])
            count[Severity.WARNING] += int(hidden["hidden"]) - int(hidden["hidden_errors"])
        else:
            count[d.severity] += 1
    parts = [_counted(count[Severity.ERROR], "error"), _counted(count[Severity.WARNING], "warning")]
    notes = count[Severity.INFORMATION] + count[Severity.HINT]
    if notes:
        parts.append(_counted(notes, "note"))
    return ", ".join(parts) + where + "\n"


RENDERERS = {"text": render_text, "json": render_json, "github": render_github, "sarif": render_sarif}
