"""pre-commit (`.pre-commit-hooks.yaml`, run with `pre-commit try-repo`) and the lintrunner adapter
(tools/lintrunner/opgen_linter.py, alone on samples/ and under the real lintrunner with the
.lintrunner.toml snippet of docs/editors.md)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import PREFIX, ROOT, SAMPLES, editor_env, readme_mistakes, require
from .test_neovim import docs_config

ADAPTER = ROOT / "tools" / "lintrunner" / "opgen_linter.py"
KEYS = {"path", "line", "char", "code", "severity", "name", "original", "replacement", "description"}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t", *args], cwd=cwd, check=True,
                   capture_output=True)


def operator_repo(path: Path, clean: bool = False) -> Path:
    """A git repository laid out like PyTorch's, with the samples' native_functions.yaml and tags.yaml."""
    from .conftest import without_mistakes

    native = path / "aten" / "src" / "ATen" / "native"
    native.mkdir(parents=True)
    for name in ("native_functions.yaml", "tags.yaml"):
        text = (SAMPLES / name).read_text(encoding="utf-8")
        (native / name).write_text(without_mistakes(text) if clean else text, encoding="utf-8")
    git(path, "init", "-q")
    return path


def adapter_messages(*args: str, cwd: Path = ROOT) -> list[dict]:
    proc = subprocess.run([sys.executable, str(ADAPTER), *args], cwd=cwd, env=editor_env(),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


def test_adapter_prints_a_lint_message_per_mistake():
    messages = adapter_messages("samples/native_functions.yaml", "samples/tags.yaml")
    for m in messages:
        assert set(m) == KEYS
        assert m["code"] == "OPGEN" and m["severity"] == "error"
        assert isinstance(m["line"], int) and isinstance(m["char"], int) and m["char"] >= 1
        assert m["description"]
    got = sorted((Path(m["path"]).name, m["line"], m["name"]) for m in messages)
    assert got == sorted(readme_mistakes())


def test_adapter_reads_a_paths_file_and_is_quiet_on_clean_files(tmp_path: Path):
    repo = operator_repo(tmp_path / "clean", clean=True)
    paths = tmp_path / "paths.txt"
    paths.write_text("aten/src/ATen/native/native_functions.yaml\naten/src/ATen/native/tags.yaml\n")
    assert adapter_messages("--", f"@{paths}", cwd=repo) == []
    assert adapter_messages(cwd=repo) == []  # no paths: nothing to do


def test_adapter_reports_a_failing_opgen(tmp_path: Path):
    messages = adapter_messages("--opgen", f"{sys.executable} -c 'import sys; sys.exit(7)'", "x.yaml")
    assert len(messages) == 1
    assert messages[0]["name"] == "command-failed" and messages[0]["severity"] == "error"
    assert "exited with 7" in messages[0]["description"]


def test_adapter_install_dry_run():
    proc = subprocess.run([sys.executable, str(ADAPTER), "--install", "--dry-run=1"], capture_output=True, text=True)
    assert proc.returncode == 0
    assert "pip install opgen-lsp" in proc.stdout


@pytest.mark.editors
@pytest.mark.slow
def test_lintrunner_with_the_documented_config(tmp_path: Path):
    lintrunner = require("lintrunner (PyPI lintrunner)", lambda: shutil.which("lintrunner", path=editor_env()["PATH"]))
    repo = operator_repo(tmp_path / "pytorch")
    (repo / "tools" / "lintrunner").mkdir(parents=True)
    shutil.copy(ADAPTER, repo / "tools" / "lintrunner" / "opgen_linter.py")
    (repo / ".lintrunner.toml").write_text(docs_config("toml", "lintrunner-config"), encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    env = editor_env(OPGEN_REQUIREMENT=str(ROOT))
    data = tmp_path / "lintrunner-data"
    init = subprocess.run([str(lintrunner), "--data-path", str(data), "init", "--dry-run"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=300)
    assert init.returncode == 0, init.stdout + init.stderr
    proc = subprocess.run([str(lintrunner), "--data-path", str(data), "--all-files", "--output", "json"],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=300)
    messages = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert proc.returncode == 1, proc.stdout + proc.stderr  # lint errors found
    got = sorted((Path(m["path"]).name, m["line"], m["name"]) for m in messages)
    assert got == sorted(readme_mistakes()), proc.stdout + proc.stderr
    assert {m["code"] for m in messages} == {"OPGEN"}


@pytest.mark.editors
@pytest.mark.slow
def test_pre_commit_try_repo(tmp_path: Path):
    require("pre-commit (PyPI pre-commit)", lambda: shutil.which("pre-commit", path=editor_env()["PATH"]))
    assert "opgen-check" in docs_config("yaml", "pre-commit-config")
    # The hook repository is a git clone of this work tree's HEAD plus its uncommitted changes
    # (try-repo snapshots them); its environment is cached between runs.
    env = editor_env(PRE_COMMIT_HOME=str(PREFIX / "pre-commit-cache"))
    broken = operator_repo(tmp_path / "broken")
    git(broken, "add", "-A")
    proc = subprocess.run(["pre-commit", "try-repo", str(ROOT), "opgen-check", "--all-files"], cwd=broken, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    for _name, _line, code in readme_mistakes():
        assert code in proc.stdout, proc.stdout
    assert "opgen check (PyTorch operator yaml)" in proc.stdout and "Failed" in proc.stdout

    clean = operator_repo(tmp_path / "clean", clean=True)
    git(clean, "add", "-A")
    proc = subprocess.run(["pre-commit", "try-repo", str(ROOT), "opgen-check", "--all-files"], cwd=clean, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Passed" in proc.stdout
