// ${generated_comment}
// Sample template: the ViewMeta classes' forward and reverse functions.
#include <ATen/FunctionalInverses.h>
#include <ATen/ViewMetaClasses.h>
${op_headers}

namespace at {
namespace functionalization {

${view_meta_implementations}

} // namespace functionalization
} // namespace at
