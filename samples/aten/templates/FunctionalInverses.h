#pragma once
// ${generated_comment}
// Sample template: the inverse of every view, used to replay mutations through views.
#include <ATen/Tensor.h>

namespace at {
namespace functionalization {

struct FunctionalInverses {
  ${view_inverse_declarations}
};

} // namespace functionalization
} // namespace at
