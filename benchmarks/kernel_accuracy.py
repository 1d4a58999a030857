"""How accurate the kernel index is on a real PyTorch source tree (issues 9 and 18).

Three questions, on a checkout (or any folder holding aten/src/ATen, or a folder of sources):

1. False "missing kernel" warnings: every kernel (and structured impl/meta function)
   that native_functions.yaml needs and the index does not find is listed. On a full
   checkout each one is either a real gap or a scanner miss; the goal is none.
   With --expect FILE (lines `kernel NAME`, `impl NAME` or `meta NAME`: what the
   sources are known to define, e.g. for a partial sample of files), only the expected
   ones that are reported count as false warnings, and kernels found that are not
   expected are listed too (something else taken for their definition would hide
   their deletion).
2. Deletions and renames that go unreported (--delete-sample N): N definitions the index
   found are deleted or renamed one at a time in a temporary copy of the tree (a definition
   is blanked or its name changed; a macro invocation that expands to it is blanked;
   TORCH_IMPL_FUNC(name) gets another name), a third each of three sorts as far as there
   are enough: a kernel's only definition, the only one of its name; a kernel's definition
   beside other ops' C++ overloads of the same name (a kernel is a name and its parameter
   types here); one of a kernel's definitions in each branch of an #if/#else (#elif).
   After re-indexing that file the kernel must be reported missing (OPG600, or OPG602 for
   a branch), and nothing else that is still defined.
3. With --generated-headers: torchgen's ATen/ops/*_native.h (the installed wheel's,
   about 1,300 real headers) declare every kernel a build registers; each must be found
   declared, and none taken for a definition.

    python3 benchmarks/kernel_accuracy.py ~/pytorch --delete-sample 200
    python3 benchmarks/kernel_accuracy.py --delete-sample 200      # each tree in $OPGEN_PYTORCH_TREES
    python3 benchmarks/kernel_accuracy.py /tmp/pytorch-sample --expect truth.txt --delete-sample 50

Without a tree named, every folder in $OPGEN_PYTORCH_TREES (default ~/.cache/opgen/trees) is
measured; docs/kernels.md says how to get the three trees the project measures on.
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

from opgen_lsp.analysis.kernels import Requirement, branch_gap, generated_view_copies, is_met, requirements, serving_definitions
from opgen_lsp.index.kernels import ATEN, KernelIndex, Located
from opgen_lsp.index.native import NativeParser, TagsParser
from opgen_lsp.pieces.dest.native_declarations import kernel_parameter_types
from opgen_lsp.releases import DEFAULT
from opgen_lsp.syntax.cpp_scan import (
    DECLARATION,
    DEFINITION,
    IMPL,
    META,
    STRUCTURED_MACROS,
    blank_comments_and_literals,
    blank_preprocessor,
)

KIND_WORDS = {DEFINITION: "kernel", IMPL: "impl", META: "meta"}
# What a deletion sample takes out: a need's only definition; a need's one definition beside other ops' overloads
# of the same name; one of a need's definitions in each branch of an #if/#else (#elif).
SINGLE, OVERLOAD, BRANCH = "single", "overload", "branch"
NATIVE = os.path.join(ATEN, "native")


def trees_folder() -> Path:
    """Where the real trees are kept: $OPGEN_PYTORCH_TREES, else ~/.cache/opgen/trees."""
    return Path(os.environ.get("OPGEN_PYTORCH_TREES") or Path.home() / ".cache" / "opgen" / "trees")


def known_trees() -> list[Path]:
    folder = trees_folder()
    return sorted(p for p in folder.iterdir() if (p / NATIVE).is_dir()) if folder.is_dir() else []


def native_folder(tree: Path) -> Path:
    inside = tree / NATIVE
    return inside if inside.is_dir() else tree


def yaml_paths(tree: Path, given: str | None) -> tuple[Path, Path]:
    """native_functions.yaml (given, else the tree's, else the installed torchgen's) and the tags.yaml beside it."""
    native = native_folder(tree)
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
    model = NativeParser(release=DEFAULT).parse(yaml_path.read_text(), tags).functions
    return list(requirements(model, generated_view_copies(model),
                             lambda f, b: kernel_parameter_types(f, b, DEFAULT.cpp_spelling)))


def wheel_ops_folder() -> Path:
    import torch

    return Path(torch.__file__).parent / "include" / "ATen" / "ops"


def label(need: Requirement) -> str:
    """What a need is called here: its kind and name, and a plain kernel's parameter types (the overloads of a
    name are several kernels)."""
    params = f"({need.params})" if need.kind == DEFINITION and need.params is not None else ""
    return f"{KIND_WORDS[need.kind]} {need.name}{params}"


def bare(label: str) -> str:
    """A label without its parameter types: the `kernel NAME` of an --expect file."""
    return label.split("(", 1)[0]


def read_expected(path: str) -> set[str]:
    lines = (line.split("#", 1)[0].strip() for line in Path(path).read_text().splitlines())
    return {" ".join(line.split()) for line in lines if line}


def definitions_of(index: KernelIndex, need: Requirement) -> list[Located]:
    """Where the index satisfies need (what a deletion must remove): a plain kernel's definitions with its
    parameter types (not the other overloads of its name)."""
    return serving_definitions(index, need) if need.kind == DEFINITION else index.find(need.name, (need.kind,))


def unmet(index: KernelIndex, needs: list[Requirement]) -> set[str]:
    return {label(n) for n in needs if not is_met(index, n)}


# ---------------------------------------------------------------- deleting or renaming a definition

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


def _code_and_word(text: str, site: Site) -> tuple[str, int, str]:
    code = blank_preprocessor(blank_comments_and_literals(text))
    at = _offset(text, site.line, site.col)
    word = re.match(r"[A-Za-z_]\w*", code[at:])
    return code, at, word.group(0) if word else ""


def deletion_span(text: str, site: Site, name: str) -> tuple[int, int]:
    """The text to blank to delete what the index found at site: a whole definition (from the start of the
    line of its name, or the line before when the name starts its line, through its body), or the macro
    invocation that expands to it (with its ';')."""
    code, at, word = _code_and_word(text, site)
    invoked = word != name and word not in STRUCTURED_MACROS
    if invoked:  # a macro invocation: NAME(args) [;], with a `static` or `inline` before it (left alone, it
        # would bind to the function after it)
        open_at = code.index("(", at)
        end = _matching(code, open_at, "(", ")")
        rest = re.match(r"\s*;", code[end:])
        specifiers = re.search(r"(?:\b(?:static|inline)\s+)+$", code[:at])
        return specifiers.start() if specifiers else at, end + (rest.end() if rest else 0)
    line_start = code.rfind("\n", 0, at) + 1
    if word == name and not code[line_start:at].strip():  # the return type may be on the line before
        before = code.rfind("\n", 0, max(line_start - 1, 0)) + 1
        previous = code[before:line_start].strip()
        if previous and previous[-1] not in "{};":
            line_start = before
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


RENAMED = "_renamed_away"


def rename_span(text: str, site: Site, name: str) -> tuple[int, int, str] | None:
    """The name to change to rename what the index found at site, and its new text: the function's name, or
    the first argument of TORCH_IMPL_FUNC / TORCH_META_FUNC(2); None for a macro invocation (deleted instead)."""
    code, at, word = _code_and_word(text, site)
    if word == name:
        return at, at + len(name), name + RENAMED
    if word in STRUCTURED_MACROS:
        arg = re.compile(r"\(\s*([A-Za-z_]\w*)").match(code, at + len(word))
        if arg is not None:
            return arg.start(1), arg.end(1), arg.group(1) + RENAMED
    return None


def blank(text: str, start: int, end: int) -> str:
    return text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]


@dataclass(frozen=True, slots=True)
class Mutation:
    """One kernel taken out of the sources: text[start:end] of path (relative to the tree) replaced."""

    label: str  # the need taken out
    path: str
    start: int
    end: int
    replacement: str
    how: str  # "deleted" or "renamed"
    sort: str = SINGLE  # what kind of definition it took out: SINGLE, OVERLOAD or BRANCH

    def apply(self, text: str) -> str:
        return text[:self.start] + self.replacement + text[self.end:]


def mutation_for(tree: Path, need: Requirement, hit: Located, rename: bool, sort: str = SINGLE) -> Mutation:
    text = Path(hit.path).read_text(encoding="utf-8", errors="replace")
    site = Site(hit.path, hit.symbol.line, hit.symbol.col)
    relative = os.path.relpath(hit.path, tree)
    renamed = rename_span(text, site, need.name) if rename else None
    if renamed is not None:
        return Mutation(label(need), relative, *renamed, "renamed", sort)
    start, end = deletion_span(text, site, need.name)
    return Mutation(label(need), relative, start, end, re.sub(r"[^\n]", " ", text[start:end]), "deleted", sort)


def _one_per_branch(found: list[Located]) -> bool:
    """Definitions one in each branch of one #if/#elif/#else (of one file): a build takes one of them."""
    if len(found) < 2 or len({h.path for h in found}) > 1:
        return False
    shared = set.intersection(*({b.directives for b in h.symbol.branches} for h in found))
    return any(len(lines) == len(found) and {b.taken for h in found for b in h.symbol.branches if b.directives == lines}
               == set(range(len(lines))) for lines in shared)


def candidates(index: KernelIndex, needs: list[Requirement]) -> dict[str, dict[str, tuple[Requirement, Located]]]:
    """The definitions a deletion must be reported for, by sort and by label: SINGLE, a need's one definition, the
    only one of its name; OVERLOAD, a need's one definition, other ops' overloads of its name beside it; BRANCH,
    the first of a need's definitions one in each branch of an #if/#else (or #elif): the build taking its branch
    has no other."""
    out: dict[str, dict[str, tuple[Requirement, Located]]] = {SINGLE: {}, OVERLOAD: {}, BRANCH: {}}
    for need in needs:
        found = definitions_of(index, need)
        if not found or not is_met(index, need):
            continue
        if len(found) == 1:
            others = need.kind == DEFINITION and any(
                h.symbol.namespace == need.namespace and h != found[0] for h in index.find(need.name, (DEFINITION,)))
            out[OVERLOAD if others else SINGLE].setdefault(label(need), (need, found[0]))
        elif need.kind == DEFINITION and _one_per_branch(found):
            out[BRANCH].setdefault(label(need), (need, found[0]))
    return out


SORTS = (SINGLE, OVERLOAD, BRANCH)


def choose_mutations(tree: Path, index: KernelIndex, needs: list[Requirement], count: int,
                     seed: int, kinds: tuple[str, ...] = SORTS) -> list[Mutation]:
    """count definitions, each deleted or renamed (in turn), none of their texts overlapping, so that all can be
    applied at once: taken in turn from each sort of candidates (kinds; an equal share each, as far as there are
    enough)."""
    sorts = candidates(index, needs)
    rng = random.Random(seed)
    queues = []
    for sort in kinds:
        order = sorted(sorts[sort])
        rng.shuffle(order)
        queues.append([(sort, key) for key in order])
    chosen: list[Mutation] = []
    taken: dict[str, list[tuple[int, int]]] = {}
    while len(chosen) < count and any(queues):
        for queue in queues:
            if not queue or len(chosen) == count:
                continue
            sort, key = queue.pop(0)
            need, hit = sorts[sort][key]
            mutation = mutation_for(tree, need, hit, rename=len(chosen) % 2 == 1, sort=sort)
            spans = taken.setdefault(mutation.path, [])
            if any(mutation.start < end and start < mutation.end for start, end in spans):
                continue
            spans.append((mutation.start, mutation.end))
            chosen.append(mutation)
    return chosen


def expected_codes(tree: Path, index: KernelIndex, needs: list[Requirement], mutations: list[Mutation]
                   ) -> dict[str, str]:
    """The needs the mutations take out, by label, each with the code it must be reported with: OPG600 (OPG601
    for a meta function) when none of its definitions is left (its own, and any other whose every definition
    lies in the text they change: a macro invocation defining several kernels), OPG602 when what is left is
    in some branches of a conditional only (a BRANCH mutation's need)."""
    changed: dict[str, list[tuple[int, int]]] = {}
    for m in mutations:
        changed.setdefault(m.path, []).append((m.start, m.end))
    texts: dict[str, str] = {}

    def inside(hit: Located) -> bool:
        relative = os.path.relpath(hit.path, tree)
        if relative not in changed:
            return False
        text = texts.setdefault(relative, Path(hit.path).read_text(encoding="utf-8", errors="replace"))
        at = _offset(text, hit.symbol.line, hit.symbol.col)
        return any(start <= at < end for start, end in changed[relative])

    out = {m.label: "OPG602" if m.sort == BRANCH else "OPG600" for m in mutations}
    for need in needs:
        found = definitions_of(index, need)
        gone = [h for h in found if inside(h)]
        if found and len(gone) == len(found):
            out[label(need)] = "OPG600"
        elif gone and need.kind == DEFINITION and branch_gap([h for h in found if h not in gone]) is not None:
            out.setdefault(label(need), "OPG602")
    return {key: "OPG601" if key.startswith(KIND_WORDS[META]) else code for key, code in out.items()}


def taken_out(tree: Path, index: KernelIndex, needs: list[Requirement], mutations: list[Mutation]) -> set[str]:
    """The labels of the needs the mutations take out (expected_codes)."""
    return set(expected_codes(tree, index, needs, mutations))


def copy_tree(tree: Path, dest: Path) -> Path:
    """A copy of what the index reads of tree (a checkout's aten/src/ATen and c10, else the folder)."""
    if (tree / ATEN).is_dir():
        for part in (ATEN, "c10"):
            if (tree / part).is_dir():
                shutil.copytree(tree / part, dest / part, symlinks=True)
    else:
        shutil.copytree(tree, dest, symlinks=True, dirs_exist_ok=True)
    return dest


def apply_all(copy: Path, mutations: list[Mutation]) -> None:
    by_file: dict[str, list[Mutation]] = {}
    for m in mutations:
        by_file.setdefault(m.path, []).append(m)
    for relative, changes in by_file.items():
        path = copy / relative
        text = path.read_text(encoding="utf-8", errors="replace")
        for m in sorted(changes, key=lambda m: m.start, reverse=True):
            text = m.apply(text)
        path.write_text(text, encoding="utf-8")


def check_deletions(tree: Path, index: KernelIndex, needs: list[Requirement], count: int,
                    seed: int, kinds: tuple[str, ...] = SORTS) -> tuple[list[dict], list[dict], list[Mutation]]:
    """Delete or rename `count` definitions (choose_mutations) one at a time in a copy of the tree: (those still found,
    kernels still defined that were reported missing after one of them, the mutations tried)."""
    mutations = choose_mutations(tree, index, needs, count, seed, kinds)
    failures: list[dict] = []
    collateral: list[dict] = []
    before = unmet(index, needs)
    with tempfile.TemporaryDirectory(prefix="kernel-accuracy-") as tmp:
        copy = copy_tree(tree, Path(tmp) / "tree")
        moved = KernelIndex.build([str(copy)])
        for m in mutations:
            path = copy / m.path
            original = path.read_text(encoding="utf-8", errors="replace")
            path.write_text(m.apply(original), encoding="utf-8")
            moved.update(str(path))
            expected = taken_out(tree, index, needs, [m])
            after = unmet(moved, needs) - before
            where = {"kernel": m.label, "how": m.how, "file": m.path, "line": original.count("\n", 0, m.start) + 1}
            if m.label not in after:
                failures.append(where)
            for other in sorted(after - expected):
                collateral.append({**where, "also reported": other})
            path.write_text(original, encoding="utf-8")
            moved.update(str(path))
    return failures, collateral, mutations


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

def measure(tree: Path, args: argparse.Namespace) -> tuple[bool, dict]:
    """Report on one tree; (all good, the figures)."""
    yaml_path, tags_path = yaml_paths(tree, args.native_functions)
    if not tree.is_dir() or not yaml_path.is_file() or not tags_path.is_file():
        print(f"not found: {tree}, {yaml_path} or {tags_path}", file=sys.stderr)
        return False, {}
    needs = load_needs(yaml_path, tags_path)
    index = KernelIndex.build([str(tree)])
    missing = sorted(unmet(index, needs))
    expected = read_expected(args.expect) if args.expect else None
    false_missing = sorted(m for m in missing if bare(m) in expected) if expected is not None else missing
    met = sorted({label(n) for n in needs} - set(missing))
    print(f"{tree}: {len(index.files)} files ({', '.join(index.roots)}; macros of {', '.join(index.header_roots)}); "
          f"{len({label(n) for n in needs})} kernels needed by {yaml_path}; {len(met)} found, {len(missing)} "
          "reported missing")
    false_found = sorted(m for m in met if bare(m) not in expected) if expected is not None else []
    if expected is not None:
        print(f"expected (defined by these sources): {len(expected)}; found {len(expected & {bare(m) for m in met})}; "
              f"false missing-kernel warnings: {len(false_missing)}; found but not defined (a deletion of the "
              f"real definition would go unreported): {len(false_found)}")
    for item in false_missing:
        print(f"  missing: {item}")
    for item in false_found:
        print(f"  found, not defined: {item}")
    failures: list[dict] = []
    collateral: list[dict] = []
    tried = 0
    if args.delete_sample:
        failures, collateral, mutations = check_deletions(tree, index, needs, args.delete_sample, args.seed,
                                                          tuple(args.sorts.split(",")))
        tried = len(mutations)
        sorts = ", ".join(f"{sum(m.sort == sort for m in mutations)} {sort}" for sort in SORTS)
        print(f"deleted or renamed {tried} kernels one at a time ({sorts}): {tried - len(failures)} reported, "
              f"{len(failures)} not; {len(collateral)} other kernels, still defined, reported with them")
        for f in failures:
            print(f"  still found after it was {f['how']}: {f['kernel']} ({f['file']}:{f['line']})")
        for f in collateral:
            print(f"  {f['kernel']} {f['how']} ({f['file']}:{f['line']}): {f['also reported']} reported too")
    undeclared: list[str] = []
    wrong_definitions: list[str] = []
    if args.generated_headers:
        ops = Path(args.generated_headers) if args.generated_headers != "wheel" else wheel_ops_folder()
        checked, undeclared, wrong_definitions = check_generated_headers(needs, ops)
        print(f"generated declarations ({ops}): {checked} kernels checked, {len(undeclared)} not found declared, "
              f"{len(wrong_definitions)} definitions found where there are only declarations")
        for item in undeclared + wrong_definitions:
            print(f"  {item}")
    figures = {"tree": str(tree), "files": len(index.files), "needed": len(met) + len(missing), "found": met,
               "reported_missing": missing, "false_missing": false_missing, "false_found": false_found,
               "deleted": tried, "unreported_deletions": failures, "collateral": collateral}
    good = not (false_missing or false_found or failures or collateral or undeclared or wrong_definitions)
    return good, figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trees", nargs="*", metavar="TREE",
                        help="PyTorch checkouts (or folders of C++ sources); default: each tree in "
                             "$OPGEN_PYTORCH_TREES (else ~/.cache/opgen/trees)")
    parser.add_argument("--native-functions", metavar="F",
                        help="native_functions.yaml (default: the tree's, else the installed torchgen's)")
    parser.add_argument("--expect", metavar="FILE",
                        help="what the sources define (`kernel NAME` / `impl NAME` / `meta NAME` lines); only "
                             "these count as false warnings")
    parser.add_argument("--delete-sample", type=int, default=0, metavar="N",
                        help="delete or rename N random definitions (only ones, overloads, #if/#else branches), "
                             "one at a time, and check each is reported")
    parser.add_argument("--sorts", default=",".join(SORTS), metavar="S,...",
                        help=f"what --delete-sample takes out, a share each (default: {','.join(SORTS)}): {SINGLE} "
                             f"(a kernel's only definition), {OVERLOAD} (beside other ops' overloads of its name), "
                             f"{BRANCH} (in one branch of an #if/#else defining it in each)")
    parser.add_argument("--generated-headers", nargs="?", const="wheel", metavar="DIR",
                        help="also scan torchgen's ATen/ops/*_native.h (default: the installed torch's): every "
                             "kernel they declare must be found declared, and no definition found there")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", metavar="PATH", help="also write the results there")
    args = parser.parse_args()
    unknown = set(args.sorts.split(",")) - set(SORTS)
    if unknown:
        print(f"--sorts: not one of {', '.join(SORTS)}: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2

    trees = [Path(t) for t in args.trees] or known_trees()
    if not trees:
        print(f"no tree given and none in {trees_folder()} (docs/kernels.md says how to get them)", file=sys.stderr)
        return 2
    results, good = [], True
    for tree in trees:
        ok, figures = measure(tree, args)
        if not figures:
            return 2
        good = good and ok
        results.append(figures)
    if args.json:
        Path(args.json).write_text(json.dumps(results if len(results) > 1 else results[0], indent=1))
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
