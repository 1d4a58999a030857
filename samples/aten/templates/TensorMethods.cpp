// ${generated_comment}
// Sample template: the Tensor methods are defined inline in TensorBody.h.
#include <ATen/core/Tensor.h>
