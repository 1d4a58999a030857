"""State is owned by an object with a lifetime, not by a module (issue 28, "State owned, not global").

A module-level cache or container that is filled as the process runs lives as long as the process, whatever
documents come and go (issue 27: the server kept 2.3 GB after 300 documents were closed). This test reads every
module of server/ with `ast` and fails on:

- a function (module level or a method) decorated with an unbounded cache: `functools.cache`, `cache`,
  `functools.lru_cache(maxsize=None)` / `lru_cache(None)`;
- an `lru_cache` with a bound but no comment on its decorator line (or the line above) that says why the bound
  fits: the bound is part of the design, stated where it is set;
- a module-level name bound to a container (dict, list, set, ..., or a comprehension) that the module mutates
  (subscript assignment or deletion, augmented assignment, append/update/setdefault/... calls);
- a module-level name rebound from a function (`global name` then an assignment),

unless (module, name) is in ALLOWED, each with the reason it is bounded by construction.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SERVER = Path(__file__).resolve().parent.parent / "server"

# (module path relative to server/, name) -> why it may stay: process-wide by nature and bounded by construction.
ALLOWED: dict[tuple[str, str], str] = {
    ("index/documents.py", "_heap_frozen"):
        "one flag: gc.freeze is an act on the whole process, done once per process",
    # Interning of small immutable yaml nodes and values, each capped at _MEMO_LIMIT entries.
    ("syntax/canonical.py", "_plain_values"): "values of plain scalars, at most _MEMO_LIMIT (20,000)",
    ("syntax/canonical.py", "_key_nodes"): "key nodes by (text, line, column), at most _MEMO_LIMIT",
    ("syntax/canonical.py", "_pairs"): "key-value nodes by (text, line, indent), at most _MEMO_LIMIT",
}

MUTATORS = frozenset({"append", "extend", "insert", "update", "setdefault", "add", "pop", "popitem", "clear",
                      "remove", "discard", "__setitem__", "__delitem__", "appendleft", "extendleft"})
CONTAINER_CALLS = frozenset({"dict", "list", "set", "defaultdict", "OrderedDict", "Counter", "deque", "WeakKeyDictionary",
                             "WeakValueDictionary", "bytearray"})
CONTAINER_NODES = (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}"
    return ""


def _unbounded_cache(decorator: ast.expr) -> bool | None:
    """True: an unbounded cache; False: a bounded lru_cache; None: not a cache."""
    name = _name(decorator.func if isinstance(decorator, ast.Call) else decorator).split(".")[-1]
    if name == "cache":
        return True
    if name != "lru_cache":
        return None
    if not isinstance(decorator, ast.Call):
        return False  # lru_cache's default bound (128)
    bound = decorator.args[0] if decorator.args else next(
        (k.value for k in decorator.keywords if k.arg == "maxsize"), None)
    return isinstance(bound, ast.Constant) and bound.value is None


def _commented(lines: list[str], lineno: int) -> bool:
    return "#" in lines[lineno] or lines[lineno - 1].lstrip().startswith("#")


def _caches(tree: ast.Module, lines: list[str]) -> Iterator[tuple[str, str]]:
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for decorator in node.decorator_list:
            unbounded = _unbounded_cache(decorator)
            if unbounded:
                yield node.name, f"line {node.lineno}: an unbounded cache on {node.name}"
            elif unbounded is False and not _commented(lines, decorator.lineno):
                yield node.name, f"line {node.lineno}: lru_cache on {node.name} without a comment saying why its bound fits"


def _containers(tree: ast.Module) -> dict[str, int]:
    """Module-level names bound to a container (name -> line)."""
    out: dict[str, int] = {}
    for node in tree.body:
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        if value is None:
            continue
        container = isinstance(value, CONTAINER_NODES) or (
            isinstance(value, ast.Call) and _name(value.func).split(".")[-1] in CONTAINER_CALLS)
        for target in targets:
            if container and isinstance(target, ast.Name):
                out[target.id] = node.lineno
    return out


def _mutated(tree: ast.Module) -> Iterator[tuple[str, int]]:
    """Names mutated in place anywhere in the module (subscript stores, mutating calls) and class attributes too."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)):
            yield _name(node.value), node.lineno
        elif isinstance(node, ast.AugAssign):
            yield _name(node.target), node.lineno
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
            yield _name(node.func.value), node.lineno


def _globals_rebound(tree: ast.Module) -> Iterator[tuple[str, int]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            yield from ((name, node.lineno) for name in node.names)


def violations(root: Path) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        lines = ["", *source.splitlines()]
        problems: list[tuple[str, str]] = list(_caches(tree, lines))
        containers = _containers(tree)
        for name, line in _mutated(tree):
            if name in containers:
                problems.append((name, f"line {line}: the module-level {name} (line {containers[name]}) is mutated"))
        problems += [(name, f"line {line}: the module-level {name} is rebound from a function")
                     for name, line in _globals_rebound(tree)]
        for name, problem in problems:
            if (relative, name) not in ALLOWED:
                found.append(f"{relative}: {problem}")
    return sorted(set(found))


def test_server_keeps_no_module_level_state_outside_the_allow_list() -> None:
    assert violations(SERVER) == []


def test_the_allow_list_names_only_what_exists() -> None:
    for (relative, name), why in ALLOWED.items():
        assert why
        text = (SERVER / relative).read_text(encoding="utf-8")
        assert name.split(".")[-1] in text, (relative, name)


PLANTED = """\
import functools
from functools import cache, lru_cache

_SEEN = {}
_ORDER: list[str] = []
_FLAG = False
CONSTANT = {"a": 1}  # never mutated: fine


@functools.cache
def parsed(text):
    _SEEN[text] = True
    _ORDER.append(text)
    return text


@lru_cache(maxsize=None)
def unbounded(text):
    return text


@lru_cache(maxsize=64)
def bounded_without_a_reason(text):
    return text


@functools.lru_cache(maxsize=64)  # one per release: ten of them
def bounded(text):
    return text


class Owner:
    @cache
    def method(self):
        global _FLAG
        _FLAG = True
        return CONSTANT["a"]
"""


@pytest.mark.parametrize("planted", ["flat", "nested"])
def test_a_planted_violation_is_found(tmp_path: Path, planted: str) -> None:
    folder = tmp_path / "pkg" if planted == "flat" else tmp_path / "pkg" / "sub"
    folder.mkdir(parents=True)
    (folder / "state.py").write_text(PLANTED, encoding="utf-8")
    found = "\n".join(violations(tmp_path / "pkg"))
    for expected in ("unbounded cache on parsed", "unbounded cache on unbounded", "unbounded cache on method",
                     "bounded_without_a_reason without a comment", "_SEEN (line 4) is mutated",
                     "_ORDER (line 5) is mutated", "_FLAG is rebound"):
        assert expected in found, found
    assert "on bounded " not in found and "CONSTANT" not in found
