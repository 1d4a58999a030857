// ${generated_comment}
// Sample template: factory ops pick their backend from their TensorOptions before dispatching.
#include <ATen/core/Tensor.h>
#include <torch/library.h>
${ops_headers}

namespace at {
namespace {

${backend_select_method_definitions}

TORCH_LIBRARY_IMPL(aten, BackendSelect, m) {
  ${backend_select_function_registrations};
}

} // namespace
} // namespace at
