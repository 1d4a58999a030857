// ${generated_comment}
// Sample template: the at::_ops structs' call() and redispatch() (shard ${shard_id}).
#include <ATen/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
${static_dispatch_extra_headers}
${operator_headers}

namespace at {
namespace _ops {

${definitions}

} // namespace _ops
} // namespace at
