"""Emacs for real (emacs --batch -Q) with eglot and the configuration of docs/editors.md.

Checks the Flymake diagnostics of the samples' mistakes, eglot's ElDoc hover of a `func:` line (plain
text: without markdown-mode eglot takes no Markdown), and the documented opgen-generate command.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import editor_env, readme_mistakes, require
from .test_neovim import HOVER_COLUMN, HOVER_LINE, docs_config

pytestmark = [pytest.mark.editors, pytest.mark.slow]

# Debian's elpa-eglot (Emacs 28) lives here; `-Q` skips the site-start that would activate it.
DEBIAN_ELPA = "/usr/share/emacs/site-lisp/elpa"


def _emacs_with_eglot() -> str | None:
    emacs = shutil.which("emacs")
    if not emacs:
        return None
    probe = subprocess.run([emacs, "--batch", "-Q", "--eval", PRELUDE, "--eval", "(require 'eglot)"],
                           capture_output=True, text=True, timeout=60)
    return emacs if probe.returncode == 0 else None


PRELUDE = (f"(progn (when (file-directory-p \"{DEBIAN_ELPA}\")"
           f" (dolist (d (directory-files \"{DEBIAN_ELPA}\" t \"^[^.]\")) (add-to-list 'load-path d))))")


def test_emacs_eglot_diagnostics_hover_generate(workspace: Path, tmp_path: Path):
    emacs = require("Emacs with eglot (Debian's emacs-nox and elpa-eglot)", _emacs_with_eglot)
    config = tmp_path / "init.el"
    config.write_text(docs_config("elisp", "emacs-minimal") + docs_config("elisp", "emacs-config"), encoding="utf-8")
    out = tmp_path / "result.json"
    env = editor_env(OUT=str(out), HOVER_LINE=str(HOVER_LINE), HOVER_COLUMN=str(HOVER_COLUMN), HOME=str(tmp_path))
    proc = subprocess.run([emacs, "--batch", "-Q", "--eval", PRELUDE, "-l", str(config),
                           "-l", str(Path(__file__).with_name("emacs_e2e.el"))],
                          cwd=workspace, env=env, capture_output=True, text=True, timeout=600)
    assert out.exists(), f"emacs wrote no result ({proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    result = json.loads(out.read_text())
    assert not result.get("errors"), (result, proc.stderr[-3000:])

    assert result["mode"] == "opgen-yaml-mode"
    assert result["server"] == "opgen-lsp"
    got = sorted((d["file"], d["line"]) for d in result["diagnostics"])
    assert got == sorted((name, line) for name, line, _ in readme_mistakes()), result["diagnostics"]
    assert all(d["type"] == "eglot-error" for d in result["diagnostics"]), result["diagnostics"]

    # No markdown-mode here (emacs -Q, Debian's eglot only): the hover is plain text, not raw Markdown.
    hover = result["hover"]
    assert result["markdown_mode"] is False, result
    assert hover.startswith("aten::scale (functional"), hover
    assert "at::Tensor scale(const at::Tensor & self, const at::Scalar & factor);" in hover, hover
    assert not any(mark in hover for mark in ("```", "**", "`", "](command:")), hover
    # Emacs cannot run the VS Code extension's command: the hover names the CLI command that prints the same code.
    assert "Show generated code" not in hover, hover
    assert hover.rstrip().endswith(f"opgen explain scale --native-functions {workspace / 'native_functions.yaml'}"), \
        hover

    # Generated into the yaml's own folder: clean/ is the project root there, and the yaml is at its top.
    assert result["generate"], result.get("generate_reply")
    assert (workspace / "clean" / "build" / "Functions.h").is_file(), result
