// ${generated_comment}
// Sample template: the functionalization kernels (shard ${shard_id}).
#include <ATen/FunctionalTensorWrapper.h>
#include <torch/library.h>
${ops_headers}

namespace at {
namespace functionalization {

${func_definitions}

${func_add_back_views_definitions}

} // namespace functionalization

namespace {

TORCH_LIBRARY_IMPL(aten, Functionalize, m) {
  ${func_registrations};
}

TORCH_LIBRARY_IMPL(aten, FunctionalizeAddBackViews, m) {
  ${func_add_back_views_registrations};
}

} // namespace
} // namespace at
