#!/usr/bin/env python3
"""Run one of the README's "Two commands" in a fresh clone, as a new user would.

    python3 tools/fresh_clone.py 2 [--keep]                 # .ci/run: README command 2, after the main suite
    python3 tools/fresh_clone.py 1 --collect-only [--keep]  # command 1, then the suite's collection

The committed HEAD is cloned into a new temporary folder with nothing beside it (no ../shared), a fresh
virtual environment is made and activated there (PATH and VIRTUAL_ENV; PYTHONPATH and CI unset, as in a
user's shell), and the command runs as the README writes it, in bash, from the clone's root, its output
streamed.

The environment sees the packages of the interpreter that runs this tool, whether that is the machine's
Python or a virtual environment's (its site-packages folders are added to the new one's, .pth files and all,
after the new one's own: what --system-site-packages gives for the machine's Python, which inside a venv would
see the base interpreter's packages instead of the venv's). So pip installs the clone (editable) and only what
is still missing; the caches in the home folder (pip's, npm's, ~/.cache/opgen) are used as a user's would be,
but for the real PyTorch trees (~/.cache/opgen/trees, docs/trees.md): a developer's extra inputs that a fresh
machine has not, so OPGEN_PYTORCH_TREES names an empty folder and their tests skip, as there.
OPGEN_SETUP_EDITORS=1 makes a missing editor a failure, not a skip (command 2's own set-up installs them).

The suite runs once per CI (the first pytest of .ci/run); the clone proves that it needs nothing beside it at a
fraction of that cost. So command 2's install and set-up run as written, and its trailing `python3 -m pytest`
becomes two runs: `python3 -m pytest --collect-only -q` (every test module imports and every test collects)
and `python3 -m pytest -m "not slow"` (the quick tests pass there). With --collect-only, only the collection
runs (after command 1, which has no pytest of its own, it is added). Afterwards the clone's `opgen_lsp` must be
the one its environment imports (else the run tested another checkout's code).

Exit status: 0 when each step exits as the README says (command 1: 1, for the samples' deliberate mistakes;
every other step 0), else the first unexpected step's status; 2 when the README has no such command, command 2
no longer ends with `python3 -m pytest`, or the clone's environment imports another opgen_lsp.
Stdlib only.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import site
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def readme_commands(readme: Path = ROOT / "README.md") -> dict[int, str]:
    """{1: command 1, 2: command 2} of the README's "Two commands" block (the line after each `# N.` comment)."""
    block = readme.read_text(encoding="utf-8").split("## Two commands", 1)[1].split("```sh", 1)[1]
    commands: dict[int, str] = {}
    number = None
    for line in block.split("```", 1)[0].splitlines():
        heading = re.match(r"# (\d)\.", line)
        if heading:
            number = int(heading.group(1))
        elif line.strip() and not line.startswith("#") and number is not None:
            commands[number] = line.strip()
            number = None
    return commands


FULL_SUITE = "python3 -m pytest"
COLLECT = "python3 -m pytest --collect-only -q"
NOT_SLOW = 'python3 -m pytest -m "not slow"'


def steps(number: int, command: str, collect_only: bool = False) -> list[tuple[str, int]] | None:
    """(step, the status it should exit with) for README command `number` in a clone: its install and set-up as
    written, its trailing full suite replaced by the collection and the not-slow tests (only the collection with
    collect_only; command 1 has no pytest, so collect_only adds it). None when command 2 no longer ends with the
    full suite (this tool would not know what to run instead)."""
    if number == 1:
        return [(command, 1)] + ([(COLLECT, 0)] if collect_only else [])
    if not command.endswith(" && " + FULL_SUITE):
        return None
    setup = command[: -len(" && " + FULL_SUITE)]
    return [(setup, 0), (COLLECT, 0)] + ([] if collect_only else [(NOT_SLOW, 0)])


def site_folders() -> list[str]:
    """The site-packages folders of the interpreter running this (a venv's own, and the base's when the venv
    includes them; the user's when it is enabled): what the fresh environment is to see besides its own."""
    folders = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        folders.append(site.getusersitepackages())
    return [f for f in folders if os.path.isdir(f)]


def venv_seeing_this_interpreter(venv: Path) -> Path:
    """A new virtual environment that sees this interpreter's packages after its own (what --system-site-packages
    gives for the machine's Python, also from inside a venv); its site-packages folder."""
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    own = subprocess.run([str(venv / "bin" / "python3"), "-c", "import site; print(site.getsitepackages()[0])"],
                         check=True, capture_output=True, text=True, timeout=120).stdout.strip()
    # Processed after the venv's own .pth files (an editable install there comes first), these folders' .pth too;
    # but not in pip's isolated build environments (pip-build-env-*, on sys.path before any .pth runs), which
    # would otherwise build with these folders' setuptools (a venv's own is often too old for pyproject.toml).
    # (One line, run by exec inside site.addpackage: no comprehension, whose scope would not see `site`.)
    line = (f"import sys, site; any('pip-build-env-' in p for p in sys.path) or "
            f"list(map(site.addsitedir, {site_folders()!r}))\n")
    (Path(own) / "zz_running_interpreter.pth").write_text(line, encoding="utf-8")
    return Path(own)


def fresh_clone(top: Path) -> tuple[Path, dict[str, str]]:
    """Clones this checkout's HEAD into top/opgen-lsp and makes top/venv, which sees this interpreter's packages
    after its own; (the clone, its activated environment)."""
    repo = top / "opgen-lsp"
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, check=True, capture_output=True, text=True,
                          timeout=60).stdout.strip()
    subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(ROOT), str(repo)], check=True, timeout=300)
    subprocess.run(["git", "checkout", "--quiet", "--detach", head], cwd=repo, check=True, timeout=300)
    venv = top / "venv"
    venv_seeing_this_interpreter(venv)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CI", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = os.pathsep.join([str(venv / "bin"), env.get("PATH", "")])
    env["VIRTUAL_ENV"] = str(venv)
    no_trees = top / "no-pytorch-trees"
    no_trees.mkdir()
    env["OPGEN_PYTORCH_TREES"] = str(no_trees)
    return repo, env


def imported_opgen(env: dict[str, str]) -> str:
    """Where the environment's python3 imports opgen_lsp from (empty when it does not)."""
    done = subprocess.run(["python3", "-c", "import opgen_lsp; print(opgen_lsp.__file__)"], check=False, cwd="/",
                          env=env, capture_output=True, text=True, timeout=120)
    return done.stdout.strip() if done.returncode == 0 else ""


def run_steps(number: int, plan: list[tuple[str, int]], repo: Path, env: dict[str, str]) -> int:
    """Each step in bash from the clone's root, its output streamed; 0, else the first unexpected status."""
    for step, expected in plan:
        print(f"fresh_clone: README command {number} in {repo} (nothing beside it), venv {env['VIRTUAL_ENV']}:\n"
              f"  {step}", flush=True)
        start = time.monotonic()
        status = subprocess.run(["bash", "-c", step], check=False, cwd=repo, env=env).returncode
        print(f"fresh_clone: exited {status} (expected {expected}) after {(time.monotonic() - start) / 60:.1f} min",
              flush=True)
        if status != expected:
            return status or 1
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("number", type=int, help="the README's command: 1 or 2")
    parser.add_argument("--collect-only", action="store_true",
                        help="of the suite, only its collection (command 2's install and set-up still run)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (its path is printed)")
    args = parser.parse_args()
    command = readme_commands().get(args.number)
    if command is None:
        print(f"fresh_clone: the README's \"Two commands\" has no command {args.number}", file=sys.stderr)
        return 2
    plan = steps(args.number, command, args.collect_only)
    if plan is None:
        print(f"fresh_clone: README command {args.number} no longer ends with `{FULL_SUITE}`: {command}",
              file=sys.stderr)
        return 2
    top = Path(tempfile.mkdtemp(prefix="opgen-fresh-"))
    try:
        repo, env = fresh_clone(top)
        env["OPGEN_SETUP_EDITORS"] = "1"
        status = run_steps(args.number, plan, repo, env)
        where = imported_opgen(env)
        if not where.startswith(str(repo) + os.sep):
            print(f"fresh_clone: the clone's environment imports opgen_lsp from {where or 'nowhere'}, not from {repo}",
                  file=sys.stderr)
            return 2
        return status
    finally:
        if args.keep:
            print(f"fresh_clone: kept {top}")
        else:
            shutil.rmtree(top, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
