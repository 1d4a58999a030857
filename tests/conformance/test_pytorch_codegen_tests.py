"""PyTorch's own codegen tests, their inputs through opgen and through torchgen 2.13 (the installed reference).

The inputs of tools/test/test_codegen_model.py and tools/test/test_gen_backend_stubs.py of each real tree that
holds them (tests/real_trees.py; extract tools/test with the rest, docs/trees.md) are captured by running those
tests (pytorch_tests.py) and given, one at a time, to torchgen 2.13 (gen.py on the native yaml, as an ATen folder
with the reference's tags and templates; gen_backend_stubs on the backend yaml, with its kernel file when the
test gives one) and to `opgen check`: opgen errs iff torchgen fails, and for a native yaml has an error on the
entry torchgen names. Absent trees skip with the way to get them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import reference
from file_trees import aten_source
from real_trees import TREES, trees_folder

from opgen_lsp.cli import main

from .pytorch_tests import BACKEND, FILES, Captured, capture

pytestmark = pytest.mark.slow

_AT_LINE = re.compile(r"native_functions\.yaml:(\d+)")


def their_inputs(name: str) -> list[tuple[str, Captured]]:
    """(tree, input) for each distinct input the test file `name` of the trees present hands torchgen; skips
    when no tree holds the file."""
    files = [(tree, trees_folder() / tree / "tools" / "test" / name) for tree in sorted(TREES)]
    present = [(tree, path) for tree, path in files if path.is_file()]
    if not present:
        pytest.skip(f"no real tree in {trees_folder()} holds tools/test/{name}: extract tools/test of one "
                    f"({', '.join(r for r, _ in TREES.values())}) with the rest (`git -C CLONE archive HEAD aten c10 "
                    "torchgen tools/autograd tools/test version.txt | tar -x -C TREE`, docs/trees.md)")
    seen: dict[tuple[str, str, str | None], tuple[str, Captured]] = {}
    for tree, path in present:
        for item in capture(path):
            seen.setdefault((item.kind, item.text, item.impl), (tree, item))
    return list(seen.values())


def torchgen_fails(item: Captured, folder: Path, aten: Path) -> tuple[bool, str]:
    """Whether torchgen 2.13 fails on the input (and the end of what it said, its location included)."""
    if item.kind == BACKEND:
        source = folder / "backend.yaml"
        source.write_text(item.text, encoding="utf-8")
        args = ["torchgen.gen_backend_stubs", "-s", str(source), "-o", str(folder / "out")]
        if item.impl is not None:
            (folder / "impl.cpp").write_text(item.impl, encoding="utf-8")
            args += ["--impl-path", str(folder / "impl.cpp")]
    else:
        source = aten_source(folder / "ATen", aten, item.text)
        args = ["torchgen.gen", "-s", str(source), "-d", str(folder / "out" / "aten"),
                "--headeronly-install-dir", str(folder / "out" / "headeronly"),
                "--aoti-install-dir", str(folder / "out" / "aoti")]
    done = reference.run(["-m", *args], cwd=folder, outputs=[folder / "out"])
    return done.returncode != 0, " ".join(done.stderr.split()[-150:]) if done.returncode else ""


def opgen_errors(item: Captured, folder: Path, capsys) -> list[dict]:
    if item.kind == BACKEND:
        args = [str(folder / "backend.yaml")] + (["--impl-path", str(folder / "impl.cpp")] if item.impl else [])
    else:
        args = [str(folder / "ATen" / "native" / "native_functions.yaml")]
    capsys.readouterr()
    main(["check", *args, "--format", "json"])
    return [d for d in json.loads(capsys.readouterr().out) if d["severity"] == "error"]


@pytest.mark.parametrize("name", sorted(FILES))
def test_their_inputs_get_torchgens_verdict(name: str, aten: Path, tmp_path: Path, capsys) -> None:
    inputs = their_inputs(name)
    assert len(inputs) >= 5, "their tests hand torchgen yaml to check"
    disagreements = []
    for k, (tree, item) in enumerate(inputs):
        folder = tmp_path / f"{k}-{item.test}"
        folder.mkdir()
        fails, said = torchgen_fails(item, folder, aten)
        errors = opgen_errors(item, folder, capsys)
        where = f"{tree} {item.test}"
        if fails != bool(errors):
            disagreements.append(f"{where}: torchgen {said[-300:] or 'accepts'}; opgen {[d['code'] for d in errors]}")
            continue
        located = _AT_LINE.search(said)
        if located is not None:
            line = int(located.group(1)) - 1
            lines = item.text.split("\n")
            end = next((i for i in range(line + 1, len(lines)) if lines[i].startswith("- ")), len(lines))
            if not any(line <= d["range"]["start"]["line"] < end for d in errors):
                disagreements.append(f"{where}: torchgen names line {line + 1}; opgen does not ({errors})")
    print(f"{name}: {len(inputs)} distinct inputs of {len(TREES)} trees' tests, all agree")
    assert disagreements == [], "\n".join(disagreements)
