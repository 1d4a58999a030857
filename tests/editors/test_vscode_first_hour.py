"""VS Code for real, on what a newcomer meets first: the built .vsix in code-server, driven in Debian's chromium.

A code lens on a narrow window stays inside the editor (an op with five long dispatch keys: the title names the
first and counts the rest, the tooltip names all), and a failed Generate is an error notification with a "Show
output" action that opens the whole text, saying that it saved the edited document first. Screenshots:
vscode-lens-narrow.png, vscode-generate-error.png (kept with OPGEN_E2E_ARTIFACTS=DIR)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from .test_vscode import code_server, script_env, vsix  # noqa: F401  (the fixture, on this module's workspace)

pytestmark = [pytest.mark.editors, pytest.mark.slow]

WIDE_KEYS = ["CompositeExplicitAutograd", "NestedTensorCPU", "NestedTensorCUDA", "SparseCPU", "SparseCUDA"]
WIDE = ("- func: wide(Tensor self) -> Tensor\n  dispatch:\n"
        + "".join(f"    {key}: wide_{key.lower()}\n" for key in WIDE_KEYS))


@pytest.fixture
def workspace(workspace: Path) -> Path:
    """The editors' workspace (the samples, with their mistakes) and wide/: one op with five long kernel keys."""
    (workspace / "wide").mkdir()
    (workspace / "wide" / "native_functions.yaml").write_text(WIDE, encoding="utf-8")
    (workspace / "wide" / "tags.yaml").write_text("- tag: core\n  desc: core\n", encoding="utf-8")
    return workspace


@pytest.fixture
def interpreter(bare_python: Path) -> tuple[dict, str]:
    """The bundled server run by a bare venv's Python; no auto save (VS Code for the Web saves after a second by
    default): Generate must save the edit itself, and say so."""
    python = bare_python
    return {"opgen.server.pythonPath": str(python), "files.autoSave": "off"}, f"(bundled copy, run by {python})"


def test_vscode_narrow_lens_and_generate_error(code_server, workspace: Path, tmp_path: Path):  # noqa: F811
    out = tmp_path / "result.json"
    shots = tmp_path / "shots"
    env = script_env(code_server[0], workspace, out, shots, WIDE_FILE="wide/native_functions.yaml", WIDE_OP="wide")
    proc = subprocess.run(["node", str(Path(__file__).with_name("vscode_first_hour_e2e.mjs"))], env=env,
                          capture_output=True, text=True, timeout=900)
    keep = os.environ.get("OPGEN_E2E_ARTIFACTS")
    if keep:
        shutil.copytree(shots, Path(keep) / "vscode-first-hour", dirs_exist_ok=True)
    assert out.exists(), proc.stdout + proc.stderr
    result = json.loads(out.read_text())
    assert not result["errors"], "\n".join(result["errors"]) + "\n" + proc.stdout[-2000:]
    assert (shots / "vscode-lens-narrow.png").is_file() and (shots / "vscode-generate-error.png").is_file()

    # The lens of the wide op: short, inside the editor on a 760-pixel window; the whole list in its tooltip.
    kernels = next(lens for lens in result["lenses"] if lens["text"].startswith("kernels:"))
    assert kernels["text"] == "kernels: CompositeExplicitAutograd +4", result["lenses"]
    assert kernels["title"] == "implemented by " + ", ".join(WIDE_KEYS), result["lenses"]
    assert all(0 < lens["right"] <= result["editorRight"] for lens in result["lenses"]), result

    # Generate on the samples' yaml after an edit: saved first (said), then their mistakes: an error with an action.
    notification = result["notification"]  # the toast's text: its message, its source and its button
    assert "opgen: Generate failed: saved native_functions.yaml first (Generate reads the files on disk); " \
        in notification, notification
    assert "has 11 error(s), the first on line" in notification, notification
    assert result["notificationIsError"], notification
    assert "Show output" in result["actions"], result["actions"]
    assert "Generate failed" in result["output"] and "error" in result["output"], result["output"][-2000:]
