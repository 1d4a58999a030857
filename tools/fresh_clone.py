#!/usr/bin/env python3
"""Run one of the README's "Two commands" in a fresh clone, as a new user would.

    python3 tools/fresh_clone.py 2 [--keep]     # .ci/run: README command 2, after the main suite

The committed HEAD is cloned into a new temporary folder with nothing beside it (no ../shared), a fresh
virtual environment is made and activated there (PATH and VIRTUAL_ENV; PYTHONPATH and CI unset, as in a
user's shell), and the command runs as the README writes it, in bash, from the clone's root, its output
streamed. The environment sees this interpreter's packages (--system-site-packages): pip installs the clone
(editable) and only what is still missing; the caches in the home folder (pip's, npm's, ~/.cache/opgen) are
used as a user's would be, but for the real PyTorch trees (~/.cache/opgen/trees, docs/trees.md): a developer's
extra inputs that a fresh machine has not, so OPGEN_PYTORCH_TREES names an empty folder and their tests skip, as
there (the main suite ran them already). OPGEN_SETUP_EDITORS=1 makes a missing editor a failure, not a skip (command 2's
own set-up installs them). Afterwards the clone's `opgen_lsp` must be the one its environment imports (else
the run tested another checkout's code).

Exit status: the command's (command 1 exits 1 on the samples' deliberate mistakes, as the README says);
2 when the README has no such command or the clone's environment imports another opgen_lsp.
Stdlib only.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
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


def fresh_clone(top: Path) -> tuple[Path, dict[str, str]]:
    """Clones this checkout's HEAD into top/opgen-lsp and makes top/venv; (the clone, its activated environment)."""
    repo = top / "opgen-lsp"
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, check=True, capture_output=True, text=True,
                          timeout=60).stdout.strip()
    subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(ROOT), str(repo)], check=True, timeout=300)
    subprocess.run(["git", "checkout", "--quiet", "--detach", head], cwd=repo, check=True, timeout=300)
    venv = top / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=300)
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("number", type=int, help="the README's command: 1 or 2")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (its path is printed)")
    args = parser.parse_args()
    command = readme_commands().get(args.number)
    if command is None:
        print(f"fresh_clone: the README's \"Two commands\" has no command {args.number}", file=sys.stderr)
        return 2
    top = Path(tempfile.mkdtemp(prefix="opgen-fresh-"))
    try:
        repo, env = fresh_clone(top)
        env["OPGEN_SETUP_EDITORS"] = "1"
        print(f"fresh_clone: README command {args.number} in {repo} (nothing beside it), venv {env['VIRTUAL_ENV']}:\n"
              f"  {command}", flush=True)
        start = time.monotonic()
        status = subprocess.run(["bash", "-c", command], check=False, cwd=repo, env=env).returncode
        took = time.monotonic() - start
        where = imported_opgen(env)
        if not where.startswith(str(repo) + os.sep):
            print(f"fresh_clone: the clone's environment imports opgen_lsp from {where or 'nowhere'}, not from {repo}",
                  file=sys.stderr)
            return 2
        print(f"fresh_clone: README command {args.number} exited {status} after {took / 60:.1f} min", flush=True)
        return status
    finally:
        if args.keep:
            print(f"fresh_clone: kept {top}")
        else:
            shutil.rmtree(top, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
