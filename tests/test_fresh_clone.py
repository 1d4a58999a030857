"""A fresh clone is the project: README command 1 works in a clone with nothing beside it, and the suite
collects there and skips (not fails) what needs ../shared.

The clone is of the committed HEAD, in a fresh folder (no ../shared), set up in a fresh virtual environment
(with this interpreter's packages visible, so that pip needs no more than the build backend), by
tools/fresh_clone.py, which `.ci/run` also runs for README command 2 as a whole after the main suite (a
second full suite inside this one would double its time).
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT

pytestmark = [pytest.mark.slow]


def _fresh_clone_tool():
    spec = importlib.util.spec_from_file_location("fresh_clone", ROOT / "tools" / "fresh_clone.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FRESH_CLONE = _fresh_clone_tool()
readme_commands = FRESH_CLONE.readme_commands


def test_readme_has_the_two_commands() -> None:
    commands = readme_commands()
    assert commands[1].endswith("opgen check samples/") and "pip install -e ." in commands[1]
    assert "pytest" in commands[2]


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: nothing to clone")
    return FRESH_CLONE.fresh_clone(tmp_path_factory.mktemp("fresh"))


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
    assert FRESH_CLONE.imported_opgen(env).startswith(str(repo)), FRESH_CLONE.imported_opgen(env)


def test_the_fresh_clone_sees_no_pytorch_trees(clone) -> None:
    """A fresh machine has none of a developer's real trees (docs/trees.md): their tests skip there."""
    _, env = clone
    trees = Path(env["OPGEN_PYTORCH_TREES"])
    assert trees.is_dir() and not any(trees.iterdir())


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


def test_ci_runs_command_2_in_a_fresh_clone() -> None:
    """`.ci/run` runs README command 2 as a whole in a fresh clone, after its main suite."""
    steps = [line.split("#", 1)[0].strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert "python3 tools/fresh_clone.py 2" in steps
    assert steps.index("python3 tools/fresh_clone.py 2") > steps.index("python3 -m pytest")
