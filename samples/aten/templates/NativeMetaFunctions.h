#pragma once
// ${generated_comment}
// Sample template: the meta functions of the structured kernels.
#include <ATen/TensorMeta.h>
${NativeMetaFunctions_includes}

namespace at {
namespace meta {

${NativeMetaFunctions_declarations}

} // namespace meta
} // namespace at
