#!/usr/bin/env python3
"""lintrunner adapter for opgen: runs `opgen check --format json` and prints lintrunner's lint messages.

Each line of output is one JSON LintMessage (path, line, char, code, severity, name, original,
replacement, description), as lintrunner reads them: `code` is the linter's code (OPGEN by
default), `name` the diagnostic's (OPG104, ...), line and char are 1-based.

    [[linter]]
    code = 'OPGEN'
    include_patterns = ['aten/src/ATen/native/native_functions.yaml', 'aten/src/ATen/native/tags.yaml']
    command = ['python3', 'tools/lintrunner/opgen_linter.py', '--', '@{{PATHSFILE}}']
    init_command = ['python3', 'tools/lintrunner/opgen_linter.py', '--install', '--dry-run={{DRYRUN}}']

(docs/editors.md has the full snippet). Standard library only, so that it runs before opgen is
installed (the --install step installs it).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterable
from typing import Any

SEVERITY = {"error": "error", "warning": "warning", "information": "advice", "info": "advice",
            "hint": "advice", "note": "advice"}


def lint_message(path: str | None, line: int | None, char: int | None, code: str, severity: str,
                 name: str, description: str | None) -> dict[str, Any]:
    return {"path": path, "line": line, "char": char, "code": code, "severity": severity, "name": name,
            "original": None, "replacement": None, "description": description}


def opgen_command(explicit: str | None) -> list[str]:
    """The opgen to run: --opgen, else `opgen` on PATH, else this interpreter's `-m opgen_lsp.cli`."""
    if explicit:
        return shlex.split(explicit)
    found = shutil.which("opgen")
    if found:
        return [found]
    return [sys.executable, "-m", "opgen_lsp.cli"]


def to_messages(diagnostics: Iterable[dict[str, Any]], code: str) -> list[dict[str, Any]]:
    out = []
    for d in diagnostics:
        start = (d.get("range") or {}).get("start") or {}
        line = start.get("line")
        char = start.get("character")
        out.append(lint_message(
            d.get("path"),
            line + 1 if isinstance(line, int) else None,
            char + 1 if isinstance(char, int) else None,
            code,
            SEVERITY.get(str(d.get("severity", "error")).lower(), "error"),
            str(d.get("code") or "opgen"),
            d.get("message"),
        ))
    return out


def check(paths: list[str], args: argparse.Namespace) -> list[dict[str, Any]]:
    cmd = [*opgen_command(args.opgen), "check", "--format", "json"]
    if args.tags:
        cmd += ["--tags", args.tags]
    if args.native_functions:
        cmd += ["--native-functions", args.native_functions]
    for impl in args.impl_path:
        cmd += ["--impl-path", impl]
    cmd += paths
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    except (OSError, subprocess.TimeoutExpired) as error:
        return [lint_message(None, None, None, args.code, "error", "command-failed", f"{shlex.join(cmd)}: {error}")]
    # opgen check: 0 = clean, 1 = diagnostics found; anything else is a failure of the tool.
    if proc.returncode not in (0, 1):
        return [lint_message(None, None, None, args.code, "error", "command-failed",
                             f"{shlex.join(cmd)} exited with {proc.returncode}:\n{proc.stderr.strip() or proc.stdout.strip()}")]
    try:
        diagnostics = json.loads(proc.stdout or "[]")
    except json.JSONDecodeError as error:
        return [lint_message(None, None, None, args.code, "error", "command-failed",
                             f"{shlex.join(cmd)} printed no JSON ({error}):\n{proc.stdout[:2000]}")]
    return to_messages(diagnostics, args.code)


def install(dry_run: bool, requirement: str) -> int:
    cmd = [sys.executable, "-m", "pip", "install", requirement]
    if dry_run:
        print(f"would run: {shlex.join(cmd)}")
        return 0
    return subprocess.run(cmd).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], fromfile_prefix_chars="@")
    parser.add_argument("paths", nargs="*", help="files to check (lintrunner passes @PATHSFILE)")
    parser.add_argument("--code", default="OPGEN", help="the linter's code in .lintrunner.toml (default OPGEN)")
    parser.add_argument("--opgen", help="the opgen command (default: opgen on PATH, else python -m opgen_lsp.cli)")
    parser.add_argument("--tags", help="tags.yaml to check native_functions.yaml against")
    parser.add_argument("--native-functions", help="native_functions.yaml that backend yamls are checked against")
    parser.add_argument("--impl-path", action="append", default=[], help="a backend's C++ kernel file (repeatable)")
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--install", action="store_true", help="lintrunner init: pip install opgen")
    parser.add_argument("--dry-run", default="0", help="with --install: 1 prints the command only")
    parser.add_argument("--requirement", default=os.environ.get("OPGEN_REQUIREMENT", "opgen-lsp"),
                        help="what --install installs (default opgen-lsp, or $OPGEN_REQUIREMENT)")
    args = parser.parse_args(argv)
    if args.install:
        return install(args.dry_run not in ("0", "", "false", "False"), args.requirement)
    paths = [p for p in args.paths if p]
    if not paths:
        return 0
    for message in check(paths, args):
        print(json.dumps(message), flush=True)
    # lintrunner reads the messages; a non-zero status would mean the adapter itself failed.
    return 0


if __name__ == "__main__":
    sys.exit(main())
