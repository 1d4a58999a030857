"""The name grammar (model/cpp_names.py), one allow-list for every name the codegen pastes into C++ or a file
name: `opgen check` and `opgen generate` give the same verdict on a name outside it (an error where the name is,
nothing written, no internal error), whatever character takes it outside: each of the line breaks str.splitlines
knows, `;`, a letter gen.py cannot hash. The template engine breaks lines on `\\n` only."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from opgen_lsp.analysis.lazy.nonnative import read_non_native
from opgen_lsp.cli import main
from opgen_lsp.model.cpp_names import LINE_BREAKS, header_path_problem, identifier_problem
from opgen_lsp.model.schema_parser import parse_schema
from opgen_lsp.pieces.template import Template
from opgen_lsp.releases import DEFAULT

ENTRY = "- func: {func}\n  variants: function\n  dispatch:\n    CPU: abs2_cpu\n"
SPLITLINES_BREAKS = sorted({c for i in range(0x110000) if len(f"a{(c := chr(i))}b".splitlines()) == 2})


def test_the_grammar_knows_every_line_break_str_splitlines_knows():
    assert SPLITLINES_BREAKS == sorted(LINE_BREAKS)


def _source(tmp_path: Path, aten: Path, func: str) -> Path:
    source = tmp_path / "aten"
    (source / "native").mkdir(parents=True)
    (source / "templates").symlink_to(aten / "templates", target_is_directory=True)
    (source / "native" / "tags.yaml").write_bytes((aten / "native" / "tags.yaml").read_bytes())
    quoted = func.encode("unicode_escape").decode("ascii").replace('"', '\\"')
    (source / "native" / "native_functions.yaml").write_text(ENTRY.format(func=f'"{quoted}"'), encoding="utf-8")
    return source


def _check_and_generate(tmp_path: Path, aten: Path, capsys, func: str) -> tuple[str, str]:
    """check's and generate's output on a one-entry native_functions.yaml; both must refuse it and write nothing."""
    source = _source(tmp_path, aten, func)
    assert main(["check", str(source / "native" / "native_functions.yaml")]) == 1
    checked = capsys.readouterr().out
    out = tmp_path / "out"
    assert main(["generate", "-s", str(source), "-d", str(out), "--aoti-install-dir", str(out / "aoti")]) == 1
    generated = capsys.readouterr().err
    assert "internal error" not in generated and not out.exists()
    return checked, generated


@pytest.mark.parametrize("line_break", LINE_BREAKS, ids=[f"U+{ord(c):04X}" for c in LINE_BREAKS])
@pytest.mark.parametrize("where", ["op", "overload"])
def test_a_line_break_in_an_op_or_overload_name_is_one_error_in_check_and_generate(tmp_path: Path, aten, capsys,
                                                                                   line_break: str, where: str):
    name = f"abs2{line_break}#error INJECTED{line_break}x" if where == "op" else \
        f"abs2.x{line_break}#error INJECTED{line_break}//"
    checked, generated = _check_and_generate(tmp_path, aten, capsys, f"{name}(Tensor self) -> Tensor")
    code = {"\n": "OPG140", "\r": "OPG140"}.get(line_break, "OPG142") if where == "op" else "OPG142"
    assert "native_functions.yaml:1:9: error: " in checked and checked.count("error: ") == 1, checked
    assert f"[{code}]" in checked and f"[{code}]" in generated


@pytest.mark.parametrize("func, code, shown", [
    ("abs2\u03c9(Tensor self) -> Tensor", "OPG144", "which is not Latin-1: gen.py hashes operator names"),
    ("abs2.x;y(Tensor self) -> Tensor", "OPG143", "overload name 'x;y' has ';', which no C++ identifier has"),
    ("abs2(Tensor self, int a){b) -> Tensor", "OPG143", "argument name 'a){b' has ')'"),
    ("my-ns::abs2(Tensor self) -> Tensor", "OPG143", "namespace 'my-ns' has '-'"),
])
def test_a_name_outside_the_grammar_is_an_error_in_check_and_generate(tmp_path: Path, aten, capsys, func: str,
                                                                      code: str, shown: str):
    checked, generated = _check_and_generate(tmp_path, aten, capsys, func)
    assert "error: " in checked and f"[{code}]" in checked and shown in checked
    assert f"[{code}]" in generated


def test_odd_but_legal_names_stay_warnings():
    """Names torchgen turns into C++ GCC and Clang compile: '$' and Latin-1 letters (gen.py hashes them)."""
    for func in ("\u00e4bs(Tensor self) -> Tensor", "a$bs(Tensor self) -> Tensor", "abs(Tensor self, int d$) -> Tensor"):
        parsed = parse_schema(func)
        assert parsed.schema is not None and [i.code for i in parsed.issues] == ["OPG207"], func


@pytest.mark.parametrize("line_break", LINE_BREAKS, ids=[f"U+{ord(c):04X}" for c in LINE_BREAKS])
def test_the_template_engine_breaks_lines_on_newline_only(line_break: str):
    template = Template("{\n  $body\n}\n")
    value = f"a{line_break}#error INJECTED"
    expected = "{\n  a" + line_break + "#error INJECTED\n}\n"
    if line_break == "\n":
        expected = "{\n  a\n  #error INJECTED\n}\n"
    assert template.substitute({"body": value}) == expected
    assert template.substitute({"body": [value, "b"]}) == expected.replace("\n}", "\n  b\n}")
    assert template.substitute({"body": value}, strip_lines=False).count("\n") == expected.count("\n")


def test_paths_in_include_lines_are_an_allow_list():
    allowed = ["out", "my dir/x", "\u00e4\u00f6/\u65e5\u672c", "a\u00a0b", "a-b_c.d+e~f@g,h;i(j)[k]{l}#m%n", "C:\\x"]
    assert [header_path_problem(p) for p in allowed] == [None] * len(allowed)
    refused = {c for c in LINE_BREAKS} | {"\0", "\t", "\x7f", '"', "<", ">", "\u202e", "\u200b", "\ufeff", "\ue000"}
    for c in sorted(refused):
        assert header_path_problem(f"out{c}x") is not None, repr(c)
    assert unicodedata.category("\ue000") == "Co"


def test_identifiers_are_an_allow_list():
    for c in sorted(set(LINE_BREAKS) | {"\u200b", "\u202e", "-", ";", "{", "(", "#", "/", "\\", "'", '"'}):
        assert identifier_problem(f"a{c}b") is not None, repr(c)
    assert identifier_problem("a\u2028b") == "name 'a\\u2028b' has a line break (U+2028), which no C++ identifier has"


BACKEND = "backend: XLA\ncpp_namespace: torch_xla\nsupported:\n- abs\n"


@pytest.mark.parametrize("line_break", ["\u2028", "\u2029", "\x85", "\x0b", "\x0c"], ids=["2028", "2029", "0085", "VT", "FF"])
def test_generate_backend_refuses_an_output_folder_with_a_unicode_line_break(tmp_path: Path, capsys, monkeypatch,
                                                                               line_break: str):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "xla.yaml").write_text(BACKEND)
    out = f"out{line_break}#error INJECTED{line_break}"
    assert main(["generate-backend", "-s", "xla.yaml", "-o", out]) == 2
    err = capsys.readouterr().err
    assert f"the output folder (-o) {out!r} has a line break (U+{ord(line_break):04X})" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["xla.yaml"]


@pytest.mark.parametrize("item, shown", [
    ("- func: mine(Tensor self, int a;b) -> Tensor", "argument name 'a;b' has ';'"),
    ('- func: "mine.x\\u2028#error INJECTED(Tensor self) -> Tensor"', "a schema must be on one line"),
    ('- func: mine(Tensor self) -> Tensor\n  opkind: "ltc_cast\\u2028#error INJECTED"', "opkind 'ltc_cast\\u2028"),
])
def test_a_lazy_non_native_name_is_in_the_grammar(item: str, shown: str):
    """gen_lazy_tensor pastes a non_native op's names and its opkind into LazyIr.h as they are."""
    ops, found = read_non_native(f"backend: XLA\ncpp_namespace: x\nnon_native:\n{item}\n", DEFAULT)
    assert ops == () and [d.code for d in found] == ["OPG536"] and shown in found[0].message, found
    ops, found = read_non_native("backend: XLA\ncpp_namespace: x\nnon_native:\n- func: mine(Tensor self) -> Tensor\n"
                                 "  opkind: at::prim::Constant\n", DEFAULT)
    assert len(ops) == 1 and found == ()
