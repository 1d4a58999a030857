#pragma once
// ${generated_comment}
// Sample template: the at:: functions.
#include <ATen/core/Tensor.h>
${static_dispatch_extra_headers}
${Functions_includes}

namespace at {

${Functions_declarations}

} // namespace at
