#pragma once
// ${generated_comment}
// Sample template: one ViewMeta class per view, remembering how to redo it.
#include <ATen/FunctionalStorageImpl.h>

namespace at {
namespace functionalization {

${view_meta_declarations}

} // namespace functionalization
} // namespace at
