"""A fresh clone is the project: README command 1 works in a clone with nothing beside it, and the suite
collects there and skips (not fails) what needs ../shared.

The clone is of the committed HEAD, in a fresh folder (no ../shared), set up in a fresh virtual environment
(with this interpreter's packages visible, so that pip needs no more than the build backend).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

pytestmark = [pytest.mark.slow]


def readme_commands() -> dict[int, str]:
    """{1: command 1, 2: command 2} of the README's "Two commands" block (the line after each `# N.` comment)."""
    block = (ROOT / "README.md").read_text(encoding="utf-8").split("## Two commands", 1)[1].split("```sh", 1)[1]
    block = block.split("```", 1)[0]
    commands, number = {}, None
    for line in block.splitlines():
        heading = re.match(r"# (\d)\.", line)
        if heading:
            number = int(heading.group(1))
        elif line.strip() and not line.startswith("#") and number is not None:
            commands[number] = line.strip()
            number = None
    return commands


def test_readme_has_the_two_commands() -> None:
    commands = readme_commands()
    assert commands[1].endswith("opgen check samples/") and "pip install -e ." in commands[1]
    assert "pytest" in commands[2]


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: nothing to clone")
    top = tmp_path_factory.mktemp("fresh")
    repo = top / "opgen-lsp"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(repo)], check=True, timeout=300)
    venv = top / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=300)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CI", "VIRTUAL_ENV")}
    env["PATH"] = os.pathsep.join([str(venv / "bin"), env.get("PATH", "")])
    env["VIRTUAL_ENV"] = str(venv)
    return repo, env


@pytest.fixture(scope="module")
def command_1(clone) -> subprocess.CompletedProcess:
    repo, env = clone
    return subprocess.run(["bash", "-c", readme_commands()[1]], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=900)


def test_readme_command_1_in_a_fresh_clone(clone, command_1) -> None:
    repo, env = clone
    assert not (repo.parent.parent / "shared").exists()
    # The samples carry deliberate mistakes: they are printed, and the status is 1 (as the README says).
    assert command_1.returncode == 1, command_1.stdout[-3000:] + command_1.stderr[-3000:]
    assert re.search(r"samples/native_functions\.yaml:\d+:\d+: error: .*\[OPG\d{3}\]", command_1.stdout), command_1.stdout
    where = subprocess.run(["python3", "-c", "import opgen_lsp; print(opgen_lsp.__file__)"], cwd="/", env=env,
                           capture_output=True, text=True, timeout=60)
    assert where.stdout.strip().startswith(str(repo)), where.stdout + where.stderr


def test_the_suite_collects_and_skips_what_needs_shared(clone, command_1) -> None:
    """Command 2 in the clone, as far as it can run in a test: the whole suite collects, and the tests of
    ../shared/corpus skip with the one reason (the full suite there would double CI's time)."""
    repo, env = clone
    collected = subprocess.run(["python3", "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"], cwd=repo,
                               env=env, capture_output=True, text=True, timeout=900)
    assert collected.returncode == 0, collected.stdout[-3000:] + collected.stderr[-3000:]
    assert re.search(r"^\d+ tests collected", collected.stdout, re.M), collected.stdout[-1000:]
    corpus = subprocess.run(["python3", "-m", "pytest", "-q", "-m", "corpus", "-p", "no:cacheprovider"], cwd=repo,
                            env=env, capture_output=True, text=True, timeout=900)
    assert corpus.returncode == 0, corpus.stdout[-3000:] + corpus.stderr[-3000:]
    assert re.search(r"^\d+ skipped, \d+ deselected", corpus.stdout, re.M), corpus.stdout[-2000:]
    assert "the backend-yaml corpus is not beside this checkout" in corpus.stdout
