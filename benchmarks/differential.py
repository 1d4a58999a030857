"""What a user sees of real inputs, written to a folder, so two versions of the code can be compared with `diff -r`
(a refactoring changes no diagnostic, hover, explanation or generated file).

    PYTHONPATH=<checkout>/tools/typecheck python3 benchmarks/differential.py OUT 2.13.0=<ATen> 2.6.0=<ATen> ...

Each <ATen> is a packaged ATen folder (native/native_functions.yaml, native/tags.yaml, templates/), its autograd/
derivatives.yaml beside it. Per release, OUT/<release>/ gets:
- check.json: `opgen check --format json` of native_functions.yaml, tags.yaml and derivatives.yaml;
- hovers.txt: the hover (and the kernel declaration and parameters the kernel hover shows) at the start of every
  word of native_functions.yaml;
- explain.txt: every piece `opgen explain` shows of every op;
- generated.txt: each file `opgen generate` writes, with its sha256, and the command's exit status.

It runs with the code of either side of a move: the names that moved are looked up where each version keeps them.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

WORD = re.compile(r"\b\w")


def _first(*names: str) -> object:
    """The first attribute `module:name` that exists (the code before or after a move)."""
    for spec in names:
        module, _, attr = spec.partition(":")
        try:
            return getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError):
            continue
    raise LookupError(names)


def _hover() -> Callable:
    from opgen_lsp.analysis import hover

    if "generated" in inspect.signature(hover.hover).parameters:
        pieces = _first("opgen_lsp.lsp.features:generated_pieces")
        return lambda snapshot, tags, line, col: hover.hover(snapshot, tags, line, col, pieces)
    return hover.hover


def _opgen(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "opgen_lsp.cli", *args], capture_output=True, text=True)


def check(out: Path, version: str, aten: Path) -> None:
    native = aten / "native" / "native_functions.yaml"
    derivatives = aten.parent / "autograd" / "derivatives.yaml"
    found = _opgen("check", "--format", "json", "--torch-version", version, str(native), str(aten / "native" / "tags.yaml"))
    both = _opgen("check", "--format", "json", "--torch-version", version, "--native-functions", str(native),
                  str(derivatives))
    (out / "check.json").write_text(f"{found.returncode}\n{found.stdout}{found.stderr}\n"
                                    f"{both.returncode}\n{both.stdout}{both.stderr}", encoding="utf-8")


def hovers_and_explain(out: Path, version: str, aten: Path) -> None:
    from opgen_lsp.analysis import kernel_nav
    from opgen_lsp.index.native import TagsParser
    from opgen_lsp.releases import resolve

    load_native = _first("opgen_lsp.index.inputs:load_native", "opgen_lsp.codegen.inputs:load_native")
    declaration = _first("opgen_lsp.analysis.kernel_nav:kernel_declaration", "opgen_lsp.lsp.features:kernel_declaration")
    parameters = _first("opgen_lsp.analysis.kernel_nav:kernel_parameters", "opgen_lsp.lsp.features:kernel_parameters")
    explainer_class = _first("opgen_lsp.pieces.explain:Explainer", "opgen_lsp.codegen.explain:Explainer")
    native = aten / "native" / "native_functions.yaml"
    resolved = resolve(version, "differential")
    inputs = load_native(str(native), None, frozenset(), release=resolved.release)  # type: ignore[operator, union-attr]
    snapshot = inputs.snapshot
    tags = TagsParser().parse((aten / "native" / "tags.yaml").read_text(encoding="utf-8"))
    hover = _hover()
    lines = native.read_text(encoding="utf-8").splitlines()
    with open(out / "hovers.txt", "w", encoding="utf-8") as sink:
        for line, text in enumerate(lines):
            for match in WORD.finditer(text):
                col = match.start()
                found = hover(snapshot, tags, line, col)
                if found is not None:
                    sink.write(f"== {line}:{col} {found.span}\n{found.markdown}\n")
                ref = kernel_nav.kernel_at(snapshot, line, col)
                if ref is not None:
                    sink.write(f"-- kernel {line}:{col}\n{declaration(snapshot, ref)}\n"  # type: ignore[operator]
                               f"{parameters(snapshot, ref)}\n")  # type: ignore[operator]
    explainer = explainer_class(snapshot.functions, resolved.release)  # type: ignore[operator, union-attr]
    with open(out / "explain.txt", "w", encoding="utf-8") as sink:
        for name in explainer.names:
            for piece in explainer.explain(name):
                sink.write(f"== {name}: {piece.title} ({piece.file})\n{piece.code}\n")


def generated(out: Path, version: str, aten: Path) -> None:
    with tempfile.TemporaryDirectory() as folder:
        done = _opgen("generate", "-s", str(aten), "-d", folder, "--aoti-install-dir", os.path.join(folder, "aoti"),
                      "--torch-version", version, "-j", "1")
        rows = [f"exit {done.returncode}", done.stderr.replace(folder, "OUT")]
        for path in sorted(Path(folder).rglob("*")):
            if path.is_file():
                rows.append(f"{hashlib.sha256(path.read_bytes()).hexdigest()} {path.relative_to(folder)}")
    (out / "generated.txt").write_text("\n".join(rows) + "\n", encoding="utf-8")


def main(argv: list[str]) -> int:
    out = Path(argv[0])
    for pair in argv[1:]:
        version, _, aten = pair.partition("=")
        folder = out / version
        folder.mkdir(parents=True, exist_ok=True)
        for step in (check, hovers_and_explain, generated):
            step(folder, version, Path(aten))
            print(f"{version}: {step.__name__} done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
