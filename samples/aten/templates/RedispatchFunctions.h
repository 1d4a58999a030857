#pragma once
// ${generated_comment}
// Sample template: at::redispatch:: calls with an explicit dispatch key set.
#include <ATen/Functions.h>

namespace at {
namespace redispatch {

${function_redispatch_definitions}

} // namespace redispatch
} // namespace at
