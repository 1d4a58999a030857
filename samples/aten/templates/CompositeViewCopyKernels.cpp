// ${generated_comment}
// Sample template: kernels made from other ops (view_copy, autogen'd functional and out= variants).
#include <ATen/InferSize.h>
#include <ATen/Tensor.h>
${ops_headers}

namespace at {
namespace native {

${CompositeViewCopyKernel_Definitions}

${GeneratedCompositeFunctional_Definitions}

${GeneratedCompositeOut_Definitions}

} // namespace native
} // namespace at
