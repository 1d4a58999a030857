"""torch 2.15's gen.py checks its list of CUDA kernels defined in torch_cpu before generating: each must be
registered to a CUDA-family dispatch key. opgen's OPG953 against torchgen 2.15.0 on edits of 2.15's own
native_functions.yaml, in one test: the same verdict, and opgen's error where the edit is."""

from __future__ import annotations

from pathlib import Path

import pytest

from opgen_lsp.index.native import NativeParser, TagsParser

from .test_release_matrix import release, release_folder, verdicts

pytestmark = [pytest.mark.versions, pytest.mark.slow]

_TRITON = ("- func: _triton_multi_head_attention(Tensor query, Tensor key, Tensor value, int embed_dim, int num_head, "
           "Tensor qkv_weight, Tensor qkv_bias, Tensor proj_weight, Tensor proj_bias, Tensor? mask=None) -> Tensor\n"
           "  variants: function\n  dispatch:\n    CUDA: triton_multi_head_attention\n"
           "  autogen: _triton_multi_head_attention.out\n\n")
# name -> (text replaced, its replacement, the 1-based line opgen's OPG953 is on after the edit; None: accepted)
EDITS: dict[str, tuple[str, str, int | None]] = {
    "renamed": ("    CUDA: count_nonzero_cuda\n", "    CUDA: count_nonzero_cuda_v2\n", 1840),
    "moved-to-another-key": ("    CUDA: log_sigmoid_backward_cuda_out\n", "    QuantizedCPU: log_sigmoid_backward_cuda_out\n",
                             12270),
    "op-removed": (_TRITON, "", 1),
    "one-of-two-kept": ("    QuantizedCUDA: masked_fill__quantized_cuda\n    MPS: masked_fill__mps\n",
                        "    QuantizedCUDA: masked_fill__quantized_cuda_v2\n    MPS: masked_fill__mps\n", None),
    "unlisted-kernel-renamed": ("    CUDA: addmv_out_cuda\n", "    CUDA: addmv_out_cuda_v2\n", None),
}


def test_the_kernel_list_check_agrees_with_torchgen_2_15(tmp_path: Path) -> None:
    folder = release_folder("2.15.0")
    native = folder / "torchgen" / "packaged" / "ATen" / "native"
    original = (native / "native_functions.yaml").read_text()
    tags = TagsParser().parse((native / "tags.yaml").read_text()).names
    files, texts = [], []
    for name, (old, new, _) in EDITS.items():
        assert original.count(old) >= 1, f"{name}: 2.15's yaml changed"
        texts.append(original.replace(old, new, 1))
        path = tmp_path / name / "native_functions.yaml"
        path.parent.mkdir()
        path.write_text(texts[-1])
        files.append(path)
    theirs = verdicts(folder, native / "tags.yaml", files)
    parser = NativeParser(release=release("2.15.0"))
    for (name, (_, _, line)), text, said in zip(EDITS.items(), texts, theirs):
        ours = [d for d in parser.parse(text, tags).diagnostics if d.is_error]
        if line is None:
            assert said is None and ours == [], f"{name}: torchgen {said}; opgen {[d.message for d in ours]}"
        else:
            assert said is not None and "_CPU_DLL_CUDA_KERNELS" in said, f"{name}: torchgen {said or 'accepts'}"
            assert [(d.code, d.span.start_line + 1) for d in ours] == [("OPG953", line)], name
