// ${generated_comment}
// Sample template: the at:: functions are all inline; this file only gives them a home.
#include <ATen/Functions.h>
