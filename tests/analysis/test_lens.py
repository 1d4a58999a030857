"""Code lenses: short titles that fit a narrow editor, the long form in the tooltip."""

from __future__ import annotations

from opgen_lsp.analysis.lens import TITLE_CHARS, op_lenses, short_list
from opgen_lsp.index.native import NativeParser
from opgen_lsp.releases import DEFAULT

KEYS = ["CompositeExplicitAutograd", "NestedTensorCPU", "NestedTensorCUDA", "SparseCPU", "SparseCUDA"]
NATIVE = ("- func: wide(Tensor self) -> Tensor\n  dispatch:\n"
          + "".join(f"    {key}: wide_{key.lower()}\n" for key in KEYS)
          + "- func: narrow2(Tensor self) -> Tensor\n  dispatch:\n    CPU, CUDA: narrow2\n")


def test_short_list_keeps_what_fits_and_counts_the_rest() -> None:
    assert short_list(["CPU", "CUDA"], 27) == "CPU, CUDA"
    assert short_list(KEYS, 27) == "CompositeExplicitAutograd +4"
    assert short_list(["CPU", "CUDA", "MPS", "SparseCPU", "SparseCUDA", "Meta"], 27) == "CPU, CUDA, MPS +3"
    assert short_list(["CompositeExplicitAutogradNonFunctional"], 27) == "CompositeExplicitAutogradNonFunctional"


def test_a_lens_title_is_short_and_its_tooltip_names_every_kernel() -> None:
    snapshot = NativeParser(release=DEFAULT).parse(NATIVE, frozenset())
    lenses = [lens for lens in op_lenses(snapshot) if lens.command is None]
    wide, narrow = lenses
    assert wide.title == "kernels: CompositeExplicitAutograd +4" and len(wide.title) <= TITLE_CHARS + 2
    assert wide.tooltip == "implemented by " + ", ".join(KEYS)
    assert (narrow.title, narrow.tooltip) == ("kernels: CPU, CUDA", "implemented by CPU, CUDA")
