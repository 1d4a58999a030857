"""PyTorch's NATIVEFUNCTIONS lint as its procedure is documented (tools/linter/adapters/nativefunctions_linter.py
in PyTorch), written out for the tests as the reference of `opgen format`: load the text with ruamel.yaml in
round-trip mode with preserve_quotes, width 1000 and booleans False/True, and dump it again.

Run as a script it is a batch of the reference cache (tests/reference.py's run_json):

    python nativefunctions_lint.py JOB.json

JOB is {"files": [NAME, ...], "out": FOLDER}: for each file NAME beside the job it writes into FOLDER/NAME the
bytes `lintrunner -a` leaves in the file, and prints {NAME: "fails" (the lint cannot load it, no replacement),
"same" or "rewritten"} as JSON. One process for every file of a test module: ruamel is imported once.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

ruamel_yaml = pytest.importorskip("ruamel.yaml")


def lint_dump(contents: str) -> str:
    """The lint's dump of `contents` (raises what ruamel raises when it cannot load it: the lint then fails)."""
    yaml = ruamel_yaml.YAML()
    yaml.preserve_quotes = True
    yaml.width = 1000
    yaml.boolean_representation = ["False", "True"]
    data = yaml.load(contents)
    stream = io.StringIO()
    yaml.dump(data, stream)
    return stream.getvalue()


def lint_replacement(path: Path) -> bytes | None:
    """The bytes `lintrunner -a` leaves in the file after the lint (None: the load fails)."""
    with open(path, encoding="utf-8") as f:
        contents = f.read()
    try:
        new_contents = lint_dump(contents)
    except Exception:
        return None
    return new_contents.encode("utf-8") if new_contents != contents else path.read_bytes()


def main(argv: list[str]) -> int:
    job_file = Path(argv[0])
    job = json.loads(job_file.read_text())
    out = Path(job["out"])
    out.mkdir(parents=True, exist_ok=True)
    outcomes = {}
    for name in job["files"]:
        path = job_file.parent / name
        replaced = lint_replacement(path)
        if replaced is None:
            outcomes[name] = "fails"
            continue
        (out / name).write_bytes(replaced)
        outcomes[name] = "same" if replaced == path.read_bytes() else "rewritten"
    json.dump(outcomes, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
