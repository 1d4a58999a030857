"""cpp_scan.scan on text with Windows line ends (CRLF) finds what it finds on the same text with LF.

The kernel index reads files with universal newlines, so only direct callers of scan() and
file_macros() see CRLF; their contract (see _lf) is that a continuation line ending in
backslash, CR, LF continues a #define as backslash, LF does.
"""

from __future__ import annotations

from opgen_lsp.syntax.cpp_scan import DEFINITION, file_macros, scan

SOURCE = (
    "namespace at::native {\n"
    "#define DEFINE_K(name)              \\\n"
    "  Tensor name(const Tensor& x) {    \\\n"
    "    return x;                       \\\n"
    "  }\n"
    "DEFINE_K(foo_kernel)\n"
    "Tensor plain_kernel(const Tensor& x) { return x; }\n"
    "}\n"
)


def _symbols(text: str) -> list[tuple]:
    return [(s.name, s.kind, s.namespace, s.line, s.col) for s in scan(text)]


def test_a_multi_line_macro_in_a_crlf_file_defines_its_kernels() -> None:
    lf = _symbols(SOURCE)
    assert ("foo_kernel", DEFINITION, "at::native", 5, 0) in lf
    assert _symbols(SOURCE.replace("\n", "\r\n")) == lf


def test_file_macros_of_a_crlf_header_keep_continuation_lines() -> None:
    lf = file_macros(SOURCE)["DEFINE_K"]
    crlf = file_macros(SOURCE.replace("\n", "\r\n"))["DEFINE_K"]
    assert crlf.params == lf.params and crlf.body.split() == lf.body.split()
