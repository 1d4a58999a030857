"""The subset of native_functions.yaml that generate-backend and generate-lazy parse (codegen/backend/subset.py):
the release's list of CUDA kernels defined in torch_cpu (torch 2.15) brings in every entry that could register one,
so the subset is clean when the whole file is, and is parsed once."""

from __future__ import annotations

from pathlib import Path

import pytest

from opgen_lsp.codegen.backend.subset import subset_text
from opgen_lsp.index.native import NativeParser, TagsParser
from opgen_lsp.releases import resolve

RELEASE_2_15 = Path.home() / ".cache" / "opgen" / "torchgen" / "2.15.0" / "torchgen" / "packaged" / "ATen" / "native"


def test_the_kernel_list_brings_in_the_entries_that_name_its_kernels() -> None:
    text = ("- func: a(Tensor self) -> Tensor\n  dispatch:\n    CPU: a_cpu\n"
            "- func: b(Tensor self) -> Tensor\n  dispatch:\n    CUDA: listed_kernel\n"
            "- func: b.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n    CPU: b_out\n"
            "- func: c(Tensor self) -> Tensor\n")
    assert subset_text(text, ["a"], None) == text.split("- func: b(")[0]
    picked = subset_text(text, ["a"], None, ["listed_kernel"])
    assert "- func: b(" in picked and "- func: b.out(" in picked and "- func: c(" not in picked


@pytest.mark.skipif(not (RELEASE_2_15 / "native_functions.yaml").is_file(),
                    reason="torch 2.15.0's torchgen is not in the cache: python3 tools/torchgen_release.py 2.15.0")
def test_on_torch_2_15_the_subset_for_torch_xla_is_as_clean_as_the_whole_file() -> None:
    release = resolve("2.15.0", "test").release
    text = (RELEASE_2_15 / "native_functions.yaml").read_text(encoding="utf-8")
    tags = TagsParser().parse((RELEASE_2_15 / "tags.yaml").read_text(encoding="utf-8")).names
    whole = NativeParser(release=release).parse(text, tags)
    listed = ["add.Tensor", "abs"]
    part = NativeParser(release=release).parse(subset_text(text, listed, "XLA", release.cuda_kernels_in_torch_cpu), tags)
    without = NativeParser(release=release).parse(subset_text(text, listed, "XLA"), tags)
    assert [d.code for d in whole.diagnostics if d.is_error] == []
    assert [d.code for d in part.diagnostics if d.is_error] == []
    assert len(part.document.entries) < len(whole.document.entries) // 4
    assert "OPG953" in {d.code for d in without.diagnostics}, "without the list the subset would be re-parsed whole"
