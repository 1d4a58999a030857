"""A fresh clone is the project: README command 1 works in a clone with nothing beside it, and the suite
collects there and skips (not fails) what needs ../shared; from the machine's Python and from inside a virtual
environment alike.

The clone is of the committed HEAD, in a fresh folder (no ../shared), set up in a fresh virtual environment
(with the running interpreter's packages visible, so that pip needs no more than the build backend), by
tools/fresh_clone.py, which `.ci/run` also runs for README command 2 after the main suite (its install and
set-up as written, then the collection and the not-slow tests instead of a second full suite).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import textwrap
from pathlib import Path

import pytest
from conftest import ROOT
from repo_tools import load_tool

FRESH_CLONE = load_tool("fresh_clone")
readme_commands = FRESH_CLONE.readme_commands


def test_readme_has_the_two_commands() -> None:
    commands = readme_commands()
    assert commands[1].endswith("opgen check samples/") and "pip install -e ." in commands[1]
    assert "pytest" in commands[2]


def test_command_2_runs_its_setup_as_written_and_a_reduced_suite() -> None:
    """The README shows command 2 as users run it; the clone runs its install and set-up verbatim and, for its
    trailing full suite, the collection of every test and the not-slow tests (the full suite ran once already)."""
    command = readme_commands()[2]
    plan = FRESH_CLONE.steps(2, command)
    assert command.endswith(" && python3 -m pytest")
    assert plan == [(command.removesuffix(" && python3 -m pytest"), 0),
                    ("python3 -m pytest --collect-only -q", 0), ('python3 -m pytest -m "not slow"', 0)]
    assert "pip install -e '.[test,conformance]'" in plan[0][0] and "bash tools/setup_editors.sh" in plan[0][0]
    assert FRESH_CLONE.steps(2, command, collect_only=True) == plan[:2]
    assert FRESH_CLONE.steps(1, readme_commands()[1], collect_only=True) == [
        (readme_commands()[1], 1), ("python3 -m pytest --collect-only -q", 0)]
    assert FRESH_CLONE.steps(2, command + " tests/lsp") is None  # an unknown shape is refused, not guessed


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


@pytest.mark.slow
def test_readme_command_1_in_a_fresh_clone(clone, command_1) -> None:
    repo, env = clone
    assert not (repo.parent.parent / "shared").exists()
    # The samples carry deliberate mistakes: they are printed, and the status is 1 (as the README says).
    assert command_1.returncode == 1, command_1.stdout[-3000:] + command_1.stderr[-3000:]
    assert re.search(r"samples/native_functions\.yaml:\d+:\d+: error: .*\[OPG\d{3}\]", command_1.stdout), command_1.stdout
    assert FRESH_CLONE.imported_opgen(env).startswith(str(repo)), FRESH_CLONE.imported_opgen(env)


@pytest.mark.slow
def test_the_fresh_clone_sees_no_pytorch_trees(clone) -> None:
    """A fresh machine has none of a developer's real trees (docs/trees.md): their tests skip there."""
    _, env = clone
    trees = Path(env["OPGEN_PYTORCH_TREES"])
    assert trees.is_dir() and not any(trees.iterdir())


@pytest.mark.slow
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
    # (every corpus test skipped, none passed or failed; on several workers pytest-xdist leaves "deselected" out)
    assert re.search(r"^\d+ skipped(, \d+ deselected)? in ", corpus.stdout, re.M), corpus.stdout[-2000:]
    assert "the backend-yaml corpus is not beside this checkout" in corpus.stdout


def test_ci_runs_command_2_in_a_fresh_clone() -> None:
    """`.ci/run` runs README command 2's set-up in a fresh clone, then collects every test there and runs the
    not-slow ones, after its main suite (the full suite runs once per CI)."""
    steps = [line.split("#", 1)[0].strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert "python3 tools/fresh_clone.py 2" in steps
    assert steps.index("python3 tools/fresh_clone.py 2") > steps.index("python3 -m pytest")


# Run by a virtual environment's python: the clone's environment, command 1 and the collection there, and what the
# clone's environment imports (a module only the outer venv has, and opgen_lsp).
_IN_A_VENV = textwrap.dedent("""
    import json, subprocess, sys
    from pathlib import Path
    sys.path.insert(0, sys.argv[1])
    import fresh_clone
    repo, env = fresh_clone.fresh_clone(Path(sys.argv[2]))
    plan = fresh_clone.steps(1, fresh_clone.readme_commands()[1], collect_only=True)
    status = fresh_clone.run_steps(1, plan, repo, env)
    probe = subprocess.run(["python3", "-c", "import opgen_venv_probe"], env=env, cwd="/").returncode
    print(json.dumps({"status": status, "probe": probe, "repo": str(repo), "opgen": fresh_clone.imported_opgen(env)}))
""")


@pytest.mark.slow
def test_the_fresh_clone_check_passes_from_inside_a_virtual_environment(tmp_path) -> None:
    """README command 2 run inside a venv (how most people install Python tools): the clone's environment sees that
    venv's packages, not its base interpreter's. The outer venv has no system site packages; it sees this
    interpreter's through a .pth (a user's venv would have them installed) and has one module of its own."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: nothing to clone")
    outer = tmp_path / "outer-venv"
    FRESH_CLONE.venv_seeing_this_interpreter(outer)
    python = outer / "bin" / "python3"
    own = subprocess.run([str(python), "-c", "import site; print(site.getsitepackages()[0])"], check=True,
                         capture_output=True, text=True, timeout=120).stdout.strip()
    (Path(own) / "opgen_venv_probe.py").write_text("")
    top = tmp_path / "fresh"
    top.mkdir()
    done = subprocess.run([str(python), "-c", _IN_A_VENV, str(ROOT / "tools"), str(top)], capture_output=True,
                          text=True, timeout=1800, env={**os.environ, "VIRTUAL_ENV": str(outer)})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["probe"] == 0, "the clone's environment does not see the venv's own packages"
    assert report["status"] == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert report["opgen"].startswith(report["repo"]), report
