"""Native-AOT declarations (torch/_native/ops/<op>/aot.py), read as gen.py 2.15 reads them, without running them.

gen.py imports each aot.py and keeps three facts of it: the op (ATEN_OP), its dispatch key (DISPATCH_KEY) and
whether its kernels are the op's implementation (UNCONDITIONAL); on the way it validates the module (the constants
are strings, the required functions exist with their arities, ARCHS names real architectures, the precompile grid
is a non-empty list of dicts) and fails on the first violation. opgen never executes a repository's Python: it
reads each module with `ast`. What the syntax alone settles is read or refused as gen.py would; what only running
the module would tell (a constant computed, a family module's declarations(), a grid built by code) leaves the
declarations unread, and the files that depend on them are named, not guessed.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterable
from dataclasses import field
from typing import cast

from ..diagnostics import Diagnostic, diag
from ..frozen import record
from ..input_file import UnreadableFile, read_text
from ..syntax import python_source
from ..text import Span
from . import dispatch as dk

_REQUIRED_CONSTANTS = ("ATEN_OP", "DISPATCH_KEY", "KERNEL_MODULE")
# name -> positional arity (None: not checked), as gen.py's loader checks them
_REQUIRED_FUNCTIONS: dict[str, int | None] = {"kernel_precompile_grid": 0, "covered_axes": None, "cpp_dispatch": 1,
                                              "cpp_launch": 2}
_OPTIONAL_FUNCTIONS = {"cpp_dispatch_prelude": 0, "cpp_helpers": 0, "cpp_covers": 0}
_SM = re.compile(r"sm_\d+a?")
_SM_SPELLING = re.compile(r"sm_([1-9][0-9]{1,2})a?")
_KNOWN_MAJORS = range(3, 13)
_KNOWN_ARCHES = ("sm_90", "sm_90a", "sm_100", "sm_100a", "sm_103", "sm_103a")  # the default ARCHS


@record
class NativeAotDeclaration:
    """One declared (op, dispatch key): op is a base name ("topk") or name.overload ("gt.Tensor")."""

    op: str
    dispatch_key: str
    unconditional: bool = False
    path: str = field(default="", compare=False)  # its aot.py, where gen.py's errors about it are placed

    @property
    def decl_id(self) -> str:
        return self.op.replace(".", "_")

    @property
    def stub_name(self) -> str:
        return f"{self.decl_id}_aot_stub"

    @property
    def fn_type_name(self) -> str:
        return f"{self.decl_id}_aot_fn"


@record
class NativeAot:
    """The declarations of one folder, in gen.py's order of discovery; `unread`: why opgen cannot read them
    without running Python ("" when it did); `errors`: what gen.py fails on, each at its line of its aot.py."""

    declarations: tuple[NativeAotDeclaration, ...] = ()
    unread: str = ""
    errors: tuple[tuple[str, Diagnostic], ...] = ()


NONE = NativeAot()


class _Unread(Exception):
    """The module says something only running it would tell."""


class _Refused(Exception):
    """gen.py's loader refuses the module."""

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(message)
        self.line = line


@record
class _Binding:
    node: ast.stmt
    value: object  # the literal's value, or a FunctionDef / ClassDef node


_NOT_LITERAL = object()


def _module_bindings(tree: ast.Module) -> dict[str, _Binding]:
    """Each module-level name bound once, by a literal, a def or a class. A name bound twice or by anything else
    (an import, a computed value), or a module that can bind names no statement shows (a star import, globals(),
    exec), raises _Unread when a name gen.py reads is concerned: raised by the caller, who knows which names."""
    bound: dict[str, _Binding] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            _bind(bound, node.name, _Binding(node, node))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            try:
                value: object = ast.literal_eval(node.value) if node.value is not None else _NOT_LITERAL
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                value = _NOT_LITERAL
            for target in targets:
                for name in _names(target):
                    _bind(bound, name, _Binding(node, value if isinstance(target, ast.Name) else _NOT_LITERAL))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name == "*":
                    raise _Unread("a star import binds names opgen cannot see")
                _bind(bound, (alias.asname or alias.name).split(".")[0], _Binding(node, _NOT_LITERAL))
        elif not isinstance(node, (ast.Expr, ast.Pass)) or _calls_dynamic(node):
            for name in _statement_names(node):
                _bind(bound, name, _Binding(node, _NOT_LITERAL))
        if _calls_dynamic(node) and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            raise _Unread("module-level code that may bind names (globals(), setattr, exec)")
    return bound


def _bind(bound: dict[str, _Binding], name: str, binding: _Binding) -> None:
    if name in bound:  # bound again: only running the module tells which wins where
        bound[name] = _Binding(binding.node, _NOT_LITERAL)
    else:
        bound[name] = binding


def _names(target: ast.expr) -> list[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def _statement_names(node: ast.stmt) -> list[str]:
    """Names a compound statement (if, for, with, try, ...) may bind at module level."""
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)] + \
        [n.name for n in ast.walk(node) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]


def _calls_dynamic(node: ast.stmt) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and \
                sub.func.id in ("globals", "setattr", "exec", "eval", "vars", "__import__"):
            return True
    return False


def _known(bound: dict[str, _Binding], name: str) -> _Binding | None:
    """The binding of a name gen.py reads: None when the module does not bind it; _Unread when only running it
    would tell its value."""
    binding = bound.get(name)
    if binding is not None and binding.value is _NOT_LITERAL:
        raise _Unread(f"{name} is not a literal (line {binding.node.lineno})")
    return binding


def _positional_arity(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    return len(function.args.posonlyargs) + len(function.args.args)


def _check_function(bound: dict[str, _Binding], name: str, arity: int | None, required: bool, path: str) -> None:
    binding = _known(bound, name)
    if binding is None or binding.value is None:
        if required:
            raise _Refused(f"{path}:  missing required function {name}()")
        return
    value = binding.value
    if isinstance(value, ast.ClassDef):
        raise _Unread(f"{name} is a class (line {value.lineno})")
    if not isinstance(value, (ast.FunctionDef, ast.AsyncFunctionDef)):
        if required:
            raise _Refused(f"{path}:  missing required function {name}()", binding.node.lineno)
        raise _Refused(f"{path}: {name} is not a function", binding.node.lineno)
    if value.decorator_list:
        raise _Unread(f"{name} is decorated (line {value.lineno})")
    if arity is not None and _positional_arity(value) != arity:
        kind = "per-op (no-arg)" if arity == 0 else "per-point (spec-taking)"
        raise _Refused(f"{path}: {name} must be {kind}, expected {arity} positional parameter(s), got "
                       f"{_positional_arity(value)}", value.lineno)


def _check_archs(bound: dict[str, _Binding], path: str) -> None:
    binding = _known(bound, "ARCHS")
    archs: object = _KNOWN_ARCHES if binding is None else binding.value
    line = binding.node.lineno if binding is not None else 0
    try:
        values = tuple(cast("Iterable[object]", archs))  # (as gen.py's archs_of: a str is its characters)
    except TypeError:
        raise _Refused(f"{path}:  ARCHS must be a non-empty sequence of sm strings (e.g. ('sm_90a', 'sm_100a')), "
                       f"got {archs!r}", line) from None
    if not values or not all(isinstance(a, str) and _SM.fullmatch(a) for a in values):
        raise _Refused(f"{path}:  ARCHS must be a non-empty sequence of sm strings (e.g. ('sm_90a', 'sm_100a')), "
                       f"got {values!r}", line)
    for arch in values:
        spelled = _SM_SPELLING.fullmatch(str(arch))
        if spelled is None:
            raise _Refused(f"{path}:  ARCHS entry {arch!r}: cannot read a compute capability from arch {arch!r}",
                           line)
        major = int(spelled.group(1)) // 10
        if major not in _KNOWN_MAJORS:
            raise _Refused(f"{path}:  ARCHS entry {arch!r}: outside the known range of compute capabilities", line)


def _check_grid(bound: dict[str, _Binding], path: str) -> None:
    """kernel_precompile_grid() must return a non-empty list of dicts: settled when its body is one `return`
    of a list display whose items are dict displays (or unpacked comprehensions of them)."""
    function = bound["kernel_precompile_grid"].value
    assert isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
    body = [s for s in function.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or not isinstance(body[0].value, ast.List):
        raise _Unread(f"kernel_precompile_grid() computes its grid (line {function.lineno})")
    items = body[0].value.elts
    if not items:
        raise _Refused(f"{path}:  kernel_precompile_grid() must return a non-empty list", body[0].lineno)
    for item in items:
        if isinstance(item, ast.Dict):
            continue
        if isinstance(item, ast.Starred) and isinstance(item.value, (ast.GeneratorExp, ast.ListComp)) \
                and isinstance(item.value.elt, ast.Dict):
            continue
        if isinstance(item, ast.Starred):
            raise _Unread(f"kernel_precompile_grid() unpacks what only running it shows (line {item.lineno})")
        raise _Refused(f"{path}:  grid entries must be dicts", item.lineno)
    if all(isinstance(item, ast.Starred) for item in items):  # each comprehension may be empty
        raise _Unread(f"kernel_precompile_grid()'s list may be empty (line {function.lineno})")


def read_declaration(text: str, path: str) -> NativeAotDeclaration:
    """One aot.py, as gen.py's loader validates it. Raises _Unread or _Refused."""
    try:
        tree = python_source.parse(text, filename=path)
    except SyntaxError as exc:
        raise _Refused(f"{path}: {exc.msg}", exc.lineno or 0) from None
    bound = _module_bindings(tree)
    if "declarations" in bound:
        raise _Unread("a family module: its declarations() builds them")
    constants = {}
    for name in _REQUIRED_CONSTANTS:
        binding = _known(bound, name)
        if binding is None or not isinstance(binding.value, str):
            raise _Refused(f"{path}:  missing or non-str constant {name}", binding.node.lineno if binding else 0)
        constants[name] = binding.value
    for name, arity in _REQUIRED_FUNCTIONS.items():
        _check_function(bound, name, arity, True, path)
    for name, arity in _OPTIONAL_FUNCTIONS.items():
        _check_function(bound, name, arity, False, path)
    _check_archs(bound, path)
    _check_grid(bound, path)
    unconditional = _known(bound, "UNCONDITIONAL")
    if unconditional is not None and not isinstance(unconditional.value, bool):
        raise _Refused(f"{path}: UNCONDITIONAL must be a bool, got {unconditional.value!r}", unconditional.node.lineno)
    if dk.parse_dispatch_key(constants["DISPATCH_KEY"]) is None:
        line = bound["DISPATCH_KEY"].node.lineno
        raise _Refused(f"{path}: unknown dispatch key {constants['DISPATCH_KEY']!r}", line)
    return NativeAotDeclaration(constants["ATEN_OP"], constants["DISPATCH_KEY"],
                                bool(unconditional.value) if unconditional is not None else False, path)


def _refusal(path: str, message: str, line: int) -> tuple[str, Diagnostic]:
    return path, diag("OPG967", Span.point(max(line - 1, 0), 0), message.removeprefix(f"{path}: ").strip())


def read_native_aot(folder: str) -> NativeAot:
    """The declarations under `folder` (gen.py's --native-aot-ops-dir), each <entry>/aot.py in sorted order; an
    empty folder name, or no such folder, declares none."""
    if not folder or not os.path.isdir(folder):
        return NONE
    folder = os.path.normpath(folder)  # (gen.py's default climbs from aten/src/ATen: named without the ..)
    try:
        entries = sorted(os.listdir(folder))
    except OSError as exc:
        return NativeAot(unread=f"{folder}: {exc.strerror or exc}")
    found: list[NativeAotDeclaration] = []
    for entry in entries:
        path = os.path.join(folder, entry, "aot.py")
        if not os.path.exists(path):
            continue
        try:
            declaration = read_declaration(read_text(path), path)
        except UnreadableFile as exc:
            return NativeAot(unread=str(exc))
        except _Unread as exc:
            return NativeAot(unread=f"{path}: {exc} (opgen reads declarations without running them)")
        except _Refused as exc:
            return NativeAot(errors=(_refusal(path, str(exc), exc.line),))
        if any((d.dispatch_key, d.op) == (declaration.dispatch_key, declaration.op) for d in found):
            message = f"duplicate declaration for {declaration.op}@{declaration.dispatch_key}"
            return NativeAot(errors=(_refusal(path, message, 0),))
        found.append(declaration)
    return NativeAot(tuple(found))
