#pragma once
// ${generated_comment}
// Sample template: the Tensor class, with one method per method variant.
#include <ATen/core/TensorBase.h>

namespace at {

class TORCH_API Tensor : public TensorBase {
 public:
  ${tensor_method_declarations}
};

${tensor_method_definitions}

} // namespace at
