#pragma once
// ${generated_comment}
// Sample template: one struct per operator in at::_ops (schema, call, redispatch).
#include <ATen/core/ATen_fwd.h>
${Operators_includes}

namespace at {
namespace _ops {

${Operators_declarations}

} // namespace _ops
} // namespace at
