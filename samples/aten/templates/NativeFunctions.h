#pragma once
// ${generated_comment}
// Sample template: the kernels at::native declares for the dispatch tables.
#include <ATen/core/Tensor.h>
${NativeFunctions_includes}

${NativeFunctions_declarations}
