#pragma once
// ${generated_comment}
// Sample template: the declarations of at::${dispatch_namespace}::.
${DispatchKeyFunctions_inl_includes}

namespace at {
namespace ${dispatch_namespace} {

${dispatch_namespaced_declarations}

} // namespace ${dispatch_namespace}
} // namespace at
