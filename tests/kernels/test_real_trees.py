"""Missing kernels on real PyTorch trees (issue 18): no false warning, and every kernel taken out reported.

The trees are public PyTorch source trees (2.6, a pre-release 2.7 with ops of its own, a vendor's 2.4, a 2.0
fork with an added dtype, another with a dispatch key of its own), kept
outside the project in $OPGEN_PYTORCH_TREES (default ~/.cache/opgen/trees; tests/real_trees.py); each test
skips, saying how to get its tree, when it is absent (docs/trees.md). On each:

- `opgen check --kernels TREE` gives no OPG600/OPG601 on the tree's own native_functions.yaml (a tree older
  than the releases opgen knows is checked with --torch-version of the oldest, so that its kernels are checked at
  all; its other diagnostics are not what is measured here);
- 200 definitions, half deleted and half renamed at once in a copy of the tree (benchmarks/kernel_accuracy.py
  picks them: a third each of a kernel's only definition, a kernel's definition beside other ops' C++
  overloads of its name, and one of a kernel's definitions in each branch of an #if/#else), are
  each reported on the dispatch line of the op they served (OPG600; OPG602 for a branch; OPG601 on the
  `structured:` line for a meta function), and nothing else is, both by `opgen check --kernels` and by the
  language server opened on the copy. The expected lines are read from the yaml text here, not from the
  checker.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import real_trees
from lsp.helpers import SERVER, make_client, open_document  # (tests/lsp: a top-level package under pytest)
from lsprotocol import types
from pytest_lsp import ClientServerConfig, client_capabilities
from real_trees import native_yaml, tree_or_skip

from opgen_lsp.cli import main
from opgen_lsp.index.kernels import KernelIndex, source_files
from opgen_lsp.releases import OLDEST, Fit, resolve_for
from opgen_lsp.syntax.cpp_scan import META

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "kernel_accuracy.py"
SPEC = importlib.util.spec_from_file_location("kernel_accuracy", SCRIPT)
accuracy = sys.modules.setdefault("kernel_accuracy", importlib.util.module_from_spec(SPEC))
SPEC.loader.exec_module(accuracy)  # type: ignore[union-attr]

pytestmark = pytest.mark.slow

# The real trees (tests/real_trees.py) whose kernels are measured: all but the 1.13 one, whose sources hold a branch
# with unbalanced braces (transformer.cpp's `x.view({{x_size_0, ...})` under BETTER_TRANSFORMER_USE_FLASH_ATTENTION):
# the kernels defined after it are not seen (4 OPG600 on _transformer_decoder_only_layer_fwd; checked as 1.13.1, its
# view copies' generated kernels are known, and nothing else is reported).
TREES = sorted(set(real_trees.TREES) - {"pytorch-1.13"})
SAMPLE = 200
MIN_OF_A_SORT = 40
KERNEL_CODES = ("OPG600", "OPG601", "OPG602")


def expected_line(lines: list[str], need) -> tuple[str, int]:
    """Where the warning about a need belongs, read from the yaml text: the line naming the kernel under its
    key in the entry's dispatch table (the func: line for an entry without one, whose implicit kernel is
    meant), or the entry's `structured:` line for a meta function."""
    start = need.op.line
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("- ")), len(lines))
    entry = range(start, end)
    if need.kind == META:
        return "OPG601", next(i for i in entry if lines[i].strip().startswith("structured:"))
    table = next((i for i in entry if lines[i].split("#")[0].strip() == "dispatch:"), None)  # a comment may follow
    if table is None:
        return "OPG600", next(i for i in entry if "func:" in lines[i])
    for i in range(table + 1, end):
        if lines[i].strip().startswith("#"):
            continue
        m = re.match(r"\s+([\w, ]+):\s*(\S+)\s*$", lines[i])
        if m is None:
            break
        keys = [k.strip() for k in m.group(1).split(",")]
        if need.key.name in keys and m.group(2).split("::")[-1] == need.name:
            return "OPG600", i
    raise AssertionError(f"{need.name} ({need.key}) not under dispatch: of the entry at line {start + 1}")


@dataclass(frozen=True)
class TakenOut:
    copy: Path  # the tree with the kernels taken out
    expected: list[tuple[str, int]]  # (code, 0-based line) of each warning, sorted
    mutations: int


def kernel_warnings(items: list[dict]) -> list[tuple[str, int]]:
    return sorted((d["code"], d["range"]["start"]["line"]) for d in items if d["code"] in KERNEL_CODES)


def check_json(capsys, *args: str) -> list[dict]:
    capsys.readouterr()
    main(["check", *args, "--format", "json"])  # (status 1: the older yaml's schema errors)
    return json.loads(capsys.readouterr().out)


@pytest.fixture(autouse=True)
def _cache(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "kernel-cache"))


@pytest.fixture(scope="module", params=TREES)
def taken_out(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> TakenOut:
    tree = tree_or_skip(request.param)
    yaml_path, tags_path = accuracy.yaml_paths(tree, None)
    needs = accuracy.load_needs(yaml_path, tags_path)
    index = KernelIndex.build([str(tree)])
    mutations = accuracy.choose_mutations(tree, index, needs, SAMPLE, seed=18)
    assert len(mutations) == SAMPLE and {m.how for m in mutations} == {"deleted", "renamed"}
    sorts = [m.sort for m in mutations]
    # Names with several definitions are a third each (the 2.0 tree has fewer #if/#else pairs).
    assert min(sorts.count(s) for s in (accuracy.SINGLE, accuracy.OVERLOAD, accuracy.BRANCH)) >= MIN_OF_A_SORT
    codes = accuracy.expected_codes(tree, index, needs, mutations)
    copy = accuracy.copy_tree(tree, tmp_path_factory.mktemp(request.param) / "tree")
    accuracy.apply_all(copy, mutations)
    lines = yaml_path.read_text(encoding="utf-8").split("\n")
    expected = sorted((codes[accuracy.label(n)], expected_line(lines, n)[1]) for n in needs
                      if accuracy.label(n) in codes)
    return TakenOut(copy, expected, len(mutations))


def release_option(tree: Path) -> list[str]:
    """--torch-version OLDEST for a tree older than the releases opgen knows (else its yaml is refused, OPG951,
    and no kernel of it checked); nothing for the others (their own release)."""
    resolved = resolve_for(str(native_yaml(tree)))
    return ["--torch-version", OLDEST.series] if resolved.fit is Fit.OLDER else []


@pytest.mark.parametrize("name", TREES)
def test_no_false_missing_kernel_warning(name: str, capsys) -> None:
    tree = tree_or_skip(name)
    found = check_json(capsys, *release_option(tree), "--kernels", str(tree), str(native_yaml(tree)))
    assert "OPG951" not in {d["code"] for d in found}, "the yaml was refused: its kernels were not checked"
    assert kernel_warnings(found) == []


def test_opgen_check_reports_each_kernel_taken_out_on_its_line(taken_out: TakenOut, capsys) -> None:
    found = kernel_warnings(check_json(capsys, "--kernels", str(taken_out.copy), str(native_yaml(taken_out.copy))))
    assert len(taken_out.expected) >= taken_out.mutations
    assert found == taken_out.expected


async def _server_warnings(root: Path, timeout: float) -> tuple[list[tuple[str, int]], int]:
    """The kernel warnings the language server, opened on root, gives native_functions.yaml once its index is
    built: (warnings, how many files it indexed)."""
    client = await ClientServerConfig(server_command=SERVER, client_factory=make_client).start()
    try:
        await client.initialize_session(types.InitializeParams(
            capabilities=client_capabilities("neovim"), root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="tree")],
            initialization_options={"debounceMs": 10}))
        path = native_yaml(root)
        uri = open_document(client, path, path.read_text(encoding="utf-8"))
        indexed = re.compile(r"opgen: kernel index of .*: (\d+) files")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        files = 0
        while loop.time() < deadline and not files:
            files = next((int(m.group(1)) for m in (indexed.search(msg.message) for msg in client.log_messages)
                          if m), 0)
            await asyncio.sleep(0.1)
        assert files, "the server never finished its kernel index"
        published = client.published  # type: ignore[attr-defined]
        while loop.time() < deadline:  # the re-check after the index: the last push with warnings
            pushes = published.get(uri, [])
            latest = pushes[-1].diagnostics if pushes else []
            warnings = sorted((str(d.code), d.range.start.line) for d in latest if str(d.code) in KERNEL_CODES)
            if warnings:
                await asyncio.sleep(1.0)  # a later push would replace it
                if published.get(uri, [])[-1].diagnostics is latest:
                    return warnings, files
            await asyncio.sleep(0.1)
        raise AssertionError("no kernel warnings pushed")
    finally:
        await client.shutdown_session()
        await client.stop()


@pytest.mark.asyncio
async def test_the_server_reports_each_kernel_taken_out_on_its_line(taken_out: TakenOut) -> None:
    warnings, files = await _server_warnings(taken_out.copy, timeout=300)
    assert files > len(source_files([str(taken_out.copy / accuracy.NATIVE)]))  # all of aten/src/ATen, not native/
    assert warnings == taken_out.expected
