"""VS Code for real, on derivatives.yaml: the built .vsix in code-server, driven in Debian's chromium, on a
PyTorch-shaped tree. Checks the Problems panel (a misspelt argument, with its did-you-mean) and the hover of a
`name:` line (the schema and the autograd Node struct)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from autograd_tree import DERIVATIVES, write_tree

from .test_vscode import code_server, script_env, vsix  # noqa: F401  (the fixture, on this module's workspace)

pytestmark = [pytest.mark.editors, pytest.mark.slow]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "pytorch"
    write_tree(ws, DERIVATIVES.replace("  other: grad * self", "  othr: grad * self"))
    return ws


@pytest.fixture
def interpreter(bare_python: Path) -> tuple[dict, str]:
    """The server of the .vsix, run by a bare virtual environment's Python (test_vscode runs the other kinds)."""
    python = bare_python
    return {"opgen.server.pythonPath": str(python)}, f"(bundled copy, run by {python})"


def test_vscode_derivatives_problems_and_hover(code_server, workspace: Path, tmp_path: Path):  # noqa: F811
    out = tmp_path / "result.json"
    env = script_env(code_server[0], workspace, out, tmp_path / "shots")
    proc = subprocess.run(["node", str(Path(__file__).with_name("vscode_derivatives_e2e.mjs"))], env=env,
                          capture_output=True, text=True, timeout=600)
    assert out.exists(), proc.stdout + proc.stderr
    result = json.loads(out.read_text())
    assert not result["errors"], "\n".join(result["errors"])
    problems = " | ".join(result["problems"])
    assert "'othr' is neither an argument nor an output of mul.Tensor; did you mean 'other'?" in problems, problems
    assert "OPG711 [Ln 3, Col 3]" in problems, problems
    assert "mul.Tensor(Tensor self, Tensor other) -> Tensor" in result["hover"], result["hover"]
    assert "struct TORCH_API MulBackward0 : public TraceableFunction {" in result["hover"], result["hover"]
    assert "SavedVariable other_;" in result["hover"], result["hover"]
