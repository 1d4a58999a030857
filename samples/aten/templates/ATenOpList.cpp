// ${generated_comment}
// Sample template: the names of the operators in the aten namespace.
#include <ATen/core/ATenOpList.h>

#include <string>
#include <unordered_set>

namespace at {

bool is_custom_op(const c10::OperatorName& name) {
  static const std::unordered_set<std::pair<const char*, const char*>, OpNameHash, OpNameEquals> ops{
    ${aten_ops}
  };
  return ops.count(std::make_pair(name.name.c_str(), name.overload_name.c_str())) == 0;
}

} // namespace at
