"""The layering rule of ARCHITECTURE.md, read from the source: a module imports only its own layer or layers below it,
and no modules import each other round in a circle (CONTRIBUTING.md, "Layers").

Every import counts: module-level, function-level (the lazy ones that keep start-up fast), those under
`if TYPE_CHECKING:` (a type named from a layer above couples the two just the same), and `__import__` or
`importlib.import_module` of a module named by a string.
"""

from __future__ import annotations

import ast
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # (the whole import graph, read and then planted with violations: CI runs them; the not-slow loop does not)

SERVER = Path(__file__).resolve().parent.parent / "server"
PACKAGE = "opgen_lsp"

# Bottom to top. The root modules are the foundation: plain helpers every layer may use (positions, diagnostics and
# their code table, the bounded file reader, the releases' profiles, the rendering of diagnostics for files). A new
# root module must be placed here on purpose; a layer names a package, and holds every module inside it.
LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    ("foundation", frozenset({
        PACKAGE, f"{PACKAGE}.frozen", f"{PACKAGE}.text", f"{PACKAGE}.suggest", f"{PACKAGE}.status",
        f"{PACKAGE}.diagnostics", f"{PACKAGE}.input_file", f"{PACKAGE}.releases",
        *(f"{PACKAGE}.releases.{name}" for name in ("changelog", "profile", "release_ops", "resolution",
                                                     "torchgen_digests", "tree_release")),
        f"{PACKAGE}.report", f"{PACKAGE}.worker_process",
    })),
    # The persistent cache's store: bytes under keys, knowing nothing of what they are (codegen/runs.py keeps
    # generate's run records in it, analysis/check_memo.py check's verdicts).
    ("cache", frozenset({f"{PACKAGE}.cache"})),
    ("syntax", frozenset({f"{PACKAGE}.syntax"})),
    ("model", frozenset({f"{PACKAGE}.model"})),
    # The pure per-op pieces (torchgen's api/ and dest/, explain): functions of the model and the release only, so
    # the analyses can show them and the generators can assemble them.
    ("pieces", frozenset({f"{PACKAGE}.pieces"})),
    ("index", frozenset({f"{PACKAGE}.index"})),
    ("analysis", frozenset({f"{PACKAGE}.analysis"})),
    ("codegen", frozenset({f"{PACKAGE}.codegen"})),
    ("lsp", frozenset({f"{PACKAGE}.lsp"})),
    ("cli", frozenset({f"{PACKAGE}.cli"})),
    # Entry points: gen (`python -m opgen_lsp.gen`, the drop-in for torchgen.gen) hands its command line to cli/;
    # serve (`opgen-lsp`) starts the server of lsp/ with the generators of codegen/.
    ("entry", frozenset({f"{PACKAGE}.gen", f"{PACKAGE}.serve"})),
)

Graph = Mapping[str, frozenset[str]]

# Layers side by side: neither imports the other, though the order above puts one over the other. The server (lsp/)
# is given its generators by whoever builds it (lsp/generators.py; `serve` gives codegen's), and its checks and
# per-op code are below both (analysis/, pieces/).
SIBLINGS: tuple[tuple[str, str], ...] = (("codegen", "lsp"),)


def module_name(root: Path, path: Path) -> str:
    parts = [PACKAGE, *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(node: ast.Import | ast.ImportFrom, package: str, modules: frozenset[str]) -> Iterator[str]:
    """The modules of the package one import statement names (`from . import x` names the submodule x when there
    is one, else the package whose attribute x is)."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names if alias.name.split(".")[0] == PACKAGE)
        return
    if node.level:
        base = package.split(".")[:len(package.split(".")) - node.level + 1]
        target = ".".join([*base, node.module] if node.module else base)
    else:
        target = node.module or ""
    if target.split(".")[0] != PACKAGE:
        return
    for alias in node.names:
        submodule = f"{target}.{alias.name}"
        yield submodule if submodule in modules else target


def _dynamic(node: ast.Call) -> str | None:
    """The module `__import__("opgen_lsp.x")` or `importlib.import_module("opgen_lsp.x")` names, if any."""
    func = node.func
    named = (isinstance(func, ast.Name) and func.id in ("__import__", "import_module")) or (
        isinstance(func, ast.Attribute) and func.attr == "import_module")
    if not named or not node.args or not isinstance(node.args[0], ast.Constant):
        return None
    value = node.args[0].value
    return value if isinstance(value, str) and value.split(".")[0] == PACKAGE else None


def import_graph(root: Path) -> dict[str, frozenset[str]]:
    """Each module of the tree under root (the `server/` folder, installed as opgen_lsp) -> the modules it imports."""
    paths = {module_name(root, path): path for path in sorted(root.rglob("*.py"))}
    modules = frozenset(paths)
    graph = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        imported = {target for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                    for target in _imported(node, package, modules)}
        named = (_dynamic(node) for node in ast.walk(tree) if isinstance(node, ast.Call))
        imported |= {target for target in named if target is not None}
        graph[name] = frozenset(imported - {name})
    return graph


def layer_of(module: str) -> int | None:
    for rank, (_, members) in enumerate(LAYERS):
        if module in members or (rank and any(module.startswith(f"{package}.") for package in members)):
            return rank
    return None


def unplaced(graph: Graph) -> list[str]:
    return sorted(module for module in graph if layer_of(module) is None)


def upward_imports(graph: Graph) -> list[str]:
    found = []
    for module, imported in sorted(graph.items()):
        low = layer_of(module)
        for target in sorted(imported):
            high = layer_of(target)
            if low is not None and high is not None and high > low:
                found.append(f"{module} ({LAYERS[low][0]}) imports {target} ({LAYERS[high][0]})")
    return found


def sibling_imports(graph: Graph) -> list[str]:
    """The imports between two layers of SIBLINGS, either way."""
    names = [name for name, _ in LAYERS]
    pairs = {(names.index(a), names.index(b)) for a, b in SIBLINGS}
    pairs |= {(b, a) for a, b in pairs}
    return [f"{module} ({names[layer_of(module)]}) imports {target} ({names[layer_of(target)]})"  # type: ignore[index]
            for module, imported in sorted(graph.items()) for target in sorted(imported)
            if (layer_of(module), layer_of(target)) in pairs]


def import_circles(graph: Graph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative: no recursion
    limit to meet), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    return sorted(circles)


@pytest.fixture(scope="module")
def graph() -> dict[str, frozenset[str]]:
    return import_graph(SERVER)


def test_the_graph_is_read(graph: Graph) -> None:
    # A reader that found nothing would pass every rule below.
    assert len(graph) > 100
    assert f"{PACKAGE}.model.schema" in graph[f"{PACKAGE}.model.lower"]
    assert f"{PACKAGE}.index.inputs" in graph[f"{PACKAGE}.cli.check"]  # a function-level import


def test_every_module_has_a_layer(graph: Graph) -> None:
    assert unplaced(graph) == []


def test_no_upward_import(graph: Graph) -> None:
    assert upward_imports(graph) == []


def test_no_import_circle(graph: Graph) -> None:
    assert import_circles(graph) == []


def test_the_analyses_stand_on_the_pieces(graph: Graph) -> None:
    # The floors the analyses and the generators share: the per-op pieces under both, the analyses under codegen.
    names = [name for name, _ in LAYERS]
    assert names.index("model") < names.index("pieces") < names.index("analysis") < names.index("codegen")
    assert layer_of(f"{PACKAGE}.pieces.explain") == names.index("pieces")
    assert f"{PACKAGE}.pieces.dest.native_declarations" in graph[f"{PACKAGE}.analysis.kernel_nav"]


def test_the_server_and_the_generators_import_nothing_of_each_other(graph: Graph) -> None:
    assert sibling_imports(graph) == []
    assert f"{PACKAGE}.lsp.generators" in graph[f"{PACKAGE}.lsp.commands"]  # the commands' generators: given
    assert {f"{PACKAGE}.lsp.main", f"{PACKAGE}.lsp.generators"} <= graph[f"{PACKAGE}.serve"]
    assert layer_of(f"{PACKAGE}.serve") == [name for name, _ in LAYERS].index("entry")


def _planted(tmp_path: Path) -> Path:
    root = tmp_path / "server"
    shutil.copytree(SERVER, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def test_a_planted_upward_import_fails(tmp_path: Path) -> None:
    root = _planted(tmp_path)
    entries = root / "syntax" / "entries.py"
    # Function-level and relative, the hardest kind to see.
    entries.write_text(entries.read_text(encoding="utf-8") + "\n\ndef _late():\n    from ..model import lower\n",
                       encoding="utf-8")
    (root / "model" / "late.py").write_text("import opgen_lsp.lsp.server\n", encoding="utf-8")
    (root / "index" / "hidden.py").write_text('def f():\n    return __import__("opgen_lsp.cli.main")\n',
                                              encoding="utf-8")
    found = upward_imports(import_graph(root))
    assert f"{PACKAGE}.model.late (model) imports {PACKAGE}.lsp.server (lsp)" in found
    assert f"{PACKAGE}.syntax.entries (syntax) imports {PACKAGE}.model.lower (model)" in found
    assert f"{PACKAGE}.index.hidden (index) imports {PACKAGE}.cli.main (cli)" in found
    assert len(found) == len(upward_imports(import_graph(SERVER))) + 3  # and nothing else changed


def test_a_planted_import_across_the_new_floors_fails(tmp_path: Path) -> None:
    root = _planted(tmp_path)
    signatures = root / "pieces" / "api" / "signatures.py"
    signatures.write_text(signatures.read_text(encoding="utf-8") + "\n\ndef _late():\n    from ...analysis import hover\n",
                          encoding="utf-8")
    (root / "analysis" / "late.py").write_text("from ..codegen.files import aten\n", encoding="utf-8")
    found = upward_imports(import_graph(root))
    assert f"{PACKAGE}.pieces.api.signatures (pieces) imports {PACKAGE}.analysis.hover (analysis)" in found
    assert f"{PACKAGE}.analysis.late (analysis) imports {PACKAGE}.codegen.files.aten (codegen)" in found
    (root / "lsp" / "late.py").write_text("def f():\n    from ..codegen.files import aten\n", encoding="utf-8")
    (root / "codegen" / "late.py").write_text("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                                              "    from ..lsp.generators import Generators\n", encoding="utf-8")
    assert sibling_imports(import_graph(root)) == [
        f"{PACKAGE}.codegen.late (codegen) imports {PACKAGE}.lsp.generators (lsp)",
        f"{PACKAGE}.lsp.late (lsp) imports {PACKAGE}.codegen.files.aten (codegen)"]


def test_a_planted_circle_fails(tmp_path: Path) -> None:
    root = _planted(tmp_path)
    (root / "analysis" / "ping.py").write_text("from . import pong\n", encoding="utf-8")
    (root / "analysis" / "pong.py").write_text("from .ping import something\n", encoding="utf-8")
    assert [f"{PACKAGE}.analysis.ping", f"{PACKAGE}.analysis.pong"] in import_circles(import_graph(root))


def test_a_planted_root_module_must_be_placed(tmp_path: Path) -> None:
    root = _planted(tmp_path)
    (root / "helpers.py").write_text("", encoding="utf-8")
    assert unplaced(import_graph(root)) == [f"{PACKAGE}.helpers"]
