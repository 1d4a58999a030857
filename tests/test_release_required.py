"""No default torch release below the entry points, read from the source.

The command line (server/cli/), the server (server/lsp/ and the `gen`/`serve` entry modules) and the modules that
find the release (releases, tree_release) choose it: from the tree, the file's content, --torch-version or
opgen.torchVersion. Everything below is told. A default there (`release: Release = DEFAULT`) let a caller forget
the release and silently get 2.13's output: the hover of a 2.12 tree showed a structured wrapper that gen.py 2.12
does not write, and the lazy hover and check and the server's backend generation used 2.13 whatever the tree.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

SERVER = Path(__file__).resolve().parent.parent / "server"

# Where the release is chosen (paths relative to server/; a folder holds all its modules).
CHOOSERS = ("cli", "lsp", "gen.py", "serve.py", "releases.py", "releases", "tree_release.py")

_RELEASE_TYPE = re.compile(r"\bRelease\b")


def _chooses(relative: Path) -> bool:
    return relative.parts[0] in CHOOSERS


def _is_release(name: str, annotation: ast.expr | None) -> bool:
    return name == "release" or annotation is not None and bool(_RELEASE_TYPE.search(ast.unparse(annotation)))


def _field_default(value: ast.expr) -> bool:
    """Whether a class attribute's value gives the field a default: anything but `field(...)` without default= or
    default_factory= (a required keyword-only field is `field(kw_only=True)`)."""
    if isinstance(value, ast.Call) and ast.unparse(value.func) in ("field", "dataclasses.field"):
        return any(k.arg in ("default", "default_factory") for k in value.keywords)
    return True


def _function_defaults(node: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[str]:
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    defaulted = positional[len(positional) - len(args.defaults):] if args.defaults else []
    defaulted += [a for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    for arg in defaulted:
        if _is_release(arg.arg, arg.annotation):
            yield f"{node.name}() parameter {arg.arg}"


def _class_defaults(node: ast.ClassDef) -> Iterator[str]:
    for item in node.body:
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.value is not None \
                and _is_release(item.target.id, item.annotation) and _field_default(item.value):
            yield f"{node.name}.{item.target.id} field"


def _default_imports(tree: ast.Module) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] == "releases":
            for alias in node.names:
                if alias.name in ("DEFAULT", "default_resolved"):
                    yield f"imports {alias.name} from releases (line {node.lineno})"


def release_defaults(source: str) -> list[str]:
    """What in a module below the entry points gives the release a default."""
    tree = ast.parse(source)
    found = list(_default_imports(tree))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found += [f"{what} (line {node.lineno})" for what in _function_defaults(node)]
        elif isinstance(node, ast.ClassDef):
            found += [f"{what} (line {node.lineno})" for what in _class_defaults(node)]
    return found


def test_nothing_below_the_entry_points_defaults_the_release() -> None:
    found = []
    checked = 0
    for path in sorted(SERVER.rglob("*.py")):
        relative = path.relative_to(SERVER)
        if _chooses(relative):
            continue
        checked += 1
        found += [f"{relative}: {what}" for what in release_defaults(path.read_text(encoding="utf-8"))]
    assert checked > 150  # the whole server below its entry points was read
    assert found == []


def test_the_check_finds_each_kind_of_default() -> None:
    planted = '''
from ..releases import DEFAULT, Release
from dataclasses import dataclass, field

def a(x, release: Release = DEFAULT): ...
def b(x, *, release=None): ...
def c(x, profile: "Release | None" = None): ...
def ok(x, release: Release, *, other: int = 0): ...

@dataclass
class D:
    release: Release = DEFAULT
@dataclass
class E:
    release: Release = field(default_factory=lambda: DEFAULT)
@dataclass
class F:
    release: Release = field(kw_only=True)
    count: int = 0
class G:
    release: Release
'''
    found = release_defaults(planted)
    assert [f.split(" (")[0] for f in found] == [
        "imports DEFAULT from releases", "a() parameter release", "b() parameter release", "c() parameter profile",
        "D.release field", "E.release field"]

