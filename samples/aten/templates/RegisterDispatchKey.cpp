// ${generated_comment}
// Sample template: the kernels of one dispatch key, registered with the dispatcher (shard ${shard_id}).
#include <ATen/core/Tensor.h>
#include <ATen/core/op_registration/adaption.h>
#include <torch/library.h>

${extra_cuda_headers}
${external_backend_headers}
${dispatch_headers}
${ops_headers}

namespace at {

${dispatch_helpers}

${dispatch_definitions}

} // namespace at
