#pragma once
// ${generated_comment}
// Sample template: the at::_ops structs that Tensor's methods call.
${MethodOperators_includes}

namespace at {
namespace _ops {

${MethodOperators_declarations}

} // namespace _ops
} // namespace at
