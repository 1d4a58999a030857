// Kernels of the sample PrivateUse1 backend (backend.yaml), and what torch needs
// to use the device: an allocator, a device guard, the PrivateUse1 hooks and a
// fallback that runs every op without a kernel here on the CPU.
//
// Tensors of this device keep their data in host memory, so each kernel views
// its operands as CPU tensors (same memory, no copy) and lets ATen's CPU
// kernels compute. `generated/PrivateUse1NativeFunctions.h` comes from
//   opgen generate-backend -s samples/my_backend/backend.yaml -o generated
// run in the build folder (the -o spelling is also the #include spelling).
//
// Sibling kernels are called unqualified (empty(...)): torchgen's
// missing-kernel check counts every class-qualified name followed by an
// opening parenthesis as a definition, comments included.

#include "generated/PrivateUse1NativeFunctions.h"

#include <ATen/ATen.h>
#include <ATen/EmptyTensor.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/Allocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/library.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace my_backend {
namespace {

constexpr c10::DeviceType kDevice = c10::DeviceType::PrivateUse1;

// ------------------------------------------------------------------ memory

void host_free(void* p) {
  std::free(p);
}

struct HostAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t n) override {
    void* p = n == 0 ? nullptr : std::malloc(n);
    TORCH_CHECK(n == 0 || p != nullptr, "my_backend: out of memory allocating ", n, " bytes");
    return {p, p, &host_free, c10::Device(kDevice, 0)};
  }
  c10::DeleterFnPtr raw_deleter() const override {
    return &host_free;
  }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    std::memcpy(dest, src, count);
  }
};

HostAllocator allocator;
REGISTER_ALLOCATOR(kDevice, &allocator);

// ------------------------------------------------------------------ one device, no streams

struct GuardImpl final : c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return kDevice; }
  c10::Device exchangeDevice(c10::Device) const override { return c10::Device(kDevice, 0); }
  c10::Device getDevice() const override { return c10::Device(kDevice, 0); }
  void setDevice(c10::Device) const override {}
  void uncheckedSetDevice(c10::Device) const noexcept override {}
  c10::Stream getStream(c10::Device d) const override { return c10::Stream(c10::Stream::DEFAULT, d); }
  c10::Stream exchangeStream(c10::Stream s) const override { return s; }
  c10::DeviceIndex deviceCount() const noexcept override { return 1; }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, GuardImpl);

struct Hooks final : at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return true; }
  bool hasPrimaryContext(c10::DeviceIndex) const override { return true; }
};

const bool hooks_registered = [] {
  at::RegisterPrivateUse1HooksInterface(new Hooks());
  return true;
}();

// ------------------------------------------------------------------ helpers

// A CPU tensor over the same memory (no copy); a CPU tensor is returned as is.
at::Tensor host(const at::Tensor& t) {
  if (t.is_cpu()) {
    return t;
  }
  return at::from_blob(t.data_ptr(), t.sizes(), t.strides(), at::TensorOptions().dtype(t.dtype()));
}

// Give t the shape `sizes` (contiguous, fresh memory) unless it has it already.
void resize_to(const at::Tensor& t, at::IntArrayRef sizes) {
  if (t.sizes() == sizes) {
    return;
  }
  auto* impl = t.unsafeGetTensorImpl();
  const size_t bytes = c10::multiply_integers(sizes) * t.itemsize();
  impl->set_storage_keep_dtype(c10::Storage(c10::Storage::use_byte_size_t(), bytes, &allocator, true));
  impl->set_storage_offset(0);
  impl->set_sizes_contiguous(sizes);
}

std::atomic<int64_t> add_calls{0};

int64_t count_add_calls() {
  return add_calls.load();
}

void cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  at::native::cpu_fallback(op, stack);
}

} // namespace

// ------------------------------------------------------------------ the kernels backend.yaml lists

at::Tensor PrivateUse1NativeFunctions::empty(at::IntArrayRef size, ::std::optional<at::ScalarType> dtype, ::std::optional<at::Layout> layout, ::std::optional<at::Device> device, ::std::optional<bool> pin_memory, ::std::optional<at::MemoryFormat> memory_format) {
  TORCH_CHECK(layout.value_or(at::kStrided) == at::kStrided, "my_backend: only strided tensors");
  TORCH_CHECK(!pin_memory.value_or(false), "my_backend: tensors cannot be pinned");
  return at::detail::empty_generic(size, &allocator, c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                   c10::dtype_or_default(dtype), memory_format);
}

at::Tensor PrivateUse1NativeFunctions::empty_strided(at::IntArrayRef size, at::IntArrayRef stride, ::std::optional<at::ScalarType> dtype, ::std::optional<at::Layout> layout, ::std::optional<at::Device> device, ::std::optional<bool> pin_memory) {
  TORCH_CHECK(layout.value_or(at::kStrided) == at::kStrided, "my_backend: only strided tensors");
  return at::detail::empty_strided_generic(size, stride, &allocator,
                                           c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                           c10::dtype_or_default(dtype));
}

at::Tensor PrivateUse1NativeFunctions::as_strided(const at::Tensor & self, at::IntArrayRef size, at::IntArrayRef stride, ::std::optional<int64_t> storage_offset) {
  return at::native::as_strided_tensorimpl(self, size, stride, storage_offset);
}

at::Tensor PrivateUse1NativeFunctions::view(const at::Tensor & self, at::IntArrayRef size) {
  return at::native::view(self, size);
}

at::Tensor PrivateUse1NativeFunctions::_copy_from(const at::Tensor & self, const at::Tensor & dst, bool non_blocking) {
  host(dst).copy_(host(self));
  return dst;
}

at::Tensor PrivateUse1NativeFunctions::_copy_from_and_resize(const at::Tensor & self, const at::Tensor & dst) {
  resize_to(dst, self.sizes());
  host(dst).copy_(host(self));
  return dst;
}

at::Tensor & PrivateUse1NativeFunctions::fill_(at::Tensor & self, const at::Scalar & value) {
  host(self).fill_(value);
  return self;
}

at::Tensor PrivateUse1NativeFunctions::add(const at::Tensor & self, const at::Tensor & other, const at::Scalar & alpha) {
  ++add_calls;
  at::Tensor sum = at::add(host(self), host(other), alpha);
  at::Tensor out = empty(sum.sizes(), sum.scalar_type(), std::nullopt, std::nullopt, std::nullopt, std::nullopt);
  host(out).copy_(sum);
  return out;
}

at::Tensor & PrivateUse1NativeFunctions::add_out(const at::Tensor & self, const at::Tensor & other, const at::Scalar & alpha, at::Tensor & out) {
  ++add_calls;
  at::Tensor sum = at::add(host(self), host(other), alpha);
  resize_to(out, sum.sizes());
  host(out).copy_(sum);
  return out;
}

} // namespace my_backend

// Every op without a kernel above runs on the CPU: inputs copied there, results copied back.
TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&my_backend::cpu_fallback>());
}

// torch.ops.my_backend.add_calls(): how many times the add kernels ran (the test's proof).
TORCH_LIBRARY(my_backend, m) {
  m.def("add_calls() -> int", TORCH_FN(my_backend::count_add_calls));
}
