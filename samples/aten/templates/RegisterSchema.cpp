// ${generated_comment}
// Sample template: the schema of every operator, declared to the dispatcher.
#include <torch/library.h>

TORCH_LIBRARY(aten, m) {
  ${aten_schema_registrations};
}

${schema_registrations}
