// Kernels of the sample out-of-tree backend described by my_backend.yaml.
//
// gen_backend_stubs declares each op listed under `supported:` as a static
// method of my_backend::PrivateUse1NativeFunctions, with the dispatcher's
// C++ signature (arguments in schema order, out= tensors last). This toy
// backend computes on the host: it copies its inputs to the CPU, runs the CPU
// kernel and copies the result back. It is not compiled yet.
//
// Inside these methods, call sibling kernels unqualified, as in scale_out(...):
// torchgen's missing-kernel check counts every class-qualified name followed
// by an opening parenthesis as one definition of that kernel, so a qualified
// call (or even a comment spelling one out) would count twice.

#include "PrivateUse1NativeFunctions.h"

#include <ATen/ATen.h>
#include <c10/core/SymInt.h>

#include <optional>
#include <tuple>
#include <vector>

namespace my_backend {

namespace {

at::Tensor to_host(const at::Tensor& t) {
  return t.to(at::kCPU);
}

// Copies a host result into a device tensor the caller gave us, resizing it
// first when its shape is wrong (the out= convention).
at::Tensor& copy_into(at::Tensor& out, const at::Tensor& host) {
  if (out.sizes() != host.sizes()) {
    out.resize_(host.sizes());
  }
  out.copy_(host);
  return out;
}

at::Tensor to_device_like(const at::Tensor& host, const at::Tensor& like) {
  return host.to(like.device());
}

} // namespace

at::Tensor PrivateUse1NativeFunctions::scale(const at::Tensor & self, const at::Scalar & factor) {
  at::Tensor out = at::empty({0}, self.options());
  scale_out(self, factor, out);
  return out;
}

at::Tensor & PrivateUse1NativeFunctions::scale_(at::Tensor & self, const at::Scalar & factor) {
  return scale_out(self, factor, self);
}

at::Tensor & PrivateUse1NativeFunctions::scale_out(const at::Tensor & self, const at::Scalar & factor, at::Tensor & out) {
  return copy_into(out, at::mul(to_host(self), factor));
}

at::Tensor PrivateUse1NativeFunctions::clip_range(const at::Tensor & self, const ::std::optional<at::Scalar> & min, const ::std::optional<at::Scalar> & max) {
  at::Tensor out = at::empty({0}, self.options());
  clip_range_out(self, min, max, out);
  return out;
}

at::Tensor & PrivateUse1NativeFunctions::clip_range_out(const at::Tensor & self, const ::std::optional<at::Scalar> & min, const ::std::optional<at::Scalar> & max, at::Tensor & out) {
  TORCH_CHECK(min.has_value() || max.has_value(), "clip_range: give at least one of min and max");
  return copy_into(out, at::clamp(to_host(self), min, max));
}

at::Tensor PrivateUse1NativeFunctions::make_ramp_symint(c10::SymInt length, ::std::optional<at::ScalarType> dtype, ::std::optional<at::Layout> layout, ::std::optional<at::Device> device, ::std::optional<bool> pin_memory) {
  TORCH_CHECK(!pin_memory.value_or(false), "make_ramp: my_backend tensors cannot be pinned");
  TORCH_CHECK(layout.value_or(at::kStrided) == at::kStrided, "make_ramp: only strided tensors are supported");
  const int64_t n = length.guard_int(__FILE__, __LINE__);
  at::Tensor host = at::arange(n, at::TensorOptions().dtype(dtype.value_or(at::kFloat)));
  return host.to(device.value_or(at::Device(at::kPrivateUse1)));
}

at::Tensor PrivateUse1NativeFunctions::jitter(const at::Tensor & self, double sigma, ::std::optional<at::Generator> generator) {
  at::Tensor host = to_host(self);
  at::Tensor noise = at::normal(0.0, sigma, host.sizes(), generator, host.options());
  return to_device_like(host + noise, self);
}

::std::tuple<at::Tensor &,at::Tensor &> PrivateUse1NativeFunctions::span_stats_out(const at::Tensor & self, int64_t dim, bool keepdim, at::Tensor & low, at::Tensor & high) {
  at::Tensor host = to_host(self);
  copy_into(low, std::get<0>(at::min(host, dim, keepdim)));
  copy_into(high, std::get<0>(at::max(host, dim, keepdim)));
  return ::std::tuple<at::Tensor &,at::Tensor &>(low, high);
}

at::Tensor PrivateUse1NativeFunctions::masked_pick(const at::Tensor & self, const at::Tensor & mask) {
  // The output size depends on the mask's values, so it is computed on the host.
  return to_device_like(at::masked_select(to_host(self), to_host(mask)), self);
}

::std::vector<at::Tensor> PrivateUse1NativeFunctions::_foreach_scale(at::TensorList self, const at::Scalar & factor) {
  ::std::vector<at::Tensor> result;
  result.reserve(self.size());
  for (const at::Tensor& t : self) {
    result.push_back(scale(t, factor));
  }
  return result;
}

void PrivateUse1NativeFunctions::_foreach_scale_(at::TensorList self, const at::Scalar & factor) {
  for (const at::Tensor& t : self) {
    at::Tensor& mutable_t = const_cast<at::Tensor&>(t);
    scale_(mutable_t, factor);
  }
}

} // namespace my_backend
