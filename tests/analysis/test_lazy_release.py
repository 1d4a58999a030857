"""The hover on a lazy backend yaml's op shows the IR node class as gen_lazy_tensor of the native_functions.yaml's
release writes it (it used 2.13's for every release): `ToString()` ends `std::move(ss).str()` from torch 2.13,
`ss.str()` before (Release.lazy_to_string_moves_stream, which the release matrix holds to each gen_lazy_tensor)."""

from __future__ import annotations

import pytest

from opgen_lsp.analysis.backend import hover
from opgen_lsp.analysis.lazy import LazySettings
from opgen_lsp.index.backend import check_backend
from opgen_lsp.index.native import NativeParser, TagsParser
from opgen_lsp.releases import RELEASES, Release

TAGS = "- tag: pointwise\n  desc: Pointwise operators.\n"
NATIVE = """\
- func: leaky(Tensor self, Scalar slope=0.01) -> Tensor
  dispatch:
    CPU, CUDA: leaky
  tags: pointwise
"""
LAZY = "backend: XLA\ncpp_namespace: my_lazy\nfull_codegen:\n- leaky\n"


@pytest.mark.parametrize("release", RELEASES, ids=lambda r: r.version)
def test_lazy_hover_is_the_release_ir_class(release: Release) -> None:
    native = NativeParser(release=release).parse(NATIVE, TagsParser().parse(TAGS).names)
    # (2.15's gen.py also wants its CUDA kernels defined in torch_cpu registered somewhere: OPG953, not this op's)
    assert [d.code for d in native.diagnostics if d.code != "OPG953"] == []
    snapshot = check_backend(LAZY, native)
    shown = hover(snapshot, native, 3, 3, lazy=LazySettings())
    assert shown is not None and "class Leaky : public " in shown.markdown
    moved, plain = "return std::move(ss).str();", "return ss.str();"
    assert (moved in shown.markdown, plain in shown.markdown) == ((True, False) if release.lazy_to_string_moves_stream
                                                                  else (False, True))
