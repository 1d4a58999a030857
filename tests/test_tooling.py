"""The contributor's checks (CONTRIBUTING.md): CI and pre-commit run the same mypy and ruff commands, and ruff's
configuration in pyproject.toml selects the rule families it says."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
CHECKS = ["python3 -m mypy", "python3 -m ruff check"]


def _ci_commands() -> list[str]:
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def test_ci_runs_the_checks_before_the_tests() -> None:
    commands = _ci_commands()
    tests = commands.index("python3 -m pytest")
    assert all(commands.index(check) < tests for check in CHECKS)


def test_pre_commit_runs_what_ci_runs() -> None:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    hooks = [hook for repo in config["repos"] for hook in repo["hooks"]]
    assert all(repo["repo"] == "local" for repo in config["repos"])  # nothing to download
    assert [hook["entry"] for hook in hooks] == CHECKS
    assert all(hook["language"] == "system" and hook["pass_filenames"] is False for hook in hooks)


def test_pre_commit_accepts_the_config() -> None:
    if shutil.which("pre-commit") is None:
        pytest.skip("pre-commit is not installed (tools/setup_editors.sh installs it)")
    proc = subprocess.run(["pre-commit", "validate-config", ".pre-commit-config.yaml"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_checks_are_in_the_test_extra() -> None:
    import tomllib

    extra = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    names = {requirement.split(">")[0].split("=")[0] for requirement in extra["test"]}
    assert {"mypy", "ruff"} <= names


# One finding of each selected family; ruff must name every code (a family left out of `select` would be missing).
_PLANTED = '''\
import sys
import os
from typing import Callable


def f(x: int, seen: list = []) -> Callable[[], int]:
    if x == None:
        return lambda: 0
    return lambda: x
''' + "y = 1 \n"  # (written so, the trailing space is not this file's own)
_EXPECTED = {"F401", "I001", "UP035", "B006", "E711", "W291"}


def test_ruff_selects_the_rule_families(tmp_path: Path) -> None:
    pytest.importorskip("ruff", reason="ruff is in the test extra: pip install -e '.[test]'")
    planted = tmp_path / "planted.py"
    planted.write_text(_PLANTED, encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--config", str(ROOT / "pyproject.toml"),
                           "--no-cache", "--output-format", "json", str(planted)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert {finding["code"] for finding in json.loads(proc.stdout)} == _EXPECTED


@pytest.mark.slow
def test_the_checks_pass_with_the_test_extra_alone(tmp_path: Path) -> None:
    """CONTRIBUTING's pre-commit set-up installs `.[test]`, without torch: mypy and ruff pass there, in a fresh venv
    that sees nothing of this interpreter's packages (pip takes them from its cache where it can)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = project["dependencies"] + project["optional-dependencies"]["test"]
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = str(venv / "bin" / "python3")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    install = subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                              *requirements], capture_output=True, text=True, timeout=1800, env=env)
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    assert subprocess.run([python, "-c", "import torchgen"], capture_output=True, env=env).returncode != 0
    for check in (["-m", "mypy", "--cache-dir", str(tmp_path / "mypy-cache")], ["-m", "ruff", "check"]):
        done = subprocess.run([python, *check], cwd=ROOT, capture_output=True, text=True, timeout=900, env=env)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
