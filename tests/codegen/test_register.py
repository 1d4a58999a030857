"""Register<Key>.cpp pieces on a small fixture (no torch needed); expectations are torchgen 2.13's."""

from __future__ import annotations

import pytest

from opgen_lsp.index.native import NativeParser, TagsParser
from opgen_lsp.pieces.explain import Explainer
from opgen_lsp.releases import DEFAULT

TAGS = "- tag: pt2_compliant_tag\n  desc: compliant\n"
OPS = """\
- func: frac(Tensor self) -> Tensor
  variants: function, method
  structured_delegate: frac.out
- func: frac_(Tensor(a!) self) -> Tensor(a!)
  variants: function, method
  structured_delegate: frac.out
- func: frac.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  structured_inherits: TensorIteratorBase
  dispatch:
    CPU, CUDA: frac_out
- func: ceil_(Tensor(a!) self) -> Tensor(a!)
  dispatch:
    CPU: ceil_cpu_
- func: ceil(Tensor self) -> Tensor
  dispatch:
    CPU, CUDA: ceil_impl
    Meta: ceil_meta
- func: ceil.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CPU, CUDA: ceil_out
"""


@pytest.fixture(scope="module")
def explainer() -> Explainer:
    snapshot = NativeParser(release=DEFAULT).parse(OPS, TagsParser().parse(TAGS).names)
    assert [d.message for d in snapshot.diagnostics] == []
    return Explainer(snapshot.functions, snapshot.release)


def pieces(explainer: Explainer, op: str) -> dict[str, str]:
    return {s.title: s.code for s in explainer.explain(op)}


def test_unstructured_wrapper_and_registration(explainer: Explainer) -> None:
    p = pieces(explainer, "ceil")
    assert p["CPU registration wrapper"] == (
        "namespace {\n"
        "at::Tensor wrapper_CPU__ceil(const at::Tensor & self) {\n"
        "    // No device check\n"
        "  // DeviceGuard omitted\n"
        "  return at::native::ceil_impl(self);\n"
        "}\n"
        "} // anonymous namespace")
    assert p["CPU registration"] == 'm.impl("ceil",\nTORCH_FN(wrapper_CPU__ceil));'


def test_cuda_wrapper_checks_devices_and_guards(explainer: Explainer) -> None:
    wrapper = pieces(explainer, "ceil")["CUDA registration wrapper"]
    assert 'c10::impl::check_and_update_common_device(common_device, self, "wrapper_CUDA__ceil", "self");' in wrapper
    assert "const OptionalDeviceGuard device_guard(device_of(self));" in wrapper


def test_meta_gets_an_inplace_check_without_a_kernel(explainer: Explainer) -> None:
    p = pieces(explainer, "ceil_")
    assert p["Meta registration wrapper"] == (
        "at::Tensor & wrapper_Meta__ceil_(at::Tensor & self) {\n"
        "  TORCH_CHECK_NOT_IMPLEMENTED(self.is_meta(),\n"
        '    "Cannot inplace into non-meta tensor with meta tensor argument");\n'
        "  return self;\n"
        "}")


def test_structured_functional_wrapper_builds_outputs(explainer: Explainer) -> None:
    p = pieces(explainer, "frac")
    wrapper = p["CPU registration wrapper"]
    assert wrapper.startswith("struct structured_frac_out_functional final : public at::native::structured_frac_out {")
    assert "outputs_[output_idx] = create_out(sizes, strides, options);" in wrapper
    # structured_inherits: the parent's set_output runs after ours.
    assert "at::native::structured_frac_out::set_output_raw_strided(output_idx, sizes, strides, options);" in wrapper
    assert wrapper.endswith("at::Tensor wrapper_CPU_frac(const at::Tensor & self) {\n"
                            "structured_frac_out_functional op;\n"
                            "op.meta(self);\n"
                            "op.impl(self, op.outputs_[0]);\n"
                            "return std::move(op.outputs_[0]);\n"
                            "}")
    assert p["CPU registration"] == 'm.impl("frac", TORCH_FN(wrapper_CPU_frac));'


def test_structured_meta_and_inplace(explainer: Explainer) -> None:
    p = pieces(explainer, "frac_")
    meta = p["Meta registration wrapper"]
    assert meta.startswith("struct structured_frac_meta_inplace final : public at::meta::structured_frac {")
    assert "op.impl(" not in meta  # Meta runs only the meta function
    assert "check_inplace(out, sizes, options);" in meta
    assert p["CUDA registration wrapper"].count("guard_.reset_device(options.device());") == 2
    assert "c10::cuda::OptionalCUDAGuard guard_;" in p["CUDA registration wrapper"]


def test_structured_out_kernel(explainer: Explainer) -> None:
    p = pieces(explainer, "frac.out")
    assert "structured_frac_out_out(Tensor& out0) : outputs_{ std::ref(out0) } {}" in p["CPU registration wrapper"]
    assert p["CPU registration wrapper"].endswith("return out;\n}")
    # CompositeExplicitAutogradNonFunctional does not wrap out= variants.
    assert "CompositeExplicitAutogradNonFunctional registration wrapper" not in p
