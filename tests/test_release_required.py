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
    defaulted = list(zip(positional[len(positional) - len(args.defaults):], args.defaults)) if args.defaults else []
    defaulted += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    for arg, value in defaulted:
        if _is_release(arg.arg, arg.annotation) or _fixed_release(value):
            yield f"{node.name}() parameter {arg.arg}"


def _class_defaults(node: ast.ClassDef) -> Iterator[str]:
    for item in node.body:
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.value is not None \
                and (_is_release(item.target.id, item.annotation) or _fixed_release(item.value)) \
                and _field_default(item.value):
            yield f"{node.name}.{item.target.id} field"


# The chosen releases, by name: whatever module they are imported from (releases, releases.resolution,
# releases.profile ...) or reached through (releases.DEFAULT), below the entry points they are a default in disguise.
CHOSEN = frozenset({"DEFAULT", "NEWEST", "default_resolved"})
# What makes a release from nothing: as a parameter's or field's default value, a fixed release too.
MAKERS = frozenset({"release_at", "RELEASES"})


def _default_imports(tree: ast.Module) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name in CHOSEN:
                    yield f"imports {alias.name} from {'.' * node.level}{node.module or ''} (line {node.lineno})"
        elif isinstance(node, ast.Attribute) and node.attr in CHOSEN:
            yield f"uses {ast.unparse(node)} (line {node.lineno})"


def _names(expr: ast.expr) -> set[str]:
    """Every name and attribute an expression mentions (`release_at`, `RELEASES`, `r.release_at` ...)."""
    return {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)} | \
        {n.attr for n in ast.walk(expr) if isinstance(n, ast.Attribute)}


def _fixed_release(value: ast.expr | None) -> bool:
    """A default value that is a release picked here: release_at("2.13"), RELEASES[-1], DEFAULT by any name."""
    return value is not None and bool(_names(value) & (MAKERS | CHOSEN))


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
        "imports DEFAULT from ..releases", "a() parameter release", "b() parameter release", "c() parameter profile",
        "D.release field", "E.release field"]



def test_the_check_finds_the_chosen_releases_whatever_their_module() -> None:
    planted = '''
from ..releases.profile import DEFAULT as D
from ..releases.resolution import NEWEST
from ...releases import default_resolved
from .. import releases
from ..releases import Release, release_at, RELEASES
from dataclasses import dataclass, field

def a(x, version=release_at("2.13")): ...
def b(x, *, target=RELEASES[-1]): ...
def c(x):
    return releases.DEFAULT
def ok(x, release: Release, name: str = "DEFAULT", count: int = -1): ...
def ok2(x, release: Release):
    return release_at(str(release.version))

@dataclass
class H:
    target: object = field(default_factory=lambda: release_at("2.13"))
@dataclass
class I:
    newest: object = RELEASES[-1]
@dataclass
class J:
    when: str = "2.13"
'''
    found = release_defaults(planted)
    assert [f.split(" (")[0] for f in found] == [
        "imports DEFAULT from ..releases.profile", "imports NEWEST from ..releases.resolution",
        "imports default_resolved from ...releases", "uses releases.DEFAULT", "a() parameter version",
        "b() parameter target", "H.target field", "I.newest field"]
