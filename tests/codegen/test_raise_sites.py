"""Every raise/assert under server/codegen/ (and the pieces and the input reader below it) is in raise_sites.SITES,
and each is met as the list says: a RULE's
inputs get a located error from `opgen check` and exit 1 from `opgen generate` with no traceback; a HANDLED
site's catcher catches that exception. (tests/conformance/test_raise_sites_torchgen.py: gen.py fails on the same
inputs.)"""

from __future__ import annotations

import ast
import importlib
import itertools
import typing
from collections.abc import Iterator
from pathlib import Path

import pytest

from opgen_lsp.cli import main
from opgen_lsp.index.native import NativeParser, TagsParser
from opgen_lsp.model.codegen_rules import unconvertible_argument, untranslatable
from opgen_lsp.model.schema_parser import parse_type
from opgen_lsp.pieces.api import cpp
from opgen_lsp.pieces.api.types import ApiOptions
from opgen_lsp.pieces.dest.functionalization import FunctionalizationError, _has_symbolic
from opgen_lsp.releases import DEFAULT, resolve

from .raise_sites import GUARDED, HANDLED, INPUTS, RELEASE_INPUTS, RULE, SITES

pytestmark = pytest.mark.slow  # (every raise site of the emitters, run: CI runs them; the not-slow loop does not)

SERVER = Path(__file__).resolve().parents[2] / "server"
# The code generator, and what it stands on that moved below it: the per-op pieces, the input reader, the checks.
WALKED = ("codegen", "pieces", "index/inputs.py", "analysis/shims.py", "analysis/autograd", "analysis/backend_kernels.py",
          "analysis/lazy", "model/native_aot.py")
TAGS = "- tag: view_copy\n  desc: a copy of a view\n- tag: core\n  desc: core aten\n"


def _walk(node: ast.AST, scope: list[str]) -> Iterator[tuple[str, ast.AST]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield from _walk(child, scope + [child.name])
            continue
        if isinstance(child, (ast.Raise, ast.Assert)):
            yield ".".join(scope) or "<module>", child
        yield from _walk(child, scope)


def _exception_name(node: ast.AST) -> str:
    if isinstance(node, ast.Assert):
        return "assert"
    exc = node.exc  # type: ignore[attr-defined]
    if exc is None:
        return "raise"
    return ast.unparse(exc.func if isinstance(exc, ast.Call) else exc)


def raise_sites() -> dict[str, str]:
    """Every site's name (see raise_sites.py) -> the module it is in."""
    out = {}
    walked = (SERVER / name for name in WALKED)
    for path in sorted(p for w in walked for p in (w.rglob("*.py") if w.is_dir() else (w,))):
        rel = path.relative_to(SERVER)
        module = "opgen_lsp." + ".".join(rel.with_suffix("").parts)
        for scope, node in _walk(ast.parse(path.read_text(encoding="utf-8")), []):
            out[f"{rel.as_posix()}:{scope}:{_exception_name(node)}"] = module
    return out


def test_every_raise_and_assert_is_listed() -> None:
    found = raise_sites()
    assert len(found) > 90  # the walk sees the codegen (it had 100 sites when the list was written)
    assert sorted(set(found) - set(SITES)) == [], "a raise/assert under server/codegen/ missing from raise_sites.py"
    assert sorted(set(SITES) - set(found)) == [], "raise_sites.py lists a site that is gone"


def _function(module: str, qualname: str) -> ast.AST:
    source = Path(importlib.import_module(module).__file__).read_text(encoding="utf-8")  # type: ignore[arg-type]
    node: ast.AST = ast.parse(source)
    for name in qualname.split("."):
        node = next(n for n in ast.walk(node) if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == name)
    return node


@pytest.mark.parametrize("name", sorted(n for n, s in SITES.items() if s.kind == HANDLED))
def test_a_handled_exception_is_caught_where_the_list_says(name: str) -> None:
    path, _, exception = name.split(":")
    raising = importlib.import_module(raise_sites()[name])
    exc_class = eval(exception, vars(raising))  # noqa: S307  (a name from our own source)
    if not isinstance(exc_class, type):  # a function building the exception: its return type
        exc_class = typing.get_type_hints(exc_class)["return"]
    catcher_module, qualname = SITES[name].catcher.split(":")
    namespace = vars(importlib.import_module(catcher_module))
    caught = [eval(ast.unparse(h.type), namespace) for h in ast.walk(_function(catcher_module, qualname))  # noqa: S307
              if isinstance(h, ast.ExceptHandler) and h.type is not None]
    assert any(issubclass(exc_class, c) for c in caught), f"{SITES[name].catcher} catches none of {exc_class.__mro__}"


def _codes_of(input_name: str) -> set[str]:
    return {s.code for s in SITES.values() if s.kind in (RULE, GUARDED) and input_name in s.inputs}


# Every input: name -> (torch release, native_functions.yaml text, where the error starts).
ALL_INPUTS = {**{name: (DEFAULT.series, text, marker) for name, (text, marker) in INPUTS.items()},
              **RELEASE_INPUTS}


def test_every_input_is_used_and_every_rule_has_one() -> None:
    assert {i for s in SITES.values() for i in s.inputs} == set(ALL_INPUTS)
    assert all(s.inputs for s in SITES.values() if s.kind == RULE)


def _position(text: str, marker: str) -> tuple[int, int]:
    offset = text.index(marker)
    return text.count("\n", 0, offset), offset - (text.rfind("\n", 0, offset) + 1)


@pytest.mark.parametrize("input_name", sorted(ALL_INPUTS))
def test_check_reports_it_at_the_line_that_is_wrong(input_name: str) -> None:
    version, text, marker = ALL_INPUTS[input_name]
    release = resolve(version, "test").release  # type: ignore[union-attr]
    snapshot = NativeParser(release=release).parse(text, TagsParser().parse(TAGS).names)
    for code in _codes_of(input_name):
        at = [(d.span.start_line, d.span.start_col) for d in snapshot.diagnostics if d.code == code and d.is_error]
        assert _position(text, marker) in at, (code, [(d.code, d.message) for d in snapshot.diagnostics])


@pytest.mark.parametrize("input_name", sorted(ALL_INPUTS))
def test_generate_exits_1_with_the_located_error_and_no_traceback(input_name: str, tmp_path: Path, capsys) -> None:
    version, text, marker = ALL_INPUTS[input_name]
    (tmp_path / "native").mkdir()
    native = tmp_path / "native" / "native_functions.yaml"
    native.write_text(text, encoding="utf-8")
    (tmp_path / "native" / "tags.yaml").write_text(TAGS, encoding="utf-8")
    assert main(["generate", "-s", str(tmp_path), "-d", str(tmp_path / "out"), "-j", "1",
                 "--torch-version", version]) == 1
    said = capsys.readouterr()
    line, col = _position(text, marker)
    assert f"{native}:{line + 1}:{col + 1}: error: " in said.err
    assert "Traceback" not in said.out + said.err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.cpp"))



def test_has_symbolic_answers_every_symint_type_the_check_lets_through() -> None:
    """_has_symbolic (a view op's ViewMeta: are its SymInt-like arguments symbolic?) knows the C++ type of every
    SymInt-like argument type OPG208 accepts, up to three wrappings of optional, list and sized list."""
    answered, refused = [], []
    for wrappers in itertools.chain.from_iterable(itertools.product(("?", "[]", "[2]"), repeat=n) for n in range(4)):
        t, _, _ = parse_type("SymInt" + "".join(wrappers))
        if t is None:
            continue
        if untranslatable(t) or unconvertible_argument(t):
            refused.append(str(t))
            continue
        ctype = cpp.argumenttype_type(t, mutable=False, binds="x", options=ApiOptions(False, False, DEFAULT.cpp_spelling),
                                        symint=True)
        try:
            _has_symbolic("x", ctype.type, DEFAULT.cpp_spelling)
        except FunctionalizationError:
            pytest.fail(f"'{t}' passes OPG208 but _has_symbolic has no test for {ctype.type.cpp_type(DEFAULT.cpp_spelling)}")
        answered.append(str(t))
    assert {"SymInt", "SymInt?", "SymInt[]", "SymInt[2]", "SymInt[]?"} <= set(answered)
    assert {"SymInt?[]", "SymInt[][]"} <= set(refused)
