#pragma once
// ${generated_comment}
// Sample template: the interned names of operators (aten::) and of their arguments (attr::).

#define FORALL_ATEN_BASE_SYMBOLS(_) \
${aten_symbols}

#define FORALL_ATTR_BASE_SYMBOLS(_) \
${attr_symbols}
