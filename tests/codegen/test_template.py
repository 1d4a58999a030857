"""The template engine's substitution rules (and, when torch is installed, agreement with torchgen's)."""

from __future__ import annotations

import random

import pytest

from opgen_lsp.pieces.template import Template, TemplateError


def sub(text: str, **env: object) -> str:
    return Template(text).substitute(env)


def test_plain_and_braced_names() -> None:
    assert sub("a $x b ${x}c", x=1) == "a 1 b 1c"


def test_inline_list_is_comma_joined() -> None:
    assert sub("f($args)", args=["a", 2]) == "f(a, 2)"


def test_comma_before_and_after_only_for_non_empty_lists() -> None:
    assert sub("f(int a${,rest})", rest=["b", "c"]) == "f(int a, b, c)"
    assert sub("f(int a${,rest})", rest=[]) == "f(int a)"
    assert sub("f(${rest,}int a)", rest=["b"]) == "f(b, int a)"
    assert sub("f(x${,rest,}y)", rest=[]) == "f(xy)"


def test_block_list_is_indented_one_element_per_line() -> None:
    assert sub("{\n    $body\n}", body=["a;", "b;\nc;"]) == "{\n    a;\n    b;\n    c;\n}"


def test_block_strips_trailing_whitespace_and_keeps_blank_lines_unindented() -> None:
    assert sub("  $v\nend", v="x  \n\ny\n\n") == "  x\n\n  y\nend"


def test_block_single_value_and_empty_list() -> None:
    assert sub("  $v;", v="one\ntwo") == "  one\n  two;"
    assert sub("a\n  $v\nb", v=[]) == "a\n\nb"


def test_placeholder_at_column_zero_is_a_block() -> None:
    assert sub("$v\n", v="x   ") == "x\n"


def test_text_before_placeholder_makes_it_inline() -> None:
    assert sub("x $v", v="a\n  b  ") == "x a\n  b  "


def test_dollar_without_identifier_is_left_alone() -> None:
    assert sub("cost $5 and $$", x=1) == "cost $5 and $$"


def test_missing_name_is_an_error_value() -> None:
    with pytest.raises(TemplateError, match=r"no value for \$nope"):
        sub("$nope")


def test_placeholders() -> None:
    assert Template("$a ${,b} ${c,}\n  $d").placeholders() == {"a", "b", "c", "d"}


ENVS = [
    {"x": "v"}, {"x": ["a", "b\n  c  "]}, {"x": []}, {"x": 7},
]


@pytest.mark.conformance
def test_agrees_with_codetemplate_on_every_real_template(aten) -> None:
    code_template = pytest.importorskip("torchgen.code_template")
    samples = [" $x\n", "a${,x}b", "${x,}y", "\t$x  \n\n", "q $x ${x}\n  $x\n$x"]
    for path in sorted((aten / "templates").iterdir()):
        samples.append(path.read_text())
    for text in samples:
        names = Template(text).placeholders()
        for env in ENVS:
            full = {n: env["x"] for n in names} | env
            expected = code_template.CodeTemplate(text).substitute(full)
            assert Template(text).substitute(full) == expected, text[:80]


def _block_by_lines(indent: str, value: object, strip_lines: bool) -> str:
    """The block rule of the module's docstring, line by line: each item's lines (split on \\n only, no trailing
    empty line); indented (with strip_lines: lines with text only) and right-stripped, then the block's end."""
    lines = []
    for item in value if isinstance(value, list) else [value]:
        parts = str(item).split("\n")
        lines += parts[:-1] if parts[-1] == "" else parts
    if not strip_lines:
        return "".join(f"{indent}{line}\n" for line in lines).rstrip()
    return "\n".join((indent + line).rstrip() if line.strip() else "" for line in lines).rstrip()


# Whitespace str.rstrip strips (some of it a line break to str.splitlines, none of it to the template), and text.
_PIECES = ["a", "b c", " ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\xa0", "\u3000", "$x"]


@pytest.mark.parametrize("strip_lines", [True, False])
def test_blocks_follow_the_line_rule_on_random_items(strip_lines: bool) -> None:
    rnd = random.Random(32)
    for _ in range(3000):
        value: object = ["".join(rnd.choices(_PIECES, k=rnd.randint(0, 6))) for _ in range(rnd.randint(0, 4))]
        if rnd.random() < 0.2:
            value = value[0] if value else 7  # type: ignore[index]
        indent = rnd.choice(["", " ", "    ", "\t"])
        expected = _block_by_lines(indent, value, strip_lines)
        text = Template(f"{{\n{indent}$v\n}}").substitute({"v": value}, strip_lines)
        assert text == f"{{\n{expected}\n}}", (indent, value)
