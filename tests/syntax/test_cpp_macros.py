"""cpp_macros: expanding the macro invocations of a statement head, and where each piece came from."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from opgen_lsp.syntax.cpp_macros import collect_macros, expand_invocations, invoked
from opgen_lsp.syntax.cpp_scan import scan

MACROS = collect_macros("""\
#define LIST(_) _(a) _(b)
#define NAME(x) x##_kernel
#define DEF(x) Tensor NAME(x)(const Tensor& s);
#define VARIADIC(name, ...) Tensor name(__VA_ARGS__);
#define SELF(x) SELF(x) x
""")


def flat(text: str) -> str:
    """text with its runs of blanks made one (an expansion is set apart from its neighbours by blanks)."""
    return re.sub(r"\s+\(", "(", " ".join(text.split()))


def test_a_list_macro_expands_its_items_and_they_map_to_the_invocation() -> None:
    head = "static LIST(DEF) Tensor after()"
    e = expand_invocations(head, MACROS)
    assert flat(e.text) == "static Tensor a_kernel(const Tensor& s); Tensor b_kernel(const Tensor& s); " \
                                       "Tensor after()"
    assert e.origin(e.text.index("a_kernel")) == e.origin(e.text.index("b_kernel")) == head.index("LIST")
    assert e.origin(e.text.index("static")) == 0 and e.origin(e.text.index("after")) == head.index("after")


def test_variadic_arguments_and_a_macro_disabled_inside_itself() -> None:
    assert flat(expand_invocations("VARIADIC(fan, int a, int b)", MACROS).text) == "Tensor fan(int a, int b);"
    assert flat(expand_invocations("SELF(y)", MACROS).text) == "SELF(y) y"


def test_skipped_and_unknown_names_stay_as_written() -> None:
    head = "TORCH_IMPL_FUNC(x_out) (const Tensor& s) UNKNOWN(z)"
    skip = frozenset({"TORCH_IMPL_FUNC"})
    assert not invoked(head, {**MACROS, "TORCH_IMPL_FUNC": MACROS["NAME"]}, skip)
    assert expand_invocations(head, MACROS, skip).text == head
    assert expand_invocations("LIST(DEF", MACROS).text == "LIST(DEF"  # never closed: no invocation


PIECES = st.sampled_from(["#define ", "M(x)", "N(a, ...)", " x##_k", " M(", "N(", "(", ")", "{", "}", ";", ",",
                          "\\\n", "\n", " ", "static ", "Tensor ", "f(const Tensor& s)", "namespace at::native ",
                          "__VA_ARGS__", "/*", "*/", "//", "\"", "TORCH_IMPL_FUNC(", "x"])


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECES, max_size=60))
def test_scanning_any_mix_of_macros_never_raises(pieces: list[str]) -> None:
    text = "".join(pieces)
    for symbol in scan(text):
        assert 0 <= symbol.line <= text.count("\n")
