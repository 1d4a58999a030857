#pragma once
// ${generated_comment}
// Sample template: the tags of tags.yaml as a C++ enum.

namespace at {
enum class Tag {
  ${enum_of_valid_tags}
};
} // namespace at
