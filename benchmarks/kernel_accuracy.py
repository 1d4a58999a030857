"""How accurate the kernel index is on a real PyTorch source tree (issue 9's accuracy goal).

Two questions, on a checkout (or any folder holding aten/src/ATen/native, or the
native folder itself):

1. False "missing kernel" warnings: every kernel (and structured impl/meta function)
   that native_functions.yaml needs and the index does not find is listed. On a full
   checkout each one is either a real gap or a scanner miss; the goal is none.
   With --expect FILE (lines `kernel NAME`, `impl NAME` or `meta NAME`: what the
   sources are known to define, e.g. for a partial sample of files), only the expected
   ones that are reported count as false warnings, and kernels found that are not
   expected are listed too (something else taken for their definition would hide
   their deletion).
2. Deletions that go unreported (--delete-sample N): N kernel definitions the index
   found, each defined in one place only, are deleted one at a time in a temporary copy
   of the tree (the definition, or the macro invocation that expands to it, is blanked);
   after re-indexing that file the kernel must be reported missing.
3. With --generated-headers: torchgen's ATen/ops/*_native.h (the installed wheel's,
   about 1,300 real headers) declare every kernel a build registers; each must be found
   declared, and none taken for a definition.

    python3 benchmarks/kernel_accuracy.py ~/pytorch --delete-sample 200
    python3 benchmarks/kernel_accuracy.py /tmp/pytorch-sample --expect truth.txt --delete-sample 50

Exit status: 0 when no false warning and no unreported deletion, 1 otherwise, 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from opgen_lsp.analysis.kernels import Requirement, generated_view_copies, is_met, requirements
from opgen_lsp.index.kernels import KernelIndex, Located
from opgen_lsp.index.native import NativeParser, TagsParser
from opgen_lsp.syntax.cpp_scan import (DECLARATION, DEFINITION, IMPL, META, STRUCTURED_MACROS, blank_comments_and_literals,
                                      blank_preprocessor)

KIND_WORDS = {DEFINITION: "kernel", IMPL: "impl", META: "meta"}


def native_folder(checkout: Path) -> Path:
    inside = checkout / "aten" / "src" / "ATen" / "native"
    return inside if inside.is_dir() else checkout


def yaml_paths(native: Path, given: str | None) -> tuple[Path, Path]:
    """native_functions.yaml (given, else the tree's, else the installed torchgen's) and the tags.yaml beside it."""
    if given:
        path = Path(given)
    elif (native / "native_functions.yaml").is_file():
        path = native / "native_functions.yaml"
    else:
        import torchgen

        path = Path(torchgen.__file__).parent / "packaged" / "ATen" / "native" / "native_functions.yaml"
    return path, path.with_name("tags.yaml")


def load_needs(yaml_path: Path, tags_path: Path) -> list[Requirement]:
    tags = TagsParser().parse(tags_path.read_text()).names
    model = NativeParser().parse(yaml_path.read_text(), tags).functions
    return list(requirements(model, generated_view_copies(model)))


def wheel_ops_folder() -> Path:
    import torch

    return Path(torch.__file__).parent / "include" / "ATen" / "ops"


def label(need: Requirement) -> str:
    return f"{KIND_WORDS[need.kind]} {need.name}"


def read_expected(path: str) -> set[str]:
    lines = (line.split("#", 1)[0].strip() for line in Path(path).read_text().splitlines())
    return {" ".join(line.split()) for line in lines if line}


def definitions_of(index: KernelIndex, need: Requirement) -> list[Located]:
    """Where the index satisfies need (what a deletion must remove)."""
    hits = index.find(need.name, (need.kind,))
    return [h for h in hits if need.kind != DEFINITION or h.symbol.namespace == need.namespace]


# ---------------------------------------------------------------- deleting a definition

@dataclass(frozen=True, slots=True)
class Site:
    path: str
    line: int
    col: int


def _offset(text: str, line: int, col: int) -> int:
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    return starts[line] + col


def _matching(code: str, at: int, open_ch: str, close_ch: str) -> int:
    depth = 0
    for k in range(at, len(code)):
        if code[k] == open_ch:
            depth += 1
        elif code[k] == close_ch:
            depth -= 1
            if depth == 0:
                return k + 1
    return len(code)


def deletion_span(text: str, site: Site, name: str) -> tuple[int, int]:
    """The text to blank to delete what the index found at site: a whole definition (from the start of the
    line of its name, or the line before when the name starts its line, through its body), or the macro
    invocation that expands to it (with its ';')."""
    code = blank_preprocessor(blank_comments_and_literals(text))
    at = _offset(text, site.line, site.col)
    word = re.match(r"[A-Za-z_]\w*", code[at:])
    invoked = word is not None and word.group(0) != name and word.group(0) not in STRUCTURED_MACROS
    if invoked:  # a macro invocation: NAME(args) [;]
        open_at = code.index("(", at)
        end = _matching(code, open_at, "(", ")")
        rest = re.match(r"\s*;", code[end:])
        return at, end + (rest.end() if rest else 0)
    line_start = code.rfind("\n", 0, at) + 1
    if not code[line_start:at].strip():
        line_start = code.rfind("\n", 0, max(line_start - 1, 0)) + 1
    depth, k = 0, at
    while k < len(code):
        ch = code[k]
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif depth == 0 and ch == ";":
            return line_start, k + 1
        elif depth == 0 and ch == "{":
            return line_start, _matching(code, k, "{", "}")
        k += 1
    return line_start, len(code)


def blank(text: str, start: int, end: int) -> str:
    return text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]


def check_deletions(native: Path, index: KernelIndex, needs: list[Requirement], count: int,
                    seed: int) -> tuple[list[dict], int]:
    """Delete `count` singly-defined kernels one at a time in a copy of the tree; return those still found."""
    single = {}
    for need in needs:
        found = definitions_of(index, need)
        if len(found) == 1 and is_met(index, need):
            single.setdefault(label(need), (need, found[0]))
    chosen = random.Random(seed).sample(sorted(single), min(count, len(single)))
    failures: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="kernel-accuracy-") as tmp:
        copy = Path(tmp) / "native"
        shutil.copytree(native, copy)
        moved = KernelIndex.build([str(copy)])
        for key in chosen:
            need, hit = single[key]
            path = copy / os.path.relpath(hit.path, native)
            original = path.read_text(encoding="utf-8", errors="replace")
            start, end = deletion_span(original, Site(str(path), hit.symbol.line, hit.symbol.col), need.name)
            path.write_text(blank(original, start, end))
            moved.update(str(path))
            if is_met(moved, need):
                failures.append({"kernel": key, "file": os.path.relpath(hit.path, native),
                                 "line": hit.symbol.line + 1})
            path.write_text(original)
            moved.update(str(path))
    return failures, len(chosen)


# ---------------------------------------------------------------- generated declarations

def check_generated_headers(needs: list[Requirement], ops: Path) -> tuple[int, list[str], list[str]]:
    """Scan torch's generated ATen/ops/*_native.h (real declarations of every kernel a build registers):
    (kernels checked, kernels of the built dispatch keys not found declared, definitions found there,
    which declarations only must never be taken for)."""
    index = KernelIndex.build([str(ops)])
    plain = [n for n in needs if n.kind == DEFINITION]

    def declared(need: Requirement) -> bool:
        return any(h.symbol.namespace == need.namespace for h in index.find(need.name, (DECLARATION, DEFINITION)))

    # A Linux or Windows wheel is built without the MPS and XPU backends: their kernels are not declared.
    checked = [n for n in plain if not any(word in n.key.name for word in ("MPS", "XPU"))]
    undeclared = sorted({f"{n.key} {n.name}" for n in checked if not declared(n)})
    definitions = sorted({f"{h.path}:{h.symbol.line + 1} {name}" for name, hits in index.by_name.items()
                          for h in hits if h.symbol.kind == DEFINITION and h.path.endswith("_native.h")})
    return len({n.name for n in checked}), undeclared, definitions


# ---------------------------------------------------------------- main

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkout", help="a PyTorch checkout, or a folder holding aten/src/ATen/native")
    parser.add_argument("--native-functions", metavar="F",
                        help="native_functions.yaml (default: the tree's, else the installed torchgen's)")
    parser.add_argument("--expect", metavar="FILE",
                        help="what the sources define (`kernel NAME` / `impl NAME` / `meta NAME` lines); only "
                             "these count as false warnings")
    parser.add_argument("--delete-sample", type=int, default=0, metavar="N",
                        help="delete N random singly-defined kernels, one at a time, and check each is reported")
    parser.add_argument("--generated-headers", nargs="?", const="wheel", metavar="DIR",
                        help="also scan torchgen's ATen/ops/*_native.h (default: the installed torch's): every "
                             "kernel they declare must be found declared, and no definition found there")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", metavar="PATH", help="also write the results there")
    args = parser.parse_args()

    native = native_folder(Path(args.checkout))
    yaml_path, tags_path = yaml_paths(native, args.native_functions)
    if not native.is_dir() or not yaml_path.is_file() or not tags_path.is_file():
        print(f"not found: {native}, {yaml_path} or {tags_path}", file=sys.stderr)
        return 2
    needs = load_needs(yaml_path, tags_path)
    index = KernelIndex.build([str(native)])
    unmet = sorted({label(n) for n in needs if not is_met(index, n)})
    expected = read_expected(args.expect) if args.expect else None
    false_missing = sorted(set(unmet) & expected) if expected is not None else unmet
    met = sorted({label(n) for n in needs} - set(unmet))
    print(f"{len(index.files)} source files under {native}; {len({label(n) for n in needs})} kernels needed by "
          f"{yaml_path}; {len(met)} found, {len(unmet)} reported missing")
    false_found = sorted(set(met) - expected) if expected is not None else []
    if expected is not None:
        print(f"expected (defined by these sources): {len(expected)}; found {len(expected & set(met))}; "
              f"false missing-kernel warnings: {len(false_missing)}; found but not defined (a deletion of the "
              f"real definition would go unreported): {len(false_found)}")
    for item in false_missing:
        print(f"  missing: {item}")
    for item in false_found:
        print(f"  found, not defined: {item}")
    failures, tried = [], 0
    if args.delete_sample:
        failures, tried = check_deletions(native, index, needs, args.delete_sample, args.seed)
        print(f"deleted {tried} kernel definitions one at a time: {tried - len(failures)} reported, "
              f"{len(failures)} not")
        for f in failures:
            print(f"  still found after deletion: {f['kernel']} ({f['file']}:{f['line']})")
    undeclared: list[str] = []
    wrong_definitions: list[str] = []
    if args.generated_headers:
        ops = Path(args.generated_headers) if args.generated_headers != "wheel" else wheel_ops_folder()
        checked, undeclared, wrong_definitions = check_generated_headers(needs, ops)
        print(f"generated declarations ({ops}): {checked} kernels checked, {len(undeclared)} not found declared, "
              f"{len(wrong_definitions)} definitions found where there are only declarations")
        for item in undeclared + wrong_definitions:
            print(f"  {item}")
    if args.json:
        Path(args.json).write_text(json.dumps({"files": len(index.files), "needed": len(met) + len(unmet),
                                               "found": met, "reported_missing": unmet,
                                               "false_missing": false_missing, "false_found": false_found,
                                               "deleted": tried,
                                               "unreported_deletions": failures}, indent=1))
    return 1 if false_missing or false_found or failures or undeclared or wrong_definitions else 0


if __name__ == "__main__":
    sys.exit(main())
